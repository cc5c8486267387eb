"""Mark-for-compilation: choose the ops to compile and merge them into clusters.

Input: the ops of one execution plan in topological order (the graph pruned to what the
fetches need), and which of them are requested for compilation:
  - every op when auto-jit is on (global_jit_level ON_1/ON_2 or --tf_xla_auto_jit),
  - ops carrying _XlaCompile=True (jit_scope),
  - ops placed on an XLA device (these must compile: an op without a lowering there raises).
_XlaCompile=False opts an op out even under auto-jit.

Candidates are requested ops with an XLA lowering (under auto-jit and jit_scope, not those
reading or making string tensors: a Const of strings or a Gather of class names stays in
the executor). Clustering contracts edges of the plan's
dependency graph (data and control edges; variable accesses are not edges, as in TF):

    for each candidate v in topological order:
        for each candidate producer u of v with the same cluster class:
            merge cluster(u) into cluster(v) unless some other path leads from
            cluster(u) to cluster(v)   (the merged node would lie on a cycle)

The contracted graph is kept explicitly (successor/predecessor sets of cluster nodes); the
"other path" test is a depth-first search from the successors of cluster(u) other than
cluster(v). Every merge keeps the contracted graph acyclic, so the clusters can run as
single steps in a topological order of it (TF's MarkForCompilationPass gets the same
guarantee from its GraphCycles structure). The cluster class keeps apart ops of different
device kinds (CPU, XLA_CPU) and different jit scopes (_XlaScope).

An op's compile-time-constant inputs (its const_inputs: shapes, sizes, loop counts) must
not be computed from run-time data inside its own cluster (XLA would see a traced value):
such an op and the producer of that input are kept in different clusters, so the value
enters the op's cluster as an input, a constant keying its compilation (TF's
must-be-constant analysis). Values computed only from constants and static shapes (Shape,
Size, Rank) fold while the cluster is traced and do not count.

Auto-jit clusters smaller than --tf_xla_min_cluster_size effective ops (Const, Identity and
NoOp do not count) are dissolved; clusters that contain a jit_scope or XLA-device op are
kept whatever their size. Every op left out gets a reason, reported in the cluster summary.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from xlapy.compat.v1.errors import UnimplementedError
from xlapy.compat.v1.framework import is_xla_device
from xlapy.compat.v1.op_registry import get_op_def, op_has_lowering

_FREE = {"Const", "Identity", "NoOp"}  # do not count towards the minimum cluster size


@dataclass
class Clustering:
    clusters: list = field(default_factory=list)   # list of lists of ops, each topo-ordered
    reasons: dict = field(default_factory=dict)    # op -> why it is not in a cluster
    requested: bool = False                         # was any op requested for compilation
    cycle_refusals: list = field(default_factory=list)  # (u, v) merges refused for a cycle

    def summary(self, names: list | None = None) -> str:
        names = names or [f"cluster_{i}" for i in range(len(self.clusters))]
        n_in = sum(len(c) for c in self.clusters)
        total = n_in + len(self.reasons)
        lines = [f"XLA clustering: {len(self.clusters)} cluster(s), {n_in} of {total} ops "
                 "compiled"]
        for name, ops in zip(names, self.clusters):
            hist = Counter(op.type for op in ops)
            kinds = ", ".join(f"{t} x{n}" if n > 1 else t for t, n in sorted(hist.items()))
            lines.append(f"  {name}: {len(ops)} ops ({kinds})")
        if self.reasons:
            lines.append("  not clustered:")
            for op, why in self.reasons.items():
                lines.append(f"    {op.name} ({op.type}): {why}")
        for u, v in self.cycle_refusals:
            lines.append(f"  kept {u.name} and {v.name} apart: merging them would create a "
                         "cycle through ops outside the cluster")
        return "\n".join(lines)


def _requested(op, auto_jit: bool):
    """(requested, must_compile, reason if not requested)."""
    xla_dev = is_xla_device(op.device)
    flag = op._attrs.get("_XlaCompile")
    if xla_dev:
        return True, True, None
    if flag is False:
        return False, False, "_XlaCompile=False on the op"
    if flag or auto_jit:
        return True, False, None
    return False, False, ("not marked for compilation (auto-jit is off and the op is neither "
                          "in a jit_scope nor on an XLA device)")


def _has_strings(op) -> bool:
    return any(t.dtype.np.kind == "O" for t in (*op.inputs, *op.outputs))


def _cluster_class(op):
    return ("XLA_CPU" if is_xla_device(op.device) else "CPU", op._attrs.get("_XlaScope"))


_STATIC_SOURCES = {"Const", "Shape", "Size", "Rank", "ShapeN"}


def _apart(ops: list, index: dict) -> dict:
    """index -> indices of the ops that must not share its cluster: the producers of its
    const inputs that compute them from run-time data, and the reverse."""
    static: set = set()
    for op in ops:
        d = get_op_def(op.type)
        if op.type in _STATIC_SOURCES or (
                not d.stateful and op.type != "Placeholder" and op.inputs and
                all(t.op in static for t in op.inputs)):
            static.add(op)
    apart: dict = {}
    for op in ops:
        consts = {i % max(len(op.inputs), 1) for i in get_op_def(op.type).const_inputs}
        for i in consts:
            if i >= len(op.inputs):
                continue
            src = op.inputs[i].op
            if src in static or src not in index or src is op:
                continue
            apart.setdefault(index[op], set()).add(index[src])
            apart.setdefault(index[src], set()).add(index[op])
    return apart


def mark_for_compilation(ops: list, preds: dict, auto_jit: bool, fed_ops: set,
                         min_size: int = 4, max_size: int = 1 << 30,
                         strict: bool = False, soft_placement: bool = False) -> Clustering:
    """ops: topologically ordered; preds: op -> list of producer ops in `ops` (data and
    control edges); fed_ops: ops whose outputs are (partly) fed; soft_placement
    (ConfigProto.allow_soft_placement): an op on an XLA device without a lowering runs in
    the executor instead of raising."""
    result = Clustering()
    cand: set = set()
    must: set = set()
    for op in ops:
        req, mandatory, why = _requested(op, auto_jit)
        result.requested |= req
        d = get_op_def(op.type)
        if not req:
            result.reasons[op] = why
        elif op in fed_ops:
            result.reasons[op] = "an output of the op is fed"
        elif not op_has_lowering(op) or _has_strings(op):
            why = ("a random op reading data (true classes): drawn in the executor"
                   if d.rng else f"no XLA lowering for op type {op.type}"
                   if d.lowering is None else
                   "string tensors (XLA has no string type)" if _has_strings(op) else
                   "an op it calls (in a loop body or cond branch) has no XLA lowering")
            if mandatory and not soft_placement:
                raise UnimplementedError(
                    f"No registered '{op.type}' OpKernel for XLA_CPU_JIT devices compatible "
                    f"with node {op.name} (placed on {op.device}): {why}. Place it on "
                    "/device:CPU:0, or set ConfigProto(allow_soft_placement=True).", op=op)
            if strict:
                raise UnimplementedError(
                    f"strict XLA clustering (--tf_xla_strict): op {op.name} ({op.type}) "
                    f"cannot be compiled: {why}", op=op)
            result.reasons[op] = why + (" (soft placement: runs on the CPU device)"
                                        if mandatory else "")
        else:
            cand.add(op)
            if mandatory:
                must.add(op)
    if not cand:
        return result

    # the contracted dependency graph over all ops of the plan
    index = {op: i for i, op in enumerate(ops)}
    n = len(ops)
    succ = [set() for _ in range(n)]
    pred = [set() for _ in range(n)]
    for op in ops:
        for p in preds.get(op, ()):
            if p in index:
                succ[index[p]].add(index[op])
                pred[index[op]].add(index[p])
    parent = list(range(n))
    members = {i: [i] for i in range(n)}
    apart = _apart(ops, index)     # cluster root -> ops its members must be kept apart from

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def other_path(a, b) -> bool:
        stack = [s for s in succ[a] if s != b]
        seen = set(stack)
        while stack:
            x = stack.pop()
            if x == b:
                return True
            for s in succ[x]:
                if s not in seen:
                    seen.add(s)
                    stack.append(s)
        return False

    def merge(a, b):  # b into a
        parent[b] = a
        members[a].extend(members.pop(b))
        for s in succ[b]:
            pred[s].discard(b)
            pred[s].add(a)
        for p in pred[b]:
            succ[p].discard(b)
            succ[p].add(a)
        if b in apart:
            apart.setdefault(a, set()).update(apart.pop(b))
        succ[a] |= succ[b]
        pred[a] |= pred[b]
        succ[a].discard(a)
        pred[a].discard(a)
        succ[b], pred[b] = set(), set()

    for op in ops:
        if op not in cand:
            continue
        for p in sorted(preds.get(op, ()), key=lambda o: index.get(o, -1)):
            if p not in cand or _cluster_class(p) != _cluster_class(op):
                continue
            cu, cv = find(index[p]), find(index[op])
            if cu == cv or len(members[cu]) + len(members[cv]) > max_size:
                continue
            if other_path(cu, cv):
                result.cycle_refusals.append((p, op))
                continue
            if any(m in apart.get(cv, ()) for m in members[cu]):
                continue   # a const input of one computed from data in the other
            merge(cv, cu)

    groups = {}
    for op in ops:
        if op in cand:
            groups.setdefault(find(index[op]), []).append(op)
    for root in sorted(groups, key=lambda r: min(index[o] for o in groups[r])):
        group = sorted(groups[root], key=lambda o: index[o])
        explicit = any(o in must or o._attrs.get("_XlaCompile") for o in group)
        effective = sum(1 for o in group if o.type not in _FREE)
        if not explicit and effective < min_size:
            for o in group:
                result.reasons[o] = (f"its cluster had {effective} effective op(s), fewer than "
                                     f"--tf_xla_min_cluster_size={min_size}")
            continue
        if effective == 0 and not any(o in must for o in group):
            for o in group:
                result.reasons[o] = "its cluster holds only constants, identities and no-ops"
            continue
        result.clusters.append(group)
    return result
