"""tf.layers.batch_normalization and BatchNormalization.

Variables gamma, beta (trainable), moving_mean, moving_variance (not trainable, in
GLOBAL_VARIABLES and MOVING_AVERAGE_VARIABLES). In training the batch statistics
normalize and the moving averages move towards them
(moving -= (moving - batch) * (1 - momentum)); the update ops go to
tf.GraphKeys.UPDATE_OPS, which training code runs with control_dependencies, as in TF.
Inputs of rank 4 normalized over their channel axis use the fused op
(tf.nn.fused_batch_norm: its batch variance for the moving average is Bessel-corrected,
as TF's fused path); others use moments + batch_normalization (the biased variance, as
TF's non-fused path). training may be a bool tensor: both normalizations are computed and
selected, and the update is scaled by training, so no tf.cond is needed.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import GraphKeys, Tensor
from xlapy.compat.v1.layers.base import Layer
from xlapy.compat.v1.layers.core import _training_value
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import reshape
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.math_ops import cast, multiply, subtract
from xlapy.compat.v1.ops.norm_ops import batch_normalization as nn_batch_norm
from xlapy.compat.v1.ops.norm_ops import fused_batch_norm
from xlapy.compat.v1.ops.variable_ops import assign_sub
from xlapy.compat.v1.variables import ones_initializer, zeros_initializer


class BatchNormalization(Layer):
    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=None, gamma_initializer=None,
                 moving_mean_initializer=None, moving_variance_initializer=None,
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None,
                 adjustment=None, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise InvalidArgumentError("batch_normalization: renorm, virtual_batch_size and "
                                       "adjustment are not supported")
        self.axis = axis
        self.momentum = momentum
        self.epsilon = epsilon
        self.center, self.scale = center, scale
        self.inits = (beta_initializer or zeros_initializer(),
                      gamma_initializer or ones_initializer(),
                      moving_mean_initializer or zeros_initializer(),
                      moving_variance_initializer or ones_initializer())
        self.regs = (beta_regularizer, gamma_regularizer)
        self.fused = fused

    def build(self, input_shape):
        r = input_shape.ndims
        if r is None:
            raise InvalidArgumentError("Input has undefined rank")
        axes = self.axis if isinstance(self.axis, (list, tuple)) else [self.axis]
        self._axes = sorted(a % r for a in axes)
        params = [input_shape.dims[a] for a in self._axes]
        if any(p is None for p in params):
            raise InvalidArgumentError(f"Input has undefined `axis` dimension. Input shape: "
                                       f"{input_shape}")
        self._r = r
        dt = self._dtype if self._dtype is not None and self._dtype.is_floating else \
            dtypes.float32
        if dt == dtypes.float16:
            dt = dtypes.float32
        self._param_dtype = dt
        self._fuse = (self.fused is not False and r == 4 and len(self._axes) == 1
                      and self._axes[0] in (1, 3))
        if self.fused and not self._fuse:
            raise InvalidArgumentError("fused batch norm needs a 4-D input normalized over "
                                       "axis 1 or 3")
        shape_ = params
        b_init, g_init, mm_init, mv_init = self.inits
        self.beta = self.add_weight("beta", shape_, dt, b_init, self.regs[0]) \
            if self.center else None
        self.gamma = self.add_weight("gamma", shape_, dt, g_init, self.regs[1]) \
            if self.scale else None
        coll = [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MOVING_AVERAGE_VARIABLES]
        self.moving_mean = self.add_weight("moving_mean", shape_, dt, mm_init,
                                           trainable=False, collections=coll)
        self.moving_variance = self.add_weight("moving_variance", shape_, dt, mv_init,
                                               trainable=False, collections=coll)

    def _bshape(self):
        s = [1] * self._r
        for a in self._axes:
            s[a] = -1
        return s

    def _normalize(self, x, training: bool):
        """(y, batch mean, batch variance for the moving average) for a known mode."""
        from xlapy.compat.v1.ops.nn_ops import moments
        dt = self._param_dtype
        if self._fuse:
            fmt = "NHWC" if self._axes[0] == 3 else "NCHW"
            n = self.moving_mean.shape.dims[0]
            gamma = self.gamma if self.gamma is not None else tensor(np.ones(n, dt.np))
            beta = self.beta if self.beta is not None else tensor(np.zeros(n, dt.np))
            if training:
                return fused_batch_norm(x, gamma, beta, epsilon=self.epsilon,
                                        data_format=fmt, is_training=True)
            y, _, _ = fused_batch_norm(x, gamma, beta, self.moving_mean, self.moving_variance,
                                       epsilon=self.epsilon, data_format=fmt,
                                       is_training=False)
            return y, None, None
        red = [a for a in range(self._r) if a not in self._axes]
        bs = self._bshape()
        if training:
            mean, var = moments(x, red, keep_dims=False)
        else:
            mean, var = self.moving_mean, self.moving_variance
        y = nn_batch_norm(x, reshape(mean, bs), reshape(var, bs),
                          None if self.beta is None else reshape(self.beta, bs),
                          None if self.gamma is None else reshape(self.gamma, bs),
                          self.epsilon)
        return y, (mean if training else None), (var if training else None)

    def _update(self, var, value, decay):
        d = subtract(var.value(), value)
        return assign_sub(var, multiply(d, decay))

    def call(self, inputs, training=False):
        t = _training_value(training)
        if t is False:
            return self._normalize(inputs, False)[0]
        y_train, mean, var = self._normalize(inputs, True)
        one_minus = tensor(np.asarray(1.0 - self.momentum, self._param_dtype.np))
        if t is True:
            decay, y = one_minus, y_train
        else:
            y_inf = self._normalize(inputs, False)[0]
            y = where(t, y_train, y_inf)
            decay = multiply(one_minus, cast(t, self._param_dtype))
        if isinstance(self.momentum, Tensor):
            raise InvalidArgumentError("a tensor momentum is not supported")
        self.add_update(self._update(self.moving_mean, mean, decay))
        self.add_update(self._update(self.moving_variance, var, decay))
        return y


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None,
                        moving_mean_initializer=None, moving_variance_initializer=None,
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    layer = BatchNormalization(axis, momentum, epsilon, center, scale, beta_initializer,
                               gamma_initializer, moving_mean_initializer,
                               moving_variance_initializer, beta_regularizer,
                               gamma_regularizer, renorm=renorm, fused=fused,
                               trainable=trainable, virtual_batch_size=virtual_batch_size,
                               adjustment=adjustment, name=name, _reuse=reuse)
    return layer(inputs, training=training)
