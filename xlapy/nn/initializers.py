"""xlapy.nn.initializers: jax.nn.initializers, giving JAX's arrays for the same key.

An initializer is a function (key, shape, dtype=None) -> array. variance_scaling(scale,
mode, distribution) draws with variance scale / fan (fan_in, fan_out, their mean or
geometric mean, from _compute_fans: the in/out axes times the receptive field):
truncated_normal on [-2, 2] with stddev sqrt(var) / 0.8796 (the truncated distribution's
own stddev), normal with stddev sqrt(var), or uniform on [-sqrt(3 var), sqrt(3 var)).
glorot/xavier, lecun and he/kaiming are its named cases. orthogonal uses
xlapy.random.orthogonal (xlapy's QR: equal to JAX's to rounding); the rest are bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

import xlapy.numpy as xnp
import xlapy.random as random
from xlapy.random._common import RandomError, float_dtype


def _dtype(dtype):
    return float_dtype(dtype, "xlapy.nn.initializers")


def zeros(key, shape, dtype=None):
    return xnp.zeros(shape, _dtype(dtype))


def ones(key, shape, dtype=None):
    return xnp.ones(shape, _dtype(dtype))


def constant(value, dtype=None):
    def init(key, shape, dtype=dtype):
        return xnp.full(shape, value, dtype=_dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """Uniform on [0, scale)."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.uniform(key, shape, dtype) * np.asarray(scale, dtype)
    return init


def normal(stddev=1e-2, dtype=None):
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.normal(key, shape, dtype) * np.asarray(stddev, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """stddev times a standard normal truncated to (lower, upper)."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype) * \
            np.asarray(stddev, dtype)
    return init


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise RandomError(f"cannot compute input and output sizes of a {len(shape)}-"
                          "dimensional weights tensor with the default in_axis: it must be "
                          "at least 2D, or give in_axis")

    def size(axes):
        return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)

    in_size, out_size, batch = size(in_axis), size(out_axis), size(batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch
    return in_size * receptive, out_size * receptive


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """Arrays with variance scale / fan; see the module docstring."""
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise RandomError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise RandomError(f"invalid distribution for variance scaling initializer: "
                          f"{distribution}")

    def init(key, shape, dtype=dtype):
        shape = tuple(int(d) for d in shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = np.asarray(scale / denominator, dtype)
        if distribution == "truncated_normal":
            stddev = np.sqrt(variance) / np.asarray(.87962566103423978, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * np.sqrt(variance)
        return random.uniform(key, shape, dtype, -1) * np.sqrt(np.asarray(3, dtype) * variance)
    return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """scale times a matrix with orthonormal columns (reshaped to `shape`, the columns
    along column_axis)."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        shape = tuple(int(d) for d in shape)
        if len(shape) < 2:
            raise RandomError("the orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return xnp.zeros(shape, dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = xnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        q = xnp.moveaxis(q, -1, column_axis)
        return np.asarray(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """A convolution kernel that is zero except at the spatial center, an orthogonal
    matrix there (3D, 4D or 5D shapes; fan_in <= fan_out)."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise RandomError("the delta orthogonal initializer requires a 3D, 4D or 5D shape")
        if shape[-1] < shape[-2]:
            raise RandomError("`fan_in` must be less or equal than `fan_out`")
        ortho = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        center = tuple((k - 1) // 2 for k in shape[:-2])
        w = xnp.zeros(shape, dtype)
        return xnp.at(w)[center].set(ortho)
    return init


__all__ = ["zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal"]
