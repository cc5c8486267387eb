"""tf.contrib.image (TF 1.15): projective transforms of images (transform, rotate, translate
and the helpers building and composing their 8-parameter transforms: transform_ops.py),
warps (dense_image_warp, interpolate_spline, sparse_image_warp: warp.py) and
connected_components (components.py).

Not provided: adjust_hsv_in_yiq / random_hsv_in_yiq, bipartite_match and
single_image_random_dot_stereograms (each raises UnimplementedError).
"""

from xlapy.compat.v1.errors import UnimplementedError
from xlapy.compat.v1.contrib.image.components import connected_components
from xlapy.compat.v1.contrib.image.transform_ops import (
    angles_to_projective_transforms, compose_transforms, flat_transforms_to_matrices,
    matrices_to_flat_transforms, rotate, transform, translate,
    translations_to_projective_transforms)
from xlapy.compat.v1.contrib.image.warp import (dense_image_warp, interpolate_spline,
                                                sparse_image_warp)

__all__ = ["angles_to_projective_transforms", "compose_transforms", "connected_components",
           "dense_image_warp", "flat_transforms_to_matrices", "interpolate_spline",
           "matrices_to_flat_transforms", "rotate", "sparse_image_warp", "transform",
           "translate", "translations_to_projective_transforms"]

_NOT_PROVIDED = ("adjust_hsv_in_yiq", "random_hsv_in_yiq", "bipartite_match",
                 "single_image_random_dot_stereograms")


def __getattr__(name):
    if name in _NOT_PROVIDED:
        raise UnimplementedError(f"tf.contrib.image.{name} is not part of xlapy")
    raise AttributeError(f"module 'tf.contrib.image' has no attribute {name!r}")
