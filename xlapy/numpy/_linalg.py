"""Matrix products: matmul (@), dot, vdot, inner, outer."""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.primitives import shapes as S
from xlapy.numpy._core import asarray, broadcast_to, promote, shape
from xlapy.numpy._shape_ops import expand_dims, reshape


def matmul(a, b):
    a, b = promote(asarray(a), asarray(b))
    sa, sb = shape(a), shape(b)
    if not sa or not sb:
        raise XlapyError("matmul: input operands must be at least 1-dimensional")
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        raise XlapyError(f"matmul: mismatch in core dimension: {list(sa)} @ {list(sb)} "
                         f"({ka} != {kb})")
    if len(sa) == 1 or len(sb) == 1:
        # a vector side is contracted as it is (no reshape to a matrix, no broadcast): the
        # result's dims are the other side's free dims in order, as NumPy's are, and a
        # batched (vmapped) vector stays one free dim of a single matrix product
        return S.dot_general(a, b, (((len(sa) - 1,), (max(len(sb) - 2, 0),)), ((), ())))
    batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    if batch:
        a = broadcast_to(a, batch + sa[-2:])
        b = broadcast_to(b, batch + sb[-2:])
    nb = len(batch)
    return S.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))


def dot(a, b):
    sa, sb = shape(a), shape(b)
    if not sa or not sb:
        from xlapy.numpy._ufuncs import multiply
        return multiply(a, b)
    if len(sb) <= 2:
        return matmul(a, b)
    a, b = promote(asarray(a), asarray(b))
    # N-d dot: sum over the last axis of a and the second-to-last of b
    return S.dot_general(a, b, (((len(sa) - 1,), (len(sb) - 2,)), ((), ())))


def vdot(a, b):
    return dot(reshape(a, (-1,)), reshape(b, (-1,)))


def inner(a, b):
    a, b = promote(asarray(a), asarray(b))
    sa, sb = shape(a), shape(b)
    if not sa or not sb:
        from xlapy.numpy._ufuncs import multiply
        return multiply(a, b)
    return S.dot_general(a, b, (((len(sa) - 1,), (len(sb) - 1,)), ((), ())))


def outer(a, b):
    a, b = reshape(a, (-1,)), reshape(b, (-1,))
    from xlapy.numpy._ufuncs import multiply
    return multiply(expand_dims(a, 1), expand_dims(b, 0))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    from xlapy.numpy._reductions import sum
    from xlapy.numpy._shape_ops import diagonal
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
