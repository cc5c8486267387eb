"""Interpreter rules for data movement and structure: constant, iota, broadcast, reshape,
transpose, slice, concatenate, pad, reverse, copy, bitcast, tuple, get-tuple-element,
opt-barrier, after-all.

Values are in logical (row-major) index order, so only `bitcast` looks at layouts:
  bitcast   reinterprets the PHYSICAL element sequence.  The operand's elements are laid
            out by its layout (minor_to_major; row-major when the shape has none), and that
            sequence is read back with the output's dims and layout.  With equal dims and
            layouts it is the identity; f32[4,5]{1,0} -> f32[5,4]{0,1} is a transpose.
  broadcast `dimensions` maps operand dimension i to output dimension dimensions[i]; the
            other output dimensions are replicated.
  transpose output dimension i is operand dimension dimensions[i].
  pad       per dimension: `interior` pad values between adjacent elements, then `low`
            before and `high` after; negative low/high remove elements from that edge.
  iota      the index along iota_dimension, converted to the element type like `convert`.

Every rule returns a fresh array (no views of operands), so results never alias inputs.
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo.evaluator.elementwise import operand_arrays
from xlapy.hlo.evaluator.evaluator import eval_rule
from xlapy.hlo.evaluator.numerics import TOKEN, convert
from xlapy.errors import EvaluationError
from xlapy.hlo.ir import ELIDED


def _attr(instr, name: str):
    if name not in instr.attrs:
        raise EvaluationError(f"{instr.where()}{instr.opcode} needs the attribute {name}=: "
                              f"{instr}")
    return instr.attrs[name]


def _copy_value(v):
    if isinstance(v, tuple):
        return tuple(_copy_value(x) for x in v)
    if isinstance(v, np.ndarray):
        return v.copy()
    return v


# ---- structure -------------------------------------------------------------------------------

@eval_rule("constant")
def _constant(ev, instr, operands):
    lit = instr.literal
    if lit is ELIDED:
        raise EvaluationError(
            f"{instr.where()}constant {instr.name} was printed as {{...}}, so its value is "
            f"unknown; re-dump the module with large constants printed in full "
            f"(HloPrintOptions.print_large_constants, or XLA_FLAGS="
            f"--xla_dump_large_constants): {instr}")
    if lit is None:
        raise EvaluationError(f"{instr.where()}constant {instr.name} has no value: {instr}")
    return _copy_value(lit if isinstance(lit, tuple) else np.asarray(lit, instr.shape.dtype))


@eval_rule("iota")
def _iota(ev, instr, operands):
    shape = instr.shape
    dim = _attr(instr, "iota_dimension")
    if not shape.is_array or not 0 <= dim < shape.rank:
        raise EvaluationError(f"{instr.where()}iota_dimension={dim} is not a dimension of "
                              f"{shape}: {instr}")
    index = np.arange(shape.dims[dim], dtype=np.int64)
    index = index.reshape([-1 if d == dim else 1 for d in range(shape.rank)])
    return np.array(np.broadcast_to(convert(index, shape.dtype), shape.dims), order="C")


@eval_rule("tuple")
def _tuple(ev, instr, operands):
    return tuple(operands)


@eval_rule("get-tuple-element")
def _get_tuple_element(ev, instr, operands):
    (t,) = operands
    index = _attr(instr, "index")
    if not isinstance(t, tuple) or not 0 <= index < len(t):
        raise EvaluationError(f"{instr.where()}get-tuple-element index={index} is out of range "
                              f"for the operand of shape {instr.operands[0].shape}: {instr}")
    return t[index]


@eval_rule("copy")
def _copy(ev, instr, operands):
    return _copy_value(operands[0])


@eval_rule("opt-barrier")
def _optimization_barrier(ev, instr, operands):
    return operands[0]


@eval_rule("after-all")
def _after_all(ev, instr, operands):
    return TOKEN


@eval_rule("bitcast")
def _bitcast(ev, instr, operands):
    (x,) = operand_arrays(instr, operands)
    src, dst = instr.operands[0].shape, instr.shape
    if (not (src.is_array and dst.is_array)
            or src.size * x.itemsize != dst.size * dst.dtype.itemsize):
        raise EvaluationError(f"{instr.where()}bitcast from {src} to {dst} changes the size "
                              f"in bytes: {instr}")
    # Physical order: the dimensions from major to minor.
    src_major_to_minor = list(reversed(src.minor_to_major))
    physical = np.transpose(x, src_major_to_minor).reshape(-1)
    if dst.dtype != x.dtype:
        physical = np.asarray(physical, order="C").view(dst.dtype)
    dst_major_to_minor = list(reversed(dst.minor_to_major))
    out = physical.reshape([dst.dims[d] for d in dst_major_to_minor])
    return np.array(np.transpose(out, np.argsort(dst_major_to_minor)), order="C")


# ---- data movement ---------------------------------------------------------------------------

@eval_rule("broadcast")
def _broadcast(ev, instr, operands):
    (x,) = operand_arrays(instr, operands)
    dims = tuple(_attr(instr, "dimensions"))
    out_dims = instr.shape.dims
    if len(dims) != x.ndim or len(set(dims)) != len(dims) or not all(
            0 <= d < len(out_dims) and x.shape[i] in (1, out_dims[d]) for i, d in enumerate(dims)):
        raise EvaluationError(f"{instr.where()}broadcast dimensions={{{','.join(map(str, dims))}}}"
                              f" do not map operand shape {list(x.shape)} into "
                              f"{list(out_dims)}: {instr}")
    order = np.argsort(dims)  # operand dims in the order of their output dims
    x = np.transpose(x, order)
    mapped = sorted(dims)
    expanded = x.reshape([x.shape[mapped.index(d)] if d in mapped else 1
                          for d in range(len(out_dims))])
    return np.array(np.broadcast_to(expanded, out_dims), order="C")


@eval_rule("reshape")
def _reshape(ev, instr, operands):
    (x,) = operand_arrays(instr, operands)
    if x.size != instr.shape.size:
        raise EvaluationError(f"{instr.where()}reshape from {list(x.shape)} to "
                              f"{list(instr.shape.dims)} changes the element count: {instr}")
    return np.array(x.reshape(instr.shape.dims))


@eval_rule("transpose")
def _transpose(ev, instr, operands):
    (x,) = operand_arrays(instr, operands)
    perm = tuple(_attr(instr, "dimensions"))
    if sorted(perm) != list(range(x.ndim)):
        raise EvaluationError(f"{instr.where()}transpose dimensions={{{','.join(map(str, perm))}}}"
                              f" is not a permutation of 0..{x.ndim - 1}: {instr}")
    return np.array(np.transpose(x, perm), order="C")


@eval_rule("slice")
def _slice(ev, instr, operands):
    (x,) = operand_arrays(instr, operands)
    spec = _attr(instr, "slice")
    ok = len(spec.starts) == x.ndim and all(
        0 <= s <= l <= n and st >= 1
        for s, l, st, n in zip(spec.starts, spec.limits, spec.strides, x.shape))
    if not ok:
        raise EvaluationError(f"{instr.where()}slice={spec} does not fit operand shape "
                              f"{list(x.shape)}: {instr}")
    index = tuple(slice(s, l, st) for s, l, st in zip(spec.starts, spec.limits, spec.strides))
    return np.array(x[index])


@eval_rule("concatenate")
def _concatenate(ev, instr, operands):
    xs = operand_arrays(instr, operands)
    dims = _attr(instr, "dimensions")
    if len(dims) != 1 or not xs or not 0 <= dims[0] < xs[0].ndim:
        raise EvaluationError(f"{instr.where()}concatenate needs one dimension of the "
                              f"operands' rank: {instr}")
    return np.concatenate(xs, axis=dims[0])


@eval_rule("pad")
def _pad(ev, instr, operands):
    x, value = operand_arrays(instr, operands)
    cfg = _attr(instr, "padding")
    if len(cfg.lows) != x.ndim or any(i < 0 for i in cfg.interiors):
        raise EvaluationError(f"{instr.where()}padding={cfg} does not fit operand shape "
                              f"{list(x.shape)}: {instr}")
    if x.ndim == 0:
        return x.copy()
    src_index, dst_index, out_dims = [], [], []
    for n, lo, hi, interior in zip(x.shape, cfg.lows, cfg.highs, cfg.interiors):
        size = lo + hi + (n + (n - 1) * interior if n else 0)
        if size < 0:
            raise EvaluationError(f"{instr.where()}padding={cfg} gives a negative dimension "
                                  f"for operand shape {list(x.shape)}: {instr}")
        pos = lo + np.arange(n, dtype=np.int64) * (interior + 1)  # where each element lands
        keep = (pos >= 0) & (pos < size)
        src_index.append(np.nonzero(keep)[0])
        dst_index.append(pos[keep])
        out_dims.append(size)
    out = np.full(out_dims, value, dtype=x.dtype)
    out[np.ix_(*dst_index)] = x[np.ix_(*src_index)]
    return out


@eval_rule("reverse")
def _reverse(ev, instr, operands):
    (x,) = operand_arrays(instr, operands)
    dims = tuple(_attr(instr, "dimensions"))
    if not all(0 <= d < x.ndim for d in dims):
        raise EvaluationError(f"{instr.where()}reverse dimensions={{{','.join(map(str, dims))}}}"
                              f" are not dimensions of shape {list(x.shape)}: {instr}")
    return np.array(np.flip(x, axis=dims))
