"""A tiny expression layer over llvmlite.ir.IRBuilder for writing math kernels like C.

    c = Ctx(builder, ty)              # ty: ir.FloatType() or ir.DoubleType()
    x = c.wrap(arg)
    r = c.fma(n, -LN2_HI, x)          # llvm.fmuladd
    y = c.select(x.lt(0.0), -r, r)

`V` wraps an llvm value; + - * / and the comparison methods accept Python numbers, which
become constants of the other operand's type. Integer values (the bit patterns, exponents)
use the integer type of the same width (i32 for float, i64 for double), with + - * & | ^ << >>
(>> is arithmetic). Only straight-line code is emitted: selects instead of branches, so the
loop vectorizer if-converts nothing and sees one basic block.

Floating point semantics are IEEE: no fast-math flags are ever set. `fma` is llvm.fmuladd
(fused where the target has FMA, two roundings elsewhere: only used where either is fine);
`fma_exact` is llvm.fma, used for error-free products (double-double arithmetic).
"""
from llvmlite import ir

from xlapy.backends.llvm.types import flush_subnormal, intrinsic

I1 = ir.IntType(1)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32 = ir.FloatType()
F64 = ir.DoubleType()


# name -> (implementation(ctx, *args) -> V, arity); filled by @register in math_*.py
FUNCTIONS = {}


def register(name, arity=1):
    def deco(fn):
        FUNCTIONS[name] = (fn, arity)
        return fn
    return deco


def is_float_type(t):
    """float or double, or a vector of them."""
    return isinstance(_scalar(t), (ir.FloatType, ir.DoubleType))


def _scalar(t):
    return t.element if isinstance(t, ir.VectorType) else t


def _like(t, scalar):
    """`scalar` as a vector of t's lanes when t is a vector, else scalar."""
    return ir.VectorType(scalar, t.count) if isinstance(t, ir.VectorType) else scalar


def constant(ty, value):
    """A constant of type ty (a vector: every lane `value`, printed as LLVM's `splat (...)`
    rather than one element per lane)."""
    s = _scalar(ty)
    c = ir.Constant(s, value if is_float_type(s) else int(value))
    if not isinstance(ty, ir.VectorType):
        return c
    splat = ir.FormattedConstant(s, f"splat ({c})")  # (a vector type would wrap the text)
    splat.type = ty
    return splat


class V:
    """An llvm value plus the context that emits operations on it."""
    __slots__ = ('c', 'v')
    __hash__ = None

    def __init__(self, c, v):
        self.c, self.v = c, v

    @property
    def type(self):
        return self.v.type

    @property
    def is_float(self):
        return is_float_type(self.v.type)

    def _o(self, o):
        if isinstance(o, V):
            return o.v
        return constant(self.v.type, o)

    def _bin(self, o, fop, iop, swap=False):
        a, b = self.v, self._o(o)
        if swap:
            a, b = b, a
        b_ = self.c.b
        return V(self.c, getattr(b_, fop if self.is_float else iop)(a, b))

    def __add__(self, o): return self._bin(o, 'fadd', 'add')
    def __radd__(self, o): return self._bin(o, 'fadd', 'add', True)
    def __sub__(self, o): return self._bin(o, 'fsub', 'sub')
    def __rsub__(self, o): return self._bin(o, 'fsub', 'sub', True)
    def __mul__(self, o): return self._bin(o, 'fmul', 'mul')
    def __rmul__(self, o): return self._bin(o, 'fmul', 'mul', True)
    def __truediv__(self, o): return self._bin(o, 'fdiv', 'sdiv')
    def __rtruediv__(self, o): return self._bin(o, 'fdiv', 'sdiv', True)
    def __and__(self, o): return self._bin(o, None, 'and_')
    def __rand__(self, o): return self._bin(o, None, 'and_', True)
    def __or__(self, o): return self._bin(o, None, 'or_')
    def __ror__(self, o): return self._bin(o, None, 'or_', True)
    def __xor__(self, o): return self._bin(o, None, 'xor')
    def __lshift__(self, o): return self._bin(o, None, 'shl')
    def __rshift__(self, o): return self._bin(o, None, 'ashr')

    def lshr(self, o):
        return V(self.c, self.c.b.lshr(self.v, self._o(o)))

    def __neg__(self):
        if self.is_float:
            return V(self.c, self.c.b.fneg(self.v))
        return V(self.c, self.c.b.neg(self.v))

    def __invert__(self):
        return V(self.c, self.c.b.not_(self.v))

    def _cmp(self, op, o):
        if self.is_float:
            return V(self.c, self.c.b.fcmp_ordered(op, self.v, self._o(o)))
        return V(self.c, self.c.b.icmp_signed(op, self.v, self._o(o)))

    # ordered comparisons: false when either side is NaN
    def lt(self, o): return self._cmp('<', o)
    def le(self, o): return self._cmp('<=', o)
    def gt(self, o): return self._cmp('>', o)
    def ge(self, o): return self._cmp('>=', o)
    def eq(self, o): return self._cmp('==', o)

    def ne(self, o):
        """Integers: !=. Floats: unordered-or-not-equal (true for NaN)."""
        if self.is_float:
            return V(self.c, self.c.b.fcmp_unordered('!=', self.v, self._o(o)))
        return V(self.c, self.c.b.icmp_signed('!=', self.v, self._o(o)))


class Ctx:
    """Emission context for one function body of float type `ty`."""

    def __init__(self, builder, ty):
        """ty: float or double, or a vector of one of them (every operation lane-wise)."""
        self.b = builder
        self.ty = ty
        self.module = builder.module
        self.f32 = isinstance(_scalar(ty), ir.FloatType)
        self.ity = _like(ty, I32 if self.f32 else I64)
        # IEEE layout of ty
        self.mant_bits = 23 if self.f32 else 52
        self.exp_bias = 127 if self.f32 else 1023
        self.exp_mask = 0xFF if self.f32 else 0x7FF

    # ---- constants and wrapping ----
    def wrap(self, v):
        return V(self, v)

    def const(self, value, ty=None):
        return V(self, constant(ty or self.ty, value))

    def iconst(self, value):
        return self.const(value, self.ity)

    def _v(self, x, ty=None):
        if isinstance(x, V):
            return x.v
        return constant(ty or self.ty, x)

    # ---- intrinsics ----
    def _intr(self, name, args, ty=None):
        fn = intrinsic(self.module, name, ty or args[0].type, len(args))
        return V(self, self.b.call(fn, args))

    def fma(self, a, b, c):
        """a*b + c, fused or not (llvm.fmuladd)."""
        ty = next(x.type for x in (a, b, c) if isinstance(x, V))
        return self._intr('llvm.fmuladd', [self._v(a, ty), self._v(b, ty), self._v(c, ty)], ty)

    def fma_exact(self, a, b, c):
        """a*b + c with one rounding (llvm.fma; needs FMA hardware to stay inline)."""
        ty = next(x.type for x in (a, b, c) if isinstance(x, V))
        return self._intr('llvm.fma', [self._v(a, ty), self._v(b, ty), self._v(c, ty)], ty)

    def _un(name):
        def f(self, x):
            return self._intr(name, [x.v])
        f.__name__ = name.split('.')[1]
        return f

    fabs = _un('llvm.fabs')
    floor = _un('llvm.floor')
    ceil = _un('llvm.ceil')
    trunc = _un('llvm.trunc')
    rint = _un('llvm.rint')
    sqrt = _un('llvm.sqrt')
    del _un

    def copysign(self, mag, sign):
        ty = mag.type if isinstance(mag, V) else sign.type
        return self._intr('llvm.copysign', [self._v(mag, ty), self._v(sign, ty)], ty)

    # ---- selects and predicates ----
    def select(self, cond, a, b):
        ty = a.type if isinstance(a, V) else (b.type if isinstance(b, V) else self.ty)
        return V(self, self.b.select(cond.v, self._v(a, ty), self._v(b, ty)))

    def isnan(self, x):
        return V(self, self.b.fcmp_unordered('uno', x.v, x.v))

    def isinf(self, x):
        return self.fabs(x).eq(float('inf'))

    def isfinite(self, x):
        return self.fabs(x).lt(float('inf'))

    # ---- conversions and bits ----
    def bits(self, x):
        ity = I32 if isinstance(_scalar(x.type), ir.FloatType) else I64
        return V(self, self.b.bitcast(x.v, _like(x.type, ity)))

    def from_bits(self, i, ty=None):
        ty = ty or _like(i.type, F32 if _scalar(i.type).width == 32 else F64)
        return V(self, self.b.bitcast(i.v, ty))

    def to_int(self, x, ity=None):
        """fptosi; the caller guarantees x is in range (out of range is poison)."""
        return V(self, self.b.fptosi(x.v, ity or self.ity))

    def to_float(self, i, ty=None):
        return V(self, self.b.sitofp(i.v, ty or self.ty))

    def ext(self, x):
        """float -> double. In code that runs with denormals flushed, a subnormal float
        widens to a zero of its sign, as the hardware reads it: LLVM folds the fpext of a
        constant exactly, so pow(4.2e-45, y) computed in double was 4.2e-45**y where XLA
        reads 0 (fuzz jax 21001831)."""
        return V(self, self.b.fpext(flush_subnormal(self.b, x.v), F64))

    def narrow(self, x):
        """double -> float (one IEEE rounding)"""
        return V(self, self.b.fptrunc(x.v, F32))

    def sext(self, i, ity):
        return V(self, self.b.sext(i.v, ity))

    def itrunc(self, i, ity):
        return V(self, self.b.trunc(i.v, ity))

    def pow2i(self, n, ty=None):
        """2**n as a float of type ty for an integer n in the normal exponent range."""
        ty = ty or self.ty
        f32 = isinstance(_scalar(ty), ir.FloatType)
        ity = _like(ty, I32 if f32 else I64)
        if n.type != ity:
            n = (self.sext(n, ity) if _scalar(n.type).width < _scalar(ity).width
                 else self.itrunc(n, ity))
        return self.from_bits((n + (127 if f32 else 1023)) << (23 if f32 else 52), ty)

    def ldexp_split(self, x, n, ty=None):
        """x * 2**n for |n| up to ~2 * max exponent, rounding once (x * 2**(n//2) is exact)."""
        n1 = n >> 1
        return x * self.pow2i(n1, ty) * self.pow2i(n - n1, ty)

    # ---- polynomials ----
    def horner(self, x, coeffs):
        """sum(coeffs[k] * x**k) by Horner's rule with fmuladd."""
        ty = x.type
        acc = self.const(coeffs[-1], ty)
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, self.const(c, ty))
        return acc

    # ---- tables ----
    def table(self, name, values, ty=None):
        """A private constant global array (created once per module)."""
        ty = ty or self.ty
        g = self.module.globals.get(name)
        if g is None:
            arr_t = ir.ArrayType(ty, len(values))
            g = ir.GlobalVariable(self.module, arr_t, name)
            g.global_constant = True
            g.linkage = 'private'
            g.unnamed_addr = True
            g.initializer = ir.Constant(arr_t, [ir.Constant(ty, v) for v in values])
        return g

    def load(self, table, idx):
        """table[idx] for an integer V idx (becomes a gather when vectorized)."""
        ptr = self.b.gep(table, [ir.Constant(I64, 0), idx.v], inbounds=True)
        return V(self, self.b.load(ptr))

    # ---- error-free transformations (double-word arithmetic) ----
    def two_sum(self, a, b):
        s = a + b
        bb = s - a
        return s, (a - (s - bb)) + (b - bb)

    def fast_two_sum(self, a, b):
        """requires |a| >= |b| (or a == 0)"""
        s = a + b
        return s, b - (s - a)

    def two_prod(self, a, b):
        p = a * b
        return p, self.fma_exact(a, b, -p)
