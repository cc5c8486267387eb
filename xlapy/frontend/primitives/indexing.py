"""Indexing primitives: gather and scatter (set / add / mul / min / max), with their NumPy
impls, shape rules, HLO lowerings and VJPs.

Semantics are XLA's; as in jax.lax, the index vector of `indices` is its LAST dimension
(shape batch + (K,)), so the HLO index_vector_dim is always indices.ndim - 1.

  gather(x, indices, dn, slice_sizes)
      For each batch position, the operand start is start[start_index_map[k]] = index[k],
      start[operand_batching_dims[j]] = the batch coordinate along
      start_indices_batching_dims[j], else 0; every start is CLAMPED to
      [0, dim - slice_size], so a slice never leaves x. The slice (collapsed and batching
      dims dropped) fills offset_dims of the output; the other output dims are the batch
      dims in order.
  scatter*(x, indices, updates, dn)
      Same addressing, but a window that would leave x anywhere is DROPPED whole (not
      clamped). Duplicate targets combine with the op (add, mul, min, max); for plain
      scatter (set) the last update in row-major update order wins (XLA leaves the order
      unspecified; xlapy's impl, interpreter and cpu backend apply updates in order).
  dynamic_slice / dynamic_update_slice live in dynamic_slice.py (re-exported here).

The strict functions at the bottom (gather, scatter, scatter_add, ..., gather_along_axis,
scatter_add_along_axis, and the re-exported dynamic_slice, dynamic_update_slice, *_in_dim)
are the lax-layer API. gather takes mode="clip" (XLA) or "fill" (out-of-bounds slices read
fill_value); scatters take mode="drop" (XLA) or "clip" (indices are clamped first).

VJPs (one line of algebra each, at the rule):
  gather        ct_x = scatter_add(0, clamp(idx), ct)
  scatter_add   ct_x = ct;  ct_u = gather(ct) where the window was in bounds, else 0
  scatter       ct_x = ct with written positions zeroed;  ct_u = gather(ct) for the update
                that won its position (an id scatter tells which), else 0
  scatter_mul   ct_x = scatter_mul(ct, u);  ct_u = gather(ct * out) / u   (u != 0 assumed)
  scatter_min/max  the cotangent goes to whichever of x and the updates equal the result,
                split evenly among ties (as reduce_max and JAX do)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from xlapy.errors import ShapeError, XlapyError
from xlapy.frontend.core import ShapedArray, bind, primitive
from xlapy.frontend.primitives.basic import (add, and_, aval_of, broadcast_in_dim, convert, div,
                                             eq, full, ge, is_float, le, max_, min_, mul,
                                             select, zeros_like)
from xlapy.frontend.primitives.shapes import reduce_and, reshape
from xlapy.hlo.shapes import Shape, primitive_type


def _ints(xs) -> tuple:
    return tuple(int(x) for x in xs)


class _IntTuples:
    """Dimension-number fields are stored as tuples of Python ints, whatever was passed."""

    def __post_init__(self):
        for f in self.__dataclass_fields__:
            object.__setattr__(self, f, _ints(getattr(self, f)))


@dataclass(frozen=True)
class GatherDimensionNumbers(_IntTuples):
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


@dataclass(frozen=True)
class ScatterDimensionNumbers(_IntTuples):
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


def _gather_dn_of(sdn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    return GatherDimensionNumbers(sdn.update_window_dims, sdn.inserted_window_dims,
                                  sdn.scatter_dims_to_operand_dims, sdn.operand_batching_dims,
                                  sdn.scatter_indices_batching_dims)


def _scatter_dn_of(gdn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(gdn.offset_dims, gdn.collapsed_slice_dims,
                                   gdn.start_index_map, gdn.operand_batching_dims,
                                   gdn.start_indices_batching_dims)


def _window_sizes(x_shape, u_shape, dn: ScatterDimensionNumbers) -> tuple:
    """Per operand dim, the extent of one scatter window (1 for inserted/batching dims)."""
    sizes = [1] * len(x_shape)
    win = [d for d in range(len(x_shape))
           if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    for d, ud in zip(win, dn.update_window_dims):
        sizes[d] = u_shape[ud]
    return tuple(sizes)


# ---- shared NumPy addressing ------------------------------------------------------------------

def _np_starts(x_shape, indices, index_map, op_batch, idx_batch):
    """(starts int64 [B, rank], batch shape) of every index vector (not clamped)."""
    idx = np.asarray(indices)
    if idx.dtype.kind == "u" and idx.dtype.itemsize == 8:
        idx = np.minimum(idx, np.uint64(1 << 62))  # huge unsigned stays huge, not negative
    idx = idx.astype(np.int64)
    batch_shape = idx.shape[:-1]
    vec = idx.reshape(math.prod(batch_shape), idx.shape[-1])
    starts = np.zeros((vec.shape[0], len(x_shape)), np.int64)
    for k, d in enumerate(index_map):
        starts[:, d] = vec[:, k]
    if op_batch:
        coords = np.indices(batch_shape).reshape(len(batch_shape), -1)
        for od, sd in zip(op_batch, idx_batch):
            starts[:, od] = coords[sd]
    return starts, batch_shape


def _np_window_grid(starts, sizes) -> tuple:
    """Index arrays (one per operand dim), each of shape (B,) + sizes."""
    rank = len(sizes)
    grid = []
    for d in range(rank):
        s = [1] * (rank + 1)
        s[0] = starts.shape[0]
        r = [1] * (rank + 1)
        r[d + 1] = sizes[d]
        grid.append(starts[:, d].reshape(s) + np.arange(sizes[d], dtype=np.int64).reshape(r))
    return tuple(grid)


# ---- gather -----------------------------------------------------------------------------------

gather_p = primitive("gather")


@gather_p.def_impl
def _gather_impl(x, indices, dimension_numbers, slice_sizes):
    _gather_aval(aval_of(x), aval_of(indices), dimension_numbers, slice_sizes)  # eager checks
    x, dn = np.asarray(x), dimension_numbers
    starts, batch_shape = _np_starts(x.shape, indices, dn.start_index_map,
                                     dn.operand_batching_dims, dn.start_indices_batching_dims)
    starts = np.clip(starts, 0, np.asarray(x.shape, np.int64) - np.asarray(slice_sizes, np.int64))
    taken = x[_np_window_grid(starts, slice_sizes)]
    kept = [d for d in range(x.ndim)
            if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    taken = taken.reshape(batch_shape + tuple(slice_sizes[d] for d in kept))
    nb, perm, b = len(batch_shape), [], 0
    for p in range(nb + len(kept)):
        if p in dn.offset_dims:
            perm.append(nb + dn.offset_dims.index(p))
        else:
            perm.append(b)
            b += 1
    return np.array(np.transpose(taken, perm), order="C")  # (ascontiguousarray makes 0-d 1-d)


def _check_indices(name, idx: ShapedArray, k: int):
    if idx.dtype.kind not in "iu":
        raise ShapeError(f"{name}: indices must be integers, got {idx}")
    if idx.ndim < 1 or idx.shape[-1] != k:
        raise ShapeError(f"{name}: indices {idx} must have a last (index vector) dimension of "
                         f"size {k}, one entry per mapped operand dimension")


def _check_batching(name, x: ShapedArray, idx: ShapedArray, op_batch, idx_batch):
    if len(op_batch) != len(idx_batch):
        raise ShapeError(f"{name}: {len(op_batch)} operand batching dims but {len(idx_batch)} "
                         "index batching dims")
    for od, sd in zip(op_batch, idx_batch):
        if not (0 <= od < x.ndim and 0 <= sd < idx.ndim - 1) or x.shape[od] != idx.shape[sd]:
            raise ShapeError(f"{name}: batching dim {od} of {x} does not match dim {sd} of the "
                             f"indices {idx}")


@gather_p.def_abstract_eval
def _gather_aval(x, idx, dimension_numbers, slice_sizes):
    dn = dimension_numbers
    _check_indices("gather", idx, len(dn.start_index_map))
    _check_batching("gather", x, idx, dn.operand_batching_dims, dn.start_indices_batching_dims)
    if len(slice_sizes) != x.ndim or any(not 0 <= s <= n for s, n in zip(slice_sizes, x.shape)):
        raise ShapeError(f"gather: slice_sizes {list(slice_sizes)} do not fit the operand {x}")
    for d in dn.start_index_map:
        if not 0 <= d < x.ndim or d in dn.operand_batching_dims:
            raise ShapeError(f"gather: start_index_map {list(dn.start_index_map)} is invalid "
                             f"for {x}")
    for d in dn.collapsed_slice_dims + dn.operand_batching_dims:
        if not 0 <= d < x.ndim or slice_sizes[d] != 1:
            raise ShapeError(f"gather: collapsed/batching dim {d} of {x} needs slice size 1, "
                             f"slice_sizes={list(slice_sizes)}")
    kept = [d for d in range(x.ndim)
            if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    out_rank = idx.ndim - 1 + len(kept)
    if len(dn.offset_dims) != len(kept) or list(dn.offset_dims) != sorted(dn.offset_dims) or \
            any(not 0 <= d < out_rank for d in dn.offset_dims):
        raise ShapeError(f"gather: offset_dims {list(dn.offset_dims)} must be {len(kept)} sorted "
                         f"dims of the rank-{out_rank} output")
    batch = iter(idx.shape[:-1])
    offs = iter(slice_sizes[d] for d in kept)
    shape = [next(offs) if p in dn.offset_dims else next(batch) for p in range(out_rank)]
    return ShapedArray(shape, x.dtype)


@gather_p.def_lowering
def _gather_lower(ctx, x, idx, dimension_numbers, slice_sizes):
    dn = dimension_numbers
    return ctx.b.gather(x, idx, offset_dims=dn.offset_dims,
                        collapsed_slice_dims=dn.collapsed_slice_dims,
                        start_index_map=dn.start_index_map,
                        index_vector_dim=idx.shape.rank - 1, slice_sizes=slice_sizes,
                        operand_batching_dims=dn.operand_batching_dims,
                        start_indices_batching_dims=dn.start_indices_batching_dims)


@gather_p.def_vjp
def _gather_vjp(ct, x, indices, out, dimension_numbers, slice_sizes):
    # gather^T: scatter-add ct at the clamped starts the forward pass really read
    dn = dimension_numbers
    idx = _clamp(indices, aval_of(x).shape, slice_sizes, dn.start_index_map)
    return bind(scatter_add_p, zeros_like(x), idx, ct, dimension_numbers=_scatter_dn_of(dn)), None


# ---- index helpers written with primitives (used by VJPs and the modes) -----------------------

def _bound_vector(indices, x_shape, sizes, index_map):
    """hi[k] = x_shape[index_map[k]] - sizes[...] broadcast to the indices' shape."""
    a = aval_of(indices)
    hi = np.asarray([x_shape[d] - sizes[d] for d in index_map], dtype=a.dtype)
    return broadcast_in_dim(hi, a.shape, (a.ndim - 1,))


def _clamp(indices, x_shape, sizes, index_map):
    if aval_of(indices).shape[-1] == 0:
        return indices
    return min_(max_(indices, zeros_like(indices)),
                _bound_vector(indices, x_shape, sizes, index_map))


def _in_bounds(indices, x_shape, sizes, index_map):
    """bool[batch]: the whole window at these indices lies inside the operand."""
    a = aval_of(indices)
    if a.shape[-1] == 0:
        return full(a.shape[:-1], True, np.bool_)
    ok = and_(ge(indices, zeros_like(indices)),
              le(indices, _bound_vector(indices, x_shape, sizes, index_map)))
    return reduce_and(ok, (a.ndim - 1,))


def _batch_positions(shape_len, window_dims):
    return tuple(d for d in range(shape_len) if d not in window_dims)


def _mask_updates(mask, u_shape, window_dims):
    return broadcast_in_dim(mask, u_shape, _batch_positions(len(u_shape), window_dims))


def _gather_updates(src, indices, u_shape, dn: ScatterDimensionNumbers):
    """The operand-shaped `src` read at every update element's target (clamped)."""
    sizes = _window_sizes(aval_of(src).shape, u_shape, dn)
    return bind(gather_p, src, indices, dimension_numbers=_gather_dn_of(dn), slice_sizes=sizes)


# ---- scatter ----------------------------------------------------------------------------------

def _np_combine(kind, dtype):
    if kind == "set":
        return None
    if dtype == np.bool_:
        return {"add": np.logical_or, "mul": np.logical_and, "max": np.logical_or,
                "min": np.logical_and}[kind]
    return {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[kind]


def _scatter_impl(kind, check):
    def impl(x, indices, updates, dimension_numbers):
        check(aval_of(x), aval_of(indices), aval_of(updates), dimension_numbers)
        dn = dimension_numbers
        out = np.array(x)
        u = np.asarray(updates, dtype=out.dtype)
        starts, batch_shape = _np_starts(out.shape, indices, dn.scatter_dims_to_operand_dims,
                                         dn.operand_batching_dims,
                                         dn.scatter_indices_batching_dims)
        sizes = _window_sizes(out.shape, u.shape, dn)
        dims = np.asarray(out.shape, np.int64)
        valid = np.all((starts >= 0) & (starts <= dims - np.asarray(sizes, np.int64)), axis=1)
        scatter_dims = list(_batch_positions(u.ndim, dn.update_window_dims))
        vals = np.transpose(u, scatter_dims + list(dn.update_window_dims))
        vals = vals.reshape((starts.shape[0],) + tuple(sizes))[valid]
        grid = _np_window_grid(starts[valid], sizes)
        fn = _np_combine(kind, out.dtype)
        with np.errstate(all="ignore"):
            if fn is None:
                out[grid] = vals
            else:
                fn.at(out, grid, vals)
        return out
    return impl


def _scatter_aval(name):
    def aval(x, idx, u, dimension_numbers):
        dn = dimension_numbers
        _check_indices(name, idx, len(dn.scatter_dims_to_operand_dims))
        _check_batching(name, x, idx, dn.operand_batching_dims, dn.scatter_indices_batching_dims)
        if u.dtype != x.dtype:
            raise ShapeError(f"{name}: updates {u} must have the operand's dtype ({x})")
        wd = dn.update_window_dims
        if list(wd) != sorted(set(wd)) or any(not 0 <= d < u.ndim for d in wd):
            raise ShapeError(f"{name}: update_window_dims {list(wd)} must be sorted dims of "
                             f"the updates {u}")
        win = [d for d in range(x.ndim)
               if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
        if len(win) != len(wd):
            raise ShapeError(f"{name}: {len(wd)} update window dims but the operand {x} has "
                             f"{len(win)} window dims")
        for d, ud in zip(win, wd):
            if u.shape[ud] > x.shape[d]:
                raise ShapeError(f"{name}: update window dim {ud} of {u} is larger than dim "
                                 f"{d} of the operand {x}")
        for d in dn.scatter_dims_to_operand_dims:
            if not 0 <= d < x.ndim or d in dn.operand_batching_dims:
                raise ShapeError(f"{name}: scatter_dims_to_operand_dims "
                                 f"{list(dn.scatter_dims_to_operand_dims)} is invalid for {x}")
        bdims = tuple(u.shape[d] for d in _batch_positions(u.ndim, wd))
        if bdims != idx.shape[:-1]:
            raise ShapeError(f"{name}: the update scatter dims {list(bdims)} of {u} must equal "
                             f"the index batch dims {list(idx.shape[:-1])}")
        return x
    return aval


_HLO_COMBINE = {"add": "add", "mul": "multiply", "max": "maximum", "min": "minimum"}
_HLO_COMBINE_BOOL = {"add": "or", "mul": "and", "max": "or", "min": "and"}


def _scatter_lowering(kind):
    def lower(ctx, x, idx, u, dimension_numbers):
        b, dn = ctx.b, dimension_numbers
        t = x.shape.element_type
        if kind == "set":
            sub = b.subcomputation("scatter_set")
            st = Shape.array(t, ())
            sub.parameter(st, "old")
            comp = sub.build(sub.parameter(st, "new"))
        else:
            table = _HLO_COMBINE_BOOL if t == primitive_type(np.bool_) else _HLO_COMBINE
            comp = b.scalar_computation(table[kind], t)
        return b.scatter(x, idx, u, comp, update_window_dims=dn.update_window_dims,
                         inserted_window_dims=dn.inserted_window_dims,
                         scatter_dims_to_operand_dims=dn.scatter_dims_to_operand_dims,
                         index_vector_dim=idx.shape.rank - 1,
                         input_batching_dims=dn.operand_batching_dims,
                         scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
    return lower


def _scatter_prim(kind):
    p = primitive("scatter" if kind == "set" else f"scatter_{kind}")
    p.def_abstract_eval(_scatter_aval(p.name))
    p.def_impl(_scatter_impl(kind, p.abstract_eval))
    p.def_lowering(_scatter_lowering(kind))
    return p


scatter_p = _scatter_prim("set")
scatter_add_p = _scatter_prim("add")
scatter_mul_p = _scatter_prim("mul")
scatter_min_p = _scatter_prim("min")
scatter_max_p = _scatter_prim("max")


def _in_bounds_updates(x, indices, u, dn):
    sizes = _window_sizes(aval_of(x).shape, aval_of(u).shape, dn)
    mask = _in_bounds(indices, aval_of(x).shape, sizes, dn.scatter_dims_to_operand_dims)
    return _mask_updates(mask, aval_of(u).shape, dn.update_window_dims)


@scatter_add_p.def_vjp
def _scatter_add_vjp(ct, x, indices, u, out, dimension_numbers):
    # out = x + sum of u at targets: ct_x = ct, ct_u = ct at the target (0 if dropped)
    dn, ua = dimension_numbers, aval_of(u)
    g = _gather_updates(ct, indices, ua.shape, dn)
    return ct, None, select(_in_bounds_updates(x, indices, u, dn), g, zeros_like(g))


@scatter_p.def_vjp
def _scatter_vjp(ct, x, indices, u, out, dimension_numbers):
    # written positions do not depend on x; each position's winning update gets its ct
    dn, ua = dimension_numbers, aval_of(u)
    ct_x = bind(scatter_p, ct, indices, zeros_like(u), dimension_numbers=dn)
    it = np.int32 if ua.size < 2 ** 31 - 1 else np.int64
    ids = add(reshape(_iota(it, ua.size), ua.shape), full(ua.shape, 1, it))
    won = bind(scatter_p, full(aval_of(x).shape, 0, it), indices, ids, dimension_numbers=dn)
    mine = eq(_gather_updates(won, indices, ua.shape, dn), ids)
    g = _gather_updates(ct, indices, ua.shape, dn)
    return ct_x, None, select(mine, g, zeros_like(g))


def _iota(dtype, n):
    from xlapy.frontend.primitives.shapes import iota
    return iota(dtype, (n,), 0)


@scatter_mul_p.def_vjp
def _scatter_mul_vjp(ct, x, indices, u, out, dimension_numbers):
    # out = x * prod(u at target): ct_x = ct * prod(u), ct_u = ct * out / u  (u != 0 assumed)
    dn, ua = dimension_numbers, aval_of(u)
    ct_x = bind(scatter_mul_p, ct, indices, u, dimension_numbers=dn)
    g = div(_gather_updates(mul(ct, out), indices, ua.shape, dn), u)
    return ct_x, None, select(_in_bounds_updates(x, indices, u, dn), g, zeros_like(g))


def _scatter_extremum_vjp(ct, x, indices, u, out, dimension_numbers):
    # out = ext(x, u at target): ct to every contributor equal to out, split among ties
    dn, ua, dt = dimension_numbers, aval_of(u), aval_of(x).dtype
    hit_u = and_(eq(u, _gather_updates(out, indices, ua.shape, dn)),
                 _in_bounds_updates(x, indices, u, dn))
    hit_x = eq(x, out)
    n_u = bind(scatter_add_p, zeros_like(x), indices, convert(hit_u, dt), dimension_numbers=dn)
    count = max_(add(convert(hit_x, dt), n_u), full(aval_of(x).shape, 1, dt))
    share = div(ct, count)
    g = _gather_updates(share, indices, ua.shape, dn)
    return select(hit_x, share, zeros_like(share)), None, select(hit_u, g, zeros_like(g))


scatter_min_p.def_vjp(_scatter_extremum_vjp)
scatter_max_p.def_vjp(_scatter_extremum_vjp)

# ---- functions (the strict "lax" API) ------------------------------------------------------------

def _as_gdn(dn) -> GatherDimensionNumbers:
    if isinstance(dn, GatherDimensionNumbers):
        return dn
    if isinstance(dn, dict):
        return GatherDimensionNumbers(**dn)
    raise XlapyError(f"gather: dimension_numbers must be a GatherDimensionNumbers, got {dn!r}")


def _as_sdn(dn) -> ScatterDimensionNumbers:
    if isinstance(dn, ScatterDimensionNumbers):
        return dn
    if isinstance(dn, dict):
        return ScatterDimensionNumbers(**dn)
    raise XlapyError(f"scatter: dimension_numbers must be a ScatterDimensionNumbers, got {dn!r}")


def default_fill(dtype):
    """JAX's fill for out-of-bounds gathers: NaN, the minimum signed / maximum unsigned int,
    or True."""
    dt = np.dtype(dtype)
    if is_float(dt):
        return np.nan
    if dt == np.bool_:
        return True
    return np.iinfo(dt).min if dt.kind == "i" else np.iinfo(dt).max


def gather(x, indices, dimension_numbers, slice_sizes, *, mode="clip", fill_value=None):
    """XLA gather (index vector = last dim of indices). mode "clip": starts are clamped
    (XLA); "fill": slices that would leave x read fill_value (default: default_fill)."""
    dn, sizes = _as_gdn(dimension_numbers), _ints(slice_sizes)
    if mode not in ("clip", "fill"):
        raise XlapyError(f"gather: mode must be 'clip' or 'fill', got {mode!r}")
    out = bind(gather_p, x, indices, dimension_numbers=dn, slice_sizes=sizes)
    if mode == "fill":
        xa, oa = aval_of(x), aval_of(out)
        ok = _in_bounds(indices, xa.shape, sizes, dn.start_index_map)
        ok = _mask_updates(ok, oa.shape, dn.offset_dims)
        fv = default_fill(xa.dtype) if fill_value is None else fill_value
        out = select(ok, out, full(oa.shape, fv, xa.dtype))
    return out


def _scatter_fn(p):
    def fn(x, indices, updates, dimension_numbers, *, mode="drop"):
        dn = _as_sdn(dimension_numbers)
        if mode not in ("drop", "clip"):
            raise XlapyError(f"{p.name}: mode must be 'drop' or 'clip', got {mode!r}")
        if mode == "clip":
            sizes = _window_sizes(aval_of(x).shape, aval_of(updates).shape, dn)
            indices = _clamp(indices, aval_of(x).shape, sizes, dn.scatter_dims_to_operand_dims)
        return bind(p, x, indices, updates, dimension_numbers=dn)
    fn.__name__ = p.name
    fn.__doc__ = f"XLA {p.name}: windows that would leave x are dropped (mode='drop') or " \
                 "clamped into x (mode='clip')."
    return fn


scatter = _scatter_fn(scatter_p)
scatter_add = _scatter_fn(scatter_add_p)
scatter_mul = _scatter_fn(scatter_mul_p)
scatter_min = _scatter_fn(scatter_min_p)
scatter_max = _scatter_fn(scatter_max_p)


def _along_axis_dn(rank, axis, cls):
    batch = tuple(d for d in range(rank) if d != axis)
    return cls((), (axis,), (axis,), batch, batch)


def gather_along_axis(x, indices, axis):
    """out[..., i, ...] = x[..., indices[..., i, ...], ...] (take_along_axis; indices has x's
    shape except along `axis`; clamped as gather)."""
    a = aval_of(x)
    ia = aval_of(indices)
    idx = reshape(indices, ia.shape + (1,))
    return bind(gather_p, x, idx, dimension_numbers=_along_axis_dn(a.ndim, axis,
                                                                    GatherDimensionNumbers),
                slice_sizes=(1,) * a.ndim)


def scatter_add_along_axis(x, indices, updates, axis):
    """x with updates[..., i, ...] added at x[..., indices[..., i, ...], ...]."""
    ia = aval_of(indices)
    idx = reshape(indices, ia.shape + (1,))
    return bind(scatter_add_p, x, idx, updates,
                dimension_numbers=_along_axis_dn(aval_of(x).ndim, axis, ScatterDimensionNumbers))


__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "gather", "scatter",
           "scatter_add", "scatter_mul", "scatter_min", "scatter_max", "dynamic_slice",
           "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_update_slice_in_dim",
           "gather_along_axis", "scatter_add_along_axis", "default_fill"]

# re-exported: the lax layer takes every indexing function from this module
from xlapy.frontend.primitives.dynamic_slice import (  # noqa: E402,F401
    dynamic_slice, dynamic_slice_in_dim, dynamic_slice_p, dynamic_update_slice,
    dynamic_update_slice_in_dim, dynamic_update_slice_p)
