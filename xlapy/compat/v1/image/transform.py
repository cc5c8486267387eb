"""tf.image.transpose_image (swaps the height and width of one image [h, w, c] or a batch
[n, h, w, c]) and tf.image.resize (TF 1.15's resize_images, with a name)."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import transpose


def transpose_image(image):
    """The image with height and width swapped (a transpose: it differentiates and
    compiles)."""
    x = tensor(image)
    r = x.shape.ndims
    if r == 3:
        perm = [1, 0, 2]
    elif r == 4:
        perm = [0, 2, 1, 3]
    else:
        raise InvalidArgumentError(f"'image' must have either 3 or 4 dimensions, got "
                                   f"{x.shape.tf_str()}")
    return transpose(x, perm, name="transpose_image")


def resize(images, size, method=0, align_corners=False, preserve_aspect_ratio=False,
           name=None):
    """TF 1.15's tf.image.resize: resize_images, methods ResizeMethod.* or 'bilinear',
    'nearest', 'bicubic', 'area'."""
    from xlapy.compat.v1.image import resize_images  # the package imports this module
    with get_default_graph().name_scope(name or "resize"):
        return resize_images(images, size, method, align_corners, preserve_aspect_ratio)
