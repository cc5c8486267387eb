"""Shape rules of structural and data-movement operations.

  parameter, custom-call      the declared shape
  constant                    the declared shape; the literal must match it (dtype and
                              dims, recursively for tuples) or be ELIDED ({...})
  iota                        declared array of rank >= 1, numeric type, iota_dimension < rank
  tuple / get-tuple-element   (s0, s1, ...) / the index-th element of a tuple operand
  copy, opt-barrier  the operand's shape
  bitcast                     declared array with the operand's byte size
  after-all                   token operands -> token[]
  broadcast                   declared output; dimensions[i] is the output dimension that
                              operand dimension i maps to, with exactly equal sizes
  reshape                     declared output with the same element count and type
  transpose                   out.dims[i] = operand.dims[dimensions[i]], a permutation
  slice                       ceil((limit - start) / stride) per dimension
  concatenate                 equal ranks/types, sizes add up along dimensions={d}
  pad                         lo + hi + size + max(size-1, 0) * interior per dimension
                              (lo/hi may be negative, interior may not, result >= 0)
  reverse                     the operand's shape; dimensions unique and in range
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo import attributes as A
from xlapy.hlo.literal import ELIDED
from xlapy.hlo.shape_context import (OpContext, check_dims_in_range, check_unique, fmt,
                                       is_scalar, shape_rule)
from xlapy.hlo.shapes import TOKEN, Shape


@shape_rule("parameter")
def parameter(op: OpContext) -> Shape:
    return op.need_declared()


@shape_rule("constant")
def constant(op: OpContext) -> Shape:
    declared = op.need_declared()
    _check_literal(op, op.literal, declared, "the literal")
    return declared


def _check_literal(op: OpContext, value, shape: Shape, where: str) -> None:
    if value is ELIDED:
        return
    if shape.is_tuple:
        if not isinstance(value, tuple) or len(value) != len(shape.tuple_shapes):
            raise op.fail(f"{where} must be a tuple of {len(shape.tuple_shapes)} values for "
                          f"shape {fmt(shape)}, got {type(value).__name__}")
        for i, (v, s) in enumerate(zip(value, shape.tuple_shapes)):
            _check_literal(op, v, s, f"{where} element {i}")
        return
    if shape.is_token:
        raise op.fail("a token cannot be a constant")
    if not isinstance(value, (np.ndarray, np.generic)):
        raise op.fail(f"{where} must be a NumPy array of {fmt(shape)}, got "
                      f"{type(value).__name__}")
    if value.dtype != shape.dtype or tuple(value.shape) != shape.dims:
        raise op.fail(f"{where} is a {value.dtype}{list(value.shape)} array but the shape is "
                      f"{fmt(shape)}")


@shape_rule("iota")
def iota(op: OpContext) -> Shape:
    d = op.declared_array()
    if d.rank == 0:
        raise op.fail("iota does not support scalars; the shape must have rank >= 1")
    if not (d.element_type.is_integer or d.element_type.is_float):
        raise op.fail(f"iota needs an integer or floating-point type, got {fmt(d)}")
    dim = op.int("iota_dimension")
    if not 0 <= dim < d.rank:
        raise op.fail(f"iota_dimension={dim} is out of range for {fmt(d)}")
    return d


@shape_rule("tuple")
def tuple_(op: OpContext) -> Shape:
    return Shape.tuple([s.without_layout() for s in op.shapes])


@shape_rule("get-tuple-element")
def get_tuple_element(op: OpContext) -> Shape:
    s = op.shapes[0]
    if not s.is_tuple:
        raise op.fail(f"the operand must be a tuple, got {fmt(s)}")
    i = op.int("index")
    if not 0 <= i < len(s.tuple_shapes):
        raise op.fail(f"index={i} is out of range for the {len(s.tuple_shapes)}-element tuple "
                      f"{fmt(s)}")
    return s.tuple_shapes[i].without_layout()


@shape_rule("copy", "opt-barrier")
def same_as_operand(op: OpContext) -> Shape:
    return op.shapes[0].without_layout()


@shape_rule("bitcast")
def bitcast(op: OpContext) -> Shape:
    s = op.array(0)
    d = op.declared_array()
    if d.byte_size != s.byte_size:
        raise op.fail(f"bitcast must keep the byte size: {fmt(s)} has {s.byte_size} bytes, "
                      f"{fmt(d)} has {d.byte_size}")
    return d


@shape_rule("after-all")
def after_all(op: OpContext) -> Shape:
    for i, s in enumerate(op.shapes):
        if not s.is_token:
            raise op.fail(f"operands must be tokens, operand {i} is {fmt(s)}")
    return Shape.array(TOKEN, ())


@shape_rule("broadcast")
def broadcast(op: OpContext) -> Shape:
    s = op.array(0)
    out = op.declared_array()
    dims = op.ints("dimensions")
    if out.element_type != s.element_type:
        raise op.fail(f"cannot change the element type: {fmt(s)} -> {fmt(out)}")
    if len(dims) != s.rank:
        raise op.fail(f"dimensions={_braces(dims)} must list one output dimension per operand "
                      f"dimension ({s.rank} for {fmt(s)})")
    check_dims_in_range(op, dims, out.rank, "dimensions")
    check_unique(op, dims, "dimensions")
    for i, d in enumerate(dims):
        if s.dims[i] != out.dims[d]:
            raise op.fail(f"operand dimension {i} has size {s.dims[i]} but output dimension {d} "
                          f"of {fmt(out)} has size {out.dims[d]} (they must be equal)")
    return out


@shape_rule("reshape")
def reshape(op: OpContext) -> Shape:
    s = op.array(0)
    out = op.declared_array()
    if out.element_type != s.element_type:
        raise op.fail(f"cannot change the element type: {fmt(s)} -> {fmt(out)}")
    if out.size != s.size:
        raise op.fail(f"cannot reshape {fmt(s)} ({s.size} elements) to {fmt(out)} "
                      f"({out.size} elements)")
    return out


@shape_rule("transpose")
def transpose(op: OpContext) -> Shape:
    s = op.array(0)
    perm = op.ints("dimensions")
    if sorted(perm) != list(range(s.rank)):
        raise op.fail(f"dimensions={_braces(perm)} is not a permutation of the {s.rank} "
                      f"dimensions of {fmt(s)}")
    return Shape.array(s.element_type, [s.dims[p] for p in perm])


@shape_rule("slice")
def slice_(op: OpContext) -> Shape:
    s = op.array(0)
    spec = op.typed("slice", A.SliceSpec, "a slice such as {[0:4], [1:3:2]}")
    if not len(spec.starts) == len(spec.limits) == len(spec.strides) == s.rank:
        raise op.fail(f"slice={spec} has {len(spec.starts)} ranges but the operand {fmt(s)} has "
                      f"rank {s.rank}")
    out = []
    for i, (lo, hi, st) in enumerate(zip(spec.starts, spec.limits, spec.strides)):
        if lo < 0:
            raise op.fail(f"slice={spec}: negative start {lo} in dimension {i}")
        if hi > s.dims[i]:
            raise op.fail(f"slice={spec}: limit {hi} exceeds size {s.dims[i]} of dimension {i} "
                          f"of {fmt(s)}")
        if lo > hi:
            raise op.fail(f"slice={spec}: start {lo} is greater than limit {hi} in dimension {i}")
        if st <= 0:
            raise op.fail(f"slice={spec}: stride {st} in dimension {i} must be positive")
        out.append((hi - lo + st - 1) // st)
    return Shape.array(s.element_type, out)


@shape_rule("concatenate")
def concatenate(op: OpContext) -> Shape:
    op.count_at_least(1, "the arrays to concatenate")
    shapes = op.arrays()
    dims = op.ints("dimensions")
    if len(dims) != 1:
        raise op.fail(f"dimensions={_braces(dims)} must name exactly one dimension")
    d = dims[0]
    first = shapes[0]
    if not 0 <= d < first.rank:
        raise op.fail(f"dimension {d} is out of range for {fmt(first)}")
    total = 0
    for i, s in enumerate(shapes):
        if s.rank != first.rank:
            raise op.fail(f"operands have different ranks: {fmt(first)} and operand {i} "
                          f"{fmt(s)}")
        if s.element_type != first.element_type:
            raise op.fail(f"operands have different element types: {fmt(first)} and operand "
                          f"{i} {fmt(s)}")
        for k in range(s.rank):
            if k != d and s.dims[k] != first.dims[k]:
                raise op.fail(f"operands may differ only in dimension {d}, but operand {i} "
                              f"{fmt(s)} differs from {fmt(first)} in dimension {k}")
        total += s.dims[d]
    out = list(first.dims)
    out[d] = total
    return Shape.array(first.element_type, out)


@shape_rule("pad")
def pad(op: OpContext) -> Shape:
    s, value = op.array(0), op.array(1, "the padding value")
    if not is_scalar(value):
        raise op.fail(f"the padding value must be a scalar, got {fmt(value)}")
    if value.element_type != s.element_type:
        raise op.fail(f"the padding value {fmt(value)} and the operand {fmt(s)} have different "
                      "element types")
    cfg = op.typed("padding", A.PaddingConfig, "a padding config such as 0_0x1_2")
    if len(cfg.lows) != s.rank:
        raise op.fail(f"padding={cfg} has {len(cfg.lows)} dimensions but the operand {fmt(s)} "
                      f"has rank {s.rank}")
    out = []
    for i, (lo, hi, it) in enumerate(zip(cfg.lows, cfg.highs, cfg.interiors)):
        if it < 0:
            raise op.fail(f"padding={cfg}: interior padding {it} in dimension {i} is negative")
        n = lo + hi + s.dims[i] + max(s.dims[i] - 1, 0) * it
        if n < 0:
            raise op.fail(f"padding={cfg} makes dimension {i} of {fmt(s)} negative ({n})")
        out.append(n)
    return Shape.array(s.element_type, out)


@shape_rule("reverse")
def reverse(op: OpContext) -> Shape:
    s = op.array(0)
    dims = op.ints("dimensions")
    check_dims_in_range(op, dims, s.rank, "dimensions")
    check_unique(op, dims, "dimensions")
    return s.without_layout()


def _braces(dims) -> str:
    return "{" + ",".join(map(str, dims)) + "}"
