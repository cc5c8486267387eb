"""cpu backend vs the interpreter, dot and convolution.

dot: f32/f64 through BLAS gemm (row- and column-major operands and results, contracting on
either dim, batch dims, vector-matrix, matrix-vector, dot products, zero-size), batch dims
that are not most-major (the elemental fallback), integer types (wrapping), pred, f16/bf16
(elemental, accumulating in f32), mixed input/output types.
convolution: several dim_labels, strides, padding, lhs/rhs dilation, kernel reversal,
feature groups (grouped and depthwise), batch groups, 1-D/2-D/3-D.

Random float inputs compare within a relative tolerance (gemm sums in another order); the
small-integer inputs make every sum exact in any order, so those results (all types,
f16/bf16 included) compare bit for bit.
"""

from __future__ import annotations


import numpy as np
import pytest


import xlapy_tests_cpu_optable as O


def _small_ints(t, dims, rng):
    """Small integer values (exact products and sums in every type)."""
    if t == "pred":
        return rng.integers(0, 2, dims).astype(bool)
    lo = 0 if t in O.UINTS else -8
    return rng.integers(lo, 9, dims).astype(O.DTYPE[t])


def _sc(dims, layout=None, t="f32"):
    return O.ShapeCase("", tuple(dims), layout).text(t)


def _dot_attrs(lc, rc, lb=(), rb=()):
    j = lambda v: ",".join(map(str, v))
    s = f"lhs_contracting_dims={{{j(lc)}}}, rhs_contracting_dims={{{j(rc)}}}"
    if lb:
        s = f"lhs_batch_dims={{{j(lb)}}}, rhs_batch_dims={{{j(rb)}}}, " + s
    return s


# (lhs dims, lhs layout, rhs dims, rhs layout, out dims, out layout, lc, rc, lb, rb, what)
_DOTS = (
    ((13, 37), None, (37, 7), None, (13, 7), None, (1,), (0,), (), (), "row-major"),
    ((13, 37), (0, 1), (37, 7), (0, 1), (13, 7), (0, 1), (1,), (0,), (), (), "column-major"),
    ((37, 13), None, (7, 37), None, (13, 7), None, (0,), (1,), (), (), "both transposed"),
    ((37, 13), (0, 1), (37, 7), None, (13, 7), (0, 1), (0,), (0,), (), (), "mixed layouts"),
    ((3, 5, 9), None, (3, 9, 4), None, (3, 5, 4), None, (2,), (1,), (0,), (0,), "batch"),
    ((5, 3, 9), None, (9, 3, 4), None, (3, 5, 4), None, (2,), (0,), (1,), (1,),
     "batch dims not major"),
    ((2, 3, 4, 5), None, (2, 3, 5, 6), (2, 3, 1, 0), (2, 3, 4, 6), None, (3,), (2,), (0, 1),
     (0, 1), "two batch dims"),
    ((37,), None, (37, 7), None, (7,), None, (0,), (0,), (), (), "vector-matrix"),
    ((13, 37), None, (37,), None, (13,), None, (1,), (0,), (), (), "matrix-vector"),
    ((37,), None, (37,), None, (), None, (0,), (0,), (), (), "dot product"),
    ((4, 0), None, (0, 3), None, (4, 3), None, (1,), (0,), (), (), "K = 0"),
    ((0, 5), None, (5, 3), None, (0, 3), None, (1,), (0,), (), (), "M = 0"),
    ((6, 4, 5), None, (4, 5, 3), None, (6, 3), None, (1, 2), (0, 1), (), (),
     "two contracting dims"),
    ((1, 37), None, (37, 1), None, (1, 1), None, (1,), (0,), (), (), "1x1 result"),
)


def _dot_module(t, out_t, rng, small, cases=_DOTS):
    m = O.ModuleText(name=f"dot_{t}_{out_t}")
    args = []
    for ld, ll, rd, rl, od, ol, lc, rc, lb, rb, what in cases:
        gen = (lambda d: _small_ints(t, d, rng)) if small else \
            (lambda d: rng.standard_normal(d).astype(O.DTYPE[t]))
        pl, pr = m.param(_sc(ld, ll, t)), m.param(_sc(rd, rl, t))
        args += [gen(ld), gen(rd)]
        m.op(_sc(od, ol, out_t), f"dot({pl}, {pr}), {_dot_attrs(lc, rc, lb, rb)}",
             f"dot {what} {_sc(ld, ll, t)} x {_sc(rd, rl, t)} -> {_sc(od, ol, out_t)}")
    return m, args


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_dot_blas_random(cpu_check, t):
    rng = np.random.default_rng(1 if t == "f32" else 2)
    m, args = _dot_module(t, t, rng, small=False)
    got, want = cpu_check.run(m.text(), *args)
    tol = (O.CLOSE, 1e-5, 1e-5) if t == "f32" else (O.CLOSE, 1e-12, 1e-12)
    O.compare_outputs(got, want, m.labels, tol)


@pytest.mark.parametrize("t,out_t", [("f32", "f32"), ("s32", "s32"), ("u8", "u8"),
                                     ("s64", "s64"), ("s8", "s32"), ("f16", "f16"),
                                     ("bf16", "bf16"), ("bf16", "f32"), ("pred", "pred"),
                                     ("u16", "f32")])
def test_dot_exact(cpu_check, t, out_t):
    """Small-integer inputs: every type, bit for bit (f16/bf16 sums exceed 2^11/2^8, so a
    per-step rounding would show). u8 and s64 wrap."""
    rng = np.random.default_rng(10 + O.TYPES.index(t))
    cases = _DOTS if t in ("f32", "s32", "bf16") else _DOTS[::3]
    m, args = _dot_module(t, out_t, rng, small=True, cases=cases)
    if t in ("u8", "s64"):  # large values: wrapping products and sums
        args = [O.values(t, a.shape, rng) for a in args]
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, O.EXACT)


def test_dot_special_values(cpu_check):
    """NaN, inf and -0.0 through gemm: NaN where the interpreter has NaN."""
    x = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, 0.0], [-0.0, -0.0, -0.0]], np.float32)
    y = np.array([[0.0, 1.0], [1.0, 0.0], [np.inf, -1.0]], np.float32)
    text = """HloModule dot_specials

ENTRY main {
  x = f32[3,3] parameter(0)
  y = f32[3,2] parameter(1)
  ROOT d = f32[3,2] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""
    got, want = cpu_check.run(text, x, y)
    O.compare_outputs(got, want, ["dot"], O.EXACT)


# ---- convolution --------------------------------------------------------------------------------

# (lhs dims, rhs dims, out dims, window, dim_labels, extra attributes, what)
_CONVS = (
    ((2, 6, 7, 2), (3, 3, 2, 4), (2, 6, 7, 4), "size=3x3 pad=1_1x1_1", "b01f_01io->b01f", "",
     "NHWC same padding"),
    ((2, 3, 9, 8), (4, 3, 3, 2), (2, 4, 4, 4), "size=3x2 stride=2x2 pad=1_0x0_1",
     "bf01_oi01->bf01", "", "NCHW strided"),
    ((1, 4, 5, 2), (2, 2, 2, 3), (1, 8, 10, 3), "size=2x2 pad=1_1x1_1 lhs_dilate=2x2",
     "b01f_01io->b01f", "", "lhs dilation (transposed conv)"),
    ((2, 9, 9, 2), (3, 3, 2, 2), (2, 5, 5, 2), "size=3x3 rhs_dilate=2x2", "b01f_01io->b01f",
     "", "rhs dilation (atrous)"),
    ((2, 5, 6, 4), (3, 3, 2, 6), (2, 5, 6, 6), "size=3x3 pad=1_1x1_1", "b01f_01io->b01f",
     ", feature_group_count=2", "grouped"),
    ((1, 7, 7, 3), (3, 3, 1, 3), (1, 5, 5, 3), "size=3x3", "b01f_01io->b01f",
     ", feature_group_count=3", "depthwise"),
    ((4, 5, 5, 2), (2, 2, 2, 6), (2, 4, 4, 6), "size=2x2", "b01f_01io->b01f",
     ", batch_group_count=2", "batch groups"),
    ((3, 2, 17), (4, 2, 3), (3, 4, 8), "size=3 stride=2 pad=1_0", "bf0_oi0->bf0", "", "1-D"),
    ((1, 4, 4, 4, 2), (2, 2, 2, 2, 3), (1, 3, 3, 3, 3), "size=2x2x2", "b012f_012io->b012f", "",
     "3-D"),
    ((2, 5, 6, 2), (3, 2, 2, 4), (2, 5, 6, 4), "size=3x2 pad=1_1x0_1 rhs_reversal=1x0",
     "b01f_01io->b01f", "", "kernel reversal"),
    ((5, 6, 2, 3), (4, 3, 2, 2), (4, 3, 7, 3), "size=3x2 pad=0_0x1_1",
     "01fb_o01i->f01b", "", "unusual dim orders"),
    ((2, 0, 5, 3), (2, 2, 3, 4), (2, 0, 4, 4), "size=2x2 pad=1_0x0_0", "b01f_01io->b01f", "",
     "zero-size spatial"),
)


def _conv_module(t, rng, small, cases=_CONVS):
    m = O.ModuleText(name=f"conv_{t}")
    args = []
    for k, (ld, rd, od, window, labels, extra, what) in enumerate(cases):
        gen = (lambda d: _small_ints(t, d, rng)) if small else \
            (lambda d: rng.standard_normal(d).astype(O.DTYPE[t]))
        layout = tuple(range(len(ld))) if k % 4 == 1 else None  # a few non-default layouts
        pl, pr = m.param(_sc(ld, layout, t)), m.param(_sc(rd, None, t))
        args += [gen(ld), gen(rd)]
        m.op(_sc(od, None, t), f"convolution({pl}, {pr}), window={{{window}}}, "
                               f"dim_labels={labels}{extra}", f"conv {what}")
    return m, args


def test_convolution_f32_random(cpu_check):
    m, args = _conv_module("f32", np.random.default_rng(3), small=False)
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-5, 1e-5))


@pytest.mark.parametrize("t", ["f32", "s32", "f16", "bf16"])
def test_convolution_exact(cpu_check, t):
    rng = np.random.default_rng(20 + O.TYPES.index(t))
    cases = _CONVS if t == "f32" else _CONVS[::2]
    m, args = _conv_module(t, rng, small=True, cases=cases)
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, O.EXACT)
