"""Graphs, operations and tensors: the data structure of TensorFlow 1.x programs.

A Graph is a list of Operations in creation order (which is a topological order: an op's
inputs exist before it). An Operation has a type (registered in op_registry), a unique
name, input Tensors, control inputs, attributes, a device string and output Tensors. A
Tensor is one output of an operation: a dtype and a static, possibly partial, shape.

Graph construction state lives on the graph: the name-scope stack, the device stack, the
control-dependency stack and the attribute scopes that jit_scope uses to mark ops with
_XlaCompile. `get_default_graph()` is the graph new ops go into; `Graph.as_default()`
changes it for a `with` block.
"""

from __future__ import annotations

import contextlib
import itertools
import re

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError, NotFoundError
from xlapy.compat.v1.tensor_shape import TensorShape, as_shape


class GraphKeys:
    GLOBAL_VARIABLES = "variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    LOCAL_VARIABLES = "local_variables"
    MODEL_VARIABLES = "model_variables"
    GLOBAL_STEP = "global_step"
    LOSSES = "losses"
    UPDATE_OPS = "update_ops"
    TRAIN_OP = "train_op"
    SUMMARIES = "summaries"
    REGULARIZATION_LOSSES = "regularization_losses"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    METRIC_VARIABLES = "metric_variables"
    SAVEABLE_OBJECTS = "saveable_objects"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    VARIABLES = GLOBAL_VARIABLES


class Tensor:
    """One output of an Operation. Hashable by identity, so it can key a feed_dict."""

    __array_priority__ = 1000  # numpy_array + tensor calls Tensor.__radd__

    def __init__(self, op: "Operation", value_index: int, dtype: dtypes.DType,
                 shape: TensorShape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = shape
        self._consumers: list[Operation] = []

    op = property(lambda self: self._op)
    value_index = property(lambda self: self._value_index)
    dtype = property(lambda self: self._dtype)
    graph = property(lambda self: self._op.graph)
    device = property(lambda self: self._op.device)
    name = property(lambda self: f"{self._op.name}:{self._value_index}")
    shape = property(lambda self: self._shape)

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape) -> None:
        self._shape = self._shape.merge_with(as_shape(shape))

    def consumers(self) -> list:
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        from xlapy.compat.v1.session import _session_for
        return _session_for(session, self.graph).run(self, feed_dict)

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    __str__ = lambda self: (f'Tensor("{self.name}", shape={self._shape}, '
                            f'dtype={self._dtype.name})')

    def __bool__(self):
        raise InvalidTypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. Use "
                               "`if t is not None:` instead of `if t:` to test if a tensor is "
                               "defined, and use TensorFlow ops such as tf.cond to execute "
                               "subgraphs conditioned on the value of a tensor.")

    def __iter__(self):
        d = self._shape.dims
        if d is None or not d or d[0] is None:
            raise InvalidTypeError(f"Tensor {self.name} with shape {self._shape} is not "
                                   "iterable: its first dimension must be known")
        from xlapy.compat.v1.ops.array_ops import unstack
        return iter(unstack(self))

    def __len__(self):
        raise InvalidTypeError(f"len is not well defined for symbolic Tensors ({self.name}); "
                               "use tf.shape(t)[0] or t.get_shape()[0]")

    __hash__ = object.__hash__
    # Operator overloads (+, *, @, <, [] ...) are installed by ops/math_ops.py.


class Operation:
    """A node of the graph."""

    def __init__(self, graph: "Graph", op_type: str, name: str, inputs: list,
                 attrs: dict, control_inputs: list, device: str | None):
        self._graph = graph
        self.type = op_type
        self.name = name
        self._inputs = list(inputs)
        self._attrs = dict(attrs)
        self._control_inputs = list(control_inputs)
        self.device = device or ""
        self.outputs: list[Tensor] = []
        self._id = next(graph._ids)

    graph = property(lambda self: self._graph)
    inputs = property(lambda self: tuple(self._inputs))
    control_inputs = property(lambda self: list(self._control_inputs))
    node_def = property(lambda self: self)  # TF code reads op.node_def.name / .op / .attr
    op = property(lambda self: self.type)
    attr = property(lambda self: self._attrs)

    def get_attr(self, name: str):
        if name not in self._attrs:
            raise InvalidArgumentError(f"Operation '{self.name}' ({self.type}) has no attr "
                                       f"named '{name}'")
        return self._attrs[name]

    def _set_attr(self, name: str, value) -> None:
        self._attrs[name] = value

    def values(self) -> tuple:
        return tuple(self.outputs)

    def _add_control_input(self, op: "Operation") -> None:
        if op not in self._control_inputs:
            self._control_inputs.append(op)

    def run(self, feed_dict=None, session=None) -> None:
        from xlapy.compat.v1.session import _session_for
        _session_for(session, self.graph).run(self, feed_dict)

    def __repr__(self):
        ins = ", ".join(t.name for t in self._inputs)
        ctl = "".join(f", ^{c.name}" for c in self._control_inputs)
        return f"<tf.Operation '{self.name}' type={self.type} ({ins}{ctl})>"

    __hash__ = object.__hash__


class Graph:
    def __init__(self):
        self._ops: list[Operation] = []
        self._by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._ids = itertools.count()
        self._name_stack = ""
        self._device_stack: list = []   # device names, None, or device functions
        self._control_stack: list[list[Operation] | None] = []
        self._attr_stack: list[dict] = []
        self._gradient_overrides: list[dict] = []   # gradient_override_map blocks
        self._collections: dict[str, list] = {}
        self._finalized = False
        self.seed = None

    # ---- ops -------------------------------------------------------------------------------
    def create_op(self, op_type: str, inputs: list, attrs: dict | None = None,
                  name: str | None = None) -> Operation:
        from xlapy.compat.v1.op_registry import get_op_def
        if self._finalized:
            raise InvalidArgumentError("Graph is finalized and cannot be modified.")
        op_def = get_op_def(op_type)
        for t in inputs:
            if not isinstance(t, Tensor):
                raise InvalidTypeError(f"inputs of {op_type} must be Tensors, got {t!r}")
            if t.graph is not self:
                raise InvalidArgumentError(f"Tensor {t.name} must be from the same graph as "
                                           f"the new {op_type} op")
        if name and name.endswith("/"):
            name = name[:-1]  # an absolute name: a scope name already made unique
            if name in self._by_name:
                raise InvalidArgumentError(f"Duplicate node name in graph: '{name}'")
            self._names_in_use.setdefault(name, 1)
        else:
            name = self.unique_name(name or op_type)
        full_attrs = {}
        for scope in self._attr_stack:
            full_attrs.update(scope)
        full_attrs.update(attrs or {})
        for overrides in reversed(self._gradient_overrides):
            if op_type in overrides:
                full_attrs["_gradient_op_type"] = overrides[op_type]
                break
        device = self._current_device()
        op = Operation(self, op_type, name, inputs, full_attrs, self._current_control(inputs),
                       None if callable(device) else device)
        if callable(device):  # a device function decides, seeing the op
            chosen = device(op)
            op.device = canonical_device(_device_text(chosen)) if chosen else None
        decide = op._attrs.pop("_XlaCompileFn", None)  # jit_scope(compile_ops=callable)
        if decide is not None:
            op._attrs["_XlaCompile"] = bool(decide(op))
        specs = op_def.infer(op)
        op.outputs = [Tensor(op, i, d, s) for i, (d, s) in enumerate(specs)]
        self._ops.append(op)
        self._by_name[name] = op
        for t in inputs:
            t._consumers.append(op)
        return op

    def get_operations(self) -> list:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        if name not in self._by_name:
            raise NotFoundError(f"The name '{name}' refers to an Operation not in the graph.")
        return self._by_name[name]

    def get_tensor_by_name(self, name: str) -> Tensor:
        if not isinstance(name, str) or ":" not in name:
            raise InvalidArgumentError(f"The name '{name}' looks like an Operation name, not a "
                                       "Tensor name (Tensor names look like '<op_name>:<n>')")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor: bool = True, allow_operation: bool = True):
        """The Tensor or Operation that `obj` (an object of this graph or a name) denotes."""
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            m = re.fullmatch(r"(.+):(\d+)", obj)
            if m and allow_tensor:
                op_name, idx = m.group(1), int(m.group(2))
                op = self._by_name.get(op_name)
                if op is None:
                    raise NotFoundError(f"The name '{obj}' refers to a Tensor which does not "
                                        f"exist. The operation, '{op_name}', does not exist "
                                        "in the graph.")
                if idx >= len(op.outputs):
                    raise NotFoundError(f"The name '{obj}' refers to a Tensor which does not "
                                        f"exist. The operation, '{op_name}', exists but only "
                                        f"has {len(op.outputs)} outputs.")
                return op.outputs[idx]
            if allow_operation and obj in self._by_name:
                return self._by_name[obj]
            if obj in self._by_name and allow_tensor and not allow_operation:
                raise InvalidArgumentError(f"The name '{obj}' appears to refer to an "
                                           f"Operation, not a Tensor; try '{obj}:0'.")
            raise NotFoundError(f"The name '{obj}' refers to nothing in the graph.")
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise InvalidArgumentError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise InvalidArgumentError(f"Operation {obj} is not an element of this graph.")
            return obj
        types = "/".join(n for n, ok in (("Tensor", allow_tensor),
                                          ("Operation", allow_operation)) if ok)
        raise InvalidTypeError(f"Can not convert a {type(obj).__name__} into a {types}.")

    def as_graph_def(self, from_version=None, add_shapes=False):
        """The graph as TF's GraphDef protobuf message (graph_def.py)."""
        from xlapy.compat.v1.graph_def import graph_def
        return graph_def(self, add_shapes)

    @property
    def graph_def_versions(self):
        from xlapy.compat.v1.graph_def import PRODUCER, VersionDef
        return VersionDef(producer=PRODUCER)

    @property
    def version(self) -> int:
        return len(self._ops)

    def finalize(self) -> None:
        self._finalized = True

    finalized = property(lambda self: self._finalized)

    # ---- names -----------------------------------------------------------------------------
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        if self._name_stack:
            name = self._name_stack + "/" + name
        i = self._names_in_use.get(name, 0)
        if mark_as_used:
            self._names_in_use[name] = i + 1
        if i > 0:
            base = name
            while name in self._names_in_use:
                name = f"{base}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[name] = 1
        return name

    @contextlib.contextmanager
    def name_scope(self, name):
        old = self._name_stack
        if name is None or name == "":
            new = ""
        elif name.endswith("/"):
            new = name[:-1]  # an absolute scope, as returned by an earlier name_scope
        else:
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield (new + "/") if new else ""
        finally:
            self._name_stack = old

    def get_name_scope(self) -> str:
        return self._name_stack

    # ---- devices, control dependencies, attribute scopes -----------------------------------
    @contextlib.contextmanager
    def device(self, device_name):
        """Ops made inside go on `device_name`; a function (tf.train.replica_device_setter's)
        is called with each new op and returns its device (a string, a DeviceSpec or None)."""
        if callable(device_name):
            self._device_stack.append(device_name)
        else:
            self._device_stack.append(canonical_device(_device_text(device_name))
                                      if device_name else None)
        try:
            yield
        finally:
            self._device_stack.pop()

    def _current_device(self) -> str | None:
        return self._device_stack[-1] if self._device_stack else None

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        if control_inputs is None:
            self._control_stack.append(None)  # clears outer control dependencies
        else:
            ops = []
            for c in control_inputs:
                el = self.as_graph_element(c)
                ops.append(el.op if isinstance(el, Tensor) else el)
            self._control_stack.append(ops)
        try:
            yield
        finally:
            self._control_stack.pop()

    def _current_control(self, inputs) -> list:
        out: list[Operation] = []
        for frame in reversed(self._control_stack):
            if frame is None:
                break
            out.extend(c for c in frame if c not in out)
        input_ops = {t.op for t in inputs}
        return [c for c in out if c not in input_ops]

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map: dict):
        """Ops made inside whose type is a key of op_type_map take their gradient from the
        function tf.RegisterGradient registered under the mapped name."""
        if not isinstance(op_type_map, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in op_type_map.items()):
            raise InvalidTypeError("op_type_map must be a dictionary mapping strings to "
                                   "strings")
        self._gradient_overrides.append(dict(op_type_map))
        try:
            yield
        finally:
            self._gradient_overrides.pop()

    @contextlib.contextmanager
    def _attr_scope(self, attrs: dict):
        self._attr_stack.append(dict(attrs))
        try:
            yield
        finally:
            self._attr_stack.pop()

    # ---- collections -----------------------------------------------------------------------
    def add_to_collection(self, name: str, value) -> None:
        self._collections.setdefault(name, []).append(value)

    def get_collection(self, name: str, scope: str | None = None) -> list:
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        return [v for v in items if getattr(v, "name", "").startswith(scope)]

    def get_collection_ref(self, name: str) -> list:
        return self._collections.setdefault(name, [])

    def get_all_collection_keys(self) -> list:
        return list(self._collections)

    @contextlib.contextmanager
    def as_default(self):
        _default_graph_stack.append(self)
        try:
            yield self
        finally:  # the innermost entry: a graph may be on the stack more than once
            del _default_graph_stack[len(_default_graph_stack) - 1 -
                                     _default_graph_stack[::-1].index(self)]

    def __repr__(self):
        return f"<xlapy.compat.v1.Graph with {len(self._ops)} ops>"


# ---- the default graph ---------------------------------------------------------------------

_default_graph_stack: list[Graph] = []
_global_graph = [Graph()]


def get_default_graph() -> Graph:
    return _default_graph_stack[-1] if _default_graph_stack else _global_graph[0]


def reset_default_graph() -> None:
    if _default_graph_stack:
        raise InvalidArgumentError("Do not use tf.reset_default_graph() inside a "
                                   "`with graph.as_default():` block")
    _global_graph[0] = Graph()
    from xlapy.compat.v1 import session
    session._default_session_stack.clear()


def name_scope(name, default_name=None, values=None):
    graph = _graph_of(values) if values else get_default_graph()
    return graph.name_scope(name if name is not None else default_name)


def device(device_name):
    return get_default_graph().device(device_name)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def get_collection(name, scope=None):
    return get_default_graph().get_collection(name, scope)


def _graph_of(values) -> Graph:
    for v in values or ():
        if isinstance(v, (Tensor, Operation)):
            return v.graph
        if hasattr(v, "graph") and isinstance(v.graph, Graph):
            return v.graph
    return get_default_graph()


_DEVICE_RE = re.compile(r"(?:/job:[^/]*)?(?:/replica:\d+)?(?:/task:\d+)?"
                        r"(?:/(?:device:)?([A-Za-z_]+):(\d+|\*))?$")


def _device_text(spec) -> str:
    """A device string, or a tf.DeviceSpec's."""
    return spec.to_string() if hasattr(spec, "to_string") else str(spec)


def canonical_device(spec: str) -> str | None:
    """'/cpu:0', '/device:XLA_CPU:0', '/job:localhost/.../device:CPU:0' -> full TF name.
    A spec that names only a job, replica or task ('/job:ps/task:0', as
    tf.train.replica_device_setter places variables) -> None: this runtime runs every job
    in one process, so the op is placed as one without a device."""
    m = _DEVICE_RE.fullmatch(spec.strip())
    if m and not m.group(1) and spec.strip():
        return None
    if not m or not m.group(1):
        raise InvalidArgumentError(f"Could not parse device specification '{spec}'; expected "
                                   "e.g. '/device:CPU:0' or '/device:XLA_CPU:0'")
    kind = m.group(1).upper()
    if kind not in ("CPU", "XLA_CPU", "GPU", "XLA_GPU"):
        raise InvalidArgumentError(f"Unknown device type '{m.group(1)}' in '{spec}': this "
                                   "runtime has /device:CPU:0 and /device:XLA_CPU:0 (and "
                                   "/device:XLA_GPU:0 with a GPU)")
    return f"/job:localhost/replica:0/task:0/device:{kind}:{m.group(2).replace('*', '0')}"


def is_xla_device(device: str) -> bool:
    return "XLA_" in (device or "")


def is_gpu_device(device: str) -> bool:
    return "GPU:" in (device or "")


def gpu_present() -> bool:
    """Whether xlapy's gpu backend has a GPU here (then /device:XLA_GPU:0 exists)."""
    import importlib.util
    if importlib.util.find_spec("cuda") is None:
        # no cuda-python, so no GPU: answered without importing the gpu backend, whose
        # compiler's modules took 0.19 s CPU of the first XLA step of a CPU-only process
        return False
    from xlapy.backends.gpu.runtime.cuda import gpu_available  # loads cuda-python lazily
    return gpu_available()


# ---- conversion ----------------------------------------------------------------------------

# the conversions tf.register_tensor_conversion_function added (framework_more.py installs
# the function that tries them: value, dtype, name, preferred_dtype -> Tensor or None)
_registered_conversion: list = []


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None) -> Tensor:
    """A Tensor for `value`: a Tensor (checked against dtype), a Variable (its value), a
    nested list containing Tensors (stacked), or a Python/NumPy value (a Const op)."""
    if hasattr(value, "_to_tensor"):
        value = value._to_tensor()
    if getattr(value, "_is_sparse_tensor", False):
        raise InvalidTypeError(f"Failed to convert object of type {type(value)} to Tensor. "
                               f"Contents: {value}. Consider casting elements to a supported "
                               "type.")
    if isinstance(value, Tensor):
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
            raise InvalidTypeError(f"Tensor conversion requested dtype "
                                   f"{dtypes.as_dtype(dtype).name} for Tensor with dtype "
                                   f"{value.dtype.name}: {value!r}")
        return value
    if _registered_conversion and not isinstance(value, Operation):
        converted = _registered_conversion[0](value, dtype, name, preferred_dtype)
        if converted is not None:
            return converted
    if isinstance(value, Operation):
        raise InvalidTypeError(f"Can't convert Operation '{value.name}' to Tensor (it has no "
                               "outputs to convert)")
    if isinstance(value, (list, tuple)) and _contains_tensor(value):
        from xlapy.compat.v1.ops.array_ops import stack
        return stack([convert_to_tensor(v, dtype) for v in value], name=name or "packed")
    if dtype is None and preferred_dtype is not None:
        try:
            return constant_op(value, preferred_dtype, name=name)
        except InvalidArgumentError:
            pass
    return constant_op(value, dtype, name=name)


def _contains_tensor(value) -> bool:
    for v in value:
        if isinstance(v, Tensor) or hasattr(v, "_to_tensor"):
            return True
        if isinstance(v, (list, tuple)) and _contains_tensor(v):
            return True
    return False


def constant_op(value, dtype=None, shape=None, name=None) -> Tensor:
    arr = as_numpy_value(value, dtype)
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        if arr.ndim == 0 or arr.size == 1:
            arr = np.full(shape, arr.reshape(()), dtype=arr.dtype)
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise InvalidArgumentError(f"Too many elements provided. Needed at most "
                                       f"{int(np.prod(shape))}, but received {arr.size}")
    g = get_default_graph()
    op = g.create_op("Const", [], {"value": arr, "dtype": dtypes.as_dtype(arr.dtype)},
                     name=name or "Const")
    return op.outputs[0]


def as_numpy_value(value, dtype=None) -> np.ndarray:
    """`value` as the NumPy array TF would store for it, refusing lossy conversions."""
    if isinstance(value, (Tensor, Operation)):
        raise InvalidTypeError(f"expected a constant value, got {value!r}")
    target = dtypes.as_dtype(dtype) if dtype is not None else dtypes.dtype_of_value(value)
    if target == dtypes.string:
        return _string_array(value)
    try:
        src = np.asarray(value)
    except (ValueError, TypeError) as e:
        raise InvalidTypeError(f"cannot convert {value!r} to a tensor: {e}") from None
    src_float = src.dtype.kind == "f" or src.dtype == dtypes.bfloat16.np  # ml_dtypes: kind V
    if src.dtype == object or src.dtype.kind in "USV" and not src_float:
        raise InvalidTypeError(f"cannot convert {value!r} to a {target.name} tensor")
    arr = src.astype(target.np, copy=False)
    if src_float and target.is_integer and not np.array_equal(arr, src):
        raise InvalidTypeError(f"Expected {target.name}, got {value!r} of type "
                               f"'{type(value).__name__}' instead.")
    if (src.dtype.kind in "iu" or src_float) and target.is_bool:
        raise InvalidTypeError(f"Expected bool, got {value!r} instead.")
    return arr


def _string_array(value) -> np.ndarray:
    """A tf.string value: an object array of bytes (str is encoded as UTF-8)."""
    src = np.asarray(value, dtype=object)
    out = np.empty(src.shape, dtype=object)
    for i, v in np.ndenumerate(src):
        if isinstance(v, str):
            v = v.encode("utf-8")
        if not isinstance(v, bytes):
            raise InvalidTypeError(f"cannot convert {value!r} to a string tensor: element "
                                   f"{v!r} is not str or bytes")
        out[i] = v
    return out
