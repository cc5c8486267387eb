"""Lowering rules of the StableHLO collectives (rows in ops.py), as JAX emits them inside a
pmap or shard_map body:

    "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1,
        type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,
        use_global_device_ids}> ({ ^bb0(%a: tensor<f32>, %b: tensor<f32>): ... })

replica_groups (a dense i64 matrix, one row per group; -1 pads short rows, which HLO does
not allow, so they are refused), channel_handle (its handle becomes channel_id) and
use_global_device_ids map to the HLO attributes of the same meaning; all_gather_dim,
scatter_dimension and all_to_all's split/concat dimensions to `dimensions`. StableHLO's
all_to_all may split and concatenate along different dimensions, which HLO's one-dimension
all-to-all cannot: it lowers to a reshape and transpose around one (the blocks on a leading
axis). replica_id / partition_id are u32 scalars, as in HLO.
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo.attributes import ReplicaGroups
from xlapy.hlo.shapes import Shape
from xlapy.hlo.stablehlo.attrs import UNIT, Dense, Struct
from xlapy.hlo.stablehlo.rule_attrs import int_


def _groups(cx, name: str, required: bool = False) -> ReplicaGroups:
    v = cx.attr(name)
    if v is None:
        if required:
            raise cx.error(f"missing attribute '{name}'")
        return ReplicaGroups(())
    if not isinstance(v, Dense) or v.array.ndim != 2 or not v.shape.element_type.is_integer:
        raise cx.error(f"attribute '{name}' must be a dense 2-d integer tensor such as "
                       f"dense<[[0, 1]]> : tensor<1x2xi64>, got {v}")
    rows = np.asarray(v.array, dtype=np.int64)
    if (rows < 0).any():
        raise cx.error(f"{name}: groups of different sizes (padded with -1) are not "
                       "supported")
    if rows.size == 0:
        return ReplicaGroups(())
    return ReplicaGroups(tuple(tuple(int(i) for i in r) for r in rows))


def _common(cx) -> dict:
    attrs: dict = {"replica_groups": _groups(cx, "replica_groups")}
    ch = cx.attr("channel_handle")
    if ch is not None:
        if not isinstance(ch, Struct) or "handle" not in ch.fields:
            raise cx.error(f"channel_handle must be #stablehlo.channel_handle<handle = N, "
                           f"type = T>, got {ch}")
        handle = ch.fields["handle"]
        attrs["channel_id"] = int(getattr(handle, "value", handle))
    if cx.attr("use_global_device_ids") in (UNIT, True):
        attrs["use_global_device_ids"] = True
    return attrs


def all_reduce(cx):
    xs = cx.operands()
    attrs = _common(cx)
    attrs["to_apply"] = cx.scalar_computation(0, "computation")
    return cx.unpack(cx.emit("all-reduce", xs, attrs), len(xs))


def reduce_scatter(cx):
    xs = cx.operands()
    attrs = _common(cx)
    attrs["dimensions"] = (int_(cx, "scatter_dimension"),)
    attrs["to_apply"] = cx.scalar_computation(0, "computation")
    return [cx.emit("reduce-scatter", xs, attrs, declared=cx.result_type(0))]


def all_gather(cx):
    xs = cx.operands()
    attrs = _common(cx)
    attrs["dimensions"] = (int_(cx, "all_gather_dim"),)
    if len(xs) == 1:
        return [cx.emit("all-gather", xs, attrs, declared=cx.result_type(0))]
    shape = Shape.tuple([cx.result_type(i) for i in range(len(xs))])
    return cx.unpack(cx.emit("all-gather", xs, attrs, declared=shape), len(xs))


def collective_permute(cx):
    attrs = _common(cx)
    attrs.pop("replica_groups")
    attrs.pop("use_global_device_ids", None)
    attrs["source_target_pairs"] = _groups(cx, "source_target_pairs", required=True)
    return [cx.emit("collective-permute", cx.operands(), attrs)]


def _move(cx, x, src: int, dst: int):
    rank = x.shape.rank
    perm = [d for d in range(rank) if d != src]
    perm.insert(dst, src)
    if perm == list(range(rank)):
        return x
    dims = tuple(x.shape.dims[p] for p in perm)
    return cx.emit("transpose", [x], {"dimensions": tuple(perm)},
                   declared=Shape.array(x.shape.element_type, dims))


def _reshape(cx, x, dims):
    return cx.emit("reshape", [x], declared=Shape.array(x.shape.element_type, tuple(dims)))


def all_to_all(cx):
    xs = cx.operands()
    if len(xs) != 1:
        raise cx.error(f"takes one operand here, got {len(xs)}")
    x = xs[0]
    attrs = _common(cx)
    attrs.pop("use_global_device_ids", None)
    s, c = int_(cx, "split_dimension"), int_(cx, "concat_dimension")
    k = int_(cx, "split_count")
    dims = list(x.shape.dims)
    rank = len(dims)
    if not (0 <= s < rank and 0 <= c < rank) or k < 1 or dims[s] % k:
        raise cx.error(f"split_dimension {s}, concat_dimension {c} and split_count {k} do "
                       f"not fit the operand's shape {tuple(dims)}")
    if s == c:
        attrs["dimensions"] = (s,)
        return [cx.emit("all-to-all", [x], attrs)]
    # blocks of the split dimension on a leading axis; member i's block lands at index i
    dims[s:s + 1] = [k, dims[s] // k]
    y = _move(cx, _reshape(cx, x, dims), s, 0)
    attrs["dimensions"] = (0,)
    y = cx.emit("all-to-all", [y], attrs)
    y = _move(cx, y, 0, c)             # [.., k, C, ..]: concatenated member-major along c
    out = list(y.shape.dims)
    out[c:c + 2] = [out[c] * out[c + 1]]
    return [_reshape(cx, y, out)]


def replica_id(cx):
    return [cx.emit("replica-id")]


def partition_id(cx):
    return [cx.emit("partition-id")]
