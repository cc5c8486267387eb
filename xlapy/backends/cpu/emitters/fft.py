"""The `fft` opcode on the cpu: native code emitted as LLVM IR (no library, no callback).

Each transformed dimension is processed line by line: a line (the elements along that
dimension, every other index fixed) is gathered into a contiguous work buffer of complex
values, transformed, and scattered back. One complex transform of length n:

  n a power of two   iterative radix-2 Cooley-Tukey in place (bit-reversal permutation,
                     then log2(n) butterfly stages), one internal function per component
                     type (`xlapy.fft.radix2.<f32|f64>`, the length a run-time argument)
  other n            Bluestein: with the chirp w_k = exp(-i pi (k^2 mod 2n) / n), the DFT
                     is w * (IFFT_m(FFT_m(x w) * B)) for a power of two m >= 2n - 1 and
                     B = FFT_m(conj(w) extended symmetrically), all through radix-2

Twiddle factors and chirps are computed once per call into scratch buffers, in double
precision with xlapy's own sin/cos (then rounded to the component type), so their error
does not grow with n. The arithmetic is in the component type (f32 for c64, f64 for c128),
as XLA:CPU's ducc does. An inverse transform conjugates on the way in and out and scales
by 1/n per dimension (IFFT's 1/N overall).

Operands and results in other layouts than row-major go through row-major scratch copies.

  FFT, IFFT   the operand is copied to the result, then each of the trailing dimensions
              is transformed in place
  RFFT        the last dimension: real lines transformed as complex ones, the first
              n/2+1 bins kept; then the other dimensions in place in the result
  IRFFT       the other dimensions are inverse-transformed in a complex scratch copy of
              the operand; then each last-dimension line of n/2+1 bins is completed to n
              by Hermitian symmetry (X[n-k] = conj X[k]), inverse-transformed, and its
              real parts stored (so the imaginary parts of the zero and Nyquist bins are
              ignored, as pocketfft and XLA ignore them)

Not done: threads over the batch, mixed-radix kernels (Bluestein costs about 3 transforms
of length m, 2 to 4 times n, where radix 3/5 kernels would do one of length n).
"""

from __future__ import annotations

import contextlib
import math

from llvmlite import ir

from xlapy.backends.cpu.emitters.registry import custom_emitter
from xlapy.backends.cpu.emitters.routine import Scratch, copy_array, routine_function, slot
from xlapy.backends.llvm import complex_math as C
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, for_range, while_loop
from xlapy.backends.llvm.math import math_function
from xlapy.hlo.shapes import Layout


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


class _Ctx:
    """The component type `ct` and its complex struct type `st` inside one routine."""

    def __init__(self, b: ir.IRBuilder, ct: ir.Type):
        self.b, self.ct = b, ct
        self.st = ir.LiteralStructType([ct, ct])
        self.suffix = "f64" if ct == T.F64 else "f32"

    def at(self, ptr, i):
        return self.b.gep(ptr, [i], inbounds=True, source_etype=self.st)

    def load(self, ptr, i):
        return self.b.load(self.at(ptr, i), typ=self.st)

    def store(self, v, ptr, i):
        self.b.store(v, self.at(ptr, i))

    def const(self, re: float, im: float = 0.0):
        return ir.Constant(self.st, [ir.Constant(self.ct, re), ir.Constant(self.ct, im)])

    def conj(self, v):
        re, im = C.parts(self.b, v)
        return C.make(self.b, re, self.b.fneg(im))

    def polar(self, angle64):
        """exp(i angle) for an f64 angle, rounded to the component type."""
        b = self.b
        cos = b.call(math_function(b.module, "cos", T.F64), [angle64])
        sin = b.call(math_function(b.module, "sin", T.F64), [angle64])
        if self.ct != T.F64:
            cos, sin = b.fptrunc(cos, self.ct), b.fptrunc(sin, self.ct)
        return C.make(b, cos, sin)


def _radix2_function(module: ir.Module, ctx_ct: ir.Type) -> ir.Function:
    """void xlapy.fft.radix2.<t>(ptr buf, i64 m, ptr twiddles): the forward DFT of the m
    (a power of two) complex values at buf, in place; twiddles[k] = exp(-2 pi i k / m) for
    k < m/2."""
    suffix = "f64" if ctx_ct == T.F64 else "f32"
    name = f"xlapy.fft.radix2.{suffix}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(T.VOID, [T.PTR, T.I64, T.PTR]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    buf, m, tw = fn.args
    cx = _Ctx(b, ctx_ct)
    one, zero = c64(1), c64(0)
    # bit-reversal permutation: j runs through the bit-reversed counter of i
    j = slot(b, T.I64, 0, "j")
    bit = slot(b, T.I64, 0, "bit")
    with for_range(b, 0, m, name="perm") as i:
        jv = b.load(j)
        with b.if_then(b.icmp_signed("<", i, jv)):
            u, v = cx.load(buf, i), cx.load(buf, jv)
            cx.store(v, buf, i)
            cx.store(u, buf, jv)
        b.store(b.lshr(m, one), bit)
        with while_loop(b, lambda: b.icmp_unsigned(
                "!=", b.and_(b.load(j), b.load(bit)), zero), name="carry"):
            b.store(b.xor(b.load(j), b.load(bit)), j)
            b.store(b.lshr(b.load(bit), one), bit)
        b.store(b.or_(b.load(j), b.load(bit)), j)
    # butterfly stages of size s = 2, 4, ..., m
    s = slot(b, T.I64, 2, "s")
    with while_loop(b, lambda: b.icmp_unsigned("<=", b.load(s), m), name="stage"):
        sv = b.load(s)
        half = b.lshr(sv, one)
        step = b.udiv(m, sv)
        with for_range(b, 0, m, sv, name="block") as start:
            with for_range(b, 0, half, name="k") as k:
                w = cx.load(tw, b.mul(k, step))
                p = b.add(start, k)
                q = b.add(p, half)
                u = cx.load(buf, p)
                v = C.mul(b, cx.load(buf, q), w)
                cx.store(C.add(b, u, v), buf, p)
                cx.store(C.sub(b, u, v), buf, q)
        b.store(b.shl(sv, one), s)
    b.ret_void()
    return fn


class _Plan:
    """Tables and scratch for transforms of length n in one routine (call release())."""

    def __init__(self, cx: _Ctx, n: int):
        self.cx, self.n = cx, n
        b = cx.b
        esize = 2 * (8 if cx.ct == T.F64 else 4)
        self.pow2 = n & (n - 1) == 0
        self.m = n if self.pow2 else _pow2_at_least(2 * n - 1)
        m = self.m
        self.radix2 = _radix2_function(b.module, cx.ct)
        self.scratch = Scratch(b, esize * (max(m // 2, 1) + n + (0 if self.pow2 else n + 2 * m)),
                               f"fft{n}")
        base = self.scratch.ptr
        self.tw = base
        self.work = cx.at(base, c64(max(m // 2, 1)))
        with for_range(b, 0, max(m // 2, 1), name="tw") as k:  # exp(-2 pi i k / m)
            ang = b.fmul(b.sitofp(k, T.F64), ir.Constant(T.F64, -2 * math.pi / m))
            cx.store(cx.polar(ang), self.tw, k)
        if self.pow2:
            return
        self.chirp = cx.at(self.work, c64(n))
        self.bhat = cx.at(self.chirp, c64(n))
        self.big = cx.at(self.bhat, c64(m))
        with for_range(b, 0, n, name="chirp") as k:  # exp(-i pi (k^2 mod 2n) / n)
            k2 = b.urem(b.mul(k, k), c64(2 * n))
            ang = b.fmul(b.uitofp(k2, T.F64), ir.Constant(T.F64, -math.pi / n))
            cx.store(cx.polar(ang), self.chirp, k)
        with for_range(b, 0, m, name="bzero") as k:
            cx.store(cx.const(0.0), self.bhat, k)
        with for_range(b, 0, n, name="bfill") as k:
            v = cx.conj(cx.load(self.chirp, k))
            cx.store(v, self.bhat, k)
            with b.if_then(b.icmp_signed(">", k, c64(0))):
                cx.store(v, self.bhat, b.sub(c64(m), k))
        b.call(self.radix2, [self.bhat, c64(m), self.tw])

    def forward(self):
        """The forward DFT of the n values in self.work, in place."""
        cx, b, n, m = self.cx, self.cx.b, self.n, self.m
        if self.pow2:
            if n > 1:
                b.call(self.radix2, [self.work, c64(n), self.tw])
            return
        with for_range(b, 0, m, name="bz") as k:
            cx.store(cx.const(0.0), self.big, k)
        with for_range(b, 0, n, name="bin") as k:
            cx.store(C.mul(b, cx.load(self.work, k), cx.load(self.chirp, k)), self.big, k)
        b.call(self.radix2, [self.big, c64(m), self.tw])
        with for_range(b, 0, m, name="bmul") as k:  # conj(A B): the inverse via the forward
            cx.store(cx.conj(C.mul(b, cx.load(self.big, k), cx.load(self.bhat, k))),
                     self.big, k)
        b.call(self.radix2, [self.big, c64(m), self.tw])
        inv_m = ir.Constant(cx.ct, 1.0 / m)
        with for_range(b, 0, n, name="bout") as k:
            c = C.scale(b, cx.conj(cx.load(self.big, k)), inv_m)
            cx.store(C.mul(b, c, cx.load(self.chirp, k)), self.work, k)

    def release(self):
        self.scratch.release()


@contextlib.contextmanager
def _lines(b, dims, axis):
    """Loops over the lines of a row-major array of `dims` along `axis`; yields (first
    element's linear index, stride) as i64 values."""
    inner = math.prod(dims[axis + 1:])
    with for_range(b, 0, math.prod(dims[:axis]), name=f"o{axis}") as o:
        with for_range(b, 0, inner, name=f"i{axis}") as i:
            yield b.add(b.mul(o, c64(dims[axis] * inner)), i), c64(inner)


def _transform_in_place(cx: _Ctx, ptr, dims, axis: int, inverse: bool):
    """Each line of the complex row-major array at ptr along `axis`, transformed."""
    b, n = cx.b, dims[axis]
    if n <= 1:
        return
    plan = _Plan(cx, n)
    with _lines(b, dims, axis) as (first, stride):
        with for_range(b, 0, n, name="gather") as j:
            v = cx.load(ptr, b.add(first, b.mul(j, stride)))
            cx.store(cx.conj(v) if inverse else v, plan.work, j)
        plan.forward()
        scale = ir.Constant(cx.ct, 1.0 / n)
        with for_range(b, 0, n, name="scatter") as j:
            v = cx.load(plan.work, j)
            if inverse:
                v = C.scale(b, cx.conj(v), scale)
            cx.store(v, ptr, b.add(first, b.mul(j, stride)))
    plan.release()


def _copy(cx: _Ctx, dst, src, count: int):
    b = cx.b
    with for_range(b, 0, count, name="copy") as i:
        cx.store(cx.load(src, i), dst, i)


@custom_emitter("fft")
def emit_fft(pe, instr, dest, operands) -> bool:
    out, a = instr.shape, instr.operands[0].shape
    kind = instr.attrs["fft_type"]
    lengths = tuple(instr.attrs["fft_length"])
    if out.size == 0:
        return True
    ctype = out.element_type if out.element_type.is_complex else a.element_type
    ct = T.F64 if ctype.name == "c128" else T.F32
    fn, b = routine_function(pe, f"fft.{instr.name}", 2)
    out_arg, a_arg = fn.args
    cx = _Ctx(b, ct)
    # the transforms work on row-major arrays: other layouts go through a row-major copy
    row_a, row_out = a.with_layout(Layout.default(a.rank)), out.with_layout(
        Layout.default(out.rank))
    a_ptr, out_ptr, temps = a_arg, out_arg, []
    if not a.has_default_layout:
        temps.append(Scratch(b, a.byte_size, "fft.in"))
        a_ptr = temps[-1].ptr
        copy_array(b, a_ptr, row_a, a_arg, a)
    if not out.has_default_layout:
        temps.append(Scratch(b, out.byte_size, "fft.out"))
        out_ptr = temps[-1].ptr
    k = len(lengths)
    axes = list(range(out.rank - k, out.rank))
    if kind in ("FFT", "IFFT"):
        _copy(cx, out_ptr, a_ptr, out.size)
        for ax in axes:
            _transform_in_place(cx, out_ptr, out.dims, ax, kind == "IFFT")
    elif kind == "RFFT":
        _rfft_last(cx, out_ptr, out.dims, a_ptr, a.dims, lengths[-1])
        for ax in axes[:-1]:
            _transform_in_place(cx, out_ptr, out.dims, ax, False)
    else:
        tmp = Scratch(b, a.byte_size, "irfft.tmp")
        _copy(cx, tmp.ptr, a_ptr, a.size)
        for ax in axes[:-1]:
            _transform_in_place(cx, tmp.ptr, a.dims, ax, True)
        _irfft_last(cx, out_ptr, out.dims, tmp.ptr, a.dims, lengths[-1])
        tmp.release()
    if out_ptr is not out_arg:
        copy_array(b, out_arg, out, out_ptr, row_out)
    for t in temps:
        t.release()
    b.ret_void()
    pe.b.call(fn, [dest[0], operands[0]])
    return True


def _rfft_last(cx: _Ctx, out_ptr, out_dims, a_ptr, a_dims, n: int):
    """out[..., :n/2+1] = the DFT of each real last-dimension line of a."""
    b = cx.b
    rows = math.prod(a_dims[:-1])
    keep = out_dims[-1]
    plan = _Plan(cx, n)
    zero = ir.Constant(cx.ct, 0.0)
    with for_range(b, 0, rows, name="row") as r:
        src = b.mul(r, c64(n))
        with for_range(b, 0, n, name="load") as j:
            x = b.load(b.gep(a_ptr, [b.add(src, j)], inbounds=True, source_etype=cx.ct),
                       typ=cx.ct)
            cx.store(C.make(b, x, zero), plan.work, j)
        plan.forward()
        dst = b.mul(r, c64(keep))
        with for_range(b, 0, keep, name="keep") as j:
            cx.store(cx.load(plan.work, j), out_ptr, b.add(dst, j))
    plan.release()


def _irfft_last(cx: _Ctx, out_ptr, out_dims, src_ptr, src_dims, n: int):
    """out[..., :n] = the real inverse DFT of each Hermitian half-spectrum line of src."""
    b = cx.b
    rows = math.prod(src_dims[:-1])
    half = src_dims[-1]
    plan = _Plan(cx, n)
    scale = ir.Constant(cx.ct, 1.0 / n)
    with for_range(b, 0, rows, name="row") as r:
        src = b.mul(r, c64(half))
        with for_range(b, 0, n, name="herm") as j:  # X[j] (j <= n/2) or conj X[n-j]
            low = b.icmp_signed("<", j, c64(half))
            idx = b.select(low, j, b.sub(c64(n), j))
            v = cx.load(src_ptr, b.add(src, idx))
            v = b.select(low, v, cx.conj(v))
            cx.store(cx.conj(v), plan.work, j)  # inverse = conj . forward . conj
        plan.forward()
        dst = b.mul(r, c64(n))
        with for_range(b, 0, n, name="real") as j:
            re = b.fmul(C.parts(b, cx.load(plan.work, j))[0], scale)
            b.store(re, b.gep(out_ptr, [b.add(dst, j)], inbounds=True, source_etype=cx.ct))
    plan.release()
