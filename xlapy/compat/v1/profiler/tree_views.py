"""The scope and graph views: trees of graph nodes.

scope: a node's children are the nodes of its name scope ("dense/MatMul" under "dense"); a
       scope that is no op is a node of its own (op type _TFScopeParent, no statistics).
graph: a node's children are its inputs (data and control), each node shown once; the
       top nodes are those that no other node consumes.

Both go through the same three passes:
  1. account: a node is accounted when one of its op types matches account_type_regexes;
     totals add up the accounted nodes below (scope: a node with accounted descendants
     stays as their parent; graph: an unaccounted node hands its accounted inputs up);
  2. start_name_regexes: the display starts at the first matching nodes of each branch;
  3. display: a node is shown when its totals reach the min_* options (min_params,
     min_float_ops, min_occurrence: its own counts), its depth is at most max_depth (the
     root is depth 1) and its name matches show_name_regexes and no hide_name_regexes;
     the children of a hidden node move up to the nearest shown ancestor; a node matching
     trim_name_regexes hides everything below it. With account_displayed_op_only the
     totals are recomputed from the shown nodes only. Siblings are sorted by order_by.
"""

from __future__ import annotations

import sys

from xlapy.compat.v1.profiler.display import ShowNode, format_legend, format_node, sort_nodes
from xlapy.compat.v1.profiler.options import ROOT, full_match, matches_any
from xlapy.compat.v1.profiler.protos import GraphNodeProto


class _TreeView:
    def __init__(self, opts):
        self.opts = opts

    # ---- shared rules ------------------------------------------------------------------------
    def reaccount(self, n: ShowNode) -> bool:
        n.reinit(self.opts.step)
        regexes = self.opts.account_type_regexes
        if regexes == [".*"]:
            return True
        return any(matches_any(regexes, t) for t in n.op_types)

    def should_show(self, n: ShowNode, depth: int) -> bool:
        if n.name == ROOT:
            return True
        o, s, t = self.opts, n.s, n.t
        if (t["requested_bytes"] < o.min_bytes or t["peak_bytes"] < o.min_peak_bytes
                or t["residual_bytes"] < o.min_residual_bytes
                or t["output_bytes"] < o.min_output_bytes or t["exec_micros"] < o.min_micros
                or t["accelerator_exec_micros"] < o.min_accelerator_micros
                or t["cpu_exec_micros"] < o.min_cpu_micros or s["parameters"] < o.min_params
                or s["float_ops"] < o.min_float_ops or s["run_count"] < o.min_occurrence
                or depth > o.max_depth):
            return False
        if o.show_name_regexes != [".*"] and not matches_any(o.show_name_regexes, n.name):
            return False
        return not matches_any(o.hide_name_regexes, n.name)

    def print_nodes(self, roots: list, depth: int, indent: int, visits) -> list:
        """Pass 3 (see the module doc): the shown nodes among `roots` and below."""
        o = self.opts
        shown = []
        for n in roots:
            if visits is not None:
                if n.name in visits:
                    continue
                visits.add(n.name)
            show = self.should_show(n, depth)
            below = []
            if not matches_any(o.trim_name_regexes, n.name) and depth <= o.max_depth:
                below = self.print_nodes(n.show_children, depth + 1,
                                         indent + 2 if show else indent, visits)
            if not show:
                shown += below
                continue
            n.show_children = []
            if o.account_displayed_op_only:
                n.reset_totals()
                n.add_self()
            for c in sort_nodes(below, o.order_by):
                n.show_children.append(c)
                if o.account_displayed_op_only:
                    n.aggregate(c)
            n.formatted = " " * indent + format_node(n, o.select) + "\n"
            shown.append(n)
        return shown

    def finish(self, root: ShowNode, roots: list, visits):
        """Passes 2 and 3 from the accounted top nodes: (root, report text)."""
        o = self.opts
        if o.start_name_regexes != [".*"]:
            roots = self.search_root(roots, set() if visits is not None else None)
        root.show_children = roots
        root = self.print_nodes([root], 1, 0, set() if visits is not None else None)[0]
        parts = [format_legend(o.select), root.formatted]
        stack = list(reversed(root.show_children))
        while stack:
            n = stack.pop()
            parts.append(n.formatted)
            stack.extend(reversed(n.show_children))
        return root, "".join(parts)

    def search_root(self, roots: list, visits) -> list:
        found = []
        for n in roots:
            if visits is not None:
                if n.name in visits:
                    continue
                visits.add(n.name)
            if any(full_match(r, n.name) for r in self.opts.start_name_regexes):
                found.append(n)
            else:
                found += self.search_root(n.show_children, visits)
        return found


def to_proto(root: ShowNode):
    """The GraphNodeProto tree of the shown nodes."""
    proto = root.fill(GraphNodeProto())
    stack = [(root, proto)]
    while stack:
        n, p = stack.pop()
        for c in n.show_children:
            stack.append((c, c.fill(p.children.add())))
    return proto


def scope_view(nodes: dict, opts):
    """(root ShowNode, report text) of the scope view of `nodes` ({name: ProfNode})."""
    view = _TreeView(opts)
    show = {name: ShowNode(name, node) for name, node in nodes.items()}
    for name in list(show):
        cut = name.rfind("/")
        while cut > 0:
            prefix = name[:cut]
            if prefix not in show:
                show[prefix] = ShowNode(prefix)
            cut = prefix.rfind("/")
    root = ShowNode(ROOT)
    for name in sorted(show):
        cut = name.rfind("/")
        parent = show.get(name[:cut]) if cut > 0 else None
        (parent or root).children.append(show[name])

    def account(children):
        accounted = []
        for n in children:
            n.reset_totals()
            below = account(n.children)
            n.account = view.reaccount(n)
            if n.account or below:
                n.show_children = below
                n.reset_totals()
                n.add_self()
                for c in below:
                    n.aggregate(c)
                accounted.append(n)
        return accounted

    roots = account(root.children)
    for n in roots:
        root.aggregate(n)
    return view.finish(root, roots, None)


def graph_view(nodes: dict, opts):
    """(root ShowNode, report text) of the graph view of `nodes` ({name: ProfNode})."""
    view = _TreeView(opts)
    show = {name: ShowNode(name, nodes[name]) for name in sorted(nodes)}
    consumed = set()
    for n in show.values():
        for inp in n.node.inputs:
            consumed.add(inp)
            c = show.get(inp)
            if c is not None:
                n.children.append(c)
    root = ShowNode(ROOT)
    root.children = [n for name, n in show.items() if name not in consumed]

    def account(children, visits):
        accounted = []
        for n in children:
            if n.name in visits:
                continue
            visits.add(n.name)
            below = account(n.children, visits)
            n.account = view.reaccount(n)
            if n.account:
                n.show_children = below
                n.reset_totals()
                n.add_self()
                for c in below:
                    n.aggregate(c)
                accounted.append(n)
            else:
                accounted += below  # an unaccounted node hands its inputs up
        return accounted

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * len(show) + 1000))  # long chains of inputs
    try:
        roots = account(root.children, set())
        for n in roots:
            root.aggregate(n)
        return view.finish(root, roots, set())
    finally:
        sys.setrecursionlimit(limit)
