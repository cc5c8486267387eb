"""The displayed nodes of the views and their text: a node's own statistics, its totals
(itself plus the accounted nodes below it), the sort orders, and the report lines, as TF's
profiler prints them:

    node name | # float_ops
    _TFProfRoot (--/2.36k flops)
      dense/MatMul (2.30k/2.30k flops)

(scope and graph views: "self/total", "--" for a node that is not accounted) and

    node name | # float_ops
    MatMul                        2.30k float_ops (100.00%, 97.46%)

(op view: the op type's count, then its share of the total counted from this row down and
its own share).
"""

from __future__ import annotations

from xlapy.compat.v1.profiler.options import SCOPE_PARENT
from xlapy.compat.v1.profiler.protos import GraphNodeProto, MultiGraphNodeProto
from xlapy.compat.v1.proto.graph_pb import TensorShapeProto

SELF_KEYS = ("run_count", "exec_micros", "accelerator_exec_micros", "cpu_exec_micros",
             "requested_bytes", "peak_bytes", "residual_bytes", "output_bytes", "parameters",
             "float_ops")
TOTAL_KEYS = ("definition_count",) + SELF_KEYS
_SORT_KEY = {"bytes": "requested_bytes", "peak_bytes": "peak_bytes",
             "residual_bytes": "residual_bytes", "output_bytes": "output_bytes",
             "micros": "exec_micros", "accelerator_micros": "accelerator_exec_micros",
             "cpu_micros": "cpu_exec_micros", "params": "parameters", "float_ops": "float_ops"}


def _scaled(n, suffixes) -> str:
    """n in steps of 1000 with the suffix of its step: the first as is, the others with two
    decimals (TF's tfprof formatting)."""
    for i, suffix in enumerate(suffixes):
        if n < 1000 ** (i + 1) or i == len(suffixes) - 1:
            return f"{n}{suffix}" if i == 0 else f"{n / 1000.0 ** i:.2f}{suffix}"


def format_number(n: int) -> str:
    return _scaled(n, ("", "k", "m", "b"))


def format_time(us: int) -> str:
    return _scaled(us, ("us", "ms", "sec"))


def format_memory(b: int) -> str:
    return _scaled(b, ("B", "KB", "MB"))


def _time_keys(select) -> list:
    """The time statistics a report's `select` shows: all three with "micros", else the
    accelerator's and the CPU's as asked."""
    if "micros" in select:
        return ["exec_micros", "accelerator_exec_micros", "cpu_exec_micros"]
    return ([k for sel, k in (("accelerator_micros", "accelerator_exec_micros"),
                              ("cpu_micros", "cpu_exec_micros")) if sel in select])


def _fill_shape(p: TensorShapeProto, dims) -> None:
    if not dims:
        p.unknown_rank = True
    for d in dims:
        p.dim.add(size=d)


def sort_nodes(nodes: list, order_by: str, occurrence=None) -> list:
    """Stable: by name ascending, or by the total of `order_by` descending."""
    if order_by == "name":
        return sorted(nodes, key=lambda n: n.name)
    if order_by == "occurrence" and occurrence is not None:
        return sorted(nodes, key=lambda n: -occurrence(n))
    key = _SORT_KEY.get(order_by)
    if key is None:
        return sorted(nodes, key=lambda n: n.name)
    return sorted(nodes, key=lambda n: -n.t[key])


class ShowNode:
    """A graph node (or a name scope) as the scope and graph views display it."""

    __slots__ = ("name", "node", "account", "children", "show_children", "s", "t",
                 "formatted")

    def __init__(self, name: str, node=None):
        self.name = name
        self.node = node               # the ProfNode, None for a scope or the root
        self.account = False
        self.children: list = []
        self.show_children: list = []
        self.s = dict.fromkeys(SELF_KEYS, 0)
        self.t = dict.fromkeys(TOTAL_KEYS, 0)
        self.formatted = ""

    @property
    def op_types(self) -> set:
        return self.node.op_types if self.node is not None else {SCOPE_PARENT}

    def reinit(self, step: int) -> None:
        if self.node is not None:
            self.s = self.node.stats(step)

    def reset_totals(self) -> None:
        self.formatted = ""
        self.t = dict.fromkeys(TOTAL_KEYS, 0)

    def add_self(self) -> None:
        self.t["definition_count"] += 1
        for k in SELF_KEYS:
            self.t[k] += self.s[k]

    def aggregate(self, other: "ShowNode") -> None:
        for k in TOTAL_KEYS:
            self.t[k] += other.t[k]

    def fill(self, p: GraphNodeProto) -> GraphNodeProto:
        """Sets p's fields (not its children) from this node."""
        p.name = self.name
        for k, v in self.s.items():
            if v:
                setattr(p, k, v)
        for k in TOTAL_KEYS:
            if self.t[k]:
                setattr(p, "total_" + k, self.t[k])
        node = self.node
        if node is not None:
            if node.canonical_device:
                p.devices.append(node.canonical_device)
            if node.shape:
                _fill_shape(p.shapes.add(), node.shape)
            for i, dims in node.input_shapes.items():
                _fill_shape(p.input_shapes[i], dims)
        return p


def _self_total(n, value: str, total: str) -> str:
    return f"{value}/{total}" if n.account else f"--/{total}"


def format_node(n: ShowNode, select) -> str:
    """One line of the scope or graph view (without the indentation)."""
    s, t = n.s, n.t
    info = []
    if "params" in select:
        if n.node is not None and n.node.shape:
            info.append("x".join(str(d) for d in n.node.shape))
        info.append(_self_total(n, format_number(s["parameters"]),
                                format_number(t["parameters"]) + " params"))
    if "float_ops" in select:
        info.append(_self_total(n, format_number(s["float_ops"]),
                                format_number(t["float_ops"]) + " flops"))
    for sel, key in (("bytes", "requested_bytes"), ("peak_bytes", "peak_bytes"),
                     ("residual_bytes", "residual_bytes"), ("output_bytes", "output_bytes")):
        if sel in select:
            info.append(_self_total(n, format_memory(s[key]), format_memory(t[key])))
    for key in _time_keys(select):
        info.append(_self_total(n, format_time(s[key]), format_time(t[key])))
    if "device" in select and n.node is not None and n.node.canonical_device:
        info.append(n.node.canonical_device)
    if "op_types" in select:
        info.append("|".join(sorted(n.op_types)))
    if "occurrence" in select:
        run = _self_total(n, format_number(s["run_count"]), format_number(t["run_count"]))
        definition = _self_total(n, "1", format_number(t["definition_count"]))
        info.append(f"{run}|{definition}")
    if "input_shapes" in select:
        shapes = n.node.input_shapes if n.node is not None else {}
        info.append("|".join(f"{i}:{'x'.join(map(str, d)) if d else 'unknown'}"
                             for i, d in sorted(shapes.items())))
    return f"{n.name} ({', '.join(info)})"


def format_legend(select) -> str:
    legends = []
    if "params" in select:
        legends.append("# parameters")
    if "float_ops" in select:
        legends.append("# float_ops")
    legends += _memory_and_time_legends(select)
    if "device" in select:
        legends.append("assigned devices")
    if "op_types" in select:
        legends.append("op types")
    if "occurrence" in select:
        legends.append("op count (run|defined)")
    if "input_shapes" in select:
        legends.append("input shapes")
    return f"node name | {' | '.join(legends)}\n"


def _memory_and_time_legends(select) -> list:
    legends = [name for sel, name in (("bytes", "requested bytes"), ("peak_bytes", "peak bytes"),
                                      ("residual_bytes", "residual bytes"),
                                      ("output_bytes", "output bytes")) if sel in select]
    if "micros" in select:
        legends += ["total execution time", "accelerator execution time",
                    "cpu execution time"]
    else:
        legends += ["accelerator execution time"] if "accelerator_micros" in select else []
        legends += ["cpu execution time"] if "cpu_micros" in select else []
    return legends


# ---- the op view's nodes -------------------------------------------------------------------

_MULTI_KEYS = SELF_KEYS[1:]  # no run or definition counts


class MultiNode:
    """An op type in the op view: the graph nodes of that type that are accounted."""

    __slots__ = ("name", "nodes", "picked", "step_stats", "account", "show", "s", "t",
                 "formatted")

    def __init__(self, name: str, nodes: list):
        self.name = name
        self.nodes = sorted(nodes, key=lambda n: n.name)
        self.picked: list = []
        self.step_stats: list = []     # (ProfNode, its stats) of the picked nodes
        self.account = False
        self.show = False
        self.s = dict.fromkeys(_MULTI_KEYS, 0)
        self.t = dict.fromkeys(_MULTI_KEYS, 0)
        self.formatted = ""

    def reinit(self, step: int, regexes, matches) -> bool:
        """Picks the nodes whose op types match `regexes`; whether any (or all match)."""
        every = regexes == [".*"]
        self.picked = [n for n in self.nodes
                       if every or any(matches(regexes, t) for t in n.op_types)]
        self.s = dict.fromkeys(_MULTI_KEYS, 0)
        self.step_stats = [(n, n.stats(step)) for n in self.picked]
        for _, st in self.step_stats:
            for k in _MULTI_KEYS:
                self.s[k] += st[k]
        return bool(self.picked) or every

    def reset_totals(self) -> None:
        self.formatted = ""
        self.t = dict.fromkeys(_MULTI_KEYS, 0)

    def add_self(self) -> None:
        for k in _MULTI_KEYS:
            self.t[k] += self.s[k]

    def aggregate(self, other: "MultiNode") -> None:
        for k in _MULTI_KEYS:
            self.t[k] += other.t[k]

    def runs(self) -> int:
        return sum(st["run_count"] for _, st in self.step_stats)

    def fill(self, p: MultiGraphNodeProto) -> MultiGraphNodeProto:
        """Sets p's fields (not its children) from this node."""
        p.name = self.name
        for k in _MULTI_KEYS:
            if self.s[k]:
                setattr(p, k, self.s[k])
            if self.t[k]:
                setattr(p, "total_" + k, self.t[k])
        for node, st in self.step_stats:
            g = ShowNode(node.name, node)
            g.s = st
            g.add_self()
            g.fill(p.graph_nodes.add())
        return p


def _pct_cell(text: str, total: int, own: int, root_total: int) -> str:
    accu = pct = 0.0
    if total > 0:
        accu = 100.0 * total / root_total
        pct = 100.0 * own / root_total
    return f"{text} ({accu:.2f}%, {pct:.2f}%)".rjust(30)


def format_multi_node(n: MultiNode, root: MultiNode, select) -> str:
    """One row of the op view."""
    s, t, rt = n.s, n.t, root.t
    attrs = []
    for sel, key in (("bytes", "requested_bytes"), ("peak_bytes", "peak_bytes"),
                     ("residual_bytes", "residual_bytes"), ("output_bytes", "output_bytes")):
        if sel in select:
            # the share is shown only where the op type itself holds bytes
            accu = t[key] if s[key] > 0 else 0
            attrs.append(_pct_cell(format_memory(s[key]), accu, s[key], rt[key]))
    for key in _time_keys(select):
        attrs.append(_pct_cell(format_time(s[key]), t[key], s[key], rt[key]))
    if "params" in select:
        attrs.append(_pct_cell(format_number(s["parameters"]) + " params", t["parameters"],
                               s["parameters"], rt["parameters"]))
    if "float_ops" in select:
        attrs.append(_pct_cell(format_number(s["float_ops"]) + " float_ops", t["float_ops"],
                               s["float_ops"], rt["float_ops"]))
    if "device" in select:
        attrs.append("|".join(sorted({x.canonical_device for x in n.picked
                                      if x.canonical_device})))
    if "op_types" in select:
        attrs.append("|".join(sorted(set().union(*[x.op_types for x in n.picked]))))
    if "occurrence" in select:
        attrs.append(f"{n.runs()}|{len(n.picked)}".rjust(10))
    line = f"{n.name:<25}{', '.join(attrs)}\n"
    if "input_shapes" in select:
        shapes = _format_input_shapes(n)
        if shapes:
            line = f"{line}\n{shapes}\n\n"
    return line


def _format_input_shapes(n: MultiNode) -> str:
    groups: dict = {}  # input shapes text -> [defined, runs, micros]
    for node, st in n.step_stats:
        text = ",\t".join(f"{i}:{'x'.join(map(str, d)) if d else 'unknown'}"
                          for i, d in sorted(node.input_shapes.items()))
        g = groups.setdefault(f"input_type: {text}", [0, 0, 0])
        g[0] += 1
        g[1] += st["run_count"]
        g[2] += st["exec_micros"]
    rows = sorted(groups.items(), key=lambda kv: -kv[1][1])
    return "\n".join(f"{k}\t(run*{r}|defined*{d})\texec_time: {format_time(us)}"
                     for k, (d, r, us) in rows)


def format_multi_legend(select) -> str:
    legends = _memory_and_time_legends(select)
    if "params" in select:
        legends.append("# parameters")
    if "float_ops" in select:
        legends.append("# float_ops")
    if "device" in select:
        legends.append("assigned devices")
    if "op_types" in select:
        legends.append("op types")
    if "occurrence" in select:
        legends.append("op occurrence (run|defined)")
    if "input_shapes" in select:
        legends.append("input shapes")
    return f"node name | {' | '.join(legends)}\n"
