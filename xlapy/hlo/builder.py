"""An XlaBuilder-like API to construct HLO modules from Python.

    b = Builder("f")
    x = b.parameter(Shape.array(F32, (4, 3)), "x")
    one = b.broadcast(b.constant(np.float32(1)), (4, 3))
    m = b.reduce(b.add(x, one), b.constant(np.float32(0)), b.scalar_computation("add", F32), [1])
    module = b.build_module(m)         # entry computation + every computation it calls

Values are the Instruction objects the builder creates (`.shape` tells their shape). Every
method computes its result shape with shape_inference.infer_shape, so an invalid program
fails at the offending call with a ShapeError naming the opcode and the shapes. Method
names follow the opcodes (`exponential`, `shift_right_logical`, `get_tuple_element`; the
Python keywords are `and_`, `or_`, `not_`), with XLA-client conveniences such as
`dot_general`, `broadcast_in_dim` (size-1 dims may expand) and `while_loop`.

Sub-computations (reducers, loop bodies, branches, comparators) come from
`b.subcomputation(name)`, a nested Builder sharing the name space, whose `build(root)`
returns the Computation; `b.scalar_computation("add", F32)` makes (and caches) the usual
x+y reducer. `build_module` adds the called computations callee-before-caller, entry last,
and verifies the module. Instruction names are `<opcode>.<n>` made unique with
Module.unique_name; `with b.metadata(op_name="jit(f)/add"):` attaches metadata to every
instruction created inside the block.
"""

from __future__ import annotations

import contextlib
import re
from typing import Sequence

import numpy as np

from xlapy.errors import XlapyError
from xlapy.hlo import attributes as A
from xlapy.hlo.ir import Computation, Instruction, Module
from xlapy.hlo.opcodes import OPCODES
from xlapy.hlo.shape_inference import infer_shape
from xlapy.hlo.shapes import PRED, Shape, primitive_type
from xlapy.hlo.verifier import verify


class _State:
    """What a builder and its sub-builders share: instruction and computation names, the
    cached scalar computations and the metadata stack."""

    def __init__(self):
        self.names = Module("names")  # only its unique_name is used
        self.computation_names: set[str] = set()
        self.scalar_computations: dict[tuple[str, str], Computation] = {}
        self.metadata: list[dict] = []

    def computation_name(self, name: str) -> str:
        if name not in self.computation_names:
            self.computation_names.add(name)
            return name
        stem, n = re.sub(r"\.\d+$", "", name), 1
        while f"{stem}.{n}" in self.computation_names:
            n += 1
        self.computation_names.add(f"{stem}.{n}")
        return f"{stem}.{n}"


def _ints(xs) -> tuple[int, ...]:
    return tuple(int(x) for x in xs)


def _dim_numbers(lists: dict, batching: dict) -> dict:
    """Attributes: the int `lists`, then the two `batching` lists when the first is not
    empty (XLA prints them only then)."""
    attrs = {k: _ints(v) for k, v in lists.items()}
    if len(next(iter(batching.values()))):
        attrs.update((k, _ints(v)) for k, v in batching.items())
    return attrs


def _window(sizes, strides=None, padding=None, lhs_dilation=None, rhs_dilation=None):
    padding = padding or [(0, 0)] * len(sizes)
    return A.Window.make(_ints(sizes), strides and _ints(strides),
                         _ints(p[0] for p in padding), _ints(p[1] for p in padding),
                         lhs_dilation and _ints(lhs_dilation), rhs_dilation and _ints(rhs_dilation))


class Builder:
    """Builds one computation; `subcomputation` makes builders for the ones it calls."""

    def __init__(self, name: str, _state: _State | None = None):
        self._state = _state or _State()
        self.name = self._state.computation_name(name)
        self._comp = Computation(self.name)
        self._built: Computation | None = None
        self._module: Module | None = None

    # ---- building ---------------------------------------------------------------------
    def subcomputation(self, name: str) -> "Builder":
        """A builder for a computation this one will call (shares names and metadata)."""
        return Builder(name, self._state)

    def build(self, root: Instruction | None = None) -> Computation:
        """Finish the computation with `root` (default: the last instruction added)."""
        if self._built is not None:
            raise XlapyError(f"computation {self.name} was already built")
        if not self._comp.instructions:
            raise XlapyError(f"computation {self.name} has no instructions")
        root = self._comp.instructions[-1] if root is None else root
        if not isinstance(root, Instruction) or root.parent is not self._comp:
            raise XlapyError(f"the root of {self.name} must be a value made by its builder, "
                             f"got {getattr(root, 'name', root)!r}")
        self._comp.root = root
        self._built = self._comp
        return self._comp

    def build_module(self, root: Instruction | None = None, name: str | None = None) -> Module:
        """A Module whose entry is this computation, with every computation it calls."""
        if self._module is not None:
            raise XlapyError(f"module {self.name} was already built")
        entry = self._built if self._built is not None and root is None else self.build(root)
        order: list[Computation] = []
        seen: set[int] = set()

        def visit(comp: Computation) -> None:  # callees first
            if id(comp) in seen:
                return
            seen.add(id(comp))
            for callee in comp.called_computations():
                visit(callee)
            if comp.module is not None:
                raise XlapyError(f"computation {comp.name} already belongs to module "
                                 f"{comp.module.name}")
            order.append(comp)

        visit(entry)
        module = Module(name or self.name)
        for comp in order:
            module.add_computation(comp, entry=comp is entry)
        self._module = module
        verify(module)
        return module

    @contextlib.contextmanager
    def metadata(self, **fields):
        """Attach metadata (op_name=..., source_file=..., source_line=...) inside the block."""
        self._state.metadata.append(fields)
        try:
            yield
        finally:
            self._state.metadata.pop()

    def scalar_computation(self, opcode: str, dtype) -> Computation:
        """The computation (x: T[], y: T[]) -> opcode(x, y), e.g. the 'add' reducer."""
        t = primitive_type(dtype)
        key = (opcode, t.name)
        comp = self._state.scalar_computations.get(key)
        if comp is None:  # shared by every caller, so built without the caller's metadata
            saved, self._state.metadata = self._state.metadata, []
            try:
                sub = self.subcomputation(f"{opcode.replace('-', '_')}_{t.name}")
                x = sub.parameter(Shape.array(t, ()), "x")
                y = sub.parameter(Shape.array(t, ()), "y")
                comp = sub.build(sub._add(opcode, [x, y]))
            finally:
                self._state.metadata = saved
            self._state.scalar_computations[key] = comp
        return comp

    # ---- the one place instructions are made ------------------------------------------------
    def _check_operand(self, value, opcode: str, i: int) -> None:
        if not isinstance(value, Instruction):
            raise XlapyError(f"{opcode}: operand {i} must be a value made by this builder "
                             f"(an Instruction), got {type(value).__name__}; use "
                             "b.constant(...) for literals")
        if value.parent is not self._comp:
            owner = value.parent.name if value.parent is not None else "no computation"
            raise XlapyError(f"{opcode}: operand {i} ({value.name}) belongs to {owner}, not to "
                             f"the computation {self.name} being built")

    def _add(self, opcode: str, operands: Sequence[Instruction] = (), attrs: dict | None = None,
             declared: Shape | None = None, literal=None, parameter_number: int | None = None,
             name: str | None = None) -> Instruction:
        if self._built is not None:
            raise XlapyError(f"{opcode}: computation {self.name} was already built")
        operands = list(operands)
        for i, v in enumerate(operands):
            self._check_operand(v, opcode, i)
        attrs = dict(attrs or {})
        shape = infer_shape(opcode, [o.shape for o in operands], attrs, declared, literal)
        metadata = {}
        for fields in self._state.metadata:
            metadata.update(fields)
        instr = Instruction(opcode, shape, operands, attrs,
                            self._state.names.unique_name(name or f"{opcode}.1"), metadata,
                            literal, parameter_number)
        return self._comp.add_instruction(instr)

    def op(self, opcode: str, *operands: Instruction, **attrs) -> Instruction:
        """Any opcode whose result shape follows from its operands and attributes (its row
        in the opcode table does not say declared_shape): `b.op("cholesky", a, lower=True)`.
        The methods below are the same with friendlier arguments, and the way to make the
        opcodes whose shape must be declared (parameter, constant, broadcast, reshape,
        convert, ...)."""
        row = OPCODES.get(opcode)
        if row is None:
            raise XlapyError(f"unknown opcode '{opcode}'")
        if row.declared_shape:
            raise XlapyError(f"{opcode}: its result shape must be declared; use "
                             f"Builder.{opcode.replace('-', '_')}")
        return self._add(opcode, operands, attrs)

    # ---- leaves -----------------------------------------------------------------------------
    def parameter(self, shape: Shape, name: str | None = None) -> Instruction:
        if not isinstance(shape, Shape):
            raise XlapyError(f"parameter: expected a Shape, got {shape!r}")
        return self._add("parameter", declared=shape, parameter_number=len(self._comp.parameters),
                         name=name or "parameter.1")

    def constant(self, value, dtype=None) -> Instruction:
        """A constant from a NumPy array/scalar (Python bool/int/float become pred/s32/f32),
        or a tuple of such values for a tuple constant."""
        literal, shape = self._literal(value, dtype)
        return self._add("constant", declared=shape, literal=literal)

    def _literal(self, value, dtype):
        if isinstance(value, tuple):
            parts = [self._literal(v, dtype) for v in value]
            return tuple(p[0] for p in parts), Shape.tuple([p[1] for p in parts])
        if dtype is not None:
            np_dtype = primitive_type(dtype).np_dtype
            if np_dtype is None:
                raise XlapyError(f"constant: cannot make a constant of type {dtype}")
        elif isinstance(value, (np.ndarray, np.generic)):
            np_dtype = value.dtype
        else:  # Python scalars get JAX's default types
            np_dtype = {bool: np.bool_, int: np.int32, float: np.float32}.get(type(value))
        try:
            arr = np.array(value, dtype=np_dtype, copy=True)
        except (ValueError, TypeError, OverflowError) as e:
            raise XlapyError(f"constant: cannot convert {value!r} to an array: {e}") from None
        return arr, Shape.array(primitive_type(arr.dtype), arr.shape)

    def iota(self, dtype, dims: Sequence[int], iota_dimension: int = 0) -> Instruction:
        return self._add("iota", attrs={"iota_dimension": int(iota_dimension)},
                         declared=Shape.array(dtype, dims))

    # ---- elementwise ------------------------------------------------------------------------
    def _ew(self, opcode: str, *xs) -> Instruction:
        return self._add(opcode, xs)

    def abs(self, x): return self._ew("abs", x)
    def negate(self, x): return self._ew("negate", x)
    def sign(self, x): return self._ew("sign", x)
    def floor(self, x): return self._ew("floor", x)
    def ceil(self, x): return self._ew("ceil", x)
    def round_nearest_afz(self, x): return self._ew("round-nearest-afz", x)
    def round_nearest_even(self, x): return self._ew("round-nearest-even", x)
    def exponential(self, x): return self._ew("exponential", x)
    def exponential_minus_one(self, x): return self._ew("exponential-minus-one", x)
    def log(self, x): return self._ew("log", x)
    def log_plus_one(self, x): return self._ew("log-plus-one", x)
    def logistic(self, x): return self._ew("logistic", x)
    def sqrt(self, x): return self._ew("sqrt", x)
    def rsqrt(self, x): return self._ew("rsqrt", x)
    def cbrt(self, x): return self._ew("cbrt", x)
    def sine(self, x): return self._ew("sine", x)
    def cosine(self, x): return self._ew("cosine", x)
    def tan(self, x): return self._ew("tan", x)
    def tanh(self, x): return self._ew("tanh", x)
    def erf(self, x): return self._ew("erf", x)
    def not_(self, x): return self._ew("not", x)
    def is_finite(self, x): return self._ew("is-finite", x)
    def popcnt(self, x): return self._ew("popcnt", x)
    def count_leading_zeros(self, x): return self._ew("count-leading-zeros", x)
    def copy(self, x): return self._ew("copy", x)

    def add(self, x, y): return self._ew("add", x, y)
    def subtract(self, x, y): return self._ew("subtract", x, y)
    def multiply(self, x, y): return self._ew("multiply", x, y)
    def divide(self, x, y): return self._ew("divide", x, y)
    def remainder(self, x, y): return self._ew("remainder", x, y)
    def maximum(self, x, y): return self._ew("maximum", x, y)
    def minimum(self, x, y): return self._ew("minimum", x, y)
    def power(self, x, y): return self._ew("power", x, y)
    def atan2(self, x, y): return self._ew("atan2", x, y)
    def and_(self, x, y): return self._ew("and", x, y)
    def or_(self, x, y): return self._ew("or", x, y)
    def xor(self, x, y): return self._ew("xor", x, y)
    def shift_left(self, x, y): return self._ew("shift-left", x, y)
    def shift_right_logical(self, x, y): return self._ew("shift-right-logical", x, y)

    def shift_right_arithmetic(self, x, y):
        return self._ew("shift-right-arithmetic", x, y)

    def compare(self, x, y, direction: str, type: str | None = None) -> Instruction:
        attrs = {"direction": direction}
        if type is not None:
            attrs["type"] = type
        return self._add("compare", [x, y], attrs)

    def select(self, pred, on_true, on_false) -> Instruction:
        return self._add("select", [pred, on_true, on_false])

    def clamp(self, lo, x, hi) -> Instruction:
        return self._add("clamp", [lo, x, hi])

    def convert(self, x, dtype) -> Instruction:
        return self._add("convert", [x], declared=Shape.array(dtype, self._dims(x)))

    def bitcast_convert(self, x, dtype) -> Instruction:
        # Only the element type of `declared` matters; the rule derives the dims.
        return self._add("bitcast-convert", [x], declared=Shape.array(dtype, self._dims(x)))

    def reduce_precision(self, x, exponent_bits: int, mantissa_bits: int) -> Instruction:
        return self._add("reduce-precision", [x], {"exponent_bits": int(exponent_bits),
                                                   "mantissa_bits": int(mantissa_bits)})

    @staticmethod
    def _dims(x) -> tuple[int, ...]:
        return x.shape.dims if isinstance(x, Instruction) and x.shape.is_array else ()

    # ---- data movement ------------------------------------------------------------------------
    def broadcast(self, x, dims: Sequence[int], dimensions: Sequence[int] | None = None):
        """HLO broadcast to `dims`; operand dimension i becomes output dimension
        dimensions[i] (default: the trailing ones, as in NumPy) with the same size."""
        dims = _ints(dims)
        rank = len(self._dims(x))
        dimensions = range(len(dims) - rank, len(dims)) if dimensions is None else dimensions
        return self._add("broadcast", [x], {"dimensions": _ints(dimensions)},
                         declared=Shape.array(self._type(x), dims))

    def broadcast_in_dim(self, x, dims: Sequence[int], broadcast_dimensions: Sequence[int]):
        """Like jax.lax.broadcast_in_dim: operand dims of size 1 may expand to any size
        (they are reshaped away first, as JAX's lowering does)."""
        dims, bdims, xdims = _ints(dims), _ints(broadcast_dimensions), self._dims(x)
        if len(bdims) == len(xdims) and all(0 <= d < len(dims) for d in bdims):
            keep = [i for i, n in enumerate(xdims) if not (n == 1 and dims[bdims[i]] != 1)]
            if len(keep) != len(xdims):
                x = self.reshape(x, [xdims[i] for i in keep])
                bdims = tuple(bdims[i] for i in keep)
        return self.broadcast(x, dims, bdims)

    def reshape(self, x, dims: Sequence[int]) -> Instruction:
        return self._add("reshape", [x], declared=Shape.array(self._type(x), _ints(dims)))

    def transpose(self, x, permutation: Sequence[int]) -> Instruction:
        return self._add("transpose", [x], {"dimensions": _ints(permutation)})

    def slice(self, x, starts, limits, strides=None) -> Instruction:
        strides = strides or [1] * len(starts)
        spec = A.SliceSpec(_ints(starts), _ints(limits), _ints(strides))
        return self._add("slice", [x], {"slice": spec})

    def dynamic_slice(self, x, start_indices: Sequence[Instruction], sizes) -> Instruction:
        return self._add("dynamic-slice", [x, *start_indices],
                         {"dynamic_slice_sizes": _ints(sizes)})

    def dynamic_update_slice(self, x, update, start_indices: Sequence[Instruction]):
        return self._add("dynamic-update-slice", [x, update, *start_indices])

    def concatenate(self, operands: Sequence[Instruction], dimension: int) -> Instruction:
        return self._add("concatenate", operands, {"dimensions": (int(dimension),)})

    def pad(self, x, padding_value, config) -> Instruction:
        """config: an A.PaddingConfig or one (low, high[, interior]) per dimension."""
        if not isinstance(config, A.PaddingConfig):
            rows = [tuple(c) + (0,) * (3 - len(c)) for c in config]
            config = A.PaddingConfig(*(tuple(int(r[k]) for r in rows) for k in range(3)))
        return self._add("pad", [x, padding_value], {"padding": config})

    def reverse(self, x, dimensions: Sequence[int]) -> Instruction:
        return self._add("reverse", [x], {"dimensions": _ints(dimensions)})

    def bitcast(self, x, shape: Shape) -> Instruction:
        return self._add("bitcast", [x], declared=shape)

    @staticmethod
    def _type(x):
        if isinstance(x, Instruction) and x.shape.is_array:
            return x.shape.element_type
        return PRED  # not an array: the shape rule reports the real problem

    # ---- tuples and tokens ------------------------------------------------------------------
    def tuple(self, elements: Sequence[Instruction]) -> Instruction:
        return self._add("tuple", elements)

    def get_tuple_element(self, t, index: int) -> Instruction:
        return self._add("get-tuple-element", [t], {"index": int(index)})

    def optimization_barrier(self, x) -> Instruction:
        return self._add("opt-barrier", [x])

    def after_all(self, *tokens) -> Instruction:
        return self._add("after-all", tokens)

    # ---- reductions -------------------------------------------------------------------------
    @staticmethod
    def _list(xs) -> list:
        return list(xs) if isinstance(xs, (list, tuple)) else [xs]

    def reduce(self, operands, inits, computation: Computation, dimensions) -> Instruction:
        """Reduce `dimensions` of one array or of N arrays at once (then the result is a
        tuple); `computation` is (acc..., x...) -> acc (see scalar_computation)."""
        return self._add("reduce", self._list(operands) + self._list(inits),
                         {"dimensions": _ints(dimensions), "to_apply": computation})

    def reduce_window(self, operands, inits, computation: Computation, window_dimensions,
                      window_strides=None, padding=None, base_dilations=None,
                      window_dilations=None) -> Instruction:
        window = _window(window_dimensions, window_strides, padding, base_dilations,
                         window_dilations)
        return self._add("reduce-window", self._list(operands) + self._list(inits),
                         {"window": window, "to_apply": computation})

    def select_and_scatter(self, operand, select: Computation, window_dimensions,
                           window_strides, padding, source, init,
                           scatter: Computation) -> Instruction:
        window = _window(window_dimensions, window_strides, padding)
        return self._add("select-and-scatter", [operand, source, init],
                         {"window": window, "select": select, "scatter": scatter})

    def sort(self, operands, comparator: Computation, dimension: int = -1,
             is_stable: bool = False) -> Instruction:
        operands = self._list(operands)
        if dimension < 0 and operands:
            dimension += len(self._dims(operands[0]))
        attrs = {"dimensions": (int(dimension),)}
        if is_stable:
            attrs["is_stable"] = True
        attrs["to_apply"] = comparator
        return self._add("sort", operands, attrs)

    def topk(self, x, k: int, largest: bool = True) -> Instruction:
        return self._add("topk", [x], {"k": int(k), "largest": bool(largest)})

    # ---- linear algebra ----------------------------------------------------------------------
    def dot_general(self, lhs, rhs, contracting, batch=((), ()), preferred_type=None,
                    precision=None):
        """contracting = (lhs_dims, rhs_dims), batch = (lhs_dims, rhs_dims), as in
        jax.lax.dot_general; preferred_type sets the result element type; precision is
        None or one of "default"/"high"/"highest" per operand (operand_precision=)."""
        attrs = {}
        for key, dims in (("lhs_batch_dims", batch[0]), ("lhs_contracting_dims", contracting[0]),
                          ("rhs_batch_dims", batch[1]), ("rhs_contracting_dims", contracting[1])):
            if len(dims):
                attrs[key] = _ints(dims)
        _precision(attrs, precision)
        declared = None if preferred_type is None else Shape.array(preferred_type, ())
        return self._add("dot", [lhs, rhs], attrs, declared=declared)

    def dot(self, lhs, rhs, preferred_type=None) -> Instruction:
        """Vector/matrix product: contracts lhs's last dimension with rhs's first."""
        lrank = len(self._dims(lhs))
        return self.dot_general(lhs, rhs, ((max(lrank - 1, 0),), (0,)),
                                preferred_type=preferred_type)

    def convolution(self, lhs, rhs, window_strides=None, padding=None, lhs_dilation=None,
                    rhs_dilation=None, dimension_numbers="b01f_01io->b01f",
                    feature_group_count: int = 1, batch_group_count: int = 1,
                    preferred_type=None, precision=None) -> Instruction:
        """Like jax.lax.conv_general_dilated; padding is one (low, high) per spatial dim and
        dimension_numbers an HLO dim_labels string or ConvDimensionNumbers."""
        dn = dimension_numbers
        if isinstance(dn, str):
            try:
                dn = A.ConvDimensionNumbers.parse(dn)
            except ValueError as e:
                raise XlapyError(f"convolution: {e}") from None
        window = _window([self._dims(rhs)[d] if d < len(self._dims(rhs)) else 0
                          for d in dn.kernel_spatial], window_strides, padding, lhs_dilation,
                         rhs_dilation)
        attrs = {"window": window, "dim_labels": dn}
        if feature_group_count != 1:
            attrs["feature_group_count"] = int(feature_group_count)
        if batch_group_count != 1:
            attrs["batch_group_count"] = int(batch_group_count)
        _precision(attrs, precision)
        declared = None if preferred_type is None else Shape.array(preferred_type, ())
        return self._add("convolution", [lhs, rhs], attrs, declared=declared)

    conv_general_dilated = convolution

    # ---- indexing ----------------------------------------------------------------------------
    def gather(self, operand, indices, *, offset_dims, collapsed_slice_dims, start_index_map,
               index_vector_dim: int, slice_sizes, operand_batching_dims=(),
               start_indices_batching_dims=(), indices_are_sorted: bool = False):
        attrs = _dim_numbers({"offset_dims": offset_dims,
                              "collapsed_slice_dims": collapsed_slice_dims},
                             {"operand_batching_dims": operand_batching_dims,
                              "start_indices_batching_dims": start_indices_batching_dims})
        attrs.update(start_index_map=_ints(start_index_map),
                     index_vector_dim=int(index_vector_dim), slice_sizes=_ints(slice_sizes))
        if indices_are_sorted:
            attrs["indices_are_sorted"] = True
        return self._add("gather", [operand, indices], attrs)

    def scatter(self, operands, indices, updates, computation: Computation, *,
                update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
                index_vector_dim: int, input_batching_dims=(), scatter_indices_batching_dims=(),
                indices_are_sorted: bool = False, unique_indices: bool = False):
        attrs = _dim_numbers({"update_window_dims": update_window_dims,
                              "inserted_window_dims": inserted_window_dims},
                             {"input_batching_dims": input_batching_dims,
                              "scatter_indices_batching_dims": scatter_indices_batching_dims})
        attrs.update(scatter_dims_to_operand_dims=_ints(scatter_dims_to_operand_dims),
                     index_vector_dim=int(index_vector_dim))
        if indices_are_sorted:
            attrs["indices_are_sorted"] = True
        if unique_indices:
            attrs["unique_indices"] = True
        attrs["to_apply"] = computation
        return self._add("scatter", self._list(operands) + [indices] + self._list(updates),
                         attrs)

    # ---- control flow and calls --------------------------------------------------------------
    def while_loop(self, condition: Computation, body: Computation, init) -> Instruction:
        return self._add("while", [init], {"condition": condition, "body": body})

    def conditional(self, index, branches: Sequence[Computation], operands) -> Instruction:
        """pred index: branches = [true_branch, false_branch]; s32 index: branch i (an
        out-of-range index runs the last branch). Branch i takes operands[i]."""
        branches = list(branches)
        if (isinstance(index, Instruction) and index.shape.is_array
                and index.shape.element_type is PRED and len(branches) == 2):
            attrs = {"true_computation": branches[0], "false_computation": branches[1]}
        else:
            attrs = {"branch_computations": branches}
        return self._add("conditional", [index, *operands], attrs)

    def call(self, computation: Computation, *args) -> Instruction:
        return self._add("call", args, {"to_apply": computation})

    def map(self, computation: Computation, operands, dimensions=None) -> Instruction:
        operands = self._list(operands)
        if dimensions is None:
            dimensions = range(len(self._dims(operands[0]))) if operands else ()
        return self._add("map", operands, {"dimensions": _ints(dimensions),
                                           "to_apply": computation})

    def fusion(self, computation: Computation, operands, kind: str = "kLoop") -> Instruction:
        return self._add("fusion", self._list(operands), {"kind": kind, "calls": computation})

    def custom_call(self, target: str, operands, shape: Shape, *, has_side_effect=False,
                    opaque: str | None = None, api_version: str | None = None,
                    called_computations: Sequence[Computation] = (), **raw) -> Instruction:
        """A custom-call with a declared result shape; extra keyword attributes (e.g.
        backend_config='{...}') are kept verbatim."""
        attrs: dict = {"custom_call_target": str(target)}
        if has_side_effect:
            attrs["custom_call_has_side_effect"] = True
        if opaque is not None:
            attrs["opaque"] = str(opaque)
        if api_version is not None:
            attrs["api_version"] = str(api_version)
        if called_computations:
            attrs["called_computations"] = list(called_computations)
        attrs.update({k: A.Raw(str(v)) for k, v in raw.items()})
        return self._add("custom-call", self._list(operands), attrs, declared=shape)

    # ---- collectives (all-reduce, all-to-all, collective-permute, replica-id: Builder.op) ---
    def all_gather(self, operands, shape: Shape, dimension: int,
                   **attrs) -> Instruction:
        """all-gather with its declared result shape; attrs: replica_groups (a
        ReplicaGroups), channel_id, use_global_device_ids."""
        return self._add("all-gather", self._list(operands),
                         {"dimensions": (int(dimension),), **attrs}, declared=shape)

    def reduce_scatter(self, operands, shape: Shape, dimension: int, to_apply: Computation,
                       **attrs) -> Instruction:
        return self._add("reduce-scatter", self._list(operands),
                         {"dimensions": (int(dimension),), "to_apply": to_apply, **attrs},
                         declared=shape)


def _precision(attrs: dict, precision) -> None:
    """operand_precision={p,q} as XLA prints it: only when one operand is not default."""
    if precision is None:
        return
    names = tuple(str(p).lower() for p in precision)
    if len(names) != 2 or any(n not in ("default", "high", "highest") for n in names):
        raise XlapyError(f"operand_precision: expects two of default/high/highest, got "
                         f"{precision!r}")
    if any(n != "default" for n in names):
        attrs["operand_precision"] = A.Raw("{" + ",".join(names) + "}")
