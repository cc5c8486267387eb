"""Evaluators computing instructions as XLA:CPU does where it departs from HLO (see
deviations.py): each departure only where its deviation is active."""

from __future__ import annotations

import dataclasses

import numpy as np

from xlapy.hlo.evaluator import Evaluator
from xlapy.hlo.ir import Instruction
from xlapy.hlo.shapes import Shape

from fuzzlib import compare as C

_NARROW = ("f16", "bf16")


def _signed(a) -> np.ndarray:
    a = np.asarray(a)
    return a.view(np.dtype(f"i{a.dtype.itemsize}")) if a.dtype.kind == "u" else a


class _Mimic(Evaluator):
    """An evaluator computing some instructions as XLA does: only those of the deviations
    named in `active` (so that an entry explains nothing but its own departure)."""

    def __init__(self, active=(), **kw):
        super().__init__(**kw)
        self.active = frozenset(active)

    def on(self, name: str) -> bool:
        return name in self.active


class _AsXla(_Mimic):
    """Evaluates atan2, clz, log, cbrt, pow, grouped convolutions, unsigned start indices
    and unsigned integer exponents as XLA:CPU does (see DEVIATIONS), each only where its
    deviation is active."""

    def apply(self, rule, instr, operands):
        if (instr.opcode == "convert" and instr.shape.element_type.name == "f32"
                and instr.operands[0].shape.element_type.name in _NARROW):
            return rule(self, instr, operands)  # a widening on bits: nothing flushed
        if (instr.name or "").startswith("ieee_fold.") and self.on(
                "rounding-of-selected-constant-folded"):
            return rule(self, instr, operands)  # folded at compile time: IEEE
        if instr.opcode == "dynamic-slice" and self.on("unsigned-start-index-read-signed"):
            operands = operands[:1] + [_signed(o) for o in operands[1:]]
        elif (instr.opcode == "dynamic-update-slice"
              and self.on("unsigned-start-index-read-signed")):
            operands = operands[:2] + [_signed(o) for o in operands[2:]]
        elif instr.opcode == "atan2" and self.on("atan2-of-two-subnormals"):
            y, x = (np.asarray(o) for o in operands)
            out = super().apply(rule, instr, operands)
            sy, sx = _subnormal(y), _subnormal(x)
            # y subnormal over a zero x (or, in f64, a subnormal one): +-pi/2 by y's sign
            with np.errstate(invalid="ignore"):
                half = np.where(np.signbit(y), -np.pi / 2, np.pi / 2).astype(out.dtype)
                over_zero = sy & ((x == 0) | (sx if y.dtype == np.float64 else False))
                wide = y.dtype == np.float64
                left = sy & ~sx & (x < 0) & wide  # f64: -pi for either sign of y
                one = sy & (x == 1) & ~wide  # f32 over exactly 1: y itself, unflushed
            out = np.where(sy & sx, np.asarray(np.nan, out.dtype), out)  # f32: 0 / 0
            out = np.where(over_zero, half, out)
            out = np.where(one, y.astype(out.dtype), out)
            return np.where(left, np.asarray(-np.pi, out.dtype), out)
        elif instr.opcode == "clamp" and self.on("clamp-nan-sign"):
            out = np.asarray(super().apply(rule, instr, operands))
            lo, x = (np.broadcast_to(np.asarray(o), out.shape) for o in operands[:2])
            # a NaN x keeps its sign bit only where lo's is set too
            positive = np.isnan(x) & ~np.isnan(lo) & ~np.signbit(lo)
            return np.where(positive, np.abs(out), out).astype(out.dtype)
        elif _grouped_conv(instr) and self.on("grouped-conv-nan-across-groups"):
            return super().apply(rule, *_one_group(instr, operands))
        elif (_batch_grouped_conv(instr)
              and self.on("batch-grouped-conv-nan-across-groups")):
            # each output feature also gets 0 x (every group's kernel on every batch group)
            lhs, rhs = (np.asarray(o) for o in operands)
            g = instr.attrs["batch_group_count"]
            dn = instr.attrs["dim_labels"]
            per = lhs.shape[dn.input_batch] // g
            per_out = rhs.shape[dn.kernel_output_feature] // g
            out = np.asarray(super().apply(rule, instr, operands))
            with np.errstate(all="ignore"):
                for k in range(g):
                    for j in range(g):
                        if k == j == 0:
                            continue
                        other = super().apply(rule, instr, [
                            np.roll(lhs, k * per, dn.input_batch),
                            np.roll(rhs, j * per_out, dn.kernel_output_feature)])
                        out = (out + np.zeros((), out.dtype) * np.asarray(other)
                               ).astype(out.dtype)
            return out
        elif (instr.opcode == "count-leading-zeros" and instr.shape.element_type.name[0] == "s"
              and self.on("clz-folded-negative")):
            out = np.asarray(super().apply(rule, instr, operands))
            x = np.asarray(operands[0])
            bits = x.dtype.itemsize * 8
            return np.where(x < 0, np.asarray(bits - 1 - 63, out.dtype), out).astype(out.dtype)
        elif (instr.opcode == "select-and-scatter" and self.on("select-and-scatter-window-order")
              and (choices := _tie_choices(self.active)) is not None):
            out = _sas_tie_choice(instr, operands, choices)
            return super().apply(rule, instr, operands) if out is None else out
        elif instr.opcode == "select-and-scatter" and self.on("select-and-scatter-window-order"):
            # the window's positions visited in another dimension order (the last
            # dimension outermost unless a "visit-order:" token names one): the same
            # select-and-scatter on the operand and source transposed
            import copy as _copy
            operand, source, init = (np.asarray(o) for o in operands)
            perm = _visit_order(self.active, operand.ndim)
            w = instr.attrs["window"]
            flipped = _copy.copy(instr)
            flipped.attrs = dict(instr.attrs, window=dataclasses.replace(
                w, **{f.name: tuple(getattr(w, f.name)[d] for d in perm)
                      for f in dataclasses.fields(w)}))
            flipped.shape = Shape.array(instr.shape.element_type,
                                        tuple(instr.shape.dims[d] for d in perm))
            out = super().apply(rule, flipped, [operand.transpose(perm),
                                                source.transpose(perm), init])
            return np.ascontiguousarray(np.asarray(out).transpose(np.argsort(perm)))
        elif _f32_log(instr) and self.on("log-of-subnormal"):
            out = super().apply(rule, instr, operands)
            a = np.asarray(operands[0])
            with np.errstate(invalid="ignore"):
                neg = _subnormal(a) & (a < 0)
            out = np.where(_subnormal(a), np.float32(-150 * np.log(2.0)), out)
            return np.asarray(np.where(neg, np.float32(np.nan), out).astype(instr.shape.dtype))
        elif _f32_cbrt(instr) and self.on("cbrt-of-subnormal"):
            out = super().apply(rule, instr, operands)
            a = np.asarray(operands[0])
            return np.asarray(np.where(_subnormal(a), np.float32(-2.0 ** (-152 / 3)), out)
                              .astype(out.dtype))
        elif _float_power(instr) and self.on("pow-of-subnormal-base"):
            out = super().apply(rule, instr, operands)
            from xlapy.hlo.evaluator.numerics import flush_denormals
            return flush_denormals(_pow_subnormal_base_as_glibc(*operands, out))
        elif (_select_as_minmax(instr) is not None
              and self.on("select-simplified-to-minmax")):
            kind, _, _ = _select_as_minmax(instr)
            return _minmax_daz(kind, operands[1], operands[2], "minmax-tie:first" in
                               self.active)
        elif _tiny_argument_returned(instr) and self.on("tiny-argument-returned"):
            out = super().apply(rule, instr, operands)
            x = np.asarray(operands[0])
            return np.asarray(np.where(_subnormal(x), x, out).astype(out.dtype))
        elif _unsigned_power(instr) and self.on("unsigned-exponent-read-signed"):
            a, b = (np.asarray(o) for o in operands)
            out = super().apply(rule, instr, operands)
            # a "negative" exponent: 1 for base 1, +-1 for a base read as -1 (all ones), else 0
            mone = _signed(a) == -1
            odd = (b & 1).astype(bool)
            neg = np.where(a == 1, 1, np.where(mone, np.where(odd, a, 1), 0)).astype(a.dtype)
            return np.where(_signed(b) < 0, neg, out)
        return super().apply(rule, instr, operands)


def _one_slice_gather(i: Instruction) -> bool:
    """A gather of one index vector: its result is the slice itself, with its batch
    dimensions (of size 1, anywhere among the offset dims) added (XLA turns it into a
    reshape of a dynamic-slice)."""
    if i.opcode != "gather":
        return False
    idx = i.operands[1].shape
    ivd = i.attrs.get("index_vector_dim", idx.rank)
    return all(d == 1 for k, d in enumerate(idx.dims) if k != ivd)


def _inner_slice(o: Instruction):
    """The dynamic-slice (or one-slice gather) that o is, or that o broadcasts, else
    None."""
    if o.opcode == "broadcast" and o.operands[0].opcode == "dynamic-slice":
        return o.operands[0]
    return o if o.opcode == "dynamic-slice" or _one_slice_gather(o) else None


def _sliced_slice(i: Instruction) -> bool:
    """A dynamic-slice of a dynamic-slice, or a gather of one index vector (which XLA turns
    into a dynamic-slice) from a dynamic-slice, or from a broadcast of one (which XLA moves
    out of the way first)."""
    if not i.operands or _inner_slice(i.operands[0]) is None:
        return False
    if i.opcode == "dynamic-slice":
        return True
    if i.opcode != "gather":
        return False
    idx = i.operands[1].shape
    ivd = i.attrs.get("index_vector_dim", idx.rank)
    return all(d == 1 for k, d in enumerate(idx.dims) if k != ivd)


SAS_TIE_VARIANTS = 64  # "sas-ties:K" for K below: the first six tied windows' choices


def _tie_choices(active):
    for token in active:
        if token.startswith("sas-ties:"):
            return int(token.split(":", 1)[1])
    return None


def _compare_select(instr):
    """The direction of a select computation that is compare(param 0, param 1), else None."""
    sel = instr.called_computations()[0] if instr.called_computations() else None
    if sel is None:
        return None
    root = sel.root
    if (root.opcode != "compare" or [o.opcode for o in root.operands] != ["parameter"] * 2
            or root.attrs.get("type") == "TOTALORDER"):
        return None
    params = [o.parameter_number for o in root.operands]
    d = root.attrs.get("direction")
    if params == [1, 0]:
        d = {"GE": "LE", "LE": "GE", "GT": "LT", "LT": "GT"}.get(d, d)
    return d if params in ([0, 1], [1, 0]) and d in ("GE", "GT", "LE", "LT") else None


def _sas_tie_choice(instr, operands, choices: int):
    """A select-and-scatter whose windows with several best candidates (equal values under
    a GE/GT/LE/LT select) each pick the first or the last of them in row-major order, bit
    k of `choices` for the k-th such window (source order): XLA:CPU's visiting order is
    not one dimension order (hlo 28003000: three tied windows of one padded 3x3x3 select-
    and-scatter, no order of the window's dims with either direction picks as XLA does),
    so the mimic tries the tie choices instead. Integer operands and an add scatter only
    (else None: the other variants judge)."""
    operand, source, init = (np.asarray(o) for o in operands)
    d = _compare_select(instr)
    scat = instr.called_computations()[1] if len(instr.called_computations()) > 1 else None
    w = instr.attrs["window"]
    if (d is None or operand.dtype.kind not in "iu" or scat is None
            or scat.root.opcode != "add" or any(x != 1 for x in w.lhs_dilate + w.rhs_dilate)):
        return None
    better = {"GE": np.greater, "GT": np.greater, "LE": np.less, "LT": np.less}[d]
    out = np.full(operand.shape, init, dtype=operand.dtype)
    k = 0
    for s in np.ndindex(source.shape):
        best, vals = [], None
        for r in np.ndindex(tuple(w.size)):
            pos = tuple(s[i] * w.stride[i] + r[i] - w.pad_low[i] for i in range(operand.ndim))
            if not all(0 <= p < n for p, n in zip(pos, operand.shape)):
                continue
            v = operand[pos]
            if vals is None or better(v, vals):
                best, vals = [pos], v
            elif v == vals:
                best.append(pos)
        if not best:
            continue
        pick = best[0]
        if len(best) > 1:
            pick = best[-1] if (choices >> k) & 1 else best[0]
            k += 1
        out[pick] = (out[pick] + source[s]).astype(out.dtype)
    return out


def _visit_order(active, rank: int) -> tuple:
    for token in active:
        if token.startswith("visit-order:") and token != "visit-order:reversed":
            perm = tuple(int(d) for d in token.split(":", 1)[1].split(","))
            if len(perm) == rank:
                return perm
    return tuple(reversed(range(rank)))


class _MergedSlices(_Mimic):
    """Evaluates a slice of a dynamic-slice as XLA:CPU's simplifier rewrites it: one
    dynamic-slice of the inner operand x at (inner start clamped to [0, dim(x) - outer
    size]) + (outer start), the sum taken in the outer start's type (wrapping: an s8 127
    more is negative) and clamped against x only (DEVIATIONS); in a dimension the outer
    slice takes whole, its start (which can only be 0) is dropped and the inner start
    clamped as HLO does. Fitted to XLA's numbers (tests/fuzz/test_deviations.py): s8 x[8],
    a 7-wide slice at 9 read at -3 gives x[4] (clamp(9, 0, 7) - 3), read at 127 gives
    x[0] (7 + 127 wraps in s8); x[3,7] sliced 1x3 at (3,6) and read at (-1,1) gives
    x[2,6]."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self._inner: dict[int, list] = {}

    def apply(self, rule, instr, operands):
        if instr.opcode == "dynamic-slice" or _one_slice_gather(instr):
            self._inner[id(instr)] = list(operands)
        if (not self.on("slice-of-dynamic-slice-merged") or not _sliced_slice(instr)
                or id(_inner_slice(instr.operands[0])) not in self._inner):
            return super().apply(rule, instr, operands)
        inner = _inner_slice(instr.operands[0])
        # the inner slice's dims -> x's dims (a gather drops collapsed ones; its batch
        # dims, of size 1, map to none)
        dim_map = None
        if inner.opcode == "gather":
            x, idx0 = (np.asarray(o) for o in self._inner[id(inner)])
            idx0 = idx0.reshape(-1)
            starts = [np.zeros((), idx0.dtype)] * x.ndim
            for p, d in enumerate(inner.attrs["start_index_map"]):
                starts[d] = idx0[p]
            isz = list(inner.attrs["slice_sizes"])
            collapsed = set(inner.attrs.get("collapsed_slice_dims", ()))
            kept = [d for d in range(x.ndim) if d not in collapsed]
            offset = list(inner.attrs.get("offset_dims", ()))
            dim_map = [kept[offset.index(k)] if k in offset else None
                       for k in range(inner.shape.rank)]
        else:
            x, *starts = (np.asarray(o) for o in self._inner[id(inner)])
            isz = list(inner.attrs["dynamic_slice_sizes"])
        if instr.operands[0] is not inner:
            # a broadcast of the slice: the same merge on x broadcast alike, its new
            # dimensions taken whole from 0
            b = instr.operands[0]
            dims = list(b.attrs["dimensions"])
            shape = [1] * b.shape.rank
            for d, bd in enumerate(dims):
                shape[bd] = x.shape[d]
            full = list(b.shape.dims)
            for d, bd in enumerate(dims):
                full[bd] = x.shape[d]
            x = np.broadcast_to(x.reshape(shape), full)
            starts_b = [np.zeros((), np.int64)] * b.shape.rank
            isz_b = list(b.shape.dims)
            for d, bd in enumerate(dims):
                starts_b[bd], isz_b[bd] = starts[d], isz[d]
            starts, isz = starts_b, isz_b
        if instr.opcode == "dynamic-slice":
            outer = [np.asarray(v) for v in operands[1:]]
            osz = list(instr.attrs["dynamic_slice_sizes"])
        else:
            idx = np.asarray(operands[1]).reshape(-1)
            outer = [np.zeros((), idx.dtype)] * instr.operands[0].shape.rank
            for p, d in enumerate(instr.attrs["start_index_map"]):
                outer[d] = idx[p]
            osz = list(instr.attrs["slice_sizes"])
        if dim_map is not None:  # over x's dims: a collapsed dim is taken at its start
            full_outer = [np.zeros((), np.int64)] * x.ndim
            full_osz = [1] * x.ndim
            for k, d in enumerate(dim_map):
                if d is not None:  # a batch dim of size 1: its start clamps to 0
                    full_outer[d], full_osz[d] = outer[k], osz[k]
            outer, osz = full_outer, full_osz
        at = []
        for d, (a, b) in enumerate(zip(starts, outer)):
            if isz[d] == osz[d]:  # the outer start can only be 0: XLA drops it (as HLO)
                at.append(min(max(int(a), 0), x.shape[d] - isz[d]))
                continue
            a_c = min(max(int(a), 0), x.shape[d] - osz[d])
            with np.errstate(over="ignore"):
                total = int(np.asarray(a_c).astype(b.dtype) + b)  # wraps in b's type
            at.append(min(max(total, 0), x.shape[d] - osz[d]))
        out = x[tuple(slice(a, a + n) for a, n in zip(at, osz))]
        return np.array(out.reshape(instr.shape.dims))  # (0-d stays 0-d)


def _float_power(i: Instruction) -> bool:
    return i.opcode == "power" and i.shape.element_type.name in ("f32", "bf16", "f64")


def _select_as_minmax(i: Instruction):
    """("max" | "min", first, second) where i is select(compare(a, b, dir), x, y) with
    {x, y} = {a, b} of a float type (what XLA's simplifier turns into maximum or minimum),
    else None."""
    if i.opcode != "select" or not i.shape.is_array or len(i.operands) != 3:
        return None
    if i.shape.element_type.name not in ("f32", "f64", "bf16", "f16"):
        return None
    c, x, y = i.operands
    if c.opcode != "compare" or len(c.operands) != 2:
        return None
    a, b = c.operands
    d = c.attrs.get("direction")
    d = getattr(d, "name", d)
    if c.attrs.get("type") == "TOTALORDER" or d not in ("LT", "LE", "GT", "GE"):
        return None
    if (x, y) == (a, b):
        kind = "min" if d in ("LT", "LE") else "max"
    elif (x, y) == (b, a):
        kind = "max" if d in ("LT", "LE") else "min"
    else:
        return None
    return kind, x, y


def _minmax_daz(kind, x, y, tie_first: bool):
    """x86's maxps/minps with denormals read as zero: the flushed values compared, the
    second operand on a tie or a NaN (or the first, tie_first), the result flushed."""
    from xlapy.hlo.evaluator.numerics import flush_denormals
    x, y = np.asarray(x), np.asarray(y)
    fx, fy = flush_denormals(x), flush_denormals(y)
    with np.errstate(invalid="ignore"):
        pick_x = (fx > fy) if kind == "max" else (fx < fy)
        if tie_first:
            pick_x = pick_x | (fx == fy)
    return np.asarray(flush_denormals(np.where(pick_x, x, y)).astype(x.dtype))


def _tiny_argument_returned(i: Instruction) -> bool:
    """sin, tan and expm1 (f32, bf16, f64) and tanh (f32, bf16): XLA:CPU returns a tiny
    argument itself, a subnormal unflushed (measured on jaxlib 0.10.2)."""
    t = i.shape.element_type.name if i.shape.is_array else ""
    if i.opcode in ("sine", "tan", "exponential-minus-one"):
        return t in ("f32", "bf16", "f64")
    return i.opcode == "tanh" and t in ("f32", "bf16")


def _f32_log(i: Instruction) -> bool:
    return i.opcode == "log" and i.shape.element_type.name in ("f32", "bf16")


def _f32_cbrt(i: Instruction) -> bool:
    return i.opcode == "cbrt" and i.shape.element_type.name in ("f32", "bf16")


def _pow_subnormal_base_as_glibc(a, b, out):
    """XLA:CPU's pow calls glibc's pow/powf with denormals flushed: its normalization of a
    subnormal base (x * 2^23, then subtracting 23 from the exponent bits) multiplies into a
    flushed zero, which leaves log2|x| = -150 (f32; -1075 for f64) for every subnormal x."""
    a, b = np.asarray(a), np.asarray(b)
    sub = _subnormal(a)
    sub_b = _subnormal(b)
    if sub_b.any():
        # a subnormal exponent is not zero to glibc (it tests the bits): x^tiny is 1 for
        # x > 0, NaN for x < 0 (not an integer), 0 or inf for x = +-0, x for NaN
        with np.errstate(all="ignore"):
            xb = a.astype(np.float64)
            tiny = np.where(np.isnan(xb), xb, np.where(
                xb == 0, np.where(np.signbit(b), np.inf, 0.0),
                np.where(np.signbit(xb) & (xb != 0), np.nan, 1.0)))
            # (an infinity of either sign: a tiny exponent is no odd integer, so
            # pow(-inf, 1e-45) is +inf as pow(inf, 1e-45): hlo 21001970)
            tiny = np.where(np.isinf(xb), np.where(np.signbit(b), 0.0, np.inf), tiny)
        out = np.asarray(np.where(sub_b, tiny.astype(out.dtype), out).astype(out.dtype))
        sub = sub & ~sub_b
    if not sub.any():
        return out
    wide = np.float64
    log2 = -1075.0 if a.dtype == np.float64 else -150.0
    with np.errstate(all="ignore"):
        bb = b.astype(wide)
        mag = np.exp2(log2 * bb)
        odd = (np.floor(bb) == bb) & (np.mod(bb, 2) == 1)
        integer = np.floor(bb) == bb
        neg = np.signbit(a)
        val = np.where(neg & ~integer, np.nan, np.where(neg & odd, -mag, mag))
        special = (bb == 0) | ~np.isfinite(bb)
        res = np.where(sub & ~special, val.astype(out.dtype), out)
    return np.asarray(res.astype(out.dtype))


def _subnormal(a) -> np.ndarray:
    if a.dtype.kind != "f" and a.dtype != C.BF16:  # (bf16's kind is "V")
        return np.zeros(a.shape, bool)
    tiny = np.finfo(np.float32 if a.dtype.itemsize < 4 else a.dtype).tiny
    with np.errstate(all="ignore"):
        return (a != 0) & (np.abs(a.astype(np.float64)) < tiny)


def _grouped_conv(i: Instruction) -> bool:
    return i.opcode == "convolution" and i.attrs.get("feature_group_count", 1) > 1


def _batch_grouped_conv(i: Instruction) -> bool:
    return i.opcode == "convolution" and i.attrs.get("batch_group_count", 1) > 1


def _one_group(instr: Instruction, operands):
    """A grouped convolution as one ungrouped convolution whose kernel is block diagonal:
    (instruction copy, operands)."""
    import copy
    lhs, rhs = (np.asarray(o) for o in operands)
    dn = instr.attrs["dim_labels"]
    g = instr.attrs["feature_group_count"]
    ci, co = dn.kernel_input_feature, dn.kernel_output_feature
    per_in, per_out = rhs.shape[ci], rhs.shape[co] // g
    shape = list(rhs.shape)
    shape[ci] = per_in * g
    kernel = np.zeros(shape, rhs.dtype)
    for k in range(g):
        src = [slice(None)] * rhs.ndim
        dst = [slice(None)] * rhs.ndim
        src[co] = dst[co] = slice(k * per_out, (k + 1) * per_out)
        dst[ci] = slice(k * per_in, (k + 1) * per_in)
        kernel[tuple(dst)] = rhs[tuple(src)]
    one = copy.copy(instr)
    one.attrs = dict(instr.attrs, feature_group_count=1)
    return one, [lhs, kernel]


def _unsigned_indices(i: Instruction) -> bool:
    first = {"dynamic-slice": 1, "dynamic-update-slice": 2}.get(i.opcode)
    return first is not None and any(o.shape.element_type.name.startswith("u")
                                     for o in i.operands[first:])


def _unsigned_power(i: Instruction) -> bool:
    return i.opcode == "power" and i.shape.element_type.name.startswith("u")


def _minmax_reducer(i: Instruction) -> str | None:
    """"minimum" or "maximum" where i is a one-input float reduce whose reducer is that op
    of its two parameters, else None."""
    if i.opcode != "reduce" or len(i.operands) != 2 or not i.shape.is_array:
        return None
    if not i.shape.element_type.is_float:
        return None
    root = i.attrs["to_apply"].root
    if root.opcode not in ("minimum", "maximum") or any(
            o.opcode != "parameter" for o in root.operands):
        return None
    return root.opcode


class _NanDroppingMinMax(_Mimic):
    """Evaluates a float min- or max-reduce as XLA:CPU's vectorized reductions do when they
    drop NaNs (DEVIATIONS: "minmax-reduce-drops-nan"): NaN-ignoring, as np.fmin/np.fmax
    (a NaN only when every element and the initial value are NaN)."""

    def apply(self, rule, instr, operands):
        op = _minmax_reducer(instr) if self.on("minmax-reduce-drops-nan") else None
        if op is None:
            return super().apply(rule, instr, operands)
        x, init = (np.asarray(o) for o in operands)
        dims = tuple(instr.attrs.get("dimensions", ()))
        if self.on("minmax-fold:x86"):
            return _x86_minmax_fold(instr, x, init, dims, op)
        if self.on("minmax-fold:x86-nested"):
            return _x86_nested_fold(instr, x, init, dims, op)
        f = np.fmin if op == "minimum" else np.fmax
        wide = x.astype(np.float64)
        with np.errstate(all="ignore"):
            out = f.reduce(wide, axis=dims, initial=np.nan) if wide.size else \
                np.full(instr.shape.dims, np.nan)
            out = f(out, init.astype(np.float64))
        return np.array(np.asarray(out).astype(x.dtype).reshape(instr.shape.dims))


def _x86_minmax_fold(instr, x, init, dims, op):
    """The reduce folded in index order as x86's minps/maxps compute: acc = x[0], then
    acc = (acc < x[k]) ? acc : x[k] (a NaN on either side gives x[k]: a NaN element is
    kept until the next element replaces it), then the same with the init last. XLA's
    column min-reduce of a transposed f32[8,4,4,16,3] over its 4-long dim gives exactly
    that: [a, NaN, b, c] -> min(b, c), [a, b, c, NaN] -> the init (hlo 15007248)."""
    keep = [d for d in range(x.ndim) if d not in dims]
    xs = np.transpose(x, keep + sorted(dims)).reshape(
        tuple(x.shape[d] for d in keep) + (-1,)).astype(np.float64)
    pick = np.less if op == "minimum" else np.greater
    i0 = init.astype(np.float64)
    with np.errstate(all="ignore"):
        if xs.shape[-1] == 0:
            out = np.broadcast_to(i0, xs.shape[:-1])
        else:
            acc = xs[..., 0]
            for k in range(1, xs.shape[-1]):
                acc = np.where(pick(acc, xs[..., k]), acc, xs[..., k])
            out = np.where(pick(acc, i0), acc, i0)
    return np.array(np.asarray(out).astype(x.dtype).reshape(instr.shape.dims))


def _x86_nested_fold(instr, x, init, dims, op):
    """The reduce as two loops (XLA:CPU's reduce of a dot's output over several dims, hlo
    27002769): the innermost reduced dim folded from its first element with acc = (x > acc)
    ? x : acc (for max; < for min: a NaN element is skipped, a NaN first element stays),
    then those partials folded the same way into the init, in index order over the other
    reduced dims (a NaN partial is skipped: the slice that began with NaN drops out)."""
    keep = [d for d in range(x.ndim) if d not in dims]
    inner, outer = max(dims), sorted(d for d in dims if d != max(dims))
    xs = np.transpose(x, keep + outer + [inner]).astype(np.float64)
    xs = xs.reshape(tuple(x.shape[d] for d in keep) + (-1, x.shape[inner]))
    pick = np.greater if op == "maximum" else np.less
    with np.errstate(all="ignore"):
        acc = np.broadcast_to(init.astype(np.float64), xs.shape[:-2])
        if xs.shape[-1]:
            for o in range(xs.shape[-2]):
                part = xs[..., o, 0]
                for k in range(1, xs.shape[-1]):
                    part = np.where(pick(xs[..., o, k], part), xs[..., o, k], part)
                acc = np.where(pick(part, acc), part, acc)
    return np.array(np.asarray(acc).astype(x.dtype).reshape(instr.shape.dims))


def _one_index_scatter_of_slice(i: Instruction) -> bool:
    """A scatter of one operand with one index vector into a dynamic-slice: XLA's
    simplifier makes it a dynamic-update-slice whose read of the old window is a
    dynamic-slice of the dynamic-slice, which it then merges (_ScatterAsUpdateSlice)."""
    if i.opcode != "scatter" or len(i.operands) != 3 or i.operands[0].opcode != "dynamic-slice":
        return False
    if i.attrs.get("input_batching_dims") or i.attrs.get("scatter_indices_batching_dims"):
        return False
    idx = i.operands[1].shape
    ivd = i.attrs.get("index_vector_dim", idx.rank)
    return all(d == 1 for k, d in enumerate(idx.dims) if k != ivd)


class _ScatterAsUpdateSlice(_Mimic):
    """Evaluates a one-index scatter into a dynamic-slice as XLA:CPU computes it: a
    dynamic-update-slice of the slice, at the index clamped as dynamic-update-slice
    clamps, of select(in bounds, combine(old, update), old), where `old` is read as the
    merged slice of a slice reads it (slice-of-dynamic-slice-merged: from the inner
    operand x at clamp(clamp(inner start, 0, dim(x) - window) + index, 0, dim(x) -
    window), the sum in the index's type). Fitted to XLA's numbers (test_deviations.py):
    an out-of-bounds update, which HLO drops, writes x's elements at the unclamped index
    into the slice at the clamped one, and an inner start beyond dim(x) - slice size
    combines the update with elements from outside the slice."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self._slices: dict[int, list] = {}

    def apply(self, rule, instr, operands):
        if instr.opcode == "dynamic-slice":
            self._slices[id(instr)] = list(operands)
        if (not self.on("scatter-of-slice-as-update-slice")
                or not _one_index_scatter_of_slice(instr)
                or id(instr.operands[0]) not in self._slices):
            return super().apply(rule, instr, operands)
        from xlapy.hlo.evaluator.reduction import call_elementwise
        x, *inner = (np.asarray(o) for o in self._slices[id(instr.operands[0])])
        operand, indices, update = (np.asarray(o) for o in operands)
        a = instr.attrs
        vec = indices.reshape(-1)
        inserted = set(a.get("inserted_window_dims", ()))
        window_dims = sorted(a.get("update_window_dims", ()))
        free = [d for d in range(operand.ndim) if d not in inserted]
        window = [1] * operand.ndim
        for d, u in zip(free, window_dims):
            window[d] = update.shape[u]
        start = [np.zeros((), vec.dtype)] * operand.ndim
        for p, d in enumerate(a["scatter_dims_to_operand_dims"]):
            start[d] = vec[p]
        index = [int(s) for s in start]
        in_bounds = all(0 <= index[d] <= operand.shape[d] - window[d]
                        for d in range(operand.ndim))
        read = []
        for d in range(operand.ndim):
            hi = x.shape[d] - window[d]
            # (an index into a dimension that a slice spans whole can only be 0, and XLA
            # drops it: the inner start where the slice is all of x's dimension, the
            # scatter's index where the window is all of the slice's; hlo 18001564)
            base = 0 if operand.shape[d] == x.shape[d] else min(max(int(inner[d]), 0), hi)
            step = 0 if window[d] == operand.shape[d] else index[d]
            total = np.asarray(base + step).astype(vec.dtype)  # (wraps in its type)
            read.append(min(max(int(total), 0), hi))
        old = x[tuple(slice(r, r + w) for r, w in zip(read, window))]
        new = old
        if in_bounds:
            new = call_elementwise(self, instr.attrs["to_apply"],
                                   [old, update.reshape(window)])[0]
        at = [min(max(index[d], 0), operand.shape[d] - window[d]) for d in range(operand.ndim)]
        out = operand.copy()
        out[tuple(slice(s, s + w) for s, w in zip(at, window))] = new
        return out


def _scatter_bounds(i: Instruction):
    """[(index component, operand dim, dim - window)] of a scatter of one operand whose
    bound dim - window is beyond its (narrow integer) index type's range, else []."""
    if i.opcode != "scatter" or len(i.operands) != 3:
        return []
    idx_t = i.operands[1].shape.element_type
    if not idx_t.is_integer or idx_t.bits > 16:
        return []
    a = i.attrs
    rank = i.operands[0].shape.rank
    inserted = set(a.get("inserted_window_dims", ())) | set(a.get("input_batching_dims", ()))
    window_operand_dims = [d for d in range(rank) if d not in inserted]
    upd = i.operands[2].shape
    size = {d: upd.dims[ud] for d, ud in zip(window_operand_dims,
                                            a.get("update_window_dims", ()))}
    top = np.iinfo(idx_t.np_dtype).max
    out = []
    for k, d in enumerate(a.get("scatter_dims_to_operand_dims", ())):
        bound = i.operands[0].shape.dims[d] - size.get(d, 1)
        if bound > top:
            out.append((k, d, bound))
    return out


class _ScatterBoundInIndexType(_Mimic):
    """Evaluates a scatter as XLA:CPU does when its index type cannot hold dim - window:
    the bound is computed in the index type and wraps (224 in s8 is -32), so an index is
    in bounds only in [0, wrapped bound], none where that is negative; the others are
    dropped as out-of-bounds updates are. Measured (hlo 26007534, test_deviations.py)."""

    def apply(self, rule, instr, operands):
        bounds = _scatter_bounds(instr) if self.on("scatter-bound-in-index-type") else []
        if not bounds:
            return super().apply(rule, instr, operands)
        idx = np.asarray(operands[1])
        ivd = instr.attrs.get("index_vector_dim", idx.ndim)
        vec = np.moveaxis(idx, ivd, -1) if ivd < idx.ndim else idx[..., None]
        ok = np.ones(vec.shape[:-1], bool)
        for k, _, bound in bounds:
            wrapped = np.array(bound).astype(idx.dtype)
            ok &= (vec[..., k] >= 0) & (vec[..., k] <= wrapped)
        moved = np.where(ok[..., None], vec.astype(np.int64), np.int64(1) << 40)
        moved = np.moveaxis(moved, -1, ivd) if ivd < idx.ndim else moved[..., 0]
        return super().apply(rule, instr, [operands[0], moved, operands[2]])
