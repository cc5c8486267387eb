"""Core primitives: elementwise math, comparisons, select, convert, and their rules.

This is the strict, XLA-like layer (like jax.lax): operands of elementwise primitives must
have identical shapes and dtypes; NumPy-style broadcasting and type promotion live in
xlapy.numpy on top. Each primitive has its four rules side by side: eager NumPy impl (with
XLA semantics, e.g. integer division truncates), abstract evaluation, HLO lowering, VJP.

Each elementwise primitive is one row of a table; the row's VJP comment states the rule.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError, XlapyError
from xlapy.frontend.core import ShapedArray, Tracer, bind, dtype_name, get_aval, primitive
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


def _np_float_op(fn):
    """Run a float op in at least f32 (f16/bf16 widen to f32, then round back, as XLA)."""
    def impl(*xs):
        dt = np.asarray(xs[0]).dtype
        if dt.itemsize < 4 and is_float(dt):
            with np.errstate(all="ignore"):
                return fn(*[np.asarray(x, np.float32) for x in xs]).astype(dt)
        with np.errstate(all="ignore"):
            return np.asarray(fn(*xs), dtype=dt)
    return impl


# ---- elementwise unary -----------------------------------------------------------------------

def _erf(x):
    from scipy.special import erf
    return erf(x)


def _round_afz(x):
    r = np.trunc(x)
    return np.where(np.abs(x - r) >= 0.5, r + np.sign(x), r).astype(x.dtype)


def _logistic(x):
    x64 = np.asarray(x, np.float64)
    return 1.0 / (1.0 + np.exp(-x64))


def _sign(x):
    x = np.asarray(x)
    if is_float(x.dtype):
        return np.where(np.isnan(x) | (x == 0), x, np.sign(x)).astype(x.dtype)
    return np.sign(x).astype(x.dtype)


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


def _unary(name, np_fn, hlo, vjp=None, also=""):
    """A unary primitive lowering to the builder method `hlo`; the element types it takes
    are the opcode table's for that opcode (float-only ops compute f16/bf16 in f32)."""
    p, opcode = primitive(name), _opcode(hlo)
    float_only = OPCODES[opcode].float_only
    p.def_impl(_np_float_op(np_fn) if float_only else (lambda x: np.asarray(np_fn(x))))

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


neg_p = _unary("neg", np.negative, "negate", vjp=lambda ct, x, out: neg(ct))          # d(-x) = -1
abs_p = _unary("abs", np.abs, "abs",                                # |x|' = 1 at x >= 0, else -1
              vjp=lambda ct, x, out: select(ge(x, zeros_like(x)), ct, neg(ct)))
# HLO sign takes signed and float types (the opcode table); unsigned lowers to x != 0, as JAX's
sign_p = _unary("sign", _sign, "sign", vjp=_zero_vjp, also="u")                       # 0
floor_p = _unary("floor", np.floor, "floor", vjp=_zero_vjp)                            # 0
ceil_p = _unary("ceil", np.ceil, "ceil", vjp=_zero_vjp)                                # 0
round_p = _unary("round", np.rint, "round_nearest_even", vjp=_zero_vjp)                # 0
round_afz_p = _unary("round_afz", _round_afz, "round_nearest_afz", vjp=_zero_vjp)      # 0
exp_p = _unary("exp", np.exp, "exponential",
               vjp=lambda ct, x, out: mul(ct, out))                                    # e^x
expm1_p = _unary("expm1", np.expm1, "exponential_minus_one",
                 vjp=lambda ct, x, out: mul(ct, add(out, full_like(out, 1))))          # e^x
log_p = _unary("log", np.log, "log",
               vjp=lambda ct, x, out: div(ct, x))                                      # 1/x
log1p_p = _unary("log1p", np.log1p, "log_plus_one",
                 vjp=lambda ct, x, out: div(ct, add(x, full_like(x, 1))))              # 1/(1+x)
logistic_p = _unary("logistic", _logistic, "logistic",                                # s(1-s)
                    vjp=lambda ct, x, out: mul(ct, mul(out, sub(full_like(out, 1), out))))
tanh_p = _unary("tanh", np.tanh, "tanh",                                              # 1-t^2
                vjp=lambda ct, x, out: mul(ct, sub(full_like(out, 1), mul(out, out))))
sin_p = _unary("sin", np.sin, "sine",
               vjp=lambda ct, x, out: mul(ct, cos(x)))                                 # cos x
cos_p = _unary("cos", np.cos, "cosine",
               vjp=lambda ct, x, out: neg(mul(ct, sin(x))))                            # -sin x
tan_p = _unary("tan", np.tan, "tan",                                                  # 1+t^2
               vjp=lambda ct, x, out: mul(ct, add(full_like(out, 1), mul(out, out))))
sqrt_p = _unary("sqrt", np.sqrt, "sqrt",                                              # 1/(2 sqrt x)
                vjp=lambda ct, x, out: div(ct, mul(out, full_like(out, 2))))
rsqrt_p = _unary("rsqrt", lambda x: 1.0 / np.sqrt(x), "rsqrt",                        # -r/(2x)
                 vjp=lambda ct, x, out: mul(ct, div(mul(out, full_like(out, -0.5)), x)))
cbrt_p = _unary("cbrt", np.cbrt, "cbrt",                                              # c/(3x)
                vjp=lambda ct, x, out: mul(ct, div(out, mul(x, full_like(x, 3)))))
erf_p = _unary("erf", _erf, "erf",                                                    # 2/sqrt(pi)
               vjp=lambda ct, x, out: mul(ct, mul(full_like(x, 2 / np.sqrt(np.pi)),   # * e^-x^2
                                                  exp(neg(mul(x, x))))))
not_p = _unary("not", lambda x: np.logical_not(x) if x.dtype == bool else np.invert(x), "not_")
is_finite_p = _unary("is_finite", np.isfinite, "is_finite")


@is_finite_p.def_abstract_eval
def _is_finite_aval(a):
    check_types("is_finite", "is-finite", a)
    return ShapedArray(a.shape, np.bool_)


is_finite_p.def_impl(lambda x: np.isfinite(np.asarray(x)))


def _sign_lowering(ctx, x):
    if x.shape.element_type.kind != "u":
        return ctx.b.sign(x)
    dims, t = x.shape.dims, x.shape.element_type.np_dtype
    zero = ctx.b.broadcast(ctx.b.constant(np.zeros((), t)), dims)
    one = ctx.b.broadcast(ctx.b.constant(np.ones((), t)), dims)
    return ctx.b.select(ctx.b.compare(x, zero, "EQ"), zero, one)


sign_p.def_lowering(_sign_lowering)


# ---- elementwise binary ----------------------------------------------------------------------

def _int_div(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if is_float(x.dtype):
        return _np_float_op(np.divide)(x, y)
    with np.errstate(all="ignore"):
        safe = np.where(y == 0, 1, y)
        q = np.trunc(x.astype(np.float64) / safe).astype(x.dtype) if x.dtype.itemsize < 8 else \
            (np.abs(x) // np.abs(safe) * np.sign(x) * np.sign(safe)).astype(x.dtype)
        return np.where(y == 0, np.array(-1).astype(x.dtype), q)


def _int_rem(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if is_float(x.dtype):
        return _np_float_op(np.fmod)(x, y)
    with np.errstate(all="ignore"):
        safe = np.where(y == 0, 1, y)
        r = np.fmod(x, safe)
        return np.where(y == 0, x, r).astype(x.dtype)


def _pow(x, y):
    return _np_float_op(np.power)(x, y)


BINARY = {}


def _binary(name, np_fn, hlo, vjp=None):
    """A binary primitive lowering to the builder method `hlo`, taking the element types
    the opcode table allows for that opcode."""
    p, opcode = primitive(name), _opcode(hlo)
    p.def_impl(lambda x, y: np.asarray(np_fn(np.asarray(x), np.asarray(y))))

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


def _wrap_add(x, y):
    with np.errstate(all="ignore"):
        return np.add(x, y) if x.dtype != bool else np.logical_or(x, y)


def _wrap(fn):
    def f(x, y):
        with np.errstate(all="ignore"):
            return fn(x, y)
    return f


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


add_p = _binary("add", _wrap_add, "add", vjp=lambda ct, x, y, out: (ct, ct))
sub_p = _binary("sub", _wrap(np.subtract), "subtract", vjp=lambda ct, x, y, out: (ct, neg(ct)))
mul_p = _binary("mul", _wrap(lambda x, y: np.multiply(x, y) if x.dtype != bool else x & y),
                "multiply", vjp=lambda ct, x, y, out: (mul(ct, y), mul(ct, x)))
div_p = _binary("div", _int_div, "divide",                                    # (1/y, -x/y^2)
                vjp=lambda ct, x, y, out: (div(ct, y), neg(mul(ct, div(out, y)))))
rem_p = _binary("rem", _int_rem, "remainder", vjp=_rem_vjp)
pow_p = _binary("pow", _pow, "power", vjp=_pow_vjp)
max_p = _binary("max", _wrap(np.maximum), "maximum", vjp=_max_vjp)
min_p = _binary("min", _wrap(np.minimum), "minimum", vjp=_min_vjp)
atan2_p = _binary("atan2", _np_float_op(np.arctan2), "atan2", vjp=_atan2_vjp)
and_p = _binary("and", lambda x, y: x & y, "and_")
or_p = _binary("or", lambda x, y: x | y, "or_")
xor_p = _binary("xor", lambda x, y: x ^ y, "xor")


def _shift(kind):
    def fn(x, y):
        x, y = np.asarray(x), np.asarray(y)
        bits = x.dtype.itemsize * 8
        u = y.astype(np.uint64)
        ok = u < bits
        s = np.where(ok, y, 0).astype(x.dtype)
        if kind == "left":
            return np.where(ok, np.left_shift(x, s), 0).astype(x.dtype)
        if kind == "logical":
            ux = x.view(np.dtype(f"u{x.dtype.itemsize}"))
            shifted = np.where(ok, np.right_shift(ux, s.view(ux.dtype)), 0)
            return shifted.astype(ux.dtype).view(x.dtype)
        fill = np.right_shift(x, bits - 1)
        return np.where(ok, np.right_shift(x, s), fill).astype(x.dtype)
    return fn


shift_left_p = _binary("shift_left", _shift("left"), "shift_left")
shift_right_logical_p = _binary("shift_right_logical", _shift("logical"), "shift_right_logical")
shift_right_arithmetic_p = _binary("shift_right_arithmetic", _shift("arith"),
                                   "shift_right_arithmetic")

# ---- comparisons, select, convert ----------------------------------------------------------

COMPARE = {}


def _compare(name, np_fn, direction):
    p = primitive(name)
    p.def_impl(lambda x, y: np.asarray(_wrap(np_fn)(np.asarray(x), np.asarray(y))))

    @p.def_abstract_eval
    def _(a, b, _name=name):
        check_same(_name, a, b)
        return ShapedArray(a.shape, np.bool_)

    p.def_lowering(lambda ctx, x, y, _d=direction: ctx.b.compare(x, y, _d))
    COMPARE[name] = p
    return p


eq_p = _compare("eq", np.equal, "EQ")
ne_p = _compare("ne", np.not_equal, "NE")
lt_p = _compare("lt", np.less, "LT")
le_p = _compare("le", np.less_equal, "LE")
gt_p = _compare("gt", np.greater, "GT")
ge_p = _compare("ge", np.greater_equal, "GE")

select_p = primitive("select")
select_p.def_impl(lambda p, x, y: np.asarray(np.where(p, x, y)))


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


def _convert_impl(x, dtype):
    x = np.asarray(x)
    dtype = np.dtype(dtype)
    if is_float(x.dtype) and np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        with np.errstate(all="ignore"):
            t = np.trunc(x.astype(np.float64))
            # compare against the bounds as floats: float(int64 max) rounds up to 2**63
            hi, lo = t >= float(info.max), t <= float(info.min)
            y = np.where(np.isnan(t) | hi | lo, 0, t).astype(dtype)
            return np.where(hi, info.max, np.where(lo, info.min, y)).astype(dtype)
    if dtype == np.bool_:
        return x != 0
    with np.errstate(all="ignore"):
        return x.astype(dtype)


convert_p.def_impl(_convert_impl)
convert_p.def_abstract_eval(lambda a, dtype: ShapedArray(a.shape, dtype))
convert_p.def_lowering(lambda ctx, x, dtype: ctx.b.convert(x, np.dtype(dtype)))
convert_p.def_vjp(lambda ct, x, out, dtype: (convert(ct, aval_of(x).dtype)
                                             if is_float(aval_of(x).dtype) else None,))

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
