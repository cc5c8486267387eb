"""tf.image boxes, patches and filters, and tf.space_to_batch_nd: against per-element
definitions of TF's kernels written in NumPy (and SciPy / JAX), in the executor and with
every op placed on XLA_CPU where the function compiles; gradients against JAX's."""

import io

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage
import scipy.signal

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .helpers import assert_close, run_executor_and_xla_cpu

R = np.random.default_rng(31)


# ---- space_to_batch_nd / batch_to_space_nd ------------------------------------------------

def _ref_s2b(x, block, pads):
    p = np.pad(x, [(0, 0)] + list(pads) + [(0, 0)] * (x.ndim - 1 - len(block)))
    b = x.shape[0]
    k = len(block)
    out_sp = [p.shape[1 + i] // block[i] for i in range(k)]
    out = np.zeros((b * int(np.prod(block)),) + tuple(out_sp) + p.shape[1 + k:], x.dtype)
    for ob in range(out.shape[0]):
        off, bi = divmod(ob, b)
        offs = np.unravel_index(off, block)
        for pos in np.ndindex(*out_sp):
            src = tuple(pos[i] * block[i] + offs[i] for i in range(k))
            out[(ob,) + pos] = p[(bi,) + src]
    return out


S2B = [((2, 4, 6, 3), [2, 3], [[0, 0], [1, 2]]), ((1, 5, 2), [3], [[1, 0]]),
       ((3, 2, 2, 2, 1), [2, 1, 2], [[0, 0], [0, 1], [1, 1]])]


def test_space_to_batch_nd_and_back_against_definition():
    xs = [R.standard_normal(s).astype(np.float32) for s, _, _ in S2B]

    def build():
        o = {}
        for i, (x, (_, blk, pads)) in enumerate(zip(xs, S2B)):
            y = tf.space_to_batch_nd(tf.constant(x), blk, pads)
            o[f"s2b{i}"] = y
            o[f"back{i}"] = tf.batch_to_space_nd(y, blk, pads)
        o["s2b4"] = tf.space_to_batch(tf.constant(xs[0][:, :, :4]), [[1, 1], [0, 2]], 2)
        o["b2s4"] = tf.batch_to_space(tf.constant(xs[0][:, :, :4]).__mul__(1.0)[:, :2, :2],
                                      [[0, 1], [1, 0]], 1)
        return o
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        for i, (x, (_, blk, pads)) in enumerate(zip(xs, S2B)):
            want = _ref_s2b(x, blk, pads)
            assert_close(got[f"s2b{i}"], want, what=f"s2b{i}: ")
            assert_close(got[f"back{i}"], x, what=f"back{i}: ")
        assert_close(got["s2b4"], _ref_s2b(xs[0][:, :, :4], [2, 2], [[1, 1], [0, 2]]))
        assert_close(got["b2s4"], xs[0][:, :1, 1:2, :])


def test_space_to_batch_gradients():
    x = R.standard_normal((2, 4, 6, 3)).astype(np.float32)
    c = R.standard_normal((12, 3, 3, 3)).astype(np.float32)

    def build():
        xt = tf.constant(x)
        y = tf.space_to_batch_nd(xt, [2, 3], [[1, 1], [1, 2]])
        g1 = tf.gradients(tf.reduce_sum(y * c), xt)[0]
        z = tf.constant(c)
        w = tf.batch_to_space_nd(z, [2, 3], [[1, 1], [1, 2]])
        g2 = tf.gradients(tf.reduce_sum(w * x), z)[0]
        return g1, g2
    want1 = np.zeros_like(x)
    ref = _ref_s2b(np.arange(x.size, dtype=np.float64).reshape(x.shape) + 1, [2, 3],
                   [[1, 1], [1, 2]])
    np.add.at(want1.reshape(-1), (ref[ref > 0] - 1).astype(int), c[ref > 0])
    want2 = _ref_s2b(x, [2, 3], [[1, 1], [1, 2]])
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        assert_close(got[0], want1, 1e-5, 1e-5)
        assert_close(got[1], want2, 1e-5, 1e-5)


def test_space_to_batch_errors():
    with pytest.raises(InvalidArgumentError, match="divisible"):
        tf.space_to_batch_nd(tf.zeros([1, 5, 4, 1]), [2, 2], [[0, 0], [0, 0]])
    with pytest.raises(InvalidArgumentError, match="not divisible"):
        tf.batch_to_space_nd(tf.zeros([3, 2, 2, 1]), [2, 1], [[0, 0], [0, 0]])


# ---- patches, dilation, rot90, sobel, ssim --------------------------------------------------

def _geom(n, k, s, r, padding):
    ke = (k - 1) * r + 1
    if padding == "VALID":
        return -(-(n - ke + 1) // s), 0
    out = -(-n // s)
    return out, max((out - 1) * s + ke - n, 0) // 2


def _ref_windows(x, kh, kw, s, r, padding, fill):
    b, h, w, c = x.shape
    oh, pt = _geom(h, kh, s[0], r[0], padding)
    ow, pl = _geom(w, kw, s[1], r[1], padding)
    out = np.full((b, oh, ow, kh, kw, c), fill, x.dtype)
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for d in range(kw):
                    y, xx = i * s[0] + a * r[0] - pt, j * s[1] + d * r[1] - pl
                    if 0 <= y < h and 0 <= xx < w:
                        out[:, i, j, a, d] = x[:, y, xx]
    return out


PATCH_CASES = [((3, 3), (1, 1), (1, 1), "VALID"), ((2, 3), (2, 1), (1, 2), "SAME"),
               ((3, 2), (3, 2), (2, 1), "SAME"), ((1, 1), (2, 2), (1, 1), "VALID"),
               ((4, 4), (1, 3), (1, 1), "VALID")]


def test_extract_image_patches_and_dilation_against_definition():
    x = R.standard_normal((2, 7, 6, 3)).astype(np.float32)
    filt = R.standard_normal((3, 2, 3)).astype(np.float32)

    def build():
        o = {}
        xt = tf.constant(x)
        for i, (k, s, r, p) in enumerate(PATCH_CASES):
            o[f"p{i}"] = tf.extract_image_patches(xt, [1, *k, 1], [1, *s, 1], [1, *r, 1], p)
        o["patches_v2"] = tf.image.extract_patches(xt, [1, 2, 2, 1], [1, 1, 1, 1],
                                                   [1, 1, 1, 1], "SAME")
        for i, (s, r, p) in enumerate([((1, 1), (1, 1), "SAME"), ((2, 1), (1, 2), "VALID"),
                                       ((1, 2), (2, 1), "SAME")]):
            o[f"dil{i}"] = tf.nn.dilation2d(xt, filt, [1, *s, 1], [1, *r, 1], p)
            o[f"ero{i}"] = tf.nn.erosion2d(xt, filt, [1, *s, 1], [1, *r, 1], p)
        return o
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        for i, (k, s, r, p) in enumerate(PATCH_CASES):
            win = _ref_windows(x, *k, s, r, p, 0.0)
            assert_close(got[f"p{i}"], win.reshape(win.shape[:3] + (-1,)), what=f"p{i}: ")
        win = _ref_windows(x, 2, 2, (1, 1), (1, 1), "SAME", 0.0)
        assert_close(got["patches_v2"], win.reshape(win.shape[:3] + (-1,)))
        for i, (s, r, p) in enumerate([((1, 1), (1, 1), "SAME"), ((2, 1), (1, 2), "VALID"),
                                       ((1, 2), (2, 1), "SAME")]):
            win = _ref_windows(x, 3, 2, s, r, p, -np.inf)
            assert_close(got[f"dil{i}"], (win + filt[None, None, None]).max((3, 4)),
                         what=f"dil{i}: ")
            win = _ref_windows(x, 3, 2, s, r, p, np.inf)
            assert_close(got[f"ero{i}"], (win - filt[::-1, ::-1][None, None, None]).min((3, 4)),
                         what=f"ero{i}: ")


def test_patches_and_dilation_gradients_against_jax():
    x = R.standard_normal((1, 6, 5, 2)).astype(np.float32)
    filt = R.standard_normal((2, 3, 2)).astype(np.float32)
    c = R.standard_normal((1, 3, 5, 12)).astype(np.float32)
    cd = R.standard_normal((1, 6, 5, 2)).astype(np.float32)

    def jpatch(v):  # SAME, k 2x3, stride (2, 1), rate 1: explicit gathers in JAX
        p = jnp.pad(v, [(0, 0), (0, 1), (1, 1), (0, 0)])
        rows = [jnp.concatenate([p[:, 2 * i + a, j + d] for a in range(2) for d in range(3)],
                                -1) for i in range(3) for j in range(5)]
        return jnp.stack(rows, 1).reshape(1, 3, 5, 12)

    def jdil(v, f):  # SAME, stride 1, rate 1
        p = jnp.pad(v, [(0, 0), (0, 1), (1, 1), (0, 0)], constant_values=-jnp.inf)
        cand = jnp.stack([p[:, a:a + 6, d:d + 5] + f[a, d] for a in range(2) for d in range(3)])
        return cand.max(0)

    want_p = jax.grad(lambda v: (jpatch(v) * c).sum())(x)
    want_x, want_f = jax.grad(lambda v, f: (jdil(v, f) * cd).sum(), (0, 1))(x, filt)

    def build():
        xt, ft = tf.constant(x), tf.constant(filt)
        p = tf.extract_image_patches(xt, [1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 1, 1], "SAME")
        d = tf.nn.dilation2d(xt, ft, [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
        return (tf.gradients(tf.reduce_sum(p * c), xt)[0],
                tf.gradients(tf.reduce_sum(d * cd), [xt, ft]))
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        assert_close(got[0], np.asarray(want_p), 1e-5, 1e-5)
        assert_close(got[1][0], np.asarray(want_x), 1e-5, 1e-5)
        assert_close(got[1][1], np.asarray(want_f), 1e-5, 1e-5)


def test_rot90_sobel_ssim_against_numpy_scipy():
    img = R.random((2, 5, 7, 3)).astype(np.float32)
    a = R.random((2, 16, 13, 3)).astype(np.float32)
    b = np.clip(a + R.normal(0, 0.1, a.shape), 0, 1).astype(np.float32)

    def build():
        x = tf.constant(img)
        o = {f"r{k}": tf.image.rot90(x, k) for k in (0, 1, 2, 3, -1, 6)}
        o["r3d"] = tf.image.rot90(x[0], 1)
        o["sobel"] = tf.image.sobel_edges(x)
        o["ssim"] = tf.image.ssim(tf.constant(a), tf.constant(b), 1.0)
        o["ssim_self"] = tf.image.ssim(tf.constant(a), tf.constant(a), 1.0)
        o["ssim_small"] = tf.image.ssim(tf.constant(a[0]), tf.constant(b[0]), 1.0,
                                        filter_size=5, filter_sigma=0.8)
        return o

    def gauss(n, sigma):
        g = np.exp(-((np.arange(n) - (n - 1) / 2) ** 2) / (2 * sigma ** 2))
        g2 = np.outer(g, g)
        return g2 / g2.sum()

    def ref_ssim(x, y, n=11, sigma=1.5):
        k = gauss(n, sigma)
        out = []
        for bi in range(x.shape[0]):
            per = []
            for ch in range(x.shape[-1]):
                def f(v):
                    return scipy.signal.correlate2d(v.astype(np.float64), k, "valid")
                u, v = x[bi, ..., ch], y[bi, ..., ch]
                mu, mv = f(u), f(v)
                c1, c2 = 0.01 ** 2, 0.03 ** 2
                lum = (2 * mu * mv + c1) / (mu ** 2 + mv ** 2 + c1)
                cs = (2 * f(u * v) - 2 * mu * mv + c2) / (f(u * u + v * v) - mu ** 2 - mv ** 2
                                                         + c2)
                per.append((lum * cs).mean())
            out.append(np.mean(per))
        return np.array(out)

    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    sob = np.stack([np.stack([scipy.ndimage.correlate(img[bi, ..., ch], k, mode="mirror")
                              for ch in range(3)], -1) for bi in range(2)
                    for k in (ky, ky.T)]).reshape(2, 2, 5, 7, 3).transpose(0, 2, 3, 4, 1)
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        for k in (0, 1, 2, 3, -1, 6):
            assert_close(got[f"r{k}"], np.rot90(img, k, axes=(1, 2)), what=f"rot {k}: ")
        assert_close(got["r3d"], np.rot90(img[0]))
        assert_close(got["sobel"], sob, 1e-5, 1e-5)
        assert_close(got["ssim"], ref_ssim(a, b), 1e-4, 1e-5)
        assert_close(got["ssim_self"], np.ones(2, np.float32), 1e-5, 1e-5)
        assert_close(got["ssim_small"], ref_ssim(a[:1], b[:1], 5, 0.8)[0], 1e-4, 1e-5)


def test_ssim_multiscale_against_numpy():
    a = R.random((1, 24, 26, 1)).astype(np.float32)
    b = np.clip(a + R.normal(0, 0.1, a.shape), 0, 1).astype(np.float32)
    pf = (0.3, 0.3, 0.4)
    with tf.Session() as s:
        got = s.run(tf.image.ssim_multiscale(tf.constant(a), tf.constant(b), 1.0, pf,
                                             filter_size=5, filter_sigma=1.0))
        one = s.run(tf.image.ssim_multiscale(tf.constant(a), tf.constant(a), 1.0, pf,
                                             filter_size=5, filter_sigma=1.0))

    def gauss(n, sigma):
        g = np.exp(-((np.arange(n) - (n - 1) / 2) ** 2) / (2 * sigma ** 2))
        return np.outer(g, g) / np.outer(g, g).sum()

    def terms(u, v):
        def f(t):
            return scipy.signal.correlate2d(t, gauss(5, 1.0), "valid")
        mu, mv = f(u), f(v)
        lum = (2 * mu * mv + 1e-4) / (mu ** 2 + mv ** 2 + 1e-4)
        cs = (2 * f(u * v) - 2 * mu * mv + 9e-4) / (f(u * u + v * v) - mu ** 2 - mv ** 2 + 9e-4)
        return (lum * cs).mean(), cs.mean()

    def down(t):
        t = np.pad(t, [(0, t.shape[0] % 2), (0, t.shape[1] % 2)], mode="symmetric")
        return t.reshape(t.shape[0] // 2, 2, t.shape[1] // 2, 2).mean((1, 3))
    u, v = a[0, :, :, 0].astype(np.float64), b[0, :, :, 0].astype(np.float64)
    vals = []
    for k in range(3):
        if k:
            u, v = down(u), down(v)
        s_, cs = terms(u, v)
        vals.append(max(cs, 0))
    vals[-1] = max(s_, 0)
    want = np.prod(np.power(vals, pf))
    assert_close(got, np.array([want], np.float32), 1e-4, 1e-5)
    assert_close(one, np.ones(1, np.float32), 1e-5, 1e-5)


# ---- crop_and_resize -----------------------------------------------------------------------

def _ref_crop(xp, img, boxes, ind, ch, cw, method="bilinear", extrap=0.0):
    """TF's CropAndResize kernel, vectorized over one box at a time (NumPy or JAX)."""
    _, h, w, c = img.shape
    crops = []
    for n in range(boxes.shape[0]):
        y1, x1, y2, x2 = boxes[n, 0], boxes[n, 1], boxes[n, 2], boxes[n, 3]
        f = np.float32  # float32 arithmetic in TF's order: the rounding of halves is TF's
        ys = (y1 * f(h - 1) + xp.arange(ch, dtype=f) * ((y2 - y1) * f(h - 1) / f(ch - 1))) \
            if ch > 1 else xp.full((1,), f(0.5) * (y1 + y2) * f(h - 1))
        xs = (x1 * f(w - 1) + xp.arange(cw, dtype=f) * ((x2 - x1) * f(w - 1) / f(cw - 1))) \
            if cw > 1 else xp.full((1,), f(0.5) * (x1 + x2) * f(w - 1))
        im = img[int(ind[n])]
        oy = (ys < 0) | (ys > h - 1)
        ox = (xs < 0) | (xs > w - 1)

        def cl(v, n_):
            return xp.clip(v, 0, n_ - 1).astype(np.int32)
        if method == "nearest":
            yi, xi = cl(xp.floor(ys + 0.5), h), cl(xp.floor(xs + 0.5), w)
            val = im[yi][:, xi]
        else:
            yt, yb, xl, xr = cl(xp.floor(ys), h), cl(xp.ceil(ys), h), cl(xp.floor(xs), w), \
                cl(xp.ceil(xs), w)
            ly = (ys - xp.floor(ys))[:, None, None]
            lx = (xs - xp.floor(xs))[None, :, None]
            top = im[yt][:, xl] + (im[yt][:, xr] - im[yt][:, xl]) * lx
            bot = im[yb][:, xl] + (im[yb][:, xr] - im[yb][:, xl]) * lx
            val = top + (bot - top) * ly
        crops.append(xp.where((oy[:, None] | ox[None, :])[:, :, None], extrap, val))
    return xp.stack(crops)


IMG = R.random((2, 6, 8, 3)).astype(np.float32)
BOXES = np.array([[0.1, 0.2, 0.7, 0.9], [-0.2, 0.3, 0.5, 1.3], [0.8, 0.9, 0.2, 0.1],
                  [0.33, 0.41, 0.33, 0.41], [1.2, -0.5, 1.5, -0.1]], np.float32)
IND = np.array([0, 1, 1, 0, 1], np.int32)


def test_crop_and_resize_against_tf_kernel():
    def build():
        x, b, i = tf.constant(IMG), tf.constant(BOXES), tf.constant(IND)
        return {"bl": tf.image.crop_and_resize(x, b, i, [4, 5]),
                "nn": tf.image.crop_and_resize(x, b, i, [3, 7], method="nearest",
                                               extrapolation_value=-1.0),
                "one": tf.image.crop_and_resize(x, b, i, [1, 1], extrapolation_value=0.5),
                "u8": tf.image.crop_and_resize(tf.constant((IMG * 255).astype(np.uint8)), b, i,
                                               [2, 3])}
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        assert_close(got["bl"], _ref_crop(np, IMG, BOXES, IND, 4, 5), 1e-5, 1e-5)
        assert_close(got["nn"], _ref_crop(np, IMG, BOXES, IND, 3, 7, "nearest", -1.0))
        assert_close(got["one"], _ref_crop(np, IMG, BOXES, IND, 1, 1, extrap=0.5), 1e-5, 1e-5)
        u8 = (IMG * 255).astype(np.uint8).astype(np.float32)
        assert_close(got["u8"], _ref_crop(np, u8, BOXES, IND, 2, 3), 1e-5, 1e-3)
        assert got["bl"].dtype == np.float32


def test_crop_and_resize_gradients_against_jax():
    c = R.standard_normal((5, 4, 5, 3)).astype(np.float32)

    def loss(img, boxes):
        return (_ref_crop(jnp, img, boxes, IND, 4, 5) * c).sum()
    want_i, want_b = jax.grad(loss, (0, 1))(IMG, BOXES)

    def build():
        x, b = tf.constant(IMG), tf.constant(BOXES)
        y = tf.image.crop_and_resize(x, b, tf.constant(IND), [4, 5])
        return tf.gradients(tf.reduce_sum(y * c), [x, b])
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        assert_close(got[0], np.asarray(want_i), 1e-5, 1e-5)
        assert_close(got[1], np.asarray(want_b), 1e-4, 1e-4)


# ---- non_max_suppression, draw_bounding_boxes, sample_distorted_bounding_box ---------------

def _ref_nms(boxes, scores, k, thr, sthr=-np.inf):
    def iou(a, b):
        ya0, ya1 = sorted((a[0], a[2]))
        xa0, xa1 = sorted((a[1], a[3]))
        yb0, yb1 = sorted((b[0], b[2]))
        xb0, xb1 = sorted((b[1], b[3]))
        aa, ab = (ya1 - ya0) * (xa1 - xa0), (yb1 - yb0) * (xb1 - xb0)
        if aa <= 0 or ab <= 0:
            return 0.0
        inter = max(min(ya1, yb1) - max(ya0, yb0), 0) * max(min(xa1, xb1) - max(xa0, xb0), 0)
        return inter / (aa + ab - inter)
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    kept = []
    for i in order:
        if scores[i] <= sthr or len(kept) == k:
            continue
        if all(iou(boxes[i], boxes[j]) <= thr for j in kept):
            kept.append(i)
    return np.array(kept, np.int32)


def test_non_max_suppression_against_greedy_reference():
    n = 40
    ctr = R.random((n, 2))
    size = R.random((n, 2)) * 0.4
    boxes = np.concatenate([ctr - size / 2, ctr + size / 2], 1).astype(np.float32)
    boxes[::7] = boxes[::7][:, [2, 3, 0, 1]]  # flipped corners
    boxes[5] = [0.2, 0.2, 0.2, 0.6]  # empty
    scores = R.random(n).astype(np.float32)
    scores[3] = scores[4]  # a tie
    bx = tf.placeholder(tf.float32, [None, 4])
    sc = tf.placeholder(tf.float32, [None])
    outs = {"a": tf.image.non_max_suppression(bx, sc, 10, 0.3),
            "b": tf.image.non_max_suppression(bx, sc, 100, 0.5, score_threshold=0.4),
            "c": tf.image.non_max_suppression(bx, sc, 5, 0.0),
            "none": tf.image.non_max_suppression(bx, sc, 5, 0.5, score_threshold=2.0),
            "zero": tf.image.non_max_suppression(bx, sc, 0, 0.5),
            "pad": tf.image.non_max_suppression_padded(bx, sc, 12, 0.3, 0.5,
                                                       pad_to_max_output_size=True),
            "nopad": tf.image.non_max_suppression_padded(bx, sc, 12, 0.3, 0.5)}
    assert outs["pad"][0].shape.as_list() == [12]
    with tf.Session() as s:
        got = s.run(outs, {bx: boxes, sc: scores})
        empty = s.run(outs["a"], {bx: np.zeros((0, 4), np.float32),
                                  sc: np.zeros(0, np.float32)})
    assert_close(got["a"], _ref_nms(boxes, scores, 10, 0.3))
    assert_close(got["b"], _ref_nms(boxes, scores, 100, 0.5, 0.4))
    assert_close(got["c"], _ref_nms(boxes, scores, 5, 0.0))
    assert got["none"].shape == (0,) and got["zero"].shape == (0,) and empty.shape == (0,)
    want = _ref_nms(boxes, scores, 12, 0.3, 0.5)
    idx, valid = got["pad"]
    assert valid == len(want) and idx.shape == (12,)
    assert_close(idx[:valid], want)
    assert np.all(idx[valid:] == 0)
    assert_close(got["nopad"][0], want)
    assert got["a"].dtype == np.int32 and len(got["a"]) == 10


def test_draw_bounding_boxes_against_tf_rules():
    img = np.zeros((2, 6, 7, 3), np.float32)
    boxes = np.array([[[0.2, 0.0, 0.8, 0.5], [-0.5, 0.5, 0.6, 1.5]],
                      [[0.0, 0.0, 1.0, 1.0], [0.9, 0.9, 0.1, 0.1]]], np.float32)
    def build():
        return (tf.image.draw_bounding_boxes(tf.constant(img), tf.constant(boxes)),
                tf.image.draw_bounding_boxes(tf.zeros([1, 4, 4, 1]), boxes[:1, 1:]),
                tf.image.draw_bounding_boxes(tf.ones([1, 3, 3, 4]), np.zeros((1, 0, 4)))), None
    (got, gray, none), (xgot, xgray, xnone) = run_executor_and_xla_cpu(build)
    assert_close(xgot, got)
    assert_close(xgray, gray)
    assert_close(none, np.ones((1, 3, 3, 4), np.float32))
    assert_close(xnone, none)
    want = img.copy()
    yellow, blue = [1, 1, 0], [0, 0, 1]
    # box 0 of image 0: rows 1..4 (int(0.2*5)=1, int(0.8*5)=4), cols 0..3 (int(0.5*6)=3)
    want[0, 1, 0:4] = yellow
    want[0, 4, 0:4] = yellow
    want[0, 1:5, 0] = yellow
    want[0, 1:5, 3] = yellow
    # box 1: rows int(-2.5)=-2 .. 3, cols 3 .. int(9.0)=9: only the bottom and left lines
    want[0, 3, 3:7] = blue
    want[0, 0:4, 3] = blue
    want[1, 0, :] = yellow
    want[1, 5, :] = yellow
    want[1, :, 0] = yellow
    want[1, :, 6] = yellow  # the second box of image 1 is inverted: skipped
    assert_close(got, want)
    gw = np.zeros((1, 4, 4, 1), np.float32)  # depth 1: every colour's first channel is 1
    # rows int(-1.5)=-1 .. int(1.8)=1, cols 1 .. int(4.5)=4: only the bottom and left lines
    gw[0, 1, 1:4] = 1
    gw[0, 0:2, 1] = 1
    assert_close(gray, gw)


def test_sample_distorted_bounding_box_constraints():
    bbox = np.array([[[0.1, 0.2, 0.5, 0.6]]], np.float32)

    def run():
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(3)
            outs = [tf.image.sample_distorted_bounding_box(
                [40, 60, 3], bbox, min_object_covered=0.5, aspect_ratio_range=(0.5, 2.0),
                area_range=(0.1, 0.8), seed=k) for k in range(20)]
            sliced = tf.slice(tf.zeros([40, 60, 3]), outs[0][0], outs[0][1])
            whole = tf.image.sample_distorted_bounding_box(
                [10, 10, 1], np.zeros((1, 0, 4), np.float32), seed=1,
                use_image_if_no_bounding_boxes=True)
            with tf.Session(graph=g) as s:
                return s.run(outs), s.run(outs), s.run([tf.shape(sliced), outs[0][1], whole])
    got, second, (shp, size0, whole) = run()
    assert_close(run()[0], got)  # the same seeds give the same crops in a new graph
    assert any(not np.array_equal(a[0], b[0]) for a, b in zip(got, second))  # fresh draws
    for begin, size, box in got + second:
        assert begin.dtype == np.int32 and box.shape == (1, 1, 4)
        y0, x0 = begin[:2]
        h, w = size[:2]
        assert size[2] == -1 and begin[2] == 0
        assert 0 <= y0 and y0 + h <= 40 and 0 <= x0 and x0 + w <= 60
        assert 0.1 * 2400 - 1e-3 <= h * w <= 0.8 * 2400 + 1e-3
        assert 0.5 * 0.9 <= w / h <= 2.0 * 1.1
        inter = max(min(y0 + h, 20) - max(y0, 4), 0) * max(min(x0 + w, 36) - max(x0, 12), 0)
        assert inter / (16 * 24) >= 0.5
        assert_close(box[0, 0], np.array([y0 / 40, x0 / 60, (y0 + h) / 40, (x0 + w) / 60],
                                         np.float32), 1e-6, 1e-6)
    assert len({tuple(b) for b, _, _ in got}) > 5  # different seeds give different crops
    assert list(shp) == [size0[0], size0[1], 3]
    assert whole[1][2] == -1 and 0 < whole[1][0] <= 10
    with pytest.raises(InvalidArgumentError, match="No bounding boxes"):
        with tf.Session() as s:
            s.run(tf.image.sample_distorted_bounding_box([4, 4, 1], np.zeros((1, 0, 4))))


def test_codecs_jpeg_gif_round_trip():
    from PIL import Image
    img = (R.random((8, 10, 3)) * 255).astype(np.uint8)
    smooth = np.tile(np.linspace(0, 255, 10, dtype=np.uint8)[None, :, None], (8, 1, 3))
    frames = [Image.fromarray(np.full((5, 6, 3), v, np.uint8)) for v in (0, 128, 255)]
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:])
    with tf.Session() as s:
        enc = s.run(tf.image.encode_jpeg(tf.constant(smooth), quality=100))
        enc_g = s.run(tf.image.encode_jpeg(tf.constant(img[:, :, :1])))
        dec = s.run(tf.image.decode_jpeg(enc))
        gif = s.run(tf.image.decode_gif(tf.constant(buf.getvalue())))
    assert enc[:2] == b"\xff\xd8" and enc_g[:2] == b"\xff\xd8"
    assert dec.shape == (8, 10, 3) and np.abs(dec.astype(int) - smooth).max() <= 8
    assert np.asarray(Image.open(io.BytesIO(enc_g))).shape == (8, 10)
    assert gif.shape == (3, 5, 6, 3) and gif.dtype == np.uint8
    assert_close(gif[:, 0, 0, 0].astype(int), np.array([0, 128, 255]))
    with pytest.raises(InvalidArgumentError, match="uint8"):
        tf.image.encode_jpeg(tf.zeros([2, 2, 3]))


# ---- tf.nn.pool / with_space_to_batch -------------------------------------------------------

def _ref_pool(x, window, kind, padding, rate, strides):
    """Channels-last N-D pooling by definition: SAME without dilation ignores the padding
    (TF's pools); with dilation TF pads with zeros the pool then sees (with_space_to_batch)."""
    k = len(window)
    dilated = any(r > 1 for r in rate)
    pads = []
    for n, w, r, s in zip(x.shape[1:1 + k], window, rate, strides):
        ke = (w - 1) * r + 1
        if padding == "VALID":
            pads.append((0, 0))
        else:
            out = -(-n // s)
            tot = max((out - 1) * s + ke - n, 0)
            pads.append((tot // 2, tot - tot // 2))
    fill = 0.0 if dilated else np.nan
    p = np.pad(x.astype(np.float64), [(0, 0)] + pads + [(0, 0)], constant_values=fill)
    outs = [(p.shape[1 + i] - (window[i] - 1) * rate[i] - 1) // strides[i] + 1
            for i in range(k)]
    res = np.zeros((x.shape[0], *outs, x.shape[-1]))
    for pos in np.ndindex(*outs):
        sl = tuple(slice(pos[i] * strides[i], pos[i] * strides[i] + (window[i] - 1) * rate[i]
                         + 1, rate[i]) for i in range(k))
        win = p[(slice(None),) + sl].reshape(x.shape[0], -1, x.shape[-1])
        res[(slice(None),) + pos] = np.nanmax(win, 1) if kind == "MAX" else np.nanmean(win, 1)
    return res.astype(np.float32)


POOLS = [((3, 3), "MAX", "SAME", (2, 2), (1, 1)), ((2, 3), "AVG", "VALID", (2, 1), (1, 1)),
         ((3, 2), "AVG", "SAME", (1, 3), (1, 1)), ((2, 2), "AVG", "SAME", (1, 1), (2, 2)),
         ((3,), "MAX", "VALID", (2,), (1,)), ((2,), "AVG", "SAME", (3,), (1,)),
         ((2, 2, 2), "MAX", "VALID", (1, 2, 1), (1, 1, 1))]


def test_pool_and_with_space_to_batch_against_definition():
    x2 = R.standard_normal((2, 9, 8, 3)).astype(np.float32)
    x1 = R.standard_normal((2, 11, 3)).astype(np.float32)
    x3 = R.standard_normal((1, 5, 6, 5, 2)).astype(np.float32)
    filt = R.standard_normal((3, 3, 3, 2)).astype(np.float32)
    xs = {2: x2, 1: x1, 3: x3}

    def build():
        o = {}
        for i, (w, kind, pad, rate, st) in enumerate(POOLS):
            o[f"p{i}"] = tf.nn.pool(tf.constant(xs[len(w)]), w, kind, pad, dilation_rate=rate,
                                    strides=st)
        xt, ft = tf.constant(x2), tf.constant(filt)
        o["wstb"] = tf.nn.with_space_to_batch(
            xt, [2, 3], "SAME", lambda t, n, p: tf.nn.conv2d(t, ft, [1, 1, 1, 1], p),
            filter_shape=[3, 3])
        o["atrous"] = tf.nn.convolution(xt, ft, "SAME", dilation_rate=[2, 3])
        o["pads"] = tf.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [0, 2]])
        return o
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        for i, (w, kind, pad, rate, st) in enumerate(POOLS):
            assert_close(got[f"p{i}"], _ref_pool(xs[len(w)], w, kind, pad, rate, st), 1e-5,
                         1e-5, what=f"pool {i}: ")
        assert_close(got["wstb"], got["atrous"], 1e-4, 1e-4)
        assert_close(got["pads"], [np.array([[1, 0], [0, 2]], np.int32),
                                   np.array([[0, 0], [0, 0]], np.int32)])
    with pytest.raises(InvalidArgumentError, match="strides > 1"):
        tf.nn.pool(tf.zeros([1, 4, 4, 1]), [2, 2], "MAX", "SAME", [2, 2], [2, 2])


def test_extract_glimpse_against_tf_kernel_rules():
    img = R.random((3, 8, 10, 2)).astype(np.float32)
    # centred normalized (0, 0): corner (8/2 - 3/2, 10/2 - 4/2) -> (2.5 -> 2, 3)
    offs = np.array([[0.0, 0.0], [-1.0, 0.9], [0.5, -0.2]], np.float32)
    px = np.array([[4.0, 5.0], [1.0, 9.5], [7.2, 2.0]], np.float32)
    with tf.Session() as s:
        cen = s.run(tf.image.extract_glimpse(tf.constant(img), [3, 4], offs, noise="zero"))
        pix = s.run(tf.image.extract_glimpse(tf.constant(img), [3, 4], px, centered=False,
                                             normalized=False, noise="zero"))
        uni = s.run(tf.image.extract_glimpse(tf.constant(img), [3, 4], offs))
        gau = s.run(tf.image.extract_glimpse(tf.constant(img), [3, 4], offs,
                                             uniform_noise=False))

    def ref(oy, ox):  # corners, truncated toward zero; outside: zero
        y0, x0 = int(np.float32(oy) - 1.5), int(np.float32(ox) - 2.0)
        out = np.zeros((3, 4, 2), np.float32)
        for a in range(3):
            for d in range(4):
                if 0 <= y0 + a < 8 and 0 <= x0 + d < 10:
                    out[a, d] = img[i, y0 + a, x0 + d]
        return out
    for i in range(3):
        cy = (offs[i, 0] * 8 / 2 + 4).astype(np.float32)
        cx = (offs[i, 1] * 10 / 2 + 5).astype(np.float32)
        assert_close(cen[i], ref(cy, cx), what=f"centred {i}: ")
        assert_close(pix[i], ref(px[i, 0], px[i, 1]), what=f"pixels {i}: ")
        inside = ref(cy, cx) != 0
        assert_close(uni[i][inside], cen[i][inside])
        assert_close(gau[i][inside], cen[i][inside])
    assert_close(uni[0], cen[0])  # fully inside: no noise
    noise = uni[1][cen[1] == 0]
    assert noise.size and noise.min() >= img[1].min() and noise.max() <= img[1].max()
