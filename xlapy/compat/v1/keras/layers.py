"""tf.keras.layers (TF 1.x graph mode): Keras' constructors (input_shape, string activations,
pooling strides defaulting to the pool size) over tf.layers' classes, which make the
variables and ops; Input makes the model's placeholder."""

from __future__ import annotations

from xlapy.compat.v1 import layers as _tl
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.keras import activations


def Input(shape=None, batch_size=None, name=None, dtype=None, tensor=None, **kwargs):
    """A placeholder of shape [batch_size] + shape (the model's input)."""
    from xlapy.compat.v1 import dtypes
    from xlapy.compat.v1.ops.array_ops import placeholder
    if tensor is not None:
        return tensor
    if shape is None:
        raise InvalidArgumentError("Input needs shape= (the shape of one example)")
    return placeholder(dtypes.as_dtype(dtype or "float32"), [batch_size] + list(shape),
                       name=name or "input")


class _Keras:
    """What every Keras layer adds: input_shape / input_dim / batch_input_shape for the
    first layer of a Sequential model."""

    def _keras_input(self, kwargs):
        shape = kwargs.pop("input_shape", None)
        dim = kwargs.pop("input_dim", None)
        batch = kwargs.pop("batch_input_shape", None)
        if dim is not None and shape is None:
            shape = (dim,)
        self._batch_input_shape = tuple(batch) if batch is not None else (
            None if shape is None else (None,) + tuple(shape))
        for k in ("kernel_constraint", "bias_constraint", "activity_regularizer"):
            kwargs.pop(k, None)
        return kwargs


class Dense(_Keras, _tl.Dense):
    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(units, activation=activations.get(activation), use_bias=use_bias,
                         kernel_initializer=_initializer(kernel_initializer),
                         bias_initializer=_initializer(bias_initializer), **kwargs)


class Conv2D(_Keras, _tl.Conv2D):
    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(filters, kernel_size, strides, padding,
                         data_format or "channels_last", dilation_rate,
                         activations.get(activation), use_bias,
                         _initializer(kernel_initializer), _initializer(bias_initializer),
                         **kwargs)


class MaxPooling2D(_Keras, _tl.MaxPooling2D):
    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(pool_size, strides if strides is not None else pool_size, padding,
                         data_format or "channels_last", **kwargs)


class AveragePooling2D(_Keras, _tl.AveragePooling2D):
    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(pool_size, strides if strides is not None else pool_size, padding,
                         data_format or "channels_last", **kwargs)


MaxPool2D, AvgPool2D = MaxPooling2D, AveragePooling2D


class Flatten(_Keras, _tl.Flatten):
    def __init__(self, data_format=None, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(data_format=data_format, **kwargs)


class Dropout(_Keras, _tl.Dropout):
    """Drops with probability rate while training (fit feeds the learning phase)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(rate, noise_shape=noise_shape, seed=seed, **kwargs)

    def __call__(self, inputs, training=None, **kwargs):
        from xlapy.compat.v1.keras.backend import learning_phase
        return super().__call__(inputs, training=learning_phase() if training is None
                                else training, **kwargs)


class BatchNormalization(_Keras, _tl.BatchNormalization):
    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(axis, momentum, epsilon, center, scale, **kwargs)

    def __call__(self, inputs, training=None, **kwargs):
        from xlapy.compat.v1.keras.backend import learning_phase
        return super().__call__(inputs, training=learning_phase() if training is None
                                else training, **kwargs)


class Activation(_Keras, _tl.Layer):
    def __init__(self, activation, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return inputs if self.activation is None else self.activation(inputs)


class Reshape(_Keras, _tl.Layer):
    def __init__(self, target_shape, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def call(self, inputs):
        from xlapy.compat.v1.ops.array_ops import reshape
        return reshape(inputs, [-1] + list(self.target_shape))


def _initializer(v):
    if v is None or callable(v) and not isinstance(v, str):
        return v
    from xlapy.compat.v1 import init_ops, variables
    table = {"glorot_uniform": lambda: variables.glorot_uniform_initializer(),
             "glorot_normal": lambda: init_ops.glorot_normal_initializer(),
             "zeros": lambda: variables.zeros_initializer(),
             "ones": lambda: variables.ones_initializer(),
             "he_normal": lambda: init_ops.variance_scaling_initializer(
                 2.0, "fan_in", "truncated_normal"),
             "he_uniform": lambda: init_ops.variance_scaling_initializer(
                 2.0, "fan_in", "uniform")}
    if v not in table:
        raise InvalidArgumentError(f"Unknown initializer: {v!r} (known: "
                                   f"{', '.join(sorted(table))})")
    return table[v]()
