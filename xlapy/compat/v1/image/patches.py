"""Sliding-window image functions: tf.image.extract_image_patches / extract_patches,
tf.nn.dilation2d / erosion2d, tf.image.rot90, sobel_edges, ssim, ssim_multiscale.

Patches are a pad and one gather of the flattened [batch, h * w, c] image with indices
computed when the graph is built (static spatial sizes), so they compile into clusters
and differentiate through the gather (a segment sum). Output positions follow TF's
padding rules with the effective window (k - 1) * rate + 1: VALID gives
ceil((n - k_eff + 1) / stride), SAME ceil(n / stride) with max((out - 1) * stride + k_eff
- n, 0) padding, the smaller half before. Patch depth is ordered (row, column, channel),
as TF's ExtractImagePatches. dilation2d takes the max over the window of input + filter
(positions outside the image skipped: padded with -inf); erosion2d is TF's
-dilation2d(-x, reversed filter). ssim follows TF 1.15's: an 11x11 Gaussian (sigma 1.5,
normalized with a softmax) applied VALID by depthwise convolution.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import constant_value, tensor
from xlapy.compat.v1.ops.array_ops import reshape, stack, transpose
from xlapy.compat.v1.ops.gather_ops import gather
from xlapy.compat.v1.ops.manip_ops import pad, reverse
from xlapy.compat.v1.ops.math_ops import (add, cast, multiply, negative, realdiv, reduce_max,
                                          reduce_mean, reduce_prod, square, subtract)


def _four(v, what):
    v = [int(a) for a in v]
    if len(v) != 4 or v[0] != 1 or v[3] != 1:
        raise InvalidArgumentError(f"{what} must be [1, rows, cols, 1], got {v}")
    return v[1], v[2]


def window_geometry(n, k, stride, rate, padding):
    """(output size, padding before, padding after) of one spatial axis, TF's rule."""
    k_eff = (k - 1) * rate + 1
    padding = padding.upper() if isinstance(padding, str) else padding
    if padding == "VALID":
        out = max(-(-(n - k_eff + 1) // stride), 0)
        return out, 0, 0
    if padding == "SAME":
        out = -(-n // stride)
        total = max((out - 1) * stride + k_eff - n, 0)
        return out, total // 2, total - total // 2
    raise InvalidArgumentError(f"padding must be 'SAME' or 'VALID', got {padding!r}")


def _windows(x, ksize, strides, rates, padding, fill, what):
    """[batch, oh, ow, kh * kw, c] windows of the 4-D x, positions outside filled."""
    if x.shape.ndims != 4 or any(d is None for d in x.shape.dims[1:]):
        raise InvalidArgumentError(f"{what}: input must be 4-D with known height, width and "
                                   f"depth, got {x.shape.tf_str()}")
    _, h, w, c = x.shape.dims
    (kh, kw), (sh, sw), (rh, rw) = ksize, strides, rates
    oh, pt, pb = window_geometry(h, kh, sh, rh, padding)
    ow, pl, pr = window_geometry(w, kw, sw, rw, padding)
    if pt or pb or pl or pr:
        x = pad(x, [[0, 0], [pt, pb], [pl, pr], [0, 0]], constant_values=fill)
    hp, wp = h + pt + pb, w + pl + pr
    rows = (np.arange(oh) * sh)[:, None, None, None] + (np.arange(kh) * rh)[None, None, :, None]
    cols = (np.arange(ow) * sw)[None, :, None, None] + (np.arange(kw) * rw)[None, None, None, :]
    idx = (rows * wp + cols).reshape(-1).astype(np.int32)
    flat = reshape(x, [-1, hp * wp, c])
    got = gather(flat, idx, axis=1)
    return reshape(got, [-1, oh, ow, kh * kw, c]), (oh, ow)


def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None,
                          name=None, sizes=None):
    """[batch, out_rows, out_cols, ksize_rows * ksize_cols * depth] patches."""
    ksizes = ksizes if ksizes is not None else sizes
    x = tensor(images)
    with get_default_graph().name_scope(name or "ExtractImagePatches"):
        win, (oh, ow) = _windows(x, _four(ksizes, "ksizes"), _four(strides, "strides"),
                                 _four(rates, "rates"), padding, 0, "extract_image_patches")
        k = win.shape.dims[3] * win.shape.dims[4]
        return reshape(win, [-1, oh, ow, k])


def extract_patches(images, sizes, strides, rates, padding, name=None):
    return extract_image_patches(images, sizes, strides, rates, padding, name)


def dilation2d(input, filter, strides, rates, padding, name=None):
    """Grey-scale dilation: max over the window of input + filter ([fh, fw, depth])."""
    x, f = tensor(input), tensor(filter)
    if f.shape.ndims != 3 or not f.shape.is_fully_defined():
        raise InvalidArgumentError(f"dilation2d: filter must be a fully known [rows, cols, "
                                   f"depth] tensor, got {f.shape.tf_str()}")
    fh, fw, c = f.shape.dims
    with get_default_graph().name_scope(name or "Dilation2D"):
        lowest = -np.inf if x.dtype.is_floating else x.dtype.min
        win, _ = _windows(x, (fh, fw), _four(strides, "strides"), _four(rates, "rates"),
                          padding, lowest, "dilation2d")
        return reduce_max(add(win, reshape(f, [fh * fw, c])), [3])


def erosion2d(value, kernel, strides, rates, padding, name=None):
    with get_default_graph().name_scope(name or "erosion2d"):
        return negative(dilation2d(negative(tensor(value)), reverse(tensor(kernel), [0, 1]),
                                   strides, rates, padding))


def rot90(image, k=1, name=None):
    """Rotates 3-D or 4-D images counter-clockwise by k * 90 degrees (k known when the graph
    is built)."""
    x = tensor(image)
    kv = constant_value(k) if hasattr(k, "op") else k
    if kv is None:
        raise InvalidArgumentError("rot90: k must be known when the graph is built")
    r = x.shape.ndims
    if r not in (3, 4):
        raise InvalidArgumentError(f"'image' must have either 3 or 4 dimensions, got "
                                   f"{x.shape.tf_str()}")
    kv = int(kv) % 4
    a = r - 3  # the row axis
    perm = list(range(r))
    perm[a], perm[a + 1] = a + 1, a
    with get_default_graph().name_scope(name or "rot90"):
        if kv == 0:
            return x
        if kv == 1:
            return transpose(reverse(x, [a + 1]), perm)
        if kv == 2:
            return reverse(x, [a, a + 1])
        return reverse(transpose(x, perm), [a + 1])


def sobel_edges(image):
    """[batch, h, w, depth, 2]: the vertical (dy) and horizontal (dx) Sobel responses, the
    image padded by reflection, as TF's."""
    from xlapy.compat.v1.ops.conv_ops import depthwise_conv2d
    x = tensor(image)
    if x.shape.ndims != 4 or x.shape.dims[3] is None:
        raise InvalidArgumentError(f"sobel_edges: image must be [batch, h, w, depth] with a "
                                   f"known depth, got {x.shape.tf_str()}")
    c = x.shape.dims[3]
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    kern = np.stack([ky, ky.T], -1)  # [3, 3, 2]
    kern = np.tile(kern[:, :, None, :], [1, 1, c, 1]).astype(x.dtype.np)
    with get_default_graph().name_scope("sobel_edges"):
        padded = pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
        out = depthwise_conv2d(padded, tensor(kern), [1, 1, 1, 1], "VALID")
        n, h, w = out.shape.dims[:3]
        return reshape(out, [-1 if n is None else n, h, w, c, 2])


def _gauss(size, sigma):
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / np.float32(2.0)
    g = np.square(coords) * np.float32(-0.5 / (sigma * sigma))
    g = (g[None, :] + g[:, None]).reshape(-1)
    g = np.exp(g - g.max())
    return (g / g.sum()).astype(np.float32).reshape(size, size, 1, 1)


def _ssim_per_channel(x, y, max_val, filter_size, filter_sigma, k1, k2):
    from xlapy.compat.v1.ops.conv_ops import depthwise_conv2d
    if x.shape.ndims is None or x.shape.dims[-1] is None or x.shape.ndims < 3:
        raise InvalidArgumentError(f"ssim: images must be [..., h, w, depth] with a known "
                                   f"depth, got {x.shape.tf_str()}")
    dims = x.shape.dims
    for d in dims[-3:-1]:
        if d is not None and d < filter_size:
            raise InvalidArgumentError(f"ssim: images must be at least {filter_size} pixels "
                                       f"high and wide, got {x.shape.tf_str()}")
    c = dims[-1]
    kernel = tensor(np.tile(_gauss(filter_size, filter_sigma), [1, 1, c, 1]))
    lead = [-1 if d is None else d for d in dims[:-3]]

    def reducer(t):
        z = depthwise_conv2d(reshape(t, [-1] + list(dims[-3:])), kernel, [1, 1, 1, 1], "VALID")
        return reshape(z, lead + list(z.shape.dims[1:]))

    c1 = square(multiply(k1, max_val))
    c2 = square(multiply(k2, max_val))
    mean0, mean1 = reducer(x), reducer(y)
    num0 = multiply(multiply(mean0, mean1), 2.0)
    den0 = add(square(mean0), square(mean1))
    luminance = realdiv(add(num0, c1), add(den0, c1))
    num1 = multiply(reducer(multiply(x, y)), 2.0)
    den1 = reducer(add(square(x), square(y)))
    cs = realdiv(add(subtract(num1, num0), c2), add(subtract(den1, den0), c2))
    return reduce_mean(multiply(luminance, cs), [-3, -2]), reduce_mean(cs, [-3, -2])


def _ssim_inputs(img1, img2, max_val):
    from xlapy.compat.v1.image import convert_image_dtype
    x, y = tensor(img1), tensor(img2)
    mv = convert_image_dtype(cast(tensor(max_val), x.dtype), dtypes.float32)
    return convert_image_dtype(x, dtypes.float32), convert_image_dtype(y, dtypes.float32), mv


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
    """The structural similarity of each image pair (the channels averaged), TF 1.15's."""
    with get_default_graph().name_scope("SSIM"):
        x, y, mv = _ssim_inputs(img1, img2, max_val)
        s, _ = _ssim_per_channel(x, y, mv, filter_size, filter_sigma, k1, k2)
        return reduce_mean(s, [-1])


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11,
                    filter_sigma=1.5, k1=0.01, k2=0.03):
    """Multi-scale SSIM: the contrast-structure terms of the coarser scales (each a 2x2
    average pool, VALID after padding odd sizes, as TF's) times the last scale's SSIM,
    each raised to its power factor, ReLU'd first as TF does."""
    from xlapy.compat.v1.ops.nn_ops import relu as relu_
    from xlapy.compat.v1.ops.pool_ops import avg_pool
    from xlapy.compat.v1.ops.math_ops import pow as pow_
    with get_default_graph().name_scope("MS-SSIM"):
        x, y, mv = _ssim_inputs(img1, img2, max_val)
        dims = x.shape.dims
        if dims is None or any(d is None for d in dims[-3:]):
            raise InvalidArgumentError("ssim_multiscale needs the image sizes to be known")
        lead = [-1 if d is None else d for d in dims[:-3]]
        mcs = []
        imgs = [x, y]
        val = None
        for k in range(len(power_factors)):
            if k > 0:
                nxt = []
                for t in imgs:
                    h, w, c = t.shape.dims[-3:]
                    t4 = reshape(t, [-1, h, w, c])
                    if h % 2 or w % 2:
                        t4 = pad(t4, [[0, 0], [0, h % 2], [0, w % 2], [0, 0]], mode="SYMMETRIC")
                    t4 = avg_pool(t4, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
                    nxt.append(reshape(t4, lead + list(t4.shape.dims[1:])))
                imgs = nxt
            s, cs = _ssim_per_channel(imgs[0], imgs[1], mv, filter_size, filter_sigma, k1, k2)
            mcs.append(relu_(cs))
            val = relu_(s)
        mcs[-1] = val
        pf = tensor(np.asarray(power_factors, np.float32))
        stacked = stack(mcs, axis=-1)
        return reduce_mean(reduce_prod(pow_(stacked, pf), [-1]), [-1])

