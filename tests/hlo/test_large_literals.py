"""Large constants (a model's weights): NumPy's parser for big numeric literals, the same
values as the element-by-element path, its errors; printing with large constants elided;
the cpu backend's fingerprint hashing their bytes; attributes TensorFlow emits accepted."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

from xlapy.errors import ParseError
from xlapy.hlo import parse
from xlapy.hlo import parser as P


def _text(t, dims, body):
    shape = f"{t}[{','.join(map(str, dims))}]"
    return (f"HloModule m\n\nENTRY main {{\n  ROOT c = {shape} constant({body})\n}}\n")


def _literal(arr) -> str:
    if arr.ndim == 1:
        return "{" + ", ".join(repr(float(v)) if arr.dtype.kind == "f" else str(int(v))
                               for v in arr) + "}"
    return "{ " + ", ".join(_literal(a) for a in arr) + " }"


_CASES = [("f32", np.float32, (7, 40)), ("f64", np.float64, (300,)),
          ("bf16", ml_dtypes.bfloat16, (3, 5, 9)), ("f16", np.float16, (100,)),
          ("s32", np.int32, (10, 10)), ("u8", np.uint8, (2, 64)), ("s64", np.int64, (70,))]


@pytest.mark.parametrize("t,dt,dims", _CASES)
def test_fast_literals_match_the_slow_path(monkeypatch, t, dt, dims):
    rng = np.random.default_rng(len(t))
    if t.startswith(("f", "b")):
        lo, hi = (-6, 4) if t == "f16" else (-40, 30)   # f16 overflows past 65504
        vals = rng.standard_normal(dims) * 10.0 ** rng.integers(lo, hi, dims)
        vals.flat[:4] = [0.0, -0.0, np.inf, -np.inf]
    else:
        info = np.iinfo(dt)
        vals = rng.integers(info.min, info.max, dims, endpoint=True)
    text = _text(t, dims, _literal(np.asarray(vals)))
    fast = parse(text).entry.root.literal
    monkeypatch.setattr(P, "FAST_LITERAL_MIN", 10 ** 12)
    slow = parse(text).entry.root.literal
    assert fast.dtype == slow.dtype and fast.shape == slow.shape == dims
    assert np.array_equal(fast.view(np.uint8), slow.view(np.uint8))  # bit for bit, -0.0 too


def test_malformed_literals_keep_their_errors():
    vals = np.arange(100, dtype=np.float32)
    good = _literal(vals.reshape(10, 10))
    for bad, msg in ((good.replace("{ {", "{ {1, ", 1), "elements in dimension 1"),
                     (good[:-1], "expected"),
                     (good.replace("5.0", "5.0x", 1), "expected")):
        with pytest.raises(ParseError, match=msg):
            parse(_text("f32", (10, 10), bad))
    # NaN payloads and signs go through the exact path
    body = _literal(vals).replace("1.0,", "-nan(0x1),", 1)
    lit = parse(_text("f32", (100,), body)).entry.root.literal
    assert np.isnan(lit[1]) and np.signbit(lit[1])
    # integers out of range are reported, not wrapped
    with pytest.raises(ParseError, match="out of range"):
        parse(_text("u8", (100,), "{" + ", ".join(["300"] * 100) + "}"))


def test_printing_elides_large_constants():
    vals = np.arange(2000, dtype=np.float32)
    m = parse(_text("f32", (2000,), _literal(vals)))
    assert "{...}" in m.to_string(print_large_constants=False)
    assert "1999" in m.to_string()
    small = parse(_text("f32", (100,), _literal(vals[:100])))
    assert "99" in small.to_string(print_large_constants=False)


def test_fingerprint_hashes_constant_bytes():
    from xlapy.backends.base import get_platform
    compiler = get_platform("cpu").compiler
    vals = np.arange(2000, dtype=np.float32)
    a = parse(_text("f32", (2000,), _literal(vals)))
    vals[1234] = -1
    b = parse(_text("f32", (2000,), _literal(vals)))
    fa, fb = (compiler.fingerprint(m, 2, 1000) for m in (a, b))
    assert fa != fb and fa == compiler.fingerprint(a, 2, 1000)
    out = compiler.compile(b).run()
    got = out[0] if isinstance(out, (list, tuple)) else out
    assert np.array_equal(np.asarray(got), vals)  # the constant's global, bytes escaped


def test_tensorflow_attributes_understood():
    text = ("HloModule m\n\nENTRY main {\n  p = f32[4] parameter(0), "
            "parameter_replication={false}\n  ROOT n = f32[4] negate(p)\n}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = parse(text)
    assert "parameter_replication={false}" in m.to_string()
