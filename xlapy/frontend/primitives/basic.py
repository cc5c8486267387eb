"""Core primitives: elementwise math, comparisons, select, convert, and their rules.

This is the strict, XLA-like layer (like jax.lax): operands of elementwise primitives must
have identical shapes and dtypes; NumPy-style broadcasting and type promotion live in
xlapy.numpy on top. Each primitive has its rules side by side: the eager impl (the HLO
evaluator on the primitive's lowering, eager.py: XLA's semantics, e.g. integer division
truncates, in one NumPy implementation), abstract evaluation, HLO lowering, VJP.

Each elementwise primitive is one row of a table; the row's VJP comment states the rule.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError, XlapyError
from xlapy.frontend.core import ShapedArray, Tracer, bind, dtype_name, get_aval, primitive
from xlapy.frontend.eager import via_evaluator
from xlapy.hlo.opcodes import OPCODES, kind_letter
from xlapy.hlo.shapes import primitive_type

# ---- helpers used by every primitive module --------------------------------------------------


def aval_of(x) -> ShapedArray:
    return get_aval(x)


def check_same(name: str, *avals: ShapedArray) -> ShapedArray:
    a0 = avals[0]
    for a in avals[1:]:
        if a.shape != a0.shape or a.dtype != a0.dtype:
            raise ShapeError(f"{name}: operands must have the same shape and dtype, got "
                             f"{', '.join(str(a) for a in avals)}")
    weak = all(a.weak_type for a in avals)
    return a0 if a0.weak_type == weak else ShapedArray(a0.shape, a0.dtype, weak)


def is_float(dtype) -> bool:
    import ml_dtypes
    dt = np.dtype(dtype)
    return np.issubdtype(dt, np.floating) or dt == np.dtype(ml_dtypes.bfloat16)


def is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def is_inexact(dtype) -> bool:
    """Floating point or complex: the dtypes values are differentiated in (as JAX's)."""
    return is_float(dtype) or is_complex(dtype)


def real_dtype(dtype) -> np.dtype:
    """The component dtype of a complex dtype (complex64 -> float32); others unchanged."""
    dt = np.dtype(dtype)
    return np.dtype(np.float32 if dt == np.complex64 else np.float64) if is_complex(dt) else dt


# ---- elementwise unary -----------------------------------------------------------------------

def _opcode(builder_method: str) -> str:
    """The HLO opcode a Builder method named like it emits (round_nearest_even ->
    round-nearest-even, not_ -> not)."""
    return builder_method.rstrip("_").replace("_", "-")


def check_types(name: str, opcode: str, a: ShapedArray, also: str = "") -> None:
    """The element types the opcode table allows for `opcode` (its `types` column), plus the
    kinds in `also` that the primitive's lowering handles without that opcode."""
    info = OPCODES[opcode]
    kind = primitive_type(a.dtype).kind
    if not (info.accepts(kind) or kind_letter(kind) in also):
        raise ShapeError(f"{name}: expects {info.types_text} element type, got {a}")


UNARY = {}


def _unary(name, hlo, vjp=None, also=""):
    """A unary primitive lowering to the builder method `hlo`; the element types it takes
    are the opcode table's for that opcode (float-only ops compute f16/bf16 in f32)."""
    p, opcode = primitive(name), _opcode(hlo)
    p.def_impl(via_evaluator(p))

    @p.def_abstract_eval
    def _(a):
        check_types(name, opcode, a, also)
        return a

    p.def_lowering(lambda ctx, x, _hlo=hlo: getattr(ctx.b, _hlo)(x))
    if vjp is not None:
        p.def_vjp(lambda ct, x, out: (vjp(ct, x, out),))
    UNARY[name] = p
    return p


def _zero_vjp(ct, x, out):
    return None


def _abs_vjp(ct, x, out):
    if is_complex(aval_of(x).dtype):  # JAX's: ct conj(x)/|x| (0 at x = 0)
        safe = select(eq(out, zeros_like(out)), full_like(out, 1), out)
        g = div(convert(ct, aval_of(x).dtype), convert(safe, aval_of(x).dtype))
        return _conj_mul(g, x)
    return select(ge(x, zeros_like(x)), ct, neg(ct))               # 1 at x >= 0, else -1


def _conj_mul(g, x):
    """g * conj(x), through the HLO ops (real/imag/complex) of a complex x."""
    from xlapy.frontend.primitives.complex import conj
    return mul(g, conj(x))


neg_p = _unary("neg", "negate", vjp=lambda ct, x, out: neg(ct))          # d(-x) = -1
abs_p = _unary("abs", "abs", vjp=_abs_vjp)
# HLO sign takes signed and float types (the opcode table); unsigned lowers to x != 0, as JAX's
sign_p = _unary("sign", "sign", vjp=_zero_vjp, also="u")                       # 0
floor_p = _unary("floor", "floor", vjp=_zero_vjp)                            # 0
ceil_p = _unary("ceil", "ceil", vjp=_zero_vjp)                                # 0
round_p = _unary("round", "round_nearest_even", vjp=_zero_vjp)                # 0
round_afz_p = _unary("round_afz", "round_nearest_afz", vjp=_zero_vjp)      # 0
exp_p = _unary("exp", "exponential",
               vjp=lambda ct, x, out: mul(ct, out))                                    # e^x
expm1_p = _unary("expm1", "exponential_minus_one",
                 vjp=lambda ct, x, out: mul(ct, add(out, full_like(out, 1))))          # e^x
log_p = _unary("log", "log",
               vjp=lambda ct, x, out: div(ct, x))                                      # 1/x
log1p_p = _unary("log1p", "log_plus_one",
                 vjp=lambda ct, x, out: div(ct, add(x, full_like(x, 1))))              # 1/(1+x)
logistic_p = _unary("logistic", "logistic",                                # s(1-s)
                    vjp=lambda ct, x, out: mul(ct, mul(out, sub(full_like(out, 1), out))))
tanh_p = _unary("tanh", "tanh",                                              # 1-t^2
                vjp=lambda ct, x, out: mul(ct, sub(full_like(out, 1), mul(out, out))))
sin_p = _unary("sin", "sine",
               vjp=lambda ct, x, out: mul(ct, cos(x)))                                 # cos x
cos_p = _unary("cos", "cosine",
               vjp=lambda ct, x, out: neg(mul(ct, sin(x))))                            # -sin x
tan_p = _unary("tan", "tan",                                                  # 1+t^2
               vjp=lambda ct, x, out: mul(ct, add(full_like(out, 1), mul(out, out))))
sqrt_p = _unary("sqrt", "sqrt",                                              # 1/(2 sqrt x)
                vjp=lambda ct, x, out: div(ct, mul(out, full_like(out, 2))))
rsqrt_p = _unary("rsqrt", "rsqrt",                        # -r/(2x)
                 vjp=lambda ct, x, out: mul(ct, div(mul(out, full_like(out, -0.5)), x)))
cbrt_p = _unary("cbrt", "cbrt",                                              # c/(3x)
                vjp=lambda ct, x, out: mul(ct, div(out, mul(x, full_like(x, 3)))))
erf_p = _unary("erf", "erf",                                                    # 2/sqrt(pi)
               vjp=lambda ct, x, out: mul(ct, mul(full_like(x, 2 / np.sqrt(np.pi)),   # * e^-x^2
                                                  exp(neg(mul(x, x))))))
not_p = _unary("not", "not_")
population_count_p = _unary("population_count", "popcnt", vjp=_zero_vjp)     # integers
clz_p = _unary("clz", "count_leading_zeros", vjp=_zero_vjp)                     # integers
is_finite_p = _unary("is_finite", "is_finite")


@abs_p.def_abstract_eval
def _abs_aval(a):
    check_types("abs", "abs", a)
    return ShapedArray(a.shape, real_dtype(a.dtype), a.weak_type) if is_complex(a.dtype) else a


@is_finite_p.def_abstract_eval
def _is_finite_aval(a):
    check_types("is_finite", "is-finite", a)
    return ShapedArray(a.shape, np.bool_)




def _sign_lowering(ctx, x):
    if x.shape.element_type.kind != "u":
        return ctx.b.sign(x)
    dims, t = x.shape.dims, x.shape.element_type.np_dtype
    zero = ctx.b.broadcast(ctx.b.constant(np.zeros((), t)), dims)
    one = ctx.b.broadcast(ctx.b.constant(np.ones((), t)), dims)
    return ctx.b.select(ctx.b.compare(x, zero, "EQ"), zero, one)


sign_p.def_lowering(_sign_lowering)


# ---- elementwise binary ----------------------------------------------------------------------

BINARY = {}


def _binary(name, hlo, vjp=None):
    """A binary primitive lowering to the builder method `hlo`, taking the element types
    the opcode table allows for that opcode."""
    p, opcode = primitive(name), _opcode(hlo)
    p.def_impl(via_evaluator(p))

    @p.def_abstract_eval
    def _(a, b):
        check_same(name, a, b)
        check_types(name, opcode, a)
        return a

    p.def_lowering(lambda ctx, x, y, _hlo=hlo: getattr(ctx.b, _hlo)(x, y))
    if vjp is not None:
        p.def_vjp(lambda ct, x, y, out: vjp(ct, x, y, out))
    BINARY[name] = p
    return p


def _max_vjp(ct, x, y, out):
    # ties split the cotangent evenly (as JAX does)
    half = full_like(ct, 0.5)
    gx = select(eq(x, y), mul(ct, half), select(gt(x, y), ct, zeros_like(ct)))
    gy = select(eq(x, y), mul(ct, half), select(gt(x, y), zeros_like(ct), ct))
    return gx, gy


def _min_vjp(ct, x, y, out):
    half = full_like(ct, 0.5)
    gx = select(eq(x, y), mul(ct, half), select(lt(x, y), ct, zeros_like(ct)))
    gy = select(eq(x, y), mul(ct, half), select(lt(x, y), zeros_like(ct), ct))
    return gx, gy


def _pow_vjp(ct, x, y, out):
    one = full_like(y, 1)
    gx = mul(ct, mul(y, pow_(x, sub(y, one))))                                # y x^(y-1)
    safe = select(eq(x, zeros_like(x)), full_like(x, 1), x)                  # x^y ln x
    gy = mul(ct, mul(out, log(safe)))  # as JAX: 0 at x = 0, NaN for x < 0 (ln x undefined)
    return gx, gy


def _atan2_vjp(ct, x, y, out):
    denom = add(mul(x, x), mul(y, y))                                          # atan2(x, y)
    return mul(ct, div(y, denom)), mul(ct, div(neg(x), denom))


def _rem_vjp(ct, x, y, out):
    return ct, mul(neg(ct), round_toward_zero(div(x, y)))                     # x - y*trunc(x/y)


add_p = _binary("add", "add", vjp=lambda ct, x, y, out: (ct, ct))
sub_p = _binary("sub", "subtract", vjp=lambda ct, x, y, out: (ct, neg(ct)))
mul_p = _binary("mul", "multiply", vjp=lambda ct, x, y, out: (mul(ct, y), mul(ct, x)))
div_p = _binary("div", "divide",                                    # (1/y, -x/y^2)
                vjp=lambda ct, x, y, out: (div(ct, y), neg(mul(ct, div(out, y)))))
rem_p = _binary("rem", "remainder", vjp=_rem_vjp)
pow_p = _binary("pow", "power", vjp=_pow_vjp)
max_p = _binary("max", "maximum", vjp=_max_vjp)
min_p = _binary("min", "minimum", vjp=_min_vjp)
atan2_p = _binary("atan2", "atan2", vjp=_atan2_vjp)
and_p = _binary("and", "and_")
or_p = _binary("or", "or_")
xor_p = _binary("xor", "xor")


shift_left_p = _binary("shift_left", "shift_left")
shift_right_logical_p = _binary("shift_right_logical", "shift_right_logical")
shift_right_arithmetic_p = _binary("shift_right_arithmetic", "shift_right_arithmetic")

# ---- comparisons, select, convert ----------------------------------------------------------

COMPARE = {}


def _compare(name, direction):
    p = primitive(name)
    p.def_impl(via_evaluator(p))

    @p.def_abstract_eval
    def _(a, b, _name=name):
        check_same(_name, a, b)
        return ShapedArray(a.shape, np.bool_)

    p.def_lowering(lambda ctx, x, y, _d=direction: ctx.b.compare(x, y, _d))
    COMPARE[name] = p
    return p


eq_p = _compare("eq", "EQ")
ne_p = _compare("ne", "NE")
lt_p = _compare("lt", "LT")
le_p = _compare("le", "LE")
gt_p = _compare("gt", "GT")
ge_p = _compare("ge", "GE")

select_p = primitive("select")
select_p.def_impl(via_evaluator(select_p))


@select_p.def_abstract_eval
def _select_aval(p, x, y):
    check_same("select", x, y)
    if p.dtype != np.bool_ or p.shape != x.shape:
        raise ShapeError(f"select: the predicate must be bool with shape {list(x.shape)}, got {p}")
    return x


select_p.def_lowering(lambda ctx, p, x, y: ctx.b.select(p, x, y))
select_p.def_vjp(lambda ct, p, x, y, out: (None, select(p, ct, zeros_like(ct)),
                                            select(p, zeros_like(ct), ct)))

convert_p = primitive("convert")


convert_p.def_impl(via_evaluator(convert_p))
convert_p.def_abstract_eval(lambda a, dtype: ShapedArray(a.shape, dtype))


def _convert_lowering(ctx, x, dtype):
    dtype = np.dtype(dtype)
    if x.shape.element_type.is_complex and not is_complex(dtype):
        x = ctx.b.op("real", x)  # complex -> real keeps the real part, as JAX's does
        if x.shape.element_type.np_dtype == dtype:
            return x
    return ctx.b.convert(x, dtype)


convert_p.def_lowering(_convert_lowering)
convert_p.def_vjp(lambda ct, x, out, dtype: (convert(ct, aval_of(x).dtype)
                                             if is_inexact(aval_of(x).dtype) else None,))

# ---- constants ---------------------------------------------------------------------------------

broadcast_in_dim_p = primitive("broadcast_in_dim")


@broadcast_in_dim_p.def_impl
def _bid_impl(x, shape, broadcast_dimensions):
    x = np.asarray(x)
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(x.reshape(expanded), shape).copy()


@broadcast_in_dim_p.def_abstract_eval
def _bid_aval(a, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != a.ndim:
        raise ShapeError(f"broadcast_in_dim: {a} needs {a.ndim} broadcast dimensions, got "
                         f"{broadcast_dimensions}")
    for src, dst in enumerate(broadcast_dimensions):
        if not 0 <= dst < len(shape) or a.shape[src] not in (1, shape[dst]):
            raise ShapeError(f"broadcast_in_dim: cannot broadcast {a} to {list(shape)} with "
                             f"dimensions {list(broadcast_dimensions)}")
    return ShapedArray(shape, a.dtype)


broadcast_in_dim_p.def_lowering(
    lambda ctx, x, shape, broadcast_dimensions:
        ctx.b.broadcast_in_dim(x, shape, broadcast_dimensions))


@broadcast_in_dim_p.def_vjp
def _bid_vjp(ct, x, out, shape, broadcast_dimensions):
    a = aval_of(x)
    from xlapy.frontend.primitives.shapes import reduce_sum, reshape
    summed = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    keep_ones = [dst for src, dst in enumerate(broadcast_dimensions)
                 if a.shape[src] == 1 and shape[dst] != 1]
    g = reduce_sum(ct, tuple(sorted(summed + keep_ones)))
    return (reshape(g, a.shape),)


def full(shape, value, dtype) -> object:
    """An array of `shape` filled with `value` (a broadcast of a scalar constant)."""
    scalar = np.array(value, dtype=np.dtype(dtype))
    if shape == ():
        return scalar
    return bind(broadcast_in_dim_p, scalar, shape=tuple(shape), broadcast_dimensions=())


def full_like(x, value):
    a = aval_of(x)
    return full(a.shape, value, a.dtype)


def zeros_like(x):
    return full_like(x, 0)


# ---- functions (the strict "lax" API) ------------------------------------------------------------

def _fn(p):
    return lambda *args: bind(p, *args)


neg, abs_, sign, floor, ceil = _fn(neg_p), _fn(abs_p), _fn(sign_p), _fn(floor_p), _fn(ceil_p)
exp, expm1, log, log1p, logistic = (_fn(exp_p), _fn(expm1_p), _fn(log_p), _fn(log1p_p),
                                    _fn(logistic_p))
tanh, sin, cos, tan, sqrt, rsqrt = (_fn(tanh_p), _fn(sin_p), _fn(cos_p), _fn(tan_p), _fn(sqrt_p),
                                    _fn(rsqrt_p))
cbrt, erf, not_, is_finite = _fn(cbrt_p), _fn(erf_p), _fn(not_p), _fn(is_finite_p)
round_even, round_afz = _fn(round_p), _fn(round_afz_p)
add, sub, mul, div, rem, pow_ = (_fn(add_p), _fn(sub_p), _fn(mul_p), _fn(div_p), _fn(rem_p),
                                 _fn(pow_p))
max_, min_, atan2 = _fn(max_p), _fn(min_p), _fn(atan2_p)
and_, or_, xor = _fn(and_p), _fn(or_p), _fn(xor_p)
shift_left, shift_right_logical = _fn(shift_left_p), _fn(shift_right_logical_p)
shift_right_arithmetic = _fn(shift_right_arithmetic_p)
eq, ne, lt, le, gt, ge = _fn(eq_p), _fn(ne_p), _fn(lt_p), _fn(le_p), _fn(gt_p), _fn(ge_p)
select = _fn(select_p)


def convert(x, dtype):
    dtype = np.dtype(dtype)
    if aval_of(x).dtype == dtype:
        return x
    return bind(convert_p, x, dtype=dtype)


def round_toward_zero(x):
    return select(lt(x, zeros_like(x)), ceil(x), floor(x))


def broadcast_in_dim(x, shape, broadcast_dimensions):
    shape, bd = tuple(int(d) for d in shape), tuple(int(d) for d in broadcast_dimensions)
    a = aval_of(x)
    if a.shape == shape and bd == tuple(range(len(shape))):
        return x
    return bind(broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=bd)


def unsupported(name: str):
    raise XlapyError(f"{name} is not supported by xlapy")


__all__ = ["Tracer", "dtype_name"]
