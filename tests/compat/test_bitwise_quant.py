"""tf.bitwise against NumPy, tf.manip.roll, and tf.quantization's fake quantization against
TF's nudged-range rule (the cases of TF's fake_quant_ops_test) and its gradients; in the
executor and with every op on XLA_CPU."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError

from .helpers import assert_close, run_executor_and_xla_cpu

R = np.random.default_rng(9)


def test_bitwise_against_numpy():
    a = R.integers(-1000, 1000, (4, 5)).astype(np.int32)
    b = R.integers(-1000, 1000, (5,)).astype(np.int32)
    s = np.array([0, 1, 5, 31, 3], np.int32)
    u = R.integers(0, 255, (4, 5)).astype(np.uint8)
    v = np.array([0, 1, 7, 2, 3], np.uint8)

    def build():
        at, bt, st, ut, vt = (tf.constant(x) for x in (a, b, s, u, v))
        return {"and": tf.bitwise.bitwise_and(at, bt), "or": tf.bitwise.bitwise_or(at, bt),
                "xor": tf.bitwise.bitwise_xor(at, bt), "inv": tf.bitwise.invert(at),
                "inv_u8": tf.bitwise.invert(ut), "shl": tf.bitwise.left_shift(at, st),
                "shr": tf.bitwise.right_shift(at, st), "shr_u8": tf.bitwise.right_shift(ut, vt),
                "shl_u8": tf.bitwise.left_shift(ut, vt),
                "roll": tf.manip.roll(at, [1, -2], [0, 1])}
    want = {"and": a & b, "or": a | b, "xor": a ^ b, "inv": ~a, "inv_u8": ~u,
            "shl": a << s, "shr": a >> s, "shr_u8": u >> v, "shl_u8": u << v,
            "roll": np.roll(a, [1, -2], [0, 1])}
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        for k, w in want.items():
            assert got[k].dtype == w.dtype, k
            assert_close(got[k], w, what=f"{k}: ")
    with pytest.raises(InvalidTypeError, match="integer"):
        tf.bitwise.bitwise_and(tf.zeros([2]), tf.zeros([2]))


def _ref_fq(x, lo, hi, bits=8, narrow=False):
    qmin, qmax = (1 if narrow else 0), 2 ** bits - 1
    scale = (hi - lo) / (qmax - qmin)
    zp = qmin - lo / scale
    zp = qmin if zp < qmin else qmax if zp > qmax else np.floor(zp + 0.5)
    nmin, nmax = (qmin - zp) * scale, (qmax - zp) * scale
    c = np.clip(x, nmin, nmax)
    return np.floor((c - nmin) / scale + 0.5) * scale + nmin, nmin, nmax


def test_fake_quant_values_and_gradients():
    x1 = np.array([-10.1, -10.0, -9.9, -9.5, 244.5, 245.0, 245.1], np.float32)
    x2 = np.array([-0.1, 0.0, 0.1, 0.25, 0.5, 0.75, 63.75, 63.8], np.float32)
    xr = R.uniform(-3, 3, (6, 7)).astype(np.float32)
    g = R.standard_normal((6, 7)).astype(np.float32)

    def build():
        t1, t2, tr = tf.constant(x1), tf.constant(x2), tf.constant(xr)
        lo, hi = tf.constant(-1.3), tf.constant(2.1)
        fa = tf.quantization.fake_quant_with_min_max_args(tr, -1.3, 2.1, num_bits=5)
        fv = tf.quantization.fake_quant_with_min_max_vars(tr, lo, hi, narrow_range=True)
        return {"no_nudge": tf.fake_quant_with_min_max_args(t1, -10.0, 245.0),
                "nudge": tf.fake_quant_with_min_max_args(t2, -0.1, 63.65),
                "args": fa, "vars": fv,
                "g_args": tf.gradients(tf.reduce_sum(fa * g), tr)[0],
                "g_vars": tf.gradients(tf.reduce_sum(fv * g), [tr, lo, hi])}
    ra, amin, amax = _ref_fq(xr, np.float32(-1.3), np.float32(2.1), 5)
    rv, vmin, vmax = _ref_fq(xr, np.float32(-1.3), np.float32(2.1), 8, True)
    inside_v = (xr >= vmin) & (xr <= vmax)
    want = {"no_nudge": np.array([-10.0, -10.0, -10.0, -9.0, 245.0, 245.0, 245.0], np.float32),
            "nudge": np.array([0.0, 0.0, 0.0, 0.25, 0.5, 0.75, 63.75, 63.75], np.float32),
            "args": ra.astype(np.float32), "vars": rv.astype(np.float32),
            "g_args": np.where((xr >= amin) & (xr <= amax), g, 0).astype(np.float32),
            "g_vars": [np.where(inside_v, g, 0).astype(np.float32),
                       np.float32(g[xr < vmin].sum()), np.float32(g[xr > vmax].sum())]}
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        for k, w in want.items():
            assert_close(got[k], w, 1e-5, 1e-5, what=f"{k}: ")
    assert 0 < (xr < amin).sum() and 0 < (xr > amax).sum()  # the clamps are exercised
    with pytest.raises(InvalidArgumentError, match="num_bits"):
        tf.fake_quant_with_min_max_args(tf.zeros([2]), num_bits=1)
