"""Complex numbers on the cpu backend (complex_math.py, elemental_complex.py): every complex
elementwise opcode, compare, convert, select, reductions, dot and fusions, against the
interpreter (whose complex math is checked against XLA in tests/hlo/test_complex.py)."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.hlo import parse
from xlapy.hlo.evaluator import evaluate

_UNARY = ["negate", "abs", "sign", "exponential", "exponential-minus-one", "log",
          "log-plus-one", "sqrt", "rsqrt", "sine", "cosine", "tan", "tanh", "logistic",
          "real", "imag"]
_BINARY = ["add", "subtract", "multiply", "divide", "power"]


def _values(dt, n, seed):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n) * 3 + 1j * rng.normal(size=n) * 3
    z[:8] = [0, 1, -1j, 1e-5 + 2e-6j, -2, 0.5 - 0.25j, 30 + 1j, -1e-3j]
    return z.astype(dt)


def _close(g, x, tol):
    if x.dtype == np.bool_:
        return np.array_equal(g, x)
    parts = (lambda v: (v.real, v.imag)) if np.iscomplexobj(x) else (lambda v: (v,))
    scale = np.maximum(np.abs(x), 1)
    with np.errstate(invalid="ignore"):
        return all(np.all((a == b) | (np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= tol * scale))
                   for a, b in zip(parts(g), parts(x)))


@pytest.mark.parametrize("t", ["c64", "c128"])
def test_complex_elementwise_ops_match_the_interpreter(t):
    dt = np.complex64 if t == "c64" else np.complex128
    part = "f32" if t == "c64" else "f64"
    n = 40
    z, w = _values(dt, n, 0), _values(dt, n, 1)
    lines, outs = [], []
    ops = _UNARY + _BINARY + ["compare", "compare-eq", "convert", "select", "complex"]
    for i, op in enumerate(ops):
        out, args, extra, opcode = t, "z, w", "", op
        if op in _UNARY:
            args = "z"
            out = part if op in ("abs", "real", "imag") else t
        elif op.startswith("compare"):
            out, opcode = "pred", "compare"
            extra = ", direction=EQ" if op == "compare-eq" else ", direction=NE"
            args = "z, z" if op == "compare-eq" else "z, w"
        elif op == "convert":
            out, args = ("c128" if t == "c64" else "c64"), "z"
        elif op == "select":
            lines.append(f"  p{i} = pred[{n}] compare(z, w), direction=NE")
            args = f"p{i}, z, w"
        elif op == "complex":
            lines.append(f"  re{i} = {part}[{n}] real(z)")
            lines.append(f"  im{i} = {part}[{n}] imag(w)")
            args = f"re{i}, im{i}"
        lines.append(f"  r{i} = {out}[{n}] {opcode}({args}){extra}")
        outs.append((f"r{i}", f"{out}[{n}]", op))
    lines.append(f"  ROOT t = ({', '.join(s for _, s, _ in outs)}) tuple("
                 f"{', '.join(r for r, _, _ in outs)})")
    text = (f"HloModule m\nENTRY e {{\n  z = {t}[{n}] parameter(0)\n  w = {t}[{n}] "
            f"parameter(1)\n" + "\n".join(lines) + "\n}\n")
    m = parse(text)
    got = get_platform("cpu").compiler.compile(m).run(z, w)
    want = evaluate(m, z, w)
    tol = 4e-6 if t == "c64" else 1e-13
    for (_, _, op), g, x in zip(outs, got, want):
        g = np.asarray(g)
        assert g.dtype == x.dtype, op
        assert _close(g, x, tol * (8 if op in ("power", "tan", "tanh") else 1)), op


def test_complex_reduce_dot_broadcast_constant_and_fusion():
    text = """HloModule m
add {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ROOT s = c64[] add(a, b)
}
mul {
  a = c128[] parameter(0)
  b = c128[] parameter(1)
  ROOT s = c128[] multiply(a, b)
}
ENTRY e {
  x = c64[8,40] parameter(0)
  y = c64[40,3] parameter(1)
  c = c64[] constant((1, -2))
  z = c64[] constant((0, 0))
  bc = c64[8,40] broadcast(c), dimensions={}
  m = c64[8,40] multiply(x, bc)
  e = c64[8,40] exponential(m)
  r = c64[8] reduce(e, z), dimensions={1}, to_apply=add
  d = c64[8,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = c64[40,8] transpose(x), dimensions={1,0}
  k = c64[2] constant({(1, 2), (3, -4)})
  w = c128[8,40] convert(x)
  one = c128[] constant((1, 0))
  p = c128[40] reduce(w, one), dimensions={0}, to_apply=mul
  ROOT o = (c64[8], c64[8,3], c64[40,8], c64[2], c128[40]) tuple(r, d, t, k, p)
}"""
    rng = np.random.default_rng(3)
    x = ((rng.normal(size=(8, 40)) + 1j * rng.normal(size=(8, 40))) / 4).astype(np.complex64)
    y = (rng.normal(size=(40, 3)) + 1j * rng.normal(size=(40, 3))).astype(np.complex64)
    m = parse(text)
    got = get_platform("cpu").compiler.compile(m).run(x, y)
    want = evaluate(m, x, y)
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("t", ["c64", "c128"])
def test_complex_dots_through_blas_gemm(t):
    """Batched and transposed complex dots (BLAS cgemm/zgemm) against the evaluator."""
    dt = np.complex64 if t == "c64" else np.complex128
    text = f"""HloModule m
ENTRY e {{
  x = {t}[4,50,30] parameter(0)
  y = {t}[4,30,20] parameter(1)
  d = {t}[4,50,20] dot(x, y), lhs_batch_dims={{0}}, rhs_batch_dims={{0}},
      lhs_contracting_dims={{2}}, rhs_contracting_dims={{1}}
  xs = {t}[1,50,30] slice(x), slice={{[0:1],[0:50],[0:30]}}
  x3 = {t}[50,30] reshape(xs)
  ys = {t}[1,30,20] slice(y), slice={{[1:2],[0:30],[0:20]}}
  y2 = {t}[30,20] reshape(ys)
  f = {t}[20,50] dot(y2, x3), lhs_contracting_dims={{0}}, rhs_contracting_dims={{1}}
  ROOT o = ({t}[4,50,20], {t}[20,50]) tuple(d, f)
}}"""
    rng = np.random.default_rng(4)
    x = (rng.normal(size=(4, 50, 30)) + 1j * rng.normal(size=(4, 50, 30))).astype(dt)
    y = (rng.normal(size=(4, 30, 20)) + 1j * rng.normal(size=(4, 30, 20))).astype(dt)
    m = parse(text)
    got = get_platform("cpu").compiler.compile(m).run(x, y)
    want = [np.matmul(x, y), (x[0] @ y[1]).T]
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-4 if t == "c64" else 1e-12,
                                   atol=1e-4 if t == "c64" else 1e-12)
