"""The execution plan of a Session: the steps of one (fetches, feeds) signature, run in
order on a list of slots, with Chrome-trace step statistics when RunOptions ask for them;
and the node labels ("name = Type(inputs)") errors and timelines show."""

from __future__ import annotations

import threading
import time

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, OpError
from xlapy.compat.v1.protos import NodeExecStats


class Plan:
    """The steps of one (fetches, feeds) signature, ready to run."""

    def __init__(self):
        self.steps: list = []
        self.meta: dict = {}           # step -> (node name, timeline label, device, cluster)
        self.template: list = []       # initial slot values (constants)
        self.feeds: list = []          # (tensor, slot, np dtype, static dims)
        self.fetch: list = []          # per fetch element: slot, ("var", name) or None
        self.clustering = None
        self.clusters: list = []       # CompiledCluster
        self.summary = ""
        self.compiled_only = False     # every step is a compiled cluster

    def execute(self, vals: list, stats=None) -> None:
        step = None
        try:
            if stats is None and self.compiled_only:
                for step in self.steps:  # native code: no NumPy warnings to silence
                    step(vals)
                return
            with np.errstate(all="ignore"):  # TF's kernels do not warn about inf/nan
                if stats is None:
                    for step in self.steps:
                        step(vals)
                else:
                    self._execute_traced(vals, stats)
        except OpError:
            raise
        except Exception as e:
            step = getattr(e, "_xlapy_step", step)
            name, label, _, _ = self.meta.get(step, ("?", "?", "", None))
            raise InvalidArgumentError(f"{type(e).__name__}: {e}\n\t [[{label}]]") from e

    def _execute_traced(self, vals, stats) -> None:
        tid = threading.get_ident() % 100000
        for step in self.steps:
            name, label, device, cc = self.meta[step]
            if cc is not None:
                cc.last_compile = None  # set again if this very step compiles
            t0 = time.time()
            p0 = time.perf_counter()
            try:
                step(vals)
            except Exception as e:
                e._xlapy_step = step
                raise
            p1 = time.perf_counter()
            if cc is not None and cc.last_compile is not None:
                c0, c1 = cc.last_compile
                cc.last_compile = None
                start = t0 + (c0 - p0)
                _record(stats, device, f"{name}/_XlaCompile", f"{name} = _XlaCompile()", start,
                        c1 - c0, tid)
                t0, p0 = t0 + (c1 - p0), c1
            _record(stats, device, name, label, t0, p1 - p0, tid)


def _record(stats, device, name, label, start_s, dur_s, tid):
    us = max(int(round(dur_s * 1e6)), 1)
    stats.device(device).node_stats.append(NodeExecStats(
        node_name=name, all_start_micros=int(start_s * 1e6), op_start_rel_micros=0,
        op_end_rel_micros=us, all_end_rel_micros=us, timeline_label=label,
        scheduled_micros=int(start_s * 1e6), thread_id=tid))


def _label(op) -> str:
    ins = [t.name if t.value_index else t.op.name for t in op.inputs]
    ins += ["^" + c.name for c in op.control_inputs]
    return f"{op.name} = {op.type}({', '.join(ins)})"
