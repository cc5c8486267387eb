"""Interpreter rules for reductions: reduce, reduce-window, select-and-scatter.

Semantics (XLA's operation semantics):

  reduce(x_1..x_N, init_1..init_N), dimensions=D, to_apply=f
      f takes 2N scalars (N accumulators, then N inputs) and returns N results (a tuple when
      N > 1). Each output element folds the input elements over D, starting from the inits.
      Evaluated as a pairwise tree over the reduced elements flattened in row-major order
      (adjacent pairs, so an associative but non-commutative f still sees its operands in
      order), whole arrays at a time, then f(init, tree_result). Single-op reducers on one
      input (add, multiply, maximum, minimum, and, or, xor) use NumPy reductions; maximum/
      minimum propagate NaN; integer sums wrap; f16/bf16 sums accumulate in f32 and round
      once at the end, as XLA's CPU backend does (checked against jax).

  reduce-window(x_1..x_N, init_1..init_N), window=W, to_apply=f
      For each window position, in row-major order, acc = f(acc, strided view of that
      position), starting from acc = init, where the position holds an element of the input:
      padding and base-dilation holes are skipped (as XLA:CPU computes; folding them in as
      init values, which the padding is defined with, differs when init is not the
      reducer's identity). Window (rhs) dilation spaces the window elements.

  select-and-scatter(operand, source, init), window=W, select=s, scatter=c
      For each window (one per source element) pick the selected operand element: iterate the
      window in row-major order, skipping padding, and replace the current pick by a
      candidate when s(current, candidate) is false. Then out = full(init) and every source
      value is combined into out at its window's pick with c, in row-major source order.

Helpers shared with indexing.py and linalg.py: `reducer_kind`, `ufunc_for`,
`call_elementwise`, `combine_at`, `dilate_and_pad`.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from xlapy.hlo.evaluator.evaluator import eval_rule
from xlapy.hlo.evaluator.numerics import flush_denormals
from xlapy.errors import EvaluationError
from xlapy.hlo.attributes import Window
from xlapy.hlo.opcodes import COMMUTATIVE, ELEMENTWISE

_LOW_PRECISION = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
_FLUSHED_WIDE = (np.dtype(np.float32), np.dtype(np.float64))
_SCALAR_OK = ELEMENTWISE | {"parameter", "constant", "tuple", "get-tuple-element"}


# ---- computations used as reducers / combiners ---------------------------------------------

def reducer_kind(comp) -> str | None:
    """'add', 'maximum', ... when `comp` is `ROOT op(p0, p1)` of its two scalar parameters;
    'first' / 'second' when it just returns parameter 0 / 1; None otherwise."""
    params = comp.parameters
    root = comp.root
    if len(params) != 2 or root is None or root.shape.is_tuple or root.shape.rank != 0:
        return None
    if root.opcode == "parameter":
        return "first" if root.parameter_number == 0 else "second"
    if root.opcode in COMMUTATIVE and len(root.operands) == 2:
        if {id(o) for o in root.operands} == {id(p) for p in params}:
            return root.opcode
    return None


class _SignedZeroExtremum:
    """maximum/minimum on floats as XLA computes them: NaN-propagating (like np.maximum)
    AND ordering -0.0 below +0.0 (which np.maximum/np.minimum do not: their result for
    {+0, -0} depends on argument order). Offers the ufunc methods the rules use."""

    def __init__(self, is_max: bool):
        self.is_max = is_max
        self.uf = np.maximum if is_max else np.minimum

    def _fix(self, a, b, r):
        both_zero = (a == 0) & (b == 0)
        if np.any(both_zero):  # max: +0 if either is +0; min: -0 if either is -0
            pick_a = ~np.signbit(a) if self.is_max else np.signbit(a)
            r = np.where(both_zero, np.where(pick_a, a, b), r)
        return r

    def __call__(self, a, b, out=None, where=True):
        r = self._fix(a, b, self.uf(a, b))
        if out is not None:
            out[...] = r if where is True else np.where(where, r, out)
            return out
        return r

    def reduce(self, x, axis=None, dtype=None):
        r = self.uf.reduce(x, axis=axis, dtype=dtype)
        zero = r == 0
        if np.any(zero):
            wanted = (x == 0) & (~np.signbit(x) if self.is_max else np.signbit(x))
            has = np.any(wanted, axis=axis)
            sign_zero = np.zeros_like(r) if self.is_max else -np.zeros_like(r)
            other_zero = -sign_zero
            r = np.where(zero, np.where(has, sign_zero, other_zero), r)
        return r

    def at(self, target, index, values):
        def wanted(v):
            return (v == 0) & (~np.signbit(v) if self.is_max else np.signbit(v))
        has = wanted(target).copy()
        np.logical_or.at(has, index, wanted(values))
        self.uf.at(target, index, values)
        zero = target == 0
        if np.any(zero):
            sign_zero = 0.0 if self.is_max else -0.0
            target[zero] = np.where(has[zero], sign_zero, -sign_zero).astype(target.dtype)


def ufunc_for(kind: str | None, dtype: np.dtype):
    """The NumPy ufunc computing reducer `kind` on `dtype` exactly as XLA does, or None."""
    dtype = np.dtype(dtype)
    is_bool = dtype == np.bool_
    if kind in ("maximum", "minimum"):
        if dtype.kind == "f" or dtype.name == "bfloat16":
            return _SignedZeroExtremum(kind == "maximum")
        return np.maximum if kind == "maximum" else np.minimum
    if kind in ("add", "multiply") and not is_bool:
        return np.add if kind == "add" else np.multiply
    if kind in ("and", "or", "xor") and (is_bool or dtype.kind in "iu"):
        return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
    return None


def _is_scalar_elementwise(comp) -> bool:
    """True when every instruction of `comp` is elementwise on scalars (calls included), so
    the whole computation can be applied to arrays at once."""
    for i in comp.instructions:
        if any(s.rank != 0 for s in i.shape.leaves()):
            return False
        if i.opcode == "call":
            if not _is_scalar_elementwise(i.attrs["to_apply"]):
                return False
        elif i.opcode not in _SCALAR_OK:
            return False
    return True


def _result_shapes(comp):
    shape = comp.root.shape
    return list(shape.tuple_shapes) if shape.is_tuple else [shape]


def call_elementwise(ev, comp, args) -> list[np.ndarray]:
    """Apply scalar computation `comp` elementwise to arrays `args` (broadcast together).
    Returns the list of its results (one per tuple element of its root)."""
    args = [np.asarray(a) for a in args]
    shape = np.broadcast_shapes(*(a.shape for a in args))
    out_shapes = _result_shapes(comp)
    if _is_scalar_elementwise(comp):
        res = ev.call(comp, args)
        leaves = list(res) if isinstance(res, tuple) else [res]
        out = []
        for r, s in zip(leaves, out_shapes):
            r = np.asarray(r).astype(s.dtype, copy=False)
            out.append(r if r.shape == shape else np.array(np.broadcast_to(r, shape)))
        return out
    # Not elementwise-evaluable (e.g. contains a broadcast): one call per element.
    outs = [np.empty(shape, s.dtype) for s in out_shapes]
    bargs = [np.broadcast_to(a, shape) for a in args]
    for ix in np.ndindex(*shape):
        res = ev.call(comp, [np.asarray(a[ix]) for a in bargs])
        leaves = list(res) if isinstance(res, tuple) else [res]
        for o, r in zip(outs, leaves):
            o[ix] = r
    return outs


def combine_at(ev, comp, targets: list[np.ndarray], index: np.ndarray,
               values: list[np.ndarray]) -> None:
    """targets[k][index[e]] = comp(targets..[index[e]], values..[e]) for e in order.

    `targets` are flat (1-D) arrays updated in place, `index` a 1-D int array, `values`
    1-D arrays aligned with `index`. Duplicate indices are combined sequentially in order:
    NumPy's ufunc.at for single-op combiners, else in rounds where round r applies the
    r-th occurrence of every index (so each round's indices are unique)."""
    if index.size == 0:
        return
    if len(targets) == 1:
        kind = reducer_kind(comp)
        if kind == "first":
            return
        if kind == "second":  # plain assignment: the last update wins
            rev = index[::-1]
            uniq, pos = np.unique(rev, return_index=True)
            targets[0][uniq] = values[0][::-1][pos]
            return
        uf = ufunc_for(kind, targets[0].dtype)
        if ev.flush_denormals and targets[0].dtype in _FLUSHED_WIDE + (_LOW_PRECISION[1],):
            uf = None  # each combine reads and makes subnormals as zeros (the generic rounds
            # below evaluate the computation, which flushes per instruction)
        if uf is not None:
            uf.at(targets[0], index, values[0].astype(targets[0].dtype, copy=False))
            return
    order = np.argsort(index, kind="stable")
    sorted_idx = index[order]
    starts = np.r_[0, np.flatnonzero(sorted_idx[1:] != sorted_idx[:-1]) + 1]
    group_start = np.repeat(starts, np.diff(np.r_[starts, sorted_idx.size]))
    occurrence = np.empty_like(index)
    occurrence[order] = np.arange(sorted_idx.size) - group_start
    for r in range(int(occurrence.max()) + 1):
        sel = occurrence == r
        ix = index[sel]
        cur = [t[ix] for t in targets]
        new = call_elementwise(ev, comp, cur + [v[sel] for v in values])
        for t, nv in zip(targets, new):
            t[ix] = nv


def dilate_and_pad(x: np.ndarray, lows, highs, interiors, value) -> np.ndarray:
    """XLA `pad` semantics: insert `interiors[d]` copies of `value` between elements along
    each dim, then `lows[d]`/`highs[d]` at the edges (negative values crop)."""
    if not any(lows) and not any(highs) and not any(interiors):
        return x
    dilated = [(n - 1) * (i + 1) + 1 if n else 0 for n, i in zip(x.shape, interiors)]
    if any(interiors):
        d = np.full(dilated, value, dtype=x.dtype)
        d[tuple(slice(None, None, i + 1) for i in interiors)] = x
        x = d
    target = [max(lo + n + hi, 0) for lo, n, hi in zip(lows, dilated, highs)]
    out = np.full(target, value, dtype=x.dtype)
    dst, src = [], []
    for lo, n, t in zip(lows, dilated, target):
        d0, s0 = max(lo, 0), max(-lo, 0)
        length = max(min(n - s0, t - d0), 0)
        dst.append(slice(d0, d0 + length))
        src.append(slice(s0, s0 + length))
    out[tuple(dst)] = x[tuple(src)]
    return out


def _as_output(instr, results):
    shapes = instr.shape.tuple_shapes if instr.shape.is_tuple else [instr.shape]
    results = [np.array(r, dtype=s.dtype, order="C", copy=None) for r, s in zip(results, shapes)]
    results = [r if r.flags.writeable else r.copy() for r in results]
    return tuple(results) if instr.shape.is_tuple else results[0]


def _split_variadic(instr, operands):
    if len(operands) % 2 or not operands:
        raise EvaluationError(f"{instr.where()}{instr.opcode} needs N inputs and N init "
                              f"values, got {len(operands)} operands: {instr}")
    n = len(operands) // 2
    return [np.asarray(o) for o in operands[:n]], [np.asarray(o) for o in operands[n:]]


# ---- reduce -------------------------------------------------------------------------------

@eval_rule("reduce")
def _reduce(ev, instr, operands):
    inputs, inits = _split_variadic(instr, operands)
    comp = instr.attrs["to_apply"]
    dims = tuple(sorted(instr.attrs.get("dimensions", ())))
    x0 = inputs[0]
    if any(d < 0 or d >= x0.ndim for d in dims):
        raise EvaluationError(f"{instr.where()}reduce dimensions {dims} out of range for "
                              f"rank {x0.ndim}: {instr}")
    keep = [d for d in range(x0.ndim) if d not in dims]
    out_dims = tuple(x0.shape[d] for d in keep)
    m = math.prod(x0.shape[d] for d in dims)
    if m == 0:
        return _as_output(instr, [np.broadcast_to(i, out_dims) for i in inits])

    if len(inputs) == 1:
        kind = reducer_kind(comp)
        uf = ufunc_for(kind, x0.dtype)
        if ev.flush_denormals and x0.dtype in _FLUSHED_WIDE:
            uf = None  # every step flushes (the generic fold): a product or a cancelling sum
            # underflows into subnormals midway, which compiled code makes zeros
        elif ev.flush_denormals and uf is not None:
            x0 = flush_denormals(x0)   # (bf16 sums accumulate in f32: inputs read as zeros)
        if uf is not None:
            acc = np.float32 if kind == "add" and x0.dtype in _LOW_PRECISION else x0.dtype
            r = uf.reduce(x0.astype(acc, copy=False), axis=dims, dtype=acc)
            return _as_output(instr, [uf(inits[0].astype(acc), r)])
        if kind in ("first", "second"):
            pick = x0[tuple(slice(None) if d in keep else -1 for d in range(x0.ndim))]
            return _as_output(instr, [np.broadcast_to(inits[0], out_dims) if kind == "first"
                                      else pick])

    # Generic: move reduced axes last, flatten them, and fold adjacent pairs.
    perm = keep + list(dims)
    xs = [np.transpose(x, perm).reshape(out_dims + (m,)) for x in inputs]
    while m > 1:
        h = m // 2
        folded = call_elementwise(ev, comp, [x[..., 0:2 * h:2] for x in xs]
                                  + [x[..., 1:2 * h:2] for x in xs])
        if m % 2:
            folded = [np.concatenate([f, x[..., 2 * h:]], axis=-1) for f, x in zip(folded, xs)]
        xs, m = folded, h + m % 2
    results = call_elementwise(ev, comp, list(inits) + [x[..., 0] for x in xs])
    return _as_output(instr, [np.broadcast_to(r, out_dims) for r in results])


# ---- reduce-window ------------------------------------------------------------------------

def _window(instr, rank: int) -> Window:
    w = instr.attrs.get("window")
    if w is None or (w.rank == 0 and rank == 0):
        return Window.make((1,) * rank)
    if w.rank != rank:
        raise EvaluationError(f"{instr.where()}window has {w.rank} dimensions but the operand "
                              f"has rank {rank}: {instr}")
    return w


def _window_out_dims(padded, w: Window):
    out = []
    for p, k, s, rd in zip(padded, w.size, w.stride, w.rhs_dilate):
        eff = (k - 1) * rd + 1
        out.append((p - eff) // s + 1 if p >= eff else 0)
    return out


def _window_views(x: np.ndarray, w: Window, out_dims):
    """Yield, for each window position in row-major order, the strided view of `x` holding
    that window element for every output position."""
    for pos in np.ndindex(*w.size):
        sl = tuple(slice(k * rd, k * rd + (o - 1) * s + 1, s) if o else slice(0, 0)
                   for k, rd, s, o in zip(pos, w.rhs_dilate, w.stride, out_dims))
        yield x[sl]


@eval_rule("reduce-window")
def _reduce_window(ev, instr, operands):
    inputs, inits = _split_variadic(instr, operands)
    comp = instr.attrs["to_apply"]
    w = _window(instr, inputs[0].ndim)
    if any(s < 1 for s in w.stride) or any(d < 1 for d in w.lhs_dilate + w.rhs_dilate):
        raise EvaluationError(f"{instr.where()}window strides and dilations must be >= 1: "
                              f"{instr}")
    kind = reducer_kind(comp) if len(inputs) == 1 else None
    uf = ufunc_for(kind, inputs[0].dtype)
    if ev.flush_denormals and uf is not None and inputs[0].dtype in _FLUSHED_WIDE:
        uf = None  # every step flushes, as in reduce (subnormal * inf is NaN, as compiled)
    elif ev.flush_denormals and uf is not None:
        inputs = [flush_denormals(inputs[0])]
    acc_dtype = inputs[0].dtype
    if uf is not None and kind == "add" and acc_dtype in _LOW_PRECISION:
        acc_dtype = np.dtype(np.float32)
    interiors = [d - 1 for d in w.lhs_dilate]
    padded = [dilate_and_pad(x, w.pad_low, w.pad_high, interiors, init)
              for x, init in zip(inputs, inits)]
    # padding and base-dilation holes are skipped, not folded in as init values (as XLA
    # computes: with an init that is not the reducer's identity the two differ)
    real = dilate_and_pad(np.ones(inputs[0].shape, bool), w.pad_low, w.pad_high, interiors,
                          False)
    skips = not real.all()
    out_dims = _window_out_dims(padded[0].shape, w)
    accs = [np.full(out_dims, init, dtype=acc_dtype if uf is not None else init.dtype)
            for init in inits]
    if math.prod(out_dims) == 0:
        return _as_output(instr, accs)
    masks = _window_views(real, w, out_dims)
    if uf is not None:
        x = padded[0].astype(acc_dtype, copy=False)
        for view, mask in zip(_window_views(x, w, out_dims), masks):
            uf(accs[0], view, out=accs[0], where=mask if skips else True)
        return _as_output(instr, accs)
    view_iters = [_window_views(x, w, out_dims) for x in padded]
    for views, mask in zip(zip(*view_iters), masks):
        new = call_elementwise(ev, comp, accs + list(views))
        accs = [np.where(mask, n, a) for n, a in zip(new, accs)] if skips else new
    return _as_output(instr, accs)


# ---- select-and-scatter --------------------------------------------------------------------

@eval_rule("select-and-scatter")
def _select_and_scatter(ev, instr, operands):
    operand, source, init = (np.asarray(o) for o in operands)
    select, scatter = instr.attrs["select"], instr.attrs["scatter"]
    w = _window(instr, operand.ndim)
    if any(d != 1 for d in w.lhs_dilate):
        raise EvaluationError(f"{instr.where()}select-and-scatter does not support base "
                              f"dilation: {instr}")
    grid = source.shape
    expected = _window_out_dims([n + lo + hi for n, lo, hi in
                                 zip(operand.shape, w.pad_low, w.pad_high)], w)
    if tuple(expected) != grid:
        raise EvaluationError(f"{instr.where()}source shape {list(grid)} does not match the "
                              f"{expected} windows of the operand: {instr}")
    have = np.zeros(grid, bool)
    sel_val = np.zeros(grid, operand.dtype)
    sel_idx = np.zeros(grid, np.int64)
    for pos in np.ndindex(*w.size):
        coords, valid = [], np.ones(grid, bool)
        for d, (k, n) in enumerate(zip(pos, operand.shape)):
            c = (np.arange(grid[d]) * w.stride[d] + k * w.rhs_dilate[d] - w.pad_low[d])
            shape = [1] * len(grid)
            shape[d] = grid[d]
            valid = valid & ((c >= 0) & (c < n)).reshape(shape)
            coords.append(np.clip(c, 0, max(n - 1, 0)).reshape(shape))
        if not valid.any():
            continue
        cand = operand[tuple(coords)]
        idx = np.ravel_multi_index(tuple(np.broadcast_arrays(*coords)), operand.shape)
        take = valid & ~have
        if have.any():
            keep = call_elementwise(ev, select, [sel_val, cand])[0].astype(bool)
            take |= valid & have & ~keep
        sel_val = np.where(take, cand, sel_val)
        sel_idx = np.where(take, idx, sel_idx)
        have |= valid
    out = np.full(operand.shape, init, dtype=operand.dtype)
    flat = out.reshape(-1)
    combine_at(ev, scatter, [flat], sel_idx[have], [source[have]])
    return out
