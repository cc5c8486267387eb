"""The tf.layers Layer: variables created on the first call under a variable scope named
after the layer ("dense", then "dense_1", ... unless a name is given; reuse=True with a
name shares an earlier layer's variables), as TF 1.x's layers do."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import GraphKeys, convert_to_tensor, get_default_graph
from xlapy.compat.v1.layers.input_spec import assert_input_compatibility
from xlapy.compat.v1.ops._common import snake_case
from xlapy.compat.v1.variables import VariableScope, get_variable, variable_scope


class Layer:
    def __init__(self, trainable=True, name=None, dtype=None, _reuse=None, **kwargs):
        self.trainable = trainable
        self._name = name
        self._reuse = _reuse
        self._dtype = dtype
        self._scope = None
        self.built = False
        self._trainable_weights: list = []
        self._non_trainable_weights: list = []
        self._updates: list = []
        self.input_spec = None  # an InputSpec (or a list of them) checked on each call

    name = property(lambda self: self._scope.rsplit("/", 1)[-1] if self._scope else
                    (self._name or snake_case(type(self).__name__)))
    trainable_weights = trainable_variables = property(lambda self: list(
        self._trainable_weights) if self.trainable else [])
    non_trainable_weights = non_trainable_variables = property(lambda self: list(
        self._non_trainable_weights) + ([] if self.trainable else
                                        list(self._trainable_weights)))
    weights = variables = property(lambda self: self._trainable_weights +
                                   self._non_trainable_weights)
    updates = property(lambda self: list(self._updates))

    def build(self, input_shape):
        pass

    def call(self, inputs, **kwargs):
        raise NotImplementedError

    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None,
                   trainable=True, constraint=None, collections=None):
        known = len(get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES))
        v = get_variable(name, shape, dtype=dtype or self._dtype, initializer=initializer,
                         trainable=trainable and self.trainable, collections=collections)
        created = len(get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES)) > known
        (self._trainable_weights if trainable else self._non_trainable_weights).append(v)
        if regularizer is not None and created:  # a reused variable's loss exists already
            with get_default_graph().name_scope(name + "/Regularizer"):
                loss = regularizer(v)
            if loss is not None:
                get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return v

    def add_update(self, op):
        self._updates.append(op)
        get_default_graph().add_to_collection(GraphKeys.UPDATE_OPS, op)

    def __call__(self, inputs, *args, **kwargs):
        if isinstance(inputs, (list, tuple)):
            inputs = [convert_to_tensor(x) for x in inputs]
            shape_ = [x.shape for x in inputs]
        else:
            inputs = convert_to_tensor(inputs)
            shape_ = inputs.shape
            if self._dtype is None:
                self._dtype = inputs.dtype
        assert_input_compatibility(self.input_spec, inputs, self.name)
        if self._scope is None:
            reuse = True if self._reuse else None
            if self._name is not None:
                cm = variable_scope(self._name, reuse=reuse)
            else:
                cm = variable_scope(None, default_name=snake_case(type(self).__name__))
            with cm as vs:
                self._scope = vs.name
                return self._build_and_call(inputs, shape_, args, kwargs)
        with variable_scope(VariableScope(self._scope, reuse=True)):
            return self._build_and_call(inputs, shape_, args, kwargs)

    def _build_and_call(self, inputs, shape_, args, kwargs):
        if not self.built:
            self.build(shape_)
            self.built = True
        return self.call(inputs, *args, **kwargs)

    def apply(self, inputs, *args, **kwargs):
        return self.__call__(inputs, *args, **kwargs)


def last_dim(shape_, what: str) -> int:
    d = shape_.dims[-1] if shape_.dims else None
    if d is None:
        raise InvalidArgumentError(f"The last dimension of the inputs to `{what}` should be "
                                   "defined. Found `None`.")
    return int(d)


def channels(shape_, data_format: str, what: str) -> int:
    axis = 1 if data_format == "channels_first" else -1
    d = shape_.dims[axis] if shape_.dims else None
    if d is None:
        raise InvalidArgumentError(f"The channel dimension of the inputs to `{what}` should be "
                                   "defined. Found `None`.")
    return int(d)


def normalize_tuple(value, n: int, name: str) -> tuple:
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise InvalidArgumentError(f"The `{name}` argument must be a tuple of {n} integers. "
                                   f"Received: {value}")
    return value


def data_format_tf(data_format: str, rank: int) -> str:
    if data_format not in ("channels_last", "channels_first"):
        raise InvalidArgumentError(f"The `data_format` argument must be one of "
                                   f"'channels_first', 'channels_last'. Received: "
                                   f"{data_format}")
    spatial = {3: "W", 4: "HW", 5: "DHW"}[rank]
    return "N" + spatial + "C" if data_format == "channels_last" else "NC" + spatial

