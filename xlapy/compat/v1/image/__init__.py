"""tf.image: resizing (bilinear and nearest neighbour, TF 1.x's legacy and half-pixel
coordinate rules), flips, per_image_standardization, central_crop, convert_image_dtype,
rgb_to_grayscale.

Resizing is built from graph ops: gathers of the source rows and columns with indices and
interpolation weights computed when the graph is built (the sizes must be static), so it
runs in the executor, compiles into clusters and has a gradient (the gathers'). Source
coordinates are TF's: out * in/out (legacy), (out + 0.5) * in/out - 0.5 (half-pixel
centers, clamped at 0) or out * (in - 1)/(out - 1) (align_corners); nearest neighbour
floors them (rounds with align_corners). Bicubic and area resizing are linear maps along
each axis: dense [out, in] weight matrices built from TF's kernels, applied with einsum.

Boxes (crop_and_resize, non_max_suppression, draw_bounding_boxes,
sample_distorted_bounding_box) are in boxes.py, extract_glimpse in glimpse.py, sliding
windows (extract_image_patches, rot90, sobel_edges, ssim) in patches.py, encode_jpeg /
decode_gif in codecs.py.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import constant_value, tensor
from xlapy.compat.v1.ops.array_ops import expand_dims, squeeze
from xlapy.compat.v1.ops.gather_ops import gather
from xlapy.compat.v1.ops.manip_ops import reverse
from xlapy.compat.v1.ops.math_ops import (add, cast, maximum, multiply, realdiv,
                                          reduce_mean, reduce_sum, sqrt, square, subtract)


class ResizeMethod:
    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def _images(images, what):
    x = tensor(images)
    r = x.shape.ndims
    if r not in (3, 4):
        raise InvalidArgumentError(f"{what}: 'images' must have either 3 or 4 dimensions, got "
                                   f"shape {x.shape.tf_str()}")
    return (expand_dims(x, 0), True) if r == 3 else (x, False)


def _size(size, what):
    v = constant_value(size) if hasattr(size, "op") else np.asarray(size)
    if v is None:
        raise InvalidArgumentError(f"{what}: size must be known when the graph is built (a "
                                   "list of two ints or a constant)")
    v = np.reshape(v, [-1])
    if v.shape != (2,) or np.any(v <= 0):
        raise InvalidArgumentError(f"{what}: size must be 2 positive integers, got "
                                   f"{v.tolist()}")
    return int(v[0]), int(v[1])


def _in_dims(x, what):
    h, w = x.shape.dims[1], x.shape.dims[2]
    if h is None or w is None:
        raise InvalidArgumentError(f"{what}: the input's height and width must be known when "
                                   f"the graph is built, got {x.shape.tf_str()}")
    return h, w


def _scale(n_in, n_out, align):
    if align and n_out > 1:
        return (n_in - 1) / (n_out - 1)
    return n_in / n_out


def _bilinear_axis(n_in, n_out, align, half):
    s = _scale(n_in, n_out, align)
    i = np.arange(n_out, dtype=np.float64)
    src = (i + 0.5) * s - 0.5 if half else i * s
    src = np.float32(src).astype(np.float64)  # TF computes coordinates in float
    lo_f = np.floor(src)
    lo = np.maximum(lo_f, 0).astype(np.int32)
    hi = np.minimum(np.ceil(src), n_in - 1).astype(np.int32)
    return lo, hi, (src - lo_f).astype(np.float32)


def _nearest_axis(n_in, n_out, align, half):
    s = np.float32(_scale(n_in, n_out, align))
    i = np.arange(n_out, dtype=np.float32)
    if align:
        src = np.floor(i * s + np.float32(0.5))  # std::round: halves away from zero
    elif half:
        src = np.floor((i + np.float32(0.5)) * s)
    else:
        src = np.floor(i * s)
    return np.minimum(src, n_in - 1).astype(np.int32)


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """[batch, h, w, c] images resized to size, as float32."""
    x, single = _images(images, "resize_bilinear")
    oh, ow = _size(size, "resize_bilinear")
    ih, iw = _in_dims(x, "resize_bilinear")
    with get_default_graph().name_scope(name or "ResizeBilinear"):
        x = cast(x, dtypes.float32)
        y0, y1, wy = _bilinear_axis(ih, oh, align_corners, half_pixel_centers)
        x0, x1, wx = _bilinear_axis(iw, ow, align_corners, half_pixel_centers)
        top, bot = gather(x, y0, axis=1), gather(x, y1, axis=1)
        wy_t = tensor(wy.reshape(1, oh, 1, 1))
        rows = add(top, multiply(subtract(bot, top), wy_t))
        left, right = gather(rows, x0, axis=2), gather(rows, x1, axis=2)
        out = add(left, multiply(subtract(right, left), tensor(wx.reshape(1, 1, ow, 1))))
        return squeeze(out, [0]) if single else out


def resize_nearest_neighbor(images, size, align_corners=False, name=None,
                            half_pixel_centers=False):
    x, single = _images(images, "resize_nearest_neighbor")
    oh, ow = _size(size, "resize_nearest_neighbor")
    ih, iw = _in_dims(x, "resize_nearest_neighbor")
    with get_default_graph().name_scope(name or "ResizeNearestNeighbor"):
        ys = _nearest_axis(ih, oh, align_corners, half_pixel_centers)
        xs = _nearest_axis(iw, ow, align_corners, half_pixel_centers)
        out = gather(gather(x, ys, axis=1), xs, axis=2)
        return squeeze(out, [0]) if single else out


def _cubic_matrix(n_in, n_out, align, half):
    """[n_out, n_in] weights of TF's bicubic resize along one axis: Keys' cubic with
    a = -0.75 and clamped taps (legacy), or a = -0.5 with out-of-range taps dropped and
    the rest renormalized (half-pixel centers); the fractional position is rounded to
    1/1024, as TF reads the weights from a 1024-entry table."""
    a = -0.5 if half else -0.75
    s = np.float32(_scale(n_in, n_out, align))
    w = np.zeros((n_out, n_in), np.float64)
    for o in range(n_out):
        src = (np.float32(o) + np.float32(0.5)) * s - np.float32(0.5) if half \
            else np.float32(o) * s
        base = int(np.floor(src))
        t = float(np.rint(np.float32(src - base) * 1024)) / 1024  # TF's 1024-entry table
        ks = []
        for k, d in zip(range(-1, 3), (1 + t, t, 1 - t, 2 - t)):
            d = abs(d)
            wt = ((a + 2) * d - (a + 3)) * d * d + 1 if d <= 1 else \
                ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
            ks.append((base + k, wt))
        if half:
            ks = [(i, wt) for i, wt in ks if 0 <= i < n_in]
            total = sum(wt for _, wt in ks)
            if abs(total) >= 1000 * np.finfo(np.float32).tiny:
                ks = [(i, wt / total) for i, wt in ks]
        for i, wt in ks:
            w[o, min(max(i, 0), n_in - 1)] += wt
    return w.astype(np.float32)


def _area_matrix(n_in, n_out, align):
    """[n_out, n_in] weights of TF's area resize along one axis: each output averages the
    input span [o s, (o + 1) s) it covers, partial pixels weighted by their overlap."""
    s = np.float32(_scale(n_in, n_out, align))
    w = np.zeros((n_out, n_in), np.float64)
    for o in range(n_out):
        lo, hi = np.float32(o) * s, np.float32(o + 1) * s
        for i in range(int(np.floor(lo)), int(np.ceil(hi))):
            if i < lo:
                part = s if i + 1 > hi else i + 1 - lo
            else:
                part = hi - i if i + 1 > hi else 1.0
            w[o, min(max(i, 0), n_in - 1)] += float(part) / float(s)
    return w.astype(np.float32)


def _separable(images, size, what, matrices):
    from xlapy.compat.v1.ops.api import einsum
    x, single = _images(images, what)
    oh, ow = _size(size, what)
    ih, iw = _in_dims(x, what)
    wh, ww = matrices(ih, oh), matrices(iw, ow)
    with get_default_graph().name_scope(what):
        f = cast(x, dtypes.float32)
        out = einsum("hi,bijc,wj->bhwc", tensor(wh), f, tensor(ww))
        return squeeze(out, [0]) if single else out


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """Bicubic resize (TF's kernel: Keys' cubic convolution), as float32."""
    return _separable(images, size, name or "ResizeBicubic",
                      lambda n_in, n_out: _cubic_matrix(n_in, n_out, align_corners,
                                                        half_pixel_centers))


def resize_area(images, size, align_corners=False, name=None):
    """Area-averaging resize (TF's ResizeArea), as float32."""
    return _separable(images, size, name or "ResizeArea",
                      lambda n_in, n_out: _area_matrix(n_in, n_out, align_corners))


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False):
    """TF 1.x's resize_images: float32 unless nearest neighbour (or no resize needed)."""
    x = tensor(images)
    oh, ow = _size(size, "resize_images")
    if preserve_aspect_ratio:
        ih, iw = _in_dims(x if x.shape.ndims == 4 else expand_dims(x, 0), "resize_images")
        f = min(oh / ih, ow / iw)
        oh, ow = max(int(round(ih * f)), 1), max(int(round(iw * f)), 1)
    dims = x.shape.dims
    if dims is not None and len(dims) in (3, 4) and tuple(dims[-3:-1]) == (oh, ow):
        return x
    if method in (ResizeMethod.BILINEAR, "bilinear"):
        return resize_bilinear(x, [oh, ow], align_corners)
    if method in (ResizeMethod.NEAREST_NEIGHBOR, "nearest"):
        return resize_nearest_neighbor(x, [oh, ow], align_corners)
    if method in (ResizeMethod.BICUBIC, "bicubic"):
        return resize_bicubic(x, [oh, ow], align_corners)
    if method in (ResizeMethod.AREA, "area"):
        return resize_area(x, [oh, ow], align_corners)
    raise InvalidArgumentError(f"resize_images: unknown method {method!r} (BILINEAR, "
                               "NEAREST_NEIGHBOR, BICUBIC or AREA)")


def _flip(image, axis_from_end, name):
    x = tensor(image)
    if x.shape.ndims not in (3, 4):
        raise InvalidArgumentError(f"'image' must have either 3 or 4 dimensions, got "
                                   f"{x.shape.tf_str()}")
    return reverse(x, [x.shape.ndims - axis_from_end], name=name)


def flip_left_right(image):
    return _flip(image, 2, "flip_left_right")


def flip_up_down(image):
    return _flip(image, 3, "flip_up_down")


def per_image_standardization(image):
    """(x - mean) / max(stddev, 1 / sqrt(number of elements)) of each image, float32."""
    x = tensor(image)
    r = x.shape.ndims
    if r not in (3, 4):
        raise InvalidArgumentError(f"'image' must have either 3 or 4 dimensions, got "
                                   f"{x.shape.tf_str()}")
    axes = [-1, -2, -3]
    n = int(np.prod(x.shape.dims[-3:])) if all(d is not None for d in x.shape.dims[-3:]) \
        else None
    if n is None:
        raise InvalidArgumentError("per_image_standardization needs the image size to be known")
    with get_default_graph().name_scope("per_image_standardization"):
        x = cast(x, dtypes.float32)
        mean = reduce_mean(x, axes, keepdims=True)
        centered = subtract(x, mean)
        std = sqrt(reduce_mean(square(centered), axes, keepdims=True))
        adj = maximum(std, tensor(np.float32(1.0 / np.sqrt(n))))
        return realdiv(centered, adj)


def central_crop(image, central_fraction):
    if not 0.0 < central_fraction <= 1.0:
        raise InvalidArgumentError("central_fraction must be within (0, 1]")
    x = tensor(image)
    r = x.shape.ndims
    if r not in (3, 4):
        raise InvalidArgumentError(f"'image' must have either 3 or 4 dimensions, got "
                                   f"{x.shape.tf_str()}")
    if central_fraction == 1.0:
        return x
    h, w = x.shape.dims[r - 3], x.shape.dims[r - 2]
    if h is None or w is None:
        raise InvalidArgumentError("central_crop needs the image height and width to be known")
    top = int((h - h * central_fraction) / 2)
    left = int((w - w * central_fraction) / 2)
    hs, ws = h - 2 * top, w - 2 * left
    if r == 3:
        return x[top:top + hs, left:left + ws, :]
    return x[:, top:top + hs, left:left + ws, :]


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Integers span [0, MAX] of their type, floats [0, 1]: values are rescaled between
    them as TF does (float -> int multiplies by MAX + 0.5 and truncates)."""
    x = tensor(image)
    dt = dtypes.as_dtype(dtype)
    if x.dtype == dt:
        return x
    src, dst = x.dtype, dt
    if not (src.is_integer or src.is_floating) or not (dst.is_integer or dst.is_floating):
        raise InvalidArgumentError(f"convert_image_dtype: {src.name} -> {dst.name} is not an "
                                   "image conversion")
    with get_default_graph().name_scope(name or "convert_image"):
        if src.is_integer and dst.is_integer:
            smax, dmax = np.iinfo(src.np).max, np.iinfo(dst.np).max
            if smax > dmax:
                scale = (smax + 1) // (dmax + 1)
                return cast(tensor(x) // tensor(np.asarray(scale, src.np)), dst)
            scale = (dmax + 1) // (smax + 1)
            return multiply(cast(x, dst), tensor(np.asarray(scale, dst.np)))
        if src.is_floating and dst.is_floating:
            return cast(x, dst)
        if src.is_integer:
            return multiply(cast(x, dst), tensor(np.asarray(1.0 / np.iinfo(src.np).max,
                                                            dst.np)))
        scaled = multiply(x, tensor(np.asarray(np.iinfo(dst.np).max + 0.5, src.np)))
        if saturate:
            from xlapy.compat.v1.ops.clip_ops import clip_by_value
            scaled = clip_by_value(scaled, float(np.iinfo(dst.np).min),
                                   float(np.iinfo(dst.np).max))
        return cast(scaled, dst)


def rgb_to_grayscale(images, name=None):
    x = tensor(images)
    with get_default_graph().name_scope(name or "rgb_to_grayscale"):
        f = convert_image_dtype(x, dtypes.float32)
        w = tensor(np.array([0.2989, 0.5870, 0.1140], np.float32))
        gray = reduce_sum(multiply(f, w), [-1], keepdims=True)
        return convert_image_dtype(gray, x.dtype)


from xlapy.compat.v1.image.adjust import (adjust_brightness, adjust_contrast,  # noqa: E402
                                          crop_to_bounding_box, pad_to_bounding_box,
                                          random_brightness, random_contrast, random_crop,
                                          random_flip_left_right, random_flip_up_down,
                                          resize_image_with_crop_or_pad)
from xlapy.compat.v1.image.color import (adjust_gamma, adjust_hue,  # noqa: E402
                                         adjust_saturation, grayscale_to_rgb, hsv_to_rgb,
                                         image_gradients, psnr, random_hue,
                                         random_saturation, rgb_to_hsv, total_variation)
from xlapy.compat.v1.ops.io_ops import (decode_image, decode_jpeg, decode_png,  # noqa: E402
                                        encode_png)
from xlapy.compat.v1.image.boxes import (crop_and_resize, draw_bounding_boxes,  # noqa: E402
                                         non_max_suppression, non_max_suppression_padded,
                                         non_max_suppression_v2,
                                         sample_distorted_bounding_box,
                                         sample_distorted_bounding_box_v2)
from xlapy.compat.v1.image.codecs import decode_gif, encode_jpeg  # noqa: E402
from xlapy.compat.v1.image.glimpse import extract_glimpse  # noqa: E402
from xlapy.compat.v1.image.patches import (extract_image_patches,  # noqa: E402
                                           extract_patches, rot90, sobel_edges, ssim,
                                           ssim_multiscale)
from xlapy.compat.v1.image.transform import resize, transpose_image  # noqa: E402
