"""sort / argsort / cumsum / cumprod (xlapy.numpy) and the strict sort and cumulative
primitives: against NumPy (eagerly and under jit on both backends) and jax (gradients)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.errors import XlapyError
from xlapy.frontend.primitives import sorting as So

# NumPy's semantics, 64-bit dtypes included, are what these rows check: run with
# jax_enable_x64 on (test_x64.py checks the 32-bit default mode)
pytestmark = pytest.mark.usefixtures("x64")

BACKENDS = ["cpu", "interpreter"]
RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 6))
TIES = np.array([[3, 1, 2, 1, 3, 0], [5, 5, 5, 1, 1, 2]], dtype=np.int32)
NANS = np.array([2.0, np.nan, -1.0, np.inf, np.nan, -np.inf, 0.0, -0.0])


def _jax64(fn, *args):
    with jax.enable_x64(True):
        return jax.tree_util.tree_map(np.asarray, fn(*[jnp.asarray(a) for a in args]))


CASES = [("float", A, -1), ("float axis 0", A, 0), ("ties int32", TIES, 1),
         ("nan inf", NANS, 0), ("flatten", A, None), ("bool", A > 0, 1),
         ("uint8", np.array([200, 3, 255, 0, 3], np.uint8), 0),
         ("float32 3d", RNG.standard_normal((2, 3, 5)).astype(np.float32), 1)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,a,axis", CASES, ids=[c[0] for c in CASES])
def test_sort_and_argsort_match_numpy(name, a, axis, backend):
    want_s = np.sort(a, axis=axis)
    want_i = np.argsort(a, axis=axis, kind="stable")
    for s, i in ((xnp.sort(a, axis), xnp.argsort(a, axis)),
                 xp.jit(lambda a: (xnp.sort(a, axis), xnp.argsort(a, axis)), backend=backend)(a)):
        assert s.dtype == want_s.dtype and i.dtype == want_i.dtype
        np.testing.assert_array_equal(s, want_s)
        np.testing.assert_array_equal(i, want_i)  # stable: ties keep their order


@pytest.mark.parametrize("backend", BACKENDS)
def test_strict_sort_multiple_operands_and_keys(backend):
    k1 = np.array([1, 0, 1, 0, 1, 0], np.int32)
    k2 = np.array([3.0, 2.0, 1.0, 2.0, np.nan, -1.0])
    v = np.arange(6.0)
    f = xp.jit(lambda k1, k2, v: (So.sort([k1, k2, v], num_keys=2), So.sort([k1, v], 0)),
               backend=backend)
    (s1, s2, sv), (t1, tv) = f(k1, k2, v)
    order = np.lexsort((k2, k1))
    np.testing.assert_array_equal(s1, k1[order])
    np.testing.assert_array_equal(s2, k2[order])
    np.testing.assert_array_equal(sv, v[order])
    np.testing.assert_array_equal(tv, [1, 3, 5, 0, 2, 4])  # stable on one key


def test_sort_errors():
    with pytest.raises(XlapyError, match="0-d"):
        xnp.sort(np.float64(1.0))
    with pytest.raises(XlapyError, match="out of bounds"):
        xnp.sort(A, axis=2)
    with pytest.raises(XlapyError, match="same shape|one shape"):
        So.sort([A, A[:2]])
    with pytest.raises(XlapyError, match="num_keys"):
        So.sort([A, A], num_keys=3)


def test_sort_grad_matches_jax():
    def loss(m, a):
        s = m.sort(a, axis=1)
        return m.sum(s * m.arange(6.0) ** 2) + m.sum(m.sin(m.sort(a, axis=0)[0]))

    want = _jax64(jax.grad(lambda a: loss(jnp, a)), A)
    np.testing.assert_allclose(xp.grad(lambda a: loss(xnp, a))(A), want, rtol=1e-12)
    np.testing.assert_allclose(xp.jit(xp.grad(lambda a: loss(xnp, a)))(A), want, rtol=1e-12)


def test_strict_sort_grad_of_value_operand():
    # sort values by integer keys: the gradient flows back through the permutation
    keys = np.array([2, 0, 1, 0], np.int32)
    g = xp.grad(lambda v: xnp.sum(So.sort([keys, v])[1] * np.array([1.0, 10, 100, 1000])))(
        np.zeros(4))
    np.testing.assert_array_equal(g, [1000.0, 1.0, 100.0, 10.0])


# ---- cumulative ops ---------------------------------------------------------------------------

CUM_CASES = [("f64 axis 1", A, 1, None), ("f64 flatten", A, None, None),
             ("int32 -> int64", TIES, 1, None), ("bool", A > 0, 0, None),
             ("uint8", np.array([200, 100, 7], np.uint8), 0, None),
             ("dtype arg", TIES, 0, np.float32),
             ("f32 3d", A.reshape(2, 3, 4).astype(np.float32), -2, None)]


@pytest.mark.parametrize("fn", ["cumsum", "cumprod"])
@pytest.mark.parametrize("name,a,axis,dtype", CUM_CASES, ids=[c[0] for c in CUM_CASES])
def test_cumsum_cumprod_match_numpy(fn, name, a, axis, dtype):
    want = getattr(np, fn)(a, axis=axis, dtype=dtype)
    got = getattr(xnp, fn)(a, axis=axis, dtype=dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)
    for be in BACKENDS:
        out = xp.jit(lambda a: getattr(xnp, fn)(a, axis=axis, dtype=dtype), backend=be)(a)
        assert out.dtype == want.dtype
        np.testing.assert_allclose(out, want, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_strict_cumulative_ops_with_reverse_and_nan(backend):
    x = np.array([[1.0, 3.0, 2.0, np.nan, 5.0], [-1.0, -4.0, 0.5, 2.0, -7.0]])
    f = xp.jit(lambda x: [fn(x, 1, rev) for fn in (So.cumsum, So.cumprod, So.cummax, So.cummin)
                          for rev in (False, True)], backend=backend)
    got = f(x)
    acc = [np.cumsum, np.cumprod, np.maximum.accumulate, np.minimum.accumulate]
    want = [w for a in acc for w in (a(x, axis=1), a(x[:, ::-1], axis=1)[:, ::-1])]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)  # NaN propagates through max / min as in XLA


def test_cumulative_grads_match_jax():
    x = RNG.uniform(0.5, 1.5, (3, 5)) * np.sign(RNG.standard_normal((3, 5)))
    w = RNG.standard_normal((3, 5))

    def loss(m, lax, x):
        return (m.sum(m.sin(m.cumsum(x, axis=1)) * w) + m.sum(m.cumprod(x, axis=0) * w)
                + m.sum(lax.cummax(x, axis=1) * w) + m.sum(lax.cummin(x, axis=0, reverse=True) * w)
                + m.sum(lax.cumsum(x * x, axis=1, reverse=True) * w))

    want = _jax64(jax.grad(lambda x: loss(jnp, jax.lax, x)), x)
    got = xp.jit(xp.grad(lambda x: loss(xnp, So, x)))(x)
    np.testing.assert_allclose(got, want, rtol=1e-11)
    np.testing.assert_allclose(xp.grad(lambda x: loss(xnp, So, x))(x), want, rtol=1e-11)


def test_cummax_grad_with_ties_goes_to_the_latest_record():
    g = xp.grad(lambda x: xnp.sum(So.cummax(x, 0) * np.array([1.0, 10, 100, 1000])))(
        np.array([2.0, 1.0, 2.0, 3.0]))
    # running max 2, 2, 2, 3: outputs 0 and 1 come from x[0], output 2 from the tie x[2]
    np.testing.assert_array_equal(g, [11.0, 0.0, 100.0, 1000.0])


def test_cumsum_method_and_errors():
    assert np.array_equal(xp.jit(lambda a: a.cumsum(axis=0))(TIES), np.cumsum(TIES, axis=0))
    with pytest.raises(XlapyError, match="out="):
        xnp.cumsum(A, out=np.zeros_like(A))
    with pytest.raises(XlapyError, match="out of range|out of bounds"):
        So.cumsum(A, axis=3)
