"""tf.image colour and quality functions: rgb_to_hsv / hsv_to_rgb, adjust_saturation /
adjust_hue (and their random_* forms), adjust_gamma, grayscale_to_rgb, psnr,
total_variation, image_gradients.

The HSV conversions follow TF's kernels: h in [0, 1) (0 where the pixel is grey), s the
range over the max (0 for black), v the max; hsv_to_rgb picks one of six hue sectors.
Everything is built from elementwise graph ops, so it compiles and (where TF's does)
differentiates. Integer images are converted to float and back, as TF does.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.image.adjust import random_delta, random_factor, through_float
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import concat, stack, unstack, zeros_like
from xlapy.compat.v1.ops.index_ops import pad, where
from xlapy.compat.v1.ops.math_ops import (abs, add, cast, equal, floor, greater, less, log,
                                          multiply, pow, realdiv, reduce_max, reduce_mean,
                                          reduce_min, reduce_sum, subtract)


def _f(v, like):
    return tensor(np.asarray(v, like.dtype.np))


def _rgb(x, what):
    if x.shape.dims is not None and x.shape.dims[-1] not in (None, 3):
        raise InvalidArgumentError(f"{what}: the last dimension must be 3 (RGB), got "
                                   f"{x.shape.tf_str()}")
    if not x.dtype.is_floating:
        raise InvalidArgumentError(f"{what}: images must be floating point, got "
                                   f"{x.dtype.name} (convert_image_dtype first)")


def rgb_to_hsv(images, name=None):
    x = tensor(images)
    _rgb(x, "rgb_to_hsv")
    with get_default_graph().name_scope(name or "rgb_to_hsv"):
        r, g, b = unstack(x, 3, axis=-1)
        v = reduce_max(x, -1)
        rng = subtract(v, reduce_min(x, -1))
        zero = zeros_like(v)
        s = where(greater(v, zero), realdiv(rng, where(greater(v, zero), v, add(zero, 1.0))),
                  zero)
        safe = where(greater(rng, zero), rng, add(zero, 1.0))
        norm = realdiv(_f(1.0 / 6.0, x), safe)
        h = where(equal(r, v), multiply(subtract(g, b), norm),
                  where(equal(g, v), add(multiply(subtract(b, r), norm), _f(2 / 6, x)),
                        add(multiply(subtract(r, g), norm), _f(4 / 6, x))))
        h = where(greater(rng, zero), h, zero)
        h = where(less(h, zero), add(h, 1.0), h)
        return stack([h, s, v], axis=-1)


def hsv_to_rgb(images, name=None):
    x = tensor(images)
    _rgb(x, "hsv_to_rgb")
    with get_default_graph().name_scope(name or "hsv_to_rgb"):
        h, s, v = unstack(x, 3, axis=-1)
        c = multiply(s, v)
        m = subtract(v, c)
        dh = multiply(h, 6.0)
        sector = floor(dh)
        fmodu = subtract(dh, multiply(floor(multiply(dh, 0.5)), 2.0))
        xx = multiply(c, subtract(1.0, abs(subtract(fmodu, 1.0))))
        zero = zeros_like(c)
        table = [(c, xx, zero), (xx, c, zero), (zero, c, xx), (zero, xx, c), (xx, zero, c),
                 (c, zero, xx)]
        out = [zero, zero, zero]
        for k, rgb in enumerate(table):
            hit = equal(sector, _f(float(k), sector))
            out = [where(hit, comp, o) for comp, o in zip(rgb, out)]
        return stack([add(o, m) for o in out], axis=-1)


def adjust_saturation(image, saturation_factor, name=None):
    from xlapy.compat.v1.ops.clip_ops import clip_by_value

    def fn(f):
        h, s, v = unstack(rgb_to_hsv(f), 3, axis=-1)
        s = clip_by_value(multiply(s, tensor(saturation_factor, f.dtype)), 0.0, 1.0)
        return hsv_to_rgb(stack([h, s, v], axis=-1))
    return through_float(image, fn, name or "adjust_saturation")


def adjust_hue(image, delta, name=None):
    def fn(f):
        h, s, v = unstack(rgb_to_hsv(f), 3, axis=-1)
        h = add(h, tensor(delta, f.dtype))
        h = subtract(h, floor(h))  # wrapped into [0, 1)
        return hsv_to_rgb(stack([h, s, v], axis=-1))
    return through_float(image, fn, name or "adjust_hue")


def random_saturation(image, lower, upper, seed=None):
    return adjust_saturation(image, random_factor(lower, upper, seed))


def random_hue(image, max_delta, seed=None):
    if max_delta > 0.5:
        raise InvalidArgumentError("max_delta must be <= 0.5.")
    return adjust_hue(image, random_delta(max_delta, seed))


def adjust_gamma(image, gamma=1, gain=1):
    """gain * image ** gamma (integer images through float, as TF)."""
    if np.any(np.asarray(gamma) < 0):
        raise InvalidArgumentError("Gamma should be a non-negative real number.")
    return through_float(image, lambda f: multiply(pow(f, tensor(gamma, f.dtype)),
                                                    tensor(gain, f.dtype)), "adjust_gamma")


def grayscale_to_rgb(images, name=None):
    x = tensor(images)
    if x.shape.dims is not None and x.shape.dims[-1] not in (None, 1):
        raise InvalidArgumentError(f"grayscale_to_rgb: the last dimension must be 1, got "
                                   f"{x.shape.tf_str()}")
    with get_default_graph().name_scope(name or "grayscale_to_rgb"):
        return concat([x, x, x], -1)


def psnr(a, b, max_val, name=None):
    """20 log10(max_val) - 10 log10(mse) of each image (the last three dimensions)."""
    x, y = tensor(a), tensor(b)
    with get_default_graph().name_scope(name or "PSNR"):
        x, y = cast(x, dtypes.float32), cast(y, dtypes.float32)
        mv = cast(tensor(max_val), dtypes.float32)
        mse = reduce_mean(multiply(subtract(x, y), subtract(x, y)), [-3, -2, -1])
        ln10 = tensor(np.float32(np.log(10.0)))
        return subtract(multiply(20.0, realdiv(log(mv), ln10)),
                        multiply(10.0, realdiv(log(mse), ln10)))


def total_variation(images, name=None):
    """The sum of absolute differences of vertically and horizontally adjacent pixels, per
    image ([batch] for 4-D images, a scalar for one)."""
    x = tensor(images)
    r = x.shape.ndims
    if r not in (3, 4):
        raise InvalidArgumentError(f"total_variation: images must be 3-D or 4-D, got "
                                   f"{x.shape.tf_str()}")
    with get_default_graph().name_scope(name or "total_variation"):
        if r == 3:
            dy = subtract(x[1:, :, :], x[:-1, :, :])
            dx = subtract(x[:, 1:, :], x[:, :-1, :])
            return add(reduce_sum(abs(dy)), reduce_sum(abs(dx)))
        dy = subtract(x[:, 1:, :, :], x[:, :-1, :, :])
        dx = subtract(x[:, :, 1:, :], x[:, :, :-1, :])
        return add(reduce_sum(abs(dy), [1, 2, 3]), reduce_sum(abs(dx), [1, 2, 3]))


def image_gradients(image):
    """(dy, dx): forward differences of [batch, h, w, c] images, zero in the last row /
    column."""
    x = tensor(image)
    if x.shape.ndims != 4:
        raise InvalidArgumentError(f"image_gradients expects a 4-D tensor [batch, h, w, c], "
                                   f"got {x.shape.tf_str()}")
    dy = pad(subtract(x[:, 1:, :, :], x[:, :-1, :, :]), [[0, 0], [0, 1], [0, 0], [0, 0]])
    dx = pad(subtract(x[:, :, 1:, :], x[:, :, :-1, :]), [[0, 0], [0, 0], [0, 1], [0, 0]])
    return dy, dx


