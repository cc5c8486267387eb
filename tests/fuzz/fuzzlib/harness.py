"""Run one module on XLA and on xlapy's backends, and judge the differences.

Backends: "interpreter" (the reference evaluator), "cpu" (the default pipeline) and
"cpu-nofusion" (the cpu pipeline with every fusion pass disabled through
--xla_disable_hlo_passes, on a compiler of its own so that its in-memory cache never serves
the fused program); where asked for, "gpu" (a CUDA GPU) and "gpu-emulator" (the gpu's
kernels run on the host). The gpu keeps subnormals (as XLA:GPU does), so it is checked
with reference="interpreter-ieee": the interpreter's IEEE outputs are the reference, and
XLA:CPU (which flushes them) is not consulted.

Every module given here was accepted by XLA, so any error from xlapy is a failure: an
exception of xlapy's own type ("error") or any other ("crash"). A mismatch with XLA's
outputs (compare.py) is a failure unless it is explained:
  - the element is not determined by the program to the tolerance (compare.sensitivity);
  - the interpreter computes IEEE subnormals where compiled code flushes them (documented,
    README "Numerics"): the interpreter's flush-to-zero mode reproduces XLA;
  - XLA keeps a subnormal (IEEE) where xlapy's compiled code flushes it: XLA's value is the
    IEEE one and xlapy's the flushed one at every differing element (the interpreter in
    each mode tells); or XLA flushes a subnormal that xlapy's flushing semantics keep (a
    select, a broadcast), xlapy's value being the flushed program's;
  - the mismatch is against XLA's fast configuration only (xla.py);
  - a known departure of XLA from HLO semantics reproduces XLA (deviations.py).
"""

from __future__ import annotations

import dataclasses
import os
import traceback
from dataclasses import dataclass, field

import numpy as np

from xlapy.backends.base import flatten, get_platform
from xlapy.backends.cpu.compiler import CpuCompiler
from xlapy.errors import XlapyError
from xlapy.hlo.evaluator import Evaluator
from xlapy.hlo.evaluator.numerics import flush_denormals
from xlapy.hlo.parser import parse
from xlapy.hlo.shapes import F64, Shape

from fuzzlib import compare as C
from fuzzlib import deviations, xla

NOFUSION = ("fusion,row-fusion,column-fusion,gemm-epilogue-fusion,gemm-update-fusion")
BACKENDS = ("interpreter", "cpu", "cpu-nofusion")
GPU_BACKENDS = ("gpu", "gpu-emulator")
# the gpu backend's own refusals of what it does not lower yet (fft, LAPACK custom calls)
GPU_UNSUPPORTED = ("has no lowering for", "unsupported custom-call target")
_NOFUSION_COMPILER = CpuCompiler()


@dataclass
class Finding:
    kind: str          # "mismatch" | "error" | "crash" | "parse" (xlapy rejects valid text)
    backend: str
    detail: str
    outputs: list = field(default_factory=list)  # mismatching output indices

    def signature(self) -> str:
        return f"{self.kind}:{self.backend}:{self.detail.split(':')[0][:60]}"

    def __str__(self) -> str:
        return f"{self.kind} on {self.backend}: {self.detail}"


@dataclass
class Result:
    findings: list = field(default_factory=list)
    explained: dict = field(default_factory=dict)  # reason -> count of outputs
    skipped: str | None = None  # why the module was not checked (XLA rejected it, ...)
    reference: str = "xla"


def evaluate(module, inputs, flush: bool) -> list:
    with np.errstate(all="ignore"):
        return flatten(Evaluator(flush_denormals=flush).evaluate(module, list(inputs)))


def _largest_first(a, dims):
    """`a` with the elements along `dims` reordered by decreasing magnitude."""
    a = np.asarray(a)
    dims = sorted(dims)
    moved = np.moveaxis(a, dims, range(a.ndim - len(dims), a.ndim))
    kept = moved.shape[:a.ndim - len(dims)]
    flat = moved.reshape(kept + (-1,))
    with np.errstate(all="ignore"):
        order = np.argsort(-np.abs(flat.astype(np.float64)), axis=-1, kind="stable")
    flat = np.take_along_axis(flat, order, axis=-1)
    return np.moveaxis(flat.reshape(moved.shape), range(a.ndim - len(dims), a.ndim), dims)


def _f32_or_narrower(a) -> bool:
    dt = np.asarray(a).dtype
    return dt in (np.dtype(np.float32), np.dtype(np.float16), C.BF16)


def _dot_as_batched(instr, operands, dtype):
    """The dot's operands in `dtype` as [batch, m, k] and [batch, k, n] arrays (free and
    contracting dimensions flattened, in HLO's order) and (batch, m, k, n)."""
    lhs, rhs = (np.asarray(o, dtype) for o in operands)
    a = instr.attrs
    lb, rb = list(a.get("lhs_batch_dims", ())), list(a.get("rhs_batch_dims", ()))
    lc, rc = list(a.get("lhs_contracting_dims", ())), list(a.get("rhs_contracting_dims", ()))
    lf = [d for d in range(lhs.ndim) if d not in lb + lc]
    rf = [d for d in range(rhs.ndim) if d not in rb + rc]
    b = int(np.prod([lhs.shape[d] for d in lb], dtype=np.int64))
    k = int(np.prod([lhs.shape[d] for d in lc], dtype=np.int64))
    m = int(np.prod([lhs.shape[d] for d in lf], dtype=np.int64))
    n = int(np.prod([rhs.shape[d] for d in rf], dtype=np.int64))
    return (np.transpose(lhs, lb + lf + lc).reshape(b, m, k),
            np.transpose(rhs, rb + rc + rf).reshape(b, k, n), (b, m, k, n))


def _dot_unfused(instr, operands, dtype=np.float32):
    """The dot with every product and sum computed in `dtype`."""
    x, y, (b, m, k, n) = _dot_as_batched(instr, operands, dtype)
    x, y = x.reshape(b, m, k, 1), y.reshape(b, 1, k, n)
    with np.errstate(all="ignore"):
        out = (x * y).sum(axis=2, dtype=dtype)
        # (np.array, not ascontiguousarray: that makes a 0-d result 1-d)
        return np.array(out.reshape(instr.shape.dims), dtype=dtype)


def _dot_by_magnitude(instr, operands, descending: bool):
    """The dot with each product rounded to the compute type (f32 for f32 and narrower,
    f64 for f64) and the products of each output element summed one by one in order of
    magnitude, or None where that would take too much memory. A sum that cancels huge
    products (3.4e38 * a - 3.4e38 * a among small ones) is the small terms or 0 depending
    on whether the small ones come before or after the cancellation: the order of a dot's
    sum is the implementation's (XLA:CPU's bf16 batched dot gives 0 where index order
    gives 1.25, jax 22000206)."""
    dts = [np.asarray(o).dtype for o in operands]
    if not all(C.is_float(d) for d in dts):
        return None
    dtype = np.float64 if np.dtype(np.float64) in dts else np.float32
    x, y, (b, m, k, n) = _dot_as_batched(instr, operands, dtype)
    if k < 2 or b * m * n * k > 1 << 22:
        return None
    x = x.reshape(b, m, 1, k)
    y = y.reshape(b, 1, k, n).swapaxes(2, 3)
    with np.errstate(all="ignore"):
        prods = (x * y).astype(dtype)  # [b, m, n, k]
        key = np.nan_to_num(np.abs(prods), nan=np.inf)
        order = np.argsort(-key if descending else key, axis=-1, kind="stable")
        prods = np.take_along_axis(prods, order, axis=-1)
        acc = np.zeros(prods.shape[:-1], dtype)
        for i in range(k):
            acc = (acc + prods[..., i]).astype(dtype)
        return np.array(acc.reshape(instr.shape.dims), dtype=dtype)


class _UnfusedMatmul:
    """numpy, but with matmul computing each product rounded to the compute type before
    it is summed (no FMA): handed to the interpreter's convolution rule, which computes
    one matmul per kernel position, by _conv_unfused."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def matmul(a, b):
        with np.errstate(all="ignore"):
            return (a[..., :, :, None] * b[..., None, :, :]).sum(axis=-2)


def _conv_unfused(rule, instr, operands, apply):
    """The convolution computed by the interpreter's rule with unfused products, or None
    where that would take too much memory."""
    from xlapy.hlo.evaluator import linalg
    if instr.shape.size * max(np.asarray(operands[1]).size, 1) > 1 << 24:
        return None
    saved = linalg.np
    linalg.np = _UnfusedMatmul()
    try:
        return apply(rule, instr, operands)
    finally:
        linalg.np = saved


def _conv_wide_f64(rule, instr, operands, apply):
    """An f64 convolution computed by the interpreter's rule in x87 extended precision
    (64-bit mantissa, 15-bit exponent) and rounded once, or None where that would take
    too much time (NumPy's long double matmul is a plain loop)."""
    from xlapy.hlo.evaluator import linalg
    if instr.shape.size * max(np.asarray(operands[1]).size, 1) > 1 << 22:
        return None
    saved = linalg._prepare

    def extended(out_dtype, arrays, k):
        if np.dtype(out_dtype) != np.float64:
            return saved(out_dtype, arrays, k)
        return ([np.asarray(a, np.longdouble) for a in arrays],
                lambda r: np.asarray(r).astype(np.float64))

    linalg._prepare = extended
    try:
        with np.errstate(all="ignore"):
            return apply(rule, instr, operands)
    finally:
        linalg._prepare = saved


class _Reordered(Evaluator):
    """Evaluates every reduce with its inputs reordered along the reduced dimensions (reversed,
    or a single float input largest magnitude first), every f32 dot and convolution in f64
    and every f64 one in x87 extended precision ("wide"), or every dot and convolution with
    each product rounded before it is summed ("products", no FMA), or with every NaN that
    minimum, maximum, a reduction, a dot or a convolution returns made negative
    ("nan-negative") or positive ("nan-positive"), or with the results of approximated
    functions moved by 1 or 2 ulps ("ulp-out", "ulp-in", "ulp-out1", "ulp-in1", see
    APPROXIMATED), or with every one-input reduce folded in index order ("sequential") or in
    32 strided partials ("lanes"), or every reduce over several dimensions done a dimension
    at a time ("outer-first"): the order in which a reduction combines its elements is the
    implementation's (HLO asks for an associative, commutative reducer), so an element that
    changes with it (a sum that cancels, inf * 0 reached or not before an overflow) is not
    determined by the program. So is the sign bit of a NaN that these return: IEEE 754 (6.3)
    leaves a NaN result's sign unspecified, and XLA:CPU's depends on the operand order (its
    minimum(a, NaN) has the sign bits of both or-ed, maximum and-ed, minimum(NaN, a) is the
    NaN operand, so a min-reduce of [-1, NaN] is a negative NaN and of [NaN, -1] a positive
    one; x86 makes inf - inf a negative NaN and x + NaN the NaN operand, so a sum or dot
    with NaNs of both signs, or inf - inf and a NaN, takes the sign of whichever its order
    meets first), which a reduction's order is not bound to; only a TOTALORDER compare, sort
    or topk sees it."""

    def __init__(self, how: str, flush: bool = True):
        super().__init__(flush_denormals=flush)
        # "X+nan-canonical": variant X with a gpu's NaNs (an order that overflows to
        # inf - inf on the gpu gives its positive NaN: hlo 25100771)
        self.how, plus, rest = how.partition("+")
        self.canonical = plus and rest.startswith("nan-canonical")
        self.negative_nan = rest == "nan-canonical-negative" or how == "nan-canonical-negative"
        self.entry = None

    def evaluate(self, module, args):
        self.entry = module.entry
        return super().evaluate(module, args)

    def apply(self, rule, instr, operands):
        out = self._apply(rule, instr, operands)
        if self.canonical and instr.opcode not in NAN_BITS_KEPT:
            return _nan_canonical(out, self.negative_nan)
        return out

    def _apply(self, rule, instr, operands):
        if self.how == "wide" and instr.opcode in ("dot", "convolution") and all(
                _f32_or_narrower(o) for o in operands):
            # products and sums in f64, rounded once: whether a product overflows, or an
            # FMA keeps it, is the implementation's (inf - inf = NaN, or -inf); f16/bf16
            # operands too (XLA:CPU computes their dots in f32)
            import copy as _copy
            wide = _copy.copy(instr)
            wide.shape = Shape.array(F64, instr.shape.dims)
            with np.errstate(all="ignore"):
                out = super().apply(rule, wide, [np.asarray(o, np.float64) for o in operands])
                return np.asarray(np.asarray(out).astype(instr.shape.dtype))
        if self.how == "wide" and instr.opcode == "dot" and all(
                np.asarray(o).dtype == np.float64 for o in operands):
            # f64: products and sums in x87 extended precision (64-bit mantissa, 15-bit
            # exponent), rounded once: an FMA keeps a product beyond f64's range
            # (1.8e308 * 1.02 - inf is -inf, where the rounded product gives inf - inf)
            with np.errstate(all="ignore"):
                return np.asarray(_dot_unfused(instr, operands, np.longdouble)
                                  .astype(np.float64))
        if self.how == "wide" and instr.opcode == "convolution" and all(
                np.asarray(o).dtype == np.float64 for o in operands):
            # the same for an f64 convolution: -1.8e308 * 20.8 + 1.8e308 * 84.2 is NaN with
            # rounded products, -inf or +inf with FMAs in one order or the other (XLA -inf,
            # xlapy +inf: hlo 15000158), +inf exactly
            out = _conv_wide_f64(rule, instr, operands, super().apply)
            if out is not None:
                return out
        if self.how == "products" and instr.opcode == "dot" and all(
                _f32_or_narrower(o) for o in operands):
            # every product rounded to f32 before it is added (no FMA): a product that
            # overflows is inf, and inf + -inf = NaN where an FMA keeps the sum infinite
            with np.errstate(all="ignore"):
                out = _dot_unfused(instr, operands)
                return np.asarray(out.astype(instr.shape.dtype))
        if self.how == "products" and instr.opcode == "convolution" and all(
                _f32_or_narrower(o) or np.asarray(o).dtype == np.float64
                for o in operands):
            # the same for a convolution: XLA:CPU's bf16 convolution of 3.39e38 with
            # -16.25 and 20.375 is inf - inf = NaN, where an FMA (the interpreter's BLAS)
            # keeps the first product's -inf and exact arithmetic gives +inf (hlo 13000320)
            out = _conv_unfused(rule, instr, operands, super().apply)
            if out is not None:
                return out
        if self.how == "products" and instr.opcode == "dot" and all(
                np.asarray(o).dtype == np.float64 for o in operands):
            # f64 the same: each product rounded, summed in index order
            with np.errstate(all="ignore"):
                return np.asarray(_dot_unfused(instr, operands, np.float64))
        if self.how in ULP_STEPS or self.how in ULP_JITTERS:
            out = super().apply(rule, instr, operands)
            if instr.opcode in APPROXIMATED and instr.shape.is_array:
                if self.how in ULP_STEPS:
                    return _nudged(out, ULP_STEPS[self.how])
                size = np.asarray(out).size
                seed = int(self.how.removeprefix("ulp-jitter"))
                steps = np.random.default_rng(seed).integers(0, 2, size) * 2 - 1
                return _nudged(out, steps.reshape(np.shape(out)))
            return out
        if self.how in ("dot-ascending", "dot-descending") and instr.opcode == "dot":
            out = _dot_by_magnitude(instr, operands, self.how == "dot-descending")
            if out is not None:
                return np.asarray(out.astype(instr.shape.dtype))
        if self.how == "reversed" and instr.opcode == "reduce-window":
            out = self._reversed_window(rule, instr, operands)
            if out is not None:
                return out
        if self.how == "remainder-chaos" and instr.opcode == "remainder":
            out = super().apply(rule, instr, operands)
            return _remainder_chaos(instr, operands, out, self.entry)
        if self.how in ("nan-canonical", "nan-canonical-negative"):
            out = super().apply(rule, instr, operands)
            return (_nan_canonical(out, self.negative_nan)
                    if instr.opcode not in NAN_BITS_KEPT else out)
        if self.how in ("nan-negative", "nan-positive"):
            out = super().apply(rule, instr, operands)
            if _nan_sign_free(instr):
                return _nan_signed(out, self.how == "nan-negative")
            if instr.opcode in TWO_NAN_OPERANDS and len(operands) == 2:
                return _two_nan_signed(out, operands, self.how == "nan-negative")
            return out
        if self.how == "outer-first" and instr.opcode == "reduce":
            out = self._outer_first(instr, operands)
            if out is not None:
                return out
        if self.how in ("sequential", "lanes") and instr.opcode == "reduce":
            out = self._sequential(instr, operands, 32 if self.how == "lanes" else 1)
            if out is not None:
                return out
        if instr.opcode == "reduce":
            dims = tuple(instr.attrs.get("dimensions", ()))
            n = len(operands) // 2
            if dims and self.how == "reversed":
                operands = [np.flip(np.asarray(o), dims) for o in operands[:n]] + \
                    list(operands[n:])
            elif dims and n == 1 and C.is_float(np.asarray(operands[0]).dtype):
                operands = [_largest_first(operands[0], dims), operands[1]]
        return super().apply(rule, instr, operands)

    def _reversed_window(self, rule, instr, operands):
        """A one-input float reduce-window of stride 1 with every window summed in reverse
        order: computed on the operand flipped, its padding swapped, and flipped back (a
        cumsum's reduce-window: jax 24000716, a cumsum of a cumsum then a remainder)."""
        w = instr.attrs.get("window")
        if (len(operands) != 2 or w is None or not C.is_float(np.asarray(operands[0]).dtype)
                or any(s != 1 for s in w.stride) or any(d != 1 for d in w.lhs_dilate)):
            return None
        dims = tuple(d for d, n in enumerate(w.size) if n > 1)
        if not dims:
            return None
        saved = instr.attrs
        flipped = dataclasses.replace(
            w, pad_low=tuple(w.pad_high[d] if d in dims else w.pad_low[d]
                             for d in range(len(w.size))),
            pad_high=tuple(w.pad_low[d] if d in dims else w.pad_high[d]
                           for d in range(len(w.size))))
        instr.attrs = dict(saved, window=flipped)
        try:
            out = super().apply(rule, instr, [np.flip(np.asarray(operands[0]), dims),
                                              operands[1]])
        finally:
            instr.attrs = saved
        return np.ascontiguousarray(np.flip(np.asarray(out), dims))

    def _outer_first(self, instr, operands):
        """A one-input float reduce over several dimensions done one dimension at a time,
        the outermost first, each in index order (a reduce split into reduces of one
        dimension: a column sum, then a row sum: gpu fuzz jax 17000005), or None."""
        from xlapy.hlo.evaluator.reduction import call_elementwise
        dims = sorted(instr.attrs.get("dimensions", ()))
        x = np.asarray(operands[0]) if len(operands) == 2 else None
        if x is None or len(dims) < 2 or not C.is_float(x.dtype) or x.size > 1 << 16:
            return None
        comp = instr.attrs["to_apply"]
        with np.errstate(all="ignore"):
            for removed, d in enumerate(dims):
                axis = d - removed
                acc = np.broadcast_to(np.asarray(operands[1]),
                                      x.shape[:axis] + x.shape[axis + 1:])
                for k in range(x.shape[axis]):
                    acc = call_elementwise(self, comp, [acc, np.take(x, k, axis=axis)])[0]
                x = np.asarray(acc, dtype=x.dtype)
        return np.array(x, dtype=np.asarray(operands[0]).dtype)

    def _sequential(self, instr, operands, lanes: int = 1):
        """A one-input float reduce folded strictly in index order (the interpreter's own
        fold is a pairwise tree: a product whose pairs overflow to inf there meets a
        flushed zero, NaN, where a sequential product stays 0), or None. With `lanes` L >
        1 ("lanes"): element i folded into partial (i mod L) in index order, the partials
        then by a shuffle-down tree (partial i with i + half): a gpu block's threads
        striding over a row, then a warp's shuffles (a sum that cancels in f32, whose sign
        decides a conditional: gpu fuzz jax 17000264)."""
        from xlapy.hlo.evaluator.reduction import call_elementwise
        dims = sorted(instr.attrs.get("dimensions", ()))
        if len(operands) != 2 or not dims:
            return None
        x = np.asarray(operands[0])
        keep = [d for d in range(x.ndim) if d not in dims]
        m = int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
        if not C.is_float(x.dtype) or m == 0 or m > 4096:  # (bf16: kind "V")
            return None
        xs = np.transpose(x, keep + dims).reshape(tuple(x.shape[d] for d in keep) + (m,))
        acc = np.broadcast_to(np.asarray(operands[1]), xs.shape[:-1])
        comp = instr.attrs["to_apply"]
        with np.errstate(all="ignore"):
            if lanes > 1:
                parts = [acc] * min(lanes, m)
                for k in range(m):
                    parts[k % lanes] = call_elementwise(self, comp, [parts[k % lanes],
                                                                     xs[..., k]])[0]
                while len(parts) > 1:  # a shuffle-down tree: i with i + half
                    half = (len(parts) + 1) // 2
                    parts = [call_elementwise(self, comp, [parts[i], parts[i + half]])[0]
                             if i + half < len(parts) else parts[i] for i in range(half)]
                return np.array(parts[0], dtype=x.dtype)
            for k in range(m):
                acc = call_elementwise(self, comp, [acc, xs[..., k]])[0]
        return np.array(acc, dtype=x.dtype)


# Functions whose results implementations give to a few ulps (XLA's own tests allow that;
# its tanh is 1.0 at 8.3, where the rounded value is 1 - 2^-24; its f16 expm1 is up to 2
# f16 ulps off): the "ulp-out"/"ulp-in" variants move each nonzero result by 2 ulps of its
# own type away from or towards zero (never across it: an exact zero, sin(0) or
# atan2(0, 1), is exact everywhere), "ulp-out1"/"ulp-in1" by 1 (an equality compare flips
# at one value only: f16 expm1(0.001351) is x + 1 ulp rounded, x in XLA), so an element
# that such a change flips (a convert to an integer, a floor, a compare of tanh(x) near 1)
# is not determined by the program. sqrt, the arithmetic ops and conversions are correctly
# rounded: not here.
APPROXIMATED = ("exponential", "exponential-minus-one", "log", "log-plus-one", "logistic",
                "tanh", "sine", "cosine", "tan", "atan2", "power", "cbrt", "rsqrt", "erf")
ULP_STEPS = {"ulp-out": 2, "ulp-in": -2, "ulp-out1": 1, "ulp-in1": -1}
# ... and "ulp-jitter0".."ulp-jitter7" move each such result by 1 ulp up or down, the
# direction drawn per element (a fixed pattern per variant): two results that tie, or sit
# an ulp apart, then change their order, which a sort of them shows (hlo 29001772: a stable
# sort keyed by atan2(1, x) for x = +-1.4e-45, which XLA gives as pi/2 and 1 ulp below it,
# xlapy both as pi/2, so the payloads of the two keys trade places); a uniform step never
# reorders them.
ULP_JITTERS = tuple(f"ulp-jitter{k}" for k in range(8))


def _nudged(out, ulps):
    """out with every finite nonzero element's magnitude moved by `ulps` units in the last
    place of its own type, stopping at zero. f16/bf16 too: XLA computes their functions
    in f32 and rounds, or (f16 expm1) otherwise, and lands up to 2 ulps of the 16-bit type
    off the rounded value (measured over every finite f16 input), which a few f32 ulps
    before the rounding would rarely reach."""
    a = np.asarray(out)
    if a.dtype in (np.dtype(np.float16), C.BF16):
        return _nudged_16(a, ulps)
    if a.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        return out
    with np.errstate(all="ignore"):
        mag = np.abs(a)
        moved = np.copysign(np.maximum(mag + ulps * np.spacing(mag), 0), a).astype(a.dtype)
        return np.where(np.isfinite(a) & (a != 0), moved, a).astype(a.dtype)


def _nudged_16(a, ulps):
    """An f16/bf16 array with each finite nonzero magnitude moved by `ulps` ulps: the bit
    patterns of one sign are ordered like their magnitudes (sign-magnitude), so stepping
    the low 15 bits as an integer is exact ulp stepping, subnormals included. Clamped at
    0 (never across zero) and at the infinity pattern (past the largest finite value a
    result overflows, as a rounding would; never into the NaN patterns)."""
    bits = a.view(np.uint16)
    sign = bits & np.uint16(0x8000)
    mag = (bits & np.uint16(0x7FFF)).astype(np.int32)
    inf = int(np.array(np.inf, a.dtype).view(np.uint16))
    moved = np.clip(mag + ulps, 0, inf).astype(np.uint16) | sign
    finite = mag < inf
    return np.where(finite & (mag != 0), moved, bits).view(a.dtype).reshape(a.shape)


NAN_SIGN_FREE = ("minimum", "maximum", "dot", "convolution", "reduce", "reduce-window",
                 "scatter", "select-and-scatter")


def _nan_sign_free(instr) -> bool:
    """Whether the sign of a NaN that instr returns is the implementation's (see
    _Reordered). XLA's f32 and f16 log of a NaN takes a sign that depends on the shape
    (f32[1]: flipped, f32[3]: passed through, f32[2], [4], [8] ... negative; hlo
    14002262, measured in tests/fuzz/test_harness.py)."""
    return instr.opcode in NAN_SIGN_FREE or (
        instr.opcode == "log" and instr.shape.is_array
        and instr.shape.element_type.name in ("f32", "f16"))


# Binary arithmetic whose result, where both operands are NaN, is one of them chosen by the
# machine's operand order (x86 returns the first source, and LLVM commutes commutative
# operations), so its sign is the implementation's; one NaN operand passes through with
# its sign (hlo 20001183: x = -x * NaN in a loop, then a TOTALORDER compare)
TWO_NAN_OPERANDS = ("add", "subtract", "multiply", "divide", "remainder", "power", "atan2")


def _two_nan_signed(out, operands, negative: bool):
    a, b = (np.asarray(o) for o in operands)
    o = np.asarray(out)
    if o.dtype.kind != "f" and o.dtype != C.BF16:
        return out
    with np.errstate(invalid="ignore"):
        both = np.isnan(a.astype(np.float32)) & np.isnan(b.astype(np.float32))
    if not both.any():
        return out
    return np.where(both, _nan_signed(o, negative), o).astype(o.dtype)


def _on_nans(out, fix):
    """out (an array or a tuple of them) with fix(a, nan mask) where a float array holds
    NaNs (the rest as it is)."""
    if isinstance(out, (tuple, list)):
        return type(out)(_on_nans(o, fix) for o in out)
    a = np.asarray(out)
    if a.dtype.kind != "f" and a.dtype != C.BF16:
        return out
    with np.errstate(invalid="ignore"):
        nan = np.isnan(a.astype(np.float32))
    return fix(a, nan).astype(a.dtype) if nan.any() else out


def _nan_signed(out, negative: bool):
    """out (an array or a tuple of them) with the sign bit of every NaN set (negative) or
    cleared (idempotent: a reduce may apply its reducer and then itself be adjusted)."""
    return _on_nans(out, lambda a, nan: np.where(
        nan & (np.signbit(a.astype(np.float32)) != negative), -a, a))


# Instructions whose float results are bits moved from an operand (or its sign bit set or
# cleared): a NaN keeps its payload through them on every machine
NAN_BITS_KEPT = ("parameter", "constant", "copy", "bitcast", "bitcast-convert", "reshape",
                 "transpose", "broadcast", "slice", "dynamic-slice", "dynamic-update-slice",
                 "concatenate", "pad", "gather", "select", "tuple", "get-tuple-element",
                 "reverse", "negate", "abs", "sort", "iota", "while", "call", "conditional",
                 "opt-barrier", "fusion")


# the sensitivity's variants where a gpu backend is judged: its NaNs, alone and with the
# orders of summation whose overflow makes one
GPU_VARIANTS = tuple(f"{order}{nan}" for nan in ("nan-canonical", "nan-canonical-negative")
                     for order in ("", "wide+", "products+", "reversed+", "dot-ascending+",
                                   "dot-descending+"))


def _nan_canonical(out, negative: bool = False):
    """out (an array or a tuple of them) with every NaN made the type's positive (or
    negative) NaN with every payload bit set: NVIDIA GPUs return 0x7fffffff (f32) for any
    arithmetic with a NaN result, where x86 returns its negative default NaN (0xffc00000)
    for invalid operations and passes a NaN operand through with its sign and payload;
    libdevice's functions return NaNs of either sign (an f64 log of a negative number
    sorted before every number on an H100: hlo 25200197). A TOTALORDER compare, a sort
    or a top-k of such NaNs, or their bits, depend on which."""
    def canonical(a, nan):
        u = np.dtype(f"u{a.dtype.itemsize}")
        return np.where(nan, np.array(np.iinfo(u).max >> (0 if negative else 1), u)
                        .view(a.dtype), a)
    return _on_nans(out, canonical)


def _remainder_chaos(instr, operands, out, entry):
    """out with NaN where a float remainder's computed dividend is so large that a few of
    its ulps span the divisor: any rounding upstream (a sum in another order, one ulp of a
    variance) moves such a remainder anywhere in (-|y|, |y|), so it is not determined by
    the program (fuzz jax 21002206: 2.1e6 rem 0.00785, the dividend's ulp 0.25). The NaN
    makes the element, and whatever it flows into, unstable in the sensitivity; a dividend
    read from an entry parameter or a constant is exact everywhere and keeps its value.
    Where the dividend is at least 64 divisors large, the remainder is taken of the
    dividend moved by 16 of its ulps: its rounding error passes into the remainder whole,
    however small the remainder (jax 24000716: a cumsum of a cumsum, ~3e4, rem 30: XLA's
    order of summation moved it 0.02)."""
    x, y = (np.asarray(o) for o in operands)
    dividend = instr.operands[0]
    if not C.is_float(x.dtype) or dividend.opcode == "constant" or (
            dividend.opcode == "parameter" and dividend.parent is entry):
        return out
    import ml_dtypes
    eps = float(ml_dtypes.finfo(x.dtype).eps)
    with np.errstate(all="ignore"):
        x64, y64 = C._f64(x), C._f64(y)
        # (|x| eps is x's ulp to within a factor 2)
        chaos = np.isfinite(x64) & (8 * eps * np.abs(x64) >= np.abs(y64))
        moved = np.fmod(x64 + 16 * eps * np.abs(x64), y64)
        amplified = np.abs(x64) >= 64 * np.abs(y64)   # (elsewhere 16 ulps would hide bugs)
        out = np.where(np.isfinite(moved) & amplified,
                       moved.astype(out.dtype), out).astype(out.dtype)
    return np.where(chaos, np.array(np.nan, out.dtype), out) if chaos.any() else out


def evaluate_reordered(module, inputs, how: str, flush: bool = True) -> list:
    with np.errstate(all="ignore"):
        return flatten(_Reordered(how, flush).evaluate(module, list(inputs)))


def run_backend(backend: str, module, inputs) -> list:
    if backend == "interpreter":
        return get_platform("interpreter").compiler.compile(module).run_leaves(*inputs)
    if backend in GPU_BACKENDS:
        _GPU_USED.add(backend)
        exe = get_platform(backend).compiler.compile(module)
        return [np.asarray(v) for v in exe.run_leaves(*inputs)]
    if backend == "cpu":
        compiler = get_platform("cpu").compiler
    elif backend == "cpu-nofusion":
        compiler = _NOFUSION_COMPILER
    else:
        raise ValueError(backend)
    saved = os.environ.get("XLAPY_FLAGS")
    if backend == "cpu-nofusion":
        os.environ["XLAPY_FLAGS"] = f"{saved or ''} --xla_disable_hlo_passes={NOFUSION}"
    try:
        exe = compiler.compile(module)
    finally:
        if backend == "cpu-nofusion":
            if saved is None:
                os.environ.pop("XLAPY_FLAGS", None)
            else:
                os.environ["XLAPY_FLAGS"] = saved
    return exe.run_leaves(*inputs)


_GPU_USED: set = set()


def clear_caches() -> None:
    get_platform("cpu").compiler.clear_cache()
    _NOFUSION_COMPILER.clear_cache()
    for backend in _GPU_USED:
        get_platform(backend).compiler.clear_cache()


class _Context:
    """Lazily computed facts about one module shared by the explanations."""

    def __init__(self, module, text, inputs, expected, fast, use_xla=True, gpu=False):
        self.module, self.text, self.inputs = module, text, inputs
        self.gpu = gpu  # a gpu backend is judged: its NaNs are canonical (_nan_canonical)
        self.expected, self.fast, self.use_xla = expected, fast, use_xla
        self._sens = None
        self._ftz = None
        self._ieee = None
        self._default = None
        self._reruns = None

    def sensitivity(self):
        if self._sens is None:
            # (against XLA, whose compiled code flushes subnormals, as the flushing
            # interpreter computes; a gpu, judged against the IEEE interpreter, keeps them)
            flush = self.use_xla
            hows = ["reversed", "largest", "wide", "products", "nan-negative",
                    "nan-positive", *ULP_STEPS, *ULP_JITTERS, "sequential", "lanes",
                    "outer-first",
                    "remainder-chaos", *(GPU_VARIANTS if self.gpu else ()),
                    "dot-ascending", "dot-descending"]
            try:
                base = evaluate(self.module, self.inputs, flush)
                self._sens = C.sensitivity(
                    lambda xs: evaluate(self.module, xs, flush), self.inputs, base,
                    variants=[lambda xs, how=how: evaluate_reordered(self.module, xs, how,
                                                                     flush)
                              for how in hows])
            except Exception:  # the interpreter itself fails: nothing to widen
                self._sens = (None, None)
        return self._sens

    def ftz(self):
        if self._ftz is None:
            self._ftz = evaluate(self.module, self.inputs, True)
        return self._ftz

    def ieee(self):
        if self._ieee is None:
            self._ieee = evaluate(self.module, self.inputs, False)
        return self._ieee

    def xla_reruns(self, n: int = 3):
        """n more runs of XLA's default configuration (the cached executable)."""
        if not self.use_xla:
            raise xla.XlaRejected("XLA is not the reference here")
        if self._reruns is None:
            self._reruns = [self._run_default() for _ in range(n)]
        return self._reruns

    def default_xla(self):
        if self._default is None:
            self._default = self._run_default()
        return self._default

    def _run_default(self):
        """XLA's default configuration's outputs; an output it would crash on
        (xla.default_safe) keeps the first reference's value, so it cannot explain
        anything."""
        text, kept = xla.default_safe(self.module)
        outs = xla.run_text(self.text if kept is None else text, self.inputs, fast=False)
        if kept is None:
            return outs
        full = list(self.expected)
        for k, v in zip(kept, outs):
            full[k] = v
        return full


def _count(result: Result, reason: str) -> None:
    result.explained[reason] = result.explained.get(reason, 0) + 1


def _only(m) -> np.ndarray:
    return ~m.mask


def _explain(ctx: _Context, backend: str, actual: list, acc: list, result: Result):
    """The mismatches of `actual` that nothing explains (see the module docstring)."""
    expected = ctx.expected
    mism = C.compare(expected, actual, acc)
    if not mism:
        return []
    spreads, unstables = ctx.sensitivity()
    mism = C.compare(expected, actual, acc, spreads, unstables)
    if not mism:
        _count(result, "ill-conditioned")
        return []
    if not ctx.use_xla:
        # the IEEE interpreter is the reference (a gpu): XLA's departures and xlapy's cpu
        # flushing explain nothing here, only the program's own sensitivity does
        return mism
    try:
        default = ctx.default_xla() if ctx.fast else None
    except xla.XlaRejected:  # (XLA's default configuration cannot run it: no second view)
        default = None
    if default is not None:
        still = _in_both(mism, C.compare(default, actual, acc, spreads, unstables))
        if not still:
            _count(result, "xla-fast-mode")
            return []
        expected, mism = default, still
    left = []
    for m in mism:
        k = m.output
        if m.mask is not None and backend == "interpreter":
            # the interpreter computes IEEE subnormals (README, Numerics): explained where
            # XLA gives what the same program computes with denormals flushed
            # (XLA's two configurations disagree on the sign of the zero a flushed
            # subnormal gives in minimum/maximum, minimum(+0, -4.9e-324) being +0 in the
            # default one and -0 in the fast one and the flushing interpreter, hlo 13000443:
            # where both give a zero, either sign is XLA's)
            refs = [expected[k]]
            if ctx.expected is not expected:
                refs.append(_zero_signs_of(expected[k], ctx.expected[k]))
            if any(C.compare_leaf(k, ref, ctx.ftz()[k], acc[k], unstable=_only(m)) is None
                   or C.compare_leaf(k, ref, flush_denormals(actual[k]), acc[k],
                                     unstable=_only(m)) is None for ref in refs):
                # (or XLA's value is the interpreter's with its subnormals flushed: compiled
                # code moving bf16 through f32 flushes them even in a broadcast or a copy)
                _count(result, "interpreter-ieee-subnormals")
                continue
        elif m.mask is not None:
            # XLA keeps a subnormal here (a conversion on bits, libm's pow, IEEE constant
            # folding) where xlapy's compiled code flushes it as documented: explained where
            # XLA gives the IEEE value and xlapy the flushed one
            if (C.compare_leaf(k, expected[k], ctx.ieee()[k], acc[k], unstable=_only(m)) is None
                    and C.compare_leaf(k, ctx.ftz()[k], actual[k], acc[k],
                                       unstable=_only(m)) is None):
                _count(result, "xla-keeps-subnormals")
                continue
            if (C.compare_leaf(k, ctx.ftz()[k], actual[k], acc[k], unstable=_only(m)) is None
                    and C.compare_leaf(k, expected[k], flush_denormals(actual[k]), acc[k],
                                       unstable=_only(m)) is None):
                # the reverse: xlapy gives its documented value (the program computed with
                # denormals flushed) and XLA that value with a subnormal its own rewrites or
                # fusions flushed besides: a bf16 broadcast fused with arithmetic on the
                # same operand (hlo 15000244), select(a > b, a, b) simplified to maximum,
                # whose DAZ read of a subnormal a gives 0 (hlo 15002396)
                _count(result, "xla-flushes-a-kept-subnormal")
                continue
        reason = deviations.explain(ctx.module, ctx.inputs, expected, actual, m, acc)
        if reason is None and m.mask is not None:
            reason = _kept_subnormal_then_deviation(ctx, backend, expected, actual, m, acc)
        if reason is None and _xla_nondeterministic(ctx, backend, expected, actual, m, acc):
            reason = "xla-nondeterministic"
        if reason is None:
            left.append(m)
        else:
            _count(result, reason)
    return left


def _in_both(fast: list, default: list) -> list:
    """The mismatches with XLA's default configuration at elements that differ from its
    fast one too: an element xlapy computes as one of XLA's two configurations does is
    XLA's (hlo 16002668: reduce(x * broadcast(c), multiply) is inf in the fast
    configuration and the interpreter, finite in the default one, which takes the
    constant out of the product; the module was judged against the default one for
    another output)."""
    fast_masks = {m.output: m.mask for m in fast}
    out = []
    for m in default:
        if m.output not in fast_masks:
            continue
        fm = fast_masks[m.output]
        if m.mask is not None and fm is not None and m.mask.shape == fm.shape:
            mask = m.mask & fm
            if not mask.any():
                continue
            m = dataclasses.replace(m, mask=mask, count=int(mask.sum()))
        out.append(m)
    return out


def _kept_subnormal_then_deviation(ctx, backend, expected, actual, m, acc):
    """'xla-keeps-subnormals+<deviation>' where XLA's value is the program computed with IEEE
    subnormals and a known departure applied to that (jax 13007872: XLA's expm1 keeps a
    subnormal, then its atan2 of two subnormals is NaN), and xlapy's value is its own
    documented one (the interpreter's IEEE value, compiled code's flushed one)."""
    k = m.output
    own = ctx.ieee() if backend == "interpreter" else ctx.ftz()
    if C.compare_leaf(k, own[k], actual[k], acc[k], unstable=_only(m)) is not None:
        return None
    found = deviations.explain(ctx.module, ctx.inputs, expected, actual, m, acc, flush=False)
    return None if found is None else "xla-keeps-subnormals+" + found


def _zero_signs_of(default, fast):
    """XLA's default output with the sign of each zero that its fast configuration also
    gives as a zero taken from the fast one."""
    d, f = np.asarray(default), np.asarray(fast)
    if (d.dtype.kind != "f" and d.dtype != C.BF16) or d.shape != f.shape or d.dtype != f.dtype:
        return d
    return np.where((d == 0) & (f == 0), f, d).astype(d.dtype)


def _xla_nondeterministic(ctx, backend, expected, actual, m, acc) -> bool:
    """Whether XLA's value at every mismatching element changes from run to run of the same
    executable on the same inputs (seen: an f16 grouped convolution in a larger module gave
    2.5e-4, 4.4e-5 and -0.0139): XLA is then no reference there, and a compiled backend is
    judged against the interpreter instead (the interpreter itself has nothing to meet)."""
    k = m.output
    try:
        runs = ctx.xla_reruns()
    except xla.XlaRejected:
        return False
    e = np.asarray(expected[k])
    moved = np.zeros(e.shape, bool)
    for r in runs:
        r = np.asarray(r[k])
        with np.errstate(invalid="ignore"):
            moved |= ~((r == e) | (np.isnan(r.astype(np.float64)) & np.isnan(e.astype(np.float64)))
                       if C.is_float(e.dtype) else r == e)
    if not (m.mask & ~moved).sum() == 0:
        return False
    if backend == "interpreter":
        return True
    return C.compare_leaf(k, ctx.ftz()[k], actual[k], acc[k], unstable=~m.mask) is None


def check(text: str, inputs, backends=BACKENDS, fast: bool = True,
          expected: list | None = None, reference: str = "xla") -> Result:
    """Run the module on XLA (unless `expected` is given, or reference is
    "interpreter-ieee") and on `backends`; judge."""
    result = Result()
    try:
        module = parse(text)
    except XlapyError as e:
        result.findings.append(Finding("parse", "parser", f"{type(e).__name__}: {e}"))
        return result
    if reference not in ("xla", "interpreter-ieee"):
        raise ValueError(f"reference {reference!r}: 'xla' or 'interpreter-ieee'")
    if expected is None and reference == "interpreter-ieee":
        try:
            expected = evaluate(module, inputs, False)
        except XlapyError as e:
            result.findings.append(Finding("error", "interpreter", f"{type(e).__name__}: {e}"))
            return result
        result.reference = reference
        backends = [b for b in backends if b != "interpreter"]
    if expected is None and xla.unreliable(module):
        # XLA would die of SIGFPE, or computes it wrong (xla.miscomputes): the interpreter
        # (checked against XLA on every other module) is the reference for the compiled
        # backends
        try:
            expected = evaluate(module, inputs, True)
        except XlapyError as e:
            result.findings.append(Finding("error", "interpreter", f"{type(e).__name__}: {e}"))
            return result
        result.reference = "interpreter"
        backends = [b for b in backends if b != "interpreter"]
    if expected is None:
        try:
            expected = xla.run_text(text, inputs, fast=fast)
        except xla.XlaRejected as e:
            result.skipped = f"xla-rejected: {e}"
            return result
    else:
        fast = False
    acc = C.accumulated_outputs(module)
    ctx = _Context(module, text, inputs, expected, fast, use_xla=reference == "xla",
                   gpu=any(b in GPU_BACKENDS for b in backends))
    for backend in backends:
        try:
            actual = run_backend(backend, module, inputs)
        except XlapyError as e:
            if backend in GPU_BACKENDS and any(w in str(e) for w in GPU_UNSUPPORTED):
                _count(result, "gpu-unsupported")  # (documented: README's gpu section)
                continue
            result.findings.append(Finding("error", backend, f"{type(e).__name__}: {e}"))
            continue
        except Exception as e:
            tb = traceback.extract_tb(e.__traceback__)[-1]
            result.findings.append(Finding(
                "crash", backend, f"{type(e).__name__}: {str(e)[:300]} "
                                  f"(at {os.path.basename(tb.filename)}:{tb.lineno})"))
            continue
        left = _explain(ctx, backend, actual, acc, result)
        if left:
            result.findings.append(Finding("mismatch", backend,
                                           "; ".join(str(m) for m in left[:3]),
                                           [m.output for m in left]))
    return result
