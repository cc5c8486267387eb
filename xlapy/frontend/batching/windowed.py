"""Batching rules of the windowed reductions and select_and_scatter_add
(primitives/windowed.py): the batch axis gets a window of 1 (stride 1, no padding, no
dilation), so every window stays inside one member."""

from __future__ import annotations

from xlapy.frontend.core import bind
from xlapy.frontend.primitives import windowed
from xlapy.frontend.batching.trace import batch_size, bdim_to_front


def _ins(t, b, v):
    return tuple(t[:b]) + (v,) + tuple(t[b:])


def _reduce_window_rule(prim):
    def rule(frame, vals, dims, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
        (x,), (b,) = vals, dims
        return bind(prim, x, window_dimensions=_ins(window_dimensions, b, 1),
                    window_strides=_ins(window_strides, b, 1), padding=_ins(padding, b, (0, 0)),
                    base_dilation=_ins(base_dilation, b, 1),
                    window_dilation=_ins(window_dilation, b, 1)), b
    return rule


for _p in (windowed.reduce_window_sum_p, windowed.reduce_window_max_p,
           windowed.reduce_window_min_p):
    _p.def_batch(_reduce_window_rule(_p))


@windowed.select_and_scatter_add_p.def_batch
def _select_and_scatter_add(frame, vals, dims, *, select_prim, window_dimensions,
                            window_strides, padding):
    n = batch_size(vals, dims)
    source, operand = (bdim_to_front(v, d, n) for v, d in zip(vals, dims))
    return bind(windowed.select_and_scatter_add_p, source, operand, select_prim=select_prim,
                window_dimensions=(1,) + tuple(window_dimensions),
                window_strides=(1,) + tuple(window_strides),
                padding=((0, 0),) + tuple(padding)), 0
