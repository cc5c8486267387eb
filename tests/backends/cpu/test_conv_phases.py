"""conv-phases (passes/conv_phases.py): an lhs-dilated convolution computed as one
convolution per output phase, against the interpreter (which computes the dilated
convolution as it stands): random dimension orders, layouts, paddings (negative too),
kernel reversal, feature and batch groups, lhs dilations 2 and 3, bf16; signed zeros and
non-finite kernels next to padding; jax.grad of strided convolutions (their input
gradient is lhs-dilated) against JAX."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy_tests_cpu_optable as O
from xlapy_tests_cpu_conv_cases import _case, _module, draw, out_sizes
from xlapy.backends.cpu.passes.conv_phases import phase_plan
from xlapy.hlo import parse


def _dilated_case(rng):
    """A random convolution conv-phases splits: lhs dilation 2 or 3 along some spatial
    dims (window stride 1 and no kernel dilation there), else as conv_cases._case."""
    c = _case(rng)
    if c is None:
        return None
    ld, ll, rd, rl, od, ol, window, labels, extra = c
    nsp = len(ld) - 2
    f = dict(kv.split("=") for kv in window.split())
    size = [int(x) for x in f["size"].split("x")]
    pads = [tuple(int(v) for v in p.split("_")) for p in f["pad"].split("x")]
    rdil = [int(x) for x in f["rhs_dilate"].split("x")]
    stride = [int(x) for x in f["stride"].split("x")]
    ldil = [int(rng.choice([1, 2, 3])) for _ in range(nsp)]
    if all(d == 1 for d in ldil):
        ldil[int(rng.integers(0, nsp))] = int(rng.choice([2, 3]))
    for s in range(nsp):
        if ldil[s] > 1:
            stride[s], rdil[s] = 1, 1
    lhs_lab = labels.split("_")[0]
    insp = [ld[lhs_lab.index(str(s))] for s in range(nsp)]
    outsp = out_sizes(insp, size, stride, ldil, rdil, [p[0] for p in pads],
                      [p[1] for p in pads])
    if outsp is None:
        return None
    out_lab = labels.split("->")[1]
    od = list(od)
    for s in range(nsp):
        od[out_lab.index(str(s))] = outsp[s]
    j = lambda v: "x".join(map(str, v))
    window = (f"size={f['size']} stride={j(stride)} pad={f['pad']} lhs_dilate={j(ldil)} "
              f"rhs_dilate={j(rdil)} rhs_reversal={f['rhs_reversal']}")
    return ld, ll, rd, rl, tuple(od), ol, window, labels, extra


def _convs(text):
    return [i for i in parse(text).entry.instructions if i.opcode == "convolution"]


@pytest.mark.parametrize("seed", [0, 1])
def test_random_lhs_dilated(cpu_check, seed):
    rng = np.random.default_rng(700 + seed)
    cases = draw(_dilated_case, rng, 24)
    m, args = _module(cases, seed=seed)
    assert all(phase_plan(i) is not None for i in _convs(m.text()))
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-4, 1e-4))


def test_bf16(cpu_check):
    """bf16 operands, bf16 or f32 results (small integers: the sums are exact)."""
    cases = draw(_dilated_case, np.random.default_rng(710), 8)
    rng = np.random.default_rng(2)
    m = O.ModuleText(name="conv_phases_bf16")
    args = []
    for k, (ld, ll, rd, rl, od, ol, window, labels, extra) in enumerate(cases):
        pl = m.param(O.ShapeCase("", ld, ll).text("bf16"))
        pr = m.param(O.ShapeCase("", rd, rl).text("bf16"))
        args += [rng.integers(-2, 3, ld).astype(O.DTYPE["bf16"]),
                 rng.integers(-2, 3, rd).astype(O.DTYPE["bf16"])]
        m.op(O.ShapeCase("", od, ol).text("f32" if k % 2 else "bf16"),
             f"convolution({pl}, {pr}), window={{{window}}}, dim_labels={labels}{extra}",
             f"conv {labels}{extra} {window}")
    assert all(phase_plan(i) is not None for i in _convs(m.text()))
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, O.EXACT)


_TRANSPOSED = (
    # a strided NHWC layer's input gradient, and a phase no tap reaches (window 1,
    # dilation 3: two of three output phases are empty sums)
    ((2, 5, 5, 4), None, (3, 3, 4, 6), None, (2, 11, 11, 6), None,
     "size=3x3 pad=2_2x2_2 lhs_dilate=2x2", "b01f_01io->b01f", ""),
    ((2, 4, 3), None, (1, 3, 5), None, (2, 13, 5), None,
     "size=1 pad=1_2 lhs_dilate=3", "b0f_0io->b0f", ""),
    # fewer outputs than the dilation (two phases of three), and both dims dilated with
    # output sizes that are no multiple of the dilation (phases of unequal sizes)
    ((1, 1, 2), None, (1, 2, 3), None, (1, 2, 3), None,
     "size=1 pad=0_1 lhs_dilate=3", "b0f_0io->b0f", ""),
    ((2, 3, 4, 3), None, (2, 3, 3, 4), None, (2, 8, 11, 4), None,
     "size=2x3 pad=1_1x2_1 lhs_dilate=3x3", "b01f_01io->b01f", ""),
)


def test_signed_zeros_and_empty_phases(cpu_check):
    """Every product -0.0 (an lhs of -0.0), and phases no tap reaches: the zeros' signs
    are the interpreter's (the phases are put in place by a copy, conv_phases._interleave;
    an empty phase is +0.0)."""
    m, args = _module(_TRANSPOSED, seed=4)
    args = [np.full_like(a, -0.0) if k % 2 == 0 else np.abs(a) for k, a in enumerate(args)]
    got, want = cpu_check.run(m.text(), *args)
    for g, w, label in zip(got, want, m.labels):
        g, w = np.asarray(g), np.asarray(w)
        assert np.array_equal(np.signbit(g), np.signbit(w)) and np.array_equal(g, w), label
        assert not np.any(w), label


def test_nonfinite_kernel_next_to_padding(cpu_check):
    """The sub-convolutions pad where the original read padding, and never read the
    holes: a kernel with inf and NaN gives NaN only where the interpreter does."""
    m, args = _module(_TRANSPOSED + tuple(draw(_dilated_case, np.random.default_rng(720), 6)),
                      seed=5)
    rng = np.random.default_rng(3)
    for k in range(1, len(args), 2):
        flat = args[k].reshape(-1)
        flat[rng.choice(flat.size, max(1, flat.size // 10), replace=False)] = np.inf
        flat[rng.integers(0, flat.size)] = np.nan
    got, want = cpu_check.run(m.text(), *args)
    for g, w, label in zip(got, want, m.labels):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        assert np.array_equal(np.isnan(g), np.isnan(w)), label
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=label)


def test_nonfinite_lhs_in_place(cpu_check):
    """inf and NaN in the lhs reach the outputs the interpreter puts them in: each
    phase's values are copied to their places unchanged."""
    m, args = _module(_TRANSPOSED + tuple(draw(_dilated_case, np.random.default_rng(730), 6)),
                      seed=6)
    rng = np.random.default_rng(4)
    for k in range(0, len(args), 2):
        flat = args[k].reshape(-1)
        flat[rng.choice(flat.size, max(1, flat.size // 8), replace=False)] = -np.inf
        flat[rng.integers(0, flat.size)] = np.nan
    got, want = cpu_check.run(m.text(), *args)
    for g, w, label in zip(got, want, m.labels):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        assert np.array_equal(np.isnan(g), np.isnan(w)), label
        assert np.array_equal(np.isinf(g), np.isinf(w)), label
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=label)


@pytest.mark.parametrize("layout, stride", [(("NHWC", "HWIO", "NHWC"), (2, 2)),
                                            (("NCHW", "OIHW", "NCHW"), (2, 3)),
                                            (("NCH", "OIH", "NCH"), (3,))])
def test_grad_of_strided_conv(cpu_check, layout, stride):
    import jax

    import xlapy as xp
    import xlapy.lax as xl
    rng = np.random.default_rng(9)
    shape = {"NHWC": (2, 9, 8, 3), "NCHW": (2, 3, 9, 8), "NCH": (2, 3, 10)}[layout[0]]
    kshape = {"HWIO": (3, 3, 3, 5), "OIHW": (5, 3, 3, 3), "OIH": (5, 3, 4)}[layout[1]]
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(kshape).astype(np.float32)

    def loss(lax, x, w):
        y = lax.conv_general_dilated(x, w, stride, "SAME", dimension_numbers=layout)
        return (y * y).sum()

    got = xp.jit(xp.grad(lambda x, w: loss(xl, x, w), argnums=(0, 1)))(x, w)
    want = jax.jit(jax.grad(lambda x, w: loss(jax.lax, x, w), argnums=(0, 1)))(x, w)
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-4, atol=1e-3)
