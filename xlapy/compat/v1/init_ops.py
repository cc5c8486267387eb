"""More TF 1.x initializers: variance_scaling_initializer (and glorot_normal, he_*, lecun_*
built from it), orthogonal_initializer, uniform_unit_scaling_initializer, identity.

The rules are TF's (init_ops.py): fans from the shape ([fan_in, fan_out] for a matrix,
receptive field * channels for a convolution kernel); "truncated_normal" draws within two
standard deviations and divides the scale by that truncation's standard deviation
(0.87962566103423978); TF 1.x's "normal" means truncated_normal. Orthogonal draws a
normal matrix, takes Q of its QR decomposition (signs fixed by R's diagonal) and reshapes.
Every draw is a graph op (random ops seeded as TF's), so variables initialize in sessions.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.tensor_shape import as_shape
from xlapy.compat.v1.variables import Initializer

_TRUNC_STD = 0.87962566103423978  # std of a unit normal truncated to [-2, 2]


def _fans(dims):
    if len(dims) < 1:
        return 1, 1
    if len(dims) == 1:
        return dims[0], dims[0]
    if len(dims) == 2:
        return dims[0], dims[1]
    rf = int(np.prod(dims[:-2]))
    return dims[-2] * rf, dims[-1] * rf


def _float_dtype(dtype, what):
    dt = dtypes.as_dtype(dtype)
    if not dt.is_floating:
        raise InvalidArgumentError(f"{what} initializer: expected a floating-point dtype, "
                                   f"got {dt.name}")
    return dt


class variance_scaling_initializer(Initializer):
    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        if scale <= 0.0:
            raise InvalidArgumentError(f"`scale` must be a positive float, got {scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise InvalidArgumentError(f"Invalid `mode` argument: {mode!r}")
        distribution = distribution.lower()
        if distribution not in ("normal", "uniform", "truncated_normal", "untruncated_normal"):
            raise InvalidArgumentError(f"Invalid `distribution` argument: {distribution!r}")
        super().__init__(_float_dtype(dtype, "variance_scaling"))
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.ops.random_ops import random_normal, random_uniform, \
            truncated_normal
        dims = as_shape(shape).as_list()
        dt = _float_dtype(dtype or self.dtype, "variance_scaling")
        fan_in, fan_out = _fans(dims)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[
            self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution in ("normal", "truncated_normal"):
            return truncated_normal(dims, 0.0, math.sqrt(scale) / _TRUNC_STD, dt, self.seed)
        if self.distribution == "untruncated_normal":
            return random_normal(dims, 0.0, math.sqrt(scale), dt, self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_uniform(dims, -limit, limit, dt, self.seed)


class glorot_normal_initializer(variance_scaling_initializer):
    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)


class orthogonal_initializer(Initializer):
    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(_float_dtype(dtype, "orthogonal"))
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.framework import get_default_graph
        from xlapy.compat.v1.ops.array_ops import reshape, transpose
        from xlapy.compat.v1.ops.diag_ops import diag_part
        from xlapy.compat.v1.ops.linalg_ops import qr
        from xlapy.compat.v1.ops.math_ops import multiply, sign
        from xlapy.compat.v1.ops.random_ops import random_normal
        dims = as_shape(shape).as_list()
        if len(dims) < 2:
            raise InvalidArgumentError("The tensor to initialize must be at least "
                                       "two-dimensional")
        dt = _float_dtype(dtype or self.dtype, "orthogonal")
        rows, cols = int(np.prod(dims[:-1])), dims[-1]
        with get_default_graph().name_scope("orthogonal"):
            a = random_normal([max(rows, cols), min(rows, cols)], dtype=dt, seed=self.seed)
            q, r = qr(a)
            q = multiply(q, sign(diag_part(r)))
            if rows < cols:
                q = transpose(q)
            return multiply(reshape(q, dims), np.asarray(self.gain, dt.np))


class uniform_unit_scaling_initializer(Initializer):
    def __init__(self, factor=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(_float_dtype(dtype, "uniform_unit_scaling"))
        self.factor, self.seed = factor, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.ops.random_ops import random_uniform
        dims = as_shape(shape).as_list()
        input_size = max(float(np.prod(dims[:-1])) if dims else 1.0, 1.0)
        limit = math.sqrt(3.0 / input_size) * self.factor
        return random_uniform(dims, -limit, limit, dtype or self.dtype, self.seed)


class identity_initializer(Initializer):
    def __init__(self, gain=1.0, dtype=dtypes.float32):
        super().__init__(_float_dtype(dtype, "identity"))
        self.gain = gain

    def __call__(self, shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.framework import constant_op
        dims = as_shape(shape).as_list()
        if len(dims) != 2:
            raise InvalidArgumentError("Identity matrix initializer can only be used for 2D "
                                       "matrices.")
        dt = dtypes.as_dtype(dtype or self.dtype)
        return constant_op(np.eye(*dims, dtype=dt.np) * self.gain, dt)


def he_normal(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return variance_scaling_initializer(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return variance_scaling_initializer(1.0, "fan_in", "uniform", seed)
