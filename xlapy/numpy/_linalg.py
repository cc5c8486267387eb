"""Matrix products: matmul (@), dot, vdot, inner, outer."""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.precision import canonicalize as canonicalize_precision
from xlapy.frontend.primitives import shapes as S
from xlapy.numpy._core import asarray, broadcast_to, promote, shape
from xlapy.numpy._shape_ops import expand_dims, reshape


def matmul(a, b, *, precision=None, preferred_element_type=None):
    p = canonicalize_precision(precision, "matmul")
    a, b = _promote_pet(a, b, preferred_element_type)
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
        return S.dot_general(a, b, (((len(sa) - 1,), (max(len(sb) - 2, 0),)), ((), ())),
                             precision=p)
    batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    if batch and len(sb) == 2:
        # x @ W with a batched x: W's free dim follows x's, no batch dims and no broadcast W
        # (as jnp.matmul); the backend sees one gemm over x's leading dims
        return S.dot_general(a, b, (((len(sa) - 1,), (0,)), ((), ())), precision=p)
    if batch:
        a = broadcast_to(a, batch + sa[-2:])
        b = broadcast_to(b, batch + sb[-2:])
    nb = len(batch)
    return S.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                         precision=p)


def _promote_pet(a, b, preferred_element_type):
    """a and b in their common type, or in preferred_element_type when given (as JAX's
    result type of the product)."""
    if preferred_element_type is not None:
        return promote(asarray(a), asarray(b), dtype=preferred_element_type)
    return promote(asarray(a), asarray(b))


def dot(a, b, *, precision=None, preferred_element_type=None):
    p = canonicalize_precision(precision, "dot")
    sa, sb = shape(a), shape(b)
    if not sa or not sb:
        from xlapy.numpy._ufuncs import multiply
        a, b = _promote_pet(a, b, preferred_element_type)
        return multiply(a, b)
    if len(sb) <= 2:
        return matmul(a, b, precision=precision, preferred_element_type=preferred_element_type)
    a, b = _promote_pet(a, b, preferred_element_type)
    # N-d dot: sum over the last axis of a and the second-to-last of b
    return S.dot_general(a, b, (((len(sa) - 1,), (len(sb) - 2,)), ((), ())), precision=p)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    return dot(reshape(a, (-1,)), reshape(b, (-1,)), precision=precision,
               preferred_element_type=preferred_element_type)


def inner(a, b, *, precision=None, preferred_element_type=None):
    p = canonicalize_precision(precision, "inner")
    a, b = _promote_pet(a, b, preferred_element_type)
    sa, sb = shape(a), shape(b)
    if not sa or not sb:
        from xlapy.numpy._ufuncs import multiply
        return multiply(a, b)
    return S.dot_general(a, b, (((len(sa) - 1,), (len(sb) - 1,)), ((), ())), precision=p)


def outer(a, b):
    a, b = reshape(a, (-1,)), reshape(b, (-1,))
    from xlapy.numpy._ufuncs import multiply
    return multiply(expand_dims(a, 1), expand_dims(b, 0))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    from xlapy.numpy._reductions import sum
    from xlapy.numpy._shape_ops import diagonal
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
