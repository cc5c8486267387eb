"""Advanced indexing, take / take_along_axis, pad, and the strict gather / dynamic_slice
primitives: against NumPy (eagerly and under jit on both backends) and jax (gradients and
out-of-bounds behaviour under jit)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.errors import XlapyError
from xlapy.frontend.primitives import indexing as I
from xlapy.numpy._advanced import XlapyIndexError, gather_plan, make_plan, normalize_key

# NumPy's semantics, 64-bit dtypes included, are what these rows check: run with
# jax_enable_x64 on (test_x64.py checks the 32-bit default mode)
pytestmark = pytest.mark.usefixtures("x64")

BACKENDS = ["cpu", "interpreter"]
X = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
M2 = X[:, :, 0] % 7 > 2  # 7 True entries

# keys whose index arrays are concrete: x[key] must equal NumPy's, shape included
KEYS = [
    ("int array", (np.array([2, 0, -1, 0]),)),
    ("list", ([1, 1],)),
    ("2d array", (np.array([[0, 1], [2, -3]]),)),
    ("slice then array", (slice(None), [0, -1, 2])),
    ("int then slice then array (separated)", (0, slice(None), [1, 2])),
    ("arrays separated by slice", ([0, 2], slice(1, 3), [4, 0])),
    ("adjacent arrays broadcast", (slice(None), [[0], [3]], [1, 4])),
    ("adjacent int and array", (slice(None), 1, [0, 4, 4])),
    ("None between arrays", (slice(None), [0, 1], None, [0, 1])),
    ("ellipsis then array", (Ellipsis, None, [4, 0])),
    ("reversed slice and array", (slice(None, None, -1), [3, 0])),
    ("strided slice and array", (slice(0, 3, 2), slice(None), [-1])),
    ("0-d True", (True,)),
    ("0-d False", (False,)),
    ("bool mask 3d", (X > 30,)),
    ("bool mask on middle axis", (slice(None), np.array([True, False, True, True]))),
    ("bool mask 2d then array", (M2, [1, 2, 3, 4, 0, 1, -1])),
    ("empty int array", (np.array([], dtype=np.int64),)),
    ("uint8 indices", (slice(None), np.array([3, 1], dtype=np.uint8))),
]


@pytest.mark.parametrize("key", [k for _, k in KEYS], ids=[n for n, _ in KEYS])
def test_getitem_concrete_keys_eager_and_jit(key):
    want = X[key]
    got = xnp.getitem(X, key)
    assert isinstance(got, np.ndarray)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    for be in BACKENDS:
        out = xp.jit(lambda x: x[key], backend=be)(X)
        assert out.shape == want.shape
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_getitem_traced_index_arrays(backend):
    i = np.array([[2, -1], [0, 1]])
    j = np.array([4, -5])
    f = xp.jit(lambda x, i, j: (x[i, :, j], x[:, i], x[1, i, j], x[i, 1:3, j]), backend=backend)
    for got, want in zip(f(X, i, j), (X[i, :, j], X[:, i], X[1, i, j], X[i, 1:3, j])):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
def test_traced_index_dtypes(dtype):
    i = np.array([3, 0, 2], dtype=dtype)
    got = xp.jit(lambda x, i: x[:, i])(X, i)
    np.testing.assert_array_equal(got, X[:, i.astype(np.int64)])


def test_out_of_bounds_concrete_raises_like_numpy():
    with pytest.raises(XlapyIndexError, match="out of bounds for axis 0 with size 3"):
        xnp.getitem(X, np.array([0, 3]))
    with pytest.raises(IndexError):  # also a plain IndexError, as NumPy's
        xnp.getitem(X, (slice(None), [-5]))
    with pytest.raises(XlapyIndexError):  # concrete indices are checked under jit too
        xp.jit(lambda x: x[np.array([7])])(X)


def test_out_of_bounds_traced_clamps_like_jax():
    i = np.array([7, -8, 1, -1])
    x = X[:, 0, 0].copy()
    want = np.asarray(jax.jit(lambda x, i: x[i])(jnp.asarray(x), jnp.asarray(i)))
    for be in BACKENDS:
        np.testing.assert_array_equal(xp.jit(lambda x, i: x[i], backend=be)(x, i), want)


def test_bad_keys_raise_clear_errors():
    with pytest.raises(XlapyError, match="xnp.where"):
        xp.jit(lambda x, m: x[m])(X, X > 3)
    with pytest.raises(XlapyIndexError, match="boolean index did not match"):
        xnp.getitem(X, np.array([True, False]))
    with pytest.raises(XlapyIndexError, match="integer"):
        xnp.getitem(X, np.array([0.5]))
    with pytest.raises(XlapyError, match="too many indices"):
        xnp.getitem(X, (0, 0, [0], 0))


def _jax64(fn, *args):
    with jax.enable_x64(True):
        out = fn(*[jnp.asarray(a) for a in args])
        return jax.tree_util.tree_map(np.asarray, out)


def test_grad_of_advanced_indexing_matches_jax():
    i = np.array([[1, 1], [0, 2]])
    j = np.array([4, 4])

    def loss(m, x):
        return m.sum(m.sin(x[i, 1:3, j]) ** 2) + m.sum(m.cos(x[:, [0, 0, 3], 2]))

    want = _jax64(jax.grad(lambda x: loss(jnp, x)), X / 10)
    np.testing.assert_allclose(xp.grad(lambda x: loss(xnp, x))(X / 10), want, rtol=1e-12)
    np.testing.assert_allclose(xp.jit(xp.grad(lambda x: loss(xnp, x)))(X / 10), want,
                               rtol=1e-12)


def test_grad_through_traced_clamped_indices_is_the_clamped_functions_gradient():
    # x[i] with traced out-of-bounds i reads the clamped position, and the gradient goes
    # there too. (jax's gradient drops those entries instead — its transpose scatter drops
    # out-of-bounds updates — which is not the derivative of what its forward pass computed.)
    i = np.array([5, -1, 0, -9])  # reads x[4], x[4], x[0], x[0]
    got = xp.jit(xp.grad(lambda x, i: xnp.sum(x[i] * xnp.arange(4.0))))(X[0, 0], i)
    np.testing.assert_array_equal(got, [2.0 + 3.0, 0, 0, 0, 0.0 + 1.0])


# ---- take / take_along_axis -------------------------------------------------------------------

@pytest.mark.parametrize("mode", [None, "wrap", "clip"])
@pytest.mark.parametrize("axis", [None, 0, 2, -2])
def test_take_matches_numpy(mode, axis):
    ind = np.array([[0, 2], [-1, 1]]) if mode is None else np.array([[7, -2], [1, -9]])
    want = np.take(X, ind, axis=axis, mode=mode or "raise")
    np.testing.assert_array_equal(xnp.take(X, ind, axis=axis, mode=mode), want)
    got = xp.jit(lambda x, i: xnp.take(x, i, axis=axis, mode=mode))(X, ind)
    np.testing.assert_array_equal(got, want)


def test_take_fill_mode():
    got = xp.jit(lambda x, i: xnp.take(x, i, mode="fill", fill_value=-1.0))(
        np.arange(4.0), np.array([0, 4, -1, -5]))
    np.testing.assert_array_equal(got, [0.0, -1.0, 3.0, -1.0])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_along_axis_with_argsort(axis):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 5))
    ind = np.argsort(a, axis=axis)
    want = np.take_along_axis(a, ind, axis)
    np.testing.assert_array_equal(xnp.take_along_axis(a, ind, axis), want)
    np.testing.assert_array_equal(
        xp.jit(lambda a, i: xnp.take_along_axis(a, i, axis))(a, ind), want)


def test_take_along_axis_broadcasts_and_differentiates():
    a = np.arange(12.0).reshape(3, 4) / 7
    ind = np.array([[0, -1, 0]])  # (1, 3) broadcasts against a's 3 rows
    want = np.take_along_axis(a, ind % 4, 1)
    np.testing.assert_array_equal(xp.jit(lambda a: xnp.take_along_axis(a, ind, 1))(a), want)
    g = xp.grad(lambda a: xnp.sum(xnp.sin(xnp.take_along_axis(a, ind, 1))))(a)
    jg = _jax64(jax.grad(lambda a: jnp.sum(jnp.sin(jnp.take_along_axis(a, ind, 1)))), a)
    np.testing.assert_allclose(g, jg, rtol=1e-12)


# ---- pad ----------------------------------------------------------------------------------------

PADS = [
    ("constant", 2, {}),
    ("constant", ((1, 0), (0, 2)), {"constant_values": 7}),
    ("constant", ((1, 2), (2, 1)), {"constant_values": ((1, 2), (3, 4))}),
    ("edge", ((2, 1), (0, 3)), {}),
    ("reflect", ((2, 1), (3, 0)), {}),
    ("symmetric", (1, 3), {}),
    ("wrap", ((3, 1), (2, 4)), {}),
]


@pytest.mark.parametrize("mode,width,kw", PADS, ids=[p[0] for p in PADS])
def test_pad_matches_numpy(mode, width, kw):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    want = np.pad(a, width, mode=mode, **kw)
    got = xnp.pad(a, width, mode=mode, **kw)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(xp.jit(lambda a: xnp.pad(a, width, mode=mode, **kw))(a), want)


def test_pad_grad_and_errors():
    a = np.arange(4.0)
    g = xp.grad(lambda a: xnp.sum(xnp.pad(a, (2, 1), mode="reflect") ** 2))(a)
    jg = _jax64(jax.grad(lambda a: jnp.sum(jnp.pad(a, (2, 1), mode="reflect") ** 2)), a)
    np.testing.assert_allclose(g, jg)
    with pytest.raises(XlapyError, match="at most 3"):
        xnp.pad(a, 4, mode="reflect")
    with pytest.raises(XlapyError, match="not supported"):
        xnp.pad(a, 1, mode="median")


# ---- strict primitives --------------------------------------------------------------------------

def test_gather_primitive_clip_and_fill_modes():
    dn = I.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                  start_index_map=(0,))
    x = np.arange(12.0).reshape(4, 3)
    idx = np.array([[1], [9], [-2]])
    clip = I.gather(x, idx, dn, (1, 3))
    np.testing.assert_array_equal(clip, x[[1, 3, 0]])
    fill = xp.jit(lambda x, i: I.gather(x, i, dn, (1, 3), mode="fill"))(x, idx)
    np.testing.assert_array_equal(fill[0], x[1])
    assert np.isnan(fill[1:]).all()
    with pytest.raises(XlapyError, match="gather"):
        I.gather(x, idx, dn, (2, 3))  # collapsed dim needs slice size 1


def test_gather_with_batching_dims_matches_take_along_axis():
    x = np.arange(24.0).reshape(2, 3, 4)
    ind = np.array([[[3, 0]], [[1, 1]]])  # (2, 1, 2), broadcast on dim 1 below
    ind = np.broadcast_to(ind, (2, 3, 2)).copy()
    for be in BACKENDS:
        got = xp.jit(lambda x, i: I.gather_along_axis(x, i, 2), backend=be)(x, ind)
        np.testing.assert_array_equal(got, np.take_along_axis(x, ind, 2))


@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_slice_and_update_clamp(backend):
    x = np.arange(20.0).reshape(4, 5)
    f = xp.jit(lambda x, i, j: (I.dynamic_slice(x, (i, j), (2, 3)),
                                I.dynamic_update_slice(x, -np.ones((2, 2)), (i, j))),
               backend=backend)
    for i, j in [(1, 1), (3, 4), (-2, 0), (np.int32(2), np.int32(9))]:
        s, u = f(x, np.asarray(i), np.asarray(j))
        ci, cj = min(max(int(i), 0), 2), min(max(int(j), 0), 2)
        np.testing.assert_array_equal(s, x[ci:ci + 2, cj:cj + 3])
        want = x.copy()
        uj = min(max(int(j), 0), 3)
        want[ci:ci + 2, uj:uj + 2] = -1
        np.testing.assert_array_equal(u, want)


def test_dynamic_slice_grads_match_jax():
    x = np.arange(20.0).reshape(4, 5) / 9
    u = np.ones((2, 2)) * 0.5

    def loss(lax, m, x, u, i):
        y = lax.dynamic_update_slice(x, u * x[0, :2], (i, i + 1))
        return m.sum(m.sin(lax.dynamic_slice(y, (i - 1, i), (3, 3))) ** 2)

    for i in (1, 3):
        # the lambda uses this iteration's values: it is called at once
        want = _jax64(jax.grad(lambda x, u: loss(jax.lax, jnp, x, u, i), (0, 1)), x, u)  # noqa: B023
        got = xp.jit(xp.grad(lambda x, u, i: loss(I, xnp, x, u, i), (0, 1)))(x, u, np.int64(i))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)


def test_dynamic_slice_errors():
    with pytest.raises(XlapyError, match="dynamic_slice"):
        I.dynamic_slice(np.zeros((3, 3)), (0,), (1, 1))
    with pytest.raises(XlapyError, match="dynamic_slice"):
        I.dynamic_slice(np.zeros((3, 3)), (0, 0), (4, 1))


BOOL_SCALAR_KEYS = [(Ellipsis, True), (Ellipsis, X[0] > 7), [[True, False, True, True]] * 3,
                    (1, Ellipsis, False)]


@pytest.mark.parametrize("key", BOOL_SCALAR_KEYS)
def test_getitem_bool_scalars_after_ellipsis_and_nested_bool_lists(key):
    np.testing.assert_array_equal(xnp.getitem(X, key), X[key])


@pytest.mark.parametrize("key", BOOL_SCALAR_KEYS)
def test_normalize_key_counts_bool_dims_like_numpy(key):
    plan = make_plan(X.shape, normalize_key(key, X.ndim))
    np.testing.assert_array_equal(gather_plan(X, plan), X[key])
    np.testing.assert_array_equal(xnp.at(X)[key].get(), X[key])
