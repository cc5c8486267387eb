"""Known departures of XLA:CPU (jaxlib 0.10.2) from HLO semantics, where xlapy keeps the
semantics (README, "Numerics").

Each entry names the instructions it concerns, says why XLA differs, and rewrites a copy of
the module into what XLA effectively computes. A mismatch is explained by an entry when the
reference interpreter, run on the rewritten module (with denormals flushed, as compiled
code runs), reproduces XLA's value at every mismatching element. Nothing else is excused:
an entry that does not reproduce XLA's numbers explains nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np

from xlapy.backends.base import flatten
from xlapy.hlo.evaluator import Evaluator
from xlapy.hlo.ir import Instruction
from xlapy.hlo.shapes import Shape

from fuzzlib import compare as C


@dataclass
class Deviation:
    name: str
    reason: str
    applies: Callable[[Instruction], bool]
    rewrite: Callable[[Instruction], None] | None  # on the copy's matching instruction
    evaluator: type | None = None  # evaluates as XLA does instead of a rewrite
    module_rewrite: Callable | None = None  # rewrites the whole copy (module) instead


def _conv_padded(i: Instruction) -> bool:
    w = i.attrs.get("window")
    return (i.opcode == "convolution" and w is not None
            and (any(w.pad_low) or any(w.pad_high) or any(d > 1 for d in w.lhs_dilate)))


def _materialize_padding(i: Instruction) -> None:
    """convolution(lhs, pad=p, lhs_dilate=d) -> convolution(pad(lhs, 0, p, interior d-1)):
    padding and holes become real zeros that the kernel multiplies."""
    from xlapy.hlo import attributes as A
    from xlapy.hlo.shape_inference import infer_shape
    comp = i.parent
    lhs = i.operands[0]
    dn = i.attrs["dim_labels"]
    w = i.attrs["window"]
    config = [(0, 0, 0)] * lhs.shape.rank
    for s, d in enumerate(dn.input_spatial):
        config[d] = (w.pad_low[s], w.pad_high[s], w.lhs_dilate[s] - 1)
    zero = comp.add_instruction(Instruction(
        "constant", Shape.array(lhs.shape.element_type, ()), (), name="dev.zero",
        literal=np.zeros((), lhs.shape.dtype)))
    attrs = {"padding": A.PaddingConfig(*map(tuple, zip(*config)))}
    shape = infer_shape("pad", [lhs.shape, zero.shape], attrs)
    pad = comp.add_instruction(Instruction("pad", shape, [lhs, zero], attrs, name="dev.pad"))
    i.replace_operand_with(lhs, pad)
    i.attrs = dict(i.attrs)
    n = len(w.size)
    i.attrs["window"] = dataclasses.replace(w, lhs_dilate=(1,) * n, pad_low=(0,) * n,
                                            pad_high=(0,) * n)


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
        elif instr.opcode == "select-and-scatter" and self.on("select-and-scatter-window-order"):
            # the window's positions visited with the last dimension outermost: the same
            # select-and-scatter on the operand and source transposed, dimensions reversed
            import copy as _copy
            operand, source, init = (np.asarray(o) for o in operands)
            perm = tuple(reversed(range(operand.ndim)))
            w = instr.attrs["window"]
            flipped = _copy.copy(instr)
            flipped.attrs = dict(instr.attrs, window=dataclasses.replace(
                w, **{f.name: tuple(reversed(getattr(w, f.name)))
                      for f in dataclasses.fields(w)}))
            flipped.shape = Shape.array(instr.shape.element_type,
                                        tuple(reversed(instr.shape.dims)))
            out = super().apply(rule, flipped, [operand.transpose(perm),
                                                source.transpose(perm), init])
            return np.ascontiguousarray(np.asarray(out).transpose(perm))
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
    """A gather of one index vector whose result is the slice itself (no batch dims: XLA
    turns it into a dynamic-slice)."""
    if i.opcode != "gather":
        return False
    idx = i.operands[1].shape
    ivd = i.attrs.get("index_vector_dim", idx.rank)
    if not all(d == 1 for k, d in enumerate(idx.dims) if k != ivd):
        return False
    kept = len(i.attrs["slice_sizes"]) - len(i.attrs.get("collapsed_slice_dims", ()))
    return i.shape.rank == kept and list(i.attrs.get("offset_dims", ())) == list(range(kept))


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
        dim_map = None  # the inner slice's dims -> x's dims (a gather drops collapsed ones)
        if inner.opcode == "gather":
            x, idx0 = (np.asarray(o) for o in self._inner[id(inner)])
            idx0 = idx0.reshape(-1)
            starts = [np.zeros((), idx0.dtype)] * x.ndim
            for p, d in enumerate(inner.attrs["start_index_map"]):
                starts[d] = idx0[p]
            isz = list(inner.attrs["slice_sizes"])
            collapsed = set(inner.attrs.get("collapsed_slice_dims", ()))
            dim_map = [d for d in range(x.ndim) if d not in collapsed]
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
            tiny = np.where(np.isinf(xb) & ~np.signbit(xb),
                            np.where(np.signbit(b), 0.0, np.inf), tiny)
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


def _constant_negative_zero(i: Instruction) -> bool:
    if i.opcode != "constant" or not i.shape.is_array or not i.shape.element_type.is_float:
        return False
    lit = np.asarray(i.literal)
    return bool((np.signbit(lit) & (lit == 0)).any())


def _positive_zeros(i: Instruction) -> None:
    lit = np.asarray(i.literal)
    i.literal = np.where(lit == 0, np.zeros((), lit.dtype), lit).astype(lit.dtype)


def _float_constant_divisor(i: Instruction):
    """divide(x, c) with c a float constant or a broadcast of one: the constant, or None."""
    if i.opcode != "divide" or not i.shape.is_array or not i.shape.element_type.is_float:
        return None
    d = i.operands[1]
    if d.opcode == "broadcast":
        d = d.operands[0]
    return d if d.opcode == "constant" else None


def _reciprocal_multiply(i: Instruction) -> None:
    c = _float_constant_divisor(i)
    lit = np.asarray(c.literal)
    with np.errstate(all="ignore"):
        inv = (np.ones((), np.float64) / lit.astype(np.float64)).astype(lit.dtype)
    comp = i.parent
    new = comp.add_instruction(Instruction("constant", c.shape, (), name="dev.inv",
                                           literal=inv))
    d = i.operands[1]
    if d.opcode == "broadcast":
        new = comp.add_instruction(Instruction("broadcast", d.shape, [new], d.attrs,
                                               name="dev.invb"))
    i.replace_operand_with(d, new)
    i.opcode = "multiply"


def _converted_pred(o: Instruction) -> Instruction | None:
    """The pred p where o is convert(p) or a broadcast of it, else None."""
    inner = o.operands[0] if o.opcode == "broadcast" else o
    if inner.opcode == "convert" and inner.operands[0].shape.element_type.is_pred:
        return inner.operands[0]
    return None


def _multiply_by_pred(i: Instruction) -> bool:
    """multiply(x, convert<float>(pred)) (either order; not bf16, which XLA computes in f32
    and does not rewrite)."""
    return (i.opcode == "multiply" and i.shape.is_array and i.shape.element_type.is_float
            and i.shape.element_type.name != "bf16"
            and any(_converted_pred(o) is not None for o in i.operands))


def _select_for_multiply(i: Instruction) -> None:
    """multiply(x, convert(p)) -> select(p, x, +0)."""
    comp = i.parent
    k = 1 if _converted_pred(i.operands[1]) is not None else 0
    factor, x = i.operands[k], i.operands[1 - k]
    p = _converted_pred(factor)
    if factor.opcode == "broadcast":
        p = comp.add_instruction(Instruction(
            "broadcast", Shape.array(p.shape.element_type, factor.shape.dims), [p],
            factor.attrs, name="dev.predb"))
    zero = comp.add_instruction(Instruction(
        "constant", Shape.array(i.shape.element_type, ()), (), name="dev.zero",
        literal=np.zeros((), i.shape.dtype)))
    zeros = comp.add_instruction(Instruction("broadcast", i.shape, [zero],
                                             {"dimensions": ()}, name="dev.zeros"))
    i.replace_operands([p, x, zeros])
    i.opcode = "select"


def _f16_logistic(i: Instruction) -> bool:
    return i.opcode == "logistic" and i.shape.element_type.name == "f16"


def _expand_logistic(i: Instruction) -> None:
    """logistic(x) -> 1 / (1 + exp(-x)), each op in the instruction's type."""
    comp = i.parent
    x = i.operands[0]
    et = i.shape.element_type
    one = comp.add_instruction(Instruction("constant", Shape.array(et, ()), (),
                                           name="dev.one", literal=np.ones((), i.shape.dtype)))
    ones = comp.add_instruction(Instruction("broadcast", i.shape, [one], {"dimensions": ()},
                                            name="dev.ones"))
    neg = comp.add_instruction(Instruction("negate", i.shape, [x], name="dev.neg"))
    exp = comp.add_instruction(Instruction("exponential", i.shape, [neg], name="dev.exp"))
    den = comp.add_instruction(Instruction("add", i.shape, [ones, exp], name="dev.den"))
    i.replace_operands([ones, den])
    i.opcode = "divide"


def _divide_by_quotient(i: Instruction) -> bool:
    return (i.opcode == "divide" and i.shape.is_array and i.shape.element_type.is_float
            and i.operands[1].opcode == "divide")


def _reassociate_divide(i: Instruction) -> None:
    """a / (b / c) -> (a * c) / b."""
    a, q = i.operands
    b, c = q.operands
    prod = i.parent.add_instruction(Instruction("multiply", i.shape, [a, c], name="dev.ac"))
    i.replace_operands([prod, b])


def _divide_by_power(i: Instruction) -> bool:
    return (i.opcode == "divide" and i.shape.is_array
            and i.operands[1].opcode == "power")


def _negative_power(i: Instruction) -> None:
    """a / pow(b, c) -> a * pow(b, -c)."""
    a, p = i.operands
    b, c = p.operands
    comp = i.parent
    neg = comp.add_instruction(Instruction("negate", c.shape, [c], name="dev.negc"))
    inv = comp.add_instruction(Instruction("power", p.shape, [b, neg], name="dev.pow"))
    i.replace_operands([a, inv])
    i.opcode = "multiply"


def _log_of_power(i: Instruction) -> bool:
    return (i.opcode == "log" and i.shape.is_array and i.operands[0].opcode == "power"
            and i.shape.element_type.is_float)


def _log_power_as_product(i: Instruction) -> None:
    """log(pow(a, b)) -> b * log(abs(a))."""
    a, b = i.operands[0].operands
    comp = i.parent
    mag = comp.add_instruction(Instruction("abs", a.shape, [a], name="dev.abs"))
    lg = comp.add_instruction(Instruction("log", i.shape, [mag], name="dev.log"))
    i.replace_operands([b, lg])
    i.opcode = "multiply"


_NARROW = ("f16", "bf16")


def _widenable(i: Instruction) -> bool:
    """An arithmetic instruction on f16/bf16 that XLA:CPU computes in f32."""
    from xlapy.hlo.opcodes import opinfo
    if not i.shape.is_array or not i.operands:
        return False
    kind = opinfo(i.opcode).category
    if kind not in ("unary", "binary") and i.opcode != "compare":
        return False
    if i.opcode in ("abs", "negate", "is-finite", "real", "imag"):
        return False
    types = {o.shape.element_type.name for o in i.operands if o.shape.is_array}
    return len(types) == 1 and types <= set(_NARROW)


def _has_narrow_arithmetic(module) -> bool:
    return any(_widenable(i) for c in module.computations for i in c.instructions)


def _excess_precision(module) -> None:
    """f16/bf16 arithmetic computed in f32 and rounded only where a narrow value is kept:
    each widenable op becomes convert<narrow>(op<f32>(...)), and convert<f32>(convert<
    narrow>(y)) of such a y is y itself (what XLA's SimplifyFPConversions removes). Calls
    are inlined first, as XLA does before it, so a chain running out of a called
    computation (JAX's nested jit functions) is seen whole."""
    from xlapy.hlo.shapes import F32
    from xlapy.passes.inliner import CallInliner
    CallInliner().run(module)
    for comp in module.computations:
        wide: dict[int, Instruction] = {}
        for instr in comp.post_order():
            if _widenable(instr):
                ops = []
                for o in instr.operands:
                    w = wide.get(id(o))
                    if w is None:
                        w = comp.add_instruction(Instruction(
                            "convert", Shape.array(F32, o.shape.dims), [o]))
                    ops.append(w)
                shape = instr.shape
                if shape.element_type.name in _NARROW:
                    shape = Shape.array(F32, shape.dims)
                w = comp.add_instruction(Instruction(instr.opcode, shape, ops, instr.attrs))
                if w.shape is shape and instr.shape.element_type.name in _NARROW:
                    back = comp.add_instruction(Instruction("convert", instr.shape, [w]))
                    instr.replace_all_uses_with(back)
                    wide[id(back)] = w
                else:
                    instr.replace_all_uses_with(w)
            elif (instr.opcode == "convert" and instr.shape.element_type is F32
                  and id(instr.operands[0]) in wide):
                instr.replace_all_uses_with(wide[id(instr.operands[0])])


DEVIATIONS = [
    Deviation(
        "constant-negative-zero",
        "XLA:CPU gives +0 for the -0 elements of a constant (jax.jit(lambda x: x * "
        "np.float32([-0.0]))(1.0) is +0), so 1/c, copysign and atan2 of them take the "
        "other sign; HLO's constant is -0, as xlapy keeps it",
        _constant_negative_zero, _positive_zeros),
    Deviation(
        "pow-of-subnormal-base",
        "XLA:CPU's pow runs glibc's pow/powf with denormals flushed, whose normalization of "
        "a subnormal base multiplies it by 2^23 into a zero, so every subnormal base reads "
        "as 2^-150 (f64: 2^-1075): pow(4e-45, 1e-4) is 0.98835, not 0.98855; xlapy's "
        "compiled code reads the base as zero (0.0), the interpreter as IEEE. A subnormal "
        "exponent is not zero to it either: pow(-2, 4e-45) is NaN (xlapy: pow(-2, 0) = 1)",
        _float_power, None, _AsXla),
    Deviation(
        "divide-by-constant-as-reciprocal",
        "XLA's simplifier rewrites x / c for a constant c as x * (1 / c), with 1 / c rounded "
        "to the type: a rounding more (f16: 2 ulps off, -47.66 for -47.72), and 1/c may "
        "overflow or flush where x / c would not; HLO divides, as xlapy does",
        lambda i: _float_constant_divisor(i) is not None, _reciprocal_multiply),
    Deviation(
        "clz-folded-negative",
        "XLA's constant folding counts the leading zeros of a negative signed integer as "
        "bits - 1 - 63 (it takes log2 of the value widened to 64 bits): clz(-1) is -32 in "
        "s32 where its operand folds to a constant (a reduce over a size-0 dimension, a "
        "constant); HLO counts the zeros of the value's own bits (0), as xlapy does",
        lambda i: i.opcode == "count-leading-zeros"
        and i.shape.element_type.name[0] == "s", None, _AsXla),
    Deviation(
        "cbrt-of-subnormal",
        "XLA:CPU's f32 cbrt gives -2^(-152/3) = -5.595e-16 for every subnormal argument, "
        "positive or negative (its exponent split does not normalize subnormals, and its "
        "sign comes from the garbage); xlapy reads the subnormal as zero (cbrt +-0) in "
        "compiled code, the interpreter as IEEE",
        _f32_cbrt, None, _AsXla),
    Deviation(
        "log-of-subnormal",
        "XLA:CPU's f32 log (its default, MLIR-emitted one) splits the argument into "
        "exponent and mantissa without normalizing a subnormal, which reads as 2^-150 with "
        "denormals flushed: log(5.9e-39) is -103.972 for every positive subnormal and NaN "
        "for a negative one (IEEE: -88.03; XLA's fast configuration and xlapy's compiled "
        "code read it as zero: -inf; the interpreter computes IEEE)",
        _f32_log, None, _AsXla),
    Deviation(
        "multiply-by-converted-pred",
        "XLA's simplifier rewrites x * convert(p) for a pred p (f16/f32/f64) as "
        "select(p, x, 0), so inf * 0 and NaN * 0 are 0 instead of NaN and -2 * 0 is +0 "
        "instead of -0 (jnp.var of a NaN, compared with itself, times that: 0, not NaN); "
        "HLO multiplies, as xlapy does",
        _multiply_by_pred, _select_for_multiply),
    Deviation(
        "select-and-scatter-window-order",
        "XLA:CPU's default select-and-scatter visits the positions of some windows with the "
        "last dimension outermost (seen with padding in the last dimension and a window "
        "two wide in it: 2x2, 3x2), so among equal candidates a select like GE keeps "
        "another one: x = [[2,1,0,3],[2,3,3,1]], a 2x2 window padded 0_0x0_1 over columns "
        "2-3 gives the source to (1,2); HLO calls select with the lexicographically first "
        "index first and GE keeps (0,3), as xlapy and XLA's fast configuration do. An "
        "entry reproducing only the column-major visit: other orders stay findings",
        lambda i: i.opcode == "select-and-scatter", None, _AsXla),
    Deviation(
        "abs-of-square-dropped",
        "XLA's simplifier drops abs(x * x), taking a square to be non-negative, which a "
        "wrapping signed integer product need not be: in s8, 12 * 12 wraps to -112 and "
        "abs gives 112 (jnp.abs(x ** 2)); XLA returns -112",
        lambda i: i.opcode == "abs" and not i.shape.element_type.is_float
        and i.operands[0].opcode == "multiply"
        and i.operands[0].operands[0] is i.operands[0].operands[1],
        lambda i: setattr(i, "opcode", "copy")),
    Deviation(
        "f16-logistic-expanded",
        "XLA computes an f16 logistic as 1 / (1 + exp(-x)) with every op rounded to f16, "
        "so exp(-x) overflows for x < -11.09 and the result is 0 (logistic(-16.6) is "
        "6.2e-8, the f16 subnormal 6e-8), and 1 + exp(-x) loses digits near 0 (x = -10.4: "
        "3.0518e-5 for 3.0458e-5); xlapy rounds the function's value once",
        _f16_logistic, _expand_logistic),
    Deviation(
        "divide-by-quotient-reassociated",
        "XLA's simplifier rewrites a / (b / c) as (a * c) / b: another rounding (x / (x / x) "
        "is x + 1 ulp for x = 0.78687984, so x / (x / x) <= x is false) and another "
        "overflow (a * c may overflow where b / c does not: NaN for 0); HLO divides twice, "
        "as xlapy does",
        _divide_by_quotient, _reassociate_divide),
    Deviation(
        "divide-by-power-as-negative-power",
        "XLA's simplifier rewrites a / pow(b, c) as a * pow(b, -c): for integers pow(b, -c) "
        "is 0 (b > 1), so 100 / 2^3 is 0 (HLO: 12), and a divisor pow(0, 2) = 0 gives 0 "
        "instead of HLO's x / 0 = -1; for floats one rounding more (33.333336 for "
        "100 / 3^1); HLO divides, as xlapy does",
        _divide_by_power, _negative_power),
    Deviation(
        "log-of-power-as-product",
        "XLA's simplifier rewrites log(pow(a, b)) as b * log(abs(a)): log(pow(-2.95, 1)) is "
        "1.0823 instead of log(-2.95) = NaN, and the product rounds differently (1 ulp); "
        "HLO takes the log of the power, as xlapy does",
        _log_of_power, _log_power_as_product),
    Deviation(
        "excess-precision",
        "XLA:CPU computes f16/bf16 arithmetic in f32 and, with excess precision allowed "
        "(xla_allow_excess_precision, on by default), removes the f32->bf16->f32 rounding "
        "between such ops, so a chain of them rounds once at its end (x * 1.55 * 0.43 in f16 "
        "does not overflow for x = -65504) and convert<f32>(pow<bf16>) keeps the f32 value; "
        "HLO rounds every op's result to its type, as xlapy does",
        _widenable, None, None, _excess_precision),
    Deviation(
        "grouped-conv-nan-across-groups",
        "XLA:CPU computes a convolution with feature groups as one convolution over all "
        "input features with a block-diagonal kernel, so an inf or NaN input feature times "
        "the zeros of the other groups' blocks makes their outputs NaN; HLO's groups read "
        "only their own features, as xlapy computes them",
        _grouped_conv, None, _AsXla),
    Deviation(
        "batch-grouped-conv-nan-across-groups",
        "XLA:CPU computes a convolution with batch groups as one over every batch group and "
        "every group's kernel and keeps each output feature's own part (the rest times "
        "zero), so an inf or NaN in one group's kernel or batch makes the other groups' "
        "outputs NaN; HLO's output features read only their own batch group and kernel, as "
        "xlapy computes them",
        _batch_grouped_conv, None, _AsXla),
    Deviation(
        "atan2-of-two-subnormals",
        "XLA:CPU's atan2 divides y by x: with both subnormal (read as zeros) that is 0/0 and "
        "gives NaN, where its tests for zero operands see nonzero values; atan2(+-0, +-0) is "
        "+-0 or +-pi, what xlapy gives with denormals read as zero; and with y subnormal "
        "and x negative its quadrant test reads y as zero but not as +0, giving -pi for "
        "either sign of y (xlapy: +pi for +0, the flushed positive subnormal); a "
        "subnormal y over a zero x (f64: or a subnormal one, which it reads as zero) gives "
        "+-pi/2 (xlapy: atan2(+-0, +-0), 0 or pi); f32 atan2(y, 1) is y unflushed "
        "(atan2(4e-45, 1) = 4e-45; xlapy: 0). The -pi for either sign of y is f64's; f32 "
        "gives +-pi by y's sign, as xlapy",
        lambda i: i.opcode == "atan2", None, _AsXla),
    Deviation(
        "unsigned-start-index-read-signed",
        "XLA's simplifier, turning a dynamic-slice or dynamic-update-slice with constant "
        "start indices into a slice, reads an unsigned constant index as signed (u8 255 is "
        "-1, clamped to 0; XLA reads the same index given as a parameter as 255); HLO's "
        "indices are values of their type (255, clamped to dim - size), as xlapy reads them",
        _unsigned_indices, None, _AsXla),
    Deviation(
        "unsigned-exponent-read-signed",
        "XLA:CPU's integer power tests the exponent for `< 0` on its bits as a signed "
        "integer, so an unsigned exponent with the top bit set (u8 200) gives 0 (1 for "
        "base 1) instead of the wrapped product of repeated multiplication (3^200 mod 256 = "
        "161), which xlapy computes",
        _unsigned_power, None, _AsXla),
    Deviation(
        "slice-of-dynamic-slice-merged",
        "XLA's simplifier merges a dynamic-slice (or a one-index gather) of a dynamic-slice "
        "into one dynamic-slice of the inner operand at the sum of the starts (the inner "
        "one clamped for the outer slice's size, the sum wrapping in the outer index's "
        "type), clamped against the inner operand only: x = [-5,-11,-12,9,11], a 2-wide "
        "slice at 0 read at 4 gives x[4] = 11; HLO clamps the outer start against the "
        "2-wide slice (-11), as xlapy does",
        _sliced_slice, None, _MergedSlices),
    Deviation(
        "conv-padding-multiplied",
        "XLA:CPU runs many convolutions through Eigen (and rewrites one with both lhs "
        "dilation and a window stride) with the padding and the lhs-dilation holes made "
        "real zeros, so an infinite or NaN kernel element times padding gives NaN; HLO, and "
        "XLA's own elemental emitter for the other convolutions, add nothing for them",
        _conv_padded, _materialize_padding),
]


def _evaluate(module, inputs, evaluator=Evaluator, active=()):
    with np.errstate(all="ignore"):
        ev = evaluator(flush_denormals=True, active=active) if active else \
            evaluator(flush_denormals=True)
        return flatten(ev.evaluate(module, list(inputs)))


def _mimic(module, inputs, devs):
    """The module's outputs with the deviations `devs` (and their instruction names)
    applied, as the flushing interpreter computes them."""
    copy = module.clone()
    evaluators = []
    for dev, names in devs:
        if dev.module_rewrite is not None:
            dev.module_rewrite(copy)
        elif dev.rewrite is not None:
            for c in copy.computations:
                for i in list(c.instructions):
                    if i.name in names:
                        dev.rewrite(i)
        if dev.evaluator is not None and dev.evaluator not in evaluators:
            evaluators.append(dev.evaluator)
    if not evaluators:
        return _evaluate(copy, inputs)
    # (several: one class with each one's apply, cooperatively through super())
    evaluator = evaluators[0] if len(evaluators) == 1 else type(
        "_Combined", tuple(evaluators), {})
    return _evaluate(copy, inputs, evaluator, [dev.name for dev, _ in devs])


def explain(module, inputs, expected, actual, mismatch, acc):
    """The name of the known deviation that explains `mismatch` (several joined by "+"
    when only all of those that apply together do), or None."""
    if mismatch.mask is None:
        return None
    # XLA inlines calls before its simplifier runs, so a departure that needs to see a
    # constant (x / c, made inside a called computation that JAX emits for a nested jit
    # function) or a whole chain is judged on the inlined module
    from xlapy.passes.inliner import CallInliner
    module = module.clone()
    CallInliner().run(module)
    applicable = []
    for dev in DEVIATIONS:
        names = {i.name for c in module.computations for i in c.instructions
                 if dev.applies(i)}
        if names:
            applicable.append((dev, names))
    tries = [[a] for a in applicable]
    if len(applicable) > 1:
        tries.append(applicable)
    k = mismatch.output
    for devs in tries:
        try:
            mimic = _mimic(module, inputs, devs)
        except Exception:
            continue
        leaf = C.compare_leaf(k, expected[k], mimic[k], acc[k], unstable=~mismatch.mask)
        if leaf is None:
            return "+".join(dev.name for dev, _ in devs)
    return None
