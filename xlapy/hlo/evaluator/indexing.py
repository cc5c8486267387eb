"""Interpreter rules for indexing: dynamic-slice, dynamic-update-slice, gather, scatter.

Semantics (XLA's operation semantics):

  dynamic-slice(x, s_0..s_{R-1}), dynamic_slice_sizes=Z
      Start indices are scalars of any integer type (unsigned included); each is clamped to
      [0, dim - size] so the slice always lies inside x. dynamic-update-slice(x, u, s..)
      clamps the same way with the update's dims as sizes and writes u there.

  gather(operand, start_indices)
      Batch dims of the indices are all dims but index_vector_dim (which may equal the rank:
      an implicit trailing 1). For each batch position, the operand start is
      start[start_index_map[k]] = index_vector[k], start[operand_batching_dims[j]] = the batch
      coordinate along start_indices_batching_dims[j], else 0, clamped to
      [0, operand_dim - slice_size]. The slice of slice_sizes at that start, with
      collapsed_slice_dims and operand_batching_dims dropped, fills offset_dims of the output;
      the other output dims are the batch dims in order. Vectorized: one flat-index take.

  scatter(operands.., scatter_indices, updates..), to_apply=f
      Update dims not in update_window_dims are scatter dims (they run over the index batch
      positions, in order); window dims map in order to the operand dims not in
      inserted_window_dims / input_batching_dims. Starts are built as for gather but NOT
      clamped: a window that would leave the operand anywhere is skipped whole (XLA's
      behaviour, checked against jax). f gets (operand values.., update values..);
      duplicate targets are combined sequentially in update order (see combine_at).
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.hlo.evaluator.evaluator import eval_rule
from xlapy.hlo.evaluator.reduction import combine_at
from xlapy.errors import EvaluationError


def _scalar_index(v) -> int:
    return int(np.asarray(v).reshape(()))


def _indices_int64(a) -> np.ndarray:
    """Integer indices as int64; huge unsigned values saturate (they are clamped or skipped
    later anyway) instead of wrapping to negative."""
    a = np.asarray(a)
    if a.dtype.kind == "u" and a.dtype.itemsize == 8:
        a = np.minimum(a, np.uint64(1 << 62))
    elif a.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, got {a.dtype}")
    return a.astype(np.int64)


def _clamped_starts(instr, x: np.ndarray, starts, sizes) -> list[int]:
    if len(starts) != x.ndim or len(sizes) != x.ndim:
        raise EvaluationError(f"{instr.where()}{instr.opcode} on a rank-{x.ndim} operand needs "
                              f"{x.ndim} start indices and sizes: {instr}")
    out = []
    for s, n, z in zip(starts, x.shape, sizes):
        if z > n or z < 0:
            raise EvaluationError(f"{instr.where()}slice size {z} does not fit dimension of "
                                  f"size {n}: {instr}")
        out.append(min(max(_scalar_index(s), 0), n - z))
    return out


@eval_rule("dynamic-slice")
def _dynamic_slice(ev, instr, operands):
    x = np.asarray(operands[0])
    sizes = tuple(instr.attrs["dynamic_slice_sizes"])
    starts = _clamped_starts(instr, x, operands[1:], sizes)
    return np.array(x[tuple(slice(s, s + z) for s, z in zip(starts, sizes))])


@eval_rule("dynamic-update-slice")
def _dynamic_update_slice(ev, instr, operands):
    x, update = np.asarray(operands[0]), np.asarray(operands[1])
    if update.ndim != x.ndim:
        raise EvaluationError(f"{instr.where()}update rank {update.ndim} differs from operand "
                              f"rank {x.ndim}: {instr}")
    starts = _clamped_starts(instr, x, operands[2:], update.shape)
    out = np.array(x)
    out[tuple(slice(s, s + z) for s, z in zip(starts, update.shape))] = update
    return out


def _row_major_strides(dims) -> np.ndarray:
    strides = np.ones(len(dims), np.int64)
    for d in range(len(dims) - 2, -1, -1):
        strides[d] = strides[d + 1] * dims[d + 1]
    return strides


def _index_batches(instr, indices, index_vector_dim: int):
    """(index vectors as int64 [B, K], batch shape, batch coordinates [ndim, B]) and a map
    from a dim of start_indices to its position among the batch dims."""
    idx = _indices_int64(indices)
    if index_vector_dim == idx.ndim:
        idx = idx[..., None]
    elif 0 <= index_vector_dim < idx.ndim:
        idx = np.moveaxis(idx, index_vector_dim, -1)
    else:
        raise EvaluationError(f"{instr.where()}index_vector_dim {index_vector_dim} out of range "
                              f"for indices of rank {idx.ndim}: {instr}")
    batch_shape = idx.shape[:-1]
    b = math.prod(batch_shape)
    vectors = idx.reshape(b, idx.shape[-1])

    def batch_pos(dim: int) -> int:
        return dim if dim < index_vector_dim else dim - 1

    return vectors, batch_shape, batch_pos


def _full_starts(operand_rank, vectors, batch_shape, batch_pos, index_map, op_batch_dims,
                 idx_batch_dims) -> np.ndarray:
    starts = np.zeros((vectors.shape[0], operand_rank), np.int64)
    for k, d in enumerate(index_map):
        starts[:, d] = vectors[:, k]
    if op_batch_dims:
        coords = np.indices(batch_shape).reshape(len(batch_shape), -1)
        for od, sd in zip(op_batch_dims, idx_batch_dims):
            starts[:, od] = coords[batch_pos(sd)]
    return starts


def _window_offsets(sizes, strides) -> np.ndarray:
    """Flat offsets of every element of a window of `sizes` (row-major), shape `sizes`."""
    off = np.zeros(sizes, np.int64)
    for d, (z, s) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[d] = z
        off = off + (np.arange(z, dtype=np.int64) * s).reshape(shape)
    return off


@eval_rule("gather")
def _gather(ev, instr, operands):
    operand, indices = np.asarray(operands[0]), operands[1]
    a = instr.attrs
    offset_dims = tuple(a.get("offset_dims", ()))
    collapsed = tuple(a.get("collapsed_slice_dims", ()))
    op_batch = tuple(a.get("operand_batching_dims", ()))
    sizes = tuple(a["slice_sizes"])
    rank = operand.ndim
    if len(sizes) != rank:
        raise EvaluationError(f"{instr.where()}gather slice_sizes has {len(sizes)} entries for "
                              f"a rank-{rank} operand: {instr}")
    vectors, batch_shape, batch_pos = _index_batches(instr, indices, a["index_vector_dim"])
    starts = _full_starts(rank, vectors, batch_shape, batch_pos, a.get("start_index_map", ()),
                          op_batch, a.get("start_indices_batching_dims", ()))
    limit = np.maximum(np.asarray(operand.shape, np.int64) - np.asarray(sizes, np.int64), 0)
    starts = np.clip(starts, 0, limit)
    strides = _row_major_strides(operand.shape)
    flat = starts @ strides
    offsets = _window_offsets(sizes, strides)
    taken = operand.reshape(-1)[flat.reshape((-1,) + (1,) * rank) + offsets]
    kept = [d for d in range(rank) if d not in collapsed and d not in op_batch]
    taken = taken.reshape(batch_shape + tuple(sizes[d] for d in kept))
    nb = len(batch_shape)
    out_rank = nb + len(kept)
    if len(offset_dims) != len(kept):
        raise EvaluationError(f"{instr.where()}gather has {len(offset_dims)} offset_dims but "
                              f"{len(kept)} uncollapsed slice dims: {instr}")
    perm, b = [], 0
    for p in range(out_rank):
        if p in offset_dims:
            perm.append(nb + offset_dims.index(p))
        else:
            perm.append(b)
            b += 1
    return np.array(np.transpose(taken, perm), order="C")


@eval_rule("scatter")
def _scatter(ev, instr, operands):
    if len(operands) < 3 or len(operands) % 2 == 0:
        raise EvaluationError(f"{instr.where()}scatter needs N operands, the indices and N "
                              f"updates, got {len(operands)} operands: {instr}")
    n = (len(operands) - 1) // 2
    outs = [np.array(o) for o in operands[:n]]
    indices, updates = operands[n], [np.asarray(u) for u in operands[n + 1:]]
    a = instr.attrs
    window_dims = tuple(a.get("update_window_dims", ()))
    inserted = tuple(a.get("inserted_window_dims", ()))
    in_batch = tuple(a.get("input_batching_dims", ()))
    rank = outs[0].ndim
    vectors, batch_shape, batch_pos = _index_batches(instr, indices, a["index_vector_dim"])
    starts = _full_starts(rank, vectors, batch_shape, batch_pos,
                          a.get("scatter_dims_to_operand_dims", ()), in_batch,
                          a.get("scatter_indices_batching_dims", ()))
    u0 = updates[0]
    scatter_dims = [d for d in range(u0.ndim) if d not in window_dims]
    window_operand_dims = [d for d in range(rank) if d not in inserted and d not in in_batch]
    if len(window_operand_dims) != len(window_dims):
        raise EvaluationError(f"{instr.where()}scatter has {len(window_dims)} update window dims "
                              f"but {len(window_operand_dims)} operand window dims: {instr}")
    if tuple(u0.shape[d] for d in scatter_dims) != batch_shape:
        raise EvaluationError(f"{instr.where()}scatter update dims {list(u0.shape)} do not match "
                              f"the index batch dims {list(batch_shape)}: {instr}")
    sizes = [1] * rank
    for d, ud in zip(window_operand_dims, window_dims):
        sizes[d] = u0.shape[ud]
    dims = np.asarray(outs[0].shape, np.int64)
    valid = np.all((starts >= 0) & (starts <= dims - np.asarray(sizes, np.int64)), axis=1)
    strides = _row_major_strides(outs[0].shape)
    offsets = _window_offsets(sizes, strides).reshape(-1)
    flat_index = ((starts[valid] @ strides)[:, None] + offsets[None, :]).reshape(-1)
    perm = scatter_dims + list(window_dims)
    window_size = math.prod(u0.shape[d] for d in window_dims)
    values = [np.transpose(u, perm).reshape(valid.size, window_size)[valid].reshape(-1)
              for u in updates]
    combine_at(ev, a["to_apply"], [o.reshape(-1) for o in outs], flat_index, values)
    return tuple(outs) if instr.shape.is_tuple else outs[0]
