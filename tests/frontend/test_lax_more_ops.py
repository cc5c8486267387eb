"""xlapy.lax's sorting, scans, gather/scatter with dimension numbers and special-function
names against jax.lax on the same inputs, eagerly and under jit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy import lax

rng = np.random.default_rng(0)
F = rng.standard_normal((5, 6)).astype(np.float32)
SPECIAL = np.float32([1.0, np.nan, 3.0, -np.inf, 3.0, -0.0, 0.0, np.inf])
I32 = np.int32([1, 5, 3, 5, -2 ** 31, 0, 7])
GDN = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
SDN = dict(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))

# name, function of the lax module, arguments
CASES = [
    ("top_k_specials", lambda m, x: m.top_k(x, 8), (SPECIAL,)),
    ("top_k_ints", lambda m, x: m.top_k(x, 4), (I32,)),
    ("top_k_rows", lambda m, x: m.top_k(x, 3), (F,)),
    ("sort_key_val", lambda m, k, v: m.sort_key_val(k, v), (F[0], np.arange(6, dtype=np.int32))),
    ("sort_two_keys", lambda m, a, b: m.sort((a, b), num_keys=2),
     (np.int32([2, 1, 2, 1]), np.float32([4, 3, 2, 1]))),
    ("cumsum_rev", lambda m, x: m.cumsum(x, axis=1, reverse=True), (F,)),
    ("cummax", lambda m, x: m.cummax(x, axis=0), (F,)),
    ("cumprod", lambda m, x: m.cumprod(x, axis=1), (F,)),
    ("cumlogsumexp", lambda m, x: m.cumlogsumexp(x, axis=1), (F * 300,)),
    ("cumlogsumexp_rev", lambda m, x: m.cumlogsumexp(x, reverse=True),
     (np.float32([-1000.0, 0.0, 3.0, -5.0, -np.inf]),)),
    ("associative_scan_add", lambda m, x: m.associative_scan(
        jnp.add if m is jax.lax else xnp.add, x, axis=1), (F,)),
    ("associative_scan_affine", lambda m, a, b: m.associative_scan(
        lambda p, q: (p[0] * q[0], p[1] * q[0] + q[1]), (a, b), reverse=True), (F, F[::-1])),
    ("map", lambda m, x: m.map(lambda v: v * v.sum(), x), (F,)),
    ("map_batched", lambda m, x: m.map(lambda v: v.max(), x, batch_size=2), (F,)),
    ("gather_clip", lambda m, x, i: m.gather(x, i, m.GatherDimensionNumbers(**GDN), (1, 6),
                                             mode=m.GatherScatterMode.CLIP),
     (F, np.int32([[1], [4], [9]]))),
    ("gather_fill", lambda m, x, i: m.gather(x, i, m.GatherDimensionNumbers(**GDN), (1, 6),
                                             mode="fill"), (F, np.int32([[1], [-1], [9]]))),
    ("scatter_add", lambda m, x, i, u: m.scatter_add(x, i, u, m.ScatterDimensionNumbers(**SDN)),
     (F, np.int32([[1], [1], [7]]), np.ones((3, 6), np.float32))),
    ("population_count", lambda m, x: m.population_count(x), (I32,)),
    ("clz", lambda m, x: m.clz(x), (I32,)),
    ("igamma", lambda m, a, x: m.igamma(a, x), (np.abs(F) + 0.1, np.abs(F[::-1]))),
    ("lgamma_digamma", lambda m, x: (m.lgamma(x), m.digamma(x)), (np.abs(F) + 0.5,)),
    ("erf_inv", lambda m, x: m.erf_inv(x), (np.tanh(F),)),
    ("bessel_i1e", lambda m, x: m.bessel_i1e(x), (F * 5,)),
    ("inverse_trig", lambda m, x: (m.asinh(x), m.atan(x), m.acos(m.tanh(x))), (F,)),
    ("batch_matmul", lambda m, a, b: m.batch_matmul(a, b),
     (rng.standard_normal((2, 3, 4)).astype(np.float32),
      rng.standard_normal((2, 4, 5)).astype(np.float32))),
]


def _same(got, want):
    g, w = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5, equal_nan=True)
            np.testing.assert_array_equal(np.signbit(a[a == 0]), np.signbit(b[a == 0]))
        else:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_matches_jax_lax(name, fn, args):
    want = fn(jax.lax, *args)
    _same(fn(lax, *args), want)
    _same(xp.jit(lambda *a: fn(lax, *a))(*args), want)


def test_top_k_errors_and_gradient():
    with pytest.raises(xp.errors.XlapyError, match="top_k: k = 7"):
        lax.top_k(np.ones(3, np.float32), 7)
    g = xp.grad(lambda x: lax.top_k(x, 2)[0].sum())(F[0])
    np.testing.assert_allclose(g, jax.grad(lambda x: jax.lax.top_k(x, 2)[0].sum())(F[0]))


def test_unknown_gather_mode_is_named():
    with pytest.raises(xp.errors.XlapyError, match="unknown gather/scatter mode 'wrap'"):
        lax.gather(F, np.int32([[1]]), lax.GatherDimensionNumbers(**GDN), (1, 6), mode="wrap")
