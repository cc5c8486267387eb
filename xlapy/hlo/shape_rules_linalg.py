"""Shape rules of dot, convolution and cholesky (XLA's InferDotOpShape, InferConvolveShape
and InferCholeskyShape).

dot(lhs, rhs) with lhs/rhs_batch_dims and lhs/rhs_contracting_dims: the result dims are
the batch dims (in lhs_batch_dims order), then lhs's remaining dims, then rhs's remaining
dims (each in ascending order). Batch and contracting sizes must match pairwise.

convolution(lhs, rhs), window, dim_labels (ConvDimensionNumbers), feature_group_count,
batch_group_count: with F = feature_group_count and B = batch_group_count (not both > 1),
  input features == F * kernel input features, kernel output features % F == 0,
  kernel output features % B == 0, input batch % B == 0;
  output batch = input batch / B, output feature = kernel output features, output spatial
  dims = window output sizes of the input spatial dims (window size == kernel spatial size;
  base dilation = lhs_dilate, window dilation = rhs_dilate).

Element type (both): operands of one type, or both floating point, or both integer (XLA
permits mixed-precision dots/convolutions). The result element type is the declared one
(XLA's preferred_element_type); without a declared shape it is the operands' type (the
wider one if they differ). Like XLA's MaybeUpcast, a non-float operand type may not be
narrowed by the preferred type.

cholesky(a), lower=true|false (false when absent, as in XLA): a floating-point array whose
two minor dimensions are equal (a batch of square matrices); the result has its shape.
"""

from __future__ import annotations

from xlapy.hlo import attributes as A
from xlapy.hlo.opcodes import OPCODES
from xlapy.hlo.shape_context import (OpContext, check_dims_in_range, check_unique, fmt,
                                       shape_rule, window_output_dims)
from xlapy.hlo.shapes import PrimitiveType, Shape


def _result_type(op: OpContext, lhs: Shape, rhs: Shape) -> PrimitiveType:
    a, b = lhs.element_type, rhs.element_type
    if a != b and not ((a.is_float and b.is_float) or (a.is_integer and b.is_integer)):
        raise op.fail(f"operand element types are incompatible: {fmt(lhs)} and {fmt(rhs)}")
    t = a if a.bits >= b.bits else b
    if op.declared is None:
        return t
    if not op.declared.is_array:
        raise op.fail(f"result must be an array, declared {fmt(op.declared)}")
    preferred = op.declared.element_type
    if preferred != t and not t.is_float and preferred.bits < t.bits:
        raise op.fail(f"the result type {preferred} must not be narrower than the operand type "
                      f"{t}")
    return preferred


@shape_rule("dot")
def dot(op: OpContext) -> Shape:
    lhs, rhs = op.array(0, "lhs"), op.array(1, "rhs")
    lc = op.ints("lhs_contracting_dims", ())
    rc = op.ints("rhs_contracting_dims", ())
    lb = op.ints("lhs_batch_dims", ())
    rb = op.ints("rhs_batch_dims", ())
    check_dims_in_range(op, lc + lb, lhs.rank, f"lhs dimension numbers for {fmt(lhs)}:")
    check_dims_in_range(op, rc + rb, rhs.rank, f"rhs dimension numbers for {fmt(rhs)}:")
    check_unique(op, lc + lb, "lhs_contracting_dims with lhs_batch_dims")
    check_unique(op, rc + rb, "rhs_contracting_dims with rhs_batch_dims")
    if len(lb) != len(rb):
        raise op.fail(f"lhs_batch_dims={_b(lb)} and rhs_batch_dims={_b(rb)} must have the same "
                      "length")
    if len(lc) != len(rc):
        raise op.fail(f"lhs_contracting_dims={_b(lc)} and rhs_contracting_dims={_b(rc)} must "
                      "have the same length")
    for a, b in zip(lc, rc):
        if lhs.dims[a] != rhs.dims[b]:
            raise op.fail(f"contracting dimension sizes do not match: {fmt(lhs)} dimension {a} "
                          f"vs {fmt(rhs)} dimension {b}")
    for a, b in zip(lb, rb):
        if lhs.dims[a] != rhs.dims[b]:
            raise op.fail(f"batch dimension sizes do not match: {fmt(lhs)} dimension {a} vs "
                          f"{fmt(rhs)} dimension {b}")
    t = _result_type(op, lhs, rhs)
    dims = [lhs.dims[d] for d in lb]
    dims += [n for i, n in enumerate(lhs.dims) if i not in lb and i not in lc]
    dims += [n for i, n in enumerate(rhs.dims) if i not in rb and i not in rc]
    return Shape.array(t, dims)


@shape_rule("convolution")
def convolution(op: OpContext) -> Shape:
    lhs, rhs = op.array(0, "lhs"), op.array(1, "rhs")
    dn = op.typed("dim_labels", A.ConvDimensionNumbers, "dim_labels such as b01f_01io->b01f")
    window = op.typed("window", A.Window, "a window such as {size=3x3}", A.Window.make(()))
    fgc = op.int("feature_group_count", 1)
    bgc = op.int("batch_group_count", 1)
    if fgc < 1 or bgc < 1:
        raise op.fail(f"feature_group_count={fgc} and batch_group_count={bgc} must be positive")
    if fgc > 1 and bgc > 1:
        raise op.fail(f"feature_group_count={fgc} and batch_group_count={bgc} cannot both be "
                      "greater than 1")
    nsp = len(dn.input_spatial)
    for labels in ((dn.input_batch, dn.input_feature, *dn.input_spatial),
                   (dn.kernel_input_feature, dn.kernel_output_feature, *dn.kernel_spatial),
                   (dn.output_batch, dn.output_feature, *dn.output_spatial)):
        if sorted(labels) != list(range(nsp + 2)):
            raise op.fail(f"dim_labels={dn} do not name each of {nsp + 2} dimensions once")
    for name, s in (("lhs", lhs), ("rhs", rhs)):
        if s.rank != nsp + 2:
            raise op.fail(f"dim_labels={dn} describe rank {nsp + 2} but the {name} is {fmt(s)}")
    if window.rank != nsp:
        raise op.fail(f"window {window} has {window.rank} dimensions but dim_labels={dn} have "
                      f"{nsp} spatial dimensions")
    in_batch = lhs.dims[dn.input_batch]
    in_feat = lhs.dims[dn.input_feature]
    k_in = rhs.dims[dn.kernel_input_feature]
    k_out = rhs.dims[dn.kernel_output_feature]
    where = f"(lhs {fmt(lhs)}, rhs {fmt(rhs)}, dim_labels={dn})"
    if in_feat % fgc or in_feat // fgc != k_in:
        raise op.fail(f"input feature size {in_feat} must be feature_group_count={fgc} times "
                      f"the kernel input feature size {k_in} {where}")
    if k_out % fgc:
        raise op.fail(f"kernel output feature size {k_out} must be divisible by "
                      f"feature_group_count={fgc} {where}")
    if k_out % bgc:
        raise op.fail(f"kernel output feature size {k_out} must be divisible by "
                      f"batch_group_count={bgc} {where}")
    if in_batch % bgc:
        raise op.fail(f"input batch size {in_batch} must be divisible by batch_group_count="
                      f"{bgc} {where}")
    kernel_spatial = [rhs.dims[d] for d in dn.kernel_spatial]
    if list(window.size) != kernel_spatial:
        raise op.fail(f"window size {window} does not match the kernel's spatial dims "
                      f"{kernel_spatial} {where}")
    spatial = window_output_dims(op, [lhs.dims[d] for d in dn.input_spatial], window,
                                 "input's spatial dims")
    t = _result_type(op, lhs, rhs)
    out = [0] * (nsp + 2)
    out[dn.output_batch] = in_batch // bgc
    out[dn.output_feature] = k_out
    for i, d in enumerate(dn.output_spatial):
        out[d] = spatial[i]
    return Shape.array(t, out)


def _b(dims) -> str:
    return "{" + ",".join(map(str, dims)) + "}"


@shape_rule("cholesky")
def cholesky(op: OpContext) -> Shape:
    a = op.array(0, "the operand")
    info = OPCODES["cholesky"]
    if not info.accepts(a.element_type.kind):
        raise op.fail(f"expects {info.types_text} element type, got {fmt(a)}")
    if a.rank < 2 or a.dims[-1] != a.dims[-2]:
        raise op.fail(f"expects square matrices in the two minor dimensions (rank >= 2), got "
                      f"{fmt(a)}")
    op.bool("lower")
    return a.without_layout()
