"""tf.extract_volume_patches: the 3-D patches of a 5-D [batch, planes, rows, cols, depth]
tensor, as TF's ExtractVolumePatches.

The output is [batch, out_planes, out_rows, out_cols, kp * kr * kc * depth], each patch
ordered (plane, row, column, channel), channel fastest. ksizes and strides are
[1, planes, rows, cols, 1]; padding 'VALID' keeps whole windows (ceil((n - k + 1) / s)
positions), 'SAME' gives ceil(n / s) positions over a zero padding of
max((out - 1) * s + k - n, 0), the smaller half before, as TF's.

A composition like tf.image.extract_image_patches: a pad and one gather of the flattened
[batch, planes * rows * cols, depth] volume with indices computed when the graph is built
(the spatial sizes and depth must be known), so it compiles and differentiates through the
gather (TF's gradient scatters each patch value back to its input position).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.image.patches import window_geometry
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import reshape
from xlapy.compat.v1.ops.gather_ops import gather
from xlapy.compat.v1.ops.manip_ops import pad


def _five(v, what):
    try:
        v = [int(a) for a in v]
    except TypeError:
        raise InvalidArgumentError(f"{what} must be a list of 5 ints, got {v!r}") from None
    if len(v) != 5:
        raise InvalidArgumentError(f"{what} must have 5 elements, got {v}")
    if v[0] != 1 or v[4] != 1:
        raise InvalidArgumentError(f"extract_volume_patches: {what} must be [1, planes, rows, "
                                   f"cols, 1] (patches across the batch or depth are not "
                                   f"supported), got {v}")
    if min(v) < 1:
        raise InvalidArgumentError(f"{what} must be positive, got {v}")
    return v[1:4]


def extract_volume_patches(input, ksizes, strides, padding, name=None):
    """[batch, out_planes, out_rows, out_cols, kp * kr * kc * depth] 3-D patches."""
    x = tensor(input)
    k = _five(ksizes, "ksizes")
    s = _five(strides, "strides")
    if x.shape.ndims != 5 or any(d is None for d in x.shape.dims[1:]):
        raise InvalidArgumentError(f"extract_volume_patches: input must be 5-D with known "
                                   f"planes, rows, cols and depth, got {x.shape.tf_str()}")
    _, dims_in, c = (x.shape.dims[0], list(x.shape.dims[1:4]), x.shape.dims[4])
    geo = [window_geometry(n, kk, ss, 1, padding) for n, kk, ss in zip(dims_in, k, s)]
    outs = [g[0] for g in geo]
    with get_default_graph().name_scope(name or "ExtractVolumePatches"):
        if any(g[1] or g[2] for g in geo):
            x = pad(x, [[0, 0]] + [[g[1], g[2]] for g in geo] + [[0, 0]])
        dp, hp, wp = (n + g[1] + g[2] for n, g in zip(dims_in, geo))
        pos = [np.arange(o) * ss for o, ss in zip(outs, s)]
        off = [np.arange(kk) for kk in k]
        p = pos[0][:, None, None, None, None, None] + off[0][None, None, None, :, None, None]
        r = pos[1][None, :, None, None, None, None] + off[1][None, None, None, None, :, None]
        q = pos[2][None, None, :, None, None, None] + off[2][None, None, None, None, None, :]
        idx = ((p * hp + r) * wp + q).reshape(-1).astype(np.int32)
        b = -1 if x.shape.dims[0] is None else x.shape.dims[0]
        if b == -1 and 0 in outs:
            raise InvalidArgumentError("extract_volume_patches: no window fits the input "
                                       "(an empty output needs the batch size known)")
        flat = reshape(x, [b, dp * hp * wp, c])
        got = gather(flat, idx, axis=1)
        return reshape(got, [b] + outs + [k[0] * k[1] * k[2] * c])
