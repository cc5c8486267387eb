"""More TF 1.15 math and array functions: quantize / dequantize (MIN_COMBINED, MIN_FIRST,
SCALED, both rounding modes), fingerprint, histogram_fixed_width_bins,
extract_volume_patches, matrix_square_root, batch_scatter_update, fft3d / ifft3d,
guarantee_const, betainc, cumulative_logsumexp and floor_div. Values against NumPy / SciPy
or hand-computed ones, in the executor and compiled on XLA_CPU, gradients against closed
forms computed with NumPy / SciPy, and the error cases."""

import numpy as np
import pytest
import scipy.linalg
import scipy.special

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.ops.lookup_ops import fingerprint64

from .conftest import jit_config
from .helpers import assert_close, run_executor_and_xla_cpu


R = np.random.default_rng(1115)
F32 = np.float32


def _run(fetches_fn, feed_fn=None):
    g = tf.Graph()
    with g.as_default():
        fetches = fetches_fn()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            return s.run(fetches, feed_fn() if feed_fn else None)


def _grads(loss_fn, values):
    """tf.gradients of loss_fn(*placeholders) at `values` (float64), in the executor."""
    g = tf.Graph()
    with g.as_default():
        ps = [tf.placeholder(tf.float64, np.shape(v)) for v in values]
        gs = tf.gradients(loss_fn(*ps), ps)
        got = tf.Session().run([t for t in gs if t is not None], dict(zip(ps, values)))
        return [None if t is None else got.pop(0) for t in gs]


# ---- the symbols -----------------------------------------------------------------------------

def test_symbols_and_namespaces():
    for name in ("floor_div", "quantize", "quantize_v2", "dequantize", "fingerprint",
                 "histogram_fixed_width_bins", "extract_volume_patches",
                 "matrix_square_root", "batch_scatter_update", "fft3d", "ifft3d",
                 "guarantee_const", "betainc", "quint8", "qint8", "quint16", "qint16",
                 "qint32"):
        assert callable(getattr(tf, name)) or isinstance(getattr(tf, name), tf.DType), name
    assert tf.math.betainc is tf.betainc
    assert tf.linalg.sqrtm is tf.matrix_square_root
    assert tf.signal.fft3d is tf.fft3d and tf.signal.ifft3d is tf.ifft3d
    assert callable(tf.math.cumulative_logsumexp)
    assert (tf.quint8, tf.qint8, tf.quint16, tf.qint16, tf.qint32) == (
        tf.uint8, tf.int8, tf.uint16, tf.int16, tf.int32)


def test_floor_div():
    def build():
        a = tf.placeholder(tf.int32, [4])
        x = tf.placeholder(tf.float32, [4])
        return ({"i": tf.floor_div(a, 3), "f": tf.floor_div(x, 2.0)},
                {a: np.array([-7, 7, -3, 2], np.int32),
                 x: np.array([-7.5, 7.5, -1.0, 3.0], F32)})
    for got in run_executor_and_xla_cpu(build):
        assert_close(got["i"], np.array([-3, 2, -1, 0], np.int32))
        assert_close(got["f"], np.array([-4.0, 3.0, -1.0, 1.0], F32))


# ---- quantize / dequantize ----------------------------------------------------------------------

def _widen(mn, mx):
    lo = min(0.0, mn)
    hi = max(0.0, max(mx, lo + max(1.0, abs(mn), abs(mx)) / 100))
    return F32(lo), F32(hi)


def _round_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _quantize_ref(x, mn, mx, dt, mode, half_even=False):
    """The documented formulas, in float64 (the inputs avoid rounding ties)."""
    info = np.iinfo(dt)
    lo, hi = (float(v) for v in _widen(mn, mx))
    x = x.astype(np.float64)
    if mode == "MIN_COMBINED":
        q = (np.clip(x, lo, hi) - lo) * (info.max - info.min) / (hi - lo)
        if info.min < 0:
            q = q - (info.max - info.min + 1) / 2
        q = _round_away(q)
    elif mode == "MIN_FIRST":
        s = (2.0 ** (8 * np.dtype(dt).itemsize) - 1) / (hi - lo)
        q = np.clip(_round_away(x * s) - _round_away(lo * s) + info.min, info.min, info.max)
    else:
        s = min(info.min / lo if info.min * lo > 0 else np.inf, info.max / hi)
        lo, hi = info.min / s, info.max / s
        q = np.clip(x, lo, hi) * s
        q = np.round(q) if half_even else _round_away(q)
    return q.astype(dt), F32(lo), F32(hi)


X_Q = R.uniform(-3.0, 8.0, (3, 7)).astype(F32)
Q_CASES = [  # (name, T, numpy dtype, min, max, mode)
    ("mc_u8", tf.quint8, np.uint8, 0.0, 6.0, "MIN_COMBINED"),
    ("mc_s8", tf.qint8, np.int8, -2.0, 6.5, "MIN_COMBINED"),
    ("mc_u16", "quint16", np.uint16, -1.0, 4.0, "MIN_COMBINED"),
    ("mf_u8", tf.quint8, np.uint8, -1.5, 6.0, "MIN_FIRST"),
    ("mf_s16", tf.qint16, np.int16, 0.5, 7.0, "MIN_FIRST"),
    ("sc_s8", tf.qint8, np.int8, -2.5, 5.0, "SCALED"),
    ("sc_u8", tf.quint8, np.uint8, -1.0, 7.0, "SCALED"),
    ("sc_s16", "qint16", np.int16, -9.0, 4.0, "SCALED"),
]


def test_quantize_matches_the_documented_formulas():
    def build():
        x = tf.placeholder(tf.float32, X_Q.shape)
        out = {n: tf.quantize(x, mn, mx, T, mode=mode) for n, T, _, mn, mx, mode in Q_CASES}
        return out, {x: X_Q}
    for got in run_executor_and_xla_cpu(build):
        for n, _, dt, mn, mx, mode in Q_CASES:
            want = _quantize_ref(X_Q, mn, mx, dt, mode)
            q, lo, hi = got[n]
            assert q.dtype == dt, n
            assert_close(q, want[0], what=f"{n}: ")
            assert_close(np.float32(lo), want[1], rtol=1e-6, what=f"{n} min: ")
            assert_close(np.float32(hi), want[2], rtol=1e-6, what=f"{n} max: ")


def test_quantize_hand_values_rounding_and_range_widening():
    def build():
        x = tf.constant([-2.5, -1.5, 0.5, 2.5, 3.0, 127.0, 200.0])
        return {
            # [0, 6] to quint8: x * 255 / 6, 3.0 -> 127.5 -> 128, clipped outside the range
            "doc": tf.quantize(tf.constant([0.0, 3.0, 6.0, 7.0, -1.0]), 0.0, 6.0,
                               tf.quint8),
            "away": tf.quantize(x, -127.0, 127.0, tf.qint8, mode="SCALED"),
            "even": tf.quantize(x, -127.0, 127.0, tf.qint8, mode="SCALED",
                                round_mode="HALF_TO_EVEN"),
            # a range not holding 0 is widened to hold it; an empty one gets a width
            "widened": tf.quantize_v2(tf.constant([1.0]), 2.0, 3.0, tf.quint8)[1:],
            "empty": tf.quantize_v2(tf.constant([1.0]), 0.0, 0.0, tf.quint8)[1:],
        }, None
    for got in run_executor_and_xla_cpu(build):
        assert_close(got["doc"].output, np.array([0, 128, 255, 255, 0], np.uint8))
        assert_close(got["away"].output, np.array([-3, -2, 1, 3, 3, 127, 127], np.int8))
        assert_close(got["even"].output, np.array([-2, -2, 0, 2, 3, 127, 127], np.int8))
        assert_close(np.array(got["widened"], F32), np.array([0.0, 3.0], F32))
        assert_close(np.array(got["empty"], F32), np.array([0.0, 0.01], F32))


@pytest.mark.parametrize("mode", ["MIN_COMBINED", "MIN_FIRST", "SCALED"])
@pytest.mark.parametrize("T", ["quint8", "qint8", "qint16"])
def test_dequantize_inverts_quantize(mode, T):
    def build():
        x = tf.placeholder(tf.float32, X_Q.shape)
        q = tf.quantize(x, -3.0, 8.0, T, mode=mode)
        return {"d": tf.dequantize(q.output, q.output_min, q.output_max, mode=mode),
                "lo": q.output_min, "hi": q.output_max}, {x: X_Q}
    for got in run_executor_and_xla_cpu(build):
        assert got["d"].dtype == np.float32
        lo, hi = float(got["lo"]), float(got["hi"])
        step = (hi - lo) / (2 ** (8 * np.dtype(T.lstrip("q")).itemsize) - 1)
        want = np.clip(X_Q, lo, hi) if mode != "MIN_FIRST" else X_Q
        assert np.max(np.abs(got["d"] - want)) <= 1.01 * step, (mode, T)


def test_dequantize_hand_values():
    def build():
        u = tf.constant(np.array([0, 51, 255], np.uint8))
        s = tf.constant(np.array([-128, 0, 127], np.int8))
        return {
            "mc_u8": tf.dequantize(u, 0.0, 6.0),               # q * 6 / 255
            "mc_s8": tf.dequantize(s, -1.0, 1.0),              # (q + 128) * 2 / 255 - 1
            "sc_s8": tf.dequantize(s, -2.0, 1.0, mode="SCALED"),  # q * max(2/128, 1/127)
            "sc_u8": tf.dequantize(u, 0.0, 5.1, mode="SCALED"),   # q * 5.1 / 255
            "mf_u8": tf.dequantize(u, 0.0, 2.55, mode="MIN_FIRST"),  # q * 2.55 / 255
        }, None
    for got in run_executor_and_xla_cpu(build):
        assert_close(got["mc_u8"], np.array([0.0, 1.2, 6.0], F32))
        assert_close(got["mc_s8"], np.array([-1.0, 1 / 255 * 128 * 2 - 1, 1.0], F32))
        assert_close(got["sc_s8"], np.array([-2.0, 0.0, 127 / 64], F32))
        assert_close(got["sc_u8"], np.array([0.0, 1.02, 5.1], F32))
        assert_close(got["mf_u8"], np.array([0.0, 0.51, 2.55], F32))


def test_quantize_errors():
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        with pytest.raises(InvalidArgumentError, match="HALF_TO_EVEN"):
            tf.quantize(x, 0.0, 1.0, tf.quint8, round_mode="HALF_TO_EVEN")
        with pytest.raises(InvalidArgumentError, match="mode"):
            tf.quantize(x, 0.0, 1.0, tf.quint8, mode="MAX_FIRST")
        with pytest.raises(TypeError, match="T must be"):
            tf.quantize(x, 0.0, 1.0, tf.float32)
        with pytest.raises(TypeError, match="float32"):
            tf.quantize(tf.constant([1], tf.int32), 0.0, 1.0, tf.quint8)
        with pytest.raises(TypeError, match="quantized"):
            tf.dequantize(x, 0.0, 1.0)
        with pytest.raises(InvalidArgumentError, match="scalar"):
            tf.dequantize(tf.constant([1], tf.uint8), [0.0, 1.0], 1.0)
        q = tf.quantize(x, 1.0, 0.5, tf.quint8)
        with tf.Session() as s, pytest.raises(InvalidArgumentError, match="larger than"):
            s.run(q)


# ---- fingerprint --------------------------------------------------------------------------------

def _le(fp):
    return np.frombuffer(fp.to_bytes(8, "little"), np.uint8)


def test_fingerprint():
    ints = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    words = np.array([[b"hello", b"world"], [b"", b"TensorFlow"]], dtype=object)

    def build():
        return {"ints": tf.fingerprint(ints), "flat": tf.fingerprint(ints.reshape(2, 12)),
                "words": tf.fingerprint(words), "one": tf.fingerprint([b"abc", "de"]),
                "empty": tf.fingerprint(tf.zeros([3, 0])),
                "f64": tf.fingerprint(tf.constant([[1.5, -2.0]], tf.float64))}
    got = _run(lambda: build())
    assert got["ints"].dtype == np.uint8 and got["ints"].shape == (2, 8)
    for i in range(2):
        assert_close(got["ints"][i], _le(fingerprint64(ints[i].astype("<i4").tobytes())))
        fps = b"".join(fingerprint64(w).to_bytes(8, "little") for w in words[i])
        assert_close(got["words"][i], _le(fingerprint64(fps)))
    assert_close(got["flat"], got["ints"])  # invariant under a reshape keeping the batch
    assert_close(got["one"], np.stack([_le(fingerprint64(b"abc")), _le(fingerprint64(b"de"))]))
    # FarmHash's Fingerprint64 of no bytes is its constant k2 = 0x9ae16a3b2f90404f
    assert_close(got["empty"], np.tile(_le(0x9AE16A3B2F90404F), (3, 1)))
    assert_close(got["f64"][0], _le(fingerprint64(np.array([1.5, -2.0], "<f8").tobytes())))
    assert not np.array_equal(got["ints"][0], got["ints"][1])


def test_fingerprint_errors():
    with tf.Graph().as_default():
        with pytest.raises(InvalidArgumentError, match="Unsupported fingerprint method"):
            tf.fingerprint([1, 2], method="md5")
        with pytest.raises(InvalidArgumentError, match="at least one dimension"):
            tf.fingerprint(tf.constant(3))
        m = tf.placeholder(tf.string, [])
        f = tf.fingerprint([1, 2], method=m)
        assert f.shape.as_list() == [2, 8]
        with tf.Session() as s, pytest.raises(InvalidArgumentError, match="Unsupported"):
            s.run(f, {m: b"sha1"})


# ---- histogram_fixed_width_bins ---------------------------------------------------------------

def test_histogram_fixed_width_bins():
    v = R.uniform(-1.0, 6.0, (3, 5)).astype(F32)

    def build():
        p = tf.placeholder(tf.float32, v.shape)
        return {"doc": tf.histogram_fixed_width_bins([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0],
                                                     [0.0, 5.0], nbins=5),
                "rand": tf.histogram_fixed_width_bins(p, [0.0, 5.0], nbins=7),
                "ints": tf.histogram_fixed_width_bins(tf.constant([0, 3, 9, 10]), [0, 10],
                                                      nbins=4, dtype=tf.int64)}, {p: v}
    for got in run_executor_and_xla_cpu(build):
        assert_close(got["doc"], np.array([0, 0, 1, 2, 4, 4], np.int32))
        want = np.clip(np.floor(7 * (v.astype(np.float64) - 0.0) / 5.0), 0, 6).astype(np.int32)
        assert_close(got["rand"], want)
        assert_close(got["ints"], np.array([0, 1, 3, 3], np.int32))  # int32 always, as TF's
    with tf.Graph().as_default():
        with pytest.raises(InvalidArgumentError, match="nbins"):
            tf.histogram_fixed_width_bins([1.0], [0.0, 1.0], nbins=0)
        with pytest.raises(InvalidArgumentError, match="shape"):
            tf.histogram_fixed_width_bins([1.0], [0.0, 1.0, 2.0])


# ---- extract_volume_patches -------------------------------------------------------------------

def _volume_patch_index(shape, k, s, padding):
    """For each output element, the flat input index it copies (-1: padding)."""
    b, dims, c = shape[0], shape[1:4], shape[4]
    outs, before = [], []
    for n, kk, ss in zip(dims, k, s):
        if padding == "VALID":
            o = -(-(n - kk + 1) // ss)
            before.append(0)
        else:
            o = -(-n // ss)
            before.append(max((o - 1) * ss + kk - n, 0) // 2)
        outs.append(o)
    flat = np.arange(int(np.prod(shape))).reshape(shape)
    out = np.full([b] + outs + [k[0], k[1], k[2], c], -1)
    for i, j, m in np.ndindex(*outs):
        for a, bb, cc in np.ndindex(*k):
            p, r, q = (i * s[0] + a - before[0], j * s[1] + bb - before[1],
                       m * s[2] + cc - before[2])
            if 0 <= p < dims[0] and 0 <= r < dims[1] and 0 <= q < dims[2]:
                out[:, i, j, m, a, bb, cc, :] = flat[:, p, r, q, :]
    return out.reshape([b] + outs + [-1])


@pytest.mark.parametrize("k,s,padding", [((2, 2, 3), (1, 2, 2), "VALID"),
                                         ((3, 2, 2), (2, 1, 3), "SAME")])
def test_extract_volume_patches_values_and_gradient(k, s, padding):
    shape = (2, 4, 5, 6, 3)
    x = R.standard_normal(shape).astype(F32)
    index = _volume_patch_index(shape, k, s, padding)
    want = np.where(index >= 0, x.reshape(-1)[np.maximum(index, 0)], 0).astype(F32)
    c = R.standard_normal(want.shape)

    def build():
        p = tf.placeholder(tf.float32, shape)
        return tf.extract_volume_patches(p, [1, *k, 1], [1, *s, 1], padding), {p: x}
    for got in run_executor_and_xla_cpu(build):
        assert got.shape == want.shape
        assert_close(got, want)
    gx, = _grads(lambda p: tf.reduce_sum(tf.extract_volume_patches(
        p, [1, *k, 1], [1, *s, 1], padding) * c), [x.astype(np.float64)])
    gw = np.zeros(x.size)
    np.add.at(gw, index[index >= 0], c[index >= 0])
    assert_close(gx, gw.reshape(shape), rtol=1e-10, atol=1e-10)


def test_extract_volume_patches_errors():
    with tf.Graph().as_default():
        x = tf.zeros([1, 4, 4, 4, 2])
        with pytest.raises(InvalidArgumentError, match="ksizes"):
            tf.extract_volume_patches(x, [2, 1, 1, 1, 1], [1] * 5, "VALID")
        with pytest.raises(InvalidArgumentError, match="5 elements"):
            tf.extract_volume_patches(x, [1, 1, 1, 1], [1] * 5, "VALID")
        with pytest.raises(InvalidArgumentError, match="padding"):
            tf.extract_volume_patches(x, [1] * 5, [1] * 5, "FULL")
        with pytest.raises(InvalidArgumentError, match="5-D"):
            tf.extract_volume_patches(tf.zeros([4, 4, 4, 2]), [1] * 5, [1] * 5, "VALID")


# ---- matrix_square_root -----------------------------------------------------------------------

W = R.standard_normal((2, 3, 3))
SPD = W @ np.swapaxes(W, -1, -2) + 3 * np.eye(3)
NONSYM = np.array([[[4.0, 1.0, 0.5], [0.2, 3.0, 1.0], [0.0, 0.3, 2.0]],
                   [[2.0, -1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 5.0]]])  # complex pair


def test_matrix_square_root_values():
    def build():
        a = tf.placeholder(tf.float32, SPD.shape)
        b = tf.placeholder(tf.float64, NONSYM.shape)
        return {"spd": tf.matrix_square_root(a), "nonsym": tf.linalg.sqrtm(b)}, \
            {a: SPD.astype(F32), b: NONSYM}
    want_spd = np.stack([scipy.linalg.sqrtm(m) for m in SPD])
    want_ns = np.stack([np.real(scipy.linalg.sqrtm(m)) for m in NONSYM])
    for got in run_executor_and_xla_cpu(build):
        assert got["spd"].dtype == np.float32
        assert_close(got["spd"], want_spd.astype(F32), rtol=1e-4, atol=1e-5)
        assert_close(got["nonsym"], want_ns, rtol=1e-9, atol=1e-10)
        assert_close(got["nonsym"] @ got["nonsym"], NONSYM, rtol=1e-9, atol=1e-10)


def test_matrix_square_root_negative_eigenvalue_is_nan_and_errors():
    def build():
        p = tf.placeholder(tf.float32, [2, 2, 2])
        return tf.matrix_square_root(p), {p: np.array([[[-1.0, 0.0], [0.0, 4.0]],
                                                       [[4.0, 0.0], [0.0, 9.0]]], F32)}
    for got in run_executor_and_xla_cpu(build):
        assert np.isnan(got[0]).all()  # no real principal root
        assert_close(got[1], np.diag([2.0, 3.0]).astype(F32), rtol=1e-6)
    with tf.Graph().as_default():
        with pytest.raises(InvalidArgumentError, match="square"):
            tf.linalg.sqrtm(tf.zeros([2, 3]))
        with pytest.raises(InvalidArgumentError, match="rank 2"):
            tf.linalg.sqrtm(tf.zeros([3]))
        with pytest.raises(TypeError, match="DataType int32"):
            tf.linalg.sqrtm(tf.zeros([2, 2], tf.int32))


def test_matrix_square_root_gradient():
    a = NONSYM[0] + 0.5 * np.eye(3)
    c = R.standard_normal((3, 3))
    s = np.real(scipy.linalg.sqrtm(a))
    # dA = S dS + dS S: the gradient solves S^T G + G S^T = c
    want = scipy.linalg.solve_sylvester(s.T, s.T, c)
    got, = _grads(lambda p: tf.reduce_sum(tf.linalg.sqrtm(p) * c), [a])
    assert_close(got, want, rtol=1e-8, atol=1e-9)
    batched, = _grads(lambda p: tf.reduce_sum(tf.linalg.sqrtm(p) * c), [SPD])
    for i in range(2):
        si = np.real(scipy.linalg.sqrtm(SPD[i]))
        assert_close(batched[i], scipy.linalg.solve_sylvester(si.T, si.T, c),
                     rtol=1e-8, atol=1e-9)


def test_matrix_square_root_complex_in_the_executor():
    a = np.array([[2 + 1j, 0.5], [0.3j, 3 - 0.5j]])
    c = R.standard_normal((2, 2))
    s = _run(lambda: tf.linalg.sqrtm(tf.constant(a)))
    assert s.dtype == np.complex128
    assert_close(s, scipy.linalg.sqrtm(a), rtol=1e-10, atol=1e-12)
    # auto-jit leaves complex matrices to the executor
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.complex64, [2, 2])
        out = tf.linalg.sqrtm(p) * 1.0
        sess = tf.Session(config=jit_config())
        assert_close(sess.run(out, {p: a.astype(np.complex64)}),
                     scipy.linalg.sqrtm(a).astype(np.complex64), rtol=1e-5, atol=1e-6)
        summary = sess.cluster_summary(out, {p: a})
        assert "MatrixSquareRoot (MatrixSquareRoot)" in summary.split("not clustered:")[1]
    # TF's complex gradient of a real loss: dL/dRe(a) + i dL/dIm(a), here by differences
    with tf.Graph().as_default():
        p = tf.placeholder(tf.complex128, [2, 2])
        loss = tf.reduce_sum(tf.real(tf.linalg.sqrtm(p)) * c)
        grad = tf.gradients(loss, p)[0]
        with tf.Session() as sess:
            got = sess.run(grad, {p: a})
            h, want = 1e-6, np.zeros((2, 2), complex)
            for i, j in np.ndindex(2, 2):
                for unit in (1, 1j):
                    e = np.zeros((2, 2), complex)
                    e[i, j] = unit * h
                    d = (sess.run(loss, {p: a + e}) - sess.run(loss, {p: a - e})) / (2 * h)
                    want[i, j] += d * unit
    assert_close(got, want, rtol=1e-6, atol=1e-8)


# ---- batch_scatter_update ---------------------------------------------------------------------

def test_batch_scatter_update():
    init = R.standard_normal((2, 4, 3)).astype(F32)
    idx = np.array([[3, 0], [1, 2]], np.int32)
    upd = R.standard_normal((2, 2, 3)).astype(F32)
    want = init.copy()
    for b in range(2):
        want[b, idx[b]] = upd[b]
    v1 = np.arange(5, dtype=F32)

    def build():
        v = tf.Variable(init)
        w = tf.Variable(v1)
        out = tf.batch_scatter_update(v, idx, upd)
        out1 = tf.batch_scatter_update(w, tf.constant([4, 0]), [40.0, 0.5])
        with tf.control_dependencies([out, out1]):
            after = tf.identity(v.read_value()), tf.identity(w.read_value())
        return out, out1, after
    out, out1, (after, after1) = _run(build)
    assert_close(out, want)
    assert_close(after, want)
    assert_close(out1, np.array([0.5, 1, 2, 3, 40], F32))
    assert_close(after1, out1)
    with tf.Graph().as_default():
        v = tf.Variable(init)
        with pytest.raises(InvalidArgumentError, match="unknown shape"):
            tf.batch_scatter_update(v, tf.placeholder(tf.int32), upd)
        with pytest.raises(TypeError, match="tf.Variable"):
            tf.batch_scatter_update(tf.constant(init), idx, upd)


# ---- fft3d / ifft3d -----------------------------------------------------------------------------

Z = (R.standard_normal((2, 3, 4, 5)) + 1j * R.standard_normal((2, 3, 4, 5))).astype(np.complex64)


def test_fft3d_values():
    def build():
        p = tf.placeholder(tf.complex64, Z.shape)
        return {"f": tf.fft3d(p), "i": tf.signal.ifft3d(p),
                "round": tf.ifft3d(tf.signal.fft3d(p))}, {p: Z}
    for got in run_executor_and_xla_cpu(build):
        assert got["f"].dtype == np.complex64
        assert_close(got["f"], np.fft.fftn(Z, axes=(-3, -2, -1)).astype(np.complex64),
                     rtol=1e-4, atol=1e-4)
        assert_close(got["i"], np.fft.ifftn(Z, axes=(-3, -2, -1)).astype(np.complex64),
                     rtol=1e-4, atol=1e-5)
        assert_close(got["round"], Z, rtol=1e-4, atol=1e-5)
    with tf.Graph().as_default():
        with pytest.raises(InvalidArgumentError, match="rank 3"):
            tf.fft3d(tf.zeros([3, 4], tf.complex64))
        with pytest.raises(InvalidArgumentError, match="complex"):
            tf.fft3d(tf.zeros([2, 3, 4]))


def test_fft3d_gradients():
    re, im = Z.real.astype(np.float64), Z.imag.astype(np.float64)
    w = R.standard_normal(Z.shape) + 1j * R.standard_normal(Z.shape)
    n = 3 * 4 * 5
    axes = (-3, -2, -1)
    # L = Re(sum(conj(w) * T(z))) = Re(<T^H w, z>): dL/dre = Re(T^H w), dL/dim = Im(T^H w)
    # with T^H = n ifftn for fftn and fftn / n for ifftn
    for tf_fn, adjoint in ((tf.fft3d, n * np.fft.ifftn(w, axes=axes)),
                           (tf.ifft3d, np.fft.fftn(w, axes=axes) / n)):
        def loss(a, b, tf_fn=tf_fn):
            y = tf_fn(tf.complex(a, b))
            return tf.reduce_sum(tf.real(y) * w.real + tf.imag(y) * w.imag)
        g_re, g_im = _grads(loss, [re, im])
        assert_close(g_re, adjoint.real, rtol=1e-9, atol=1e-9)
        assert_close(g_im, adjoint.imag, rtol=1e-9, atol=1e-9)


# ---- guarantee_const --------------------------------------------------------------------------

def test_guarantee_const():
    x = R.standard_normal((2, 3)).astype(F32)

    def build():
        p = tf.placeholder(tf.float32, x.shape)
        out = tf.guarantee_const(p)
        assert out.op.type == "GuaranteeConst" and out.shape.as_list() == [2, 3]
        return out * 2.0, {p: x}
    for got in run_executor_and_xla_cpu(build):
        assert_close(got, 2 * x)
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [2])
        with pytest.raises(LookupError, match="GuaranteeConst"):
            tf.gradients(tf.reduce_sum(tf.guarantee_const(p)), p)


# ---- betainc ---------------------------------------------------------------------------------

A_B = R.uniform(0.5, 4.0, (3, 4))
B_B = R.uniform(0.5, 4.0, (3, 4))
X_B = R.uniform(0.02, 0.98, (3, 4))


def test_betainc_values():
    def build():
        a, b, x = (tf.placeholder(tf.float64, A_B.shape) for _ in range(3))
        x32 = tf.placeholder(tf.float32, X_B.shape)
        return {"full": tf.betainc(a, b, x), "scalar_ab": tf.math.betainc(2.0, 0.5, x32),
                "scalar_x": tf.betainc(a, b, tf.constant(0.3, tf.float64))}, \
            {a: A_B, b: B_B, x: X_B, x32: X_B.astype(F32)}
    for got in run_executor_and_xla_cpu(build):
        assert_close(got["full"], scipy.special.betainc(A_B, B_B, X_B), rtol=1e-9,
                     atol=1e-12)
        assert got["scalar_ab"].dtype == np.float32
        assert_close(got["scalar_ab"], scipy.special.betainc(2.0, 0.5, X_B).astype(F32),
                     rtol=2e-5, atol=1e-6)
        assert_close(got["scalar_x"], scipy.special.betainc(A_B, B_B, 0.3), rtol=1e-9,
                     atol=1e-12)
    with tf.Graph().as_default():
        with pytest.raises(InvalidArgumentError, match="inconsistent"):
            tf.betainc(tf.ones([3]), tf.ones([2]), 0.5)
        with pytest.raises(TypeError, match="DataType int32"):
            tf.betainc(tf.ones([2], tf.int32), 1, 1)


def _betainc_dx(a, b, x):
    return x ** (a - 1) * (1 - x) ** (b - 1) / scipy.special.beta(a, b)


def test_betainc_gradient_is_x_only():
    c = R.standard_normal(A_B.shape)
    got = _grads(lambda a, b, x: tf.reduce_sum(tf.betainc(a, b, x) * c), [A_B, B_B, X_B])
    assert got[0] is None and got[1] is None
    assert_close(got[2], c * _betainc_dx(A_B, B_B, X_B), rtol=1e-8, atol=1e-10)
    # a scalar x: the gradient is summed over the broadcast
    s, = _grads(lambda x: tf.reduce_sum(tf.betainc(tf.constant(A_B), tf.constant(B_B), x)
                                        * c), [np.float64(0.4)])
    assert_close(s, np.sum(c * _betainc_dx(A_B, B_B, 0.4)), rtol=1e-8)


# ---- cumulative_logsumexp ---------------------------------------------------------------------

XC = R.standard_normal((3, 5)) * 3
LOWEST32 = np.finfo(F32).min


def _clse_ref(x, axis, exclusive, reverse):
    x = np.flip(x, axis) if reverse else x
    out = np.logaddexp.accumulate(x.astype(np.float64), axis=axis)
    if exclusive:
        first = np.full_like(np.take(out, [0], axis), np.finfo(x.dtype).min)
        out = np.concatenate([first, np.delete(out, -1, axis)], axis)
    return np.flip(out, axis) if reverse else out


def test_cumulative_logsumexp_values():
    x32 = XC.astype(F32)
    combos = [(a, e, r) for a in (0, 1, -1) for e in (False, True) for r in (False, True)]

    def build():
        p = tf.placeholder(tf.float32, x32.shape)
        big = tf.constant([1000.0, 1000.0, -1000.0], tf.float64)
        out = {c: tf.math.cumulative_logsumexp(p, axis=c[0], exclusive=c[1], reverse=c[2])
               for c in combos}
        out["big"] = tf.math.cumulative_logsumexp(big)
        return out, {p: x32}
    for got in run_executor_and_xla_cpu(build):
        for a, e, r in combos:
            want = _clse_ref(x32, a, e, r).astype(F32)
            assert got[(a, e, r)].dtype == np.float32
            assert_close(got[(a, e, r)], want, rtol=1e-5, atol=1e-5, what=f"{(a, e, r)}: ")
        assert_close(got["big"], np.array([1000.0, 1000 + np.log(2), 1000 + np.log(2)]),
                     rtol=1e-12)
    # the exclusive scan starts at the lowest finite value, as TF's
    assert got[(0, True, False)][0, 0] == LOWEST32
    with tf.Graph().as_default():
        with pytest.raises(InvalidArgumentError, match="out of range"):
            tf.math.cumulative_logsumexp(tf.zeros([2, 3]), axis=2)
        with pytest.raises(TypeError, match="DataType int32"):
            tf.math.cumulative_logsumexp(tf.zeros([2], tf.int32))


@pytest.mark.parametrize("exclusive,reverse,axis", [(False, False, 1), (True, False, 0),
                                                    (False, True, 0), (True, True, 1)])
def test_cumulative_logsumexp_gradient(exclusive, reverse, axis):
    c = R.standard_normal(XC.shape)  # mixed signs: both parts of the gradient
    # dx_j = sum of c_i exp(x_j - y_i) over the outputs i whose sum holds x_j
    x = np.moveaxis(XC, axis, -1)
    ci = np.moveaxis(c, axis, -1)
    n = x.shape[-1]
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    holds = {(False, False): j <= i, (True, False): j < i, (False, True): j >= i,
             (True, True): j > i}[(exclusive, reverse)]
    terms = np.where(holds, np.exp(x[..., None, :]), 0.0)      # [..., i, j]
    y = np.log(np.where(holds.any(-1), terms.sum(-1), 1.0))    # (empty sums: unused)
    want = np.sum(np.where(holds, ci[..., :, None] * np.exp(x[..., None, :] - y[..., :, None]),
                           0.0), axis=-2)
    got, = _grads(lambda p: tf.reduce_sum(tf.math.cumulative_logsumexp(
        p, axis=axis, exclusive=exclusive, reverse=reverse) * c), [XC])
    assert_close(got, np.moveaxis(want, -1, axis), rtol=1e-9, atol=1e-10)
