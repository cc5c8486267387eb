"""What shape rules are written with: the registry (@shape_rule), OpContext (typed access to
an instruction's operands and attributes, and its error messages) and the checks several
rule modules share. The rules themselves live in the shape_rules_*.py topic modules;
shape_inference.py is the entry point (infer_shape)."""

from __future__ import annotations

from typing import Callable, Sequence

from xlapy.errors import ShapeError
from xlapy.hlo import attributes as A
from xlapy.hlo.ir import Computation
from xlapy.hlo.opcodes import registrar
from xlapy.hlo.shapes import PrimitiveType, Shape

SHAPE_RULES: dict[str, Callable[["OpContext"], Shape]] = {}

_REQUIRED = object()


# @shape_rule(opcode, ...): the decorated function is the shape rule of those opcodes
shape_rule = registrar(SHAPE_RULES, "shape rule")


def fmt(shape) -> str:
    """A shape (or list of shapes) as text, without layouts."""
    if isinstance(shape, (list, tuple)):
        return "(" + ", ".join(fmt(s) for s in shape) + ")"
    if isinstance(shape, Shape):
        return shape.to_string(print_layout=False)
    return repr(shape)


class OpContext:
    """One shape-inference request: the opcode, operand shapes, attributes and declared shape,
    with typed attribute accessors that raise ShapeError on missing or malformed values."""

    def __init__(self, opcode: str, shapes: Sequence[Shape], attrs: dict | None,
                 declared: Shape | None, literal=None):
        self.opcode = opcode
        self.shapes = list(shapes)
        self.attrs = attrs or {}
        self.declared = declared
        self.literal = literal

    # ---- errors ------------------------------------------------------------------------
    def fail(self, message: str) -> ShapeError:
        return ShapeError(f"{self.opcode}: {message}")

    # ---- operands ------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.shapes)

    def array(self, i: int, what: str | None = None) -> Shape:
        """Operand i, which must be an array (not a tuple or token)."""
        s = self.shapes[i]
        if not s.is_array:
            raise self.fail(f"{what or f'operand {i}'} must be an array, got {fmt(s)}")
        return s

    def arrays(self) -> list[Shape]:
        return [self.array(i) for i in range(self.n)]

    def count_at_least(self, k: int, what: str) -> None:
        if self.n < k:
            raise self.fail(f"expects at least {k} operand(s) ({what}), got {self.n}")

    def arrays_of_one_shape(self, what: str) -> list[Shape]:
        """The operands (at least one: `what`), arrays that all have the same dimensions."""
        self.count_at_least(1, what)
        shapes = self.arrays()
        for i, s in enumerate(shapes):
            if s.dims != shapes[0].dims:
                raise self.fail(f"all operands must have the same dimensions, but operand 0 is "
                                f"{fmt(shapes[0])} and operand {i} is {fmt(s)}")
        return shapes

    def need_declared(self) -> Shape:
        if self.declared is None:
            raise self.fail("the result shape cannot be derived from the operands; pass the "
                            "declared shape (declared=...)")
        return self.declared

    def declared_array(self) -> Shape:
        d = self.need_declared()
        if not d.is_array:
            raise self.fail(f"result must be an array, declared {fmt(d)}")
        return d

    # ---- attributes ---------------------------------------------------------------------
    def has(self, name: str) -> bool:
        return name in self.attrs

    def attr(self, name: str, default=_REQUIRED):
        if name in self.attrs:
            return self.attrs[name]
        if default is _REQUIRED:
            raise self.fail(f"missing required attribute {name}=")
        return default

    def _checked(self, name, default, ok, example):
        if name not in self.attrs:
            return self.attr(name, default)
        v = self.attrs[name]
        if not ok(v):
            raise self.fail(f"attribute {name} must be {example}, got {v!r}")
        return v

    def ints(self, name: str, default=_REQUIRED) -> tuple[int, ...]:
        v = self._checked(name, default, lambda v: isinstance(v, (tuple, list)) and all(
            _is_int(x) for x in v), "a list of integers like {0,1}")
        return tuple(v) if isinstance(v, (tuple, list)) else v

    def int(self, name: str, default=_REQUIRED) -> int:
        return self._checked(name, default, _is_int, "an integer")

    def bool(self, name: str, default=False) -> bool:
        return self._checked(name, default, lambda v: isinstance(v, bool), "true or false")

    def string(self, name: str, default=_REQUIRED) -> str:
        return self._checked(name, default, lambda v: isinstance(v, str), "a string")

    def typed(self, name: str, cls, example: str, default=_REQUIRED):
        return self._checked(name, default, lambda v: isinstance(v, cls), example)

    def computation(self, name: str, default=_REQUIRED):
        return self._checked(name, default, lambda v: isinstance(v, Computation),
                             "a computation")

    def computations(self, name: str) -> list:
        return list(self._checked(name, _REQUIRED, lambda v: isinstance(v, (list, tuple)) and all(
            isinstance(c, Computation) for c in v), "a list of computations"))

    # ---- computations -------------------------------------------------------------------
    def signature(self, comp, role: str) -> tuple[list[Shape], Shape]:
        """(parameter shapes, result shape) of a called computation, checked to be complete."""
        params = list(getattr(comp, "parameters", None) or [])
        root = getattr(comp, "root", None)
        name = getattr(comp, "name", "?")
        if root is None:
            raise self.fail(f"{role} computation {name} has no root instruction")
        if any(p is None for p in params):
            raise self.fail(f"{role} computation {name} has gaps in its parameter numbers")
        return [p.shape for p in params], root.shape

    def check_param_count(self, comp, role: str, expected: int) -> tuple[list[Shape], Shape]:
        params, result = self.signature(comp, role)
        if len(params) != expected:
            raise self.fail(f"{role} computation {comp.name} must take {expected} parameter(s), "
                            f"but takes {len(params)}: {fmt(params)}")
        return params, result


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


# ---- shared checks used by several rule modules --------------------------------------------

def scalar_of(t: PrimitiveType) -> Shape:
    return Shape.array(t, ())


def is_scalar(s: Shape) -> bool:
    return s.is_array and s.rank == 0


def check_dims_in_range(op: OpContext, dims: Sequence[int], rank: int, what: str) -> None:
    for d in dims:
        if not 0 <= d < rank:
            raise op.fail(f"{what} {tuple(dims)} has dimension {d} out of range for rank {rank}")


def check_unique(op: OpContext, dims: Sequence[int], what: str) -> None:
    if len(set(dims)) != len(dims):
        raise op.fail(f"{what} {tuple(dims)} has repeated dimensions")


def check_sorted(op: OpContext, dims: Sequence[int], what: str) -> None:
    if list(dims) != sorted(dims):
        raise op.fail(f"{what} {tuple(dims)} must be sorted in ascending order")


def verify_reducer(op: OpContext, comp, role: str, init_shapes: Sequence[Shape],
                   input_types: Sequence[PrimitiveType]) -> list[Shape]:
    """XLA's VerifyReducerShape: `comp` maps (acc_0..acc_N-1, x_0..x_N-1) to a scalar (N=1)
    or a tuple of N scalars; accumulators match init values, x_i matches the input element
    types. Returns the N accumulator shapes."""
    n = len(init_shapes)
    params, result = op.check_param_count(comp, role, 2 * n)
    if n == 1 and not result.is_tuple:
        accs = [result]
    elif result.is_tuple and len(result.tuple_shapes) == n:
        accs = list(result.tuple_shapes)
    elif n == 1:
        raise op.fail(f"{role} computation {comp.name} must return a scalar, returns {fmt(result)}")
    else:
        raise op.fail(f"{role} computation {comp.name} must return a tuple of {n} scalars, "
                      f"returns {fmt(result)}")
    for i, acc in enumerate(accs):
        if not is_scalar(acc):
            raise op.fail(f"{role} computation {comp.name} must return scalars, but result "
                          f"{i} is {fmt(acc)}")
        if not params[i].compatible(acc):
            raise op.fail(f"{role} computation {comp.name}: parameter {i} is {fmt(params[i])} "
                          f"but result {i} (the accumulator) is {fmt(acc)}")
        if not init_shapes[i].compatible(acc):
            raise op.fail(f"{role} computation {comp.name}: accumulator {i} is {fmt(acc)} but "
                          f"the init value is {fmt(init_shapes[i])}")
        if not params[n + i].compatible(scalar_of(input_types[i])):
            raise op.fail(f"{role} computation {comp.name}: parameter {n + i} is "
                          f"{fmt(params[n + i])} but the input element type is "
                          f"{input_types[i]}")
    return accs


def dilate(size: int, dilation: int) -> int:
    """window_util::DilateDim: the extent of `size` elements spread `dilation` apart."""
    return 0 if size == 0 else 1 + dilation * (size - 1)


def window_output_dims(op: OpContext, base_dims: Sequence[int], window: A.Window,
                       what: str) -> tuple[int, ...]:
    """XLA's InferWindowOutputShape: the number of window positions along each dimension."""
    if window.rank != len(base_dims):
        raise op.fail(f"window {window} has {window.rank} dimensions but the {what} has "
                      f"rank {len(base_dims)}")
    out = []
    for i, b in enumerate(base_dims):
        size, stride = window.size[i], window.stride[i]
        ld, rd = window.lhs_dilate[i], window.rhs_dilate[i]
        if size <= 0:
            raise op.fail(f"window {window} has a non-positive size in dimension {i}")
        if stride <= 0:
            raise op.fail(f"window {window} has a non-positive stride in dimension {i}")
        if ld < 1 or rd < 1:
            raise op.fail(f"window {window} has a dilation factor below 1 in dimension {i}")
        padded = window.pad_low[i] + dilate(b, ld) + window.pad_high[i]
        if padded < 0:
            raise op.fail(f"window {window}: padding makes dimension {i} of the {what} "
                          f"negative ({padded})")
        extent = dilate(size, rd)
        out.append(0 if extent > padded else (padded - extent) // stride + 1)
    return tuple(out)
