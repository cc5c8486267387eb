"""tf.keras.layers: the custom-layer base (Layer with build / call / add_weight /
compute_output_shape / get_config), InputLayer, the advanced activations (ELU, ReLU,
PReLU, Softmax, ThresholdedReLU), Permute, Masking, the noise and spatial dropout layers,
ActivityRegularization and LayerNormalization (tf.keras 1.15 has it), with Keras'
semantics. Noise and dropout act only while the learning phase is True."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import layers as _tl
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.keras.layers import _Keras


def _tf():
    import xlapy.compat.v1 as tf
    return tf


def _dim(d):
    d = getattr(d, "value", d)
    return None if d is None else int(d)


class Layer(_Keras, _tl.Layer):
    """Subclass it: build(input_shape) makes the weights with add_weight (input_shape is a
    TensorShape: input_shape[-1] is a Dimension, int() or .value gives the size), call
    (inputs) computes, get_config returns the constructor's arguments (extend it for
    model_from_json / load_model with custom_objects)."""

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        kwargs = self._keras_input(kwargs)
        for k in ("dynamic", "autocast", "input_length"):
            kwargs.pop(k, None)
        if kwargs:
            raise InvalidArgumentError(f"Keyword argument not understood: {sorted(kwargs)}")
        super().__init__(trainable=trainable, name=name, dtype=dtype)

    def add_weight(self, name=None, shape=None, dtype=None, initializer=None,
                   regularizer=None, trainable=True, constraint=None, **kwargs):
        """A variable of the layer (under its scope): initializer by name or object
        (glorot_uniform for floats, zeros otherwise, as Keras), regularizer's loss into
        the model's loss, constraint applied after each update."""
        from xlapy.compat.v1 import dtypes
        from xlapy.compat.v1.keras import constraints, initializers, regularizers
        from xlapy.compat.v1.keras.backend import floatx
        dt = dtypes.as_dtype(dtype or floatx())
        if initializer is None:
            initializer = "glorot_uniform" if dt.is_floating else "zeros"
        shape = [_dim(d) for d in (shape or [])]
        v = _tl.Layer.add_weight(self, name, shape, dtype=dt,
                                 initializer=initializers.get(initializer),
                                 regularizer=regularizers.get(regularizer),
                                 trainable=trainable)
        c = constraints.get(constraint)
        if c is not None:
            self.__dict__.setdefault("_keras_constraints", []).append((v, c))
        return v

    def add_loss(self, losses, inputs=None):
        from xlapy.compat.v1.framework import GraphKeys, get_default_graph
        for x in losses if isinstance(losses, (list, tuple)) else [losses]:
            get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, x)
            self.__dict__.setdefault("_keras_losses", []).append(x)

    def add_update(self, updates, inputs=None):
        for u in updates if isinstance(updates, (list, tuple)) else [updates]:
            _tl.Layer.add_update(self, u)

    def compute_output_shape(self, input_shape):
        return input_shape

    def compute_mask(self, inputs, mask=None):
        return mask

    def call(self, inputs, **kwargs):
        return inputs


class InputLayer(_Keras, _tl.Layer):
    """The input of a Sequential model (its shape); called on a tensor: the tensor."""

    def __init__(self, input_shape=None, batch_size=None, dtype=None, input_tensor=None,
                 sparse=False, name=None, **kwargs):
        batch = kwargs.pop("batch_input_shape", None)
        if sparse or input_tensor is not None:
            from xlapy.compat.v1.errors import UnimplementedError
            raise UnimplementedError("InputLayer(sparse=True / input_tensor=...) is not "
                                     "supported by xlapy's Keras")
        super().__init__(name=name)
        if batch is None and input_shape is not None:
            batch = (batch_size,) + tuple(input_shape)
        if batch is None:
            raise InvalidArgumentError("InputLayer needs input_shape or batch_input_shape")
        self._batch_input_shape = tuple(batch)
        self._input_dtype = dtype or "float32"
        self._activity_regularizer, self._constraint_args = None, {}

    def call(self, inputs):
        return inputs


class _Act(_Keras, _tl.Layer):
    supports_masking = True

    def __init__(self, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)


class ELU(_Act):
    """x if x > 0 else alpha * (exp(x) - 1)."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        from xlapy.compat.v1.keras.backend_ops import elu
        return elu(inputs, self.alpha)


class ReLU(_Act):
    """max_value-capped x above threshold, negative_slope * (x - threshold) below."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise InvalidArgumentError(f"max_value of Relu layer cannot be negative value: "
                                       f"{max_value}")
        if negative_slope < 0.0:
            raise InvalidArgumentError(f"negative_slope of Relu layer cannot be negative "
                                       f"value: {negative_slope}")
        self.max_value = None if max_value is None else float(max_value)
        self.negative_slope, self.threshold = float(negative_slope), float(threshold)

    def call(self, inputs):
        from xlapy.compat.v1.keras.backend_ops import relu
        return relu(inputs, alpha=self.negative_slope, max_value=self.max_value,
                    threshold=self.threshold)


class ThresholdedReLU(_Act):
    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        self.theta = float(theta)

    def call(self, inputs):
        tf = _tf()
        return inputs * tf.cast(tf.greater(inputs, np.float32(self.theta)), inputs.dtype)


class Softmax(_Act):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return _tf().nn.softmax(inputs, axis=self.axis)


class PReLU(_Act):
    """relu(x) - alpha * relu(-x), alpha a weight of the input's shape (less the batch;
    size 1 along shared_axes)."""

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None,
                 alpha_constraint=None, shared_axes=None, **kwargs):
        kwargs["alpha_constraint"] = alpha_constraint
        super().__init__(**kwargs)
        from xlapy.compat.v1.keras import initializers, regularizers
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.shared_axes = None if shared_axes is None else (
            [shared_axes] if isinstance(shared_axes, int) else list(shared_axes))

    def build(self, input_shape):
        shape = [_dim(d) for d in input_shape.dims[1:]]
        for a in self.shared_axes or []:
            shape[a - 1] = 1
        self.alpha = self.add_weight("alpha", shape, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer)

    def call(self, inputs):
        tf = _tf()
        return tf.nn.relu(inputs) - self.alpha * tf.nn.relu(-inputs)


class Permute(_Keras, _tl.Layer):
    """dims: the permutation of the non-batch axes, 1-based (Permute((2, 1)))."""

    def __init__(self, dims, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise InvalidArgumentError(f"Invalid permutation `dims` for Permute Layer: "
                                       f"{dims}. The set of indices in `dims` must be "
                                       f"consecutive and start from 1.")

    def call(self, inputs):
        return _tf().transpose(inputs, [0] + list(self.dims))


class Masking(_Keras, _tl.Layer):
    """Time steps whose features all equal mask_value are zeroed and masked out for the
    layers after (the RNNs skip them)."""

    supports_masking = True

    def __init__(self, mask_value=0.0, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def call(self, inputs):
        tf = _tf()
        keep = tf.reduce_any(tf.not_equal(inputs, np.asarray(
            self.mask_value, inputs.dtype.as_numpy_dtype)), axis=-1, keepdims=True)
        out = inputs * tf.cast(keep, inputs.dtype)
        out._keras_mask = tf.squeeze(keep, [-1])
        return out

    def _keras_propagate_mask(self, inputs, out, mask):
        pass


def _training(training):
    if training is not None:
        return training
    from xlapy.compat.v1.keras.backend import learning_phase
    return learning_phase()


class GaussianNoise(_Keras, _tl.Layer):
    """x + N(0, stddev) noise while training."""

    supports_masking = True

    def __init__(self, stddev, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        self.stddev = float(stddev)

    def call(self, inputs, training=None):
        from xlapy.compat.v1.keras.backend_ops import in_train_phase
        tf = _tf()
        return in_train_phase(lambda: inputs + tf.random_normal(
            tf.shape(inputs), 0.0, self.stddev, dtype=inputs.dtype), inputs,
            training=_training(training))


class GaussianDropout(_Keras, _tl.Layer):
    """x * N(1, sqrt(rate / (1 - rate))) noise while training."""

    supports_masking = True

    def __init__(self, rate, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        self.rate = float(rate)

    def call(self, inputs, training=None):
        from xlapy.compat.v1.keras.backend_ops import in_train_phase
        if not 0 < self.rate < 1:
            return inputs
        tf = _tf()
        std = float(np.sqrt(self.rate / (1.0 - self.rate)))
        return in_train_phase(lambda: inputs * tf.random_normal(
            tf.shape(inputs), 1.0, std, dtype=inputs.dtype), inputs,
            training=_training(training))


class _SpatialDropout(_Keras, _tl.Dropout):
    """Dropout of whole feature maps: one keep decision per (example, channel)."""

    rank = 1

    def __init__(self, rate, data_format=None, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(rate, **kwargs)
        self.data_format = data_format or "channels_last"

    def __call__(self, inputs, training=None, **kwargs):
        return super().__call__(inputs, training=_training(training), **kwargs)

    def call(self, inputs, training=False):
        tf = _tf()
        s = tf.shape(inputs)
        ones = [1] * self.rank
        if self.data_format == "channels_last":
            self.noise_shape = tf.stack([s[0]] + ones + [s[self.rank + 1]])
        else:
            self.noise_shape = tf.stack([s[0], s[1]] + ones)
        return super().call(inputs, training)


class SpatialDropout1D(_SpatialDropout):
    rank = 1

    def __init__(self, rate, **kwargs):
        super().__init__(rate, **kwargs)


class SpatialDropout2D(_SpatialDropout):
    rank = 2


class SpatialDropout3D(_SpatialDropout):
    rank = 3


class ActivityRegularization(_Keras, _tl.Layer):
    """The identity, adding l1 * sum|x| + l2 * sum x^2 (per example) to the loss."""

    supports_masking = True

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        from xlapy.compat.v1.keras.regularizers import L1L2
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        self.l1, self.l2 = float(l1), float(l2)
        self._activity_regularizer = L1L2(l1=l1, l2=l2)

    def call(self, inputs):
        return _tf().identity(inputs)


class LayerNormalization(_Keras, _tl.Layer):
    """(x - mean) / sqrt(var + epsilon) * gamma + beta over `axis` (per example), as
    tf.keras 1.15's LayerNormalization (epsilon 1e-3)."""

    supports_masking = True

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 trainable=True, name=None, **kwargs):
        kwargs = self._keras_input(dict(kwargs, beta_constraint=beta_constraint,
                                        gamma_constraint=gamma_constraint))
        super().__init__(trainable=trainable, name=name, **kwargs)
        from xlapy.compat.v1.keras import initializers, regularizers
        self.axis = [axis] if isinstance(axis, int) else list(axis)
        self.epsilon, self.center, self.scale = float(epsilon), center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)

    def build(self, input_shape):
        r = input_shape.ndims
        self._axes = sorted(a % r for a in self.axis)
        shape = [_dim(input_shape.dims[a]) for a in self._axes]
        self.gamma = self.add_weight("gamma", shape, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer) \
            if self.scale else None
        self.beta = self.add_weight("beta", shape, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer) \
            if self.center else None

    def call(self, inputs):
        tf = _tf()
        r = inputs.shape.ndims
        mean, var = tf.nn.moments(inputs, self._axes, keep_dims=True)
        bshape = [1] * r
        for a in self._axes:
            bshape[a] = inputs.shape.dims[a]
        bshape = [_dim(d) for d in bshape]
        gamma = tf.reshape(self.gamma, bshape) if self.gamma is not None else None
        beta = tf.reshape(self.beta, bshape) if self.beta is not None else None
        return tf.nn.batch_normalization(inputs, mean, var, beta, gamma, self.epsilon)
