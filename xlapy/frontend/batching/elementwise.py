"""Batching rules of the elementwise primitives (primitives/basic.py, misc.py, bitcast.py).

Elementwise operands all have one shape, so a batched result needs every operand batched
along the same axis. When the batched operands already agree on where their batch axis
is, it stays there (no transpose); otherwise they move it to the front. Unmapped operands
are broadcast along that axis (under jit the broadcast fuses into the elementwise kernel,
as in the hand-batched program, where NumPy-style broadcasting does the same).
"""

from __future__ import annotations

from xlapy.frontend.core import bind
from xlapy.frontend.primitives import basic, bitcast, complex as complex_prims, misc
from xlapy.frontend.batching.trace import (NOT_MAPPED, batch_size, broadcast_batch, moveaxis,
                                           shape_of)


def _common_dim(vals, dims) -> int:
    """Where the batch axis of the result goes: the batched operands' common axis, else 0."""
    batched = {(d, len(shape_of(v))) for v, d in zip(vals, dims) if d is not NOT_MAPPED}
    if len(batched) == 1:
        return next(iter(batched))[0]
    return 0


def align(vals, dims):
    """Every operand batched along one axis (moved or broadcast there); (vals, that axis)."""
    n = batch_size(vals, dims)
    out_dim = _common_dim(vals, dims)
    out = []
    for v, d in zip(vals, dims):
        if d is NOT_MAPPED:
            out.append(broadcast_batch(v, n, out_dim))
        else:
            out.append(moveaxis(v, d, out_dim))
    return out, out_dim


def elementwise_rule(prim):
    def rule(frame, vals, dims, **params):
        if len(vals) == 1:
            return bind(prim, vals[0], **params), dims[0]
        vals, out_dim = align(vals, dims)
        return bind(prim, *vals, **params), out_dim
    return rule


ELEMENTWISE = (list(basic.UNARY.values()) + list(basic.BINARY.values())
               + list(basic.COMPARE.values())
               + [basic.select_p, basic.convert_p, misc.clamp_p, misc.stop_gradient_p,
                  complex_prims.real_p, complex_prims.imag_p, complex_prims.complex_p,
                  complex_prims.conj_p, bitcast.bitcast_convert_p])

for _p in ELEMENTWISE:
    _p.def_batch(elementwise_rule(_p))
