"""The gemm kernel's IR building blocks (gemm_kernel.py): the class every part of the kernel
builds on, with its helpers: internal functions, element addressing, vectors of some lanes
(masked loads and stores), and source operands widened from bf16 / f16 as they are read."""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.gemm_params import I32, NV, PTR, VOID, _esize, direct_rows
from xlapy.backends.cpu.emitters.kernel_abi import add_string_attribute
from xlapy.backends.llvm.types import splat


class GemmIR:
    def __init__(self, m: ir.Module, t: str, vl: int, vector_bits: int, src_t: str | None = None):
        """t: the compute type (and C's); src_t: A's and B's element type (default t;
        bf16 or f16 with t f32: widened as they are packed)."""
        self.m, self.t, self.vl = m, t, vl
        self.src_t = src_t or t
        self.fty = ir.FloatType() if t == "f32" else ir.DoubleType()
        self.sty = {"bf16": ir.IntType(16), "f16": ir.HalfType(), "f32": ir.FloatType(),
                    "f64": ir.DoubleType()}[self.src_t]
        self.vty = ir.VectorType(self.fty, vl)
        self.nr = NV * vl
        self.bits = vector_bits
        self.rd = direct_rows(vector_bits)
        self.esize = _esize(t)
        self.fmuladd = ir.Function(m, ir.FunctionType(self.vty, [self.vty] * 3),
                                   f"llvm.fmuladd.v{vl}{t}")

    # ---- helpers --------------------------------------------------------------------------
    def _fn(self, name, args, ret=VOID):
        fn = ir.Function(self.m, ir.FunctionType(ret, args), f"xlapy.gemm.{self.src_t}.{name}")
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        if name not in ("pack_all", "chunk", "pack_all_b", "chunk_rows"):
            # each helper runs for a whole tile or panel: a call costs nothing there, and
            # inlined into the loop nests they made LLVM's loop passes take 0.4 s
            fn.attributes.add("noinline")
        add_string_attribute(fn, f'"min-legal-vector-width"="{self.bits}"')
        add_string_attribute(fn, f'"prefer-vector-width"="{self.bits}"')
        return fn

    def _at(self, b, p, i):
        return b.gep(p, [i], source_etype=self.fty)

    def _splat(self, b, x):
        return splat(b, x, self.vl)

    @staticmethod
    def _min(b, x, y):
        return b.select(b.icmp_signed("<", x, y), x, y)

    def _groups(self, n: int):
        """(first, valid lanes) of the vectors that hold n values (a panel's MR rows)."""
        return [(g, min(self.vl, n - g)) for g in range(0, n, self.vl)]

    def _lane_mask(self, lanes):
        return ir.Constant(ir.VectorType(ir.IntType(1), self.vl),
                           [1 if j < lanes else 0 for j in range(self.vl)])

    def _masked(self, op, vty=None):
        vty = vty or self.vty
        e = vty.element
        el = "f32" if isinstance(e, ir.FloatType) else "f64" if isinstance(e, ir.DoubleType) \
            else "f16" if isinstance(e, ir.HalfType) else f"i{e.width}"
        name = f"llvm.masked.{op}.v{self.vl}{el}.p0"
        mask_t = ir.VectorType(ir.IntType(1), self.vl)
        fty = ir.FunctionType(vty, [PTR, I32, mask_t, vty]) if op == "load" else \
            ir.FunctionType(VOID, [vty, PTR, I32, mask_t])
        return self.m.globals.get(name) or ir.Function(self.m, fty, name)

    def _load_lanes(self, b, p, lanes):
        """The first `lanes` source elements at p in a vector (the rest zero; never read),
        converted to the compute type."""
        if lanes == self.vl:
            return self._src_vec(b, p)
        svty = ir.VectorType(self.sty, self.vl)
        x = b.call(self._masked("load", svty), [p, ir.Constant(I32, 1), self._lane_mask(lanes),
                                                 ir.Constant(svty, None)])
        return self._widen(b, x)

    # ---- source operands (bf16 / f16 inputs are widened to f32 as they are packed) --------
    def _src_at(self, b, p, i):
        return b.gep(p, [i], source_etype=self.sty)

    def _widen(self, b, x):
        if self.src_t == "bf16":
            wide = ir.VectorType(I32, self.vl) if isinstance(x.type, ir.VectorType) else I32
            sh = ir.Constant(wide, [16] * self.vl) if wide is not I32 else ir.Constant(I32, 16)
            ft = self.vty if wide is not I32 else self.fty
            return b.bitcast(b.shl(b.zext(x, wide), sh), ft)
        if self.src_t == "f16":
            return b.fpext(x, self.vty if isinstance(x.type, ir.VectorType) else self.fty)
        return x

    def _src_vec(self, b, p):
        return self._widen(b, b.load(p, typ=ir.VectorType(self.sty, self.vl), align=1))

    def _src_scalar(self, b, p):
        return self._widen(b, b.load(p, typ=self.sty))

    def _store_lanes(self, b, x, p, lanes):
        if lanes == self.vl:
            b.store(x, p, align=1)
        else:
            b.call(self._masked("store"), [x, p, ir.Constant(I32, 1), self._lane_mask(lanes)])

