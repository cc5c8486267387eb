"""The profile: the graph's nodes with the op log (FLOPs, extra op types) and the step
statistics of traced runs, and the views of it with their report (stdout, a file, a
Chrome-trace timeline or nothing, per the options' output).

Step statistics that name no graph node (a compiled XLA cluster, its compilation) become
nodes of their own, with their name as op type.
"""

from __future__ import annotations

import json
import sys

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.profiler import op_view, tree_views
from xlapy.compat.v1.profiler.graph_node import ProfNode
from xlapy.compat.v1.profiler.options import COMMANDS, ROOT, Options, query_doc
from xlapy.compat.v1.profiler.protos import GraphNodeProto, MultiGraphNodeProto

_BANNER_OPTIONS = "\n=========================Options=============================\n"
_BANNER_REPORT = "\n==================Model Analysis Report======================\n"
_BANNER_END = "\n======================End of Report==========================\n"


def has_step_stats(run_meta) -> bool:
    stats = getattr(run_meta, "step_stats", None)
    return bool(getattr(stats, "dev_stats", None))


class ProfileStats:
    def __init__(self, graph=None, run_meta=None, op_log=None):
        self.nodes: dict = {}
        self.steps: set = set()
        self.covered: set = set()
        if graph is not None:
            self.add_graph(graph)
        if run_meta is not None and has_step_stats(run_meta):
            self.add_run_meta(0, run_meta)
        self.add_op_log(op_log)

    # ---- building ----------------------------------------------------------------------------
    def add_graph(self, graph) -> None:
        for op in graph.get_operations():
            if op.name not in self.nodes:
                self.nodes[op.name] = ProfNode(op.name, op.type, op)

    def add_op_log(self, op_log) -> None:
        if op_log is None:
            return
        for entry in op_log.log_entries:
            node = self.nodes.get(entry.name)
            if node is None:
                continue
            node.op_types.update(entry.types)
            if entry.float_ops:
                node.static_float_ops = int(entry.float_ops)

    def add_run_meta(self, step: int, run_meta) -> None:
        self.steps.add(step)
        for dev in run_meta.step_stats.dev_stats:
            for ns in dev.node_stats:
                name = ns.node_name.split(":")[0]
                node = self.nodes.get(name)
                if node is None:
                    if name in ("RecvTensor", "_SOURCE") or "MEMCPY" in name:
                        continue
                    node = self.nodes[name] = ProfNode(name, name)
                else:
                    self.covered.add(name)
                node.add_step_stat(step, dev.device, ns)

    def run_coverage(self) -> float:
        return len(self.covered) / (len(self.nodes) + 1e-10)

    # ---- views -------------------------------------------------------------------------------
    def show(self, cmd: str, opts: Options):
        """The view `cmd` ('scope', 'graph', 'op' or 'code') with its report."""
        if cmd not in COMMANDS:
            raise InvalidArgumentError(f"unknown cmd: {cmd!r}; one of: scope, graph, op, code")
        stdout = opts.output_type == "stdout"
        if stdout:
            sys.stdout.write(_BANNER_OPTIONS + opts.to_string() + _BANNER_REPORT)
        proto = self._show(cmd, opts)
        if stdout:
            sys.stdout.write(_BANNER_END)
            sys.stdout.flush()
        return proto

    def _show(self, cmd: str, opts: Options):
        multi = cmd in ("op", "code")
        empty = MultiGraphNodeProto() if multi else GraphNodeProto()
        if opts.step >= 0 and opts.step not in self.steps:
            sys.stderr.write(f"Options -step={opts.step} not found.\nAvailable steps: "
                             f"{' '.join(str(s) for s in sorted(self.steps))}\n")
            return empty
        if cmd == "code":
            sys.stderr.write("No code trace information: xlapy does not record the Python "
                             "code that creates an op, so the 'code' view is empty.\n")
            return empty
        if opts.output_type == "pprof":
            sys.stderr.write("Only 'code' view supports pprof output now.\n")
            return empty
        if cmd == "op":
            if opts.output_type == "timeline":
                sys.stderr.write("op view doesn't support timeline yet. Consider graph/scope "
                                 "view.\n")
                return MultiGraphNodeProto(name=ROOT)
            root, shown, text = op_view.op_view(self.nodes, opts)
            proto = op_view.to_proto(root, shown)
        else:
            view = tree_views.scope_view if cmd == "scope" else tree_views.graph_view
            root, text = view(self.nodes, opts)
            proto = tree_views.to_proto(root)
            if opts.output_type == "timeline":
                self._write_timeline(root, opts)
                return proto
        report = query_doc(cmd, opts) + "Profile:\n" + text
        if opts.output_type == "stdout":
            sys.stdout.write(report)
        elif opts.output_type == "file":
            with open(opts.output_options["outfile"], "w") as f:
                f.write(report)
        return proto

    def _write_timeline(self, root, opts: Options) -> None:
        """A Chrome trace (chrome://tracing) of the shown nodes' executions in the step
        (opts.step, or the last step added)."""
        step = opts.step if opts.step >= 0 else max(self.steps, default=None)
        if step is None:
            sys.stderr.write("No step statistics: the timeline is empty (profile a "
                             "RunMetadata of a run with RunOptions(trace_level=FULL_TRACE)).\n")
        events, pids, bars = [], {}, []
        stack = list(root.show_children)
        while stack:
            n = stack.pop()
            stack.extend(n.show_children)
            ex = n.node.execs.get(step) if n.node is not None else None
            if ex is None:
                continue
            dev = n.node.canonical_device or "unknown device"
            for start, micros in ex.cpu_execs() + ex.accelerator_execs():
                bars.append((start, micros, dev, n))
        t0 = min((b[0] for b in bars), default=0)
        for start, micros, dev, n in sorted(bars, key=lambda b: b[0]):
            if dev not in pids:
                pids[dev] = len(pids)
                events.append({"name": "process_name", "ph": "M", "pid": pids[dev],
                               "args": {"name": dev}})
            events.append({"ph": "X", "cat": "Op", "name": n.node.op, "pid": pids[dev],
                           "tid": 0, "ts": start - t0, "dur": micros,
                           "args": {"name": n.name, "op": n.node.op}})
        with open(opts.output_options["outfile"], "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)
