"""xlapy.numpy's index helpers, editing, arithmetic, signal and polynomial functions against
jax.numpy on the same inputs (values, shapes and dtypes), eagerly; a few under jit."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp

rng = np.random.default_rng(0)
F = rng.standard_normal((4, 5)).astype(np.float32)
V = rng.standard_normal(7).astype(np.float32)
W = rng.standard_normal(3).astype(np.float32)
I = np.int32([12, -18, 0, 7, 100])
J = np.int32([8, 12, 5, 0, 75])

CASES = [
    ("tril_indices", lambda m: m.tril_indices(4, 1, 5), ()),
    ("triu_indices_from", lambda m, a: m.triu_indices_from(a, -1), (F,)),
    ("diag_indices", lambda m: m.diag_indices(3, 3), ()),
    ("unravel_index", lambda m, i: m.unravel_index(i, (3, 4)), (np.int32([0, 5, 11, 13, -1]),)),
    ("ravel_multi_index", lambda m, a, b: m.ravel_multi_index((a, b), (3, 4), mode="clip"),
     (np.int32([0, 2, 5]), np.int32([1, 3, -1]))),
    ("indices", lambda m: m.indices((2, 3)), ()),
    ("ix_", lambda m, a, b: m.ix_(a, b), (np.int32([0, 2]), np.int32([1, 3, 4]))),
    ("mgrid", lambda m: m.mgrid[0:3, 0:2], ()),
    ("ogrid", lambda m: m.ogrid[0:3, 0:2], ()),
    ("fill_diagonal", lambda m, a: m.fill_diagonal(a, 9.0, inplace=False), (F,)),
    ("append", lambda m, a, b: m.append(a, b, axis=0), (F, F[:2])),
    ("delete", lambda m, a: m.delete(a, np.int32([0, 3]), axis=1), (F,)),
    ("delete_slice", lambda m, a: m.delete(a, slice(1, 4)), (F,)),
    ("insert_scalar", lambda m, a: m.insert(a, 2, 5.0, axis=1), (F,)),
    ("insert_many", lambda m, a: m.insert(a, np.int32([1, 3]), np.float32([5, 6])), (V,)),
    ("select", lambda m, a: m.select([a > 1, a < -1], [a, -a], 0.5), (F,)),
    ("block", lambda m, a: m.block([[a, a[:, :2]], [a[:1], a[:1, :2]]]), (F,)),
    ("unstack", lambda m, a: m.unstack(a, axis=1), (F,)),
    ("rollaxis", lambda m, a: m.rollaxis(a.reshape(2, 2, 5), 2), (F,)),
    ("gcd", lambda m, a, b: m.gcd(a, b), (I, J)),
    ("lcm", lambda m, a, b: m.lcm(a, b), (I, J)),
    ("ldexp", lambda m, a, b: m.ldexp(a, b), (V, np.int32([1, -3, 0, 200, -200, 5, 2]))),
    ("frexp", lambda m, a: m.frexp(a), (np.float32([0.0, -0.0, 1.0, 3.5, -1e-30, np.inf, 8.0]),)),
    ("modf", lambda m, a: m.modf(a), (V * 3,)),
    ("fabs", lambda m, a: m.fabs(a), (V,)),
    ("sinc", lambda m, a: m.sinc(a), (np.concatenate([V, [0.0]]).astype(np.float32),)),
    ("i0", lambda m, a: m.i0(a), (V,)),
    ("geomspace", lambda m: m.geomspace(1.0, 1000.0, 4), ()),
    ("ediff1d", lambda m, a: m.ediff1d(a, to_begin=np.float32([9])), (V,)),
    ("gradient", lambda m, a: m.gradient(a, 0.5), (F,)),
    ("trapezoid", lambda m, a: m.trapezoid(a, dx=0.5), (F,)),
    ("trapezoid_x", lambda m, a, x: m.trapezoid(a, x), (V, np.cumsum(np.abs(V)))),
    ("convolve_full", lambda m, a, b: m.convolve(a, b), (V, W)),
    ("convolve_same", lambda m, a, b: m.convolve(a, b, mode="same"), (W, V)),
    ("convolve_valid", lambda m, a, b: m.convolve(a, b, mode="valid"), (V, W)),
    ("correlate_valid", lambda m, a, b: m.correlate(a, b), (V, W)),
    ("correlate_full", lambda m, a, b: m.correlate(a, b, mode="full"), (W, V)),
    ("correlate_same", lambda m, a, b: m.correlate(a, b, mode="same"), (V, W)),
    ("unwrap", lambda m, a: m.unwrap(a), (np.cumsum(V * 2.5),)),
    ("vander", lambda m, a: m.vander(a, 4), (W,)),
    ("windows", lambda m: (m.hanning(6), m.hamming(5), m.blackman(7), m.bartlett(6),
                           m.kaiser(6, 3.0)), ()),
    ("cross", lambda m, a, b: m.cross(a, b), (F[:, :3], F[::-1, 2:])),
    ("cross2", lambda m, a, b: m.cross(a, b), (F[:, :2], F[:, 3:])),
    ("vecdot", lambda m, a, b: m.vecdot(a, b), (F, F[::-1])),
    ("matvec", lambda m, a, b: m.matvec(a, b), (F, F[0])),
    ("vecmat", lambda m, a, b: m.vecmat(a, b), (F[:, 0], F)),
    ("cumulative_sum", lambda m, a: m.cumulative_sum(a, axis=1, include_initial=True), (F,)),
    ("cumulative_prod", lambda m, a: m.cumulative_prod(a), (W,)),
    ("polys", lambda m, a, b: (m.polyadd(a, b), m.polysub(a, b), m.polymul(a, b),
                               m.polyder(a, 2), m.polyint(b, 2, 1.0)), (V, W)),
    ("apply_along_axis", lambda m, a: m.apply_along_axis(lambda r: r[::-1] * r.sum(), 1, a),
     (F,)),
    ("fromfunction", lambda m: m.fromfunction(lambda i, j: i * 10 + j, (3, 4),
                                              dtype=np.float32), ()),
]


def _leaves(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_matches_jax_numpy(name, fn, args):
    want, got = _leaves(fn(jnp, *args)), _leaves(fn(xnp, *args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, equal_nan=True)


@pytest.mark.parametrize("name", ["gcd", "convolve_same", "gradient", "cross", "insert_many",
                                  "polys"])
def test_under_jit(name):
    _, fn, args = next(c for c in CASES if c[0] == name)
    want = _leaves(fn(jnp, *args))
    got = _leaves(xp.jit(lambda *a: fn(xnp, *a))(*args))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


def test_fill_diagonal_wrap_as_numpy():
    """JAX refuses wrap=True; xlapy gives NumPy's result."""
    want = np.zeros((7, 3), np.float32)
    np.fill_diagonal(want, 7.0, wrap=True)
    got = xnp.fill_diagonal(np.zeros((7, 3), np.float32), 7.0, wrap=True, inplace=False)
    np.testing.assert_array_equal(got, want)


def test_errors_are_named():
    with pytest.raises(xp.errors.XlapyError, match="gcd: integer arguments"):
        xnp.gcd(np.float32(1.5), 2)
    with pytest.raises(xp.errors.XlapyError, match="convolve: mode must be"):
        xnp.convolve(V, W, mode="circular")
    with pytest.raises(xp.errors.XlapyError, match="out of bounds"):
        xnp.delete(V, 9)
