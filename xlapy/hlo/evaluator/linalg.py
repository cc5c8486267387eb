"""Interpreter rules for linear algebra: dot, convolution and cholesky.

Numerics (as XLA's CPU backend): operands are first converted to the instruction's output
element type (that is how preferred_element_type shows up in HLO), then
  - f32/f64 compute in their own type (BLAS through np.matmul);
  - f16/bf16 accumulate in f32 and round once at the end;
  - integer types wrap modulo 2^bits: computed in float64 when every partial sum is exactly
    representable (|a|max * |b|max * K < 2^53, fast BLAS), else in 64-bit integers; either
    way the result is then wrapped into the output type; pred is "any (a and b)".

dot(lhs, rhs): output dims = batch dims, lhs free dims (in order), rhs free dims (in order);
computed as one batched matmul of lhs transposed to [batch, free, contracting] and rhs to
[batch, contracting, free].

convolution(lhs, rhs), dim_labels, window, feature_group_count, batch_group_count:
  1. transpose lhs to [N, spatial.., C] and rhs to [spatial.., I, O]; flip the kernel along
     spatial dims with rhs_reversal;
  2. dilate the lhs spatially (lhs_dilate - 1 zeros between elements) and pad it (negative
     padding crops); padding and dilation holes add nothing (not even 0 * inf = NaN);
  3. split into G groups: feature groups split C (C = G*I) and O (O = G*Og); batch groups
     split N (N = G*Nb, contiguous chunks) and O; so x is [G, Nb, spatial.., Cg];
  4. for each kernel position k (kernel dilation rhs_dilate spaces them), the strided slice
     of x that position touches for every output position is a [G, Nb*out, Cg] matrix;
     acc[G, Nb*out, Og] += slice @ kernel[k] (batched matmul over G);
  5. reassemble to [Nb, out.., G*Og] and transpose to the output's dim_labels.

cholesky(a), lower (false when absent): for each matrix of the two minor dimensions, the
factor of the symmetric matrix read from the named triangle only (lower: a = L L^T, upper:
a = U^T U), the other triangle of the result zero; a matrix that is not positive definite
(or whose factor is not finite, e.g. from a NaN) gives a matrix of NaNs. As XLA:CPU does
(checked through jaxlib), computed in f64 and rounded (the most accurate reference).
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from xlapy.hlo.evaluator.evaluator import eval_rule
from xlapy.hlo.evaluator.numerics import round_float_result
from xlapy.hlo.evaluator.reduction import dilate_and_pad
from xlapy.errors import EvaluationError
from xlapy.hlo.attributes import Window

_LOW_PRECISION = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _max_abs(x: np.ndarray) -> int:
    if x.size == 0:
        return 0
    return max(abs(int(x.max())), abs(int(x.min())))


def _prepare(out_dtype: np.dtype, arrays, k: int):
    """Convert `arrays` to the output type, then to the compute type. Returns (compute
    arrays, finish) where finish(result) converts a computed result to the output type."""
    out_dtype = np.dtype(out_dtype)
    arrays = [a.astype(out_dtype, copy=False) for a in arrays]
    if out_dtype.kind == "c":  # complex: computed in the type itself, as XLA:CPU does
        return arrays, lambda r: r.astype(out_dtype, copy=False)
    if out_dtype.kind == "f" or out_dtype in _LOW_PRECISION:
        cdt = np.float64 if out_dtype == np.float64 else np.float32
        return [a.astype(cdt, copy=False) for a in arrays], \
            lambda r: round_float_result(r, out_dtype)
    if out_dtype == np.bool_:
        return [a.astype(np.int64) for a in arrays], lambda r: r != 0
    if out_dtype.kind in "iu":
        bound = math.prod(_max_abs(a) for a in arrays) * max(k, 1)
        if bound < 2 ** 53:
            return ([a.astype(np.float64) for a in arrays],
                    lambda r: np.rint(r).astype(np.int64).astype(out_dtype))
        wide = np.uint64 if out_dtype == np.uint64 else np.int64
        return [a.astype(wide) for a in arrays], lambda r: r.astype(out_dtype)
    raise TypeError(f"unsupported element type {out_dtype} for a dot/convolution")


def matmul_dims(lhs: np.ndarray, rhs: np.ndarray, lc, rc, lb, rb) -> np.ndarray:
    """dot_general of two arrays already in the compute type, as one batched matmul of lhs
    transposed to [batch, free, contracting] and rhs to [batch, contracting, free]: the
    result's dims are the batch dims, lhs's free dims, rhs's free dims (each in order)."""
    lc, rc, lb, rb = list(lc), list(rc), list(lb), list(rb)
    lf = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rf = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    batch = [lhs.shape[d] for d in lb]
    b, k = math.prod(batch), math.prod(lhs.shape[d] for d in lc)
    m, n = math.prod(lhs.shape[d] for d in lf), math.prod(rhs.shape[d] for d in rf)
    a = np.transpose(lhs, lb + lf + lc).reshape(b, m, k)
    c = np.transpose(rhs, rb + rc + rf).reshape(b, k, n)
    # no contracting dims, or one element contracted: the products themselves (a matmul
    # adds each to a +0, which turns a -0 product into +0; XLA computes these dots as a
    # multiply, and so does the cpu backend)
    r = a * c if k == 1 else np.matmul(a, c)
    return r.reshape(batch + [lhs.shape[d] for d in lf] + [rhs.shape[d] for d in rf])


def _dims(instr, key):
    return list(instr.attrs.get(key, ()))


@eval_rule("dot")
def _dot(ev, instr, operands):
    lhs, rhs = (np.asarray(o) for o in operands)
    lb, rb = _dims(instr, "lhs_batch_dims"), _dims(instr, "rhs_batch_dims")
    lc, rc = _dims(instr, "lhs_contracting_dims"), _dims(instr, "rhs_contracting_dims")
    if (len(lb) != len(rb) or len(lc) != len(rc)
            or [lhs.shape[d] for d in lb] != [rhs.shape[d] for d in rb]
            or [lhs.shape[d] for d in lc] != [rhs.shape[d] for d in rc]):
        raise EvaluationError(f"{instr.where()}dot batch/contracting dimensions do not match "
                              f"for lhs {list(lhs.shape)} and rhs {list(rhs.shape)}: {instr}")
    (a, c), finish = _prepare(instr.shape.dtype, [lhs, rhs],
                              math.prod(lhs.shape[d] for d in lc))
    return np.array(finish(matmul_dims(a, c, lc, rc, lb, rb)), order="C", copy=None)


def _conv_error(instr, what):
    return EvaluationError(f"{instr.where()}convolution: {what}: {instr}")


@eval_rule("convolution")
def _convolution(ev, instr, operands):
    lhs, rhs = (np.asarray(o) for o in operands)
    dn = instr.attrs["dim_labels"]
    ns = len(dn.input_spatial)
    w = instr.attrs.get("window")
    if w is None or (w.rank == 0 and ns == 0):
        w = Window.make((1,) * ns)
    if w.rank != ns or lhs.ndim != ns + 2 or rhs.ndim != ns + 2:
        raise _conv_error(instr, f"window rank {w.rank} and operand ranks {lhs.ndim}/"
                          f"{rhs.ndim} do not fit {ns} spatial dimensions")
    fgc = instr.attrs.get("feature_group_count", 1)
    bgc = instr.attrs.get("batch_group_count", 1)
    x = np.transpose(lhs, (dn.input_batch, *dn.input_spatial, dn.input_feature))
    k = np.transpose(rhs, (*dn.kernel_spatial, dn.kernel_input_feature,
                           dn.kernel_output_feature))
    n, c = x.shape[0], x.shape[-1]
    ksp, i_feat, o_feat = k.shape[:ns], k.shape[-2], k.shape[-1]
    if tuple(ksp) != tuple(w.size):
        raise _conv_error(instr, f"window size {list(w.size)} differs from the kernel's "
                          f"spatial dims {list(ksp)}")
    if fgc < 1 or bgc < 1 or (fgc > 1 and bgc > 1):
        raise _conv_error(instr, "group counts must be >= 1 and not both > 1")
    groups = max(fgc, bgc)
    if c != i_feat * fgc or o_feat % groups or n % bgc:
        raise _conv_error(instr, f"input features {c}, kernel features {i_feat}->{o_feat}, "
                          f"batch {n} do not fit feature_group_count={fgc}, "
                          f"batch_group_count={bgc}")
    (x, k), finish = _prepare(instr.shape.dtype, [x, k], i_feat * math.prod(ksp))
    reversed_axes = [d for d in range(ns) if w.rhs_reversal[d]]
    if reversed_axes:
        k = np.flip(k, axis=reversed_axes)
    # padding and the holes lhs dilation makes are not elements: they add nothing, even
    # times an infinite or NaN kernel element (as XLA computes); `real` marks the elements
    real = dilate_and_pad(np.ones(x.shape[1:-1], bool), w.pad_low, w.pad_high,
                          [d - 1 for d in w.lhs_dilate], False)
    x = dilate_and_pad(x, (0, *w.pad_low, 0), (0, *w.pad_high, 0),
                       (0, *(d - 1 for d in w.lhs_dilate), 0), 0)
    padded = x.shape[1:-1]
    out_sp = []
    for p, kk, s, rd in zip(padded, ksp, w.stride, w.rhs_dilate):
        eff = (kk - 1) * rd + 1
        out_sp.append((p - eff) // s + 1 if p >= eff and s > 0 else 0)
    nb, og = n // bgc, o_feat // groups
    if fgc > 1:  # [N, P.., G, Cg] -> [G, N, P.., Cg]
        x = np.moveaxis(x.reshape(*x.shape[:-1], fgc, i_feat), -2, 0)
    else:  # batch groups are contiguous chunks of the batch
        x = x.reshape(bgc, nb, *padded, c)
    kt = np.moveaxis(k.reshape(*ksp, i_feat, groups, og), -2, ns)  # [K.., G, I, Og]
    rows = nb * math.prod(out_sp)
    acc = np.zeros((groups, rows, og), x.dtype)
    if rows and og:
        for pos in np.ndindex(*ksp):
            sl = tuple(slice(q * rd, q * rd + (o - 1) * s + 1, s)
                       for q, rd, s, o in zip(pos, w.rhs_dilate, w.stride, out_sp))
            xs = x[(slice(None), slice(None)) + sl]
            product = np.matmul(xs.reshape(groups, rows, xs.shape[-1]), kt[pos])
            touched = real[sl]
            if not touched.all():
                rows_real = np.broadcast_to(touched, (nb, *out_sp)).reshape(rows)
                product = np.where(rows_real[None, :, None], product, 0)
            acc += product
    canon = np.moveaxis(acc.reshape(groups, nb, *out_sp, og), 0, -2).reshape(nb, *out_sp,
                                                                                o_feat)
    perm = [0] * (ns + 2)
    perm[dn.output_batch] = 0
    perm[dn.output_feature] = ns + 1
    for j, d in enumerate(dn.output_spatial):
        perm[d] = 1 + j
    return np.array(finish(np.transpose(canon, perm)), order="C", copy=None)


# ---- cholesky ----------------------------------------------------------------------------------

def cholesky(a: np.ndarray, lower: bool) -> np.ndarray:
    """XLA's cholesky on a float or complex array (shared with the frontend's eager
    cholesky): the factor of the Hermitian matrix whose `lower` (else upper) triangle is
    given, a = L L^H or U^H U; the other triangle is not read, and is zeros in the result."""
    a = np.asarray(a)
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    x = a.astype(wide)
    strict = np.tril(x, -1) if lower else np.triu(x, 1)
    diag = np.diagonal(x, 0, -2, -1).real   # (LAPACK reads the real part of the diagonal)
    sym = strict + np.conj(np.swapaxes(strict, -1, -2)) + diag[..., None] * np.eye(
        a.shape[-1])
    n = a.shape[-1]
    out = np.zeros(sym.shape, wide)
    if out.size == 0:
        return round_float_result(out, a.dtype)
    flat, res = sym.reshape(-1, n, n), out.reshape(-1, n, n)
    for k in range(flat.shape[0]):
        try:
            factor = np.linalg.cholesky(flat[k])  # lower: flat[k] = L L^H
        except np.linalg.LinAlgError:
            factor = np.full((n, n), np.nan)
        if not np.isfinite(factor).all():
            factor = np.full((n, n), np.nan)
        res[k] = factor if lower else np.conj(factor.T)
    return round_float_result(out, a.dtype)


@eval_rule("cholesky")
def _cholesky(ev, instr, operands):
    a = np.asarray(operands[0])
    if a.dtype.kind not in "fc" and a.dtype != ml_dtypes.bfloat16 or a.ndim < 2 \
            or a.shape[-1] != a.shape[-2]:
        raise EvaluationError(f"{instr.where()}cholesky needs square float or complex "
                              f"matrices, got {a.dtype}{list(a.shape)}: {instr}")
    return cholesky(a, bool(instr.attrs.get("lower", False)))
