"""Every possible sample, not a sample of them: an f32 normal (or truncated normal with
fixed bounds) is a function of the 23 random mantissa bits behind its uniform float, so
all 2^23 values can be compared with JAX's. The samplers are run on the floats m * 2^-23
for every m, with the arithmetic of xlapy.random's samplers; JAX's reference applies its
own sampler's formula to the same floats (jax._src.random: uniform on [lo, hi), then
sqrt(2) erf_inv, clipped for the truncated normal)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

import xlapy as xp
import xlapy.random as xr
from xlapy.random import _continuous as C

F32 = np.float32
ALL = np.arange(1 << 23, dtype=np.uint32).astype(F32) * F32(2.0 ** -23)


def _bits(x):
    return np.asarray(x).view(np.uint32)


def test_every_f32_normal_sample_is_jaxs():
    lo = np.nextafter(F32(-1), F32(0))
    sqrt2 = F32(np.sqrt(2))
    want = jax.jit(lambda f: sqrt2 * lax.erf_inv(lax.max(lo, f * (F32(1) - lo) + lo)))(ALL)
    got = xp.jit(C.normal_from_floats)(ALL)
    bad = np.nonzero(_bits(got) != _bits(want))[0]
    assert bad.size == 0, f"{bad.size} differ, first mantissas {bad[:5]}"


@pytest.mark.parametrize("lower,upper", [(-2.0, 2.0)])
def test_every_f32_truncated_normal_sample_is_jaxs(lower, upper):
    lo, hi = F32(lower), F32(upper)
    sqrt2, rsqrt2 = F32(np.sqrt(2)), F32(1) / F32(np.sqrt(2))

    def jax_fn(f):
        a, b = lax.erf(lo * rsqrt2), lax.erf(hi * rsqrt2)
        out = sqrt2 * lax.erf_inv(lax.max(a, f * (b - a) + a))
        return jnp.clip(out, jnp.nextafter(lo, F32(np.inf)), jnp.nextafter(hi, F32(-np.inf)))

    def xlapy_fn(f):
        from xlapy.random import _xla_math as XM
        a, b = C._erf(np.asarray(lo * rsqrt2)), C._erf(np.asarray(hi * rsqrt2))
        a_full = xp.numpy.broadcast_to(a, f.shape)
        u = xp.lax.max(a_full, XM.fma(f, xp.numpy.broadcast_to(b - a, f.shape), a_full))
        out = xp.lax.mul(C.erf_inv(u, XM.fma_fast), float(sqrt2))
        return xp.numpy.clip(out, np.nextafter(lo, F32(np.inf)), np.nextafter(hi, F32(-np.inf)))

    bad = np.nonzero(_bits(xp.jit(xlapy_fn)(ALL)) != _bits(jax.jit(jax_fn)(ALL)))[0]
    assert bad.size == 0, f"{bad.size} differ, first mantissas {bad[:5]}"


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_every_16_bit_normal_sample_is_jaxs(dtype):
    # 16-bit uniforms have at most 2^10 values: find keys covering... all of them at once by
    # sampling a large array and comparing every element
    got = xr.normal(xr.PRNGKey(0), (1 << 16,), dtype)
    want = jax.random.normal(jax.random.PRNGKey(0), (1 << 16,), dtype)
    assert np.array_equal(np.asarray(got).view(np.uint16), np.asarray(want).view(np.uint16))
    assert len(np.unique(np.asarray(got).view(np.uint16))) > (120 if dtype != np.float16
                                                               else 1000)
