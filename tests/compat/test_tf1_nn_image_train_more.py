"""More TF 1.x API: tf.nn (conv1d_transpose, atrous_conv2d_transpose, depthwise backprops,
fractional pooling, collapse_repeated, compute_accidental_hits, unigram samplers,
batch_norm_with_global_normalization), tf.layers (conv3d, Conv3DTranspose, InputSpec),
tf.image (transpose_image, resize), tf.train (limit_epochs, match_filenames_once, joins and
maybe-batches, piecewise_constant_decay, replica_device_setter, ClusterSpec) and
tf.random (poisson, stateless_uniform / stateless_normal). Values and gradients against
NumPy / JAX, in the executor and on XLA_CPU, and error cases."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, OutOfRangeError, UnimplementedError
from xlapy.compat.v1.ops.nnx_fractional import pooling_sequence

from .helpers import assert_close, run_both, run_executor_and_xla_cpu

R = np.random.default_rng(5)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def _run(build):
    g = tf.Graph()
    with g.as_default():
        fetches = build()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run(tf.local_variables_initializer())
            return s.run(fetches)


# ---- transposed and depthwise convolutions ---------------------------------------------------

def _conv_t_ref(y, w_oi, in_shape, strides, padding, dil, spec):
    """The input gradient of the convolution x -> conv(x, w_oi) at cotangent y."""
    def fwd(x):
        return jax.lax.conv_general_dilated(x, w_oi, strides, padding, rhs_dilation=dil,
                                            dimension_numbers=spec)
    _, vjp = jax.vjp(fwd, jnp.zeros(in_shape, jnp.float32))
    return np.asarray(vjp(jnp.asarray(y))[0])


@pytest.mark.parametrize("stride,padding,dil", [(2, "SAME", 1), (3, "VALID", 1),
                                                (1, "SAME", 2)])
def test_conv1d_transpose_values_and_gradients(stride, padding, dil):
    w = f32(3, 4, 2)          # [width, out, in]
    n_out = 10
    x_shape = (2, n_out, 4)
    y_len = jax.eval_shape(lambda a: jax.lax.conv_general_dilated(
        a, jnp.zeros((3, 4, 2)), (stride,), padding, rhs_dilation=(dil,),
        dimension_numbers=("NWC", "WIO", "NWC")), jnp.zeros(x_shape)).shape[1]
    y = f32(2, y_len, 2)
    c = f32(*x_shape)
    want = _conv_t_ref(y, w, x_shape, (stride,), padding, (dil,), ("NWC", "WIO", "NWC"))
    _, vjp = jax.vjp(lambda yy, ww: jnp.sum(c * _conv_t_ref_j(yy, ww, x_shape, stride, padding,
                                                                dil)), y, w)
    gy, gw = vjp(1.0)

    def build():
        yt, wt = tf.constant(y), tf.constant(w)
        out = tf.nn.conv1d_transpose(yt, wt, list(x_shape), stride, padding, dilations=dil)
        loss = tf.reduce_sum(out * c)
        return [out] + tf.gradients(loss, [yt, wt]), None
    for got in run_executor_and_xla_cpu(build):
        assert_close(got, [want, np.asarray(gy), np.asarray(gw)], rtol=1e-4, atol=1e-4)


def _conv_t_ref_j(y, w, in_shape, stride, padding, dil):
    def fwd(x):
        return jax.lax.conv_general_dilated(x, w, (stride,), padding, rhs_dilation=(dil,),
                                            dimension_numbers=("NWC", "WIO", "NWC"))
    _, vjp = jax.vjp(fwd, jnp.zeros(in_shape, jnp.float32))
    return vjp(y)[0]


def test_conv1d_transpose_ncw_and_errors():
    w = f32(2, 3, 4)
    y = f32(1, 4, 5)  # NCW: 4 channels, width 5

    def build():
        return tf.nn.conv1d_transpose(tf.constant(y), tf.constant(w), [1, 3, 10], 2,
                                      data_format="NCW"), None
    got = run_executor_and_xla_cpu(build)
    want = _conv_t_ref(y.transpose(0, 2, 1), w, (1, 10, 3), (2,), "SAME", (1,),
                       ("NWC", "WIO", "NWC")).transpose(0, 2, 1)
    for g in got:
        assert_close(g, want, rtol=1e-4, atol=1e-4)
    with tf.Graph().as_default():
        with pytest.raises(InvalidArgumentError):
            tf.nn.conv1d_transpose(tf.constant(y), tf.constant(w), [1, 3, 10], 2,
                                   data_format="NHWC")
        with pytest.raises(InvalidArgumentError):
            tf.nn.conv1d_transpose(tf.constant(y), tf.constant(w), [1, 10], 2)


@pytest.mark.parametrize("rate,padding", [(1, "SAME"), (2, "SAME"), (3, "VALID")])
def test_atrous_conv2d_transpose(rate, padding):
    w = f32(3, 2, 4, 5)  # [h, w, out, in]
    out_shape = (2, 9, 8, 4)
    ys = jax.eval_shape(lambda a: jax.lax.conv_general_dilated(
        a, jnp.zeros((3, 2, 4, 5)), (1, 1), padding, rhs_dilation=(rate, rate),
        dimension_numbers=("NHWC", "HWIO", "NHWC")), jnp.zeros(out_shape)).shape
    y = f32(*ys)
    spec = ("NHWC", "HWIO", "NHWC")
    want = _conv_t_ref(y, w, out_shape, (1, 1), padding, (rate, rate), spec)
    c = f32(*out_shape)

    def ref_loss(yy, ww):
        def fwd(x):
            return jax.lax.conv_general_dilated(x, ww, (1, 1), padding,
                                                rhs_dilation=(rate, rate),
                                                dimension_numbers=spec)
        _, vjp = jax.vjp(fwd, jnp.zeros(out_shape, jnp.float32))
        return jnp.sum(vjp(yy)[0] * c)
    gy, gw = jax.grad(ref_loss, (0, 1))(y, w)

    def build():
        yt, wt = tf.constant(y), tf.constant(w)
        out = tf.nn.atrous_conv2d_transpose(yt, wt, list(out_shape), rate, padding)
        return [out] + tf.gradients(tf.reduce_sum(out * c), [yt, wt]), None
    for got in run_executor_and_xla_cpu(build):
        assert_close(got, [want, np.asarray(gy), np.asarray(gw)], rtol=1e-4, atol=1e-4)


def test_atrous_conv2d_transpose_errors():
    with tf.Graph().as_default():
        y, w = tf.constant(f32(1, 4, 4, 5)), tf.constant(f32(3, 3, 4, 5))
        with pytest.raises(ValueError):
            tf.nn.atrous_conv2d_transpose(y, w, [1, 4, 4, 4], 0, "SAME")
        with pytest.raises(ValueError):
            tf.nn.atrous_conv2d_transpose(y, w, [1, 4, 4, 3], 2, "SAME")
        with pytest.raises(ValueError):
            tf.nn.atrous_conv2d_transpose(tf.constant(f32(1, 4, 4, 2)), w, [1, 4, 4, 4], 2,
                                          "SAME")
        with pytest.raises(ValueError):
            tf.nn.atrous_conv2d_transpose(y, w, [1, 4, 4, 4], 2, "FULL")


def test_depthwise_backprop_functions():
    x, w = f32(2, 7, 6, 3), f32(3, 2, 3, 2)
    strides = (2, 1)

    def fwd(xx, ww):
        return jax.lax.conv_general_dilated(xx, ww.reshape(3, 2, 1, 6), strides, "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                            feature_group_count=3)
    y, vjp = jax.vjp(fwd, x, w)
    g = f32(*y.shape)
    gx, gw = vjp(g)

    def build():
        s = [1, 2, 1, 1]
        bi = tf.nn.depthwise_conv2d_native_backprop_input([2, 7, 6, 3], tf.constant(w),
                                                          tf.constant(g), s, "SAME")
        bf = tf.nn.depthwise_conv2d_native_backprop_filter(tf.constant(x), [3, 2, 3, 2],
                                                           tf.constant(g), s, "SAME")
        assert bi.shape.as_list() == [2, 7, 6, 3] and bf.shape.as_list() == [3, 2, 3, 2]
        return [bi, bf], None
    for got in run_executor_and_xla_cpu(build):
        assert_close(got, [np.asarray(gx), np.asarray(gw)], rtol=1e-4, atol=1e-4)


def test_batch_norm_with_global_normalization():
    x, m, v, b, gm = f32(4, 3), f32(3), np.abs(f32(3)) + 0.5, f32(3), f32(3)
    for scale in (True, False):
        def build(scale=scale):
            xt = tf.constant(x)
            out = tf.nn.batch_norm_with_global_normalization(xt, m, v, b, gm, 1e-3, scale)
            return [out, tf.gradients(tf.reduce_sum(out * x), xt)[0]], None
        want = (x - m) / np.sqrt(v + 1e-3) * (gm if scale else 1) + b
        dwant = x / np.sqrt(v + 1e-3) * (gm if scale else 1)
        for got in run_executor_and_xla_cpu(build):
            assert_close(got, [want, dwant], rtol=1e-5, atol=1e-5)
    with tf.Graph().as_default(), pytest.raises(ValueError):
        tf.nn.batch_norm_with_global_normalization(x, m, v, b, gm, 1e-3)


# ---- fractional pooling ----------------------------------------------------------------------

def _frac_ref(x, rows, cols, overlapping, kind):
    out = np.zeros((x.shape[0], len(rows) - 1, len(cols) - 1, x.shape[3]), x.dtype)
    for i in range(len(rows) - 1):
        r1 = min(rows[i + 1] + (1 if overlapping else 0), x.shape[1])
        for j in range(len(cols) - 1):
            c1 = min(cols[j + 1] + (1 if overlapping else 0), x.shape[2])
            reg = x[:, rows[i]:r1, cols[j]:c1, :]
            out[:, i, j] = reg.max(axis=(1, 2)) if kind == "max" else reg.mean(axis=(1, 2))
    return out


def _check_sequence(seq, n_in, n_out):
    seq = np.asarray(seq)
    assert seq.dtype == np.int64 and len(seq) == n_out + 1
    assert seq[0] == 0 and seq[-1] == n_in
    steps = np.diff(seq)
    assert steps.min() >= n_in // n_out and steps.max() <= n_in // n_out + 1


@pytest.mark.parametrize("pseudo", [False, True])
@pytest.mark.parametrize("overlapping", [False, True])
def test_fractional_max_and_avg_pool_values_and_gradients(pseudo, overlapping):
    x = R.permutation(2 * 10 * 7 * 3).reshape(2, 10, 7, 3).astype(np.float32)
    for fn, kind in ((tf.nn.fractional_max_pool, "max"), (tf.nn.fractional_avg_pool, "avg")):
        with tf.Graph().as_default():
            xt = tf.constant(x)
            out, rows, cols = fn(xt, [1.0, 1.44, 1.73, 1.0], pseudo_random=pseudo,
                                 overlapping=overlapping, seed=3, seed2=4)
            assert out.shape.as_list() == [2, 6, 4, 3]
            assert rows.shape.as_list() == [7] and cols.shape.as_list() == [5]
            c = f32(2, 6, 4, 3)
            gx = tf.gradients(tf.reduce_sum(out * c), xt)[0]
            with tf.Session() as s:
                o, r, cc, g = s.run([out, rows, cols, gx])
        _check_sequence(r, 10, 6)
        _check_sequence(cc, 7, 4)
        assert_close(o, _frac_ref(x, r, cc, overlapping, kind), rtol=1e-6)
        jx = jnp.asarray(x)
        _, vjp = jax.vjp(lambda a, r=r, cc=cc, kind=kind: _frac_ref_j(a, r, cc, overlapping,
                                                                      kind), jx)
        assert_close(g, np.asarray(vjp(jnp.asarray(c))[0]), rtol=1e-5, atol=1e-5)


def _frac_ref_j(x, rows, cols, overlapping, kind):
    """JAX's version (distinct values: the max's gradient goes to the one maximum)."""
    outs = []
    for i in range(len(rows) - 1):
        r1 = min(int(rows[i + 1]) + (1 if overlapping else 0), x.shape[1])
        row = []
        for j in range(len(cols) - 1):
            c1 = min(int(cols[j + 1]) + (1 if overlapping else 0), x.shape[2])
            reg = x[:, int(rows[i]):r1, int(cols[j]):c1, :]
            row.append(reg.max(axis=(1, 2)) if kind == "max" else reg.mean(axis=(1, 2)))
        outs.append(jnp.stack(row, 1))
    return jnp.stack(outs, 1)


def test_fractional_max_pool_ties_route_to_first_maximum():
    x = np.ones((1, 4, 4, 1), np.float32)
    with tf.Graph().as_default():
        xt = tf.constant(x)
        out, rows, cols = tf.nn.fractional_max_pool(xt, [1.0, 2.0, 2.0, 1.0])
        g = tf.gradients(tf.reduce_sum(out), xt)[0]
        with tf.Session() as s:
            gv, r = s.run([g, rows])
    assert list(r) == [0, 2, 4]
    want = np.zeros((4, 4), np.float32)
    want[::2, ::2] = 1
    assert_close(gv[0, :, :, 0], want)


def test_fractional_pool_seeding_and_determinism():
    x = f32(1, 20, 20, 1)

    def seqs(**kw):
        with tf.Graph().as_default():
            _, rows, cols = tf.nn.fractional_max_pool(x, [1.0, 1.5, 1.5, 1.0], **kw)
            with tf.Session() as s:
                return [tuple(np.concatenate(s.run([rows, cols]))) for _ in range(6)]
    a = seqs(seed=1, seed2=2)
    assert a == seqs(seed=1, seed2=2)          # same seeds: same stream
    assert len(set(a)) > 1                     # the op draws new regions each run
    d = seqs(deterministic=True, seed=1, seed2=2)
    assert len(set(d)) == 1                    # deterministic: fixed regions
    assert len(set(seqs(deterministic=True))) == 1


def test_pooling_sequence_rules():
    rng = np.random.default_rng(0)
    for n_in, n_out in ((10, 6), (7, 4), (25, 7), (12, 4)):
        for pseudo in (False, True):
            for _ in range(20):
                _check_sequence(pooling_sequence(rng, n_in, n_out, pseudo), n_in, n_out)
    assert list(pooling_sequence(rng, 12, 4, True)) == [0, 3, 6, 9, 12]


def test_fractional_pool_errors():
    with tf.Graph().as_default():
        x = tf.constant(f32(1, 4, 4, 1))
        with pytest.raises(UnimplementedError):
            tf.nn.fractional_max_pool(x, [2.0, 1.5, 1.5, 1.0])
        with pytest.raises(InvalidArgumentError):
            tf.nn.fractional_avg_pool(x, [1.0, 1.5, 1.0])
        with pytest.raises(InvalidArgumentError):
            tf.nn.fractional_max_pool(x, [1.0, 0.5, 1.5, 1.0])
        with pytest.raises(InvalidArgumentError):
            tf.nn.fractional_max_pool(x, [1.0, 5.0, 1.5, 1.0])
        with pytest.raises(InvalidArgumentError):
            tf.nn.fractional_max_pool(tf.constant(f32(4, 4, 1)), [1.0, 1.5, 1.5, 1.0])


# ---- CTC labels and candidate sampling -------------------------------------------------------

def test_collapse_repeated():
    labels = np.array([[1, 1, 2, 2, 2, 3, 3], [4, 4, 4, 5, 5, 5, 6], [7, 8, 8, 8, 9, 9, 9]],
                      np.int32)
    lengths = np.array([5, 6, 7], np.int32)

    def build():
        return list(tf.nn.collapse_repeated(tf.constant(labels), tf.constant(lengths))), None
    ex, xla, *_ = run_both(build)
    want = [np.array([[1, 2, 0], [4, 5, 0], [7, 8, 9]], np.int32), np.array([2, 2, 3], np.int32)]
    assert_close(ex, want)
    assert_close(xla, want)


def test_compute_accidental_hits():
    true = np.array([[1, 5], [3, 3], [9, 2]], np.int64)
    sampled = np.array([5, 3, 7, 5, 2], np.int64)

    def build():
        return list(tf.nn.compute_accidental_hits(tf.constant(true), tf.constant(sampled),
                                                  num_true=2)), None
    ex, xla, *_ = run_both(build)
    fmax = np.finfo(np.float32).max
    want = [np.array([0, 1, 1, 2], np.int32), np.array([3, 1, 1, 4], np.int64),
            np.full(4, -fmax, np.float32)]
    assert_close(ex, want)
    assert_close(xla, want)
    with tf.Graph().as_default(), pytest.raises(ValueError):
        tf.nn.compute_accidental_hits(tf.constant(true), tf.constant(sampled), num_true=3)


def _expected(p, tries, n):
    p = np.asarray(p, np.float64)
    return p * n if tries == n else -np.expm1(tries * np.log1p(-p))


@pytest.mark.parametrize("unique", [False, True])
def test_fixed_unigram_candidate_sampler(unique):
    unigrams = [1.0, 4.0, 0.0, 2.0, 9.0, 3.0]
    reserved, dist = 1, 0.5
    w = np.array([0.0] + [u ** dist for u in unigrams])
    p = w / w.sum()
    true = np.array([[1, 4], [0, 6]], np.int64)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        s, te, se = tf.nn.fixed_unigram_candidate_sampler(
            true, 2, 4, unique, 7, distortion=dist, num_reserved_ids=reserved,
            unigrams=unigrams)
        assert s.shape.as_list() == [4] and te.shape.as_list() == [2, 2]
        with tf.Session() as sess:
            runs = [sess.run([s, te, se]) for _ in range(200)]
    counts = np.zeros(7)
    for sv, tev, sev in runs:
        assert sv.dtype == np.int64 and np.all(p[sv] > 0)
        if unique:
            assert len(set(sv.tolist())) == 4
        else:
            counts += np.bincount(sv, minlength=7)
            assert_close(tev, (p[true] * 4).astype(np.float32), rtol=1e-5)
            assert_close(sev, (p[sv] * 4).astype(np.float32), rtol=1e-5)
        if unique and not np.allclose(tev, p[true] * 4, rtol=1e-5):
            # more draws than samples: 1 - (1 - p)^tries, the same tries for every entry
            tries = np.log1p(-tev[0, 1]) / np.log1p(-p[4])
            assert tries > 4 - 1e-3
            assert_close(tev, _expected(p[true], tries, 0).astype(np.float32), rtol=1e-3)
            assert_close(sev, _expected(p[sv], tries, 0).astype(np.float32), rtol=1e-3)
        elif unique:
            assert_close(sev, (p[sv] * 4).astype(np.float32), rtol=1e-5)
    if not unique:
        freq = counts / counts.sum()
        assert np.abs(freq - p).max() < 0.05
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        s2 = tf.random.fixed_unigram_candidate_sampler(
            true, 2, 4, unique, 7, distortion=dist, num_reserved_ids=reserved,
            unigrams=unigrams)[0]
        with tf.Session() as sess:
            assert_close(sess.run(s2), runs[0][0])


def test_fixed_unigram_vocab_file_shards_and_errors(tmp_path):
    f = tmp_path / "vocab.csv"
    f.write_text("a,1\nb,2\nc,3\nd,4\n")
    with tf.Graph().as_default():
        s, te, _ = tf.nn.fixed_unigram_candidate_sampler(
            [[0]], 1, 2, False, 2, vocab_file=str(f), num_shards=2, shard=1, seed=3)
        with tf.Session() as sess:
            sv, tev = sess.run([s, te])
        assert set(sv.tolist()) <= {0, 1}
        assert_close(tev, np.array([[2 / 6 * 2]], np.float32), rtol=1e-6)  # b, d kept
        with pytest.raises(InvalidArgumentError):
            tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 2, False, 5, unigrams=[1, 2])
        with pytest.raises(InvalidArgumentError):
            tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 2, False, 2)
        with pytest.raises(InvalidArgumentError):
            tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 3, True, 2, unigrams=[1, 2])


def test_learned_unigram_candidate_sampler_learns():
    true = np.array([[3], [3], [3], [1]], np.int64)
    with tf.Graph().as_default():
        s, te, se = tf.nn.learned_unigram_candidate_sampler(true, 1, 3, False, 5, seed=7)
        with tf.Session() as sess:
            first = sess.run([s, te, se])
            assert_close(first[1], np.full((4, 1), 3 / 5, np.float32))
            second = sess.run([s, te, se])
            w = np.array([1, 2, 1, 4, 1], np.float64)  # after one run's update
            assert_close(second[1], (w[true] / w.sum() * 3).astype(np.float32), rtol=1e-6)
            assert_close(second[2], (w[second[0]] / w.sum() * 3).astype(np.float32),
                         rtol=1e-6)
            for _ in range(50):
                sess.run(s)
            many = np.concatenate([sess.run(s) for _ in range(200)])
        assert np.mean(many == 3) > 0.6   # class 3 dominates what it learned
        with tf.Session() as sess:       # a new session starts from uniform weights
            assert_close(sess.run(te), np.full((4, 1), 3 / 5, np.float32))
        bad = tf.nn.learned_unigram_candidate_sampler([[9]], 1, 1, False, 5)[0]
        with tf.Session() as sess, pytest.raises(InvalidArgumentError):
            sess.run(bad)


# ---- layers ----------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["channels_last", "channels_first"])
def test_layers_conv3d(fmt):
    x = f32(2, 5, 6, 7, 3)
    xin = x if fmt == "channels_last" else x.transpose(0, 4, 1, 2, 3)
    with tf.Graph().as_default():
        xt = tf.constant(xin)
        y = tf.layers.conv3d(xt, 4, (2, 3, 2), strides=(1, 2, 1), padding="same",
                             data_format=fmt, bias_initializer=tf.constant_initializer(0.5))
        layer = tf.layers.Conv3D(2, 2, dilation_rate=2, data_format=fmt, use_bias=False)
        y2 = layer(xt)
        names = sorted(v.op.name for v in tf.global_variables())
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            yv, y2v, k, k2 = s.run([y, y2, "conv3d/kernel:0", layer.kernel])
    assert names == ["conv3d/bias", "conv3d/kernel", "conv3d_1/kernel"]
    assert k.shape == (2, 3, 2, 3, 4) and k2.shape == (2, 2, 2, 3, 2)
    dn = ("NDHWC", "DHWIO", "NDHWC")
    want = np.asarray(jax.lax.conv_general_dilated(x, k, (1, 2, 1), "SAME",
                                                   dimension_numbers=dn)) + 0.5
    want2 = np.asarray(jax.lax.conv_general_dilated(x, k2, (1, 1, 1), "VALID",
                                                    rhs_dilation=(2, 2, 2),
                                                    dimension_numbers=dn))
    if fmt == "channels_first":
        want, want2 = want.transpose(0, 4, 1, 2, 3), want2.transpose(0, 4, 1, 2, 3)
    assert_close(yv, want, rtol=1e-4, atol=1e-4)
    assert_close(y2v, want2, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_layers_conv3d_transpose(padding):
    x = f32(2, 3, 4, 2, 3)
    with tf.Graph().as_default():
        xt = tf.constant(x)
        y = tf.layers.conv3d_transpose(xt, 5, (3, 2, 2), strides=(2, 1, 2), padding=padding)
        g = tf.gradients(tf.reduce_sum(y), xt)[0]
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            yv, k, gv = s.run([y, "conv3d_transpose/kernel:0", g])
    size = [n * s + (0 if padding == "same" else max(kk - s, 0))
            for n, s, kk in zip((3, 4, 2), (2, 1, 2), (3, 2, 2))]
    assert yv.shape == (2, *size, 5) and k.shape == (3, 2, 2, 5, 3)
    want = _conv_t_ref(x, k, (2, *size, 5), (2, 1, 2), padding.upper(), (1, 1, 1),
                       ("NDHWC", "DHWIO", "NDHWC"))
    assert_close(yv, want, rtol=1e-4, atol=1e-4)
    assert gv.shape == x.shape


def test_layers_input_spec():
    spec = tf.layers.InputSpec(ndim=4, axes={-1: 3}, dtype="float32")
    assert spec.ndim == 4 and spec.axes == {-1: 3}
    assert tf.layers.InputSpec(shape=(None, 2)).ndim == 2
    with tf.Graph().as_default():
        layer = tf.layers.Dense(2)
        layer.input_spec = tf.layers.InputSpec(min_ndim=2, axes={-1: 3})
        layer(tf.zeros([4, 3]))
        with pytest.raises(ValueError):
            layer(tf.zeros([4, 5]))
        with pytest.raises(ValueError):
            layer(tf.zeros([3]))
        with pytest.raises(ValueError):
            tf.layers.conv3d(tf.zeros([1, 4, 4, 3]), 2, 2)   # Conv3D needs rank 5
        d = tf.layers.Dense(2)
        d.input_spec = tf.layers.InputSpec(dtype="float64")
        with pytest.raises(ValueError):
            d(tf.zeros([1, 2]))


# ---- image -----------------------------------------------------------------------------------

def test_transpose_image_and_resize():
    img = f32(5, 4, 3)
    batch = f32(2, 5, 4, 3)

    def build():
        a, b = tf.constant(img), tf.constant(batch)
        t1, t2 = tf.image.transpose_image(a), tf.image.transpose_image(b)
        r = [tf.image.resize(b, [7, 6], method=m) for m in ("bilinear", "nearest", "bicubic",
                                                             "area")]
        r.append(tf.image.resize(b, [7, 6], tf.image.ResizeMethod.BILINEAR))
        return [t1, t2, tf.gradients(tf.reduce_sum(t2 * batch.transpose(0, 2, 1, 3)), b)[0]] \
            + r, None
    want_r = []
    with tf.Graph().as_default():
        b = tf.constant(batch)
        with tf.Session() as s:
            want_r = s.run([tf.image.resize_bilinear(b, [7, 6]),
                            tf.image.resize_nearest_neighbor(b, [7, 6]),
                            tf.image.resize_bicubic(b, [7, 6]), tf.image.resize_area(b, [7, 6])])
    for got in run_executor_and_xla_cpu(build):
        assert_close(got, [img.transpose(1, 0, 2), batch.transpose(0, 2, 1, 3), batch]
                     + want_r + [want_r[0]], rtol=1e-5, atol=1e-5)
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.image.transpose_image(tf.zeros([3, 3]))
        with pytest.raises(ValueError):
            tf.image.resize(tf.zeros([1, 3, 3, 1]), [2, 2], method="lanczos")


# ---- train -----------------------------------------------------------------------------------

def test_limit_epochs():
    with tf.Graph().as_default():
        t = tf.train.limit_epochs(tf.constant([1, 2]), num_epochs=2)
        assert tf.train.limit_epochs(t) is t
        assert [v.op.name for v in tf.local_variables()] == ["limit_epochs/epochs"]
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            assert_close(s.run(t), np.array([1, 2], np.int32))
            assert_close(s.run(t), np.array([1, 2], np.int32))
            with pytest.raises(OutOfRangeError):
                s.run(t)
        with pytest.raises(ValueError):
            tf.train.limit_epochs(tf.constant(1), num_epochs=0)


def test_match_filenames_once(tmp_path):
    for n in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / n).write_text("x")
    with tf.Graph().as_default():
        v = tf.train.match_filenames_once(str(tmp_path / "*.txt"))
        assert v in tf.local_variables() and v not in tf.trainable_variables()
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            got = s.run(v)
    assert [x.decode() for x in got] == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]


def _drain(fetch, n=None):
    """n runs of fetch, or (n None) runs until the input ends (OutOfRangeError)."""
    out = []
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(s, coord)
        try:
            while n is None or len(out) < n:
                try:
                    out.append(s.run(fetch))
                except OutOfRangeError:
                    break
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=2)
    return out


def test_batch_join_and_shuffle_batch_join():
    with tf.Graph().as_default():
        a = tf.train.slice_input_producer([tf.range(0, 6)], num_epochs=1, shuffle=False)[0]
        b = tf.train.slice_input_producer([tf.range(100, 106)], num_epochs=1,
                                          shuffle=False)[0]
        out = tf.train.batch_join([[a, a * 2], [b, b * 2]], batch_size=4,
                                  allow_smaller_final_batch=True)
        batches = _drain(out)
        vals = np.concatenate([x[0] for x in batches])
        assert_close(np.concatenate([x[1] for x in batches]), vals * 2)
        assert sorted(vals.tolist()) == list(range(6)) + list(range(100, 106))
    with tf.Graph().as_default():
        a = tf.train.slice_input_producer([tf.range(0, 6)], shuffle=False)[0]
        d = tf.train.shuffle_batch_join([{"x": a}, {"x": a + 10}], batch_size=3, capacity=20,
                                        min_after_dequeue=5, seed=1)
        got = _drain(d, 4)
        assert sorted(got[0]) == ["x"] and got[0]["x"].shape == (3,)
    with tf.Graph().as_default(), pytest.raises(ValueError):
        tf.train.batch_join([[tf.constant(1)], [tf.constant(1), tf.constant(2)]], 2)


def test_maybe_batch_and_maybe_shuffle_batch():
    with tf.Graph().as_default():
        a = tf.train.slice_input_producer([tf.range(0, 10)], shuffle=False)[0]
        out = tf.train.maybe_batch([a], tf.equal(a % 2, 0), batch_size=3)
        got = np.concatenate([x[0] for x in _drain(out, 3)])
        assert np.all(got % 2 == 0)
    with tf.Graph().as_default():
        rows = tf.constant(np.arange(8, dtype=np.int32).reshape(4, 2))
        keep = tf.constant([True, False, True, True])
        out = tf.train.maybe_shuffle_batch(rows, 2, capacity=20, min_after_dequeue=2,
                                           keep_input=keep, enqueue_many=True, seed=2)
        got = np.concatenate(_drain(out, 4))
        assert set(got[:, 0].tolist()) <= {0, 4, 6}
    with tf.Graph().as_default(), pytest.raises(ValueError):
        tf.train.maybe_batch([tf.constant(1)], tf.constant([True, False]), 2)


def test_piecewise_constant_decay_alias():
    assert tf.train.piecewise_constant_decay is tf.train.piecewise_constant
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        lr = tf.train.piecewise_constant_decay(step, [5, 10], [1.0, 0.5, 0.1])
        with tf.Session() as s:
            assert_close([s.run(lr, {step: k}) for k in (0, 5, 6, 11)],
                         [np.float32(1.0), np.float32(1.0), np.float32(0.5), np.float32(0.1)])


def test_cluster_spec():
    c = tf.train.ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": {0: "p0:2222",
                                                                       3: "p3:2222"}})
    assert c.jobs == ["ps", "worker"]
    assert c.num_tasks("worker") == 2 and c.num_tasks("ps") == 2
    assert c.task_indices("ps") == [0, 3]
    assert c.task_address("ps", 3) == "p3:2222"
    assert c.job_tasks("ps") == ["p0:2222", None, None, "p3:2222"]
    assert c.as_dict() == {"worker": ["w0:2222", "w1:2222"], "ps": {0: "p0:2222", 3: "p3:2222"}}
    assert tf.train.ClusterSpec(c) == c and c == c.as_dict()
    assert bool(c) and not tf.train.ClusterSpec({})
    with pytest.raises(ValueError):
        c.num_tasks("chief")
    with pytest.raises(ValueError):
        c.task_address("ps", 1)
    with pytest.raises(TypeError):
        tf.train.ClusterSpec(["w0:2222"])
    with pytest.raises(TypeError):
        tf.train.ClusterSpec({"ps": {"a": "p"}})


def test_replica_device_setter():
    assert tf.train.replica_device_setter(ps_tasks=0) is None
    assert tf.train.replica_device_setter(cluster={"worker": ["w:1"]}) is None
    with tf.Graph().as_default():
        v1, v2, v3 = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
        add = v1 + v2
    fn = tf.train.replica_device_setter(ps_tasks=2)
    assert [fn(v.op) for v in (v1, v2, v3)] == ["/job:ps/task:0", "/job:ps/task:1",
                                                 "/job:ps/task:0"]
    assert fn(add.op) == "/job:worker"
    fn = tf.train.replica_device_setter(
        cluster=tf.train.ClusterSpec({"ps": ["a:1", "b:1", "c:1"], "worker": ["w:1"]}),
        worker_device="/job:worker/task:0/device:CPU:0")
    assert [fn(v.op) for v in (v1, v2, v3)] == ["/job:ps/task:0", "/job:ps/task:1",
                                                 "/job:ps/task:2"]
    assert fn(add.op) == "/job:worker/task:0/device:CPU:0"
    fn = tf.train.replica_device_setter(ps_tasks=3, ps_strategy=lambda op: 2)
    assert fn(v1.op) == "/job:ps/task:2"
    with pytest.raises(TypeError):
        tf.train.replica_device_setter(ps_tasks=1, ps_strategy=3)
    # as tf.device's argument: every job runs in this process, so the ops it places on a
    # parameter server or worker job get no device, and the model trains
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            w = tf.Variable(2.0)
            loss = tf.square(w - 5.0)
            step = tf.train.GradientDescentOptimizer(0.25).minimize(loss)
        with tf.device(lambda op: "/device:XLA_CPU:0" if op.type == "Mul" else None):
            prod = tf.constant(3.0) * 4.0
        with tf.device(tf.DeviceSpec(device_type="CPU", device_index=0)):
            c = tf.constant(1.0)
        assert w.op.device is None and loss.op.device is None
        assert prod.op.device.endswith("device:XLA_CPU:0")
        assert c.op.device.endswith("device:CPU:0")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            assert sess.run(w) == 3.5 and sess.run(prod) == 12.0


# ---- random ----------------------------------------------------------------------------------

def test_random_poisson():
    lam = np.array([0.5, 3.0, 20.0], np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        x = tf.random.poisson(lam, [4000])
        xi = tf.random.poisson(2.0, [2, 3], dtype=tf.int64, seed=1)
        assert x.shape.as_list() == [4000, 3] and x.dtype == tf.float32
        assert xi.shape.as_list() == [2, 3] and xi.dtype == tf.int64
        assert tf.gradients(tf.reduce_sum(x), []) == []
        with tf.Session() as s:
            v, vi = s.run([x, xi])
            v2 = s.run(x)
    assert np.all(v == np.round(v)) and np.all(v >= 0)
    assert np.abs(v.mean(0) - lam).max() < 0.1 * lam.max() ** 0.5 + 0.05
    assert np.abs(v.var(0) / lam - 1).max() < 0.15
    assert not np.array_equal(v, v2)
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.random.poisson(1.0, [2], dtype=tf.string)
        bad = tf.random.poisson(tf.constant(-1.0), [2])
        with tf.Session() as s, pytest.raises(InvalidArgumentError):
            s.run(bad)


def test_stateless_random():
    def build():
        seed = tf.constant([1, 2], tf.int64)
        u = tf.random.stateless_uniform([3, 4], seed)
        u2 = tf.random.stateless_uniform([3, 4], seed=[1, 2], minval=-2.0, maxval=3.0)
        n = tf.random.stateless_normal([2000], seed=[7, -3], mean=1.0, stddev=2.0)
        i = tf.random.stateless_uniform([100], seed=[4, 5], minval=3, maxval=7,
                                        dtype=tf.int32)
        other = tf.random.stateless_uniform([3, 4], seed=[2, 1])
        return [u, u2, n, i, other], None
    ex, xla, *_ = run_both(build)
    again, _, *_ = run_both(build)
    assert_close(ex, again)
    assert_close(xla, ex)
    u, u2, n, i, other = ex
    assert u.shape == (3, 4) and np.all((u >= 0) & (u < 1))
    assert_close(u2, u * 5 - 2, rtol=1e-6, atol=1e-6)
    assert abs(n.mean() - 1) < 0.2 and abs(n.std() - 2) < 0.2
    assert i.dtype == np.int32 and set(i.tolist()) <= {3, 4, 5, 6}
    assert not np.array_equal(u, other)
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.random.stateless_uniform([2], seed=[1, 2, 3])
        with pytest.raises(ValueError):
            tf.random.stateless_uniform([2], seed=[1, 2], dtype=tf.int32)
        with pytest.raises(ValueError):
            tf.random.stateless_normal([2], seed=[1, 2], dtype=tf.int32)
        bad = tf.random.stateless_uniform([2], seed=[1, 2], minval=3, maxval=3, dtype=tf.int64)
        with tf.Session() as s, pytest.raises(InvalidArgumentError):
            s.run(bad)


def test_top_level_count_up_to_and_random_poisson():
    with tf.Graph().as_default():
        v = tf.Variable(0, dtype=tf.int32)
        c = tf.count_up_to(v, 2)
        x = tf.random_poisson([1.0, 50.0], [3000], seed=4)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert [s.run(c), s.run(c)] == [0, 1]
            with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
                s.run(c)
            m = s.run(x).mean(axis=0)
    assert abs(m[0] - 1.0) < 0.1 and abs(m[1] - 50.0) < 1.0
