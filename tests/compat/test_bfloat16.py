"""tf.bfloat16 (TF 1.15's brain floating-point dtype, ml_dtypes.bfloat16 in NumPy): the DType's
properties, tf.cast / tf.to_bfloat16 (round to nearest even, NaN and infinities), mixed
precision (bf16 matmuls and convolutions, float32 weights and loss) on the executor and under
XLA, gradients through casts, and GraphDef / TensorProto round trips (DT_BFLOAT16 = 14)."""

import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.summary.graph_def import graph_def as summary_graph_def

from .conftest import jit_config
from .helpers import all_compiled, run_executor_and_xla_cpu

BF = np.dtype(ml_dtypes.bfloat16)
R = np.random.default_rng(11)


def f32(*shape, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(np.float32)


def _compiled_hlo(sess) -> str:
    """The HLO text of every cluster the session compiled."""
    return "\n".join(m for p in sess._plans.values() for c in p.clusters for m in c.modules)


# ---- the DType ------------------------------------------------------------------------------

def test_bfloat16_dtype_properties_match_tf_1_15():
    b = tf.bfloat16
    assert tf.dtypes.bfloat16 is b and tf.as_dtype("bfloat16") is b
    assert tf.as_dtype(ml_dtypes.bfloat16) is b and tf.as_dtype(BF) is b
    assert tf.as_dtype(14) is b and tf.as_dtype(np.int64(14)) is b
    assert b.name == "bfloat16" and repr(b) == "tf.bfloat16" and str(b) == "<dtype: 'bfloat16'>"
    assert b.as_numpy_dtype is ml_dtypes.bfloat16 and b.size == 2
    assert b.as_datatype_enum == 14
    assert b.is_floating and not (b.is_integer or b.is_complex or b.is_bool)
    assert b.real_dtype is b and b.base_dtype is b
    # TF 1.15: min/max are +-0x1.FEp127 as bfloat16 values
    assert b.max == float.fromhex("0x1.FEp127") == 3.3895313892515355e38
    assert b.min == -float.fromhex("0x1.FEp127")
    assert np.asarray(b.max).dtype == BF
    assert b.limits == (0, 1) and tf.float32.limits == (0, 1) and tf.uint8.limits == (0, 255)
    assert b == "bfloat16" and b != tf.float16 and b != tf.float32 and b.is_compatible_with(BF)
    assert len({b, tf.as_dtype("bfloat16"), tf.float16}) == 2
    # the other DataType enums (types.proto)
    assert [d.as_datatype_enum for d in (tf.float32, tf.float64, tf.int32, tf.float16,
                                         tf.int64, tf.bool, tf.string)] == [1, 2, 3, 19, 9, 10, 7]
    assert tf.as_dtype(1) is tf.float32 and tf.as_dtype(19) is tf.float16
    with pytest.raises(TypeError, match="maximum value of tf.string"):
        _ = tf.string.max
    with pytest.raises(InvalidArgumentError, match="DataType enum"):
        tf.as_dtype(99)


# ---- casts ----------------------------------------------------------------------------------

def test_cast_to_and_from_bfloat16_rounds_to_nearest_even():
    one = 1.0
    vals = np.array([one + 2 ** -8, one + 3 * 2 ** -8, -(one + 2 ** -8), one + 2 ** -8 + 2 ** -20,
                     3.4e38, -3.4e38, np.inf, -np.inf, np.nan, 0.1, -0.0], np.float32)
    want = np.array([1.0, 1.015625, -1.0, 1.0078125, np.inf, -np.inf, np.inf, -np.inf, np.nan,
                     0.10009765625, -0.0], np.float32)
    ints = np.array([257, 259, -257, 7], np.int32)

    def build():
        x = tf.placeholder(tf.float32, [None])
        i = tf.placeholder(tf.int32, [None])
        b = tf.cast(x, tf.bfloat16)
        tb = tf.to_bfloat16(x)
        assert b.dtype == tf.bfloat16 and tb.dtype == tf.bfloat16 and tb.op.type == "Cast"
        ib = tf.cast(i, tf.bfloat16)
        halves = tf.constant([2.5, -2.5, 3.75], tf.bfloat16)
        return [b, tf.cast(b, tf.float32), tb, ib, tf.cast(halves, tf.int32),
                tf.cast(b, tf.float16)], {x: vals, i: ints}
    for got in run_executor_and_xla_cpu(build):
        b, back, tb, ib, to_int, to_half = got
        assert b.dtype == BF and tb.dtype == BF and ib.dtype == BF and to_int.dtype == np.int32
        np.testing.assert_array_equal(back, want)
        np.testing.assert_array_equal(np.signbit(back), np.signbit(want))
        np.testing.assert_array_equal(tb.astype(np.float32), want)
        np.testing.assert_array_equal(ib.astype(np.float32), [256, 260, -256, 7])
        np.testing.assert_array_equal(to_int, [2, -2, 3])  # toward zero, as C++ casts
        np.testing.assert_array_equal(to_half[:3], np.array(want[:3], np.float16))


def test_bfloat16_constants_placeholders_and_feeds():
    with tf.Graph().as_default():
        c = tf.constant([1.0, 2.5, 1e3], dtype=tf.bfloat16)
        z = tf.zeros([2], tf.bfloat16)
        p = tf.placeholder(tf.bfloat16, [None])
        q = tf.placeholder(tf.bfloat16, [None])
        assert c.dtype == tf.bfloat16 and tf.convert_to_tensor(np.ones(2, BF)).dtype == tf.bfloat16
        with tf.Session() as s:
            cv, zv, pv, qv = s.run([c, z, p * 2, q + 0.5],
                                   {p: np.array([1.5, 3], np.float32), q: np.ones(2, BF)})
        assert cv.dtype == BF and zv.dtype == BF and pv.dtype == BF
        np.testing.assert_array_equal(cv.astype(np.float32), [1, 2.5, 1000])
        np.testing.assert_array_equal(pv.astype(np.float32), [3, 6])
        np.testing.assert_array_equal(qv.astype(np.float32), [1.5, 1.5])
        with pytest.raises(TypeError):
            tf.constant([1.5], tf.bfloat16) + tf.constant([1.0])
        with pytest.raises(TypeError):
            tf.matmul(tf.ones([2, 2], tf.bfloat16), tf.ones([2, 2]))
        with pytest.raises(TypeError):
            tf.constant(np.array([1.5], BF), dtype=tf.int32)  # lossy: as from float32


# ---- executor kernels on bfloat16 -------------------------------------------------------------

def test_bfloat16_kernels_keep_the_dtype_and_accumulate_in_float32():
    a, b, v = f32(4, 6), f32(6, 5), f32(6)
    x4 = f32(2, 6, 6, 3)
    ba, bb = f32(2, 4, 6), f32(2, 6, 3)
    rnd = lambda z: z.astype(BF).astype(np.float32)

    def build():
        c = lambda z: tf.cast(tf.placeholder_with_default(z, z.shape), tf.bfloat16)
        A, B, V = c(a), c(b), c(v)
        ones = tf.ones([4096], tf.bfloat16)
        outs = {"matmul": tf.matmul(A, B), "bmm": tf.matmul(c(ba), c(bb)),
                "bias_relu": tf.nn.relu(tf.nn.bias_add(A, V)),
                "sum4096": tf.reduce_sum(ones), "mean": tf.reduce_mean(A, 1),
                "max": tf.reduce_max(A, 0), "softmax": tf.nn.softmax(A),
                "maxpool": tf.nn.max_pool(c(x4), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
                "mul_sub": A * A - A}
        for t in outs.values():
            assert t.dtype == tf.bfloat16
        return outs, None
    ra, rb, rv = rnd(a), rnd(b), rnd(v)
    e = np.exp(ra - ra.max(1, keepdims=True))
    want = {"matmul": ra @ rb, "bmm": rnd(ba) @ rnd(bb), "bias_relu": np.maximum(ra + rv, 0),
            "sum4096": np.float32(4096), "mean": ra.mean(1), "max": ra.max(0),
            "softmax": e / e.sum(1, keepdims=True),
            "maxpool": rnd(x4).reshape(2, 3, 2, 3, 2, 3).max((2, 4)), "mul_sub": ra * ra - ra}
    for got in run_executor_and_xla_cpu(build):
        for k, w in want.items():
            assert got[k].dtype == BF, k
            np.testing.assert_allclose(got[k].astype(np.float32), w, rtol=1e-2, atol=2e-2,
                                       err_msg=k)
    # the executor rounds a bfloat16 matmul once: exactly the float32 product rounded
    with tf.Graph().as_default(), tf.Session() as s:
        got = s.run(tf.matmul(tf.constant(a.astype(BF)), tf.constant(b.astype(BF))))
    np.testing.assert_array_equal(got, (ra @ rb).astype(BF))


# ---- mixed precision --------------------------------------------------------------------------

def _mlp(x_np, y_np, w1, w2, cfg, steps=4):
    """A 2-layer MLP with float32 master weights, bf16 matmuls, float32 logits and loss:
    (gradients before training, losses of `steps` SGD steps, the session)."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, x_np.shape[1]])
        y = tf.placeholder(tf.int64, [None])
        v1, v2 = tf.Variable(w1), tf.Variable(w2)
        b1 = tf.Variable(np.zeros(w1.shape[1], np.float32))
        h = tf.matmul(tf.to_bfloat16(x), tf.cast(v1, tf.bfloat16))
        h = tf.nn.relu(tf.nn.bias_add(h, tf.cast(b1, tf.bfloat16)))
        logits = tf.cast(tf.matmul(h, tf.cast(v2, tf.bfloat16)), tf.float32)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                             logits=logits))
        grads = tf.gradients(loss, [v1, b1, v2])
        assert h.dtype == tf.bfloat16 and all(g.dtype == tf.float32 for g in grads)
        step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        sess = tf.Session(config=cfg)
        sess.run(tf.global_variables_initializer())
        feed = {x: x_np, y: y_np}
        if cfg is not None:
            all_compiled(sess, [loss] + grads, feed)
        g0 = sess.run([loss] + grads, feed)
        losses = [sess.run([loss, step], feed)[0] for _ in range(steps)]
        return g0, losses, sess


def test_mixed_precision_mlp_trains_and_agrees_with_xla():
    x_np, y_np = f32(32, 8), R.integers(0, 4, 32)
    w1, w2 = f32(8, 16, scale=0.4), f32(16, 4, scale=0.4)
    ex, ex_losses, _ = _mlp(x_np, y_np, w1, w2, None)
    xl, xl_losses, sess = _mlp(x_np, y_np, w1, w2, jit_config())
    hlo = _compiled_hlo(sess)
    assert re.search(r"= bf16\[32,16\] dot\(", hlo), hlo   # the bf16 matmuls compile as such
    assert re.search(r"= f32\[32,4\] convert\(", hlo), hlo  # and the logits go back to f32
    # the float32 reference of the first loss and gradients (inputs rounded to bf16 as the
    # graph rounds them)
    r = lambda z: z.astype(BF).astype(np.float32)

    def ref(w1, b1, w2):
        h = jnp.maximum(jnp.asarray(r(x_np)) @ w1 + b1, 0)
        lg = h @ w2
        return jnp.mean(jax.nn.logsumexp(lg, 1) - lg[jnp.arange(32), y_np])
    args = (r(w1), np.zeros(16, np.float32), r(w2))
    want = [float(ref(*args))] + [np.asarray(g) for g in jax.grad(ref, (0, 1, 2))(*args)]
    for got in (ex, xl):
        assert all(g.dtype == np.float32 for g in got)
        np.testing.assert_allclose(got[0], want[0], rtol=2e-2)
        for g, w in zip(got[1:], want[1:]):
            np.testing.assert_allclose(g, w, rtol=5e-2, atol=5e-3 * np.abs(w).max())
    for a, b in zip(ex, xl):  # executor and XLA within bfloat16 tolerance
        np.testing.assert_allclose(a, b, rtol=1e-2, atol=1e-2 * np.abs(a).max())
    for losses in (ex_losses, xl_losses):
        assert all(b < a for a, b in zip(losses, losses[1:])), losses
    np.testing.assert_allclose(ex_losses, xl_losses, rtol=1e-2)


def test_conv2d_in_bfloat16_matches_float32_and_its_backprops():
    x, w, c = f32(2, 7, 7, 3), f32(3, 3, 3, 4, scale=0.5), f32(2, 4, 4, 4)
    spec = ("NHWC", "HWIO", "NHWC")

    def ref(xx, ww):
        y = jax.lax.conv_general_dilated(xx, ww, (2, 2), "SAME", dimension_numbers=spec)
        return y, jnp.sum(y * c)
    y_ref, _ = ref(x, w)
    gx, gw = jax.grad(lambda a, b: ref(a, b)[1], (0, 1))(x, w)

    def build():
        xt, wt = tf.placeholder(tf.float32, x.shape), tf.placeholder(tf.float32, w.shape)
        yb = tf.nn.conv2d(tf.cast(xt, tf.bfloat16), tf.cast(wt, tf.bfloat16), [1, 2, 2, 1],
                          "SAME")
        loss = tf.reduce_sum(tf.cast(yb, tf.float32) * c)
        dx, dw = tf.gradients(loss, [xt, wt])
        kinds = {o.type for o in xt.graph.get_operations()}
        assert {"Conv2DBackpropInput", "Conv2DBackpropFilter"} <= kinds
        return [yb, dx, dw], {xt: x, wt: w}
    for yb, dx, dw in run_executor_and_xla_cpu(build):
        assert yb.dtype == BF and dx.dtype == np.float32 and dw.dtype == np.float32
        for got, want in ((yb.astype(np.float32), y_ref), (dx, gx), (dw, gw)):
            want = np.asarray(want)
            np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * np.abs(want).max())
    # under auto-jit the convolution compiles to bf16 HLO
    with tf.Graph().as_default():
        xt = tf.placeholder(tf.float32, x.shape)
        yb = tf.nn.conv2d(tf.to_bfloat16(xt), tf.constant(w.astype(BF)), [1, 1, 1, 1], "VALID")
        out = tf.reduce_sum(tf.cast(yb, tf.float32) * 2.0)
        sess = tf.Session(config=jit_config())
        all_compiled(sess, out, {xt: x})
        # (lowered as patches and one product, or as a convolution: either in bf16)
        assert re.search(r"= bf16\[[\d,]+\] (dot|convolution)\(", _compiled_hlo(sess))


def test_gradients_through_casts():
    xv = np.array([0.5, -1.25, 3.0], np.float32)

    def build():
        x = tf.placeholder(tf.float32, [3])
        b = tf.cast(x, tf.bfloat16)
        y = tf.reduce_sum(tf.cast(b * b, tf.float32) * 3.0)   # d/dx = 6 x (in bf16)
        gx, gb = tf.gradients(y, [x, b])
        i = tf.placeholder(tf.int32, [3])
        gi = tf.gradients(tf.reduce_sum(tf.cast(i, tf.bfloat16)), i)
        assert gx.dtype == tf.float32 and gb.dtype == tf.bfloat16 and gi == [None]
        assert gx.op.type == "Cast"   # the gradient of a Cast: a Cast back to the source dtype
        return [gx, gb], {x: xv}
    for gx, gb in run_executor_and_xla_cpu(build):
        assert gb.dtype == BF
        np.testing.assert_array_equal(gx, 6 * xv)   # exact in bf16 for these values
        np.testing.assert_array_equal(gb.astype(np.float32), 6 * xv)


# ---- GraphDef / TensorProto -------------------------------------------------------------------

def test_graph_def_and_tensor_proto_round_trip():
    p = tf.make_tensor_proto(np.array(1.0078125, BF))
    assert p.dtype == 14 and list(p.half_val) == [0x3F81]   # bfloat16 bits, as TF stores them
    back = tf.make_ndarray(p)
    assert back.dtype == BF and float(back) == 1.0078125
    p = tf.make_tensor_proto([1.0, -2.5, 3.0], dtype=tf.bfloat16)
    assert p.dtype == 14 and tf.make_ndarray(p).dtype == BF
    np.testing.assert_array_equal(tf.make_ndarray(p).astype(np.float32), [1, -2.5, 3])
    p2 = tf.TensorProto(dtype=14, half_val=[0x3F80, 0x4040])
    p2.tensor_shape.dim.add(size=3)   # fewer values than elements: the last repeats
    np.testing.assert_array_equal(tf.make_ndarray(p2).astype(np.float32), [1, 3, 3])

    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.bfloat16, [None, 3], name="x")
        w = tf.constant(np.array([[1.5], [2.0], [-0.25]], BF), name="w")
        s = tf.constant(3.0, tf.bfloat16, name="s")
        v = tf.Variable(np.array([0.5], BF), name="v")
        tf.identity(tf.matmul(x, w) * s + v, name="y")
    gd = tf.GraphDef()
    gd.ParseFromString(g.as_graph_def().SerializeToString())
    nodes = {n.name: n for n in gd.node}
    assert nodes["x"].attr["dtype"].type == 14 and nodes["w"].attr["value"].tensor.dtype == 14
    assert nodes["v"].attr["dtype"].type == 14
    xv = np.array([[1, 2, 3], [0.5, 0.25, 1]], np.float32)
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="")
        assert g2.get_tensor_by_name("y:0").dtype == tf.bfloat16
        with tf.Session() as sess:
            sess.run(g2.get_operation_by_name("v/Assign"))
            y, sv = sess.run(["y:0", "s:0"], {"x:0": xv})
    assert y.dtype == BF and sv.dtype == BF and float(sv) == 3.0
    np.testing.assert_array_equal(y.astype(np.float32), [[14.75], [3.5]])
    # the graph TensorBoard is given, and tf.io.serialize_tensor / parse_tensor
    tb_nodes = {n.name: n for n in summary_graph_def(g).node}
    assert tb_nodes["x"].attr["dtype"].type == 14
    assert tb_nodes["w"].attr["value"].tensor.tensor_content == np.array(
        [[1.5], [2.0], [-0.25]], BF).tobytes()
    with tf.Graph().as_default(), tf.Session() as sess:
        c = tf.constant([1.5, -0.125], tf.bfloat16)
        back = sess.run(tf.io.parse_tensor(tf.io.serialize_tensor(c), tf.bfloat16))
    assert back.dtype == BF
    np.testing.assert_array_equal(back.astype(np.float32), [1.5, -0.125])
