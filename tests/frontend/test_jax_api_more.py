"""More of JAX's API against JAX itself: xlapy.numpy (r_, c_, splits, resize, choose,
histograms, bits, unique_*, polynomials, place/put, host helpers, ...), xlapy.numpy.linalg's
array-API names, xlapy.lax (shape helpers, patches, mulhi, reduce_xor, scatters,
rng_bit_generator, ...) and the top level (custom_gradient, linear_transpose, typeof,
debug_nans, ...): values, shapes and dtypes, eagerly and under xlapy.jit."""

from __future__ import annotations

import io
import warnings

import jax
import jax.lax as jl
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.lax as xl
import xlapy.numpy as xnp
from xlapy.errors import XlapyError

rng = np.random.default_rng(1)
F = rng.standard_normal((4, 6)).astype(np.float32)
V = rng.standard_normal(7).astype(np.float32)
I8 = np.array([0, 1, 2, 2, 1, 0, 2], np.int32)
U8 = np.array([[5, 255, 0], [128, 7, 64]], np.uint8)
Z = np.zeros((0,), np.float32)
B = np.array([1, 0, 1, 1, 0, 0, 0, 1, 1, 1], bool)
W = rng.uniform(0.5, 2, 7).astype(np.float32)
X2 = rng.uniform(0, 5, 9).astype(np.float32)
Y2 = rng.uniform(-1, 1, 9).astype(np.float32)
T = np.array([0, 0, 1, 2, 0, 3, 0, 0], np.int32)
FS = np.float32([0.0, -0.0, 1.0, -1.0, 3.5, 1e10, np.inf, -np.inf, np.nan, 1e-40, 2.0 ** -110,
                 np.finfo(np.float32).max, np.finfo(np.float32).tiny])


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for e in x for leaf in _leaves(e)]
    return [x]


def _same(got, want, tol=2e-5, dtype=True):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want), (len(got), len(want))
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        if dtype:
            assert g.dtype == w.dtype, (g.dtype, w.dtype)
        if g.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)


# (name, fn(module, *args), args, jit?): fn is called with jnp and with xlapy.numpy
CASES = [
    ("r_slices", lambda m: m.r_[1:5:2, 0, 7:4:-1], (), False),
    ("r_linspace", lambda m: m.r_[-1:1:6j, 0.5], (), False),
    ("r_arrays", lambda m, a: m.r_[a, 3, [4, 5], 0:2], (np.array([1, 2], np.int8),), True),
    ("r_weak_float", lambda m, a: m.r_[a, 3.5], (np.array([1, 2], np.int8),), False),
    ("r_2d", lambda m, a: m.r_[a, a[:1]], (F,), True),
    ("r_axis1", lambda m, a: m.r_["1", a, a], (F,), True),
    ("r_0,2", lambda m: m.r_["0,2", [1, 2], [3, 4]], (), False),
    ("r_-1,2", lambda m: m.r_["-1,2", [1, 2], [3, 4]], (), False),
    ("r_0,2,0", lambda m: m.r_["0,2,0", [1, 2], [3, 4]], (), False),
    ("r_1,3,1", lambda m, a: m.r_["1,3,1", a, a], (F[:2, :2],), False),
    ("r_row", lambda m: m.r_["r", [1, 2], [3, 4]], (), False),
    ("r_col", lambda m: m.r_["c", [1, 2], [3, 4]], (), False),
    ("r_bool", lambda m: m.r_[True, False], (), False),
    ("c_vectors", lambda m, a: m.c_[a, a * 2], (V,), True),
    ("c_rows", lambda m, a: m.c_[a[None], 0, 0, a[None]], (V,), False),
    ("c_slices", lambda m: m.c_[0:3, 1:4], (), False),
    ("hsplit", lambda m, a: m.hsplit(a, 3), (F,), True),
    ("hsplit_1d", lambda m, a: m.hsplit(a, [2, 5]), (V,), False),
    ("vsplit", lambda m, a: m.vsplit(a, [1, 3]), (F,), True),
    ("vsplit_1d", lambda m, a: m.vsplit(a, 1), (V,), False),
    ("dsplit", lambda m, a: m.dsplit(a.reshape(2, 2, 6), 2), (F,), True),
    ("resize", lambda m, a: m.resize(a, (3, 4)), (V,), True),
    ("resize_int", lambda m, a: m.resize(a, 10), (I8,), False),
    ("resize_zero", lambda m, a: m.resize(a, 0), (V,), False),
    ("resize_empty", lambda m, a: m.resize(a, (2, 2)), (Z,), False),
    ("choose", lambda m, i, a: m.choose(i, [a, -a, a * 10]), (I8, V), False),
    ("choose_wrap", lambda m, i, a: m.choose(i - 1, [a, -a], mode="wrap"), (I8, V), True),
    ("choose_clip", lambda m, i, a: m.choose(i * 2 - 1, [a, -a, 2 * a], mode="clip"), (I8, V),
     True),
    ("choose_bcast", lambda m, i: m.choose(i[:3, None], [np.arange(4), 5.0, np.ones(4)]),
     (I8,), False),
    ("diagflat", lambda m, a: m.diagflat(a[:2, :2], 1), (F,), True),
    ("diagflat_neg", lambda m, a: m.diagflat(a, -2), (V,), True),
    ("diagflat_empty", lambda m, a: m.diagflat(a), (Z,), False),
    ("hbe", lambda m, a: m.histogram_bin_edges(a, 5), (V,), True),
    ("hbe_int", lambda m, a: m.histogram_bin_edges(a, 4), (I8,), False),
    ("hbe_range", lambda m, a: m.histogram_bin_edges(a, 4, range=(0, 10)), (I8,), False),
    ("hbe_edges", lambda m, a: m.histogram_bin_edges(a, np.array([0, 1, 3])), (I8,), False),
    ("hbe_same", lambda m: m.histogram_bin_edges(np.float32([2.0, 2.0]), 3), (), False),
    ("hist2d", lambda m, x, y: m.histogram2d(x, y, bins=3), (X2, Y2), True),
    ("hist2d_weights", lambda m, x, y, w: m.histogram2d(x, y, bins=[2, 3], weights=w,
                                                         density=True),
     (X2, Y2, np.linspace(1, 2, 9, dtype=np.float32)), True),
    ("hist2d_edges", lambda m, x, y: m.histogram2d(x, y, bins=np.float32([-1, 0, 1, 2, 5])),
     (X2, Y2), False),
    ("histdd", lambda m, x, y: m.histogramdd(m.stack([x, y, x - y], 1), bins=(2, 3, 2),
                                             range=[(0, 6), None, (-2, 6)]), (X2, Y2), True),
    ("histdd_edges", lambda m, x, y: m.histogramdd(m.stack([x, y], 1),
                                                   bins=(2, np.float32([-1, 0, 0.5, 1]))),
     (X2, Y2), False),
    ("nextafter", lambda m, a: m.nextafter(a, np.float32(1)), (FS[:-4],), True),
    ("nextafter_int", lambda m: m.nextafter(1, 2), (), False),
    ("nextafter_f16", lambda m: m.nextafter(np.float16([1, -2]), np.float16(0)), (), False),
    ("spacing", lambda m, a: m.spacing(a), (FS,), True),
    ("spacing_int", lambda m, a: m.spacing(a), (I8,), False),
    ("spacing_f16", lambda m: m.spacing(np.float16([1, -2, 0, 6e4])), (), False),
    ("packbits", lambda m, b: m.packbits(b), (B,), True),
    ("packbits_axis", lambda m, u: m.packbits(u, axis=-1, bitorder="little"), (U8,), True),
    ("packbits_axis0", lambda m, u: m.packbits(u > 6, axis=0), (U8,), False),
    ("unpackbits", lambda m, u: m.unpackbits(u), (U8,), True),
    ("unpackbits_count", lambda m, u: m.unpackbits(u, axis=1, count=-3, bitorder="little"),
     (U8,), True),
    ("unpackbits_more", lambda m, u: m.unpackbits(u[0], count=30), (U8,), False),
    ("bitwise_count", lambda m: m.bitwise_count(np.int32([0, 1, -1, 7, 2 ** 31 - 1])), (),
     True),
    ("bitwise_count_small", lambda m: (m.bitwise_count(np.int8([-1, -128, 3])),
                                       m.bitwise_count(np.uint8([255])),
                                       m.bitwise_count(np.array([True, False]))), (), False),
    ("array_equiv", lambda m, a: (m.array_equiv(a[0], a[:1].repeat(3, 0)),
                                  m.array_equiv(a, a + 1)), (F,), True),
    ("apply_over_axes", lambda m, a: m.apply_over_axes(m.sum, a.reshape(2, 3, 4), [0, -1]),
     (F,), True),
    ("apply_over_axes_keep", lambda m, a: m.apply_over_axes(
        lambda x, ax: m.cumsum(x, ax), a, [1]), (F,), False),
    ("trim_zeros", lambda m, t: m.trim_zeros(t), (T,), False),
    ("trim_zeros_f", lambda m, t: m.trim_zeros(t, "f"), (T,), False),
    ("trim_zeros_B", lambda m, t: m.trim_zeros(t, "B"), (T,), False),
    ("trim_zeros_all0", lambda m: m.trim_zeros(np.zeros(3, np.int32)), (), False),
    ("trim_zeros_2d", lambda m: m.trim_zeros(np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]]),
                                             axis=1), (), False),
    ("place", lambda m, a: m.place(a, a > 0, np.float32([9, 8]), inplace=False), (V,), True),
    ("place_2d", lambda m, a: m.place(a, a < 0, np.float32([1, 2, 3]), inplace=False), (F,),
     False),
    ("put", lambda m, a: m.put(a, np.array([0, 2, 9, -1]), np.float32([-1, -2]),
                               inplace=False), (V,), True),
    ("put_wrap", lambda m, a: m.put(a, np.array([0, -2, 29]), np.float32([-1, -2, -3]),
                                    mode="wrap", inplace=False), (F,), True),
    ("put_clip", lambda m, a: m.put(a, np.array([0, -2, 9]), np.float32([-1, -2, -3]),
                                    mode="clip", inplace=False), (V,), False),
    ("put_dup", lambda m, a: m.put(a, np.array([1, 1, 1]), np.float32([4, 5, 6]),
                                   inplace=False), (V,), False),
    ("mask_indices", lambda m: m.mask_indices(4, m.triu, 1), (), False),
    ("mask_indices_size", lambda m: m.mask_indices(3, m.tril, 0, size=8), (), True),
    ("sort_complex", lambda m, a: m.sort_complex(a), (V,), True),
    ("sort_complex_int", lambda m, i: m.sort_complex(i.astype(np.int8)), (I8,), False),
    ("sort_complex_c", lambda m: m.sort_complex(np.complex64([1 + 2j, 1 - 1j, 5j, -1])), (),
     False),
    ("unique_all", lambda m, i: tuple(m.unique_all(i.reshape(7, 1))), (I8,), False),
    ("unique_all_size", lambda m, i: tuple(m.unique_all(i, size=5, fill_value=-1)), (I8,),
     True),
    ("unique_all_nan", lambda m: tuple(m.unique_all(np.float32([np.nan, 1, np.nan, 1]))), (),
     False),
    ("unique_all_0d", lambda m: tuple(m.unique_all(np.float32(3))), (), False),
    ("unique_counts", lambda m, i: tuple(m.unique_counts(i)), (I8,), False),
    ("unique_counts_size", lambda m, i: tuple(m.unique_counts(i, size=4)), (I8,), True),
    ("unique_inverse", lambda m, a: tuple(m.unique_inverse(a.round())), (F,), False),
    ("unique_values", lambda m, i: m.unique_values(i), (I8,), False),
    ("unique_values_size", lambda m, i: m.unique_values(i, size=5), (I8,), True),
    ("unique_values_empty", lambda m: m.unique_values(np.float32([])), (), False),
    ("setxor1d", lambda m: m.setxor1d(np.array([1, 2, 3, 3]), np.array([2, 4])), (), False),
    ("setxor1d_2d", lambda m: m.setxor1d(np.array([[1, 2], [3, 5]]), np.float32([2, 4])), (),
     False),
    ("setxor1d_unique", lambda m: m.setxor1d(np.array([1, 2, 3]), np.array([2, 4]),
                                             assume_unique=True), (), False),
    ("setxor1d_size", lambda m, a, b: m.setxor1d(a, b, size=6), (np.array([5, 2, 2, 9]),
                                                                  np.array([2, 7])), True),
    ("setxor1d_size_fill", lambda m, a, b: m.setxor1d(a, b, size=3, fill_value=0),
     (np.array([5, 2]), np.array([2, 5])), True),
    ("setxor1d_nan", lambda m: m.setxor1d(np.float32([np.nan, 1]), np.float32([1, 3])), (),
     False),
    ("setxor1d_empty", lambda m: m.setxor1d(np.array([], np.int32), np.array([], np.int32)),
     (), False),
    ("poly", lambda m, a: m.poly(a[:3]), (V,), True),
    ("poly_int", lambda m: m.poly(np.array([1, 2, 3], np.int8)), (), False),
    ("poly_complex", lambda m: m.poly(np.complex64([1j, -1j])), (), False),
    ("poly_empty", lambda m: m.poly(np.float32([])), (), False),
    ("poly_0d", lambda m: m.poly(np.float32(2)), (), False),
    ("polydiv", lambda m, u, v: m.polydiv(u, v), (V, V[:3]), True),
    ("polydiv_int", lambda m: m.polydiv(np.array([1, -3, 2, 5]), np.array([2, -1, 3])), (),
     False),
    ("polydiv_short", lambda m: m.polydiv(np.float32([1.0]), np.float32([1, -1])), (), False),
    ("polydiv_trim", lambda m: m.polydiv(np.float32([1, -3, 2, 5]), np.float32([1, -1]),
                                         trim_leading_zeros=True), (), False),
    ("polydiv_complex", lambda m: m.polydiv(np.complex64([1 + 1j, -3, 2]), np.float32([1, -1])),
     (), False),
    ("frombuffer", lambda m: (m.frombuffer(b"\x01\x02\x03\x04", dtype=np.uint8),
                              m.frombuffer(np.arange(3.0).tobytes())), (), False),
    ("fromstring", lambda m: (m.fromstring("1 2 3", sep=" "),
                              m.fromstring("1,2,3", dtype=int, sep=",")), (), False),
]

BY_NAME = {c[0]: c for c in CASES}
_WANT: dict = {}


def _want(name):
    """JAX's result for a case: jitted where JAX allows it (one compilation instead of one
    per primitive: the eager JAX calls dominate this file's time), else eagerly."""
    if name not in _WANT:
        _, fn, args, _ = BY_NAME[name]
        try:
            _WANT[name] = jax.jit(lambda *a: fn(jnp, *a))(*args)
        except (TypeError, ValueError, IndexError, NotImplementedError):
            _WANT[name] = fn(jnp, *args)
    return _WANT[name]


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_numpy_matches_jax(name):
    _, fn, args, _ = BY_NAME[name]
    _same(fn(xnp, *args), _want(name))


@pytest.mark.parametrize("name", [c[0] for c in CASES if c[3]])
def test_numpy_under_jit(name):
    _, fn, args, _ = BY_NAME[name]
    _same(xp.jit(lambda *a: fn(xnp, *a))(*args), _want(name))


def test_roots():
    p = np.float32([1, -6, 11, -6])
    for q, kw in [(p, {}), (np.concatenate([[0, 0], p, [0]]).astype(np.float32), {}),
                  (np.array([1, -3, 2]), {}), (np.float32([5]), {}),
                  (np.concatenate([[0], p]).astype(np.float32), {"strip_zeros": False})]:
        got, want = xnp.roots(q, **kw), jnp.roots(q, **kw)
        assert got.dtype == want.dtype and got.shape == want.shape
        key = lambda r: np.lexsort((np.round(r.imag, 3), np.round(r.real, 3), np.isnan(r)))
        g, w = np.asarray(got), np.asarray(want)
        np.testing.assert_allclose(g[key(g)], w[key(w)], rtol=1e-4, atol=1e-4, equal_nan=True)
    got = xp.jit(lambda q: xnp.roots(q, strip_zeros=False))(np.concatenate([[0], p]))
    assert np.isnan(got[-1]) and np.allclose(np.sort(got[:-1].real), [1, 2, 3], atol=1e-4)
    with pytest.raises(XlapyError, match="strip_zeros=False"):
        xp.jit(xnp.roots)(p)
    np.testing.assert_allclose(np.sort(xnp.poly(np.float32([[1, 2], [3, 4]])).real),
                               np.sort(np.poly(np.array([[1, 2], [3, 4]]))), rtol=1e-5)


GRADIENTS = [
    lambda m, a: (m.diagflat(a, 1) ** 2).sum(),
    lambda m, a: (m.resize(a, 10) ** 2).sum(),
    lambda m, a: m.place(a, a > 0, np.float32([2.0]), inplace=False).sum() * 3,
    lambda m, a: (m.put(a, np.array([0, 1]), a[2:4] * 2, inplace=False) ** 2).sum(),
    lambda m, a: m.choose(np.array([0, 1, 1, 0, 1, 0, 0]), [a, a ** 2]).sum(),
    lambda m, a: (m.r_[a, a[:2] * 3] ** 2).sum(),
    lambda m, a: m.poly(a[:3]).sum(),
    lambda m, a: (m.polydiv(a, a[:2] + 3)[0] ** 2).sum(),
    lambda m, a: (m.hsplit(a, [3])[1] ** 3).sum(),
]


@pytest.mark.parametrize("k", range(len(GRADIENTS)))
def test_numpy_gradients(k):
    f = GRADIENTS[k]
    want = jax.grad(lambda a: f(jnp, a))(V)
    np.testing.assert_allclose(xp.grad(lambda a: f(xnp, a))(V), want, rtol=1e-4, atol=1e-5)


def test_numpy_errors_are_named():
    with pytest.raises(XlapyError, match="mode='raise'"):
        xp.jit(lambda i: xnp.choose(i, [V, V]))(I8 % 2)
    with pytest.raises(XlapyError, match="invalid entry"):
        xnp.choose(np.array([0, 3]), [V, V])
    with pytest.raises(XlapyError, match="non-negative"):
        xnp.resize(V, -1)
    with pytest.raises(XlapyError, match="inplace=False"):
        xnp.put(V, [0], 1.0)
    with pytest.raises(XlapyError, match="inplace=False"):
        xnp.place(V, V > 0, [1.0])
    with pytest.raises(XlapyError, match="'raise' is not supported"):
        xnp.put(V, [0], 1.0, mode="raise", inplace=False)
    with pytest.raises(XlapyError, match="uint8"):
        xnp.unpackbits(np.int32([5]))
    with pytest.raises(XlapyError, match="integer or boolean"):
        xnp.packbits(np.float32([1]))
    with pytest.raises(XlapyError, match="integer or boolean"):
        xnp.bitwise_count(np.float32([1]))
    with pytest.raises(XlapyError, match="jit"):
        xp.jit(xnp.trim_zeros)(T)
    with pytest.raises(XlapyError, match="trim must"):
        xnp.trim_zeros(T, "x")
    with pytest.raises(XlapyError, match="size="):
        xp.jit(xnp.unique_values)(I8)
    with pytest.raises(XlapyError, match="size="):
        xp.jit(xnp.setxor1d)(I8, I8)
    with pytest.raises(XlapyError, match="directive"):
        xnp.r_["foo", 1]
    with pytest.raises(XlapyError, match="dimensions"):
        xnp.dsplit(F, 2)
    with pytest.raises(XlapyError, match="not supported"):
        xnp.histogram_bin_edges(V, "auto")
    with pytest.raises(XlapyError, match="bitorder"):
        xnp.packbits(B, bitorder="middle")
    assert not xnp.array_equiv(V, V[:3])


def test_numpy_host_helpers(tmp_path):
    assert xnp.iterable([1]) and not xnp.iterable(1)
    assert xnp.printoptions is np.printoptions and xnp.get_printoptions() == np.get_printoptions()
    with xnp.printoptions(precision=2):
        assert xnp.array_str(np.float32([1.23456])) == "[1.23]"
    assert "1.5" in xnp.array_repr(xnp.asarray(np.float32([1.5])))
    assert xnp.einsum_path("ij,jk->ik", F, F.T)[0] == np.einsum_path("ij,jk->ik", F, F.T)[0]
    _same(xnp.fromiter(range(4), dtype=float), np.arange(4, dtype=np.float32))
    path = tmp_path / "a.npy"
    xnp.save(path, xnp.asarray(F))
    _same(xnp.load(path), jnp.load(path))
    buf = io.BytesIO()
    xnp.savez(buf, a=V, b=I8)
    buf.seek(0)
    with xnp.load(buf) as z:
        np.testing.assert_array_equal(z["b"], I8)
    raw = tmp_path / "raw.bin"
    np.arange(5, dtype=np.float64).tofile(raw)
    _same(xnp.fromfile(raw), np.arange(5, dtype=np.float32))
    with pytest.raises(XlapyError, match="frombuffer"):
        xnp.frombuffer(b"\x01\x02\x03", dtype=np.float32)
    assert xnp.ComplexWarning is jnp.ComplexWarning and xnp.object_ is jnp.object_
    assert xnp.character is jnp.character and xnp.flexible is jnp.flexible
    import ml_dtypes
    for name in ("int4", "uint4", "int2", "uint2", "float8_e4m3fn", "float8_e5m2",
                 "float4_e2m1fn"):
        assert np.dtype(getattr(xnp, name)) == np.dtype(getattr(ml_dtypes, name))
        assert np.dtype(getattr(xnp, name)) == np.dtype(getattr(jnp, name))
    with pytest.raises(XlapyError, match="float8_e4m3fn"):
        xnp.asarray(V, xnp.float8_e4m3fn)


def test_linalg_names():
    A = rng.standard_normal((2, 3, 3)).astype(np.float32)
    for f in (lambda m, a: m.linalg.matrix_transpose(a), lambda m, a: m.linalg.svdvals(a),
              lambda m, a: m.linalg.trace(a, offset=1), lambda m, a: m.linalg.trace(a),
              lambda m, a: m.linalg.vecdot(a, a[::-1], axis=-2),
              lambda m, a: m.linalg.tensordot(a, a.T, axes=2),
              lambda m, a: m.linalg.tensordot(a, a, axes=([1, 2], [2, 1]))):
        _same(f(xnp, A), f(jnp, A), tol=1e-4)
        _same(xp.jit(lambda a, f=f: f(xnp, a))(A), f(jnp, A), tol=1e-4)
    c = (A + 1j * A[::-1]).astype(np.complex64)
    _same(xnp.linalg.vecdot(c, c), jnp.linalg.vecdot(c, c), tol=1e-4)
    _same(xnp.linalg.trace(A.astype(np.int32), dtype=np.float32),
          jnp.linalg.trace(A.astype(np.int32), dtype=np.float32))


# ---- xlapy.lax ------------------------------------------------------------------------------

def test_lax_shape_helpers():
    for args in [((2, 1), (3,)), ((1,), (4, 1), (4, 5)), ((),)]:
        assert xl.broadcast_shapes(*args) == jl.broadcast_shapes(*args)
    conv = [((1, 2, 5, 5), (3, 2, 3, 3), (1, 2), [(1, 1), (0, 0)]),
            ((1, 2, 5, 5), (3, 2, 3, 3), (1, 2), "SAME"), ((2, 4, 7), (6, 2, 4), (3,), "VALID")]
    for a in conv:
        assert xl.conv_shape_tuple(*a) == jl.conv_shape_tuple(*a)
    assert xl.conv_shape_tuple(*conv[0], batch_group_count=1) == jl.conv_shape_tuple(*conv[0])
    dn = ("NHWC", "HWIO", "NHWC")
    for pad in ("SAME", "VALID", [(1, 1), (0, 2)]):
        for strides in ((1, 2), (2, 2)):
            a = ((1, 5, 5, 2), (3, 3, 2, 3), strides, pad, dn)
            assert xl.conv_general_shape_tuple(*a) == jl.conv_general_shape_tuple(*a)
            assert xl.conv_transpose_shape_tuple(*a) == jl.conv_transpose_shape_tuple(*a)
    assert all(type(d) is int for d in xl.conv_general_shape_tuple(*a))
    for w in [((4, 6), (2, 3), (1, 2), [(0, 0), (1, 1)]),
              ((4, 6), (2, 3), (1, 2), [(0, 0), (1, 1)], (2, 1), (1, 2)),
              ((5,), (7,), (1,), [(0, 0)])]:
        assert xl.reduce_window_shape_tuple(*w) == jl.reduce_window_shape_tuple(*w)
    assert xl.reduce_window_shape_tuple((4, 6), (2, 3), (1, 1), "VALID") == (3, 4)
    assert xl.ConvGeneralDilatedDimensionNumbers is not None
    assert xl.DotDimensionNumbers is not None
    with pytest.raises(XlapyError, match="padding"):
        xl.conv_shape_tuple((1, 2, 5, 5), (3, 2, 3, 3), (1, 1), [(1, 1)])


LAX_CASES = [
    ("tile", lambda m, a: m.tile(a, (2, 3)), (F,)),
    ("tile_empty", lambda m, a: m.tile(a[:0], (2, 0)), (F,)),
    ("stack", lambda m, a: m.stack([a, a * 2], axis=-1), (F,)),
    ("unstack", lambda m, a: m.unstack(a, axis=-1), (F,)),
    ("empty", lambda m: (m.empty((2, 3), np.float32), m.empty((0,), np.int32)), ()),
    ("mulhi_i32", lambda m: m.mulhi(np.int32([5, -7, 2 ** 30, -2 ** 31, -1]),
                                    np.int32([3, 2 ** 31 - 1, 8, -2 ** 31, -1])), ()),
    ("mulhi_u32", lambda m: m.mulhi(np.uint32([5, 2 ** 32 - 1, 123456789]),
                                    np.uint32([2 ** 31, 2 ** 32 - 1, 987654321])), ()),
    ("mulhi_8_16", lambda m: (m.mulhi(np.uint8([200, 3]), np.uint8([200, 255])),
                              m.mulhi(np.int8([-100, 127]), np.int8([100, -128])),
                              m.mulhi(np.int16([-30000, 300]), np.int16([30000, 300]))), ()),
    ("reduce_xor", lambda m: m.reduce_xor(np.array([[1, 2, 3], [4, 5, 7]], np.int32), (1,)),
     ()),
    ("reduce_xor_all", lambda m, i: m.reduce_xor(i.reshape(7, 1), (0, 1)), (I8,)),
    ("reduce_xor_bool", lambda m, b: m.reduce_xor(b.reshape(2, 5), (0,)), (B,)),
    ("reduce_xor_u8", lambda m, u: m.reduce_xor(u, (0, 1)), (U8,)),
    ("reduce_xor_empty", lambda m: m.reduce_xor(np.zeros((3, 0), np.uint8), (1,)), ()),
    ("betainc", lambda m: m.betainc(np.float32(2), np.float32(3), np.float32([0.1, 0.5, 1])),
     ()),
    ("platform_dependent", lambda m, a: (
        m.platform_dependent(a, cpu=lambda x: x + 1, default=lambda x: x - 1),
        m.platform_dependent(a, cuda=lambda x: x + 1, default=lambda x: x * 3)), (V,)),
    ("conv_patches", lambda m, a: m.conv_general_dilated_patches(
        a.reshape(1, 2, 3, 4), (2, 2), (1, 1), "VALID"), (F,)),
    ("conv_patches_nhwc", lambda m, a: m.conv_general_dilated_patches(
        a.reshape(2, 3, 4, 1).repeat(3, -1), (2, 3), (2, 1), "SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC")), (F,)),
    ("conv_patches_dilated", lambda m, a: m.conv_general_dilated_patches(
        a.reshape(1, 1, 4, 6), (2, 2), (1, 2), [(1, 0), (0, 1)], rhs_dilation=(2, 1)), (F,)),
    ("conv_patches_1d", lambda m, a: m.conv_general_dilated_patches(
        a.reshape(2, 3, 4), (3,), (1,), "SAME"), (F,)),
    ("rng_bits", lambda m, k: m.rng_bit_generator(k, (2, 3)),
     (np.array([1, 2, 3, 4], np.uint32),)),
    ("rng_bits_carry", lambda m, k: m.rng_bit_generator(k, (5, 3), dtype=np.uint16),
     (np.array([0xFFFFFFFF, 7, 0xFFFFFFFE, 0xFFFFFFFF], np.uint32),)),
    ("rng_bits_u8", lambda m, k: m.rng_bit_generator(k, (9,), dtype=np.uint8,
                                                     algorithm=m.RandomAlgorithm.RNG_PHILOX),
     (np.array([9, 0, 5, 1], np.uint32),)),
]
SCATTER_DN = dict(update_window_dims=(), inserted_window_dims=(0,),
                  scatter_dims_to_operand_dims=(0,))
LAX_CASES += [
    ("scatter_sub", lambda m, a: m.scatter_sub(a, np.array([[1], [3], [1]]),
                                               np.float32([1, 2, 3]),
                                               m.ScatterDimensionNumbers(**SCATTER_DN)), (V,)),
    ("scatter_apply", lambda m, a: m.scatter_apply(
        a, np.array([[1], [3], [1], [9]]), lambda x: x * 2,
        m.ScatterDimensionNumbers(**SCATTER_DN), update_shape=(4,)), (V,)),
    ("scatter_apply_clip", lambda m, a: m.scatter_apply(
        a, np.array([[1], [9]]), lambda x: x - 1, m.ScatterDimensionNumbers(**SCATTER_DN),
        update_shape=(2,), mode="clip"), (V,)),
    ("scatter_apply_window", lambda m, a: m.scatter_apply(
        a.reshape(3, 8)[:, :2], np.array([[2], [0]]), lambda x: x + 1,
        m.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                  scatter_dims_to_operand_dims=(0,)), update_shape=(2, 2)),
     (F,)),
    ("index_take", lambda m, a: m.index_take(a, (np.array([0, 2]), np.array([1, 3])), (0, 1)),
     (F,)),
    ("index_take_1", lambda m, a: m.index_take(a, (np.array([0, 2, 2]),), (1,)), (F,)),
    ("index_take_3d", lambda m, a: m.index_take(a.reshape(2, 3, 4), (np.array([1, 0, 1]),
                                                                      np.array([2, 0, 3])),
                                                (0, 2)), (F,)),
]
LAX_BY_NAME = {c[0]: c for c in LAX_CASES}


def _lax_want(name):
    if name not in _WANT:
        _, fn, args = LAX_BY_NAME[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (JAX warns about scatter_apply's update_shape)
            _WANT[name] = jax.jit(lambda *a: fn(jl, *a))(*args)
    return _WANT[name]


@pytest.mark.parametrize("name", [c[0] for c in LAX_CASES])
def test_lax_matches_jax(name):
    _, fn, args = LAX_BY_NAME[name]
    _same(fn(xl, *args), _lax_want(name))


@pytest.mark.parametrize("name", ["tile", "unstack", "mulhi_i32", "mulhi_u32", "reduce_xor_all",
                                  "conv_patches_nhwc", "rng_bits", "rng_bits_carry",
                                  "scatter_apply", "index_take_3d", "scatter_sub"])
def test_lax_under_jit(name):
    _, fn, args = LAX_BY_NAME[name]
    _same(xp.jit(lambda *a: fn(xl, *a))(*args), _lax_want(name))


def test_lax_64_bit(x64):
    with jax.enable_x64(True):
        key = np.array([3, 1, 4, 1], np.uint32)
        _same(xl.rng_bit_generator(key, (3, 2), dtype=np.uint64),
              jl.rng_bit_generator(key, (3, 2), dtype=np.uint64))
        a, b = np.int64([-5, 2 ** 62, -(2 ** 63)]), np.int64([7, 2 ** 40 + 3, -1])
        _same(xl.mulhi(a, b), jl.mulhi(a, b))
        _same(xl.mulhi(a.view(np.uint64), b.view(np.uint64)),
              jl.mulhi(a.view(np.uint64), b.view(np.uint64)))
        _same(xnp.spacing(np.float64([1.0, -3e300, 0.0])), jnp.spacing(np.float64([1, -3e300, 0])))
        _same(xnp.sort_complex(np.float64([2, 1])), jnp.sort_complex(np.float64([2, 1])))


def test_lax_gradients_and_rng():
    dn = xl.ScatterDimensionNumbers(**SCATTER_DN)
    jdn = jl.ScatterDimensionNumbers(**SCATTER_DN)
    idx = np.array([[1], [3], [1]])
    g = xp.grad(lambda u: (xl.scatter_sub(V, idx, u, dn) ** 2).sum())(V[:3])
    want = jax.grad(lambda u: (jl.scatter_sub(V, idx, u, jdn) ** 2).sum())(V[:3])
    np.testing.assert_allclose(g, want, rtol=1e-5)
    g = xp.grad(lambda a: (xl.conv_general_dilated_patches(a, (2,), (1,), "VALID") ** 2).sum())(
        F.reshape(2, 2, 6))
    want = jax.grad(lambda a: (jl.conv_general_dilated_patches(a, (2,), (1,), "VALID") ** 2
                               ).sum())(F.reshape(2, 2, 6))
    np.testing.assert_allclose(g, want, rtol=1e-5)
    # rng_uniform: a stateful generator, so only ranges, shapes and dtypes compare
    for lo, hi in ((np.float32(-1), np.float32(2)), (np.int32(3), np.int32(9))):
        r1 = xl.rng_uniform(lo, hi, (50,))
        f = xp.jit(lambda a, b: xl.rng_uniform(a, b, (50,)))
        r2, r3 = f(lo, hi), f(lo, hi)
        for r in (r1, r2, r3):
            assert r.shape == (50,) and r.dtype == jl.rng_uniform(lo, hi, (50,)).dtype
            assert np.all((r >= lo) & (r < hi))
        assert not np.array_equal(r2, r3)  # drawn again at each call
    key = np.array([1, 2, 3, 4], np.uint32)
    with pytest.raises(XlapyError, match="THREE_FRY"):
        xl.rng_bit_generator(key, (2,), algorithm=xl.RandomAlgorithm.RNG_THREE_FRY)
    with pytest.raises(XlapyError, match="unsigned"):
        xl.rng_bit_generator(key, (2,), dtype=np.int32)
    with pytest.raises(XlapyError, match="uint32"):
        xl.rng_bit_generator(key[:2], (2,))
    with pytest.raises(XlapyError, match="one entry per dimension"):
        xl.tile(F, (2,))
    with pytest.raises(XlapyError, match="one shape and one dtype"):
        xl.stack([V, V.astype(np.int32)])
    with pytest.raises(XlapyError, match="integer"):
        xl.mulhi(V, V)
    with pytest.raises(XlapyError, match="boolean or integer"):
        xl.reduce_xor(V, (0,))
    with pytest.raises(XlapyError, match="no branch"):
        xl.platform_dependent(V, cuda=lambda x: x)
    with pytest.raises(XlapyError, match="at least one shape"):
        xl.broadcast_shapes()
    with pytest.raises(XlapyError, match="broadcast"):
        xl.broadcast_shapes((2,), (3,))


# ---- the top level --------------------------------------------------------------------------

def test_custom_gradient():
    def body(m):
        def f(x, y):
            return m.sin(x) * y, lambda g: (g * 10.0, g * x)
        return f

    xf, jf = xp.custom_gradient(body(xnp)), jax.custom_gradient(body(jnp))
    x, y = np.float32(0.5), np.float32(3.0)
    _same(xf(x, y), jf(x, y), dtype=False)
    for argnums in (0, 1, (0, 1)):
        _same(xp.grad(xf, argnums)(x, y), jax.grad(jf, argnums)(x, y), dtype=False)
        _same(xp.jit(xp.grad(xf, argnums))(x, y), jax.grad(jf, argnums)(x, y), dtype=False)
    _same(xp.jit(xf)(x, y), jf(x, y), dtype=False)
    vec = lambda m: (lambda v: (m.sum(v ** 2), lambda g: (g * m.ones_like(v),)))
    _same(xp.grad(xp.custom_gradient(vec(xnp)))(V), jax.grad(jax.custom_gradient(vec(jnp)))(V))
    with pytest.raises(XlapyError, match="pair"):
        xp.custom_gradient(lambda v: v)(V)


def test_linear_transpose():
    A = rng.standard_normal((3, 4)).astype(np.float32)

    def lin(m):
        return lambda x, y: (m.dot(A, x) + 2 * y, m.sum(x))

    x, y = np.zeros(4, np.float32), np.zeros(3, np.float32)
    ct = (np.float32([1, 2, 3]), np.float32(5))
    want = jax.linear_transpose(lin(jnp), x, y)(ct)
    t = xp.linear_transpose(lin(xnp), x, y)
    _same(t(ct), want)
    assert isinstance(t(ct), tuple)
    _same(xp.jit(t)(ct), want)
    t2 = xp.linear_transpose(lin(xnp), xp.ShapeDtypeStruct((4,), np.float32),
                             xp.ShapeDtypeStruct((3,), np.float32))
    _same(t2(ct), want)
    # a transpose is linear too, so its gradient is the original map (A^T's transpose)
    g = xp.grad(lambda c: t((c, np.float32(0)))[0].sum())(ct[0])
    _same(g, jax.grad(lambda c: jax.linear_transpose(lin(jnp), x, y)((c, np.float32(0)))[0]
                      .sum())(ct[0]))
    with pytest.raises(XlapyError, match="floating"):
        xp.linear_transpose(lambda i: i * 2, np.int32(1))
    with pytest.raises(XlapyError, match="structure"):
        t(np.float32([1, 2, 3]))


def test_typeof_float0_precision_and_caches():
    for v in (V, F[:2].astype(np.int32), 1.5, 3, True, np.float64(2.0)):
        a, b = xp.typeof(v), jax.typeof(v)
        assert a.shape == b.shape and a.dtype == b.dtype and a.weak_type == b.weak_type
    seen = []
    xp.jit(lambda v: seen.append(xp.typeof(v)) or v)(V)
    assert seen[0].shape == (7,) and seen[0].dtype == np.float32
    assert xp.float0 == jax.float0 and xp.float0 is xp.dtypes.float0
    with xp.default_matmul_precision("float32"):
        _same(xnp.dot(F, F.T), np.dot(F, F.T), tol=1e-5)
    with xp.default_matmul_precision(None):
        pass
    with pytest.raises(XlapyError, match="precision"):
        with xp.default_matmul_precision(3):
            pass
    xp.clear_caches()
    assert xp.ShapeDtypeStruct((2,), np.float32).shape == (2,)


def test_debug_nans_and_infs():
    f = xp.jit(lambda a: xnp.log(a))
    f(V)  # compiled (and on the fast path) before the checks are on
    assert not xp.config.jax_debug_nans
    with xp.debug_nans(True):
        assert xp.config.jax_debug_nans
        with pytest.raises(FloatingPointError, match="nan"):
            f(V)
        with pytest.raises(XlapyError, match="nan"):
            xnp.log(V)
        f(np.abs(V))  # no NaN: fine
        xnp.log(np.float32(0))  # -inf is not a NaN
    with xp.debug_infs():
        with pytest.raises(FloatingPointError, match="inf"):
            f(np.float32([0.0]))
    assert not xp.config.jax_debug_nans and not xp.config.jax_debug_infs
    f(V)  # back to normal
    xp.config.update("jax_debug_infs", True)
    try:
        assert xp.config.jax_debug_infs
        with pytest.raises(FloatingPointError):
            xnp.log(np.float32([0.0]))
    finally:
        xp.config.update("jax_debug_infs", False)
    xnp.log(np.float32([0.0]))
