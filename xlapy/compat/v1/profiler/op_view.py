"""The op view: one row per op type, summing its graph nodes (those whose op types match
account_type_regexes), sorted by order_by. A row's "total" is the sum from that row to
the last accounted one, so the first row's total is the whole; the report shows each row's
count with (its total's share, its own share) of the whole.

Rows are shown from the first row matching start_name_regexes, up to max_depth rows (the
first row is depth 0), stopping at a row matching trim_name_regexes; a row is shown when
its totals reach the min_* options, it has at least min_occurrence graph nodes, and its
name passes show/hide_name_regexes. With account_displayed_op_only the totals are
recomputed over the shown rows.

As in TF, the returned MultiGraphNodeProto is a chain: the root's only child is the first
row, whose only child is the second row, and so on.
"""

from __future__ import annotations

from xlapy.compat.v1.profiler.display import (MultiNode, format_multi_legend,
                                              format_multi_node, sort_nodes)
from xlapy.compat.v1.profiler.options import ROOT, full_match, matches_any
from xlapy.compat.v1.profiler.protos import MultiGraphNodeProto


def _should_show(n: MultiNode, opts, depth: int) -> bool:
    t = n.t
    if (t["requested_bytes"] < opts.min_bytes or t["peak_bytes"] < opts.min_peak_bytes
            or t["residual_bytes"] < opts.min_residual_bytes
            or t["output_bytes"] < opts.min_output_bytes
            or t["exec_micros"] < opts.min_micros
            or t["accelerator_exec_micros"] < opts.min_accelerator_micros
            or t["cpu_exec_micros"] < opts.min_cpu_micros
            or t["parameters"] < opts.min_params or t["float_ops"] < opts.min_float_ops
            or len(n.picked) < opts.min_occurrence or depth > opts.max_depth):
        return False
    if opts.show_name_regexes != [".*"] and not matches_any(opts.show_name_regexes, n.name):
        return False
    return not matches_any(opts.hide_name_regexes, n.name)


def op_view(nodes: dict, opts):
    """(root MultiNode, shown rows, report text) of the op view of `nodes`."""
    by_type: dict = {}
    for node in nodes.values():
        by_type.setdefault(node.op, []).append(node)
    root = MultiNode(ROOT, [])
    rows = []
    for op_type in sorted(by_type):
        n = MultiNode(op_type, by_type[op_type])
        n.account = n.reinit(opts.step, opts.account_type_regexes, matches_any)
        n.reset_totals()
        n.add_self()
        rows.append(n)
    rows = sort_nodes(rows, opts.order_by, occurrence=lambda n: len(n.picked))

    accounted = [n for n in rows if n.account]
    for i in range(len(accounted) - 2, -1, -1):
        accounted[i].aggregate(accounted[i + 1])  # the totals run from each row to the last
    if accounted:
        root.aggregate(accounted[0])

    start = 0
    if opts.start_name_regexes and opts.start_name_regexes != [".*"]:
        start = next((i for i, n in enumerate(accounted)
                      if matches_any(opts.start_name_regexes, n.name)), len(accounted))
    shown = []
    for depth, n in enumerate(accounted[start:]):
        if any(full_match(r, n.name) for r in opts.trim_name_regexes) or depth > opts.max_depth:
            break
        n.show = _should_show(n, opts, depth)
        if n.show:
            shown.append(n)
    if opts.account_displayed_op_only:
        prev = None
        for n in reversed(shown):
            n.reset_totals()
            n.add_self()
            if prev is not None:
                n.aggregate(prev)
            prev = n
        root.reset_totals()
        if prev is not None:
            root.aggregate(prev)
    text = format_multi_legend(opts.select) + "".join(
        format_multi_node(n, root, opts.select) for n in shown)
    return root, shown, text


def to_proto(root: MultiNode, shown: list):
    proto = root.fill(MultiGraphNodeProto())
    p = proto
    for n in shown:
        p = n.fill(p.children.add())
    return proto
