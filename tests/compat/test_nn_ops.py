"""tf.nn beyond the basics, against JAX: convolutions (strides, SAME/VALID/explicit
padding, dilations, NHWC/NCHW, 1-D/3-D, transposed, depthwise, separable), pooling,
activations, normalizations, embeddings, sampled losses, top_k / in_top_k. Values and
gradients, in the executor and compiled."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .helpers import assert_close, run_both

R = np.random.default_rng(11)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def _jconv(x, w, strides, padding, dil=None, fmt="NHWC", groups=1):
    n = x.ndim - 2
    spec = {4: ("HWIO",), 5: ("DHWIO",)}.get(x.ndim, ("WIO",))[0]
    if fmt.startswith("NC"):
        return jax.lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=dil or (1,) * n,
                                            dimension_numbers=(fmt, spec, fmt),
                                            feature_group_count=groups)
    return jax.lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=dil or (1,) * n,
                                        dimension_numbers=(fmt, spec, fmt),
                                        feature_group_count=groups)


X4 = f32(2, 9, 8, 3)
W4 = f32(3, 2, 3, 4)
CONV_CASES = [  # (strides, tf padding, jax padding, dilations)
    ((1, 1), "SAME", "SAME", (1, 1)),
    ((2, 2), "SAME", "SAME", (1, 1)),
    ((2, 3), "VALID", "VALID", (1, 1)),
    ((1, 1), "SAME", "SAME", (2, 3)),
    ((3, 2), [[0, 0], [2, 1], [0, 1], [0, 0]], [(2, 1), (0, 1)], (1, 1)),
]


def _loss_grads(y, xs):
    """sum(y * c) for a fixed random c, and its gradients."""
    shape = [d or 1 for d in y.shape.as_list()]
    rng = np.random.default_rng(sum(d * 31 ** k for k, d in enumerate(shape)))  # same per build
    c = tf.constant(rng.standard_normal(shape).astype(np.float32))
    loss = tf.reduce_sum(y * c)
    return [loss] + tf.gradients(loss, xs), c.op.get_attr("value")


def test_conv2d_values_and_gradients():
    consts = {}

    def build():
        x = tf.placeholder(tf.float32, [None, 9, 8, 3])
        w = tf.constant(W4)
        out = {}
        for k, (s, p, _, d) in enumerate(CONV_CASES):
            y = tf.nn.conv2d(x, w, [1, *s, 1], p, dilations=[1, *d, 1])
            out[k], consts[k] = _loss_grads(y, [x, w])
        # NCHW with a transposed input gives the transposed result
        yc = tf.nn.conv2d(tf.transpose(x, [0, 3, 1, 2]), w, [1, 1, 2, 2], "SAME",
                          data_format="NCHW")
        out["nchw"] = tf.transpose(yc, [0, 2, 3, 1])
        return out, {x: X4}
    ex, xl, sess, fetches, feed = run_both(build)

    @jax.jit
    def refs(x, w):
        out = []
        for k, (s, _, jp, d) in enumerate(CONV_CASES):
            def loss(x, w, s=s, jp=jp, d=d, c=consts[k]):
                return jnp.sum(_jconv(x, w, s, jp, d) * c)
            out.append([loss(x, w), *jax.grad(loss, (0, 1))(x, w)])
        return out
    for k, want in enumerate(refs(X4, W4)):
        for got in (ex, xl):
            assert_close(got[k], want, rtol=2e-4, atol=2e-4, what=f"case {k}: ")
    for got in (ex, xl):
        assert_close(got["nchw"], _jconv(X4, W4, (2, 2), "SAME"), rtol=1e-4, atol=1e-5)
    assert "Conv2DBackpropInput" in sess.cluster_summary(fetches, feed)


def test_conv2d_many_channels_compiled_per_tap():
    """16+ channels: compiled, the convolution is one product per kernel tap and the input
    gradient (stride 1) per-tap products added in place; strided, the input gradient is a
    convolution of the dilated gradient. Checked against JAX, and the executor's gather."""
    x16 = f32(2, 7, 6, 16)
    w16 = f32(3, 3, 16, 5)
    cases = [((1, 1), "SAME", (1, 1)), ((2, 2), "VALID", (1, 1)), ((1, 1), "VALID", (2, 1))]
    consts = {}

    def build():
        x = tf.placeholder(tf.float32, [None, 7, 6, 16])
        w = tf.constant(w16)
        out = {}
        for k, (s, p, d) in enumerate(cases):
            y = tf.nn.conv2d(x, w, [1, *s, 1], p, dilations=[1, *d, 1])
            out[k], consts[k] = _loss_grads(y, [x, w])
        return out, {x: x16}
    ex, xl, _, _, _ = run_both(build)

    @jax.jit
    def refs(x, w):
        out = []
        for k, (s, p, d) in enumerate(cases):
            def loss(x, w, s=s, p=p, d=d, c=consts[k]):
                return jnp.sum(_jconv(x, w, s, p, d) * c)
            out.append([loss(x, w), *jax.grad(loss, (0, 1))(x, w)])
        return out
    for k, want in enumerate(refs(x16, w16)):
        for got in (ex, xl):
            assert_close(got[k], want, rtol=2e-4, atol=2e-4, what=f"case {k}: ")


def test_conv1d_conv3d_transpose_depthwise_separable():
    x1, w1 = f32(2, 11, 3), f32(3, 3, 5)
    x5, w5 = f32(1, 5, 6, 4, 2), f32(2, 3, 2, 2, 3)
    wt = f32(3, 3, 5, 3)          # conv2d_transpose filter: [h, w, out, in]
    wd, wp = f32(3, 3, 3, 2), f32(1, 1, 6, 4)
    consts = {}

    def build():
        a = tf.placeholder(tf.float32, x1.shape)
        b = tf.placeholder(tf.float32, x5.shape)
        x = tf.placeholder(tf.float32, X4.shape)
        ws = [tf.constant(v) for v in (w1, w5, wt, wd, wp)]
        ys = {"conv1d": (tf.nn.conv1d(a, ws[0], 2, "SAME"), [a, ws[0]]),
              "conv3d": (tf.nn.conv3d(b, ws[1], [1, 2, 1, 1, 1], "VALID"), [b, ws[1]]),
              "transpose": (tf.nn.conv2d_transpose(x, ws[2], [2, 18, 16, 5], [1, 2, 2, 1],
                                                   "SAME"), [x, ws[2]]),
              "depthwise": (tf.nn.depthwise_conv2d(x, ws[3], [1, 2, 1, 1], "SAME"),
                            [x, ws[3]]),
              "separable": (tf.nn.separable_conv2d(x, ws[3], ws[4], [1, 1, 1, 1], "VALID"),
                            [x, ws[3], ws[4]])}
        out = {}
        for k, (y, xs) in ys.items():
            out[k], consts[k] = _loss_grads(y, xs)
            out[k + "_shape"] = tf.shape(y)
        return out, {a: x1, b: x5, x: X4}
    ex, xl, _, _, _ = run_both(build)

    def conv1d(x, w):
        return _jconv(x, w, (2,), "SAME", fmt="NWC")

    def conv3d(x, w):
        return _jconv(x, w, (2, 1, 1), "VALID", fmt="NDHWC")

    def transpose(x, w):     # the input gradient of a stride-2 SAME conv with filter w
        _, vjp = jax.vjp(lambda z: _jconv(z, w, (2, 2), "SAME"), jnp.zeros((2, 18, 16, 5)))
        return vjp(x)[0]

    def depthwise(x, w):
        return _jconv(x, w.reshape(3, 3, 1, 6), (2, 1), "SAME", groups=3)

    def separable(x, w, p):
        return _jconv(_jconv(x, w.reshape(3, 3, 1, 6), (1, 1), "VALID", groups=3), p, (1, 1),
                      "VALID")
    refs = {"conv1d": (conv1d, (x1, w1)), "conv3d": (conv3d, (x5, w5)),
            "transpose": (transpose, (X4, wt)), "depthwise": (depthwise, (X4, wd)),
            "separable": (separable, (X4, wd, wp))}

    @jax.jit
    def all_refs():
        out = {}
        for k, (fn, args) in refs.items():
            def loss(*a, fn=fn, c=consts[k]):
                return jnp.sum(fn(*a) * c)
            out[k] = [loss(*args), *jax.grad(loss, tuple(range(len(args))))(*args)]
        return out
    want = all_refs()
    for k, (fn, args) in refs.items():
        for got in (ex, xl):
            assert_close(got[k], want[k], rtol=2e-4, atol=2e-4, what=f"{k}: ")
            assert list(got[k + "_shape"]) == list(jax.eval_shape(fn, *args).shape)


def test_pooling_values_and_gradients():
    consts = {}

    def build():
        x = tf.placeholder(tf.float32, [None, 9, 8, 3])
        out = {}
        for k, (fn, ks, st, p) in enumerate([
                (tf.nn.max_pool, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
                (tf.nn.max_pool, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
                (tf.nn.avg_pool, [1, 3, 2, 1], [1, 2, 2, 1], "SAME"),
                (tf.nn.avg_pool, 2, 2, "VALID")]):
            y = fn(x, ks, st, p)
            out[k], consts[k] = _loss_grads(y, [x])
        return out, {x: X4}
    ex, xl, _, _, _ = run_both(build)

    def mp(ks, st, p):
        return lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, ks, st, p)

    def ap(ks, st, p):
        def f(x):
            s = jax.lax.reduce_window(x, 0.0, jax.lax.add, ks, st, p)
            n = jax.lax.reduce_window(jnp.ones_like(x), 0.0, jax.lax.add, ks, st, p)
            return s / n   # SAME windows average their real elements only, as TF's
        return f
    fns = [mp((1, 3, 3, 1), (1, 2, 2, 1), "SAME"), mp((1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
           ap((1, 3, 2, 1), (1, 2, 2, 1), "SAME"), ap((1, 2, 2, 1), (1, 2, 2, 1), "VALID")]

    @jax.jit
    def refs(x):
        out = []
        for k, fn in enumerate(fns):
            def loss(x, fn=fn, c=consts[k]):
                return jnp.sum(fn(x) * c)
            out.append([loss(x), jax.grad(loss)(x)])
        return out
    for k, want in enumerate(refs(X4)):
        for got in (ex, xl):
            assert_close(got[k], want, rtol=1e-5, atol=1e-5, what=f"pool {k}: ")


def test_pooling_3d():
    x5 = f32(2, 4, 5, 6, 2)

    def build():
        x = tf.placeholder(tf.float32, x5.shape)
        m = tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID")
        a = tf.nn.avg_pool3d(x, [1, 2, 3, 2, 1], [1, 1, 2, 2, 1], "SAME")
        return [m, a] + tf.gradients(tf.reduce_sum(m * m) + tf.reduce_sum(a * 3.0), x), {x: x5}
    ex, xl, _, _, _ = run_both(build)

    def avg(v):
        s = jax.lax.reduce_window(v, 0.0, jax.lax.add, (1, 2, 3, 2, 1), (1, 1, 2, 2, 1), "SAME")
        n = jax.lax.reduce_window(jnp.ones_like(v), 0.0, jax.lax.add, (1, 2, 3, 2, 1),
                                  (1, 1, 2, 2, 1), "SAME")
        return s / n

    def mx(v):
        return jax.lax.reduce_window(v, -jnp.inf, jax.lax.max, (1, 2, 2, 2, 1),
                                     (1, 2, 2, 2, 1), "VALID")
    want = jax.jit(lambda v: [mx(v), avg(v), jax.grad(
        lambda u: jnp.sum(mx(u) ** 2) + jnp.sum(avg(u) * 3.0))(v)])(x5)
    for got in (ex, xl):
        assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_max_pool_with_argmax(padding):
    xv = f32(2, 5, 6, 3)

    def build():
        x = tf.placeholder(tf.float32, xv.shape)
        v, i = tf.nn.max_pool_with_argmax(x, [1, 2, 3, 1], [1, 2, 2, 1], padding)
        _, ib = tf.nn.max_pool_with_argmax(x, [1, 2, 3, 1], [1, 2, 2, 1], padding,
                                           include_batch_in_index=True)
        return [v, i, ib, tf.gradients(tf.reduce_sum(v * v), x)[0]], {x: xv}
    ex, xl, _, _, _ = run_both(build)

    def mp(v):
        return jax.lax.reduce_window(v, -jnp.inf, jax.lax.max, (1, 2, 3, 1), (1, 2, 2, 1),
                                     padding)
    want_v = np.asarray(mp(xv))
    want_g = jax.jit(jax.grad(lambda v: jnp.sum(mp(v) ** 2)))(xv)
    flat = xv.reshape(2, -1)
    for got in (ex, xl):
        v, i, ib, g = got
        assert i.dtype == np.int64 and i.shape == want_v.shape
        assert_close(v, want_v)
        # each index points at its window's maximum, the channel kept
        assert_close(np.take_along_axis(flat, i.reshape(2, -1), 1).reshape(i.shape), want_v)
        assert np.all(i % 3 == np.arange(3))
        assert_close(ib, i + np.arange(2).reshape(2, 1, 1, 1) * flat.shape[1])
        assert_close(g, want_g, rtol=1e-5)


def test_conv_errors():
    x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    with pytest.raises(InvalidArgumentError, match="Depth of input"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 4, 2]), [1, 1, 1, 1], "SAME")
    with pytest.raises(InvalidArgumentError, match="batch and depth dimensions"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 3, 2]), [2, 1, 1, 1], "SAME")
    with pytest.raises(InvalidArgumentError, match="padding must be"):
        tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "FULL")
    y = tf.nn.conv2d(x, tf.zeros([3, 3, 3, 2]), [1, 2, 2, 1], "VALID")
    assert y.shape.as_list() == [None, 3, 3, 2]
    assert tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME").shape.as_list() == \
        [None, 4, 4, 3]


ACT = f32(4, 6) * 3


def test_activations_and_normalizations():
    consts = {}
    cases = {
        "elu": (tf.nn.elu, jax.nn.elu), "selu": (tf.nn.selu, jax.nn.selu),
        "leaky": (lambda v: tf.nn.leaky_relu(v, 0.1), lambda v: jax.nn.leaky_relu(v, 0.1)),
        "softplus": (tf.nn.softplus, jax.nn.softplus),
        "softsign": (tf.nn.softsign, lambda v: v / (1 + jnp.abs(v))),
        "crelu": (tf.nn.crelu, lambda v: jnp.concatenate([jax.nn.relu(v), jax.nn.relu(-v)], -1)),
        "l2n": (lambda v: tf.nn.l2_normalize(v, 1),
                lambda v: v / jnp.sqrt(jnp.maximum(jnp.sum(v * v, 1, keepdims=True), 1e-12))),
        "swish": (tf.nn.swish, jax.nn.swish),
        "lrn": (lambda v: tf.nn.lrn(tf.reshape(v, [1, 2, 2, 6]), 2, 1.5, 0.3, 0.75),
                lambda v: _lrn_ref(v.reshape(1, 2, 2, 6), 2, 1.5, 0.3, 0.75)),
        "bn": (lambda v: tf.nn.batch_normalization(v, tf.reduce_mean(v, 0), tf.ones([6]) * 2.0,
                                                   tf.ones([6]) * 0.5, tf.ones([6]) * 1.5,
                                                   1e-3),
               lambda v: (v - v.mean(0)) * 1.5 / jnp.sqrt(2.0 + 1e-3) + 0.5),
    }

    def build():
        x = tf.placeholder(tf.float32, ACT.shape)
        out = {}
        for k, (fn, _) in cases.items():
            out[k], consts[k] = _loss_grads(fn(x), [x])
        return out, {x: ACT}
    ex, xl, _, _, _ = run_both(build)

    @jax.jit
    def refs(v):
        out = {}
        for k, (_, ref) in cases.items():
            def loss(v, ref=ref, c=consts[k]):
                return jnp.sum(ref(v) * c.reshape(jax.eval_shape(ref, v).shape))
            out[k] = [loss(v), jax.grad(loss)(v)]
        return out
    want = refs(ACT)
    for k in cases:
        for got in (ex, xl):
            assert_close(got[k], want[k], rtol=1e-4, atol=1e-5, what=f"{k}: ")


def _lrn_ref(x, r, bias, alpha, beta):
    sq = jnp.pad(x * x, [(0, 0)] * 3 + [(r, r)])
    s = sum(sq[..., i:i + x.shape[-1]] for i in range(2 * r + 1))
    return x / (bias + alpha * s) ** beta


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_fused_batch_norm_training_and_inference(fmt):
    x = f32(4, 3, 5, 2) * 2 + 1
    xt = x if fmt == "NHWC" else x.transpose(0, 3, 1, 2)
    scale, offset = np.array([1.5, 0.5], np.float32), np.array([0.1, -0.2], np.float32)
    mean, var = np.array([0.3, 0.2], np.float32), np.array([1.2, 0.8], np.float32)
    consts = {}

    def build():
        xp = tf.placeholder(tf.float32, xt.shape)
        s, o = tf.constant(scale), tf.constant(offset)
        y, bm, bv = tf.nn.fused_batch_norm(xp, s, o, data_format=fmt, epsilon=1e-3)
        yi, _, _ = tf.nn.fused_batch_norm(xp, s, o, mean, var, data_format=fmt,
                                          is_training=False, epsilon=1e-3)
        out, consts["t"] = _loss_grads(y, [xp, s, o])
        out_i, consts["i"] = _loss_grads(yi, [xp, s, o])
        return {"train": out, "inf": out_i, "stats": [bm, bv]}, {xp: xt}
    ex, xl, _, _, _ = run_both(build)
    ax = (0, 1, 2) if fmt == "NHWC" else (0, 2, 3)
    shp = (1, 1, 1, 2) if fmt == "NHWC" else (1, 2, 1, 1)

    def bn(v, s, o, m=None, var_=None):
        m = v.mean(ax) if m is None else m
        var_ = v.var(ax) if var_ is None else var_
        return (v - m.reshape(shp)) / jnp.sqrt(var_.reshape(shp) + 1e-3) * s.reshape(shp) + \
            o.reshape(shp)

    def lt(v, s, o):
        return jnp.sum(bn(v, s, o) * consts["t"])

    def li(v, s, o):
        return jnp.sum(bn(v, s, o, mean, var) * consts["i"])
    n = xt.size // 2
    refs = jax.jit(lambda *a: ([lt(*a), *jax.grad(lt, (0, 1, 2))(*a)],
                               [li(*a), *jax.grad(li, (0, 1, 2))(*a)]))
    want_t, want_i = refs(xt, scale, offset)
    for got in (ex, xl):
        assert_close(got["train"], want_t, rtol=1e-4, atol=1e-4)
        assert_close(got["inf"], want_i, rtol=1e-4, atol=1e-4)
        assert_close(got["stats"], [xt.mean(ax), xt.var(ax) * n / (n - 1)], rtol=1e-5)


def test_embedding_lookup_partition_strategies_and_max_norm():
    table = f32(10, 3)
    ids = np.array([[0, 9, 4], [7, 7, 1]], np.int64)

    def build():
        i = tf.placeholder(tf.int64, [None, 3])
        whole = tf.Variable(table)
        mod = [tf.Variable(table[k::3]) for k in range(3)]            # id % 3 -> shard
        div = [tf.Variable(table[a:b]) for a, b in ((0, 4), (4, 7), (7, 10))]
        out = {"whole": tf.nn.embedding_lookup(whole, i),
               "mod": tf.nn.embedding_lookup(mod, i, partition_strategy="mod"),
               "div": tf.nn.embedding_lookup(div, i, partition_strategy="div"),
               "clip": tf.nn.embedding_lookup(whole, i, max_norm=1.0)}
        out["grad"] = tf.gradients(tf.reduce_sum(out["mod"] * 2.0), mod[1])[0]
        return out, {i: ids}
    ex, xl, _, _, _ = run_both(build)
    norms = np.linalg.norm(table[ids], axis=-1, keepdims=True)
    g = np.zeros((3, 3), np.float32)
    for v in ids.reshape(-1):
        if v % 3 == 1:
            g[v // 3] += 2.0
    for got in (ex, xl):
        for k in ("whole", "mod", "div"):
            assert_close(got[k], table[ids], what=k)
        assert_close(got["clip"], table[ids] / np.maximum(norms, 1.0), rtol=1e-5)
        assert_close(got["grad"], g)


def test_log_uniform_sampler_and_sampled_losses():
    labels = np.array([[1], [5], [0], [7]], np.int64)
    inputs, weights, biases = f32(4, 3), f32(20, 3), f32(20)
    sampled = np.array([2, 5, 11, 0, 3], np.int64)
    te = R.uniform(0.1, 0.9, (4, 1)).astype(np.float32)
    se = R.uniform(0.1, 0.9, 5).astype(np.float32)

    def build():
        x = tf.placeholder(tf.float32, [None, 3])
        sv = (tf.constant(sampled), tf.constant(te), tf.constant(se))
        w, b = tf.Variable(weights), tf.Variable(biases)
        nce = tf.nn.nce_loss(w, b, labels, x, 5, 20, sampled_values=sv)
        ssl = tf.nn.sampled_softmax_loss(w, b, labels, x, 5, 20, sampled_values=sv)
        return [nce, ssl] + tf.gradients(tf.reduce_sum(nce) + tf.reduce_sum(ssl),
                                         [x, w]), {x: inputs}
    ex, xl, _, _, _ = run_both(build)

    def losses(x, w):
        tl = jnp.sum(x * w[labels[:, 0]], 1, keepdims=True) + biases[labels] - jnp.log(te)
        sl = x @ w[sampled].T + biases[sampled] - jnp.log(se)
        logits = jnp.concatenate([tl, sl], 1)
        lab = jnp.concatenate([jnp.ones((4, 1)), jnp.zeros((4, 5))], 1)
        nce = jnp.sum(jnp.maximum(logits, 0) - logits * lab +
                      jnp.log1p(jnp.exp(-jnp.abs(logits))), 1)
        hit = (labels == sampled[None, :])                   # accidental hits removed
        sl2 = jnp.where(hit, jnp.finfo(jnp.float32).min, 0.0) + sl
        lg2 = jnp.concatenate([tl, sl2], 1)
        ssl = -jax.nn.log_softmax(lg2, 1)[:, 0]
        return nce, ssl
    (nce, ssl), grads = jax.jit(lambda x, w: (losses(x, w), jax.grad(
        lambda x, w: sum(jnp.sum(v) for v in losses(x, w)), (0, 1))(x, w)))(inputs, weights)
    for got in (ex, xl):
        assert_close(got[:2], [nce, ssl], rtol=1e-5, atol=1e-5)
        assert_close(got[2:], grads, rtol=1e-4, atol=1e-5)

    # the sampler: seeded, unique, in range, expected counts of the log-uniform law
    tf.reset_default_graph()
    s, t, e = tf.nn.log_uniform_candidate_sampler(labels, 1, 8, True, 50, seed=3)
    sess = tf.Session()
    sv, tv, ev = sess.run([s, t, e])
    assert sv.dtype == np.int64 and len(set(sv)) == 8 and sv.min() >= 0 and sv.max() < 50
    def prob(c):
        return (np.log(c + 2.0) - np.log(c + 1.0)) / np.log(51.0)
    # expected counts 1 - (1 - p)^draws, one number of draws (>= 8) for all classes
    draws = np.log1p(-ev.astype(np.float64)) / np.log1p(-prob(sv))
    assert draws.min() >= 7.99 and np.ptp(draws) < 1e-2 * draws.mean()
    np.testing.assert_allclose(tv, -np.expm1(draws.mean() * np.log1p(-prob(labels))),
                               rtol=1e-3)
    tf.reset_default_graph()
    s2 = tf.nn.log_uniform_candidate_sampler(labels, 1, 8, True, 50, seed=3)[0]
    u, ut, us = tf.nn.uniform_candidate_sampler(labels, 1, 6, False, 10, seed=4)
    sv2, uv, utv, usv = tf.Session().run([s2, u, ut, us])
    np.testing.assert_array_equal(sv2, sv)
    assert uv.min() >= 0 and uv.max() < 10 and len(uv) == 6
    assert_close(utv, np.full((4, 1), 0.6, np.float32)) and assert_close(usv, np.full(6, 0.6))


def test_samplers_on_fed_classes_compile_into_the_cluster():
    # the classes are drawn on the host, the true classes' expected counts computed in the
    # program: one cluster with the nce loss, the executor's numbers
    labels = np.array([[1], [5], [0], [7]], np.int64)

    def build():
        y = tf.placeholder(tf.int64, [None, 1])
        s, t, e = tf.nn.log_uniform_candidate_sampler(y, 1, 8, True, 50, seed=3)
        u, ut, us = tf.nn.uniform_candidate_sampler(y, 1, 6, False, 10, seed=4)
        total = tf.add_n([tf.reduce_sum(tf.log(t)), tf.reduce_sum(tf.log(e)),
                          tf.reduce_sum(tf.cast(s, tf.float32)), tf.reduce_sum(ut * 2.0),
                          tf.reduce_sum(us), tf.reduce_sum(tf.cast(u, tf.float32))])
        return [s, t, e, u, ut, us, total], {y: labels}
    ex, xl, sess, fetches, fd = run_both(build, seed=1)
    for a, b in zip(ex, xl):
        assert a.dtype == b.dtype
        assert_close(b, a, rtol=1e-6)
    assert len(set(ex[0])) == 8
    summary = sess.cluster_summary(fetches, fd)
    assert summary.startswith("XLA clustering: 1 cluster(s)"), summary
    assert "not clustered" not in summary and "CandidateSampler" in summary


def test_top_k_in_top_k_and_sparse_xent():
    x = np.array([[0.1, 0.9, 0.3, 0.9], [2.0, -1.0, np.nan, 0.0], [1.0, 1.0, 1.0, 1.0]],
                 np.float32)
    t = np.array([3, 2, 2], np.int32)
    logits3 = f32(2, 3, 5)
    lab3 = np.array([[0, 4, 2], [1, 1, 3]], np.int64)

    def build():
        p = tf.placeholder(tf.float32, [3, 4])
        lg = tf.placeholder(tf.float32, [None, 3, 5])
        v, i = tf.nn.top_k(p[:, :2] * 0 + tf.constant([[3.0, 1.0], [1.0, 5.0], [2.0, 2.0]]), 2)
        loss3 = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=lab3, logits=lg)
        return {"topk": [v, i], "in1": tf.nn.in_top_k(p, t, 1), "in2": tf.nn.in_top_k(p, t, 2),
                "xent3": loss3, "g3": tf.gradients(tf.reduce_sum(loss3), lg)[0]}, \
            {p: x, lg: logits3}
    ex, xl, _, _, _ = run_both(build)
    def xent3(v):
        return -jnp.take_along_axis(jax.nn.log_softmax(v, -1), lab3[..., None], -1)[..., 0]
    want3, g3 = jax.jit(lambda v: (xent3(v), jax.grad(lambda u: jnp.sum(xent3(u)))(v)))(
        logits3)
    for got in (ex, xl):
        assert_close(got["topk"], [[[3, 1], [5, 1], [2, 2]], np.array([[0, 1], [1, 0], [0, 1]],
                                                                         np.int32)])
        # ties straddling the boundary count as in; a NaN target is not in
        assert_close(got["in1"], [True, False, True])
        assert_close(got["in2"], [True, False, True])
        assert_close(got["xent3"], want3, rtol=1e-5)
        assert_close(got["g3"], g3, rtol=1e-5, atol=1e-6)

    tf.reset_default_graph()
    lg = tf.placeholder(tf.float32, [None, 4])
    bad = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 4], logits=lg)
    with pytest.raises(InvalidArgumentError, match="Received a label value of 4 which is "
                                                   r"outside the valid range of \[0, 4\)"):
        tf.Session().run(bad, {lg: np.zeros((2, 4), np.float32)})
    with pytest.raises(InvalidArgumentError, match="Rank mismatch"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[[1]], logits=lg)


def test_dropout_rate_keep_prob_and_noise_shape():
    x = tf.ones([200, 50])
    a = tf.nn.dropout(x, rate=0.25, seed=1)
    b = tf.nn.dropout(x, keep_prob=0.75, noise_shape=[200, 1], seed=2)
    av, bv = tf.Session().run([a, b])
    assert set(np.unique(av)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.70 < (av > 0).mean() < 0.80
    assert np.all((bv == bv[:, :1]))                    # whole rows kept or dropped
    with pytest.raises(InvalidArgumentError, match="keep_prob must be"):
        tf.nn.dropout(x, keep_prob=0.0)
    with pytest.raises(InvalidArgumentError, match="floating point"):
        tf.nn.dropout(tf.ones([2], tf.int32), rate=0.5)
