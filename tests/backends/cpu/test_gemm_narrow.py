"""The narrow gemm kernels (emitters/gemm_narrow.py: N <= 16 output columns, lanes along K
or M): each kernel against NumPy (float64 sums) on odd sizes, both layouts of each matrix,
alpha and beta, K = 0 and non-finite values; which products dot_plan.narrow_form routes to
them; and the MNIST tutorial's two products inside compiled programs, with the kernel
found in the emitted IR."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.backends.cpu.emitters import gemm_narrow as gn
from xlapy.backends.cpu.passes.dot_plan import narrow_form, own_gemm_for, plan_for
from xlapy.backends.cpu.target import self_contained, vector_bits
from xlapy.hlo import parse

_LIBS: dict = {}


def _kernel(t, n, form):
    if (t, n, form) not in _LIBS:
        _LIBS[(t, n, form)] = gn.load(t, n, form)   # (the loaded object keeps the code)
    return _LIBS[(t, n, form)][1]


def _operands(rng, dt, form, m, k, n, b_order, c_order):
    a = rng.standard_normal((m, k)).astype(dt)
    a = a if form == "a" else np.asfortranarray(a)     # form a: rows contiguous; b: columns
    b = rng.standard_normal((k, n)).astype(dt)
    b = b if b_order == "C" else np.asfortranarray(b)
    c = np.full((m, n), np.nan, dt, order=c_order)     # NaN: beta = 0 must not read it
    cin = np.asarray(rng.standard_normal((m, n)).astype(dt), order=c_order)
    return a, b, c, cin


def _tol(t, k):
    return (2e-6 if t == "f32" else 1e-14) * max(k, 1) ** 0.5 * 8


SHAPES = [(1, 1), (1, 17), (7, 0), (8, 16), (33, 100), (100, 33), (37, 19), (3, 784),
          (65, 47)]


@pytest.mark.parametrize("t,n", [("f32", n) for n in (1, 2, 4, 8, 10, 12, 16)] +
                         [("f64", n) for n in (1, 5, 10, 16)])
@pytest.mark.parametrize("form", ["a", "b"])
def test_kernels_match_numpy(t, n, form):
    dt = np.float32 if t == "f32" else np.float64
    fn = _kernel(t, n, form)
    rng = np.random.default_rng(n * 7 + len(form))
    for (m, k), bo, co in itertools.product(SHAPES, "CF", "CF"):
        a, b, c, cin = _operands(rng, dt, form, m, k, n, bo, co)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64) + 1
        for alpha, beta, src in ((1.0, 0.0, None), (-0.5, 1.0, cin), (2.0, 0.25, "c")):
            if isinstance(src, str):   # in place: C is Cin
                c[...] = cin
                src = None
            else:
                c[...] = np.nan
            gn.numpy_call(fn, a, b, c, alpha, beta, src)()
            want = alpha * ref + beta * cin.astype(np.float64)
            err = np.abs(c - want) / (abs(alpha) * scale + abs(beta) * np.abs(cin))
            assert np.all(err <= _tol(t, k)), (m, k, bo, co, alpha, float(np.nanmax(err)))


@pytest.mark.parametrize("form,n,k", [("a", 10, 100), ("a", 3, 37), ("b", 10, 100),
                                      ("b", 7, 5)])
def test_non_finite_values_reach_only_their_sums(form, n, k):
    rng = np.random.default_rng(3)
    m = 41
    a, b, c, _ = _operands(rng, np.float32, form, m, k, n, "C", "C")
    a[2, 1] = np.inf        # row 2: inf (or NaN where B[1, j] is 0 or of the other sign)
    a[5, k - 1] = np.nan    # row 5: NaN everywhere (in K's last, partial vector)
    b[0, 1] = np.inf        # column 1: inf / -inf / NaN
    b[1, 2] = 0.0           # inf * 0 = NaN at C[2, 2]
    b[k - 1, 0] = -np.inf   # column 0 (K's last row)
    gn.numpy_call(_kernel("f32", n, form), a, b, c)()
    with np.errstate(invalid="ignore", over="ignore"):
        want = np.einsum("mk,kn->mn", a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(c), np.isnan(want))
    np.testing.assert_array_equal(np.isposinf(c), np.isposinf(want))
    np.testing.assert_array_equal(np.isneginf(c), np.isneginf(want))
    fin = np.isfinite(want)
    assert fin[:, 2:].sum() >= (m - 2) * (n - 2)   # (columns 0 and 1 are inf or NaN)
    np.testing.assert_allclose(c[fin], want[fin], rtol=1e-4, atol=1e-4)


def _plan(m, n, k, lhs_rm=True, t="f32"):
    return dict(t=t, m=m, n=n, k=k, lhs_rm=lhs_rm, rhs_rm=True, out_rm=True, batch=1)


needs_routing = pytest.mark.skipif(vector_bits() < 512 or self_contained(),
                                   reason="the narrow kernels are routed on AVX-512 only")


@needs_routing
def test_routing(monkeypatch):
    monkeypatch.delenv("XLAPY_GEMM", raising=False)
    assert narrow_form(_plan(100, 10, 784)) == "a"                 # x . W
    assert narrow_form(_plan(784, 10, 100, lhs_rm=False)) == "b"   # x^T . g
    assert narrow_form(_plan(100, 10, 784, t="f64")) is None
    assert narrow_form(_plan(100, 16, 784)) is None      # OpenBLAS's full lanes
    assert narrow_form(_plan(100, 8, 784)) is None
    assert narrow_form(_plan(100, 10, 16)) is None       # too shallow for form a
    assert narrow_form(_plan(100, 10, 2048)) is None     # B^T outgrows L1
    assert narrow_form(_plan(4, 10, 784)) is None        # too few rows
    assert narrow_form(_plan(784, 16, 100, lhs_rm=False)) is None
    assert narrow_form(_plan(16, 12, 100, lhs_rm=False)) is None
    big = _plan(1000, 10, 2048, lhs_rm=False)
    assert own_gemm_for(big) or narrow_form(big) == "b"
    monkeypatch.setenv("XLAPY_GEMM", "blas")
    assert narrow_form(_plan(100, 10, 784)) is None


DOT = """HloModule d
ENTRY main {{
  x = f32[{b}{m},{k}] parameter(0)
  w = f32[{b}{k},{n}] parameter(1)
  ROOT d = f32[{b}{m},{n}] dot(x, w), {batch}lhs_contracting_dims={{{lc}}},
    rhs_contracting_dims={{{rc}}}
}}
"""

UPDATE = """HloModule u
ENTRY main {
  w = f32[784,10] parameter(0)
  x = f32[100,784] parameter(1)
  g = f32[100,10] parameter(2)
  d = f32[784,10] dot(x, g), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  c = f32[] constant(0.5)
  cb = f32[784,10] broadcast(c), dimensions={}
  p = f32[784,10] multiply(cb, d)
  ROOT r = f32[784,10] subtract(w, p)
}
"""


def _compile(text, tmp_path, monkeypatch):
    """(executable, unoptimized IR) of an HLO module, compiled afresh."""
    out = tmp_path / "dump"
    monkeypatch.setenv("XLAPY_FLAGS", f"--xla_dump_to={out}")
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    monkeypatch.delenv("XLAPY_GEMM", raising=False)
    comp = get_platform("cpu").compiler
    comp.clear_cache()
    exe = comp.compile(parse(text))
    (ir_file,) = out.glob("*ir-no-opt.ll")
    return exe, ir_file.read_text()


@needs_routing
def test_tutorial_dot_runs_on_the_narrow_kernel(tmp_path, monkeypatch):
    root = parse(DOT.format(b="", m=100, k=784, n=10, batch="", lc=1, rc=0)).entry.root
    assert narrow_form(plan_for(root.attrs, root.operands[0].shape, root.operands[1].shape,
                                root.shape)) == "a"
    exe, ir_text = _compile(DOT.format(b="", m=100, k=784, n=10, batch="", lc=1, rc=0),
                            tmp_path, monkeypatch)
    assert gn.symbol("f32", 10, "a") in ir_text and "xlapy_sgemm" not in ir_text
    rng = np.random.default_rng(0)
    x = rng.standard_normal((100, 784)).astype(np.float32)
    w = rng.standard_normal((784, 10)).astype(np.float32)
    x[7, 100] = np.nan
    want = x.astype(np.float64) @ w.astype(np.float64)
    got = np.asarray(exe.run(x, w))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-4, atol=2e-4)


@needs_routing
def test_tutorial_update_runs_on_the_narrow_kernel(tmp_path, monkeypatch):
    exe, ir_text = _compile(UPDATE, tmp_path, monkeypatch)
    assert gn.symbol("f32", 10, "b") in ir_text and "xlapy_sgemm" not in ir_text
    rng = np.random.default_rng(1)
    w = rng.standard_normal((784, 10)).astype(np.float32)
    x = rng.standard_normal((100, 784)).astype(np.float32)
    g = rng.standard_normal((100, 10)).astype(np.float32)
    want = w - 0.5 * (x.astype(np.float64).T @ g.astype(np.float64))
    for _ in range(2):   # W is read, not overwritten
        np.testing.assert_allclose(np.asarray(exe.run(w, x, g)), want, rtol=1e-4, atol=2e-4)


@needs_routing
def test_batched_dot_runs_on_the_narrow_kernel(tmp_path, monkeypatch):
    text = DOT.format(b="3,", m=37, k=130, n=7, batch="lhs_batch_dims={0}, "
                      "rhs_batch_dims={0}, ", lc=2, rc=1)
    exe, ir_text = _compile(text, tmp_path, monkeypatch)
    assert gn.symbol("f32", 7, "a") in ir_text
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 37, 130)).astype(np.float32)
    w = rng.standard_normal((3, 130, 7)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(exe.run(x, w)),
                               x.astype(np.float64) @ w.astype(np.float64), rtol=1e-4,
                               atol=2e-4)
