"""tf.image.extract_glimpse: [batch, gh, gw, depth] windows of [batch, h, w, depth] images
centred at offsets (y, x), following TF 1.15's kernel (Eigen's ExtractGlimpses).

An offset is in pixels, or normalized ([-1, 1] when centered, the image centre at 0;
[0, 1] from the top-left corner otherwise); half the window is subtracted and the corner
truncated toward zero to an integer. Pixels of a window outside the image are noise:
uniform between the image's min and max (TF 1.x's default), per-channel Gaussian with
the image's channel mean and deviation (uniform_noise=False), or zeros (noise="zero",
TF 2's option). It draws random numbers, so it is seeded like TF's random ops and runs in
the executor.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import constant_value, make, tensor
from xlapy.compat.v1.tensor_shape import TensorShape


def _glimpse_infer(op):
    x, size = op.inputs[0], op.inputs[1]
    sv = constant_value(size)
    if x.shape.ndims not in (None, 4):
        raise InvalidArgumentError(f"input must be 4-dimensional, got {x.shape.tf_str()}")
    dims = [None] * 4 if x.shape.dims is None else list(x.shape.dims)
    gh, gw = (None, None) if sv is None else (int(v) for v in np.reshape(sv, [-1]))
    return [(dtypes.float32, TensorShape([dims[0], gh, gw, dims[3]]))]


@register_op("ExtractGlimpse", infer=_glimpse_infer, rng=True, lowering=None,
             attrs=("centered", "normalized", "uniform_noise", "noise"))
def _extract_glimpse(m, rng, images, size, offsets, centered=True, normalized=True,
                     uniform_noise=True, noise="uniform"):
    x = np.asarray(images, np.float32)
    b, h, w, c = x.shape
    gh, gw = (int(v) for v in np.reshape(size, [-1]))
    if offsets.shape != (b, 2):
        raise InvalidArgumentError(f"offsets must be [batch_size, 2], got {list(offsets.shape)}")
    out = np.zeros((b, gh, gw, c), np.float32)
    kind = noise if noise != "uniform" else ("uniform" if uniform_noise else "gaussian")
    f = np.float32
    for i in range(b):
        oy, ox = f(offsets[i, 0]), f(offsets[i, 1])
        if normalized:
            ox, oy = ox * f(w), oy * f(h)
            if centered:
                ox, oy = ox / f(2) + f(w) / f(2), oy / f(2) + f(h) / f(2)
        elif centered:
            ox, oy = ox + f(w) / f(2), oy + f(h) / f(2)
        x0, y0 = int(ox - f(gw) / f(2)), int(oy - f(gh) / f(2))  # truncation, as (Index)
        img = x[i]
        if x0 < 0 or y0 < 0 or x0 + gw >= w or y0 + gh >= h:
            if kind == "uniform":
                lo, hi = img.min(), img.max()
                out[i] = lo + rng.random((gh, gw, c)).astype(np.float32) * (hi - lo)
            elif kind == "gaussian":
                mean, std = img.mean((0, 1)), img.std((0, 1))
                out[i] = mean + std * rng.standard_normal((gh, gw, c)).astype(np.float32)
        ys, xs = max(y0, 0), max(x0, 0)
        ye, xe = min(y0 + gh, h), min(x0 + gw, w)
        if ye > ys and xe > xs:
            out[i, ys - y0:ye - y0, xs - x0:xe - x0] = img[ys:ye, xs:xe]
    return out


not_differentiable("ExtractGlimpse")


def extract_glimpse(input, size, offsets, centered=True, normalized=True, uniform_noise=True,
                    name=None, noise=None):
    from xlapy.compat.v1.ops.math_ops import cast
    from xlapy.compat.v1.ops.random_ops import get_seed
    if noise not in (None, "uniform", "gaussian", "zero"):
        raise InvalidArgumentError(f"noise must be 'uniform', 'gaussian' or 'zero', got "
                                   f"{noise!r}")
    s1, s2 = get_seed(None)
    sz = size if hasattr(size, "op") else tensor(np.asarray(size, np.int32))
    return make("ExtractGlimpse", [cast(tensor(input), dtypes.float32), sz,
                                   cast(tensor(offsets), dtypes.float32)],
                {"centered": bool(centered), "normalized": bool(normalized),
                 "uniform_noise": bool(uniform_noise), "noise": noise or "uniform",
                 "seed": s1, "seed2": s2}, name=name or "ExtractGlimpse")
