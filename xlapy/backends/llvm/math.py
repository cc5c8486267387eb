"""Vectorizable transcendental functions emitted as LLVM IR (no libm calls).

    from xlapy.backends.llvm.math import math_function
    fn = math_function(module, 'exp', ir.FloatType())     # -> ir.Function xlapy.exp.f32

Each function is created once per module as an internal, alwaysinline, nounwind function
`xlapy.<name>.<f32|f64>` with one scalar argument (two for pow and atan2). Its body is a
single basic block of plain arithmetic, bit manipulation, selects and vectorizable intrinsics
(llvm.fmuladd, llvm.fma, fabs, floor, rint, copysign, sqrt), plus gathers from small constant
tables (Payne-Hanek reduction, atan2 offsets). After inlining into an elementwise loop the loop
vectorizer turns it into SIMD code. No fast-math: NaN, infinities, signed zeros and
subnormals follow C99 / numpy; docs/math_accuracy.md gives the measured accuracy.

Functions: exp expm1 log log1p tanh logistic erf sin cos tan cbrt sqrt rsqrt, and the binary
pow atan2. The implementations live in math_explog.py, math_trig.py and math_special.py and
register themselves with `math_ir.register`.
"""
from llvmlite import ir

from . import math_explog, math_special, math_trig  # noqa: F401  (fill the registry)
from .math_ir import FUNCTIONS, Ctx

__all__ = ['math_function', 'FUNCTIONS', 'VECTOR_FUNCTIONS']

# functions whose implementation also builds on vector types (every lane the scalar result,
# bit for bit: the same operations lane-wise); the others use tables or double-double helpers
# that are written for scalars
# (math library names, not opcodes: the elemental rules map opcodes to these names)
VECTOR_FUNCTIONS = frozenset({'exp', 'expm1', 'log', 'log1p', 'tanh', 'logistic'})
if not VECTOR_FUNCTIONS <= FUNCTIONS.keys():
    raise RuntimeError(f'VECTOR_FUNCTIONS names unknown functions: '
                       f'{sorted(VECTOR_FUNCTIONS - FUNCTIONS.keys())}')


def math_function(module, name, ty):
    """Return (creating on first request) the function xlapy.<name>.<f32|f64> in `module`;
    for a vector type (VECTOR_FUNCTIONS only) xlapy.<name>.v<lanes><f32|f64>."""
    scalar = ty.element if isinstance(ty, ir.VectorType) else ty
    if isinstance(scalar, ir.FloatType):
        suffix = 'f32'
    elif isinstance(scalar, ir.DoubleType):
        suffix = 'f64'
    else:
        raise TypeError(f'math_function({name!r}): type {ty} is not float or double; '
                        'widen half/bfloat16 to float first')
    if name not in FUNCTIONS:
        raise KeyError(f'math_function: unknown function {name!r}; known: {sorted(FUNCTIONS)}')
    if isinstance(ty, ir.VectorType):
        if name not in VECTOR_FUNCTIONS:
            raise KeyError(f'math_function: {name!r} has no vector form')
        suffix = f'v{ty.count}{suffix}'
    fname = f'xlapy.{name}.{suffix}'
    existing = module.globals.get(fname)
    if existing is not None:
        return existing
    impl, arity = FUNCTIONS[name]
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * arity), fname)
    fn.linkage = 'internal'
    fn.attributes.add('alwaysinline')
    fn.attributes.add('nounwind')
    builder = ir.IRBuilder(fn.append_basic_block('entry'))
    c = Ctx(builder, ty)
    result = impl(c, *[c.wrap(a) for a in fn.args])
    builder.ret(result.v)
    return fn
