"""Every primitive can be vmapped: it has a batching rule (or xlapy.frontend.batching's
RULELESS says why it needs none), and the op table of test_vmap_ops.py applies every rule
(so every rule is checked against a loop and jax.vmap there)."""

from __future__ import annotations

import os
import sys

import numpy as np

import xlapy.lax
import xlapy.nn  # every module that defines primitives
import xlapy.numpy
from xlapy.frontend import batching
from xlapy.frontend.core import PRIMITIVES, ShapedArray
from xlapy.frontend.primitives.process_collectives import process_allreduce_p
from xlapy.frontend.graph import make_graph
from xlapy.frontend.vmap import vmap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmap_table as T

XL = T.xlapy_namespace()


def test_every_primitive_has_a_batching_rule_or_a_reason():
    # (primitives named test_* are registered by other tests to exercise missing rules)
    missing = sorted(name for name, p in PRIMITIVES.items()
                     if p.batch is None and name not in batching.RULELESS
                     and not name.startswith("test_"))
    assert not missing, f"primitives without a batching rule (add one in " \
                        f"xlapy/frontend/batching/ or a reason in RULELESS): {missing}"
    stale = sorted(name for name in batching.RULELESS
                   if name not in PRIMITIVES or PRIMITIVES[name].batch is not None)
    assert not stale, f"RULELESS lists primitives that have a rule or do not exist: {stale}"


def _collectives(x):
    L = xlapy.lax
    return (L.psum(x, "i"), L.pmax(x, "i"), L.pmin(x, "i"), L.all_gather(x, "i"),
            L.axis_index("i"), L.ppermute(x, "i", [(0, 1), (1, 0)]),
            L.psum_scatter(L.all_gather(x, "i"), "i"),
            L.all_to_all(L.all_gather(x, "i"), "i", 0, 0),
            process_allreduce_p.bind(x, kind="add"))


def test_the_op_table_applies_every_batching_rule():
    used: set = set()
    saved = {}
    for name, p in PRIMITIVES.items():
        if p.batch is not None:
            saved[name] = p.batch

            def recording(*args, _name=name, _rule=p.batch, **kw):
                used.add(_name)
                return _rule(*args, **kw)
            p.batch = recording
    try:
        for case in T.ROWS:
            args, _ = _inputs(case)
            avals = [ShapedArray(np.shape(a), np.asarray(a).dtype) for a in args]
            fn = vmap(lambda *a, case=case: case.fn(XL, xlapy.numpy, *a),
                      in_axes=case.in_axes, out_axes=case.out_axes)
            make_graph(fn, avals)
        make_graph(vmap(_collectives, axis_name="i"), [ShapedArray((3, 2), np.float32)])
    finally:
        for name, rule in saved.items():
            PRIMITIVES[name].batch = rule
    unused = sorted(set(saved) - used)
    assert not unused, f"batching rules no row of vmap_table.py applies: {unused}"


def _inputs(case):
    import test_vmap_ops
    return test_vmap_ops.make_inputs(case)
