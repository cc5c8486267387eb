"""TF 1.x top-level framework utilities (tf.IndexedSlices, tf.is_tensor, tf.init_scope,
...) that scripts and library code use."""

from __future__ import annotations

import contextlib
import logging
import platform

import numpy as np

import xlapy
from xlapy.compat.v1 import dtypes, nest
from xlapy.compat.v1.custom_gradients import NotDifferentiable
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError, OpError
from xlapy.compat.v1.framework import (GraphKeys, Operation, Tensor, convert_to_tensor,
                                       get_default_graph)
from xlapy.compat.v1.gradients import AggregationMethod, UnconnectedGradients
from xlapy.compat.v1.ops._common import constant_value, make_op
from xlapy.compat.v1.ops.array_ops import (concat, fill, group, rank, shape, size, stack)
from xlapy.compat.v1.ops.check_ops import Assert
from xlapy.compat.v1.ops.cond_ops import case
from xlapy.compat.v1.ops.control_flow_ops import build_while
from xlapy.compat.v1.ops.functional import in_root_graph
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.math_ops import (argmax, argmin, cast, equal, logical_or, maximum,
                                          reduce_all)
from xlapy.compat.v1.ops.misc_framework import (DeviceSpec, IndexedSlices, IndexedSlicesValue,
                                                VariableAggregation, VariableSynchronization)
from xlapy.compat.v1.ops.misc_io_ops import (decode_base64, encode_base64, matching_files,
                                             parse_tensor, serialize_tensor, timestamp)
from xlapy.compat.v1.ops.script_ops import py_func
from xlapy.compat.v1.sparse_tensor import SparseTensor
from xlapy.compat.v1.tensor_shape import Dimension, as_shape, broadcast_shape
from xlapy.compat.v1.variables import (Variable, get_variable, global_variables,
                                       local_variables, local_variables_initializer)

__all__ = [
    "AggregationMethod", "COMPILER_VERSION", "DeviceSpec", "GIT_VERSION", "IndexedSlices",
    "IndexedSlicesValue", "NoGradient", "OpError", "UnconnectedGradients",
    "VariableAggregation", "VariableSynchronization", "add_to_collections", "arg_max",
    "arg_min", "assert_variables_initialized", "broadcast_dynamic_shape",
    "broadcast_static_shape", "colocate_with", "container", "decode_base64",
    "dimension_value", "encode_base64", "get_collection_ref", "get_local_variable",
    "get_logger", "get_static_value", "init_scope",
    "initialize_local_variables", "is_tensor", "matching_files", "parallel_stack",
    "parse_tensor", "py_function", "resource_variables_enabled", "serialize_tensor",
    "switch_case", "timestamp", "to_bfloat16", "to_complex64", "to_double", "vectorized_map",
    "where_v2",
]

GIT_VERSION = f"v{xlapy.__version__}-xlapy"  # the xlapy release this API runs on
COMPILER_VERSION = (f"xlapy {xlapy.__version__} (Python {platform.python_version()}, "
                    f"{platform.python_compiler()})")

NoGradient = NotDifferentiable  # tf.NoGradient: TF's other name of tf.NotDifferentiable
initialize_local_variables = local_variables_initializer  # its pre-1.0 name


# ---- tensors and collections -----------------------------------------------------------------

def is_tensor(x) -> bool:
    """Whether x is a tensor-like graph value: a Tensor, Variable, SparseTensor or
    IndexedSlices (NumPy arrays and Python values are not)."""
    return isinstance(x, (Tensor, Variable, SparseTensor, IndexedSlices)) or \
        bool(getattr(x, "is_tensor_like", False))


def get_collection_ref(key) -> list:
    """The default graph's collection `key` itself (a list; changes to it change the
    collection)."""
    return get_default_graph().get_collection_ref(key)


def add_to_collections(names, value) -> None:
    """Add value to each collection of names (a name or an iterable of names; a name
    given twice adds it once)."""
    if isinstance(names, str):
        names = [names]
    seen: list = []
    for n in names:
        if n not in seen:
            seen.append(n)
    graph = get_default_graph()
    for n in seen:
        graph.add_to_collection(n, value)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                       trainable=False, collections=None, **kwargs):
    """tf.get_variable for a local variable: in LOCAL_VARIABLES (plus `collections`), never
    trainable (as in TF, `trainable` is ignored)."""
    colls = list(collections) + [GraphKeys.LOCAL_VARIABLES] if collections else \
        [GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                        regularizer=regularizer, trainable=False, collections=colls,
                        **kwargs)


def get_static_value(tensor, partial=False):
    """The value of `tensor` known when the graph is built (a NumPy array), or None. A
    value that is not a tensor is returned as it is. With partial=True, a stack of scalars
    some of which are unknown gives an object array with None in their place."""
    if not is_tensor(tensor):
        return tensor
    if not isinstance(tensor, Tensor):
        return None  # Variables, SparseTensors, IndexedSlices: not constants
    v = constant_value(tensor)
    if v is not None:
        return np.array(v, copy=True)
    if partial and tensor.op.type == "Pack" and tensor.op.get_attr("axis") == 0 and \
            tensor.op.inputs:
        vals = [get_static_value(t, partial=True) for t in tensor.op.inputs]
        out = np.empty(len(vals), dtype=object)
        out[:] = [None if v is None else v[()] if np.ndim(v) == 0 else v for v in vals]
        return out
    return None


def dimension_value(dimension):
    """The int (or None) of a Dimension; any other value as it is."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


def resource_variables_enabled() -> bool:
    """False: xlapy's variables are TF 1.x reference variables (VariableV2)."""
    return False


def get_logger() -> logging.Logger:
    """The Python logger named "tensorflow" (the one tf.logging writes to)."""
    return logging.getLogger("tensorflow")


# ---- casts and old names ---------------------------------------------------------------------

def to_double(x, name="ToDouble"):
    """x cast to float64 (deprecated in TF 1.15 for tf.cast)."""
    return cast(x, dtypes.float64, name=name)


def to_bfloat16(x, name="ToBFloat16"):
    """x cast to bfloat16, rounding to nearest even (deprecated in TF 1.15 for tf.cast)."""
    return cast(x, dtypes.bfloat16, name=name)


def to_complex64(x, name="ToComplex64"):
    """x cast to complex64 (deprecated in TF 1.15 for tf.cast)."""
    return cast(x, dtypes.complex64, name=name)


def arg_max(input, dimension, output_type=dtypes.int64, name=None):
    """The index of the largest value along `dimension` (tf.argmax's old name)."""
    return argmax(input, axis=dimension, name=name, output_type=output_type)


def arg_min(input, dimension, output_type=dtypes.int64, name=None):
    """The index of the smallest value along `dimension` (tf.argmin's old name)."""
    return argmin(input, axis=dimension, name=name, output_type=output_type)


def where_v2(condition, x=None, y=None, name=None):
    """Elements of x where condition is true, else of y, condition, x and y broadcast
    against each other; with x and y None, the coordinates of the true elements."""
    return where(condition, x, y, name=name)


def parallel_stack(values, name="parallel_stack"):
    """tf.stack(values) along a new first axis, for values whose shapes are all known when
    the graph is built (and equal)."""
    values = [convert_to_tensor(v) for v in values]
    if not values:
        raise InvalidArgumentError("parallel_stack needs at least one value")
    first = values[0].shape
    if not first.is_fully_defined():
        raise InvalidArgumentError(f"parallel_stack: the shape of the values must be known "
                                   f"when the graph is built, got {first}")
    for v in values[1:]:
        if not v.shape.is_compatible_with(first):
            raise InvalidArgumentError(f"parallel_stack: shapes {first} and {v.shape} of the "
                                       "values differ")
    out = stack(values, axis=0, name=name)
    out.set_shape(as_shape([len(values)]).concatenate(first))
    return out


# ---- broadcasting of shapes --------------------------------------------------------------------

def broadcast_static_shape(shape_x, shape_y):
    """The TensorShape that shapes shape_x and shape_y broadcast to (unknown dims stay
    unknown unless the other side fixes them); ValueError when they cannot broadcast."""
    sx, sy = as_shape(shape_x), as_shape(shape_y)
    try:
        return broadcast_shape(sx, sy)
    except InvalidArgumentError:
        raise InvalidArgumentError(f"Incompatible shapes for broadcasting: {sx} and "
                                   f"{sy}") from None


def _shape_vector(s, what):
    if isinstance(s, Tensor) or hasattr(s, "_to_tensor") or isinstance(s, np.ndarray):
        t = convert_to_tensor(s)
    else:  # a list of ints: int32, as TF converts it
        t = convert_to_tensor(np.asarray(s, np.int32))
    if not t.dtype.is_integer:
        raise InvalidTypeError(f"broadcast_dynamic_shape: {what} must be an int32 or int64 "
                               f"vector, got {t.dtype.name}")
    if t.shape.ndims not in (None, 1):
        raise InvalidArgumentError(f"broadcast_dynamic_shape: {what} must be a vector, got "
                                   f"shape {t.shape}")
    return t


def broadcast_dynamic_shape(shape_x, shape_y):
    """The shape (a 1-D int tensor) that the shapes shape_x and shape_y (1-D int tensors)
    broadcast to. Shapes known when the graph is built give a constant (an incompatible
    pair raises then); otherwise the result is computed when the graph runs, and an
    incompatible pair fails with InvalidArgumentError there."""
    sx, sy = _shape_vector(shape_x, "shape_x"), _shape_vector(shape_y, "shape_y")
    if sx.dtype != sy.dtype:
        raise InvalidTypeError(f"broadcast_dynamic_shape: shape_x ({sx.dtype.name}) and "
                               f"shape_y ({sy.dtype.name}) must have the same dtype")
    cx, cy = constant_value(sx), constant_value(sy)
    if cx is not None and cy is not None:
        try:
            out = np.broadcast_shapes(tuple(int(d) for d in cx), tuple(int(d) for d in cy))
        except ValueError:
            raise InvalidArgumentError(f"Incompatible shapes: [{','.join(map(str, cx))}] vs. "
                                       f"[{','.join(map(str, cy))}]") from None
        return convert_to_tensor(np.asarray(out, sx.dtype.np), name="BroadcastArgs")
    with get_default_graph().name_scope("BroadcastArgs"):
        nx, ny = size(sx, out_type=sx.dtype), size(sy, out_type=sx.dtype)
        n = maximum(nx, ny)
        one = convert_to_tensor(np.asarray(1, sx.dtype.np))
        # both padded on the left with ones to the longer rank
        px = concat([fill(stack([n - nx]), one), sx], 0)
        py = concat([fill(stack([n - ny]), one), sy], 0)
        ok = reduce_all(logical_or(logical_or(equal(px, py), equal(px, one)),
                                   equal(py, one)))
        with get_default_graph().device("/device:CPU:0"):  # (XLA has no Assert, strings)
            check = Assert(ok, ["Incompatible shapes:", sx, "vs.", sy])
        with get_default_graph().control_dependencies([check]):
            return where(equal(px, one), py, px)


# ---- variables ---------------------------------------------------------------------------------

def assert_variables_initialized(var_list=None):
    """An op that fails with FailedPreconditionError when it runs if a variable of var_list
    (default: the global and local variables, else every variable op of the graph) holds
    no value; None when there are no variables."""
    if var_list is None:
        var_list = global_variables() + local_variables()
        if not var_list:
            var_list = [op.outputs[0] for op in get_default_graph().get_operations()
                        if op.type == "VariableV2"]
    var_list = list(var_list)
    if not var_list:
        return None
    with get_default_graph().name_scope("assert_variables_initialized"):
        # reading each variable's storage fails on one that holds no value
        reads = [rank(v._ref() if hasattr(v, "_ref") else v) for v in var_list]
        return group(*reads, name="assert_variables_initialized")


# ---- scopes ------------------------------------------------------------------------------------

@contextlib.contextmanager
def init_scope():
    """Ops made inside go into the outermost graph (out of while_loop and cond bodies),
    keep the current name scope and ignore the enclosing control dependencies, as
    variable initializers must."""
    g = get_default_graph()
    scope = g.get_name_scope()
    with in_root_graph() as root:
        names = root.name_scope(scope + "/" if scope else "") if root is not g else \
            contextlib.nullcontext()
        with names, root.control_dependencies(None):
            yield


@contextlib.contextmanager
def colocate_with(op, ignore_existing=False):
    """Ops made inside are placed with `op` (an Operation, Tensor or Variable): on its
    device, the enclosing tf.device scopes set aside. On one machine with one CPU device
    this is the only effect TF's colocation has. op=None (with ignore_existing=True)
    leaves placement unchanged."""
    if op is None:
        if not ignore_existing:
            raise InvalidArgumentError("Trying to reset colocation (op is None) but "
                                       "ignore_existing is not True")
        yield
        return
    if isinstance(op, Operation):
        target = op
    elif hasattr(op, "_ref"):  # a Variable: its storage op
        target = op._ref().op
    elif isinstance(getattr(op, "op", None), Operation):  # a Tensor, an IndexedSlices
        target = op.op
    else:
        target = convert_to_tensor(op).op
    with get_default_graph().device(target.device or None):
        yield


@contextlib.contextmanager
def container(container_name):
    """Stateful ops made inside would live in resource container `container_name`. xlapy
    keeps one set of variables per session and has no Session.reset(containers), so, as
    in a TF program that never resets a container, this changes nothing."""
    if not isinstance(container_name, str):
        raise InvalidTypeError(f"container_name must be a string, got {container_name!r}")
    yield container_name


# ---- functions and control flow ---------------------------------------------------------------

class _EagerValue(np.ndarray):
    """An input of a py_function's function: a NumPy array with TF's EagerTensor.numpy()
    (a scalar for a 0-d value, bytes for a string scalar)."""

    def numpy(self):
        a = self.view(np.ndarray)
        return a[()] if a.ndim == 0 else a.copy()


def py_function(func, inp, Tout, name=None):
    """tf.py_function: func(*inputs) run in Python when the op runs. The inputs have
    .numpy(), as TF's eager tensors do; Tout is a dtype (one output) or a list of dtypes
    (a list of outputs; an empty list gives the Operation)."""
    if not callable(func):
        raise InvalidTypeError(f"py_function: func must be callable, got {func!r}")
    single = not isinstance(Tout, (list, tuple))
    touts = [dtypes.as_dtype(t) for t in ([Tout] if single else Tout)]

    def call(*args):
        out = func(*[np.asarray(a).view(_EagerValue) for a in args])
        if not touts and out is None:
            return ()
        return out

    call.__name__ = getattr(func, "__name__", "py_function")
    if touts:
        out = py_func(call, inp, touts, name=name or "EagerPyFunc")
        return out[0] if single else out
    return make_op("PyFunc", [convert_to_tensor(i) for i in inp],
                   {"func": call, "Tout": ()}, name=name or "EagerPyFunc")


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """branch_fns[branch_index]() (branch_fns: a list of callables, a list of (int,
    callable) pairs or a dict int -> callable, keys 0..N-1). An index out of range runs
    default, or the last branch without one. Only the branch taken runs."""
    if isinstance(branch_fns, dict):
        pairs = list(branch_fns.items())
    elif isinstance(branch_fns, (list, tuple)) and all(callable(f) for f in branch_fns):
        pairs = list(enumerate(branch_fns))
    elif isinstance(branch_fns, (list, tuple)):
        pairs = list(branch_fns)
    else:
        raise InvalidTypeError("branch_fns must be a list, tuple, or dict")
    if not pairs:
        raise InvalidArgumentError("Must provide at least one item in branch_fns")
    for p in pairs:
        if not isinstance(p, tuple) or len(p) != 2:
            raise InvalidTypeError(f"each entry of branch_fns must be a callable or an "
                                   f"(int, callable) pair, got {p!r}")
        k, f = p
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
            raise InvalidTypeError(f"key {k!r} of branch_fns must be an int")
        if not callable(f):
            raise InvalidTypeError(f"fn for key {k} must be callable")
    keys = sorted(int(k) for k, _ in pairs)
    if keys != list(range(len(keys))):
        raise InvalidArgumentError(f"branch indices (keys) must form contiguous range of "
                                   f"[0 to {len(keys)}) but found {{{', '.join(map(str, keys))}}}")
    if default is not None and not callable(default):
        raise InvalidTypeError("default must be callable")
    fns = [f for _, f in sorted(pairs, key=lambda p: int(p[0]))]
    idx = convert_to_tensor(branch_index)
    if idx.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidTypeError(f"branch_index must be an int32 or int64 scalar, got "
                               f"{idx.dtype.name}")
    if idx.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"branch_index must be a scalar, got shape {idx.shape}")
    last = default if default is not None else fns[-1]
    conds = fns if default is not None else fns[:-1]
    with get_default_graph().name_scope(name):
        pairs = [(equal(idx, convert_to_tensor(np.asarray(i, idx.dtype.np))), f)
                 for i, f in enumerate(conds)]
        return case(pairs, default=last, exclusive=False, name="case")


def vectorized_map(fn, elems):
    """fn applied to each row (first-dimension slice) of elems (a tensor or a structure of
    tensors), the results stacked: what TF's vectorizing pfor computes, run here as one
    loop (one HLO while loop compiled)."""
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise InvalidArgumentError("vectorized_map: elems must hold at least one tensor")
    for t in flat:
        if t.shape.ndims == 0:
            raise InvalidArgumentError("vectorized_map: elems must be 1+ dimensional")
    dims = {t.shape.dims[0] for t in flat if t.shape.dims and t.shape.dims[0] is not None}
    if len(dims) > 1:
        raise InvalidArgumentError(f"vectorized_map: the elems have different first "
                                   f"dimensions {sorted(dims)}")
    n = dims.pop() if dims else shape(flat[0])[0]
    structure: list = []

    def body(i, carry, rows):
        out = fn(nest.pack_sequence_as(elems, rows))
        structure.append(out)
        return [], nest.flatten(out)

    with get_default_graph().name_scope("loop_body"):
        _, _, ys = build_while([], flat, n, body, name="while")
    return nest.pack_sequence_as(structure[0], ys)
