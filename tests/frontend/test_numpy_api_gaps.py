"""jax.numpy / jax.numpy.linalg / jax.scipy.linalg functions xlapy added for JAX's example
programs, against jax: put_along_axis, lexsort, partition, argpartition, compress,
extract, piecewise, isdtype, polyfit; linalg.cond, vector_norm, matrix_norm, outer, cross,
tensorinv, tensorsolve (and norm of a vector with ord); scipy.linalg block_diag,
toeplitz. Values, dtypes, jit, and errors."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import jax.scipy.linalg as JSL
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
import xlapy.scipy.linalg as XSL
from xlapy.errors import ShapeError, UnsupportedError, XlapyError

RNG = np.random.default_rng(0)
A = RNG.integers(0, 5, (3, 6)).astype(np.float32)
M = RNG.standard_normal((2, 3, 3)).astype(np.float32)


def _same(x, y, tol=None):
    x, y = np.asarray(x), np.asarray(y)
    assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, x.dtype, y.shape, y.dtype)
    if tol is None:
        np.testing.assert_array_equal(x, y)
    else:
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def test_put_along_axis():
    idx = np.argsort(A, axis=1)[:, :2]
    _same(xnp.put_along_axis(A, idx, -1.0, 1, inplace=False),
          jnp.put_along_axis(A, idx, -1.0, 1, inplace=False))
    col = np.int32([[1], [-2], [3]])
    vals = np.float32([[7], [8], [9]])
    _same(xp.jit(lambda a: xnp.put_along_axis(a, col, vals, 1, inplace=False))(A),
          jnp.put_along_axis(A, col, vals, 1, inplace=False))
    _same(xnp.put_along_axis(A, np.int32([0, 5]), 3.0, None, inplace=False),
          jnp.put_along_axis(A, np.int32([0, 5]), 3.0, None, inplace=False))
    with pytest.raises(XlapyError, match="inplace=False"):
        xnp.put_along_axis(A, idx, 0.0, 1)


def test_lexsort_partition_argpartition():
    keys = [RNG.integers(0, 3, 8), RNG.integers(0, 3, 8)]
    _same(xnp.lexsort(keys), jnp.lexsort(keys))
    stacked = np.stack([A, 2 * A])
    _same(xnp.lexsort(stacked, axis=0), jnp.lexsort(stacked, axis=0))
    for kth in (0, 2, -1):
        for axis in (-1, 0):
            _same(xnp.partition(A, kth, axis), jnp.partition(A, kth, axis))
            _same(xp.jit(lambda a, k=kth, ax=axis: xnp.argpartition(a, k, ax))(A),
                  jnp.argpartition(A, kth, axis))
    with pytest.raises(XlapyError, match="kth"):
        xnp.partition(A, 6)


def test_compress_extract_piecewise():
    cond = np.array([True, False, True])
    _same(xnp.compress(cond, A, axis=0), jnp.compress(cond, A, axis=0))
    _same(xnp.compress(cond, A), jnp.compress(cond, A))
    _same(xnp.compress(cond, A, axis=0, size=3, fill_value=-5),
          jnp.compress(cond, A, axis=0, size=3, fill_value=-5))
    _same(xnp.extract(A > 2, A), jnp.extract(A > 2, A))
    _same(xp.jit(lambda a: xnp.extract(a > 2, a, size=5))(A), jnp.extract(A > 2, A, size=5))
    x = np.linspace(-2, 2, 7).astype(np.float32)

    def pw(N):
        return N.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v ** 2, 0.5])
    _same(pw(xnp), pw(jnp))
    _same(xp.jit(lambda v: xnp.piecewise(v, [v < 0], [0.0, lambda u: u]))(x),
          jnp.piecewise(x, [x < 0], [0.0, lambda u: u]))
    with pytest.raises(XlapyError, match="funclist"):
        xnp.piecewise(x, [x < 0], [1.0, 2.0, 3.0])
    with pytest.raises(ShapeError, match="1-dimensional"):
        xnp.compress(A > 0, A)


def test_isdtype_and_polyfit():
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
             "complex floating", "numeric", ("bool", "real floating"), np.float32]
    for d in (np.int8, np.uint16, np.float32, jnp.bfloat16, np.complex64, np.bool_):
        for k in kinds:
            assert xnp.isdtype(d, k) == jnp.isdtype(d, k), (d, k)
    with pytest.raises(XlapyError, match="kind"):
        xnp.isdtype(np.float32, "floaty")
    x = np.linspace(0, 1, 9).astype(np.float32)
    y = (3 * x ** 2 - x + 0.5).astype(np.float32)
    _same(xnp.polyfit(x, y, 2), jnp.polyfit(x, y, 2), 1e-5)
    y2 = np.stack([y, 2 * y], 1)
    _same(xp.jit(lambda a, b: xnp.polyfit(a, b, 1))(x, y2), jnp.polyfit(x, y2, 1), 1e-5)
    _same(xnp.polyfit(x, y, 2, w=x + 1), jnp.polyfit(x, y, 2, w=x + 1), 1e-5)
    with pytest.raises(UnsupportedError, match="full=True"):
        xnp.polyfit(x, y, 2, full=True)
    with pytest.raises(ShapeError, match="polyfit"):
        xnp.polyfit(x, y[:3], 2)


def test_linalg_additions():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in (None, "fro", 1, np.inf, -2, "nuc"):
            _same(xnp.linalg.cond(M, p), jnp.linalg.cond(M, p), 1e-4)
        sing = np.float32([[1, 2], [2, 4]])
        _same(xnp.linalg.cond(sing, 1), jnp.linalg.cond(sing, 1))
    for kw in ({}, {"axis": 1}, {"axis": (0, 2)}, {"ord": 1, "keepdims": True},
               {"keepdims": True, "ord": np.inf}, {"ord": 0}):
        _same(xnp.linalg.vector_norm(M, **kw), jnp.linalg.vector_norm(M, **kw), 1e-5)
    for ord_ in (1, np.inf, 3, 0, -np.inf):
        _same(xnp.linalg.norm(M[0, 0], ord=ord_), jnp.linalg.norm(M[0, 0], ord=ord_), 1e-5)
    for kw in ({}, {"ord": 2}, {"ord": "nuc", "keepdims": True}):
        _same(xnp.linalg.matrix_norm(M, **kw), jnp.linalg.matrix_norm(M, **kw), 1e-5)
    _same(xnp.linalg.outer(M[0, 0], M[0, 1]), jnp.linalg.outer(M[0, 0], M[0, 1]), 1e-6)
    _same(xnp.linalg.cross(M[0], M[1]), jnp.linalg.cross(M[0], M[1]), 1e-6)
    t = RNG.standard_normal((4, 6, 8, 3)).astype(np.float32)
    _same(xnp.linalg.tensorinv(t, 2), jnp.linalg.tensorinv(t, 2), 1e-3)
    b = RNG.standard_normal((4, 6)).astype(np.float32)
    _same(xp.jit(xnp.linalg.tensorsolve)(t, b), jnp.linalg.tensorsolve(t, b), 1e-3)
    with pytest.raises(ShapeError, match="1-d"):
        xnp.linalg.outer(M, M)
    with pytest.raises(ShapeError, match="size 3"):
        xnp.linalg.cross(M[0, :, :2], M[1, :, :2])
    with pytest.raises(ShapeError, match="tensorinv"):
        xnp.linalg.tensorinv(t, 1)


def test_block_diag_and_toeplitz():
    a, b = np.float32([[1, 2], [3, 4]]), np.int32([5, 6, 7])
    _same(XSL.block_diag(a, b, 2.5), JSL.block_diag(a, b, 2.5))
    _same(xp.jit(XSL.block_diag)(a, a), JSL.block_diag(a, a))
    c, r = np.float32([1, 2, 3]), np.float32([9, 4, 5, 6])
    _same(XSL.toeplitz(c, r), JSL.toeplitz(c, r))
    _same(XSL.toeplitz(np.complex64([1, 2j, 3])), JSL.toeplitz(np.complex64([1, 2j, 3])))
    cb = np.float32([[1, 2, 3], [4, 5, 6]])
    _same(xp.jit(XSL.toeplitz)(cb), JSL.toeplitz(cb))
    with pytest.raises(ShapeError, match="at most 2"):
        XSL.block_diag(np.ones((2, 2, 2)))
    assert jax.__name__ == "jax"
