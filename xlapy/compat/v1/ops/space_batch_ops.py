"""tf.space_to_batch_nd / tf.batch_to_space_nd and the 4-D tf.space_to_batch /
tf.batch_to_space (one block size for both spatial dimensions).

SpaceToBatchND pads the M spatial dimensions (after the batch one) with `paddings`, then
moves each block_shape[i] x ... offset into the batch: the output batch is
prod(block_shape) * batch, ordered with the block offsets outermost (TF's layout).
BatchToSpaceND is the inverse, followed by cropping `crops`. Both take block_shape and
paddings/crops as compile-time constants under XLA; each is the other's gradient.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import constant_value, make, tensor
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape


def _block_and_pads(block, pads, what):
    b = np.reshape(np.asarray(block), [-1]).astype(np.int64)
    p = np.reshape(np.asarray(pads), [-1, 2]).astype(np.int64)
    if p.shape[0] != b.shape[0]:
        raise InvalidArgumentError(f"{what}: block_shape {b.tolist()} and paddings/crops "
                                   f"{p.tolist()} must have the same number of dimensions")
    if np.any(b < 1):
        raise InvalidArgumentError(f"{what}: block_shape must be positive, got {b.tolist()}")
    if np.any(p < 0):
        raise InvalidArgumentError(f"{what}: paddings/crops must be non-negative, got "
                                   f"{p.tolist()}")
    return [int(v) for v in b], [(int(a), int(c)) for a, c in p]


def _s2b_dims(dims, block, pads):
    out = list(dims)
    for i, (bs, (a, c)) in enumerate(zip(block, pads)):
        d = dims[1 + i]
        if d is not None:
            if (d + a + c) % bs:
                raise InvalidArgumentError(f"padded_shape[{i}]={d + a + c} is not divisible "
                                           f"by block_shape[{i}]={bs}")
            out[1 + i] = (d + a + c) // bs
    out[0] = None if dims[0] is None else dims[0] * int(np.prod(block))
    return out


def _b2s_dims(dims, block, crops):
    n = int(np.prod(block))
    out = list(dims)
    if dims[0] is not None:
        if dims[0] % n:
            raise InvalidArgumentError(f"Input batch dimension ({dims[0]}) is not divisible by "
                                       f"product of block sizes ({n})")
        out[0] = dims[0] // n
    for i, (bs, (a, c)) in enumerate(zip(block, crops)):
        d = dims[1 + i]
        if d is not None:
            if d * bs - a - c < 0:
                raise InvalidArgumentError(f"Negative output dimension size caused by "
                                           f"crops {a}, {c} on {d * bs}")
            out[1 + i] = d * bs - a - c
    return out


def _infer(kind):
    def infer(op):
        x, block_t, pads_t = op.inputs
        bv, pv = constant_value(block_t), constant_value(pads_t)
        if bv is None or pv is None or x.shape.dims is None:
            return [(x.dtype, unknown_shape(x.shape.ndims))]
        block, pads = _block_and_pads(bv, pv, kind)
        if len(x.shape.dims) < 1 + len(block):
            raise InvalidArgumentError(f"{kind}: input rank {len(x.shape.dims)} must be at "
                                       f"least 1 + {len(block)}")
        f = _s2b_dims if kind == "SpaceToBatchND" else _b2s_dims
        return [(x.dtype, TensorShape(f(x.shape.dims, block, pads)))]
    return infer


@register_op("SpaceToBatchND", infer=_infer("SpaceToBatchND"), const_inputs=(1, 2))
def _space_to_batch_nd(m, x, block_shape, paddings):
    block, pads = _block_and_pads(block_shape, paddings, "SpaceToBatchND")
    k = len(block)
    dims = _s2b_dims(list(x.shape), block, pads)  # validates divisibility
    del dims
    x = m.pad(x, [(0, 0)] + pads + [(0, 0)] * (x.ndim - 1 - k))
    b, rest = x.shape[0], tuple(x.shape[1 + k:])
    split = [b]
    for i, bs in enumerate(block):
        split += [x.shape[1 + i] // bs, bs]
    x = m.reshape(x, tuple(split) + rest)
    # [b, s1, b1, s2, b2, ..., rest] -> [b1, b2, ..., b, s1, s2, ..., rest]
    perm = [2 + 2 * i for i in range(k)] + [0] + [1 + 2 * i for i in range(k)] + \
        list(range(1 + 2 * k, 1 + 2 * k + len(rest)))
    x = m.transpose(x, perm)
    return m.reshape(x, (b * int(np.prod(block)),) + tuple(x.shape[k + 1:2 * k + 1]) + rest)


@register_op("BatchToSpaceND", infer=_infer("BatchToSpaceND"), const_inputs=(1, 2))
def _batch_to_space_nd(m, x, block_shape, crops):
    block, crops = _block_and_pads(block_shape, crops, "BatchToSpaceND")
    k = len(block)
    _b2s_dims(list(x.shape), block, crops)  # validates
    n = int(np.prod(block))
    b = x.shape[0] // n
    spatial, rest = tuple(x.shape[1:1 + k]), tuple(x.shape[1 + k:])
    x = m.reshape(x, tuple(block) + (b,) + spatial + rest)
    # [b1, ..., bk, b, s1, ..., sk, rest] -> [b, s1, b1, s2, b2, ..., rest]
    perm = [k]
    for i in range(k):
        perm += [k + 1 + i, i]
    perm += list(range(2 * k + 1, 2 * k + 1 + len(rest)))
    x = m.transpose(x, perm)
    x = m.reshape(x, (b,) + tuple(s * bs for s, bs in zip(spatial, block)) + rest)
    idx = (slice(None),) + tuple(slice(a, s * bs - c) for s, bs, (a, c)
                                 in zip(spatial, block, crops))
    return x[idx]


@register_gradient("SpaceToBatchND")
def _s2b_grad(op, g):
    return [make("BatchToSpaceND", [g, op.inputs[1], op.inputs[2]]), None, None]


@register_gradient("BatchToSpaceND")
def _b2s_grad(op, g):
    return [make("SpaceToBatchND", [g, op.inputs[1], op.inputs[2]]), None, None]


def _i32(v):
    return v if isinstance(v, Tensor) else tensor(np.asarray(v, np.int32))


def space_to_batch_nd(input, block_shape, paddings, name=None):
    return make("SpaceToBatchND", [tensor(input), _i32(block_shape), _i32(paddings)],
                name=name or "SpaceToBatchND")


def batch_to_space_nd(input, block_shape, crops, name=None):
    return make("BatchToSpaceND", [tensor(input), _i32(block_shape), _i32(crops)],
                name=name or "BatchToSpaceND")


def space_to_batch(input, paddings, block_size=None, name=None, block_shape=None):
    """TF 1.x's 4-D form: [batch, h, w, c] with one block size for h and w."""
    bs = block_size if block_size is not None else block_shape
    if bs is None:
        raise InvalidArgumentError("space_to_batch needs block_size")
    return space_to_batch_nd(input, [int(bs), int(bs)], paddings, name=name or "SpaceToBatch")


def batch_to_space(input, crops, block_size, name=None, block_shape=None):
    bs = block_size if block_size is not None else block_shape
    return batch_to_space_nd(input, [int(bs), int(bs)], crops, name=name or "BatchToSpace")
