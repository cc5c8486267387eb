"""Eager evaluation of a primitive by the reference evaluator, through its HLO lowering.

Outside jit, an elementwise primitive applied to NumPy arrays is lowered to a one-operation
HLO module (its lowering rule, as under jit) and run by xlapy.hlo.evaluator: XLA's
semantics (integer division and remainder, rounding, sign, shifts, NaN-propagating
max/min, saturating converts, f16/bf16 computed in f32, ...) live in one NumPy
implementation, the evaluator's, which the interpreter platform and constant folding use
too. The module of each (primitive, operand types, parameters) is built once and kept.

  p.def_impl(eager.via_evaluator(p))
"""

from __future__ import annotations

import functools

import numpy as np

from xlapy.frontend.core import Primitive, ShapedArray, bind
from xlapy.frontend.graph import make_graph
from xlapy.frontend.lowering import lower_to_module


@functools.lru_cache(maxsize=4096)
def _module(prim: Primitive, avals: tuple, params: tuple):
    kw = dict(params)
    graph, consts, _ = make_graph(lambda *xs: bind(prim, *xs, **kw), list(avals))
    module, extra = lower_to_module(graph, consts, prim.name)
    return module, [consts[i] for i in extra]


def evaluate_primitive(prim: Primitive, *args, **params):
    """prim applied to NumPy arrays, by the evaluator (params must be hashable)."""
    # (imported here: tracing, which never evaluates, skips the evaluator's import)
    from xlapy.hlo.evaluator import evaluate
    arrays = [np.asarray(a) for a in args]
    avals = tuple(ShapedArray(a.shape, a.dtype) for a in arrays)
    module, extra = _module(prim, avals, tuple(sorted(params.items())))
    return evaluate(module, *arrays, *extra)


def via_evaluator(prim: Primitive):
    """An impl rule for prim that evaluates its HLO lowering (see the module docstring)."""
    return functools.partial(evaluate_primitive, prim)
