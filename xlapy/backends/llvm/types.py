"""HLO element types as LLVM types, and conversions between storage and compute forms.

Each HLO element type has a *storage* type (how it sits in memory) and a *value* type (how
the elemental emitter holds it in registers):

  type    storage   value    arithmetic done in
  pred    i8        i1       -
  sN/uN   iN        iN       iN (wrapping; signedness comes from the HLO type)
  f16     half      half     float (converted per op, rounded back: what XLA CPU does)
  bf16    i16       i16      float (bits; converted with explicit round-to-nearest-even)
  f32     float     float    float
  f64     double    double   double
  c64     {float, float}   (the same)   float, on the two parts (elemental_complex.py)
  c128    {double, double} (the same)   double

A complex number is stored as its real and imaginary parts interleaved (what NumPy and
XLA store) and held in registers as the same two-field struct.

bf16 is handled as raw bits rather than LLVM's `bfloat` so that no soft-float runtime
helpers are needed on any target, and the conversion code vectorizes.
"""

from __future__ import annotations

import functools

from llvmlite import ir

from xlapy.hlo.shapes import PrimitiveType

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F16 = ir.HalfType()
F32 = ir.FloatType()
F64 = ir.DoubleType()
PTR = ir.PointerType()
VOID = ir.VoidType()


@functools.lru_cache(maxsize=512)
def shuffle_mask(indices: tuple) -> ir.Constant:
    """The <n x i32> constant of a shufflevector mask. Shared: llvmlite constants belong to
    no module and cache their printed form, so each mask is formatted once per process
    rather than at every use (about 14 us a shuffle in a first print)."""
    return ir.Constant(ir.VectorType(I32, len(indices)), list(indices))


@functools.lru_cache(maxsize=512)
def undef(t: ir.Type) -> ir.Constant:
    """An undef constant of type t (shared, as shuffle_mask)."""
    return ir.Constant(t, ir.Undefined)


def splat(b: ir.IRBuilder, v, lanes: int):
    """A <lanes x T> vector with every lane the scalar v."""
    vty = ir.VectorType(v.type, lanes)
    one = b.insert_element(undef(vty), v, ir.Constant(I32, 0))
    return b.shuffle_vector(one, undef(vty), shuffle_mask((0,) * lanes))


@functools.lru_cache(maxsize=64)
def lane_mask(count: int, lanes: int) -> ir.Constant:
    """The <lanes x i1> constant whose first `count` lanes are on (shared, as shuffle_mask)."""
    return ir.Constant(ir.VectorType(I1, lanes), [int(j < count) for j in range(lanes)])


def masked_load(b: ir.IRBuilder, module: ir.Module, ptr, vty: ir.VectorType, count: int,
                align: int):
    """The first `count` elements at ptr in a vector of type vty, the other lanes zero; only
    those `count` elements are read (llvm.masked.load)."""
    name = f"llvm.masked.load.{_mangled(vty)}.p0"
    fn = module.globals.get(name) or ir.Function(
        module, ir.FunctionType(vty, [PTR, I32, ir.VectorType(I1, vty.count), vty]), name)
    return b.call(fn, [ptr, ir.Constant(I32, align), lane_mask(count, vty.count),
                       ir.Constant(vty, None)])


def masked_store(b: ir.IRBuilder, module: ir.Module, value, ptr, count: int, align: int):
    """Store the first `count` lanes of the vector `value` at ptr (llvm.masked.store); the
    memory after them is not touched."""
    vty = value.type
    name = f"llvm.masked.store.{_mangled(vty)}.p0"
    fn = module.globals.get(name) or ir.Function(
        module, ir.FunctionType(VOID, [vty, PTR, I32, ir.VectorType(I1, vty.count)]), name)
    b.call(fn, [value, ptr, ir.Constant(I32, align), lane_mask(count, vty.count)])


def _mangled(t: ir.Type) -> str:
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{_mangled(t.element)}"
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    return {ir.FloatType: "f32", ir.DoubleType: "f64", ir.HalfType: "f16"}[type(t)]


def intrinsic(module: ir.Module, name: str, ty: ir.Type, nargs: int = 1) -> ir.Function:
    """The intrinsic `name` overloaded on ty (a scalar or a vector type), taking nargs
    arguments of ty and returning ty: llvm.maximum.v16f32. (llvmlite's declare_intrinsic
    does not mangle vector types.)"""
    full = f"{name}.{_mangled(ty)}"
    return module.globals.get(full) or ir.Function(module, ir.FunctionType(ty, [ty] * nargs),
                                                   full)


def storage_type(t: PrimitiveType) -> ir.Type:
    if t.is_complex:
        part = F32 if t.name == "c64" else F64
        return ir.LiteralStructType([part, part])
    if t.is_pred:
        return I8
    if t.name == "bf16":
        return I16
    if t.name == "f16":
        return F16
    if t.name == "f32":
        return F32
    if t.name == "f64":
        return F64
    return ir.IntType(t.bits)


def value_type(t: PrimitiveType) -> ir.Type:
    return I1 if t.is_pred else storage_type(t)


def compute_float_type(t: PrimitiveType) -> ir.Type:
    """The float type arithmetic on t is done in (f16 and bf16 widen to float)."""
    return F64 if t.name == "f64" else F32


def const(t: PrimitiveType, value) -> ir.Constant:
    """An LLVM constant of HLO type t in value form."""
    if t.is_pred:
        return ir.Constant(I1, int(bool(value)))
    if t.name == "bf16":
        import numpy as np
        import ml_dtypes
        bits = int(np.array(value, dtype=ml_dtypes.bfloat16).view(np.uint16))
        return ir.Constant(I16, bits)
    if t.is_float:
        return ir.Constant(value_type(t), float(value))
    if t.is_complex:
        part = value_type(t).elements[0]
        z = complex(value)
        return ir.Constant(value_type(t), [ir.Constant(part, z.real), ir.Constant(part, z.imag)])
    v = int(value)
    if v < 0:
        v &= (1 << t.bits) - 1
    return ir.Constant(value_type(t), v)


def load(b: ir.IRBuilder, ptr, t: PrimitiveType):
    v = b.load(ptr, typ=storage_type(t))
    return b.trunc(v, I1) if t.is_pred else v


def store(b: ir.IRBuilder, value, ptr, t: PrimitiveType):
    if t.is_pred:
        value = b.zext(value, I8)
    return b.store(value, ptr)


def to_float(b: ir.IRBuilder, v, t: PrimitiveType):
    """A float-typed value (value form of t) widened to its compute type."""
    if t.name == "bf16":
        return b.bitcast(b.shl(b.zext(v, I32), ir.Constant(I32, 16)), F32)
    if t.name == "f16":
        return b.fpext(v, F32)
    return v


def from_float(b: ir.IRBuilder, v, t: PrimitiveType):
    """A compute-type float rounded (to nearest even) into the value form of t."""
    if t.name == "bf16":
        return f32_to_bf16_bits(b, v)
    if t.name == "f16":
        return b.fptrunc(v, F16)
    if t.name == "f32" and v.type == F64:
        return b.fptrunc(v, F32)
    return v


def f64_to_f16(b: ir.IRBuilder, x):
    """f64 -> f16 rounded once (to nearest even) without a runtime call.

    LLVM lowers `fptrunc double to half` to the soft-float routine __truncdfhf2 unless the
    CPU converts f64 to f16 itself (AVX512-FP16); neither the JIT's process nor an
    ahead-of-time object can count on that routine. Narrowing to f32 with round-to-odd (cut
    toward zero, then set the lowest bit when anything was cut) keeps the information the
    second rounding needs: f32 carries 13 more significand bits than f16, so f32 -> f16 then
    rounds as if from the exact value. Overflow past f32 becomes its largest odd value,
    which f16 turns into inf as it should; NaN passes through both steps."""
    t = b.fptrunc(x, F32)
    back = b.fpext(t, F64)
    inexact = b.fcmp_ordered("!=", back, x)
    fabs = b.module.declare_intrinsic("llvm.fabs", [F64])
    away = b.fcmp_ordered(">", b.call(fabs, [back]), b.call(fabs, [x]))
    bits = b.bitcast(t, I32)
    toward_zero = b.select(b.and_(inexact, away), b.sub(bits, ir.Constant(I32, 1)), bits)
    odd = b.select(inexact, b.or_(toward_zero, ir.Constant(I32, 1)), toward_zero)
    return b.fptrunc(b.bitcast(odd, F32), F16)


def f32_to_bf16_bits(b: ir.IRBuilder, v):
    """Round-to-nearest-even f32 -> bf16 bits; NaN stays a (quiet) NaN."""
    bits = b.bitcast(v, I32)
    lsb = b.and_(b.lshr(bits, ir.Constant(I32, 16)), ir.Constant(I32, 1))
    rounded = b.add(bits, b.add(ir.Constant(I32, 0x7FFF), lsb))
    is_nan = b.fcmp_unordered("uno", v, v)
    quiet = b.or_(bits, ir.Constant(I32, 0x00400000))
    out = b.select(is_nan, quiet, rounded)
    return b.trunc(b.lshr(out, ir.Constant(I32, 16)), I16)


def flush_subnormal(b: ir.IRBuilder, v):
    """v (an f32 or f64 value or vector) with a subnormal replaced by a zero of its sign, in a
    module whose code runs with denormals flushed (the emitter sets `flush_denormals` on the
    ir.Module); v itself otherwise.

    For maximum, minimum and clamp: x86's max/min instructions read a subnormal as zero
    under DAZ (XLA:CPU's maximum of two equal subnormals is 0), but LLVM folds maximum(a, a)
    to a, and its vector lowering can return an operand's bits, so a subnormal came back
    from some loops and not from others (fuzz hlo 14006398)."""
    if not getattr(b.module, "flush_denormals", False):
        return v
    ty = v.type
    lanes = ty.count if isinstance(ty, ir.VectorType) else None
    elem = ty.element if lanes else ty
    if elem == F32:
        ity, expo, sign = I32, 0x7F800000, 0x80000000
    elif elem == F64:
        ity, expo, sign = I64, 0x7FF0000000000000, 0x8000000000000000
    else:
        return v

    def const(x):
        c = ir.Constant(ity, x)
        return ir.Constant(ir.VectorType(ity, lanes), [c] * lanes) if lanes else c

    bits = b.bitcast(v, ir.VectorType(ity, lanes) if lanes else ity)
    tiny = b.icmp_unsigned("==", b.and_(bits, const(expo)), const(0))
    return b.bitcast(b.select(tiny, b.and_(bits, const(sign)), bits), ty)
