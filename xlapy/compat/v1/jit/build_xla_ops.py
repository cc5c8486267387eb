"""Build-XLA-ops: replace each encapsulated cluster by one _XlaLaunch node.

The execution plan is then a list of nodes in a topological order of the contracted graph:
an Operation (run by the executor with its NumPy kernel) or an XlaLaunch (compile the
cluster for the current input shapes if needed, then run it; see launch.py). The order is
Kahn's algorithm over the nodes, taking the node with the earliest op first, so a plan is
deterministic and close to the graph's creation order. mark_for_compilation guarantees
that the contracted graph is acyclic; a cycle here is an internal error.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from xlapy.compat.v1.errors import InternalError


@dataclass(eq=False)
class XlaLaunch:
    """The node that stands for a cluster in the plan (TF's _XlaCompile + _XlaRun)."""
    cluster: object

    @property
    def name(self) -> str:
        return self.cluster.name

    def label(self) -> str:
        ins = ", ".join(t.name for t in self.cluster.inputs)
        return f"{self.cluster.name} = _XlaLaunch({ins})"


def build_xla_ops(ops: list, preds: dict, clusters: list) -> list:
    """ops: the plan's ops in topological order; preds: op -> producer ops in `ops`;
    clusters: encapsulated clusters. Returns the plan's nodes in execution order."""
    node_of = {}
    for c in clusters:
        launch = XlaLaunch(c)
        for op in c.ops:
            node_of[op] = launch
    for op in ops:
        node_of.setdefault(op, op)
    first: dict = {}
    for op in ops:
        n = node_of[op]
        first[n] = min(first.get(n, op._id), op._id)
    succ = {n: set() for n in first}
    indeg = {n: 0 for n in first}
    for op in ops:
        n = node_of[op]
        for p in preds[op]:
            pn = node_of[p]
            if pn is not n and n not in succ[pn]:
                succ[pn].add(n)
                indeg[n] += 1
    tie = {n: i for i, n in enumerate(first)}
    heap = [(first[n], tie[n], n) for n in first if indeg[n] == 0]
    heapq.heapify(heap)
    out = []
    while heap:
        _, _, n = heapq.heappop(heap)
        out.append(n)
        for s in succ[n]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(heap, (first[s], tie[s], s))
    if len(out) != len(first):
        raise InternalError("the clustered graph has a cycle (a bug in mark_for_compilation)")
    return out
