"""Batching rules of sort and the cumulative reductions (primitives/sorting.py): the batch
axis is one more axis that is not sorted / accumulated along."""

from __future__ import annotations

from xlapy.frontend.core import bind
from xlapy.frontend.primitives import sorting
from xlapy.frontend.batching.trace import batch_size, bdim_to_front, phys


@sorting.sort_p.def_batch
def _sort(frame, vals, dims, dimension, is_stable, num_keys):
    n = batch_size(vals, dims)
    ops = [bdim_to_front(v, d, n) for v, d in zip(vals, dims)]
    outs = bind(sorting.sort_p, *ops, dimension=dimension + 1, is_stable=is_stable,
                num_keys=num_keys)
    return outs, [0] * len(outs)


def _cumulative_rule(prim):
    def rule(frame, vals, dims, axis, reverse):
        (x,), (b,) = vals, dims
        return bind(prim, x, axis=phys(axis, b), reverse=reverse), b
    return rule


for _p in (sorting.cumsum_p, sorting.cumprod_p, sorting.cummax_p, sorting.cummin_p):
    _p.def_batch(_cumulative_rule(_p))
