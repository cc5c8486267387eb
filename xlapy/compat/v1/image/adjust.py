"""tf.image brightness and contrast (adjust_* and random_*), random flips, random_crop,
crop_to_bounding_box, pad_to_bounding_box and resize_image_with_crop_or_pad: the data
augmentation of TF 1.x's CIFAR-10 era tutorials.

Random choices are drawn by the graph's random ops (seeded TF-style), so they run on the
host and feed compiled clusters; the arithmetic compiles. Integer images are converted to
float for the adjustment and back, as TF does. Cropping and padding need the image's
spatial size when the graph is built.
"""

from __future__ import annotations


from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import reshape, shape, slice_
from xlapy.compat.v1.ops.index_ops import pad, where
from xlapy.compat.v1.ops.manip_ops import reverse
from xlapy.compat.v1.ops.math_ops import (add, cast, floor, less, multiply, reduce_mean,
                                          subtract)
from xlapy.compat.v1.ops.random_ops import random_uniform


def _rank34(x, what):
    r = x.shape.ndims
    if r not in (3, 4):
        raise InvalidArgumentError(f"{what}: 'image' must have either 3 or 4 dimensions, got "
                                   f"{x.shape.tf_str()}")
    return r


def through_float(image, fn, name):
    """fn(image as float) in name scope `name`; an integer image is converted to float32
    for fn and the result back to its dtype (saturating), as TF's adjust_* do."""
    from xlapy.compat.v1.image import convert_image_dtype
    x = tensor(image)
    with get_default_graph().name_scope(name):
        f = x if x.dtype.is_floating else convert_image_dtype(x, dtypes.float32)
        out = fn(f)
        return out if x.dtype.is_floating else convert_image_dtype(out, x.dtype,
                                                                    saturate=True)


def random_factor(lower, upper, seed):
    """A factor drawn uniformly from [lower, upper) (random_contrast / saturation)."""
    if upper <= lower:
        raise InvalidArgumentError("upper must be > lower.")
    if lower < 0:
        raise InvalidArgumentError("lower must be non-negative.")
    return random_uniform([], lower, upper, seed=seed)


def random_delta(max_delta, seed):
    """A delta drawn uniformly from [-max_delta, max_delta) (random_brightness / hue)."""
    if max_delta < 0:
        raise InvalidArgumentError("max_delta must be non-negative.")
    return random_uniform([], -max_delta, max_delta, seed=seed)


def adjust_brightness(image, delta):
    return through_float(image, lambda f: add(f, tensor(delta, f.dtype)), "adjust_brightness")


def adjust_contrast(images, contrast_factor):
    """(x - mean) * factor + mean, the mean over each image's height and width per
    channel."""
    x = tensor(images)
    _rank34(x, "adjust_contrast")

    def fn(f):
        mean = reduce_mean(f, [-3, -2], keepdims=True)
        return add(multiply(subtract(f, mean), tensor(contrast_factor, f.dtype)), mean)
    return through_float(x, fn, "adjust_contrast")


def random_brightness(image, max_delta, seed=None):
    return adjust_brightness(image, random_delta(max_delta, seed))


def random_contrast(image, lower, upper, seed=None):
    return adjust_contrast(image, random_factor(lower, upper, seed))


def _random_flip(image, axis_from_end, seed, name):
    x = tensor(image)
    r = _rank34(x, name)
    axis = r - axis_from_end
    with get_default_graph().name_scope(name):
        if r == 3:
            mirror = less(random_uniform([], 0, 1.0, seed=seed), 0.5)
        else:  # each image of the batch flipped or not on its own draw
            u = random_uniform(shape(x)[:1], 0, 1.0, seed=seed)
            mirror = reshape(less(u, 0.5), [-1, 1, 1, 1])
        return where(mirror, reverse(x, [axis]), x)


def random_flip_left_right(image, seed=None):
    return _random_flip(image, 2, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    return _random_flip(image, 3, seed, "random_flip_up_down")


def random_crop(value, size, seed=None, name=None):
    """A [size] slice of `value` at a uniformly random offset."""
    x = tensor(value)
    size = [int(s) for s in size]
    if x.shape.ndims is not None and x.shape.ndims != len(size):
        raise InvalidArgumentError(f"random_crop: size {size} must have one entry per "
                                   f"dimension of {x.shape.tf_str()}")
    for d, s in zip(x.shape.dims or [], size):
        if d is not None and s > d:
            raise InvalidArgumentError(f"random_crop: need value.shape >= size, got "
                                       f"{x.shape.tf_str()} and {size}")
    with get_default_graph().name_scope(name or "random_crop"):
        limit = cast(add(subtract(shape(x), size), 1), dtypes.float32)
        u = random_uniform([len(size)], 0, 1.0, seed=seed)
        offset = cast(floor(multiply(u, limit)), dtypes.int32)
        out = slice_(x, offset, size)
        out.set_shape(size)  # the size is static even though the offset is drawn
        return out


def _hw(x, what):
    r = _rank34(x, what)
    h, w = x.shape.dims[r - 3], x.shape.dims[r - 2]
    if h is None or w is None:
        raise InvalidArgumentError(f"{what} needs the image height and width to be known")
    return r, h, w


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    x = tensor(image)
    r, h, w = _hw(x, "crop_to_bounding_box")
    if offset_height < 0 or offset_width < 0 or target_height <= 0 or target_width <= 0 or \
            offset_height + target_height > h or offset_width + target_width > w:
        raise InvalidArgumentError(f"crop_to_bounding_box: the box ({offset_height}, "
                                   f"{offset_width}, {target_height}, {target_width}) is not "
                                   f"inside the {h}x{w} image")
    begin = [offset_height, offset_width, 0]
    size = [target_height, target_width, -1]
    if r == 4:
        begin, size = [0] + begin, [-1] + size
    return slice_(x, begin, size)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    x = tensor(image)
    r, h, w = _hw(x, "pad_to_bounding_box")
    after_h = target_height - offset_height - h
    after_w = target_width - offset_width - w
    if offset_height < 0 or offset_width < 0 or after_h < 0 or after_w < 0:
        raise InvalidArgumentError(f"pad_to_bounding_box: a {h}x{w} image at "
                                   f"({offset_height}, {offset_width}) does not fit in "
                                   f"{target_height}x{target_width}")
    pads = [[offset_height, after_h], [offset_width, after_w], [0, 0]]
    if r == 4:
        pads = [[0, 0]] + pads
    return pad(x, pads)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """Crops (centered) or pads with zeros (centered) to target_height x target_width."""
    x = tensor(image)
    _, h, w = _hw(x, "resize_image_with_crop_or_pad")
    if target_height <= 0 or target_width <= 0:
        raise InvalidArgumentError("target_height and target_width must be > 0")
    crop_h, crop_w = max(h - target_height, 0), max(w - target_width, 0)
    x = crop_to_bounding_box(x, crop_h // 2, crop_w // 2, min(h, target_height),
                             min(w, target_width))
    ph, pw = max(target_height - h, 0), max(target_width - w, 0)
    return pad_to_bounding_box(x, ph // 2, pw // 2, target_height, target_width)


