"""tf.contrib.image's projective transforms: transform, rotate, translate and the helpers
building and combining their 8-parameter transforms, as TF 1.15 defines them.

A transform [a0, a1, a2, b0, b1, b2, c0, c1] maps an OUTPUT point (x, y) to the INPUT
point ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1 (the inverse
of the transform applied to the image). The image is read there by nearest neighbour (the
coordinates rounded half away from zero) or bilinearly (the four neighbours, each outside
the image reading 0); an output point outside the image, or one with k = 0, is 0. The
arithmetic is float32's whatever the image's dtype, the result cast back (truncated for
the integer dtypes), as TF's kernel.

The op is TF's ImageProjectiveTransformV2 (images [batch, h, w, c], transforms [1 or batch,
8], output_shape [2]): one kernel, written once for NumPy and for the XLA lowering (gathers
of the flattened image). Its gradient with respect to the images is TF 1.15's: the
gradient image transformed by the inverse transforms (exact for translations by whole
pixels and quarter turns; TF's approximation otherwise); the transforms get none.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import constant_value, make, tensor
from xlapy.compat.v1.ops.array_ops import concat, ones_like, reshape, shape, stack, zeros_like
from xlapy.compat.v1.ops.linalg_ops import matrix_inverse
from xlapy.compat.v1.ops.math_ops import (add, cast, cos, matmul, multiply, negative, realdiv,
                                          sin, subtract)
from xlapy.compat.v1.tensor_shape import TensorShape

_IMAGE_DTYPES = (dtypes.uint8, dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float32,
                 dtypes.float64)
_INTERPOLATIONS = ("NEAREST", "BILINEAR")


# ---- the op ------------------------------------------------------------------------------------

def _transform_infer(op):
    images, transforms, out_shape = op.inputs
    what = f"'{op.name}' (op: '{op.type}')"
    if images.shape.ndims not in (None, 4):
        raise InvalidArgumentError(f"Shape must be rank 4 but is rank {images.shape.ndims} "
                                   f"for the images of {what}")
    if transforms.shape.ndims not in (None, 2):
        raise InvalidArgumentError(f"Shape must be rank 2 but is rank "
                                   f"{transforms.shape.ndims} for the transforms of {what}")
    if transforms.shape.ndims == 2 and transforms.shape.dims[1] not in (None, 8):
        raise InvalidArgumentError(f"transforms must have 8 columns, got shape "
                                   f"{transforms.shape.tf_str()} for {what}")
    if out_shape.shape.ndims not in (None, 1) or (out_shape.shape.ndims == 1 and
                                                  out_shape.shape.dims[0] not in (None, 2)):
        raise InvalidArgumentError(f"output_shape must be a vector of 2 ints, got shape "
                                   f"{out_shape.shape.tf_str()} for {what}")
    if op.get_attr("interpolation") not in _INTERPOLATIONS:
        raise InvalidArgumentError(f"Invalid interpolation {op.get_attr('interpolation')!r}; "
                                   "supported types: NEAREST, BILINEAR")
    v = constant_value(out_shape)
    oh, ow = (None, None) if v is None else (int(a) for a in np.reshape(v, [-1])[:2])
    if images.shape.ndims is None:
        return [(images.dtype, TensorShape([None, oh, ow, None]))]
    b, _, _, c = images.shape.dims
    return [(images.dtype, TensorShape([b, oh, ow, c]))]


def _round_half_away(m, v):
    a = m.floor(m.abs(v) + np.float32(0.5))
    return m.where(v < 0, -a, a)


@register_op("ImageProjectiveTransformV2", infer=_transform_infer, attrs=("interpolation",),
             const_inputs=(2,))
def _image_projective_transform(m, images, transforms, output_shape, interpolation="NEAREST"):
    """Each output pixel read at its transformed point (see the module doc)."""
    b, h, w, c = images.shape
    oh, ow = (int(v) for v in np.reshape(np.asarray(output_shape), [-1]))
    n = transforms.shape[0]
    # (the shapes are known here in both paths: at run time, or when the cluster is traced)
    if len(transforms.shape) != 2 or transforms.shape[1] != 8 or n not in (1, b):
        raise InvalidArgumentError(f"Input transform should be num_images x 8 or 1 x 8, got "
                                   f"{list(transforms.shape)} for {b} images")
    if oh <= 0 or ow <= 0:
        raise InvalidArgumentError(f"output dimensions must be positive, got {[oh, ow]}")
    if b * h * w * c == 0:  # nothing to read: every point is outside
        return m.zeros((b, oh, ow, c), images.dtype)
    t = m.astype(transforms, np.float32)[:, :, None, None]  # [n, 8, 1, 1]
    xs = np.arange(ow, dtype=np.float32)[None, None, :]
    ys = np.arange(oh, dtype=np.float32)[None, :, None]
    k = t[:, 6] * xs + t[:, 7] * ys + np.float32(1)  # [n, oh, ow]
    finite = k != 0  # k = 0: a point at infinity, outside the image
    k = m.where(finite, k, np.float32(1))
    in_x = (t[:, 0] * xs + t[:, 1] * ys + t[:, 2]) / k
    in_y = (t[:, 3] * xs + t[:, 4] * ys + t[:, 5]) / k
    shp = (b, oh, ow)
    in_x, in_y = m.broadcast_to(in_x, shp), m.broadcast_to(in_y, shp)
    finite = m.broadcast_to(finite, shp)
    flat = m.reshape(images, (b * h * w, c))
    base = np.arange(b, dtype=np.int32)[:, None, None] * np.int32(h * w)

    def read(yy, xx):
        """The pixels at float rows yy and columns xx ([b, oh, ow], whole numbers), 0
        outside the image: [b, oh, ow, c]."""
        inside = finite & (yy >= 0) & (yy <= h - 1) & (xx >= 0) & (xx <= w - 1)
        yi = m.astype(m.where(inside, yy, np.float32(0)), np.int32)
        xi = m.astype(m.where(inside, xx, np.float32(0)), np.int32)
        vals = m.take(flat, base + yi * np.int32(w) + xi, axis=0)
        return m.where(inside[..., None], vals, np.zeros((), images.dtype))

    if interpolation == "NEAREST":
        return read(_round_half_away(m, in_y), _round_half_away(m, in_x))
    y0, x0 = m.floor(in_y), m.floor(in_x)
    y1, x1 = y0 + np.float32(1), x0 + np.float32(1)

    def f(yy, xx):
        return m.astype(read(yy, xx), np.float32)

    wx0, wx1 = (x1 - in_x)[..., None], (in_x - x0)[..., None]
    top = wx0 * f(y0, x0) + wx1 * f(y0, x1)
    bottom = wx0 * f(y1, x0) + wx1 * f(y1, x1)
    out = (y1 - in_y)[..., None] * top + (in_y - y0)[..., None] * bottom
    return m.astype(out, images.dtype)


def _hw(images: Tensor) -> Tensor:
    """[height, width] of NHWC images: a constant when known, else from their shape."""
    dims = images.shape.dims
    if dims is not None and dims[1] is not None and dims[2] is not None:
        return tensor(np.asarray([dims[1], dims[2]], np.int32))
    return shape(images)[1:3]


@register_gradient("ImageProjectiveTransformV2")
def _image_projective_transform_grad(op, grad):
    images, transforms, _ = op.inputs
    if not images.dtype.is_floating:
        return [None, None, None]
    inverse = matrices_to_flat_transforms(matrix_inverse(flat_transforms_to_matrices(
        transforms)))
    back = make("ImageProjectiveTransformV2", [grad, inverse, _hw(images)],
                {"interpolation": op.get_attr("interpolation")})
    return [back, None, None]


# ---- the user-facing functions -----------------------------------------------------------------

def _batch_images(images, what):
    """(NHWC images, the rank given) from 2-D HW, 3-D HWC or 4-D NHWC images."""
    x = tensor(images)
    if x.dtype.base_dtype not in _IMAGE_DTYPES:
        raise InvalidTypeError(f"{what}: invalid dtype {x.dtype.name} (images must be uint8, "
                               "int32, int64, float16, float32 or float64)")
    r = x.shape.ndims
    if r is None:
        raise InvalidTypeError(f"{what}: the rank of the images must be known statically")
    if r == 2:
        return x[None, :, :, None], r
    if r == 3:
        return x[None], r
    if r == 4:
        return x, r
    raise InvalidTypeError(f"{what}: images should have rank between 2 and 4, got shape "
                           f"{x.shape.tf_str()}")


def _unbatch(out, r):
    if r == 2:
        return out[0, :, :, 0]
    return out[0] if r == 3 else out


def _float32(x, what):
    if isinstance(x, Tensor):
        if x.dtype != dtypes.float32:
            raise InvalidTypeError(f"{what} must be float32, got a {x.dtype.name} tensor")
        return x
    return tensor(np.asarray(x, np.float32))


def transform(images, transforms, interpolation="NEAREST", output_shape=None, name=None):
    """The images transformed by the projective transforms ([8] or [1 or batch, 8]), mapping
    output points to input points (see the module doc); output_shape [height, width]
    defaults to the images'."""
    with get_default_graph().name_scope(name or "transform"):
        x, r = _batch_images(images, "transform")
        t = _float32(transforms, "transforms")
        if t.shape.ndims is None:
            raise InvalidTypeError("transform: the rank of the transforms must be known "
                                   "statically")
        if t.shape.ndims == 1:
            t = t[None]
        elif t.shape.ndims != 2:
            raise InvalidTypeError(f"transform: transforms should have rank 1 or 2, got shape "
                                   f"{t.shape.tf_str()}")
        if t.shape.dims[1] not in (None, 8):
            raise InvalidArgumentError(f"transform: each transform has 8 parameters, got "
                                       f"shape {t.shape.tf_str()}")
        if output_shape is None:
            out_shape = _hw(x)
        else:
            out_shape = (cast(output_shape, dtypes.int32) if isinstance(output_shape, Tensor)
                         else tensor(np.asarray(output_shape, np.int32)))
            if not out_shape.shape.is_compatible_with(TensorShape([2])):
                raise InvalidArgumentError("output_shape must be a 1-D Tensor of 2 elements: "
                                           "new_height, new_width")
        if not isinstance(interpolation, str) or interpolation.upper() not in _INTERPOLATIONS:
            raise InvalidArgumentError(f"transform: invalid interpolation {interpolation!r} "
                                       "(NEAREST or BILINEAR)")
        out = make("ImageProjectiveTransformV2", [x, t, out_shape],
                   {"interpolation": interpolation.upper()})
        return _unbatch(out, r)


def _as_float(v):
    return cast(v, dtypes.float32) if isinstance(v, Tensor) else \
        tensor(np.asarray(v, np.float32))


def angles_to_projective_transforms(angles, image_height, image_width, name=None):
    """[n, 8] transforms rotating images of the given size counterclockwise by the angles
    (radians; a scalar or [n]) about their centres."""
    with get_default_graph().name_scope(name or "angles_to_projective_transforms"):
        a = _float32(angles, "angles")
        if a.shape.ndims == 0:
            a = a[None]
        elif a.shape.ndims != 1:
            raise InvalidTypeError(f"angles should have rank 0 or 1, got shape "
                                   f"{a.shape.tf_str()}")
        h1 = subtract(_as_float(image_height), 1.0)
        w1 = subtract(_as_float(image_width), 1.0)
        c, s = cos(a), sin(a)
        x_off = realdiv(subtract(w1, subtract(multiply(c, w1), multiply(s, h1))), 2.0)
        y_off = realdiv(subtract(h1, add(multiply(s, w1), multiply(c, h1))), 2.0)
        z = zeros_like(a)
        return stack([c, negative(s), add(x_off, z), s, c, add(y_off, z), z, z], axis=1)


def translations_to_projective_transforms(translations, name=None):
    """[n, 8] transforms translating images by [dx, dy] (a [2] or [n, 2] float32)."""
    with get_default_graph().name_scope(name or "translations_to_projective_transforms"):
        t = _float32(translations, "translations")
        if t.shape.ndims is None:
            raise InvalidTypeError("the rank of the translations must be known statically")
        if t.shape.ndims == 1:
            t = t[None]
        elif t.shape.ndims != 2:
            raise InvalidTypeError(f"translations should have rank 1 or 2, got shape "
                                   f"{t.shape.tf_str()}")
        dx, dy = t[:, 0], t[:, 1]
        one, z = ones_like(dx), zeros_like(dx)
        return stack([one, z, negative(dx), z, one, negative(dy), z, z], axis=1)


def rotate(images, angles, interpolation="NEAREST", name=None):
    """The images (HW, HWC or NHWC) rotated counterclockwise by the angles (radians, a
    scalar or one per image) about their centres; corners left empty are 0."""
    with get_default_graph().name_scope(name or "rotate"):
        x, r = _batch_images(images, "rotate")
        hw = cast(_hw(x), dtypes.float32)
        t = angles_to_projective_transforms(angles, hw[0:1], hw[1:2])
        return _unbatch(transform(x, t, interpolation=interpolation), r)


def translate(images, translations, interpolation="NEAREST", name=None):
    """The images moved by translations [dx, dy] (one, or one per image)."""
    with get_default_graph().name_scope(name or "translate"):
        return transform(images, translations_to_projective_transforms(translations),
                         interpolation=interpolation)


def flat_transforms_to_matrices(transforms):
    """[n, 3, 3] matrices (mapping output to input points, homogeneous) of [8] or [n, 8]
    transforms."""
    with get_default_graph().name_scope("flat_transforms_to_matrices"):
        t = tensor(transforms)
        if t.shape.ndims not in (1, 2):
            raise InvalidArgumentError(f"Transforms should be 1D or 2D, got shape "
                                       f"{t.shape.tf_str()}")
        t = reshape(t, [-1, 8])
        return reshape(concat([t, ones_like(t[:, :1])], axis=1), [-1, 3, 3])


def matrices_to_flat_transforms(transform_matrices):
    """[n, 8] transforms of [3, 3] or [n, 3, 3] matrices (each divided by its last
    entry)."""
    with get_default_graph().name_scope("matrices_to_flat_transforms"):
        mats = tensor(transform_matrices)
        if mats.shape.ndims not in (2, 3):
            raise InvalidArgumentError(f"Matrices should be 2D or 3D, got shape "
                                       f"{mats.shape.tf_str()}")
        flat = reshape(mats, [-1, 9])
        flat = realdiv(flat, flat[:, 8:9])
        return flat[:, :8]


def compose_transforms(*transforms):
    """One [n, 8] transform: transforming by it is transforming by each given one in turn
    (its matrix is the product of theirs, the first on the left)."""
    if not transforms:
        raise AssertionError("transforms cannot be empty")
    with get_default_graph().name_scope("compose_transforms"):
        composed = flat_transforms_to_matrices(transforms[0])
        for t in transforms[1:]:
            composed = matmul(composed, flat_transforms_to_matrices(t))
        return matrices_to_flat_transforms(composed)
