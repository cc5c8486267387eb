"""Shape rules of the collectives (XLA's InferAllReduceShape, InferAllGatherShape,
InferReduceScatterShape, InferAllToAllShape, InferCollectivePermuteShape and the
HloVerifier's checks of replica groups).

all-reduce(x_0..x_N-1), to_apply:       to_apply: (T, T) -> T per operand type; result x
                                        (a tuple for N > 1)
all-gather(x_0..), dimensions={d}:      declared; equal to x but dimension d is k times
                                        larger (k: the group size; any multiple when the
                                        groups are {} and the replica count is not known)
reduce-scatter(x_0..), dimensions={d}:  declared; x's dimension d is k times the result's
all-to-all(x), dimensions={d}:          x's dimension d divisible by k; result x
all-to-all(x_0..x_k-1):                 (no dimensions) a tuple of the operands' shapes
collective-permute(x), source_target_pairs={{s,t},...}: result x; sources and targets unique
replica-id(), partition-id():           u32[]

replica_groups: groups of the same size (all but all-reduce), ids non-negative and each
in at most one group; use_global_device_ids=true needs a channel_id (XLA's rule).
"""

from __future__ import annotations

from xlapy.hlo.attributes import ReplicaGroups
from xlapy.hlo.shape_context import (OpContext, check_dims_in_range, fmt, scalar_of,
                                     shape_rule, verify_reducer)
from xlapy.hlo.shapes import U32, Shape


def group_size(op: OpContext, same_size: bool = True) -> int | None:
    """The replica groups' common size (None for `{}`: every replica, count unknown)."""
    rg = op.typed("replica_groups", ReplicaGroups, "replica groups like {{0,1},{2,3}}",
                  ReplicaGroups(()))
    if op.bool("use_global_device_ids") and not op.has("channel_id"):
        raise op.fail("use_global_device_ids=true needs a channel_id")
    if op.has("channel_id") and op.int("channel_id") <= 0:
        raise op.fail(f"channel_id must be positive, got {op.int('channel_id')}")
    seen: set[int] = set()
    for g in rg.groups:
        if not g:
            raise op.fail(f"replica_groups={rg} has an empty group")
        for i in g:
            if i < 0 or i in seen:
                raise op.fail(f"replica_groups={rg}: id {i} is "
                              + ("negative" if i < 0 else "in more than one group"))
            seen.add(i)
    sizes = {len(g) for g in rg.groups}
    if same_size and len(sizes) > 1:
        raise op.fail(f"replica_groups={rg}: the groups must have the same size")
    return len(rg.groups[0]) if rg.groups else None


def _one_dim(op: OpContext, rank: int) -> int:
    dims = op.ints("dimensions")
    if len(dims) != 1:
        raise op.fail(f"dimensions={{...}} must name one dimension, got {dims}")
    check_dims_in_range(op, dims, rank, "dimensions")
    return dims[0]


def _result(shapes: list[Shape]) -> Shape:
    return shapes[0] if len(shapes) == 1 else Shape.tuple(shapes)


def _declared_list(op: OpContext) -> list[Shape]:
    d = op.need_declared()
    shapes = list(d.tuple_shapes) if d.is_tuple else [d]
    if len(shapes) != op.n or (d.is_tuple and op.n == 1):
        raise op.fail(f"declared {fmt(d)} for {op.n} operand(s) {fmt(op.shapes)}: one "
                      "result per operand (a tuple when there are several)")
    return shapes


@shape_rule("all-reduce")
def all_reduce(op: OpContext) -> Shape:
    op.count_at_least(1, "the arrays to reduce")
    group_size(op, same_size=False)
    xs = op.arrays()
    for x in xs:
        verify_reducer(op, op.computation("to_apply"), "to_apply",
                       [scalar_of(x.element_type)], [x.element_type])
    return _result([x.without_layout() for x in xs])


def _scaled(op: OpContext, small: Shape, big: Shape, d: int, k: int | None,
            what: str) -> None:
    ok = (small.element_type == big.element_type and small.rank == big.rank
          and all(a == b for i, (a, b) in enumerate(zip(small.dims, big.dims)) if i != d))
    if ok and k is not None:
        ok = big.dims[d] == k * small.dims[d]
    elif ok:
        ok = (big.dims[d] % small.dims[d] == 0 if small.dims[d] else big.dims[d] == 0)
    if not ok:
        times = f"{k} times" if k is not None else "a multiple of"
        raise op.fail(f"{what}: {fmt(big)} must equal {fmt(small)} except dimension {d}, "
                      f"which is {times} its size")


@shape_rule("all-gather")
def all_gather(op: OpContext) -> Shape:
    op.count_at_least(1, "the arrays to gather")
    k = group_size(op)
    for x, r in zip(op.arrays(), _declared_list(op)):
        d = _one_dim(op, x.rank)
        _scaled(op, x, r, d, k, "the result")
    return op.need_declared().without_layout()


@shape_rule("reduce-scatter")
def reduce_scatter(op: OpContext) -> Shape:
    op.count_at_least(1, "the arrays to reduce")
    k = group_size(op)
    for x, r in zip(op.arrays(), _declared_list(op)):
        verify_reducer(op, op.computation("to_apply"), "to_apply",
                       [scalar_of(x.element_type)], [x.element_type])
        d = _one_dim(op, x.rank)
        _scaled(op, r, x, d, k, "the operand")
    return op.need_declared().without_layout()


@shape_rule("all-to-all")
def all_to_all(op: OpContext) -> Shape:
    op.count_at_least(1, "the arrays to exchange")
    k = group_size(op)
    xs = op.arrays()
    if op.has("dimensions"):
        if op.n != 1:
            raise op.fail(f"with dimensions= it takes one array, got {op.n}")
        d = _one_dim(op, xs[0].rank)
        if k is not None and xs[0].dims[d] % k:
            raise op.fail(f"dimension {d} of {fmt(xs[0])} is not divisible by the group "
                          f"size {k}")
        return xs[0].without_layout()
    if k is not None and op.n != k:
        raise op.fail(f"the tuple form takes one operand per group member ({k}), got {op.n}")
    if len({(x.element_type, x.dims) for x in xs}) > 1:
        raise op.fail(f"the operands must have one shape, got {fmt(xs)}")
    return Shape.tuple([x.without_layout() for x in xs])


@shape_rule("collective-permute")
def collective_permute(op: OpContext) -> Shape:
    x = op.array(0)
    pairs = op.typed("source_target_pairs", ReplicaGroups, "pairs like {{0,1},{1,0}}")
    if op.has("channel_id") and op.int("channel_id") <= 0:
        raise op.fail(f"channel_id must be positive, got {op.int('channel_id')}")
    sources, targets = set(), set()
    for p in pairs.groups:
        if len(p) != 2 or min(p) < 0:
            raise op.fail(f"source_target_pairs={pairs}: {set(p)} is not a pair of ids")
        for ids, i, what in ((sources, p[0], "source"), (targets, p[1], "target")):
            if i in ids:
                raise op.fail(f"source_target_pairs={pairs}: {what} {i} appears twice")
            ids.add(i)
    return x.without_layout()


@shape_rule("replica-id", "partition-id")
def replica_id(op: OpContext) -> Shape:
    return scalar_of(U32)
