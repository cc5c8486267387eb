"""HLO's padding for the fast convolution paths: a padded position adds nothing.

The gemm convolutions (conv.py) build patch matrices with real zeros in the padding and the
lhs-dilation holes, so a kernel element that is inf or NaN times such a zero gives NaN
where HLO (and the interpreter) add nothing: XLA:CPU's Eigen convolutions do the same
(README, Numerics). xlapy keeps HLO's semantics: before a padded convolution runs on a fast
path, one pass over the kernel looks for a non-finite element (its exponent bits all ones;
the kernel is read again by the gemm's packing anyway), and a kernel that has one runs the
elemental loop, which skips the padding. A constant kernel is checked at compile time.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, for_range
from xlapy.hlo.ir import Instruction

# storage bits and exponent mask of the float types a fast path takes
_EXPONENT = {"f32": (32, 0x7F800000), "f64": (64, 0x7FF0000000000000),
             "bf16": (16, 0x7F80), "f16": (16, 0x7C00)}


def pads(conv: Instruction) -> bool:
    """Whether the convolution reads padding or lhs-dilation holes."""
    w = conv.attrs.get("window")
    return w is not None and (any(w.pad_low) or any(w.pad_high)
                              or any(d > 1 for d in w.lhs_dilate))


def needs_guard(conv: Instruction, kernel: Instruction | None) -> bool:
    """Whether the run time must look at the kernel: a padded float convolution whose
    kernel is not a constant known to be finite (`kernel`: the instruction giving the
    kernel's buffer, None when unknown)."""
    t = conv.operands[1].shape.element_type.name
    if t not in _EXPONENT or not pads(conv):
        return False
    if kernel is not None and kernel.opcode == "constant" and kernel.literal is not None:
        try:
            lit = np.asarray(kernel.literal, np.float64)
        except (TypeError, ValueError):
            return True
        return not bool(np.isfinite(lit).all())
    return True


def _scan_function(module: ir.Module, t: str) -> ir.Function:
    """any_nonfinite(ptr, n) -> i1, one per element type and module (a vectorized OR)."""
    name = f"xlapy.any_nonfinite.{t}"
    if name in module.globals:
        return module.globals[name]
    bits, mask = _EXPONENT[t]
    ity = ir.IntType(bits)
    fn = ir.Function(module, ir.FunctionType(ir.IntType(1), [T.PTR, T.I64]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    ptr, n = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    acc = b.alloca(ity)
    b.store(ir.Constant(ity, 0), acc)
    with for_range(b, c64(0), n, name="k") as k:
        x = b.load(b.gep(ptr, [k], source_etype=ity), typ=ity)
        e = b.and_(x, ir.Constant(ity, mask))
        flag = b.select(b.icmp_unsigned("==", e, ir.Constant(ity, mask)),
                        ir.Constant(ity, 1), ir.Constant(ity, 0))
        b.store(b.or_(b.load(acc, typ=ity), flag), acc)
    b.ret(b.icmp_unsigned("!=", b.load(acc, typ=ity), ir.Constant(ity, 0)))
    return fn


def any_nonfinite(pe, ptr, n: int, t: str):
    """An i1: whether the n elements of type t at ptr hold an inf or NaN (one pass)."""
    return pe.b.call(_scan_function(pe.llmod, t), [ptr, c64(n)])


def branch(pe, bad, slow, fast) -> None:
    """Emit `if (bad) slow(); else fast();` (bad: an i1, rarely true)."""
    with pe.b.if_else(bad, likely=False) as (then, otherwise):
        with then:
            slow()
        with otherwise:
            fast()


def guarded(pe, conv: Instruction, kernel: Instruction | None, rhs_ptr, fast, slow) -> None:
    """Emit fast() (a fast path that multiplies padding), or, where the kernel can hold a
    non-finite element, a branch: slow() (the elemental loop) when it does, else fast()."""
    if not needs_guard(conv, kernel):
        fast()
        return
    rhs = conv.operands[1].shape
    branch(pe, any_nonfinite(pe, rhs_ptr, rhs.size, rhs.element_type.name), slow, fast)
