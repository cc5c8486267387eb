"""tf.signal.frame and overlap_and_add, from graph ops (static lengths).

frame gathers [num_frames, frame_length] sample indices along `axis` (computed when the
graph is built): num_frames is 1 + (n - frame_length) // frame_step (0 if negative), or
with pad_end ceil(n / frame_step), the signal padded with pad_value to cover the last
frame. overlap_and_add splits each frame into ceil(frame_length / frame_step) chunks of
frame_step samples, shifts chunk j by j frames (a pad) and sums them, then crops to
(frames - 1) * frame_step + frame_length; both differentiate through their ops.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import constant_value, tensor
from xlapy.compat.v1.ops.array_ops import reshape
from xlapy.compat.v1.ops.gather_ops import gather
from xlapy.compat.v1.ops.manip_ops import pad
from xlapy.compat.v1.ops.math_ops import add


def static_int(v, what):
    c = constant_value(v) if hasattr(v, "op") else v
    if c is None:
        raise InvalidArgumentError(f"{what} must be known when the graph is built")
    return int(np.asarray(c))


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """[..., num_frames, frame_length, ...] frames of `signal` along `axis`."""
    x = tensor(signal)
    fl, fs = static_int(frame_length, "frame_length"), static_int(frame_step, "frame_step")
    if fl < 1 or fs < 1:
        raise InvalidArgumentError(f"frame_length and frame_step must be positive, got {fl} "
                                   f"and {fs}")
    r = x.shape.ndims
    if r is None or r == 0:
        raise InvalidArgumentError("frame: the signal's rank must be known and at least 1")
    a = axis % r
    n = x.shape.dims[a]
    if n is None:
        raise InvalidArgumentError(f"frame: the framed axis must be known, got "
                                   f"{x.shape.tf_str()}")
    with get_default_graph().name_scope(name or "frame"):
        if pad_end:
            num = -(-n // fs)
            need = max((num - 1) * fs + fl - n, 0)
            if need:
                pads = [[0, 0]] * r
                pads[a] = [0, need]
                x = pad(x, pads, constant_values=pad_value)
        else:
            num = max(1 + (n - fl) // fs, 0) if n >= fl else 0
        idx = (np.arange(num)[:, None] * fs + np.arange(fl)[None, :]).astype(np.int32)
        return gather(x, idx.reshape(num, fl), axis=a)


def overlap_and_add(signal, frame_step, name=None):
    """[..., frames, frame_length] -> [..., (frames - 1) * frame_step + frame_length]."""
    x = tensor(signal)
    fs = static_int(frame_step, "frame_step")
    dims = x.shape.dims
    if dims is None or len(dims) < 2 or dims[-1] is None or dims[-2] is None:
        raise InvalidArgumentError(f"overlap_and_add: signal must be at least 2-D with known "
                                   f"frames and frame_length, got {x.shape.tf_str()}")
    if fs < 1:
        raise InvalidArgumentError(f"frame_step must be positive, got {fs}")
    frames, fl = dims[-2], dims[-1]
    out_len = (frames - 1) * fs + fl if frames else 0
    lead = [-1 if d is None else d for d in dims[:-2]]
    r = len(dims)
    with get_default_graph().name_scope(name or "overlap_and_add"):
        j = -(-fl // fs)
        if j * fs > fl:
            x = pad(x, [[0, 0]] * (r - 1) + [[0, j * fs - fl]])
        x = reshape(x, lead + [frames, j, fs])
        total = None
        for k in range(j):
            chunk = x[(Ellipsis, slice(None), k, slice(None))]  # [..., frames, fs]
            chunk = pad(chunk, [[0, 0]] * (r - 2) + [[k, j - 1 - k], [0, 0]])
            total = chunk if total is None else add(total, chunk)
        flat = reshape(total, lead + [(frames + j - 1) * fs])
        return flat[(Ellipsis, slice(0, out_len))]
