"""Shape rules of dynamic slicing, gather and scatter (XLA's InferDynamicSliceShape,
InferDynamicUpdateSliceShape, InferGatherShape, InferScatterShape; the constraint numbers
(C1..) below are those of the StableHLO spec, which states XLA's checks precisely).

dynamic-slice(operand, i_0, ..., i_r-1), dynamic_slice_sizes={...}: one scalar start index
per dimension, all of one integer type; result dims are the slice sizes (0 <= size <= dim).
dynamic-update-slice(operand, update, i_0, ..., i_r-1): update has the operand's rank and
type and fits inside it; the result is the operand's shape.

gather(operand, start_indices): start_indices is read as a batch of index vectors along
index_vector_dim (== rank means an implicit trailing dimension of size 1). The result has
rank len(offset_dims) + (batch rank); positions listed in offset_dims take the slice sizes
of the operand dimensions that are neither collapsed_slice_dims nor operand_batching_dims
(in order), the other positions take the batch dimensions of start_indices (in order).

scatter(operands..., scatter_indices, updates...), to_apply: N operands of one shape, N
updates of one shape; updates have rank len(update_window_dims) + (batch rank) with window
dims at update_window_dims (each <= the matching operand dimension) and the index batch
dims elsewhere; to_apply is an N-ary reducer; result = operand shape (tuple for N > 1).
"""

from __future__ import annotations

from xlapy.hlo.shape_context import (OpContext, check_dims_in_range, check_sorted,
                                       check_unique, fmt, is_scalar, scalar_of, shape_rule,
                                       verify_reducer)
from xlapy.hlo.shapes import Shape


def _start_indices(op: OpContext, shapes: list[Shape], rank: int, operand: Shape) -> None:
    if len(shapes) != rank:
        raise op.fail(f"needs one scalar start index per dimension of {fmt(operand)} "
                      f"({rank}), got {len(shapes)}: {fmt(shapes)}")
    for i, s in enumerate(shapes):
        if not is_scalar(s) or not s.element_type.is_integer:
            raise op.fail(f"start index {i} must be an integer scalar, got {fmt(s)}")
        if s.element_type != shapes[0].element_type:
            raise op.fail(f"start indices must all have the same type, got {fmt(shapes)}")


@shape_rule("dynamic-slice")
def dynamic_slice(op: OpContext) -> Shape:
    op.count_at_least(1, "the operand")
    s = op.array(0)
    _start_indices(op, op.shapes[1:], s.rank, s)
    sizes = op.ints("dynamic_slice_sizes")
    if len(sizes) != s.rank:
        raise op.fail(f"dynamic_slice_sizes={_b(sizes)} needs one size per dimension of "
                      f"{fmt(s)}")
    for i, n in enumerate(sizes):
        if not 0 <= n <= s.dims[i]:
            raise op.fail(f"dynamic_slice_sizes={_b(sizes)}: size {n} of dimension {i} is not "
                          f"within [0, {s.dims[i]}] for {fmt(s)}")
    return Shape.array(s.element_type, sizes)


@shape_rule("dynamic-update-slice")
def dynamic_update_slice(op: OpContext) -> Shape:
    op.count_at_least(2, "the operand and the update")
    s, u = op.array(0), op.array(1, "the update")
    _start_indices(op, op.shapes[2:], s.rank, s)
    if u.rank != s.rank:
        raise op.fail(f"the update {fmt(u)} must have the rank of the operand {fmt(s)}")
    if u.element_type != s.element_type:
        raise op.fail(f"the update {fmt(u)} and the operand {fmt(s)} have different element "
                      "types")
    for i in range(s.rank):
        if u.dims[i] > s.dims[i]:
            raise op.fail(f"the update {fmt(u)} does not fit in the operand {fmt(s)} "
                          f"(dimension {i})")
    return s.without_layout()


def _expanded_indices(op: OpContext, indices: Shape, index_vector_dim: int) -> list[int]:
    if not indices.element_type.is_integer:
        raise op.fail(f"the indices must be integers, got {fmt(indices)}")
    if not 0 <= index_vector_dim <= indices.rank:
        raise op.fail(f"index_vector_dim={index_vector_dim} must be within [0, "
                      f"{indices.rank}] for indices {fmt(indices)}")
    dims = list(indices.dims)
    if index_vector_dim == len(dims):
        dims.append(1)
    return dims


def _batching(op: OpContext, operand: Shape, indices: Shape, index_vector_dim: int,
              operand_dims: tuple, index_dims: tuple, names: tuple[str, str]) -> None:
    check_dims_in_range(op, operand_dims, operand.rank, names[0])
    check_sorted(op, operand_dims, names[0])
    check_unique(op, index_dims, names[1])
    check_dims_in_range(op, index_dims, indices.rank, names[1])
    if index_vector_dim in index_dims:
        raise op.fail(f"{names[1]} {index_dims} must not contain index_vector_dim="
                      f"{index_vector_dim}")
    if len(operand_dims) != len(index_dims):
        raise op.fail(f"{names[0]} {operand_dims} and {names[1]} {index_dims} must have the "
                      "same length")
    for a, b in zip(operand_dims, index_dims):
        if operand.dims[a] != indices.dims[b]:
            raise op.fail(f"batching dimension {a} of the operand {fmt(operand)} and dimension "
                          f"{b} of the indices {fmt(indices)} have different sizes")


def _index_map(op: OpContext, index_map: tuple, expanded: list[int], ivd: int,
               operand: Shape, batching: tuple, name: str) -> None:
    if len(index_map) != expanded[ivd]:
        raise op.fail(f"{name} {index_map} has {len(index_map)} entries but the index vectors "
                      f"have {expanded[ivd]} elements (dimension {ivd} of the indices)")
    check_dims_in_range(op, index_map, operand.rank, name)
    check_unique(op, index_map + batching, f"{name} with the batching dims")


def _dimension_numbers(op: OpContext, operand: Shape, indices: Shape, names: tuple,
                       window_rank: int | None) -> tuple:
    """Read and check the dimension numbers gather and scatter share, named `names` =
    (window dims, dropped dims, index map, operand batching, indices batching); the window
    dims index a shape of rank window_rank (None: gather's output, window dims + batch
    dims). Returns (window dims, dropped dims,
    index map, index_vector_dim, operand batching dims, batch dims of the indices)."""
    window_name, dropped_name, map_name, obatch_name, ibatch_name = names
    window = op.ints(window_name)
    dropped = op.ints(dropped_name, ())
    index_map = op.ints(map_name)
    ivd = op.int("index_vector_dim")
    obatch = op.ints(obatch_name, ())
    ibatch = op.ints(ibatch_name, ())
    expanded = _expanded_indices(op, indices, ivd)
    batch_dims = [d for i, d in enumerate(expanded) if i != ivd]
    check_sorted(op, window, window_name)
    check_unique(op, window, window_name)
    if window_rank is None:
        window_rank = len(window) + len(batch_dims)
    check_dims_in_range(op, window, window_rank, window_name)
    check_unique(op, dropped + obatch, f"{dropped_name} with {obatch_name}")
    check_sorted(op, dropped, dropped_name)
    check_dims_in_range(op, dropped, operand.rank, dropped_name)
    _batching(op, operand, indices, ivd, obatch, ibatch, (obatch_name, ibatch_name))
    _index_map(op, index_map, expanded, ivd, operand, obatch, map_name)
    return window, dropped, index_map, ivd, obatch, batch_dims


@shape_rule("gather")
def gather(op: OpContext) -> Shape:
    operand, indices = op.array(0), op.array(1, "the start indices")
    offset_dims, collapsed, _, _, obatch, batch_dims = _dimension_numbers(
        op, operand, indices, ("offset_dims", "collapsed_slice_dims", "start_index_map",
                               "operand_batching_dims", "start_indices_batching_dims"),
        None)
    slice_sizes = op.ints("slice_sizes")
    out_rank = len(offset_dims) + len(batch_dims)
    if len(slice_sizes) != operand.rank:
        raise op.fail(f"slice_sizes {slice_sizes} needs one size per dimension of the operand "
                      f"{fmt(operand)}")
    if operand.rank != len(offset_dims) + len(collapsed) + len(obatch):
        raise op.fail(f"the operand rank {operand.rank} must equal len(offset_dims) + "
                      f"len(collapsed_slice_dims) + len(operand_batching_dims) = "
                      f"{len(offset_dims)} + {len(collapsed)} + {len(obatch)}")
    for i, n in enumerate(slice_sizes):
        if not 0 <= n <= operand.dims[i]:
            raise op.fail(f"slice size {n} of dimension {i} is not within [0, "
                          f"{operand.dims[i]}] for the operand {fmt(operand)}")
    for d in collapsed + obatch:
        if slice_sizes[d] > 1:
            raise op.fail(f"dimension {d} is collapsed or batching, so its slice size must be "
                          f"0 or 1, got {slice_sizes[d]}")
    window = iter(n for i, n in enumerate(slice_sizes) if i not in collapsed and i not in obatch)
    batch = iter(batch_dims)
    out = [next(window) if i in offset_dims else next(batch) for i in range(out_rank)]
    return Shape.array(operand.element_type, out)


@shape_rule("scatter")
def scatter(op: OpContext) -> Shape:
    if op.n < 3 or op.n % 2 == 0:
        raise op.fail(f"expects N operands, the indices and N updates (an odd count >= 3), "
                      f"got {op.n} operands")
    n = (op.n - 1) // 2
    operands = [op.array(i) for i in range(n)]
    indices = op.array(n, "the scatter indices")
    updates = [op.array(n + 1 + i, f"update {i}") for i in range(n)]
    operand = operands[0]
    for i, (o, u) in enumerate(zip(operands, updates)):
        if o.dims != operand.dims:
            raise op.fail(f"all operands must have the same dimensions: {fmt(operands)}")
        if u.dims != updates[0].dims:
            raise op.fail(f"all updates must have the same dimensions: {fmt(updates)}")
        if u.element_type != o.element_type:
            raise op.fail(f"update {i} {fmt(u)} and operand {i} {fmt(o)} have different element "
                          "types")
    update = updates[0]
    uwd, inserted, _, _, obatch, batch_dims = _dimension_numbers(
        op, operand, indices, ("update_window_dims", "inserted_window_dims",
                               "scatter_dims_to_operand_dims", "input_batching_dims",
                               "scatter_indices_batching_dims"),
        update.rank)
    if operand.rank != len(uwd) + len(inserted) + len(obatch):
        raise op.fail(f"the operand rank {operand.rank} must equal len(update_window_dims) + "
                      f"len(inserted_window_dims) + len(input_batching_dims) = "
                      f"{len(uwd)} + {len(inserted)} + {len(obatch)}")
    if update.rank != len(uwd) + len(batch_dims):
        raise op.fail(f"the updates {fmt(update)} must have rank {len(uwd) + len(batch_dims)} "
                      f"(len(update_window_dims) + the index batch rank)")
    window_operand_dims = [i for i in range(operand.rank) if i not in inserted and i not in obatch]
    batch = iter(batch_dims)
    for k in range(update.rank):
        if k in uwd:
            od = window_operand_dims[uwd.index(k)]
            if update.dims[k] > operand.dims[od]:
                raise op.fail(f"window dimension {k} of the updates {fmt(update)} is larger than "
                              f"dimension {od} of the operand {fmt(operand)}")
        else:
            b = next(batch)
            if update.dims[k] != b:
                raise op.fail(f"scatter dimension {k} of the updates {fmt(update)} must equal "
                              f"the matching batch dimension of the indices {fmt(indices)} "
                              f"({b})")
    comp = op.computation("to_apply")
    verify_reducer(op, comp, "to_apply", [scalar_of(o.element_type) for o in operands],
                   [u.element_type for u in updates])
    if n == 1:
        return operand.without_layout()
    return Shape.tuple([o.without_layout() for o in operands])


def _b(dims) -> str:
    return "{" + ",".join(map(str, dims)) + "}"
