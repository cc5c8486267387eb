"""tf.layers.dense, dropout, flatten (and the Dense, Dropout, Flatten classes)."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.layers.base import Layer, last_dim
from xlapy.compat.v1.ops._common import constant_value, tensor
from xlapy.compat.v1.ops.array_ops import reshape, shape
from xlapy.compat.v1.ops.math_ops import matmul
from xlapy.compat.v1.ops.nn_ops import bias_add
from xlapy.compat.v1.tensor_shape import TensorShape
from xlapy.compat.v1.variables import zeros_initializer


class Dense(Layer):
    """activation(inputs . kernel + bias); inputs of rank > 2 are contracted on their last
    axis."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer or zeros_initializer()
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer

    def build(self, input_shape):
        d = last_dim(input_shape, "Dense")
        self.kernel = self.add_weight("kernel", [d, self.units],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        self.bias = self.add_weight("bias", [self.units], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer) \
            if self.use_bias else None

    def call(self, inputs):
        r = inputs.shape.ndims
        if r is not None and r > 2:
            from xlapy.compat.v1.ops.manip_ops import tensordot
            out = tensordot(inputs, self.kernel, [[r - 1], [0]])
            out.set_shape(inputs.shape[:-1].concatenate(TensorShape([self.units])))
        else:
            out = matmul(inputs, self.kernel)
        if self.bias is not None:
            out = bias_add(out, self.bias)
        return self.activation(out) if self.activation is not None else out


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
          trainable=True, name=None, reuse=None):
    layer = Dense(units, activation, use_bias, kernel_initializer, bias_initializer,
                  kernel_regularizer, bias_regularizer, trainable=trainable, name=name,
                  _reuse=reuse)
    return layer(inputs)


def _training_value(training):
    """A Python bool when training is known at graph-build time, else the bool tensor."""
    if isinstance(training, Tensor):
        v = constant_value(training)
        return bool(v) if v is not None else training
    return bool(training)


class Dropout(Layer):
    """Dropout only when training (a Python bool or a bool tensor): with a tensor, the keep
    probability is 1 - rate when training and 1 otherwise, so no tf.cond is needed and the
    op stays compilable around it."""

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs, training=False):
        from xlapy.compat.v1.ops.array_ops import identity
        from xlapy.compat.v1.ops.index_ops import where
        from xlapy.compat.v1.ops.nn_ops import dropout as nn_dropout
        t = _training_value(training)
        if t is False:
            return identity(inputs)
        rate = self.rate
        if t is True:
            if not isinstance(rate, Tensor) and float(rate) == 0.0:
                return identity(inputs)
            return nn_dropout(inputs, rate=rate, noise_shape=self.noise_shape, seed=self.seed)
        r = tensor(rate, dtype=inputs.dtype)
        one = tensor(np.ones((), inputs.dtype.np))
        keep = where(t, one - r, one)
        return nn_dropout(inputs, keep_prob=keep, noise_shape=self.noise_shape, seed=self.seed)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    return Dropout(rate, noise_shape, seed, name=name)(inputs, training=training)


class Flatten(Layer):
    """[batch, ...] -> [batch, prod(...)]."""

    def __init__(self, data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.data_format = data_format

    def call(self, inputs):
        from xlapy.compat.v1.ops.array_ops import transpose
        x = inputs
        r = x.shape.ndims
        if self.data_format == "channels_first" and r is not None and r > 2:
            x = transpose(x, [0] + list(range(2, r)) + [1])
        rest = x.shape[1:].num_elements() if x.shape.dims is not None else None
        b = x.shape.dims[0] if x.shape.dims else None
        if rest is not None:
            out = reshape(x, [-1 if b is None else b, rest])
        else:
            out = reshape(x, [shape(x)[0], -1])
        out.set_shape(TensorShape([b, rest]))
        return out


def flatten(inputs, name=None, data_format="channels_last"):
    return Flatten(data_format=data_format, name=name)(inputs)

