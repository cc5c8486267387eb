"""tf.Variable, initializers, tf.get_variable and variable scopes.

A Variable is the ops TF 1.x creates for it:
    Variable               VariableV2 (the storage reference)
    Variable/initial_value the initial value's ops
    Variable/Assign        the initializer
    Variable/read          Identity: the value other ops read (var.value())
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import (GraphKeys, Tensor, convert_to_tensor, get_default_graph)
from xlapy.compat.v1.ops._common import make, make_op, tensor
from xlapy.compat.v1.tensor_shape import TensorShape, as_shape


# Variable()'s parameters in order: a positional argument of tf.Variable(...) is passed to
# the creators of tf.variable_creator_scope under its name
_VARIABLE_ARGS = ("initial_value", "trainable", "collections", "validate_shape",
                  "caching_device", "name", "variable_def", "dtype", "expected_shape",
                  "import_scope", "constraint", "use_resource", "synchronization",
                  "aggregation")


def _variable_creators(graph) -> list:
    """The creator functions of the variable_creator_scope blocks open on `graph` (its
    outermost graph), outermost first."""
    from xlapy.compat.v1.ops.functional import root_graph  # (functional imports this module)
    graph = root_graph(graph)
    if not hasattr(graph, "_xlapy_variable_creators"):
        graph._xlapy_variable_creators = []
    return graph._xlapy_variable_creators


class _VariableMeta(type):
    """tf.Variable(...) inside tf.variable_creator_scope(creator) calls
    creator(next_creator, **kwargs) (the innermost scope's first); the last next_creator
    builds the Variable from the keyword arguments it is given."""

    def __call__(cls, *args, **kwargs):
        creators = _variable_creators(get_default_graph()) if cls is Variable else ()
        if not creators:
            return super().__call__(*args, **kwargs)
        if len(args) > len(_VARIABLE_ARGS):
            raise TypeError(f"Variable() takes at most {len(_VARIABLE_ARGS)} positional "
                            f"arguments ({len(args)} given)")
        for key, arg in zip(_VARIABLE_ARGS, args):
            if key in kwargs:
                raise TypeError(f"Variable() got multiple values for argument '{key}'")
            kwargs[key] = arg

        def create(**kw):
            return type.__call__(cls, **kw)
        for creator in list(creators):
            create = functools.partial(creator, create)
        return create(**kwargs)


class Variable(metaclass=_VariableMeta):
    def __init__(self, initial_value=None, trainable=True, collections=None,
                 validate_shape=True, caching_device=None, name=None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, synchronization=None, aggregation=None):
        if initial_value is None:
            raise InvalidArgumentError("initial_value must be specified.")
        from xlapy.compat.v1.ops.functional import in_root_graph
        # a variable made inside a loop body lives outside it; its initializer ignores the
        # control dependencies around it (TF's init_scope): an optimizer's slots created
        # under `with control_dependencies(UPDATE_OPS)` must not need the batch's feeds
        with in_root_graph(), get_default_graph().control_dependencies(None):
            self._init(initial_value, trainable, collections, validate_shape, name, dtype,
                       constraint)

    def _init(self, initial_value, trainable, collections, validate_shape, name, dtype,
              constraint):
        graph = get_default_graph()
        with graph.name_scope(name or "Variable") as scope:
            with graph.name_scope("initial_value"):
                init = initial_value() if callable(initial_value) else initial_value
                init = convert_to_tensor(init, dtype=dtype)
            shape = init.shape if validate_shape else TensorShape(None)
            if validate_shape and not shape.is_fully_defined():
                raise InvalidArgumentError(f"initial_value must have a shape specified: {init}")
            with graph.control_dependencies(None):
                self._variable = make("VariableV2", [], {"shape": shape, "dtype": init.dtype,
                                                         "container": "", "shared_name": ""},
                                      name=scope)
            self._initial_value = init
            self._initializer_op = make_op("Assign", [self._variable, init],
                                           {"validate_shape": validate_shape,
                                            "use_locking": True}, name="Assign")
            with graph.control_dependencies(None):
                self._snapshot = make("Identity", [self._variable], name="read")
        self._trainable = trainable
        self._constraint = constraint
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections = list(collections) + [GraphKeys.TRAINABLE_VARIABLES]
        for c in collections:
            graph.add_to_collection(c, self)

    @classmethod
    def _from_variable_def(cls, graph, vd, prefix: str = "") -> "Variable":
        """The Variable of an imported graph's ops named by a VariableDef (MetaGraphDef)."""
        v = cls.__new__(cls)
        v._variable = graph.get_tensor_by_name(prefix + vd.variable_name)
        v._initializer_op = graph.get_operation_by_name(prefix + vd.initializer_name)
        v._snapshot = graph.get_tensor_by_name(prefix + vd.snapshot_name)
        v._initial_value = graph.get_tensor_by_name(prefix + vd.initial_value_name) \
            if vd.initial_value_name else v._initializer_op.inputs[1]
        v._trainable = vd.trainable
        v._constraint = None
        return v

    # ---- the Variable interface --------------------------------------------------------------
    name = property(lambda self: self._variable.name)
    op = property(lambda self: self._variable.op)
    dtype = property(lambda self: self._variable.dtype)
    graph = property(lambda self: self._variable.graph)
    device = property(lambda self: self._variable.device)
    shape = property(lambda self: self._variable.shape)
    initializer = property(lambda self: self._initializer_op)
    initial_value = property(lambda self: self._initial_value)
    trainable = property(lambda self: self._trainable)

    def get_shape(self) -> TensorShape:
        return self.shape

    def value(self) -> Tensor:
        return self._snapshot

    def read_value(self) -> Tensor:
        return make("Identity", [self._variable], name="read")

    def initialized_value(self) -> Tensor:
        from xlapy.compat.v1.ops.array_ops import identity
        with get_default_graph().control_dependencies([self._initializer_op]):
            return identity(self._variable)

    def _ref(self) -> Tensor:
        return self._variable

    def _to_tensor(self) -> Tensor:
        return self._snapshot

    def _as_graph_element(self) -> Tensor:
        return self._variable

    def assign(self, value, use_locking=False, name=None, read_value=True):
        v = tensor(value, dtype=self.dtype)
        return make("Assign", [self._variable, v], {"validate_shape": True,
                                                    "use_locking": use_locking}, name=name)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return make("AssignAdd", [self._variable, tensor(delta, dtype=self.dtype)], name=name)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return make("AssignSub", [self._variable, tensor(delta, dtype=self.dtype)], name=name)

    def eval(self, session=None):
        from xlapy.compat.v1.session import _session_for
        return _session_for(session, self.graph).run(self._variable)

    def load(self, value, session=None):
        from xlapy.compat.v1.session import _session_for
        _session_for(session, self.graph)._load_variable(self, value)

    def __repr__(self):
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    __hash__ = object.__hash__


def _delegate(name):
    def f(self, *args):
        return getattr(self._snapshot, name)(*args)
    return f


for _n in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv",
           "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul", "rmatmul", "neg", "abs", "lt",
           "le", "gt", "ge", "getitem", "and", "or", "invert"):
    setattr(Variable, f"__{_n}__", _delegate(f"__{_n}__"))


def global_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def trainable_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    from xlapy.compat.v1.ops.array_ops import group, no_op
    if not var_list:
        return no_op(name=name)
    return group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer():
    return variables_initializer(global_variables(), name="init")


def local_variables_initializer():
    return variables_initializer(local_variables(), name="init_1")


initialize_all_variables = global_variables_initializer
all_variables = global_variables


# ---- initializers ---------------------------------------------------------------------------

class Initializer:
    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError


class zeros_initializer(Initializer):
    def __call__(self, shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.ops.array_ops import zeros
        return zeros(shape, dtype or self.dtype)


class ones_initializer(Initializer):
    def __call__(self, shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.ops.array_ops import ones
        return ones(shape, dtype or self.dtype)


class constant_initializer(Initializer):
    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        super().__init__(dtype)
        self.value = value

    def __call__(self, shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.framework import constant_op
        return constant_op(self.value, dtype or self.dtype, shape=as_shape(shape).as_list())


class random_normal_initializer(Initializer):
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.ops.random_ops import random_normal
        return random_normal(as_shape(shape).as_list(), self.mean, self.stddev,
                             dtype or self.dtype, self.seed)


class truncated_normal_initializer(random_normal_initializer):
    def __call__(self, shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.ops.random_ops import truncated_normal
        return truncated_normal(as_shape(shape).as_list(), self.mean, self.stddev,
                                dtype or self.dtype, self.seed)


class random_uniform_initializer(Initializer):
    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.ops.random_ops import random_uniform
        return random_uniform(as_shape(shape).as_list(), self.minval, self.maxval,
                              dtype or self.dtype, self.seed)


class glorot_uniform_initializer(Initializer):
    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.seed = seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.ops.random_ops import random_uniform
        dims = as_shape(shape).as_list()
        fan_in = dims[-2] if len(dims) > 1 else (dims[0] if dims else 1)
        fan_out = dims[-1] if dims else 1
        rf = int(np.prod(dims[:-2])) if len(dims) > 2 else 1
        limit = math.sqrt(6.0 / max(1.0, (fan_in + fan_out) * rf))
        return random_uniform(dims, -limit, limit, dtype or self.dtype, self.seed)


# ---- get_variable and variable scopes -------------------------------------------------------

class VariableScope:
    def __init__(self, name: str, reuse=False, initializer=None, partitioner=None):
        self.name = name
        self.reuse = reuse
        self.initializer = initializer
        self.partitioner = partitioner
        self.original_name_scope = name + "/" if name else ""

    def reuse_variables(self):
        self.reuse = True

    def set_partitioner(self, partitioner):
        self.partitioner = partitioner


_scope_stack: list[VariableScope] = []
AUTO_REUSE = "AUTO_REUSE"


def get_variable_scope() -> VariableScope:
    return _scope_stack[-1] if _scope_stack else VariableScope("")


@contextlib.contextmanager
def variable_scope(name_or_scope=None, default_name=None, values=None, initializer=None,
                   reuse=None, **kwargs):
    outer = get_variable_scope()
    used = _scopes_used(get_default_graph())
    if isinstance(name_or_scope, VariableScope):
        name = name_or_scope.name
    elif name_or_scope is not None:
        name = f"{outer.name}/{name_or_scope}" if outer.name else name_or_scope
    else:  # default_name is made unique: dense, dense_1, ... (as TF's layers get)
        if default_name is None:
            raise InvalidArgumentError("variable_scope needs name_or_scope or default_name")
        base = f"{outer.name}/{default_name}" if outer.name else default_name
        name, i = base, 1
        while name in used:
            name = f"{base}_{i}"
            i += 1
    used.add(name)
    scope = VariableScope(name, reuse=(reuse if reuse is not None else outer.reuse),
                          initializer=initializer or outer.initializer,
                          partitioner=kwargs.get("partitioner") or getattr(
                              name_or_scope, "partitioner", None) or outer.partitioner)
    _scope_stack.append(scope)
    graph = get_default_graph()
    saved = set(used) if isinstance(name_or_scope, VariableScope) else None
    try:
        short = name.rsplit("/", 1)[-1]
        with graph.name_scope(short):
            yield scope
    finally:
        _scope_stack.pop()
        # leaving a scope forgets the default names used inside it (TF's
        # close_variable_subscopes): re-entering variable_scope("D", reuse=True) makes its
        # unnamed layers conv2d, conv2d_1 ... again, the variables of the first entry (the
        # GAN discriminator idiom); re-entering a VariableScope object restores the counts
        if saved is not None:
            used.clear()
            used.update(saved)
        else:
            used.difference_update([u for u in used if u.startswith(name + "/")])


def _scopes_used(graph) -> set:
    from xlapy.compat.v1.ops.functional import root_graph
    graph = root_graph(graph)
    if not hasattr(graph, "_xlapy_scopes_used"):
        graph._xlapy_scopes_used = set()
    return graph._xlapy_scopes_used


def _vars_by_name(graph) -> dict:
    if not hasattr(graph, "_xlapy_var_store"):
        graph._xlapy_var_store = {}
    return graph._xlapy_var_store


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=True, collections=None, **kwargs):
    from xlapy.compat.v1.ops.functional import in_root_graph
    with in_root_graph():  # variables of a loop body's cell live in the outermost graph
        graph = get_default_graph()
        partitioner = kwargs.get("partitioner") or get_variable_scope().partitioner
        if partitioner is not None or getattr(graph, "_xlapy_partitioned", None):
            # (partitioned_variables builds its parts with this module's _get_variable)
            from xlapy.compat.v1 import partitioned_variables
            got = partitioned_variables.get_partitioned(
                name, shape, dtype, initializer, regularizer, trainable, collections,
                partitioner)
            if got is not None:
                return got
        known = len(_vars_by_name(graph))
        v = _get_variable(name, shape, dtype, initializer, trainable, collections)
        if regularizer is not None and len(_vars_by_name(graph)) > known:  # created now
            with graph.name_scope(name + "/Regularizer"):
                loss = regularizer(v)
            if loss is not None:
                graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return v


def _get_variable(name, shape, dtype, initializer, trainable, collections):
    scope = get_variable_scope()
    full = f"{scope.name}/{name}" if scope.name else name
    graph = get_default_graph()
    store = _vars_by_name(graph)
    if full in store:
        if not scope.reuse:
            raise InvalidArgumentError(f"Variable {full} already exists, disallowed. Did you "
                                       "mean to set reuse=True or reuse=tf.AUTO_REUSE in "
                                       "VarScope?")
        return store[full]
    if scope.reuse is True:
        raise InvalidArgumentError(f"Variable {full} does not exist, or was not created with "
                                   "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE "
                                   "in VarScope?")
    dtype = dtypes.as_dtype(dtype or dtypes.float32)
    # (an initializer may be a value: a NumPy array has no truth value)
    init = initializer if initializer is not None else (
        scope.initializer or glorot_uniform_initializer())
    if isinstance(init, type):
        init = init()
    if callable(init):
        if shape is None:
            raise InvalidArgumentError(f"Shape of a new variable ({full}) must be fully defined")
        value = lambda: init(as_shape(shape).as_list(), dtype)
    else:
        value = init
    # create the ops at the root of the variable scope, as TF names them: scope/name
    with graph.name_scope(scope.original_name_scope or None):
        v = Variable(value, trainable=trainable, collections=collections, name=name,
                     dtype=dtype if not isinstance(init, Tensor) else None)
    store[full] = v
    return v
