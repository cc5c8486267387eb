"""tf.image: resize_bilinear / resize_nearest_neighbor (legacy, half-pixel and
align_corners coordinates) against per-pixel loops of TF's kernel definitions, their
gradient against JAX, and flips, per_image_standardization, central_crop,
convert_image_dtype, rgb_to_grayscale against NumPy; executor and compiled (XLA_CPU)."""

import math

import jax
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .helpers import assert_close, run_executor_and_xla_cpu

R = np.random.default_rng(12)
IMG = R.random((2, 5, 7, 3)).astype(np.float32)
U8 = (R.random((5, 7, 3)) * 255).astype(np.uint8)


def _src(i, n_in, n_out, align, half):
    s = (n_in - 1) / (n_out - 1) if align and n_out > 1 else n_in / n_out
    return (i + 0.5) * s - 0.5 if half else i * s


def _ref_bilinear(x, oh, ow, align=False, half=False, xp=np):
    b, ih, iw, c = x.shape
    rows = []
    for i in range(oh):
        cols = []
        for j in range(ow):
            y, xx = _src(i, ih, oh, align, half), _src(j, iw, ow, align, half)
            y0, x0 = math.floor(y), math.floor(xx)
            ly, lx = y - y0, xx - x0
            y0c, y1 = max(y0, 0), min(math.ceil(y), ih - 1)
            x0c, x1 = max(x0, 0), min(math.ceil(xx), iw - 1)
            top = x[:, y0c, x0c] + (x[:, y0c, x1] - x[:, y0c, x0c]) * lx
            bot = x[:, y1, x0c] + (x[:, y1, x1] - x[:, y1, x0c]) * lx
            cols.append(top + (bot - top) * ly)
        rows.append(xp.stack(cols, 1))
    return xp.stack(rows, 1)


def _ref_nearest(x, oh, ow, align=False, half=False):
    def idx(i, n_in, n_out):
        s = (n_in - 1) / (n_out - 1) if align and n_out > 1 else n_in / n_out
        v = math.floor(i * s + 0.5) if align else math.floor((i + 0.5) * s if half else i * s)
        return min(v, n_in - 1)
    ys = [idx(i, x.shape[1], oh) for i in range(oh)]
    xs = [idx(j, x.shape[2], ow) for j in range(ow)]
    return x[:, ys][:, :, xs]


SIZES = [(3, 4), (9, 11), (1, 1)]


def test_resize_against_tf_kernel_definitions():
    def build():
        x = tf.constant(IMG)
        o = {}
        for oh, ow in SIZES:
            for ac, hp in ((False, False), (True, False), (False, True)):
                o[f"bl{oh}x{ow}{ac}{hp}"] = tf.image.resize_bilinear(
                    x, [oh, ow], align_corners=ac, half_pixel_centers=hp)
                o[f"nn{oh}x{ow}{ac}{hp}"] = tf.image.resize_nearest_neighbor(
                    x, [oh, ow], align_corners=ac, half_pixel_centers=hp)
        o["single_u8"] = tf.image.resize_images(tf.constant(U8), [4, 9])
        o["single_nn_u8"] = tf.image.resize_images(tf.constant(U8), [4, 9], method=1)
        return o
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        for oh, ow in SIZES:
            for ac, hp in ((False, False), (True, False), (False, True)):
                k = f"{oh}x{ow}{ac}{hp}"
                assert_close(got["bl" + k], _ref_bilinear(IMG, oh, ow, ac, hp), 1e-5, 1e-6,
                             what=f"bilinear {k}: ")
                assert_close(got["nn" + k], _ref_nearest(IMG, oh, ow, ac, hp), what=f"nn {k}: ")
        want = _ref_bilinear(U8[None].astype(np.float32), 4, 9)[0]
        assert got["single_u8"].dtype == np.float32
        assert_close(got["single_u8"], want, 1e-5, 1e-3)
        assert got["single_nn_u8"].dtype == np.uint8
        assert_close(got["single_nn_u8"], _ref_nearest(U8[None], 4, 9)[0])


def test_resize_gradient_against_jax():
    c = R.standard_normal((2, 9, 4, 3)).astype(np.float32)

    def build():
        x = tf.constant(IMG)
        y = tf.image.resize_bilinear(x, [9, 4], half_pixel_centers=True)
        return tf.gradients(tf.reduce_sum(y * c), x)[0]
    want = jax.jit(jax.grad(lambda v: (_ref_bilinear(v, 9, 4, half=True, xp=jax.numpy)
                                       * c).sum()))(IMG)
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        assert_close(got, np.asarray(want), 1e-5, 1e-5)


def test_flips_standardization_crop_and_dtypes():
    def build():
        x, u = tf.constant(IMG), tf.constant(U8)
        return {"flr": tf.image.flip_left_right(x), "fud": tf.image.flip_up_down(u),
                "pis": tf.image.per_image_standardization(x),
                "pis_flat": tf.image.per_image_standardization(tf.zeros([2, 2, 1])),
                "crop": tf.image.central_crop(x, 0.5), "crop3": tf.image.central_crop(u, 0.7),
                "to_f": tf.image.convert_image_dtype(u, tf.float32),
                "to_u8": tf.image.convert_image_dtype(x, tf.uint8),
                "to_u8_sat": tf.image.convert_image_dtype(x * 3.0, tf.uint8, saturate=True),
                "to_i32": tf.image.convert_image_dtype(u, tf.int32),
                "gray": tf.image.rgb_to_grayscale(u)}
    mean = IMG.mean((1, 2, 3), keepdims=True)
    std = np.maximum(IMG.std((1, 2, 3), keepdims=True), 1 / math.sqrt(105))
    gray = (U8 / 255.0).astype(np.float32) @ np.array([0.2989, 0.5870, 0.1140], np.float32)
    want = {"flr": IMG[:, :, ::-1], "fud": U8[::-1], "pis": (IMG - mean) / std,
            "pis_flat": np.zeros((2, 2, 1), np.float32),
            "crop": IMG[:, 1:4, 1:6], "crop3": U8[0:5, 1:6],
            "to_f": U8.astype(np.float32) / 255,
            "to_u8": (IMG * 255.5).astype(np.uint8),
            "to_u8_sat": np.clip(IMG * 3 * 255.5, 0, 255).astype(np.uint8),
            "to_i32": U8.astype(np.int32) * (2 ** 31 // 256),
            "gray": (gray[..., None] * 255.5).astype(np.uint8)}
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        for k, w in want.items():
            assert_close(got[k], w, 1e-5, 1e-5, what=f"{k}: ")


def test_image_errors():
    with pytest.raises(InvalidArgumentError, match="3 or 4 dimensions"):
        tf.image.resize_bilinear(tf.zeros([4, 4]), [2, 2])
    with pytest.raises(InvalidArgumentError, match="size must be known"):
        tf.image.resize_bilinear(tf.zeros([1, 4, 4, 1]), tf.placeholder(tf.int32, [2]))
    with pytest.raises(InvalidArgumentError, match="unknown method"):
        tf.image.resize_images(tf.zeros([1, 4, 4, 1]), [2, 2], method=7)
    with pytest.raises(InvalidArgumentError, match="central_fraction"):
        tf.image.central_crop(tf.zeros([4, 4, 1]), 0.0)


def test_adjust_crop_pad_against_numpy():
    def build():
        x, u = tf.constant(IMG), tf.constant(U8)
        return {"bright": tf.image.adjust_brightness(x, 0.3),
                "bright_u8": tf.image.adjust_brightness(u, 0.2),
                "contrast": tf.image.adjust_contrast(x, 1.7),
                "contrast_u8": tf.image.adjust_contrast(u, 2.5),
                "crop": tf.image.crop_to_bounding_box(x, 1, 2, 3, 4),
                "pad": tf.image.pad_to_bounding_box(u, 1, 2, 8, 10),
                "crop_or_pad": tf.image.resize_image_with_crop_or_pad(u, 3, 9)}
    f = U8.astype(np.float32) / 255
    m = f.mean((0, 1), keepdims=True)
    padded = np.zeros((8, 10, 3), np.uint8)
    padded[1:6, 2:9] = U8
    cop = np.zeros((3, 9, 3), np.uint8)
    cop[:, 1:8] = U8[1:4]
    want = {"bright": IMG + 0.3,
            "bright_u8": (np.clip(f + 0.2, 0, 1) * 255.5).astype(np.uint8),
            "contrast": (IMG - IMG.mean((1, 2), keepdims=True)) * 1.7
            + IMG.mean((1, 2), keepdims=True),
            "contrast_u8": (np.clip((f - m) * 2.5 + m, 0, 1) * 255.5).astype(np.uint8),
            "crop": IMG[:, 1:4, 2:6], "pad": padded, "crop_or_pad": cop}
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        for k, w in want.items():
            assert_close(got[k], w, 1e-5, 1e-5, what=f"{k}: ")


def test_random_augmentation():
    tf.set_random_seed(9)
    x = tf.constant(IMG)
    crops = [tf.random_crop(x, [2, 3, 3, 3]) for _ in range(8)]
    flips = tf.image.random_flip_left_right(tf.tile(x[:1], [16, 1, 1, 1]))
    ud = [tf.image.random_flip_up_down(x[0]) for _ in range(8)]
    bright = tf.image.random_brightness(x, 0.2)
    contrast = tf.image.random_contrast(x, 0.5, 1.5)
    sess = tf.Session()
    cv, fv, uv, bv, kv = sess.run([crops, flips, ud, bright, contrast])
    offsets = set()
    for c in cv:  # every crop is a window of the image
        hits = [(i, j) for i in range(3) for j in range(5)
                if np.array_equal(c, IMG[:, i:i + 3, j:j + 3])]
        assert len(hits) == 1
        offsets.add(hits[0])
    assert len(offsets) > 1
    flipped = [np.array_equal(f, IMG[0, :, ::-1]) for f in fv]
    assert all(flipped[i] or np.array_equal(fv[i], IMG[0]) for i in range(16))
    assert 0 < sum(flipped) < 16  # drawn per image
    assert all(np.array_equal(v, IMG[0]) or np.array_equal(v, IMG[0, ::-1]) for v in uv)
    d = bv - IMG
    assert np.allclose(d, d.flat[0], atol=1e-6) and abs(d.flat[0]) <= 0.2
    mean = IMG.mean((1, 2), keepdims=True)
    factor = (kv - mean) / (IMG - mean)
    assert np.allclose(factor, factor.flat[0], atol=1e-3) and 0.5 <= factor.flat[0] <= 1.5


def _keys(d, a):
    d = abs(d)
    return ((a + 2) * d - (a + 3)) * d * d + 1 if d <= 1 else \
        ((a * d - 5 * a) * d + 8 * a) * d - 4 * a if d < 2 else 0.0


def _ref_bicubic(x, oh, ow, half=False):
    """Per pixel: 4x4 taps of Keys' cubic (a = -0.75 clamped, or -0.5 with taps outside
    the image dropped and renormalized), the position rounded to 1/1024 as TF's table."""
    a = -0.5 if half else -0.75

    def taps(o, n_in, n_out):
        src = (o + 0.5) * n_in / n_out - 0.5 if half else o * n_in / n_out
        base = math.floor(src)
        t = round((src - base) * 1024) / 1024
        ts = [(base + k, _keys(t - k, a)) for k in (-1, 0, 1, 2)]
        if half:
            ts = [(i, w) for i, w in ts if 0 <= i < n_in]
            tot = sum(w for _, w in ts)
            ts = [(i, w / tot) for i, w in ts]
        return [(min(max(i, 0), n_in - 1), w) for i, w in ts]
    out = np.zeros((x.shape[0], oh, ow, x.shape[3]))
    for i in range(oh):
        for j in range(ow):
            for yi, wy in taps(i, x.shape[1], oh):
                for xj, wx in taps(j, x.shape[2], ow):
                    out[:, i, j] += wy * wx * x[:, yi, xj]
    return out.astype(np.float32)


def test_bicubic_and_area():
    def build():
        x = tf.constant(IMG)
        return {"bc": tf.image.resize_bicubic(x, [9, 4]),
                "bc_half": tf.image.resize_bicubic(x, [3, 11], half_pixel_centers=True),
                "bc_same": tf.image.resize_bicubic(x, [5, 7]),
                "area": tf.image.resize_area(x, [3, 4]),
                "area_u8": tf.image.resize_images(tf.constant(U8), [3, 4],
                                                  method=tf.image.ResizeMethod.AREA)}
    # area: the mean over each output's box of the piecewise-constant image, exact on a
    # grid refined by the output sizes (5 -> 3 rows: 15 subrows, 5 per output)
    fine = np.repeat(np.repeat(IMG, 3, axis=1), 4, axis=2)        # [2, 15, 28, 3]
    area = fine.reshape(2, 3, 5, 4, 7, 3).mean((2, 4))
    fine_u8 = np.repeat(np.repeat(U8.astype(np.float64), 3, 0), 4, 1)
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        assert_close(got["bc"], _ref_bicubic(IMG, 9, 4), 1e-5, 1e-5)
        assert_close(got["bc_half"], _ref_bicubic(IMG, 3, 11, half=True), 1e-5, 1e-5)
        assert_close(got["bc_same"], IMG, 1e-6, 1e-6)
        assert_close(got["area"], area.astype(np.float32), 1e-5, 1e-6)
        assert_close(got["area_u8"], fine_u8.reshape(3, 5, 4, 7, 3).mean((1, 3))
                     .astype(np.float32), 1e-5, 1e-3)


def test_hsv_colour_adjustments_and_quality_measures():
    import colorsys
    img = IMG.copy()
    img[0, 0, 0] = [0.3, 0.3, 0.3]   # grey: hue 0
    img[0, 0, 1] = 0.0               # black: saturation 0
    flat = img.reshape(-1, 3).astype(np.float64)
    hsv = np.array([colorsys.rgb_to_hsv(*p) for p in flat]).reshape(img.shape)

    def shifted(delta, sat):
        out = []
        for h, s, v in hsv.reshape(-1, 3):
            out.append(colorsys.hsv_to_rgb((h + delta) % 1.0, min(max(s * sat, 0), 1), v))
        return np.array(out).reshape(img.shape)

    def build():
        x = tf.constant(img)
        return {"hsv": tf.image.rgb_to_hsv(x), "back": tf.image.hsv_to_rgb(tf.constant(
                    hsv.astype(np.float32))),
                "hue": tf.image.adjust_hue(x, -0.3), "sat": tf.image.adjust_saturation(x, 1.5),
                "gamma": tf.image.adjust_gamma(x, 2.0, 0.5),
                "gray3": tf.image.grayscale_to_rgb(x[..., :1]),
                "psnr": tf.image.psnr(x, x * 0.5, 1.0), "tv": tf.image.total_variation(x),
                "grads": tf.image.image_gradients(x)}
    mse = ((img * 0.5) ** 2).mean((1, 2, 3))
    dy = np.zeros_like(img)
    dy[:, :-1] = img[:, 1:] - img[:, :-1]
    dx = np.zeros_like(img)
    dx[:, :, :-1] = img[:, :, 1:] - img[:, :, :-1]
    want = {"hsv": hsv, "back": img, "hue": shifted(-0.3, 1.0), "sat": shifted(0.0, 1.5),
            "gamma": 0.5 * img ** 2, "gray3": np.repeat(img[..., :1], 3, -1),
            "psnr": 20 * np.log10(1.0) - 10 * np.log10(mse),
            "tv": np.abs(np.diff(img, axis=1)).sum((1, 2, 3))
            + np.abs(np.diff(img, axis=2)).sum((1, 2, 3)), "grads": (dy, dx)}
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        for k, w in want.items():
            w = tuple(np.asarray(v, np.float32) for v in w) if isinstance(w, tuple) \
                else np.asarray(w, np.float32)
            assert_close(got[k], w, 1e-4, 1e-5, what=f"{k}: ")
    tf.set_random_seed(5)
    x = tf.constant(img)
    rh, rs = tf.image.random_hue(x, 0.2), tf.image.random_saturation(x, 0.5, 1.5)
    hv, sv = tf.Session().run([tf.image.rgb_to_hsv(rh), tf.image.rgb_to_hsv(rs)])
    dh = (hv[..., 0] - hsv[..., 0] + 0.5) % 1.0 - 0.5
    colored = hsv[..., 1] > 0.05
    assert np.allclose(dh[colored], dh[colored].flat[0], atol=1e-4)
    assert abs(dh[colored].flat[0]) <= 0.2
    ratio = sv[..., 1][colored] / hsv[..., 1][colored]
    unclipped = sv[..., 1][colored] < 0.999
    assert np.allclose(ratio[unclipped], ratio[unclipped][0], atol=1e-3)
    assert 0.5 <= ratio[unclipped][0] <= 1.5
