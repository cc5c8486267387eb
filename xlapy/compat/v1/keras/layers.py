"""tf.keras.layers (TF 1.x graph mode): Keras' constructors (input_shape, string activations,
pooling strides defaulting to the pool size) over tf.layers' classes, which make the
variables and ops; Input makes the model's placeholder. Recurrent, embedding and wrapper
layers are in keras/recurrent.py.

Masks (Embedding(mask_zero=True)) ride on the tensors as `_keras_mask`: layers that support
masking pass them on (or use them: the RNN layers, GlobalAveragePooling1D), the others raise
as Keras does."""

from __future__ import annotations

import numpy as np

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


_NESTING = [0]     # how many Keras layer calls are under way


class _Keras:
    """What every Keras layer adds: input_shape / input_dim / batch_input_shape for the
    first layer of a Sequential model, masks, get_weights / set_weights."""

    supports_masking = False

    def __call__(self, inputs, *args, **kwargs):
        masks = [getattr(x, "_keras_mask", None) for x in (
            inputs if isinstance(inputs, (list, tuple)) else [inputs])]
        mask = next((m for m in masks if m is not None), None)
        if mask is not None and not self.supports_masking:
            raise InvalidArgumentError(f"Layer {self.name} does not support masking, but was "
                                       f"passed an input_mask: {mask}")
        from xlapy.compat.v1.framework import GraphKeys, get_default_graph
        reg = get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES)
        known = len(reg)
        _NESTING[0] += 1
        try:
            out = super().__call__(inputs, *args, **kwargs)
        finally:
            _NESTING[0] -= 1
        self._keras_after_call(out, known)
        if getattr(self, "_initial_weights", None) is not None:   # (weights=[...])
            w, self._initial_weights = self._initial_weights, None
            self.set_weights(w)
        if mask is not None:
            self._keras_propagate_mask(inputs, out, mask)
        if _NESTING[0] == 0:    # (not the inner layer of a Bidirectional, ...)
            from xlapy.compat.v1.keras.backend import _record_call
            _record_call(self, out)
        if not isinstance(out, (list, tuple)) and out.shape.ndims is not None:
            self._keras_output_shape = tuple(out.shape.as_list())
        return out

    def _keras_propagate_mask(self, inputs, out, mask):
        if not isinstance(out, (list, tuple)) and getattr(out, "_keras_mask", None) is None:
            out._keras_mask = mask

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self._init_args = (args, dict(kwargs))    # (get_config)
        return self

    def _keras_after_call(self, out, known):
        """The layer's new regularization losses, its activity regularizer's loss (divided
        by the batch size, as tf.keras 1.15) and its weights' constraints."""
        from xlapy.compat.v1.framework import GraphKeys, get_default_graph
        g = get_default_graph()
        losses = self.__dict__.setdefault("_keras_losses", [])
        losses += g.get_collection(GraphKeys.REGULARIZATION_LOSSES)[known:]
        act = getattr(self, "_activity_regularizer", None)
        if act is not None:
            from xlapy.compat.v1.ops.array_ops import shape
            from xlapy.compat.v1.ops.math_ops import cast
            with g.name_scope(f"{self.name}/ActivityRegularizer"):
                for o in (out if isinstance(out, (list, tuple)) else [out]):
                    loss = act(o)
                    loss = loss / cast(shape(o)[0], loss.dtype)
                    g.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
                    losses.append(loss)
        cons = self.__dict__.setdefault("_keras_constraints", [])
        for attr, fn in (getattr(self, "_constraint_args", None) or {}).items():
            v = getattr(self, attr, None)
            if fn is not None and v is not None and all(v is not w for w, _ in cons):
                cons.append((v, fn))

    @property
    def losses(self) -> list:
        """The regularization losses this layer added (weights' and activity's)."""
        return list(self.__dict__.get("_keras_losses", []))

    def get_config(self) -> dict:
        from xlapy.compat.v1.keras.serialization import layer_config
        return layer_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from xlapy.compat.v1.keras.serialization import layer_from_config
        return layer_from_config(cls, config, custom_objects)

    def count_params(self) -> int:
        return int(sum(np.prod(w.shape.as_list()) for w in self.weights))

    @property
    def output_shape(self):
        return getattr(self, "_keras_output_shape", None)

    def get_weights(self) -> list:
        from xlapy.compat.v1.keras.backend import batch_get_value
        return batch_get_value(self.weights)

    def set_weights(self, weights) -> None:
        from xlapy.compat.v1.keras.backend import batch_set_value
        ws = self.weights
        if len(weights) != len(ws):
            raise InvalidArgumentError(f"You called `set_weights(weights)` on layer "
                                       f"\"{self.name}\" with a weight list of length "
                                       f"{len(weights)}, but the layer was expecting "
                                       f"{len(ws)} weights.")
        for w, v in zip(ws, weights):
            if tuple(w.shape.as_list()) != tuple(np.shape(v)):
                raise InvalidArgumentError(f"Layer weight shape {tuple(w.shape.as_list())} "
                                           f"not compatible with provided weight shape "
                                           f"{tuple(np.shape(v))}")
        batch_set_value(list(zip(ws, weights)))

    def _keras_input(self, kwargs):
        shape = kwargs.pop("input_shape", None)
        dim = kwargs.pop("input_dim", None)
        batch = kwargs.pop("batch_input_shape", None)
        if dim is not None and shape is None:
            shape = (dim,)
        self._batch_input_shape = tuple(batch) if batch is not None else (
            None if shape is None else (None,) + tuple(shape))
        from xlapy.compat.v1.keras import constraints, regularizers
        self._activity_regularizer = regularizers.get(kwargs.pop("activity_regularizer", None))
        self._constraint_args = {k[:-len("_constraint")]: constraints.get(kwargs.pop(k))
                                 for k in list(kwargs) if k.endswith("_constraint")}
        for k in list(kwargs):
            if k.endswith("_regularizer"):
                kwargs[k] = regularizers.get(kwargs[k])
        w = kwargs.pop("weights", None)
        if w is not None:
            self._initial_weights = w
        return kwargs


class Dense(_Keras, _tl.Dense):
    supports_masking = True

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

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(rate, noise_shape=noise_shape, seed=seed, **kwargs)

    def __call__(self, inputs, training=None, **kwargs):
        from xlapy.compat.v1.keras.backend import learning_phase
        return super().__call__(inputs, training=learning_phase() if training is None
                                else training, **kwargs)


class BatchNormalization(_Keras, _tl.BatchNormalization):
    supports_masking = True

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(axis, momentum, epsilon, center, scale, **kwargs)

    def __call__(self, inputs, training=None, **kwargs):
        from xlapy.compat.v1.keras.backend import learning_phase
        return super().__call__(inputs, training=learning_phase() if training is None
                                else training, **kwargs)


class Activation(_Keras, _tl.Layer):
    supports_masking = True

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
    from xlapy.compat.v1.keras import initializers
    return initializers.get(v)


class Conv1D(_Keras, _tl.Conv1D):
    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 **kwargs):
        kwargs = self._keras_input(kwargs)
        if str(padding).lower() == "causal":
            from xlapy.compat.v1.errors import UnimplementedError
            raise UnimplementedError("Conv1D(padding='causal') is not supported by xlapy's "
                                     "Keras")
        super().__init__(filters, kernel_size, strides, padding,
                         data_format or "channels_last", dilation_rate,
                         activations.get(activation), use_bias,
                         _initializer(kernel_initializer), _initializer(bias_initializer),
                         **kwargs)


class MaxPooling1D(_Keras, _tl.MaxPooling1D):
    def __init__(self, pool_size=2, strides=None, padding="valid",
                 data_format="channels_last", **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(pool_size, strides if strides is not None else pool_size, padding,
                         data_format or "channels_last", **kwargs)


class AveragePooling1D(_Keras, _tl.AveragePooling1D):
    def __init__(self, pool_size=2, strides=None, padding="valid",
                 data_format="channels_last", **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(pool_size, strides if strides is not None else pool_size, padding,
                         data_format or "channels_last", **kwargs)


MaxPool1D, AvgPool1D = MaxPooling1D, AveragePooling1D


class _GlobalPooling(_Keras, _tl.Layer):
    rank = 1
    op = "mean"

    def __init__(self, data_format="channels_last", **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        self.data_format = data_format or "channels_last"

    def call(self, inputs, mask=None):
        from xlapy.compat.v1.ops.math_ops import reduce_max, reduce_mean
        r = inputs.shape.ndims
        if r != self.rank + 2:
            raise InvalidArgumentError(f"Input 0 of layer {self.name} is incompatible with "
                                       f"the layer: expected ndim={self.rank + 2}, found "
                                       f"ndim={r}. Full shape received: {inputs.shape}")
        axes = list(range(1, r - 1)) if self.data_format == "channels_last" else \
            list(range(2, r))
        if self.op == "mean":
            mask = getattr(inputs, "_keras_mask", None) if mask is None else mask
            if mask is not None:    # (1-D only: the mean over the unmasked steps)
                from xlapy.compat.v1.ops.array_ops import expand_dims
                from xlapy.compat.v1.ops.math_ops import cast, reduce_sum
                m = expand_dims(cast(mask, inputs.dtype), -1)
                return reduce_sum(inputs * m, axis=1) / reduce_sum(m, axis=1)
            return reduce_mean(inputs, axis=axes)
        return reduce_max(inputs, axis=axes)

    def _keras_propagate_mask(self, inputs, out, mask):
        pass


class GlobalAveragePooling1D(_GlobalPooling):
    supports_masking = True


class GlobalMaxPooling1D(_GlobalPooling):
    op = "max"


class GlobalAveragePooling2D(_GlobalPooling):
    rank = 2


class GlobalMaxPooling2D(_GlobalPooling):
    rank, op = 2, "max"


GlobalAvgPool1D, GlobalMaxPool1D = GlobalAveragePooling1D, GlobalMaxPooling1D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D


class _Merge(_Keras, _tl.Layer):
    supports_masking = True

    def __init__(self, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise InvalidArgumentError(f"A merge layer ({type(self).__name__}) should be "
                                       f"called on a list of at least 2 inputs. Got "
                                       f"{inputs!r}")
        return self._merge(list(inputs))


class Concatenate(_Merge):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def _merge(self, xs):
        from xlapy.compat.v1.ops.array_ops import concat
        return concat(xs, self.axis)


class Add(_Merge):
    def _merge(self, xs):
        from xlapy.compat.v1.ops.math_ops import add_n
        return add_n(xs)


class Multiply(_Merge):
    def _merge(self, xs):
        from xlapy.compat.v1.ops.math_ops import multiply
        out = xs[0]
        for x in xs[1:]:
            out = multiply(out, x)
        return out


class Subtract(_Merge):
    def _merge(self, xs):
        from xlapy.compat.v1.ops.math_ops import subtract
        if len(xs) != 2:
            raise InvalidArgumentError("A `Subtract` layer should be called on exactly 2 "
                                       "inputs")
        return subtract(xs[0], xs[1])


class Average(_Merge):
    def _merge(self, xs):
        from xlapy.compat.v1.ops.math_ops import add_n, multiply
        return multiply(add_n(xs), np.float32(1.0 / len(xs)))


def concatenate(inputs, axis=-1, **kwargs):
    return Concatenate(axis=axis, **kwargs)(inputs)


def add(inputs, **kwargs):
    return Add(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    return Multiply(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    return Subtract(**kwargs)(inputs)


def average(inputs, **kwargs):
    return Average(**kwargs)(inputs)


class Lambda(_Keras, _tl.Layer):
    """function(inputs, **arguments) as a layer (no weights)."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        if not callable(function):
            raise InvalidArgumentError(f"Lambda needs a callable, got {function!r}")
        self.function = function
        self.arguments = dict(arguments or {})

    def call(self, inputs):
        return self.function(inputs, **self.arguments)


class RepeatVector(_Keras, _tl.Layer):
    """[batch, features] -> [batch, n, features]."""

    def __init__(self, n, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        self.n = int(n)

    def call(self, inputs):
        from xlapy.compat.v1.ops.array_ops import expand_dims
        from xlapy.compat.v1.ops.index_ops import tile
        if inputs.shape.ndims != 2:
            raise InvalidArgumentError(f"Input 0 of layer {self.name} is incompatible with "
                                       f"the layer: expected ndim=2, found "
                                       f"ndim={inputs.shape.ndims}. Full shape received: "
                                       f"{inputs.shape}")
        out = tile(expand_dims(inputs, 1), [1, self.n, 1])
        from xlapy.compat.v1.tensor_shape import TensorShape
        out.set_shape(TensorShape([inputs.shape.dims[0], self.n, inputs.shape.dims[1]]))
        return out


class LeakyReLU(_Keras, _tl.Layer):
    supports_masking = True

    def __init__(self, alpha=0.3, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        from xlapy.compat.v1.ops.activation_ops import leaky_relu
        return leaky_relu(inputs, alpha=self.alpha)


from xlapy.compat.v1.keras.recurrent import (GRU, LSTM, Bidirectional,  # noqa: E402,F401
                                             Embedding, SimpleRNN, TimeDistributed)
from xlapy.compat.v1.keras.conv_layers import (  # noqa: E402,F401
    AveragePooling3D, AvgPool3D, Conv2DTranspose, Conv3D, Convolution2DTranspose,
    Convolution3D, Cropping1D, Cropping2D, Deconv2D, Deconvolution2D, DepthwiseConv2D,
    MaxPool3D, MaxPooling3D, SeparableConv2D, SeparableConvolution2D, UpSampling1D,
    UpSampling2D, ZeroPadding1D, ZeroPadding2D)
from xlapy.compat.v1.keras.core_layers import (  # noqa: E402,F401
    ELU, ActivityRegularization, GaussianDropout, GaussianNoise, InputLayer, Layer,
    LayerNormalization, Masking, Permute, PReLU, ReLU, Softmax, SpatialDropout1D,
    SpatialDropout2D, SpatialDropout3D, ThresholdedReLU)
from xlapy.compat.v1.keras.cudnn import CuDNNGRU, CuDNNLSTM  # noqa: E402,F401
from xlapy.compat.v1.keras.attention import AdditiveAttention, Attention  # noqa: E402,F401

Convolution1D, Convolution2D = Conv1D, Conv2D
