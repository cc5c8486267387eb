"""xlapy.numpy's size-dependent functions and extras against jax.numpy (with size= under
jit) and NumPy (without)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp

rng = np.random.default_rng(0)
INTS = rng.integers(0, 6, (3, 5)).astype(np.int32)
FLOATS = np.array([3.0, np.nan, 1.0, 3.0, -2.0, np.nan, 1.0], np.float32)


def same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


# name, function of the numpy module, arguments, keyword arguments
CASES = [
    ("nonzero", lambda m, a: m.nonzero(a), (INTS > 2,)),
    ("nonzero_size", lambda m, a: m.nonzero(a, size=20, fill_value=-1), (INTS > 2,)),
    ("nonzero_small_size", lambda m, a: m.nonzero(a, size=3), (INTS > 2,)),
    ("flatnonzero_size", lambda m, a: m.flatnonzero(a, size=9), (INTS,)),
    ("argwhere_size", lambda m, a: m.argwhere(a, size=8, fill_value=7), (INTS > 3,)),
    ("where_one_arg", lambda m, a: m.where(a, size=6), (INTS == 1,)),
    ("unique", lambda m, a: m.unique(a), (INTS,)),
    ("unique_all", lambda m, a: m.unique(a, return_index=True, return_inverse=True,
                                         return_counts=True), (INTS,)),
    ("unique_size", lambda m, a: m.unique(a, size=8, fill_value=-1, return_index=True,
                                          return_inverse=True, return_counts=True), (INTS,)),
    ("unique_size_default_fill", lambda m, a: m.unique(a, size=9, return_counts=True),
     (INTS,)),
    ("unique_nan", lambda m, a: m.unique(a, return_counts=True), (FLOATS,)),
    ("searchsorted_left", lambda m, a, v: m.searchsorted(a, v),
     (np.float32([1, 2, 2, 3, 5]), np.float32([[0, 2, 2.5], [5, 6, np.nan]]))),
    ("searchsorted_right", lambda m, a, v: m.searchsorted(a, v, side="right"),
     (np.int32([1, 2, 2, 3, 5]), np.int32([0, 2, 3, 9]))),
    ("digitize", lambda m, x, b: m.digitize(x, b), (np.float32([0.2, 6.4, 3.0, 1.6]),
                                                      np.float32([0.0, 1.0, 2.5, 4.0]))),
    ("digitize_right_decreasing", lambda m, x, b: m.digitize(x, b, right=True),
     (np.float32([0.2, 6.4, 3.0, 1.0]), np.float32([4.0, 2.5, 1.0, 0.0]))),
    ("bincount", lambda m, x: m.bincount(x, length=7), (np.int32([0, 1, 1, 3, 2, 1, 7]),)),
    ("bincount_weights", lambda m, x, w: m.bincount(x, w, length=4),
     (np.int32([0, 1, 1, 3]), np.float32([0.5, 1, 2, 4]))),
    ("histogram", lambda m, a: m.histogram(a, bins=4),
     (np.float32([1, 2, 2, 3, 3, 3, 4, 9]),)),
    ("histogram_edges", lambda m, a: m.histogram(a, bins=np.float32([0, 2, 5, 10])),
     (np.float32([1, 2, 2, 3, 3, 3, 4, 9, 11]),)),
    ("interp", lambda m, x, xp_, fp: m.interp(x, xp_, fp),
     (np.float32([-1, 0.5, 1.5, 2.0, 5]), np.float32([0, 1, 2, 3]),
      np.float32([10, 20, 0, 5]))),
    ("interp_left_right", lambda m, x, xp_, fp: m.interp(x, xp_, fp, left=-1.0, right=99.0),
     (np.float32([-1, 0.5, 5]), np.float32([0, 1, 2, 3]), np.float32([10, 20, 0, 5]))),
    ("polyval", lambda m, p, x: m.polyval(p, x), (np.float32([2, -1, 3]),
                                                  np.float32([[0, 1], [2, -3]]))),
    ("kron", lambda m, a, b: m.kron(a, b), (np.float32([[1, 2], [3, 4]]),
                                             np.float32([[0, 1, 2]]))),
    ("cov", lambda m, a: m.cov(a), (rng.standard_normal((3, 6)).astype(np.float32),)),
    ("corrcoef", lambda m, a: m.corrcoef(a), (rng.standard_normal((3, 6)).astype(np.float32),)),
    ("isin", lambda m, a, b: m.isin(a, b), (INTS, np.int32([1, 4]))),
    ("setdiff1d_size", lambda m, a, b: m.setdiff1d(a, b, size=6, fill_value=-1),
     (INTS, np.int32([1, 4]))),
    ("union1d_size", lambda m, a, b: m.union1d(a, b, size=9, fill_value=-1),
     (np.int32([5, 1, 1]), np.int32([2, 9]))),
    ("intersect1d_size", lambda m, a, b: m.intersect1d(a, b, size=4, fill_value=0),
     (np.int32([5, 1, 1, 7]), np.int32([1, 9, 7]))),
]

CLOSE = {"cov", "corrcoef", "interp", "polyval", "histogram"}


@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_matches_jax_eagerly(name, fn, args):
    got, want = fn(xnp, *args), fn(jnp, *args)
    if name in CLOSE:
        for g, w in zip(*(x if isinstance(x, tuple) else (x,) for x in (got, want))):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
    else:
        same(got, want)


JIT = [c for c in CASES if "size" in c[0] or c[0] in ("searchsorted_left", "digitize",
                                                      "bincount", "interp", "kron", "isin",
                                                      "where_one_arg", "histogram")]


@pytest.mark.parametrize("name,fn,args", JIT, ids=[c[0] for c in JIT])
def test_matches_jax_under_jit(name, fn, args):
    got = xp.jit(lambda *a: fn(xnp, *a))(*args)
    want = jax.jit(lambda *a: fn(jnp, *a))(*args)
    if name in CLOSE:
        for g, w in zip(*(x if isinstance(x, tuple) else (x,) for x in (got, want))):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
    else:
        same(got, want)


def test_isscalar():
    assert xnp.isscalar(1) and xnp.isscalar(2.5) and xnp.isscalar(np.float32(1))
    assert xnp.isscalar(np.asarray(3)) == jnp.isscalar(np.asarray(3))
    assert not xnp.isscalar([1]) and not xnp.isscalar(np.zeros(2))
    assert xp.jit(lambda x: xnp.zeros(()) + (1 if xnp.isscalar(x) else 2))(np.float32(1)) == 1


@pytest.mark.parametrize("call", [
    lambda x: xnp.unique(x), lambda x: xnp.nonzero(x), lambda x: xnp.bincount(x),
    lambda x: xnp.where(x > 1)])
def test_data_dependent_sizes_under_jit_ask_for_size(call):
    with pytest.raises(Exception, match="size="):
        xp.jit(call)(INTS)
