"""Elementwise interpreter rules checked against XLA:CPU on the same HLO text.

An op table gives, for every elementwise opcode, the element types it accepts and how its
results compare (EXACT: bit-for-bit up to NaN payloads, signed zeros included; APPROX: a
few ulps, for XLA's polynomial transcendentals).  Inputs are special values (+-0, +-inf,
NaN, extremes, rounding ties, INT_MIN/INT_MAX, out-of-range shift amounts); binary ops run
on every pair.  The oracle parses the same HLO text with XLA's own parser and runs it on
XLA:CPU (through jaxlib).

XLA:CPU flushes subnormals to zero (inputs and results), the interpreter does not: inputs
here avoid subnormals, an XLA zero matches an interpreter subnormal, and the IEEE
behaviour on subnormals is tested separately against hand-computed values.
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from xlapy.backends.interpreter import evaluate
from xlapy.errors import EvaluationError, ShapeError
from xlapy.hlo import parse, verify
from xlapy.hlo.shapes import primitive_type

jax = pytest.importorskip("jax")
jax.config.update("jax_platforms", "cpu")
import jax.extend.backend  # noqa: E402
import jaxlib._hlo as _hlo  # noqa: E402
from jax._src.lib import xla_client as _xc  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]
SINTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)]
UINTS = [np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]
PRED = [np.dtype(np.bool_)]
KINDS = {"f": FLOATS, "s": SINTS, "u": UINTS, "p": PRED}
EXACT, APPROX = "exact", "approx"


# ---- the oracle and the comparison -----------------------------------------------------------

def run_xla(text: str, *args) -> list[np.ndarray]:
    """Run HLO text on XLA:CPU; returns the flat outputs."""
    module = _hlo.hlo_module_from_text(text)
    comp = _hlo.XlaComputation(module.as_serialized_hlo_module_proto())
    mlir = _xc._xla.mlir.xla_computation_to_mlir_module(comp)
    backend = jax.extend.backend.get_backend("cpu")
    devices = _xc._xla.DeviceList(tuple(backend.local_devices()[:1]))
    exe = backend.compile_and_load(str(mlir), devices, _xc.CompileOptions())
    with jax.enable_x64(True):
        bufs = [jax.device_put(np.asarray(a), exe.local_devices()[0]) for a in args]
    results = exe.execute_sharded(bufs).disassemble_into_single_device_arrays()
    return [np.asarray(r[0]) for r in results]


def run_ours(text: str, *args) -> list[np.ndarray]:
    out = evaluate(parse(text), *args)
    return list(out) if isinstance(out, tuple) else [out]


def _tolerance(dt) -> tuple[float, float]:
    return {np.dtype(np.float16): (2e-3, 1e-4), BF16: (1.6e-2, 1e-3),
            np.dtype(np.float32): (4e-6, 1e-7), np.dtype(np.float64): (1e-13, 1e-300)}[dt]


def assert_same(got, want, how: str = EXACT, what: str = "") -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != XLA's {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != XLA's {want.shape}"
    if want.dtype not in FLOATS:
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    tiny = float(ml_dtypes.finfo(want.dtype).tiny)
    ok = (np.isnan(g) & np.isnan(w)) | ((w == 0) & (np.abs(g) < tiny))  # XLA flushes to zero
    if how == EXACT:
        ok |= (g == w) & (np.signbit(g) == np.signbit(w))
    else:
        rtol, atol = _tolerance(want.dtype)
        with np.errstate(invalid="ignore"):
            ok |= (g == w) | (np.abs(g - w) <= atol + rtol * np.abs(w))
    if not ok.all():
        bad = ~ok
        raise AssertionError(f"{what}: {int(bad.sum())} of {ok.size} differ: interpreter "
                             f"{got[bad][:10]} XLA {want[bad][:10]}")


def check(text: str, *args, how: str = EXACT) -> list[np.ndarray]:
    ours, xla = run_ours(text, *args), run_xla(text, *args)
    assert len(ours) == len(xla)
    for i, (g, w) in enumerate(zip(ours, xla)):
        assert_same(g, w, how, f"output {i} of\n{text}\n")
    return ours


# ---- inputs ----------------------------------------------------------------------------------

def tname(dt) -> str:
    return primitive_type(dt).name


def special_values(dt) -> np.ndarray:
    dt = np.dtype(dt)
    if dt == np.bool_:
        return np.array([False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = [0, 1, 2, 3, 7, 100, info.max, info.max - 1, info.min, info.min + 1,
                info.max // 2, 0x55 & info.max]
        if dt.kind == "i":
            vals += [-1, -2, -3, -7, -100, info.min // 2]
        return np.array(sorted(set(vals)), dtype=dt)
    finfo = ml_dtypes.finfo(dt)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.25, 0.1, 100.0, -100.0,
            1e-3, 0.75, np.pi, 65504.0, float(finfo.max), -float(finfo.max),
            float(finfo.tiny), np.inf, -np.inf, np.nan]
    if dt == np.float32:
        vals += [0.49999997, -0.49999997, 8388609.0, 3e9, -3e9, 1e30]
    return np.array(vals, dtype=np.float64).astype(dt)


def shift_amounts(dt) -> np.ndarray:
    w = np.dtype(dt).itemsize * 8
    vals = [0, 1, 3, w - 1, w, w + 1, 100 % 2 ** min(w, 8), -1, -w, -2 ** (w - 1)]
    return np.array([v % 2 ** w for v in vals], dtype=f"u{w // 8}").view(dt)


def pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x, y = zip(*itertools.product(a, b))
    return np.array(x, dtype=a.dtype), np.array(y, dtype=b.dtype)


def unary_module(opcode: str, dt, out_dt, n: int, attrs: str = "") -> str:
    return (f"HloModule m\nENTRY e {{\n  x = {tname(dt)}[{n}] parameter(0)\n"
            f"  ROOT r = {tname(out_dt)}[{n}] {opcode}(x){attrs}\n}}\n")


def binary_module(opcode: str, dt, out_dt, n: int, attrs: str = "") -> str:
    return (f"HloModule m\nENTRY e {{\n  x = {tname(dt)}[{n}] parameter(0)\n"
            f"  y = {tname(dt)}[{n}] parameter(1)\n"
            f"  ROOT r = {tname(out_dt)}[{n}] {opcode}(x, y){attrs}\n}}\n")


# ---- the op table ----------------------------------------------------------------------------
# opcode -> (element kinds XLA accepts, result comparison, output kind or None for "same")

UNARY = {
    "abs": ("fs", EXACT, None), "negate": ("fsu", EXACT, None), "sign": ("fs", EXACT, None),
    "floor": ("f", EXACT, None), "ceil": ("f", EXACT, None),
    "round-nearest-afz": ("f", EXACT, None), "round-nearest-even": ("f", EXACT, None),
    "exponential": ("f", APPROX, None), "exponential-minus-one": ("f", APPROX, None),
    "log": ("f", APPROX, None), "log-plus-one": ("f", APPROX, None),
    "logistic": ("f", APPROX, None), "sqrt": ("f", EXACT, None), "rsqrt": ("f", APPROX, None),
    "cbrt": ("f", APPROX, None), "sine": ("f", APPROX, None), "cosine": ("f", APPROX, None),
    "tan": ("f", APPROX, None), "tanh": ("f", APPROX, None), "erf": ("f", APPROX, None),
    "not": ("psu", EXACT, None), "is-finite": ("f", EXACT, "pred"),
    "popcnt": ("su", EXACT, None), "count-leading-zeros": ("su", EXACT, None),
}
BINARY = {
    "add": ("fsup", EXACT), "subtract": ("fsu", EXACT), "multiply": ("fsup", EXACT),
    "divide": ("fsu", EXACT), "remainder": ("fsu", EXACT), "maximum": ("fsup", EXACT),
    "minimum": ("fsup", EXACT), "power": ("fsu", APPROX), "atan2": ("f", APPROX),
    "and": ("psu", EXACT), "or": ("psu", EXACT), "xor": ("psu", EXACT),
    "shift-left": ("su", EXACT), "shift-right-arithmetic": ("su", EXACT),
    "shift-right-logical": ("su", EXACT),
}


def _cases(table):
    for opcode, row in table.items():
        for kind in row[0]:
            for dt in KINDS[kind]:
                yield pytest.param(opcode, dt, id=f"{opcode}-{tname(dt)}")


def _unary_inputs(opcode, dt) -> np.ndarray:
    x = special_values(dt)
    if np.dtype(dt) in FLOATS and opcode in ("sine", "cosine", "tan"):
        # XLA:CPU's range reduction is only accurate for moderate arguments.
        x = x[~(np.abs(x.astype(np.float64)) > 1e4)]
    return x


@pytest.mark.parametrize("opcode,dt", list(_cases(UNARY)))
def test_unary_matches_xla(opcode, dt):
    _, how, out = UNARY[opcode]
    x = _unary_inputs(opcode, dt)
    rng = np.random.default_rng(0)
    if np.dtype(dt) in FLOATS:  # plus ordinary values
        x = np.concatenate([x, (rng.standard_normal(64) * 3).astype(dt)])
    out_dt = np.dtype(np.bool_) if out == "pred" else dt
    check(unary_module(opcode, dt, out_dt, len(x)), x, how=how)


@pytest.mark.parametrize("opcode,dt", list(_cases(BINARY)))
def test_binary_matches_xla(opcode, dt):
    _, how = BINARY[opcode]
    a = special_values(dt)
    b = shift_amounts(dt) if opcode.startswith("shift") else a
    if opcode == "power" and np.dtype(dt).kind in "iu":
        exps = [0, 1, 2, 3, 7, 31, 63, 64, 65, 100] + ([-1, -2, -3] if dt.kind == "i" else [])
        b = np.array(exps, dtype=np.int64).astype(dt)
    x, y = pairs(a, b)
    check(binary_module(opcode, dt, dt, len(x)), x, y, how=how)


@pytest.mark.parametrize("dt", [np.dtype(np.float16), BF16])
@pytest.mark.parametrize("opcode", ["add", "subtract", "multiply", "divide"])
def test_half_precision_arithmetic_rounds_like_xla(opcode, dt):
    """f16/bf16 arithmetic is computed in f32 and rounded once, bit-exactly like XLA."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(500) * 10).astype(dt)
    y = (rng.standard_normal(500) * 10).astype(dt)
    check(binary_module(opcode, dt, dt, len(x)), x, y)


# ---- compare, select, clamp ------------------------------------------------------------------

def _compare_cases():
    for dt in FLOATS + SINTS + UINTS + PRED:
        for ctype in (["", ", type=FLOAT", ", type=TOTALORDER"] if dt in FLOATS else [""]):
            for direction in ("EQ", "NE", "LT", "LE", "GT", "GE"):
                yield pytest.param(dt, direction, ctype,
                                   id=f"{tname(dt)}-{direction}{ctype.replace(', type=', '-')}")


@pytest.mark.parametrize("dt,direction,ctype", list(_compare_cases()))
def test_compare_matches_xla(dt, direction, ctype):
    v = special_values(dt)
    if np.dtype(dt) in FLOATS:
        v = np.concatenate([v, -v[np.isnan(v.astype(np.float64))]])  # -NaN too
    x, y = pairs(v, v)
    check(binary_module("compare", dt, np.bool_, len(x), f", direction={direction}{ctype}"),
          x, y)


@pytest.mark.parametrize("dt", [np.dtype(np.float32), BF16, np.dtype(np.int32),
                                np.dtype(np.uint8), np.dtype(np.bool_)], ids=tname)
def test_select_matches_xla(dt):
    v = special_values(dt)
    x, y = pairs(v, v[::-1])
    p = np.arange(len(x)) % 3 == 0
    t, n = tname(dt), len(x)
    text = (f"HloModule m\nENTRY e {{\n  p = pred[{n}] parameter(0)\n  x = {t}[{n}] parameter(1)\n"
            f"  y = {t}[{n}] parameter(2)\n  s = pred[] parameter(3)\n"
            f"  a = {t}[{n}] select(p, x, y)\n  b = {t}[{n}] select(s, x, y)\n"
            f"  ROOT r = ({t}[{n}], {t}[{n}]) tuple(a, b)\n}}\n")
    check(text, p, x, y, np.bool_(False))


@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.int8),
                                np.dtype(np.uint32)], ids=tname)
def test_clamp_matches_xla(dt):
    v = special_values(dt)
    lo, x = pairs(v, v)
    hi = np.roll(lo, 7)
    t, n = tname(dt), len(x)
    text = (f"HloModule m\nENTRY e {{\n  lo = {t}[{n}] parameter(0)\n  x = {t}[{n}] parameter(1)\n"
            f"  hi = {t}[{n}] parameter(2)\n  a = {t}[{n}] clamp(lo, x, hi)\n"
            f"  slo = {t}[] parameter(3)\n  shi = {t}[] parameter(4)\n"
            f"  b = {t}[{n}] clamp(slo, x, shi)\n"
            f"  ROOT r = ({t}[{n}], {t}[{n}]) tuple(a, b)\n}}\n")
    check(text, lo, x, hi, v[1], v[-3])


# ---- conversions -----------------------------------------------------------------------------

ALL_TYPES = FLOATS + SINTS + UINTS + PRED


@pytest.mark.parametrize("to", ALL_TYPES, ids=tname)
@pytest.mark.parametrize("src", ALL_TYPES, ids=tname)
def test_convert_matches_xla(src, to):
    x = special_values(src)
    if np.dtype(src).kind in "iu":  # values that round when made float
        extra = [16777217, 16842753, 2 ** 31 - 65, 2049, 65519, 65520, 2 ** 53 + 1, 2 ** 63 - 1]
        info = np.iinfo(src)
        x = np.concatenate([x, np.array([e for e in extra if e <= info.max], np.int64).astype(src)])
    if np.dtype(src) in FLOATS:
        extra = [1 + 2.0 ** -9 + 2.0 ** -30, 2.0 ** 31, 2.0 ** 31 - 128, -2.0 ** 31, 2.0 ** 63,
                 2.0 ** 64, 255.5, 256.0, -129.0, 1e10, 65519.0, 65520.0, 1.9, -1.9]
        with np.errstate(over="ignore"):
            x = np.concatenate([x, np.array(extra).astype(src)])
    check(unary_module("convert", src, to, len(x)), x)


BITCAST_PAIRS = [("f32", "s32"), ("f32", "u32"), ("s32", "f32"), ("f16", "s16"), ("bf16", "u16"),
                 ("f64", "s64"), ("u64", "f64"), ("s8", "u8"), ("f16", "bf16"),
                 ("f32", "u8"), ("f32", "s16"), ("f64", "f32"), ("f64", "u8"), ("s64", "s16"),
                 ("u8", "f32"), ("s16", "f32"), ("f32", "f64"), ("u16", "s64")]


@pytest.mark.parametrize("src,to", BITCAST_PAIRS, ids=lambda p: str(p))
def test_bitcast_convert_matches_xla(src, to):
    sdt, tdt = primitive_type(src).np_dtype, primitive_type(to).np_dtype
    ratio = sdt.itemsize / tdt.itemsize
    rng = np.random.default_rng(2)
    nbytes = 3 * 8 * max(sdt.itemsize, tdt.itemsize)
    raw = rng.integers(0, 256, nbytes, dtype=np.uint8)
    if ratio < 1:  # narrow -> wide: the operand has a minor dimension of 1/ratio elements
        x = raw.view(sdt).reshape(-1, int(1 / ratio))
        out_dims = [x.shape[0]]
    else:
        x = raw.view(sdt).reshape(-1)
        out_dims = [x.shape[0]] + ([int(ratio)] if ratio > 1 else [])
    dims = lambda d: ",".join(map(str, d))
    text = (f"HloModule m\nENTRY e {{\n  x = {src}[{dims(x.shape)}] parameter(0)\n"
            f"  ROOT r = {to}[{dims(out_dims)}] bitcast-convert(x)\n}}\n")
    got = run_ours(text, x)[0]
    want = run_xla(text, x)[0]
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))  # bit-exact


@pytest.mark.parametrize("dt", FLOATS, ids=tname)
@pytest.mark.parametrize("e,m", [(5, 10), (8, 7), (5, 2), (3, 1), (8, 0), (1, 0), (2, 3),
                                 (11, 52), (8, 23), (4, 3)])
def test_reduce_precision_matches_xla(dt, e, m):
    rng = np.random.default_rng(3)
    with np.errstate(over="ignore"):
        x = np.concatenate([special_values(dt),
                            (rng.standard_normal(64) * 10.0 ** rng.integers(-8, 8, 64)).astype(dt)])
    check(unary_module("reduce-precision", dt, dt, len(x),
                       f", exponent_bits={e}, mantissa_bits={m}"), x)


# ---- scalars and zero-size arrays ------------------------------------------------------------

@pytest.mark.parametrize("dims", [(), (0,), (2, 0, 3)], ids=str)
@pytest.mark.parametrize("opcode", sorted(set(UNARY) | set(BINARY)))
def test_scalar_and_empty_shapes(opcode, dims):
    table = UNARY if opcode in UNARY else BINARY
    kinds = KINDS[table[opcode][0][0]]
    dt = kinds[min(2, len(kinds) - 1)]  # a 32-bit type of the op's first kind
    out_dt = np.dtype(np.bool_) if opcode == "is-finite" else dt
    d = ",".join(map(str, dims))
    n_args = 1 if opcode in UNARY else 2
    params = "".join(f"  p{i} = {tname(dt)}[{d}] parameter({i})\n" for i in range(n_args))
    operands = ", ".join(f"p{i}" for i in range(n_args))
    text = (f"HloModule m\nENTRY e {{\n{params}"
            f"  ROOT r = {tname(out_dt)}[{d}] {opcode}({operands})\n}}\n")
    args = [np.full(dims, 3, dtype=dt) for _ in range(n_args)]
    got = check(text, *args, how=table[opcode][1])[0]
    assert got.shape == dims


# ---- IEEE behaviour the oracle cannot show (XLA:CPU flushes subnormals) ----------------------

def test_subnormals_are_not_flushed():
    sub = np.array([1e-45, -1e-40, 1e-39], np.float32)
    text = ("HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  s = f32[3] sign(x)\n"
            "  c = f32[3] ceil(x)\n  l = f32[3] log(x)\n  h = f32[3] multiply(x, x)\n"
            "  ROOT r = (f32[3], f32[3], f32[3], f32[3]) tuple(s, c, l, h)\n}\n")
    s, c, lg, sq = run_ours(text, sub)
    np.testing.assert_array_equal(s, [1, -1, 1])
    np.testing.assert_array_equal(c, [1, -0.0, 1])
    np.testing.assert_allclose(lg[[0, 2]], np.log(sub[[0, 2]].astype(np.float64)), rtol=1e-6)
    assert np.isnan(lg[1])
    assert np.all(sq == 0)


def test_round_afz_is_exact_near_halves():
    x = np.array([0.49999997, -0.49999997, 0.5, -0.5, 2.5, -2.5, 8388609, -0.3, 4.5e15],
                 np.float64).astype(np.float32)
    got = run_ours(unary_module("round-nearest-afz", np.float32, np.float32, len(x)), x)[0]
    np.testing.assert_array_equal(got, np.array([0, -0.0, 1, -1, 3, -3, 8388609, -0.0, 4.5e15],
                                                np.float32))
    assert np.signbit(got[1]) and np.signbit(got[7])


@pytest.mark.parametrize("opcode", ["abs", "sign"])
@pytest.mark.parametrize("dt", UINTS)
def test_abs_and_sign_reject_unsigned_like_xla(opcode, dt):
    """XLA's shape inference takes abs and sign on signed and float types only (unsigned
    operands are refused, here by XLA's MLIR verifier); the opcode table says so, and the
    verifier and the interpreter both follow it (they disagreed once: the interpreter
    accepted unsigned operands that the verifier rejected)."""
    text = unary_module(opcode, dt, dt, 4)
    x = np.array([0, 1, 200, 255]).astype(dt)
    with pytest.raises(Exception, match=rf"{opcode}.*ui{np.dtype(dt).itemsize * 8}"):
        run_xla(text, x)
    with pytest.raises(ShapeError, match=rf"{opcode}: expects a signed integer or "
                                         rf"floating-point element type, got {tname(dt)}\[4\]"):
        verify(parse(text))
    with pytest.raises(EvaluationError, match=rf"{opcode} is not defined for {tname(dt)} "
                                              r"operands \(allowed: floating-point, signed"):
        evaluate(parse(text), x)


@pytest.mark.parametrize("opcode,dt", [("sine", "s32"), ("floor", "u8"), ("and", "f32"),
                                       ("shift-left", "f32"), ("subtract", "pred"),
                                       ("popcnt", "f32"), ("not", "f16"), ("atan2", "s8")])
def test_wrong_element_type_is_an_evaluation_error(opcode, dt):
    dtype = primitive_type(dt).np_dtype
    make = unary_module if opcode in UNARY else binary_module
    out = dt
    text = make(opcode, dtype, primitive_type(out).np_dtype, 2)
    module = parse(text)
    with pytest.raises(EvaluationError, match=rf"{opcode} is not defined for {dt}.*line \d+:\d+|"
                                              rf"line \d+:\d+: {opcode} is not defined for {dt}"):
        evaluate(module, *([np.zeros(2, dtype)] * (1 if opcode in UNARY else 2)))


def test_compare_type_mismatch_is_an_evaluation_error():
    text = binary_module("compare", np.int32, np.bool_, 2, ", direction=LT, type=TOTALORDER")
    with pytest.raises(EvaluationError, match="compare type TOTALORDER does not apply to s32"):
        evaluate(parse(text), np.zeros(2, np.int32), np.zeros(2, np.int32))
