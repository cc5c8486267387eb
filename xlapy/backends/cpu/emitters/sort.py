"""sort and topk: dedicated emitters (one internal LLVM function per instruction).

  sort(x_0..x_{N-1}), dimensions={d}, to_apply=cmp, is_stable
  topk(x), k, largest                        -> (values, s32 indices) along the last dim
  custom-call(x), custom_call_target="TopK", called_computations={cmp}
                                             -> (values, s32 indices): the first k after
                                                a stable sort of (x, iota) by cmp

Every 'row' (the elements that differ only in the sort dimension) is sorted on its own. It
is gathered into contiguous columns in a scratch buffer (one per operand, in its storage
type, plus the original positions when an index output is wanted), sorted there, and the
first `take` elements are written to the output rows. Elements are compared by inlining the
comparator on their values. The sort is always stable (a valid result for is_stable=false
too), like the interpreter's (control.py):

  1. insertion sort of runs of RUN elements (stable: an element moves left only past
     elements it strictly goes before, cmp(x, y));
  2. bottom-up merges of adjacent runs, doubling the width each pass, ping-ponging between
     two sets of columns. A merge takes the right run's element first only when
     cmp(right, left) holds (stability); its loop is branch-free (selects), and a merge
     whose runs are already in order is a plain copy.

Moving the values themselves rather than a permutation keeps every pass sequential in
memory (about 2x faster than sorting indices for big rows).

topk with k <= TOPK_SELECT_MAX keeps the best k positions seen so far, in order, instead
(one pass, O(n k) worst case). Ties keep the lower index first either way, as XLA's TopK
does; topk orders floats by XLA's TOTALORDER (NaN above +Inf, +0 above -0, -NaN below -Inf).

Scratch lives on the stack when it fits STACK_SCRATCH_LIMIT, else it is malloc'ed
(routine.py). Rows are independent: when there are many, they are split across the thread
pool (threadpool.py, like the loop kernels), each thread with its own scratch.
"""

from __future__ import annotations

from typing import Callable

from llvmlite import ir

from xlapy.backends.cpu.emitters.kernel_abi import parallel_wrapper
from xlapy.backends.cpu.emitters.program import flatten
from xlapy.backends.cpu.emitters.registry import custom_call_target, custom_emitter
from xlapy.backends.cpu.emitters.routine import Scratch, memcpy, routine_function, slot
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ElementalEmitter, lowering_error
from xlapy.backends.llvm.elemental_ops import compare_values
from xlapy.backends.llvm.loops import (c64, for_range, linear_of, row_major_index_of,
                                       step_down_while, strides, while_loop)
from xlapy.hlo.shapes import Shape

RUN = 16             # insertion-sorted run length before merging
TOPK_SELECT_MAX = 16  # topk with k up to this keeps a sorted buffer of k instead of sorting

# less(values_x, values_y) -> i1: does element x go strictly before element y?
Less = Callable[[list, list], ir.Value]


# ---- the sorting algorithms ------------------------------------------------------------------

class Columns:
    """A row held as contiguous columns (one array per sorted operand, in its storage type,
    plus optionally the original positions as i64): `load(i)` gives the storage values of
    element i of every column, `store(i, values)` writes them."""

    def __init__(self, b: ir.IRBuilder, types: list[ir.Type], ptrs: list):
        self.b, self.types, self.ptrs = b, types, ptrs

    def _at(self, k, i):
        return self.b.gep(self.ptrs[k], [i], inbounds=True, source_etype=self.types[k])

    def load(self, i) -> list:
        return [self.b.load(self._at(k, i), typ=t) for k, t in enumerate(self.types)]

    def store(self, i, values) -> None:
        for k, v in enumerate(values):
            self.b.store(v, self._at(k, i))

    def copy_to(self, dst: "Columns", src_i, dst_i, count) -> None:
        """dst[dst_i : dst_i + count) = self[src_i : src_i + count)"""
        for k, t in enumerate(self.types):
            memcpy(self.b, dst._at(k, dst_i), self._at(k, src_i),
                   self.b.mul(count, c64(_size(t))))

    def pick(self, flag, other: "Columns") -> "Columns":
        """`other` when flag (an i1) holds, else self."""
        return Columns(self.b, self.types, [self.b.select(flag, o, s)
                                            for s, o in zip(self.ptrs, other.ptrs)])


def _size(t: ir.Type) -> int:
    """Bytes of a storage type (types.py: integers, half, float, double)."""
    if isinstance(t, ir.IntType):
        return t.width // 8
    return {ir.HalfType: 2, ir.FloatType: 4, ir.DoubleType: 8}[type(t)]


def _min(b, x, y):
    return b.select(b.icmp_signed("<", x, y), x, y)


def emit_stable_sort(b: ir.IRBuilder, n: int, a: Columns, tmp: Columns, less: Less) -> Columns:
    """Stable sort of the n elements of `a` by less(values_x, values_y) (storage values of
    the columns); `tmp` is scratch of the same size. Returns the columns holding the result
    (a or tmp, chosen at run time)."""
    _insertion_sort_runs(b, n, a, less)
    flip = slot(b, T.I1, ir.Constant(T.I1, 0), "flip")  # the sorted runs are in tmp
    width = slot(b, T.I64, c64(RUN), "width")
    with while_loop(b, lambda: b.icmp_signed("<", b.load(width), c64(n)), name="pass"):
        w, f = b.load(width), b.load(flip)
        src, dst = a.pick(f, tmp), tmp.pick(f, a)
        lo = slot(b, T.I64, c64(0), "lo")
        with while_loop(b, lambda: b.icmp_signed("<", b.load(lo), c64(n)), name="runs"):
            lo_v = b.load(lo)
            mid = _min(b, b.add(lo_v, w), c64(n))
            hi = _min(b, b.add(mid, w), c64(n))
            _merge(b, src, dst, lo_v, mid, hi, less)
            b.store(hi, lo)
        b.store(b.not_(f), flip)
        b.store(b.mul(w, c64(2)), width)
    return a.pick(b.load(flip), tmp)


def _insertion_sort_runs(b, n: int, cols: Columns, less: Less):
    nruns = (n + RUN - 1) // RUN
    with for_range(b, 0, nruns, name="run") as r:
        start = b.mul(r, c64(RUN))
        end = _min(b, b.add(start, c64(RUN)), c64(n))
        with for_range(b, b.add(start, c64(1)), end, name="ins") as i:
            x = cols.load(i)
            j = step_down_while(b, i, start, lambda j, jm1: less(x, cols.load(jm1)),
                                lambda j, jm1: cols.store(j, cols.load(jm1)), name="shift")
            cols.store(j, x)


def _merge(b, src: Columns, dst: Columns, lo, mid, hi, less: Less):
    """dst[lo:hi) = stable merge of the sorted runs src[lo:mid) and src[mid:hi)."""
    # runs already in order (or no right run): a plain copy
    flag = slot(b, T.I1, ir.Constant(T.I1, 1), "in_order")
    with b.if_then(b.icmp_signed("<", mid, hi)):
        b.store(b.not_(less(src.load(mid), src.load(b.sub(mid, c64(1))))), flag)
    with b.if_else(b.load(flag)) as (then, otherwise):
        with then:
            src.copy_to(dst, lo, lo, b.sub(hi, lo))
        with otherwise:
            i, j, k = slot(b, T.I64, lo, "i"), slot(b, T.I64, mid, "j"), slot(b, T.I64, lo, "k")

            def both_left():
                return b.and_(b.icmp_signed("<", b.load(i), mid),
                              b.icmp_signed("<", b.load(j), hi))

            with while_loop(b, both_left, name="merge"):
                iv, jv, kv = b.load(i), b.load(j), b.load(k)
                left, right = src.load(iv), src.load(jv)
                take_right = less(right, left)
                dst.store(kv, [b.select(take_right, r, l) for l, r in zip(left, right)])
                one = b.zext(take_right, T.I64)
                b.store(b.add(jv, one), j)
                b.store(b.add(iv, b.sub(c64(1), one)), i)
                b.store(b.add(kv, c64(1)), k)
            iv, jv, kv = b.load(i), b.load(j), b.load(k)
            left_rest = b.sub(mid, iv)
            src.copy_to(dst, iv, kv, left_rest)
            src.copy_to(dst, jv, b.add(kv, left_rest), b.sub(hi, jv))


def emit_select_best(b: ir.IRBuilder, n: int, k: int, buf, less_pos) -> None:
    """buf[0..k) (i64) = the first k positions of the stable sort of positions 0..n-1 by
    less_pos(i, j), keeping a sorted buffer of the best k seen so far (k >= 1): O(n k) worst
    case, about O(n) on random data."""
    def at(i):
        return b.gep(buf, [i], inbounds=True, source_etype=T.I64)

    count = slot(b, T.I64, c64(0), "count")
    with for_range(b, 0, n, name="cand") as i:
        cnt = b.load(count)
        take = slot(b, T.I1, ir.Constant(T.I1, 1))
        with b.if_then(b.icmp_signed(">=", cnt, c64(k))):
            # a full buffer admits i only if it goes strictly before the current last
            b.store(less_pos(i, b.load(at(c64(k - 1)), typ=T.I64)), take)
        with b.if_then(b.load(take)):
            j = step_down_while(b, _min(b, cnt, c64(k - 1)), c64(0),
                                lambda j, jm1: less_pos(i, b.load(at(jm1), typ=T.I64)),
                                lambda j, jm1: b.store(b.load(at(jm1), typ=T.I64), at(j)),
                                name="shift")
            b.store(i, at(j))
            b.store(_min(b, b.add(cnt, c64(1)), c64(k)), count)


# ---- rows ------------------------------------------------------------------------------------

def emit_row_sort(pe, name: str, in_ptrs: list, in_shapes: list[Shape], out_ptrs: list,
                  out_shapes: list[Shape], dim: int, take: int, make_less,
                  index_out: tuple | None = None) -> None:
    """For every row along `dim` of the inputs (all of one dims): order the row's elements
    stably by make_less(em, values_a, values_b) -> i1 (values: the inputs' values in value
    form, then the element's original position as i64 when index_out is given) and write
    the first `take` of them: output k gets input k's elements, `index_out` = (ptr, shape)
    the original positions."""
    dims = list(in_shapes[0].dims)
    n = dims[dim]
    outs = list(zip(out_ptrs, out_shapes))
    if index_out is not None:
        outs.append(index_out)
    all_ptrs = list(in_ptrs) + [p for p, _ in outs]
    rows = 1
    for k, m in enumerate(dims):
        if k != dim:
            rows *= m
    if rows == 0 or take == 0 or n == 0:
        return
    # void fn(ptrs.., i64 first_row, i64 end_row): rows are independent, so big batches
    # are split across threads (each thread gets its own scratch)
    fn, b = routine_function(pe, name, len(all_ptrs), extra_args=(T.I64, T.I64))
    args = list(fn.args)
    ins, out_args = args[:len(in_ptrs)], args[len(in_ptrs):len(all_ptrs)]
    first_row, end_row = args[-2:]
    em = ElementalEmitter(b, pe.llmod)
    elem_types = [s.element_type for s in in_shapes]
    col_types = [T.storage_type(t) for t in elem_types]
    if index_out is not None:
        col_types.append(T.I64)

    def less(sa, sb):  # storage values of two elements -> i1
        def value_form(vals):
            return [b.trunc(v, T.I1) if k < len(elem_types) and elem_types[k].is_pred else v
                    for k, v in enumerate(vals)]
        with em.scope():
            return make_less(em, value_form(sa), value_form(sb))

    use_select = index_out is not None and take <= TOPK_SELECT_MAX and take < n and n > RUN
    if use_select:
        scratch = Scratch(b, take * 8, name="best")
    else:
        offsets, total = [], 0
        for t in col_types * 2:
            offsets.append(total)
            total += (n * _size(t) + 7) // 8 * 8
        scratch = Scratch(b, total, name="rows")
        ptrs = [b.gep(scratch.ptr, [c64(o)], source_etype=T.I8) for o in offsets]
        cols = Columns(b, col_types, ptrs[:len(col_types)])
        tmp = Columns(b, col_types, ptrs[len(col_types):])
    row_dims = list(dims)
    row_dims[dim] = 1
    with for_range(b, first_row, end_row, name="row") as r:
        index = row_major_index_of(b, row_dims, r)

        def geometry(shape):
            return linear_of(b, shape, index), strides(shape)[dim]

        in_geo = [geometry(s) for s in in_shapes]
        out_geo = [geometry(s) for _, s in outs]

        def at(ptr, ty, geo, pos):
            base, stride = geo
            off = b.add(base, pos if stride == 1 else b.mul(pos, c64(stride)))
            return b.gep(ptr, [off], inbounds=True, source_etype=ty)

        def row_values(pos):  # storage values of the inputs at row position pos
            vals = [b.load(at(p, t, g, pos), typ=t) for p, t, g in zip(ins, col_types, in_geo)]
            return vals + ([pos] if index_out is not None else [])

        if use_select:
            emit_select_best(b, n, take, scratch.ptr,
                             lambda i, j: less(row_values(i), row_values(j)))
            result = None
        else:
            with for_range(b, 0, n, name="gather") as i:
                cols.store(i, row_values(i))
            result = emit_stable_sort(b, n, cols, tmp, less) if n > 1 else cols
        with for_range(b, 0, take, name="out") as j:
            if result is None:
                pos = b.load(b.gep(scratch.ptr, [j], source_etype=T.I64), typ=T.I64)
                vals = row_values(pos)
            else:
                vals = result.load(j)
            for k, ((_, oshape), optr, geo) in enumerate(zip(outs, out_args, out_geo)):
                ty = T.storage_type(oshape.element_type)
                v = vals[k]
                if v.type != ty:  # the position, into the index output's integer type
                    v = b.trunc(v, ty)
                b.store(v, at(optr, ty, geo, j))
    scratch.release()
    b.ret_void()
    _call_rows(pe, fn, all_ptrs, rows, rows * n * (1 if use_select else n.bit_length()))


def _call_rows(pe, fn, ptrs: list, rows: int, cost: int) -> None:
    """Run fn over rows [0, rows): on this thread, or split across the thread pool."""
    me = pe.me
    if me.use_threads and rows >= 2 and cost >= me.parallel_threshold:
        pe.run_parallel(parallel_wrapper(pe.llmod, fn, len(ptrs)), list(ptrs), rows, cost)
    else:
        pe.b.call(fn, list(ptrs) + [c64(0), c64(rows)])


# ---- sort ------------------------------------------------------------------------------------

@custom_emitter("sort")
def emit_sort(pe, instr, dest, operands) -> bool:
    comp = instr.attrs["to_apply"]
    dims = instr.attrs.get("dimensions", ())
    in_shapes = [o.shape for o in instr.operands]
    if len(dims) != 1 or comp.num_parameters != 2 * len(in_shapes):
        raise lowering_error(instr, "sort needs dimensions={d} and a comparator with two "
                                    "parameters per operand")
    n = in_shapes[0].dims[dims[0]]

    def make_less(em, va, vb):
        return em.call_scalar(comp, [v for pair in zip(va, vb) for v in pair])

    emit_row_sort(pe, f"sort.{instr.name}", [flatten(o)[0] for o in operands],
                  in_shapes, dest, instr.shape.leaves(), dims[0], n, make_less)
    return True


# ---- topk ------------------------------------------------------------------------------------

def _topk_outputs(instr):
    leaves = instr.shape.leaves()
    if len(leaves) != 2 or instr.operands[0].shape.rank == 0:
        raise lowering_error(instr, "topk needs an operand of rank >= 1 and a (values, "
                                    "indices) result")
    return leaves


@custom_emitter("topk")
def emit_topk(pe, instr, dest, operands) -> bool:
    x = instr.operands[0].shape
    values_shape, index_shape = _topk_outputs(instr)
    k = instr.attrs.get("k", values_shape.dims[-1])
    largest = instr.attrs.get("largest", True)
    t = x.element_type
    direction = "GT" if largest else "LT"
    ctype = "TOTALORDER" if t.is_float else None

    def make_less(em, va, vb):
        return compare_values(em, t, va[0], vb[0], direction, ctype)

    emit_row_sort(pe, f"topk.{instr.name}", [operands[0]], [x], [dest[0]],
                  [values_shape], x.rank - 1, k, make_less, index_out=(dest[1], index_shape))
    return True


@custom_call_target("TopK")
def emit_topk_custom_call(pe, instr, dest, operands) -> bool:
    """XLA's TopK custom call: comparator over (value, value[, index, index]) pairs."""
    x = instr.operands[0].shape
    values_shape, index_shape = _topk_outputs(instr)
    comps = instr.attrs.get("called_computations") or []
    if len(comps) != 1 or comps[0].num_parameters not in (2, 4):
        raise lowering_error(instr, "TopK custom-call needs one comparator computation with "
                                    "2 or 4 parameters")
    comp = comps[0]
    idx_t = comp.parameters[-1].shape.element_type if comp.num_parameters == 4 else None

    def make_less(em, va, vb):
        args = [va[0], vb[0]]
        if idx_t is not None:
            ity = T.value_type(idx_t)
            ia, ib = va[1], vb[1]
            args += [em.b.trunc(ia, ity), em.b.trunc(ib, ity)] if ity.width < 64 else [ia, ib]
        return em.call_scalar(comp, args)

    emit_row_sort(pe, f"topk.{instr.name}", [operands[0]], [x], [dest[0]],
                  [values_shape], x.rank - 1, values_shape.dims[-1], make_less,
                  index_out=(dest[1], index_shape))
    return True

