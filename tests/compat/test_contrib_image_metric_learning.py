"""tf.contrib.image (projective transforms, rotate / translate, dense and sparse warps,
interpolate_spline, connected_components) and tf.contrib.losses.metric_learning (pairwise
distances, contrastive, triplet semi-hard, lifted structured and N-pairs losses): values
against loop-by-loop NumPy references and hand-computed cases, in the executor and with
every op on XLA_CPU; gradients against the references' central differences (float64), and
TF 1.15's image gradient of ImageProjectiveTransformV2 (the inverse transform); errors."""

import math

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError

from .conftest import jit_config
from .helpers import assert_close, run_both, run_executor_and_xla_cpu

R = np.random.default_rng(11)
ci = tf.contrib.image
ml = tf.contrib.losses.metric_learning


def _run(build):
    g = tf.Graph()
    with g.as_default():
        fetches = build()
        with tf.Session() as s:
            return s.run(fetches)


def _both(build):
    """build() -> fetches; [executor values, XLA_CPU values]."""
    return run_executor_and_xla_cpu(lambda: (build(), None))


# ---- references: the projective transform ----------------------------------------------------

def _round_away(v):
    return math.copysign(math.floor(abs(v) + 0.5), v)


def np_transform(img, transforms, interpolation="NEAREST", out_hw=None):
    """Pixel by pixel, in float32 as TF's kernel."""
    img = np.asarray(img)
    b, h, w, c = img.shape
    oh, ow = out_hw or (h, w)
    t = np.asarray(transforms, np.float32).reshape(-1, 8)
    out = np.zeros((b, oh, ow, c), img.dtype)
    f1 = np.float32(1)

    def read(i, yy, xx):
        if 0 <= yy < h and 0 <= xx < w:
            return img[i, int(yy), int(xx)].astype(np.float32)
        return np.zeros(c, np.float32)

    for i in range(b):
        a = t[0] if len(t) == 1 else t[i]
        for y in range(oh):
            for x in range(ow):
                X, Y = np.float32(x), np.float32(y)
                k = a[6] * X + a[7] * Y + f1
                if k == 0:
                    continue
                ix = (a[0] * X + a[1] * Y + a[2]) / k
                iy = (a[3] * X + a[4] * Y + a[5]) / k
                if interpolation == "NEAREST":
                    ry, rx = _round_away(float(iy)), _round_away(float(ix))
                    if 0 <= ry < h and 0 <= rx < w:
                        out[i, y, x] = img[i, int(ry), int(rx)]
                    continue
                y0, x0 = np.floor(iy), np.floor(ix)
                y1, x1 = y0 + f1, x0 + f1
                top = (x1 - ix) * read(i, y0, x0) + (ix - x0) * read(i, y0, x1)
                bot = (x1 - ix) * read(i, y1, x0) + (ix - x0) * read(i, y1, x1)
                out[i, y, x] = ((y1 - iy) * top + (iy - y0) * bot).astype(img.dtype)
    return out


def _random_transforms(n, projective=True):
    t = np.zeros((n, 8), np.float32)
    ang = R.uniform(-0.6, 0.6, n)
    sc = R.uniform(0.8, 1.25, n)
    t[:, 0], t[:, 1] = sc * np.cos(ang), -sc * np.sin(ang)
    t[:, 3], t[:, 4] = sc * np.sin(ang), sc * np.cos(ang)
    t[:, 2], t[:, 5] = R.uniform(-1.5, 2.5, n), R.uniform(-1.5, 2.5, n)
    if projective:
        t[:, 6:] = R.uniform(-0.03, 0.03, (n, 2))
    return t


IMG = R.uniform(-2, 2, (2, 5, 6, 3)).astype(np.float32)


@pytest.mark.parametrize("interpolation", ["NEAREST", "BILINEAR"])
def test_transform_matches_reference(interpolation):
    per_image = _random_transforms(2)
    single = _random_transforms(1, projective=False)[0]
    wants = [np_transform(IMG, per_image, interpolation),
             np_transform(IMG, single, interpolation),
             np_transform(IMG, per_image, interpolation, (4, 8)),
             np_transform(IMG[0:1], single, interpolation)[0],
             np_transform(IMG[0:1, :, :, :1], single, interpolation)[0, :, :, 0]]

    def build():
        x = tf.constant(IMG)
        return [ci.transform(x, per_image, interpolation),
                ci.transform(x, single, interpolation.lower()),
                ci.transform(x, tf.constant(per_image), interpolation, output_shape=[4, 8]),
                ci.transform(x[0], single, interpolation),  # one HWC image
                ci.transform(x[0, :, :, 0], single, interpolation)]  # one HW image
    for got in _both(build):
        assert_close(got, wants, rtol=1e-5, atol=2e-5)


def test_transform_static_shapes_and_integer_images():
    img8 = R.integers(0, 256, (2, 4, 5, 1)).astype(np.uint8)
    img32 = R.integers(-50, 50, (2, 4, 5, 2)).astype(np.int32)
    t = _random_transforms(2)

    def build():
        a = ci.transform(tf.constant(img8), t, "BILINEAR")
        b = ci.transform(tf.constant(img32), t, "NEAREST", output_shape=tf.constant([3, 7]))
        assert a.shape.as_list() == [2, 4, 5, 1] and a.dtype == tf.uint8
        assert b.shape.as_list() == [2, 3, 7, 2] and b.dtype == tf.int32
        return [a, b]
    ex, xla = _both(build)
    # bilinear uint8: the float32 blend truncated, as TF's static_cast
    assert_close(ex, [np_transform(img8, t, "BILINEAR"), np_transform(img32, t, "NEAREST",
                                                                        (3, 7))])
    assert_close(xla, ex)


def test_transform_of_unknown_sizes_under_auto_jit():
    """Placeholders of unknown height and width, a fed output_shape and the gradient (the
    inverse transform to the images' run-time size), in the executor and auto-jitted."""
    t = _random_transforms(2)

    def build():
        x = tf.placeholder(tf.float32, [None, None, None, 3])
        o = tf.placeholder(tf.int32, [2])
        a = ci.transform(x, t, "BILINEAR")
        b = ci.transform(x, t, "NEAREST", output_shape=o)
        assert a.shape.as_list() == [None, None, None, 3]
        return [a, b, tf.gradients(tf.reduce_sum(a * a), x)[0]], {x: IMG, o: [4, 3]}
    ex, xla, sess, fetches, feed = run_both(build)
    assert "ImageProjectiveTransformV2" in sess.cluster_summary(fetches, feed).split(
        "not clustered")[0]
    want_a = np_transform(IMG, t, "BILINEAR")
    inv = np.linalg.inv(np.concatenate([t, np.ones((2, 1), np.float32)], 1).reshape(2, 3, 3))
    inv = (inv.reshape(2, 9) / inv.reshape(2, 9)[:, 8:9])[:, :8]
    want = [want_a, np_transform(IMG, t, "NEAREST", (4, 3)),
            np_transform(2 * want_a, inv, "BILINEAR")]
    for got in (ex, xla):
        assert_close(got, want, atol=3e-5)


def test_projective_points_at_infinity_and_rounding_half_away_from_zero():
    img = np.arange(1, 13, dtype=np.float32).reshape(1, 3, 4, 1)
    # k = 1 - x: column 1 maps to infinity (0); x = -0.5 rounds to -1 (outside: 0), while
    # x = -0.4 rounds to 0 and x = 0.5 to 1
    t_inf = [1, 0, 0, 0, 1, 0, -1, 0]
    t_half = [1, 0, -0.5, 0, 1, 0, 0, 0]
    t_less = [1, 0, -0.4, 0, 1, 0, 0, 0]

    def build():
        x = tf.constant(img)
        return [ci.transform(x, t_inf), ci.transform(x, t_half), ci.transform(x, t_less)]
    for got in _both(build):
        inf, half, less = (v[0, :, :, 0] for v in got)
        assert np.all(inf[:, 1] == 0) and np.all(inf[:, 0] == img[0, :, 0, 0])
        assert_close(half, np.concatenate([np.zeros((3, 1), np.float32),
                                           img[0, :, 1:, 0]], axis=1))
        assert_close(less, img[0, :, :, 0])
        assert_close(got, [np_transform(img, t, "NEAREST") for t in (t_inf, t_half, t_less)])


def test_rotate_quarter_turns_and_per_image_angles():
    sq = R.uniform(size=(2, 5, 5, 2)).astype(np.float32)
    hw = np.arange(12, dtype=np.float32).reshape(3, 4)
    angles = np.array([0.4, -1.1], np.float32)

    def build():
        x = tf.constant(sq)
        return [ci.rotate(x, np.pi / 2), ci.rotate(x, np.pi, "BILINEAR"),
                ci.rotate(x[0], -np.pi / 2),
                ci.rotate(tf.constant(hw), np.pi),
                ci.rotate(x, angles, "BILINEAR")]
    # TF's rotation matrix, written out: [cos, -sin, x_off, sin, cos, y_off, 0, 0]
    ts = []
    for a in angles:
        c, s = np.cos(a), np.sin(a)
        ts.append([c, -s, (4 - (c * 4 - s * 4)) / 2, s, c, (4 - (s * 4 + c * 4)) / 2, 0, 0])
    for got in _both(build):
        assert_close(got[0], np.rot90(sq, 1, axes=(1, 2)))  # counterclockwise
        assert_close(got[1], sq[:, ::-1, ::-1], atol=1e-5)
        assert_close(got[2], np.rot90(sq[0], -1))
        assert_close(got[3], hw[::-1, ::-1])
        assert_close(got[4], np_transform(sq, ts, "BILINEAR"), atol=2e-5)


def test_translate_by_whole_pixels_fills_zeros():
    img = np.arange(1, 2 * 3 * 4 + 1, dtype=np.float32).reshape(2, 3, 4, 1)

    def build():
        x = tf.constant(img)
        return [ci.translate(x, [1.0, 2.0]),  # every image: right 1, down 2
                ci.translate(x, [[-1.0, 0.0], [0.0, 1.0]], "BILINEAR")]
    want_a = np.zeros_like(img)
    want_a[:, 2:, 1:] = img[:, :1, :3]
    want_b = np.zeros_like(img)
    want_b[0, :, :3] = img[0, :, 1:]
    want_b[1, 1:] = img[1, :2]
    for got in _both(build):
        assert_close(got, [want_a, want_b])


def test_transform_helpers():
    angles = np.array([0.3, -2.0], np.float32)
    tr = np.array([[1.5, -2.0], [0.25, 3.0]], np.float32)
    t1, t2 = _random_transforms(2), _random_transforms(2)

    def mats(t):
        return np.concatenate([t, np.ones((len(t), 1), np.float32)], 1).reshape(-1, 3, 3)

    def flat(m):
        m = m.reshape(-1, 9)
        return (m / m[:, 8:9])[:, :8]

    def build():
        return {"angles": ci.angles_to_projective_transforms(angles, 5, 7),
                "angle0": ci.angles_to_projective_transforms(0.5, tf.constant(4.0), 4),
                "trans": ci.translations_to_projective_transforms(tr),
                "trans1": ci.translations_to_projective_transforms(tr[0]),
                "mats": ci.flat_transforms_to_matrices(t1),
                "mats1": ci.flat_transforms_to_matrices(t1[0]),
                "flat": ci.matrices_to_flat_transforms(mats(t1) * 2.0),
                "flat1": ci.matrices_to_flat_transforms(mats(t1)[0]),
                "composed": ci.compose_transforms(t1, t2),
                "single": ci.compose_transforms(t1)}
    c, s = np.cos(angles), np.sin(angles)
    want = {"angles": np.stack([c, -s, (6 - (c * 6 - s * 4)) / 2, s, c,
                                (4 - (s * 6 + c * 4)) / 2, 0 * c, 0 * c], 1),
            "angle0": np.array([[np.cos(.5), -np.sin(.5), (3 - 3 * np.cos(.5) + 3 * np.sin(.5))
                                 / 2, np.sin(.5), np.cos(.5),
                                 (3 - 3 * np.sin(.5) - 3 * np.cos(.5)) / 2, 0, 0]], np.float32),
            "trans": np.array([[1, 0, -1.5, 0, 1, 2, 0, 0], [1, 0, -.25, 0, 1, -3, 0, 0]],
                              np.float32),
            "trans1": np.array([[1, 0, -1.5, 0, 1, 2, 0, 0]], np.float32),
            "mats": mats(t1), "mats1": mats(t1[:1]), "flat": t1, "flat1": t1[:1],
            "composed": flat(mats(t1) @ mats(t2)), "single": t1}
    for got in _both(build):
        assert_close(got, {k: np.asarray(v, np.float32) for k, v in want.items()},
                     rtol=1e-5, atol=1e-5)


def test_composed_transform_is_the_transforms_in_turn():
    a = np.array([1, 0, -1, 0, 1, 2, 0, 0], np.float32)  # translations by whole pixels
    b = np.array([1, 0, 2, 0, 1, -1, 0, 0], np.float32)
    rot = ci.angles_to_projective_transforms  # a quarter turn of a square image

    canvas = np.zeros((2, 11, 11, 3), np.float32)  # nothing moves out of it on the way
    canvas[:, 3:8, 3:8] = IMG[:, :5, :5]

    def build():
        x = tf.constant(canvas)
        q = rot(np.pi / 2, 11, 11)
        return [ci.transform(x, ci.compose_transforms(a, q, b)),
                ci.transform(ci.transform(ci.transform(x, a), q), b)]
    for got in _both(build):
        assert_close(got[0], got[1], atol=1e-6)
        assert np.any(got[0] != 0)


def test_transform_gradient_is_tf_inverse_transform():
    """TF 1.15's gradient of the images: the gradient image transformed by the inverse
    transforms (the exact adjoint for whole-pixel translations and quarter turns)."""
    t = _random_transforms(2, projective=False)
    gy = R.standard_normal(IMG.shape).astype(np.float32)
    inv = np.linalg.inv(np.concatenate([t, np.ones((2, 1), np.float32)], 1).reshape(2, 3, 3))
    inv = (inv.reshape(2, 9) / inv.reshape(2, 9)[:, 8:9])[:, :8].astype(np.float32)
    shift = np.array([1, 0, -2, 0, 1, 1, 0, 0], np.float32)  # the inverse translation

    def build():
        x = tf.constant(IMG)
        return [tf.gradients(ci.transform(x, t, "BILINEAR"), x, grad_ys=tf.constant(gy))[0],
                tf.gradients(ci.transform(x, t), x, grad_ys=tf.constant(gy))[0],
                tf.gradients(tf.reduce_sum(ci.translate(x, [-2.0, 1.0]) * gy), x)[0],
                tf.gradients(tf.reduce_sum(ci.rotate(x[:, :5, :5], np.pi / 2) * gy[:, :5, :5]),
                             x)[0]]
    # the true adjoints of a whole-pixel translation and of a quarter turn
    adj_shift = np_transform(gy, shift, "NEAREST")
    adj_rot = np.zeros_like(IMG)
    adj_rot[:, :5, :5] = np.rot90(gy[:, :5, :5], -1, axes=(1, 2))
    for got in _both(build):
        assert_close(got[0], np_transform(gy, inv, "BILINEAR"), atol=3e-5)
        assert_close(got[1], np_transform(gy, inv, "NEAREST"), atol=1e-5)
        assert_close(got[2], adj_shift)
        assert_close(got[3], adj_rot, atol=1e-6)


def test_transform_errors():
    x = tf.constant(IMG)
    with pytest.raises(TypeError, match="dtype"):
        ci.transform(tf.constant(IMG.astype(np.float64)) > 0, _random_transforms(1))
    with pytest.raises(TypeError, match="rank"):
        ci.transform(tf.constant(np.zeros((1, 2, 2, 2, 1), np.float32)), np.eye(3).ravel()[:8])
    with pytest.raises(TypeError, match="rank"):
        ci.transform(tf.placeholder(tf.float32), np.eye(3).ravel()[:8])
    with pytest.raises(TypeError, match="rank 1 or 2"):
        ci.transform(x, np.zeros((1, 1, 8), np.float32))
    with pytest.raises(ValueError, match="8 parameters"):
        ci.transform(x, np.zeros((1, 6), np.float32))
    with pytest.raises(ValueError, match="interpolation"):
        ci.transform(x, np.eye(3).ravel()[:8], "BICUBIC")
    with pytest.raises(ValueError, match="output_shape"):
        ci.transform(x, np.eye(3).ravel()[:8], output_shape=[1, 2, 3])
    with pytest.raises(TypeError, match="float32"):
        ci.transform(x, tf.constant(np.zeros(8, np.float64)))
    with pytest.raises(TypeError, match="rank 0 or 1"):
        ci.rotate(x, np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="1D or 2D"):
        ci.flat_transforms_to_matrices(np.zeros((1, 1, 8), np.float32))
    with pytest.raises(ValueError, match="2D or 3D"):
        ci.matrices_to_flat_transforms(np.zeros(9, np.float32))
    with pytest.raises(AssertionError, match="empty"):
        ci.compose_transforms()
    # three transforms for two images: a run-time error
    bad = ci.transform(x, tf.placeholder(tf.float32, [None, 8]))
    with tf.Session() as s, pytest.raises(InvalidArgumentError, match="num_images x 8"):
        s.run(bad, {bad.op.inputs[1]: np.zeros((3, 8), np.float32)})
    x_any = tf.placeholder(tf.float32, [None, None, None, 2])
    size = tf.placeholder(tf.int32, [2])
    out = ci.transform(x_any, [1, 0, 0, 0, 1, 0, 0, 0], output_shape=size)
    with tf.Session() as s:
        with pytest.raises(InvalidArgumentError, match="must be positive"):
            s.run(out, {x_any: np.ones((1, 3, 3, 2)), size: [-1, 2]})
        # an empty image: every point reads outside it
        assert_close(s.run(out, {x_any: np.ones((1, 0, 3, 2)), size: [2, 2]}),
                     np.zeros((1, 2, 2, 2), np.float32))
    with pytest.raises(UnimplementedError, match="bipartite_match"):
        ci.bipartite_match  # noqa: B018


# ---- dense_image_warp --------------------------------------------------------------------------

def np_dense_warp(img, flow):
    """Pixel by pixel: the bilinear read at (y - fy, x - fx), the cell clamped to the grid."""
    b, h, w, c = img.shape
    out = np.zeros(img.shape, np.float64)
    for i in range(b):
        for y in range(h):
            for x in range(w):
                q = (y - flow[i, y, x, 0], x - flow[i, y, x, 1])
                lo, al = [], []
                for v, n in zip(q, (h, w)):
                    f = min(max(0.0, math.floor(v)), n - 2)
                    lo.append(int(f))
                    al.append(min(max(0.0, v - f), 1.0))
                (y0, x0), (ay, ax) = lo, al
                tl, tr = img[i, y0, x0], img[i, y0, x0 + 1]
                bl, br = img[i, y0 + 1, x0], img[i, y0 + 1, x0 + 1]
                top, bot = ax * (tr - tl) + tl, ax * (br - bl) + bl
                out[i, y, x] = ay * (bot - top) + top
    return out


def _num_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        g[idx] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def test_dense_image_warp_values_and_gradients():
    img = R.standard_normal((2, 4, 5, 2))
    flow = R.uniform(-1.6, 1.6, (2, 4, 5, 2))  # some points fall outside: edge values
    cot = R.standard_normal(img.shape)

    def build():
        x, fl = tf.constant(img), tf.constant(flow)
        out = ci.dense_image_warp(x, fl)
        return [out] + tf.gradients(tf.reduce_sum(out * cot), [x, fl])
    want = np_dense_warp(img, flow)
    gx = _num_grad(lambda v: np.sum(np_dense_warp(v, flow) * cot), img)
    gf = _num_grad(lambda v: np.sum(np_dense_warp(img, v) * cot), flow)
    for got in _both(build):
        assert_close(got, [want, gx, gf], rtol=1e-6, atol=1e-6)

    def build32():
        return ci.dense_image_warp(tf.constant(img.astype(np.float32)),
                                   tf.constant(flow.astype(np.float32)))
    for got in _both(build32):
        assert got.dtype == np.float32
        assert_close(got, want.astype(np.float32), atol=1e-5)


def test_dense_image_warp_hand_case():
    img = np.arange(12, dtype=np.float32).reshape(1, 3, 4, 1)
    down = np.zeros((1, 3, 4, 2), np.float32)
    down[..., 0] = 1.0  # read one row up: the top row repeats (the edge)
    half = np.zeros((1, 3, 4, 2), np.float32)
    half[..., 1] = 0.5  # half a column to the left: the mean of neighbours

    def build():
        return [ci.dense_image_warp(tf.constant(img), tf.constant(down)),
                ci.dense_image_warp(img, half)]
    for got in _both(build):
        a, b = got[0][0, :, :, 0], got[1][0, :, :, 0]
        assert_close(a, np.array([[0, 1, 2, 3], [0, 1, 2, 3], [4, 5, 6, 7]], np.float32))
        assert_close(b, np.array([[0, .5, 1.5, 2.5], [4, 4.5, 5.5, 6.5], [8, 8.5, 9.5, 10.5]],
                                 np.float32))


def test_dense_image_warp_errors():
    with pytest.raises(ValueError, match="4 dimensional"):
        ci.dense_image_warp(np.zeros((3, 4, 1), np.float32), np.zeros((3, 4, 2), np.float32))
    with pytest.raises(ValueError, match="height must be at least 2"):
        ci.dense_image_warp(np.zeros((1, 1, 4, 1), np.float32),
                            np.zeros((1, 1, 4, 2), np.float32))
    with pytest.raises(ValueError, match="does not match"):
        ci.dense_image_warp(np.zeros((1, 3, 4, 1), np.float32),
                            np.zeros((1, 4, 3, 2), np.float32))


# ---- interpolate_spline, sparse_image_warp -------------------------------------------------

def np_phi(r2, order):
    r2 = np.maximum(r2, 1e-10)
    r = np.sqrt(r2)
    return r ** order * (np.log(r) if order % 2 == 0 else 1.0)


def np_spline(c, f, q, order, reg=0.0):
    out = []
    for cb, fb, qb in zip(c, f, q):
        n, d = cb.shape
        a = np_phi(((cb[:, None] - cb[None]) ** 2).sum(-1), order) + reg * np.eye(n)
        c1 = np.concatenate([cb, np.ones((n, 1))], 1)
        lhs = np.block([[a, c1], [c1.T, np.zeros((d + 1, d + 1))]])
        wv = np.linalg.solve(lhs, np.concatenate([fb, np.zeros((d + 1, fb.shape[1]))]))
        phi_q = np_phi(((qb[:, None] - cb[None]) ** 2).sum(-1), order)
        out.append(phi_q @ wv[:n] + np.concatenate([qb, np.ones((len(qb), 1))], 1) @ wv[n:])
    return np.stack(out)


@pytest.mark.parametrize("order", [1, 2, 3, 4, 6])
def test_interpolate_spline(order):
    c = R.uniform(0, 5, (2, 6, 2))
    f = R.standard_normal((2, 6, 3))
    q = R.uniform(0, 5, (2, 4, 2))

    def build():
        return [ci.interpolate_spline(c, f, q, order),
                ci.interpolate_spline(c, f, c, order),
                ci.interpolate_spline(c, f, q, order, regularization_weight=0.1)]
    for got in _both(build):
        assert_close(got, [np_spline(c, f, q, order), f, np_spline(c, f, q, order, 0.1)],
                     rtol=1e-6, atol=1e-6)


def test_sparse_image_warp():
    img = R.standard_normal((1, 6, 7, 2))
    dest = np.array([[[1.0, 1.0], [4.0, 2.0], [2.0, 5.0]]])  # on the pixel grid
    src = dest - np.array([[[0.5, -0.25], [0.0, 0.0], [-0.75, 0.5]]])

    def build():
        warped, flow = ci.sparse_image_warp(img, src, dest, num_boundary_points=2)
        same, zero = ci.sparse_image_warp(img, src, src, interpolation_order=1)
        return [warped, flow, same, zero]
    ys, xs = np.meshgrid(np.arange(6.0), np.arange(7.0), indexing="ij")
    grid = np.stack([ys, xs], -1).reshape(1, -1, 2)
    edge = [[y, x] for y in (0, 2.5, 5) for x in (0, 3, 6) if not (y == 2.5 and x == 3)]
    ctrl = np.concatenate([dest, np.array([edge])], 1)
    flows = np.concatenate([dest - src, np.zeros((1, 8, 2))], 1)
    want_flow = np_spline(ctrl, flows, grid, 2).reshape(1, 6, 7, 2)
    for got in _both(build):
        assert_close(got[1], want_flow, rtol=1e-6, atol=1e-6)
        assert_close(got[0], np_dense_warp(img, want_flow), rtol=1e-6, atol=1e-6)
        assert_close(got[2], img, atol=1e-9)
        assert_close(got[3], np.zeros((1, 6, 7, 2)), atol=1e-9)
        assert_close(got[1][0, 1, 1], dest[0, 0] - src[0, 0], atol=1e-9)  # at dest points,
        assert_close(got[1][0, 2, 5], dest[0, 2] - src[0, 2], atol=1e-9)  # their flows


# ---- connected_components -----------------------------------------------------------------

def np_components(images):
    """Flood fill from each unlabelled non-zero pixel in row-major order."""
    x = np.asarray(images)
    out = np.zeros(x.shape, np.int64)
    n = 0
    for idx in np.ndindex(*x.shape):
        if x[idx] == 0 or out[idx]:
            continue
        n += 1
        out[idx] = n
        stack = [idx]
        while stack:
            b, i, j = stack.pop()
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                p = (b, i + di, j + dj)
                if 0 <= p[1] < x.shape[1] and 0 <= p[2] < x.shape[2] and not out[p] \
                        and x[p] == x[idx]:
                    out[p] = n
                    stack.append(p)
    return out


def test_connected_components():
    hand = np.array([[0, 2, 2, 0, 1],
                     [1, 0, 2, 1, 1],
                     [1, 0, 0, 0, 0],
                     [0, 3, 3, 0, 3]], np.int32)
    want_hand = np.array([[0, 1, 1, 0, 2],
                          [3, 0, 1, 2, 2],
                          [3, 0, 0, 0, 0],
                          [0, 4, 4, 0, 5]])
    batch = R.integers(0, 3, (3, 6, 7)).astype(np.float32)
    batch[1] = 0  # an empty image in the middle
    batch[2, 0, 0] = np.nan  # joins nothing
    strings = np.array([[b"a", b"a", b""], [b"", b"b", b"a"]], object)

    def build():
        out = [ci.connected_components(hand), ci.connected_components(tf.constant(batch)),
               ci.connected_components(hand > 0), ci.connected_components(strings)]
        assert out[0].dtype == tf.int64 and out[1].shape.as_list() == [3, 6, 7]
        return out
    got = _run(build)
    assert_close(got[0], want_hand)
    assert_close(got[1], np_components(batch))
    assert_close(got[2], np_components((hand > 0)[None])[0])
    assert_close(got[3], np.array([[1, 1, 0], [0, 2, 3]]))
    assert got[1][2, 0, 0] == got[1][0].max() + 1  # the NaN: a component of its own
    with pytest.raises(ValueError, match="rank 2"):
        ci.connected_components(np.zeros(3))


def test_connected_components_in_a_jit_graph():
    """The executor-only op inside an auto-jit graph: clusters form around it."""
    img = (R.uniform(size=(2, 5, 5)) > 0.5).astype(np.float32)

    def build():
        lab = ci.connected_components(tf.constant(img) * 2.0)
        return tf.reduce_max(lab) + 0, lab
    g = tf.Graph()
    with g.as_default():
        n, lab = build()
        got = tf.Session(config=jit_config()).run([n, lab])
    assert got[0] == np_components(img).max()
    assert_close(got[1], np_components(img))


# ---- metric learning: references --------------------------------------------------------------

def np_pdist(f, squared=False):
    d2 = ((f[:, None] - f[None]) ** 2).sum(-1)
    return d2 if squared else np.sqrt(d2)


def np_contrastive(y, a, p, margin=1.0):
    d = np.sqrt(((a - p) ** 2).sum(1))
    return np.mean(y * d ** 2 + (1 - y) * np.maximum(margin - d, 0) ** 2)


def np_triplet(labels, emb, margin=1.0):
    d = np_pdist(emb, squared=True)
    n = len(labels)
    total, count = 0.0, 0
    for a in range(n):
        negs = [k for k in range(n) if labels[k] != labels[a]]
        for p in range(n):
            if p == a or labels[p] != labels[a]:
                continue
            count += 1
            farther = [d[a, k] for k in negs if d[a, k] > d[a, p]]
            if farther:
                neg = min(farther)
            else:
                neg = max(d[a, k] for k in negs) if negs else d[a].min()
            total += max(margin + d[a, p] - neg, 0.0)
    return total / count


def np_lifted(labels, emb, margin=1.0):
    d = np_pdist(emb)
    n = len(labels)
    total, count = 0.0, 0
    for i in range(n):
        for j in range(n):
            if i == j or labels[i] != labels[j]:
                continue
            count += 1
            s = sum(np.exp(margin - d[i, k]) for k in range(n) if labels[k] != labels[i])
            s += sum(np.exp(margin - d[j, k]) for k in range(n) if labels[k] != labels[j])
            total += max(np.log(s) + d[i, j], 0.0) ** 2
    return total / (2 * count)


def np_npairs(targets, a, p, reg_lambda=0.002):
    sims = a @ p.T
    t = targets / targets.sum(1, keepdims=True)
    logp = sims - sims.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    xent = np.mean(-(t * logp).sum(1))
    reg = np.mean((a ** 2).sum(1)) + np.mean((p ** 2).sum(1))
    return 0.25 * reg_lambda * reg + xent


LABELS = np.array([0, 1, 0, 2, 1, 0, 2, 1])
EMB = R.standard_normal((8, 3))
EMB /= np.linalg.norm(EMB, axis=1, keepdims=True)
ANCHOR, POSITIVE = R.standard_normal((8, 3)) * 0.7, R.standard_normal((8, 3)) * 0.7


def test_metric_learning_hand_cases():
    """Four points on a line, labels [0, 0, 1, 1], margin 1."""
    emb = np.array([[0.0], [1.0], [1.5], [3.0]], np.float32)
    lab = np.array([0, 0, 1, 1])
    # squared distances: d(0,1) = 1, d(0,2) = 2.25, d(0,3) = 9, d(1,2) = .25, d(1,3) = 4,
    # d(2,3) = 2.25. Anchor 0 / positive 1: the negatives farther than 1 are 2.25 and 9:
    # 1 + 1 - 2.25 < 0 -> 0; anchor 1 / positive 0: negatives .25 and 4, farther than 1:
    # 4 -> 1 + 1 - 4 < 0 -> 0; anchor 2 / positive 3 (d 2.25): negatives 2.25, .25, none
    # farther: the farthest 2.25 -> 1 + 2.25 - 2.25 = 1; anchor 3 / positive 2 (2.25):
    # negatives 9, 4: the closest farther 4 -> 1 + 2.25 - 4 < 0 -> 0. Mean: 1 / 4.
    y = np.array([1, 0], np.float32)

    def build():
        return [ml.triplet_semihard_loss(lab, emb),
                ml.contrastive_loss(y, emb[:2], emb[2:]),  # d = 1.5, 2: (2.25 + 0) / 2
                ml.pairwise_distance(emb), ml.pairwise_distance(emb, squared=True),
                ml.masked_maximum(np.array([[1., 5., 3.], [2., -4., -1.]], np.float32),
                                  np.array([[1, 0, 1], [0, 1, 1]], np.float32)),
                ml.masked_minimum(np.array([[1., 5., 3.], [2., -4., -1.]], np.float32),
                                  np.array([[0, 1, 1], [1, 0, 1]], np.float32))]
    d = np.abs(emb - emb.T)
    for got in _both(build):
        assert_close(got[0], np.float32(0.25))
        assert_close(got[1], np.float32(1.125))
        assert_close(got[2], d, atol=1e-6)
        assert_close(got[3], d * d, atol=1e-6)
        assert_close(got[4], np.array([[3.], [-1.]], np.float32))
        assert_close(got[5], np.array([[3.], [-1.]], np.float32))


def test_metric_learning_losses_match_references():
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0], np.float32)
    targets = (LABELS[:, None] == LABELS[None]).astype(np.float64)
    want = [np_triplet(LABELS, EMB), np_triplet(LABELS, EMB, 0.2),
            np_lifted(LABELS, EMB), np_lifted(LABELS, EMB, 0.5),
            np_contrastive(y, ANCHOR, POSITIVE), np_contrastive(y, ANCHOR, POSITIVE, 2.0),
            np_npairs(targets, ANCHOR, POSITIVE), np_npairs(targets, ANCHOR, POSITIVE, 0.1),
            np_pdist(EMB)]

    def build():
        e = tf.constant(EMB.astype(np.float32))
        a, p = tf.constant(ANCHOR.astype(np.float32)), tf.constant(POSITIVE.astype(np.float32))
        lab = tf.constant(LABELS.astype(np.int32))
        return [ml.triplet_semihard_loss(lab, e), ml.triplet_semihard_loss(lab, e, 0.2),
                ml.lifted_struct_loss(lab, e), ml.lifted_struct_loss(LABELS, e, margin=0.5),
                ml.contrastive_loss(y, a, p), ml.contrastive_loss(y.astype(np.int32), a, p, 2.0),
                ml.npairs_loss(lab, a, p), ml.npairs_loss(lab, a, p, reg_lambda=0.1),
                ml.pairwise_distance(e)]
    for got in _both(build):
        assert all(np.asarray(v).dtype == np.float32 for v in got)
        assert_close(got, [np.asarray(w, np.float32) for w in want], rtol=2e-5, atol=2e-5)
    assert tf.get_collection(tf.GraphKeys.LOSSES) == []


def test_metric_learning_gradients():
    """tf.gradients (float64) against central differences of the references."""
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0], np.float64)
    targets = (LABELS[:, None] == LABELS[None]).astype(np.float64)

    def build():
        e, a, p = tf.constant(EMB), tf.constant(ANCHOR), tf.constant(POSITIVE)
        losses = [ml.triplet_semihard_loss(LABELS, e), ml.lifted_struct_loss(LABELS, e),
                  ml.contrastive_loss(y, a, p), ml.npairs_loss(LABELS, a, p, 0.1)]
        return [tf.gradients(losses[0], e)[0], tf.gradients(losses[1], e)[0]] + \
            tf.gradients(losses[2], [a, p]) + tf.gradients(losses[3], [a, p])
    want = [_num_grad(lambda v: np_triplet(LABELS, v), EMB),
            _num_grad(lambda v: np_lifted(LABELS, v), EMB),
            _num_grad(lambda v: np_contrastive(y, v, POSITIVE), ANCHOR),
            _num_grad(lambda v: np_contrastive(y, ANCHOR, v), POSITIVE),
            _num_grad(lambda v: np_npairs(targets, v, POSITIVE, 0.1), ANCHOR),
            _num_grad(lambda v: np_npairs(targets, ANCHOR, v, 0.1), POSITIVE)]
    assert np.abs(want[0]).max() > 0 and np.abs(want[1]).max() > 0
    for got in _both(build):
        assert_close(got, want, rtol=1e-5, atol=1e-7)


def test_npairs_loss_multilabel():
    classes = [[0, 2], [1], [2, 3], [0, 3], [1, 2]]
    a, p = ANCHOR[:5].astype(np.float32), POSITIVE[:5].astype(np.float32)
    hot = np.zeros((5, 4))
    for i, cs in enumerate(classes):
        hot[i, cs] = 1
    shared = hot @ hot.T  # the numbers of labels two examples share

    def build():
        sp = [tf.SparseTensor([[0, c] for c in cs], np.ones(len(cs), np.int64), [1, 4])
              for cs in classes]
        return ml.npairs_loss_multilabel(sp, a, p), ml.npairs_loss_multilabel(sp, a, p, 0.5)
    got = _run(build)
    assert_close(got, [np.float32(np_npairs(shared, a, p)),
                       np.float32(np_npairs(shared, a, p, 0.5))], rtol=2e-5)
    # single labels: the same as npairs_loss
    lab = np.array([3, 1, 3, 0, 1])

    def build_single():
        sp = [tf.SparseTensor([[0, int(c)]], [1], [1, 4]) for c in lab]
        return [ml.npairs_loss_multilabel(sp, a, p), ml.npairs_loss(lab, a, p)]
    got = _run(build_single)
    assert_close(got[0], got[1], rtol=1e-6)
    with pytest.raises(TypeError, match="SparseTensors"):
        ml.npairs_loss_multilabel([np.ones((1, 4))], a, p)


def test_metric_learning_errors():
    with pytest.raises(ValueError, match="vector"):
        ml.triplet_semihard_loss(np.zeros((4, 1), np.int32), EMB[:4])
    with pytest.raises(ValueError, match="2-D"):
        ml.lifted_struct_loss(LABELS, EMB[None])
    with pytest.raises(TypeError, match="floating"):
        ml.pairwise_distance(np.ones((3, 2), np.int32))
    with pytest.raises(UnimplementedError, match="cluster_loss"):
        ml.cluster_loss  # noqa: B018
    with pytest.raises(AttributeError):
        ml.no_such_loss  # noqa: B018
