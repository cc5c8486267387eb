"""The compiled literal scanner (xlapy/hlo/literal_scan.py): bit-exact against the
element-by-element path for every type it reads (printed as XLA prints them, and in
other spellings), falls back on what it does not read, takes the fast path at every size
(no Python-level work per value), and finds the literal's end."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from xlapy.errors import ParseError
from xlapy.hlo import literal_scan, parse
from xlapy.hlo import parser as P
from xlapy.hlo.literal import format_literal
from xlapy.hlo.parser import parse_shape


@pytest.fixture
def native(monkeypatch):
    """Every literal of FAST_LITERAL_MIN values or more goes to the compiled scanner."""
    monkeypatch.setattr(P, "NATIVE_LITERAL_MIN", 0)
    return monkeypatch


def _module(t, dims, body):
    shape = f"{t}[{','.join(map(str, dims))}]"
    return f"HloModule m\n\nENTRY main {{\n  ROOT c = {shape} constant({body})\n}}\n"


def _slow(monkeypatch, text):
    monkeypatch.setattr(P, "FAST_LITERAL_MIN", 10 ** 12)
    try:
        return parse(text).entry.root.literal
    finally:
        monkeypatch.setattr(P, "FAST_LITERAL_MIN", 64)


def _special_values(dt, n, rng):
    """Random values across the type's range with the special ones in front."""
    info = ml_dtypes.finfo(dt)
    exps = rng.uniform(np.log10(float(info.smallest_subnormal)), np.log10(float(info.max)), n)
    vals = (rng.choice([-1.0, 1.0], n) * 10.0 ** exps).astype(dt)
    vals[:10] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan,
                          float(info.smallest_subnormal), -float(info.smallest_subnormal),
                          float(info.max), float(info.tiny)], dtype=np.float64).astype(dt)
    return vals


_FLOATS = [("f32", np.float32), ("f64", np.float64), ("bf16", ml_dtypes.bfloat16),
           ("f16", np.float16)]


@pytest.mark.parametrize("t,dt", _FLOATS)
def test_xla_printed_floats_round_trip_bit_exact(native, t, dt):
    vals = _special_values(dt, 3000, np.random.default_rng(7)).reshape(3, 1000)
    body = format_literal(vals, parse_shape(f"{t}[3,1000]"))
    got = parse(_module(t, (3, 1000), body)).entry.root.literal
    assert got.dtype == vals.dtype and got.shape == vals.shape
    assert np.array_equal(got.view(np.uint8), vals.view(np.uint8))  # -0, nan signs too


@pytest.mark.filterwarnings("ignore:overflow encountered")   # (beyond f16/f32: inf)
@pytest.mark.parametrize("t,dt", _FLOATS)
def test_other_spellings_match_the_slow_path(native, t, dt):
    """repr's 17 digits, %.3e, leading '+', '.5', '5.', exponents past +-22, subnormals
    by strtod, long mantissas (more than 19 digits), 'E', whitespace and newlines."""
    rng = np.random.default_rng(3)
    vals = rng.standard_normal(400) * 10.0 ** rng.integers(-320, 300, 400)
    words = []
    for k, v in enumerate(vals):
        form = k % 7
        words.append(repr(float(v)) if form == 0 else f"{v:.3e}" if form == 1
                     else f"+{abs(v):.6g}" if form == 2 else f"{v:.30f}" if form == 3
                     else f"{v:.25E}" if form == 4 else ".5" if form == 5 else "5.")
    body = "{" + ",\n ".join(words) + "  }"
    text = _module(t, (400,), body)
    fast = parse(text).entry.root.literal
    slow = _slow(native, text)
    assert np.array_equal(fast.view(np.uint8), slow.view(np.uint8))


@pytest.mark.parametrize("t,dt", [("s8", np.int8), ("u8", np.uint8), ("s16", np.int16),
                                  ("s32", np.int32), ("u32", np.uint32), ("s64", np.int64),
                                  ("u64", np.uint64)])
def test_integers_match_the_slow_path(native, t, dt):
    info = np.iinfo(dt)
    vals = np.random.default_rng(5).integers(info.min, info.max, (4, 50), dtype=dt,
                                             endpoint=True)
    vals.flat[:2] = [info.min, info.max]  # s64's min and u64's max: the slow path reads them
    body = "{" + ", ".join("{" + ",".join(str(int(v)) for v in row) + "}" for row in vals) + "}"
    got = parse(_module(t, (4, 50), body)).entry.root.literal
    assert got.dtype == dt and np.array_equal(got, vals)


def test_pred_and_complex_take_the_exact_path(native):
    vals = np.arange(100) % 3 == 0
    body = "{" + ",".join("true" if v else "false" for v in vals) + "}"
    assert np.array_equal(parse(_module("pred", (100,), body)).entry.root.literal, vals)
    z = (np.arange(100) - 1j * np.arange(100)).astype(np.complex64)
    body = "{" + ",".join(f"({v.real:g}, {v.imag:g})" for v in z) + "}"
    assert np.array_equal(parse(_module("c64", (100,), body)).entry.root.literal, z)


def test_what_the_scanner_refuses_gets_the_precise_path_and_errors(native):
    vals = [f"{v}.5" for v in range(100)]
    good = "{" + ",".join(vals) + "}"
    # a NaN payload: read exactly by the element path
    lit = parse(_module("f32", (100,), good.replace("1.5", "-nan(0x3)", 1))).entry.root.literal
    bits = lit[1:2].view(np.uint32)[0]
    assert np.isnan(lit[1]) and bits == 0xFF800003
    for bad, msg in ((good.replace(",", ",,", 1), "expected"),
                     (good.replace("2.5,", "", 1), "elements in dimension 0"),
                     (good.replace("{", "{1, ", 1), "elements in dimension 0"),
                     (good.replace("7.5", "7.5.5", 1), "expected"),
                     (good.replace("7.5", "7.5e", 1), "expected"),
                     (good[:-1], "expected")):
        with pytest.raises(ParseError, match=msg):
            parse(_module("f32", (100,), bad))
    with pytest.raises(ParseError, match="out of range"):
        parse(_module("s8", (100,), "{" + ",".join(["200"] * 100) + "}"))
    with pytest.raises(ParseError, match="integer"):
        parse(_module("s32", (100,), "{" + ",".join(["2.5"] * 100) + "}"))


@pytest.mark.parametrize("size", [64, 1000, 30_000, 300_000])
def test_every_size_takes_the_fast_path(native, size):
    """SIZE sweep: one scanner call per literal, no Python-level call per value."""
    calls = {"scan": 0, "scalar": 0}
    scan, scalar = literal_scan.scan, P._Parser.scalar

    def counting_scan(*a, **k):
        calls["scan"] += 1
        return scan(*a, **k)

    def counting_scalar(self, t):
        calls["scalar"] += 1
        return scalar(self, t)
    native.setattr(literal_scan, "scan", counting_scan)
    native.setattr(P._Parser, "scalar", counting_scalar)
    vals = (np.arange(size, dtype=np.float32) - size / 2) / 7
    dims = (size // 16, 16) if size % 16 == 0 else (size,)
    body = format_literal(vals.reshape(dims), parse_shape(f"f32[{','.join(map(str, dims))}]"))
    text = _module("f32", dims, body)
    got = parse(text).entry.root.literal
    assert np.array_equal(got.reshape(-1), vals)
    assert calls == {"scan": 1, "scalar": 0}


def test_scan_reports_the_literal_end_and_reads_non_ascii_text():
    text = 'x = f32[3] constant({1, 2, 3}), metadata={op_name="\u00e9"}'
    start = text.index("{")
    vals, end = literal_scan.scan(text, start, (3,), False)
    assert vals.tolist() == [1.0, 2.0, 3.0] and text[end] == ")"
    assert literal_scan.scan("{1,2}", 0, (3,), False) is None
    assert literal_scan.scan("{1,2", 0, (2,), False) is None   # runs out of text
    assert literal_scan.scan("{{1},{2}}", 0, (2, 1), True)[0].tolist() == [1, 2]


def test_module_with_many_literals_switches_to_the_scanner(monkeypatch):
    """Under NATIVE_LITERAL_MIN values the NumPy reader; from there on the scanner."""
    calls = []
    scan = literal_scan.scan
    monkeypatch.setattr(literal_scan, "scan", lambda *a: calls.append(1) or scan(*a))
    monkeypatch.setattr(P, "NATIVE_LITERAL_MIN", 250)
    lines = [f"  c{k} = f32[100] constant({{{','.join(['1.5'] * 100)}}})" for k in range(4)]
    text = ("HloModule m\n\nENTRY main {\n" + "\n".join(lines)
            + "\n  ROOT t = (f32[100], f32[100], f32[100], f32[100]) tuple(c0, c1, c2, c3)\n}\n")
    m = parse(text)
    assert len(calls) == 2   # the third and fourth literal
    assert all(np.all(i.literal == 1.5) for i in m.entry.instructions if i.opcode == "constant")
