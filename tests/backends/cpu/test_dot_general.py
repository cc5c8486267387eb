"""Dots of any dimension order through strided gemms (emitters/dot_general.py,
passes/dot_general_plan.py) against the interpreter: random batch / contracting / free
dimension positions and counts, random layouts (transposed views), loops split by loop
index across threads (small gemms) and gemms split by the gemm (large ones)."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy_tests_cpu_optable as O
from xlapy.backends.cpu.passes.dot_general_plan import strided_plan
from xlapy.backends.cpu.passes.dot_plan import gemm_plan
from xlapy.hlo import parse


def _case(rng, big=False):
    nb, nc = int(rng.integers(0, 3)), int(rng.integers(1, 3))
    nlf, nrf = int(rng.integers(0, 3)), int(rng.integers(0, 3))
    hi = 40 if big else 6
    bs = [int(rng.integers(1, 4)) for _ in range(nb)]
    cs = [int(rng.integers(1, hi)) for _ in range(nc)]
    lf = [int(rng.integers(1, hi)) for _ in range(nlf)]
    rf = [int(rng.integers(1, hi)) for _ in range(nrf)]
    lrank, rrank = nb + nc + nlf, nb + nc + nrf
    lpos, rpos = list(rng.permutation(lrank)), list(rng.permutation(rrank))
    ld, rd = [0] * lrank, [0] * rrank
    lb, rb = lpos[:nb], rpos[:nb]
    lc, rc = lpos[nb:nb + nc], rpos[nb:nb + nc]
    for x, y, s in zip(lb, rb, bs):
        ld[x] = rd[y] = s
    for x, y, s in zip(lc, rc, cs):
        ld[x] = rd[y] = s
    lfree = sorted(lpos[nb + nc:])
    rfree = sorted(rpos[nb + nc:])
    for x, s in zip(lfree, lf):
        ld[x] = s
    for y, s in zip(rfree, rf):
        rd[y] = s
    od = bs + [ld[x] for x in lfree] + [rd[y] for y in rfree]
    lay = [tuple(int(v) for v in rng.permutation(r)) if rng.random() < 0.5 else None
           for r in (lrank, rrank, len(od))]

    def dims(v):
        return "{" + ",".join(str(int(x)) for x in v) + "}"
    attrs = (f"lhs_batch_dims={dims(lb)}, lhs_contracting_dims={dims(lc)}, "
             f"rhs_batch_dims={dims(rb)}, rhs_contracting_dims={dims(rc)}")
    return tuple(ld), lay[0], tuple(rd), lay[1], tuple(od), lay[2], attrs


def _module(cases, t="f32", seed=0):
    rng = np.random.default_rng(seed)
    m = O.ModuleText(name="dots")
    args = []
    for ld, ll, rd, rl, od, ol, attrs in cases:
        pl = m.param(O.ShapeCase("", ld, ll).text(t))
        pr = m.param(O.ShapeCase("", rd, rl).text(t))
        args += [rng.standard_normal(ld).astype(O.DTYPE[t]),
                 rng.standard_normal(rd).astype(O.DTYPE[t])]
        m.op(O.ShapeCase("", od, ol).text(t), f"dot({pl}, {pr}), {attrs}",
             f"dot {ld}{ll} {rd}{rl} -> {od}{ol} {attrs}")
    return m, args


def _strided(text):
    mod = parse(text)
    return [gemm_plan(i) is None and strided_plan(i.attrs, i.operands[0].shape,
                                                  i.operands[1].shape, i.shape) is not None
            for i in mod.entry.instructions if i.opcode == "dot"]


@pytest.mark.parametrize("seed", [0, 1])
def test_random_dot_general(cpu_check, seed):
    rng = np.random.default_rng(200 + seed)
    cases = [_case(rng, big=k % 5 == 0) for k in range(40)]
    m, args = _module(cases, seed=seed)
    assert sum(_strided(m.text())) >= 15      # most take the strided gemms
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, (O.CLOSE, 1e-4, 1e-4))


# attention's per-head products on [batch, seq, heads, dh] views and their gradients, x . W
# with a 3-D x, a loop of large gemms, and f64
_FORMS = (
    ((2, 40, 3, 16), None, (2, 40, 3, 16), None, (2, 3, 40, 40), None,
     "lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
     "rhs_contracting_dims={3}"),
    ((2, 3, 40, 40), None, (2, 40, 3, 16), None, (2, 3, 40, 16), None,
     "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
     "rhs_contracting_dims={1}"),
    ((2, 40, 3, 16), None, (2, 3, 40, 40), None, (2, 3, 16, 40), None,
     "lhs_batch_dims={0,2}, lhs_contracting_dims={1}, rhs_batch_dims={0,1}, "
     "rhs_contracting_dims={2}"),
    ((4, 50, 64), None, (64, 48), None, (4, 50, 48), None,
     "lhs_contracting_dims={2}, rhs_contracting_dims={0}"),
    ((3, 200, 150), None, (3, 150, 180), (0, 2, 1), (3, 200, 180), None,
     "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
     "rhs_contracting_dims={1}"),
)


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_model_forms(cpu_check, t):
    m, args = _module(_FORMS, t=t, seed=7)
    assert all(_strided(m.text()))
    got, want = cpu_check.run(m.text(), *args)
    tol = 1e-4 if t == "f32" else 1e-11
    O.compare_outputs(got, want, m.labels, (O.CLOSE, tol, tol))


@pytest.mark.parametrize("t", ["bf16", "f16"])
def test_half_types(cpu_check, t):
    """bf16 / f16 dots on the gemm kinds that widen as they pack: sums in f32, rounded
    once (the interpreter's semantics), for half and f32 results; small integers make
    every sum exact, so the results compare bit for bit."""
    rng = np.random.default_rng(40)
    m = O.ModuleText(name=f"half_{t}")
    args = []
    forms = _FORMS + ((((361, 64), None, (64, 96), None, (361, 96), None,
                        "lhs_contracting_dims={1}, rhs_contracting_dims={0}")),)
    for k, (ld, ll, rd, rl, od, ol, attrs) in enumerate(forms):
        out_t = "f32" if k % 2 else t
        pl = m.param(O.ShapeCase("", ld, ll).text(t))
        pr = m.param(O.ShapeCase("", rd, rl).text(t))
        args += [rng.integers(-3, 4, ld).astype(O.DTYPE[t]),
                 rng.integers(-3, 4, rd).astype(O.DTYPE[t])]
        m.op(O.ShapeCase("", od, ol).text(out_t), f"dot({pl}, {pr}), {attrs}",
             f"dot {t}->{out_t} {ld} {rd} {attrs}")
    mod = parse(m.text())
    assert all(strided_plan(i.attrs, i.operands[0].shape, i.operands[1].shape, i.shape)
               for i in mod.entry.instructions if i.opcode == "dot")
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, O.EXACT)


@pytest.mark.parametrize("t", ["bf16", "f16"])
def test_half_kernel_packers(t):
    """The gemm kinds that widen bf16 / f16 as they pack: every packer path (row- and
    column-major A and B, whole and edge slivers, both thread splits) against the f32
    product of the widened values."""
    from xlapy.backends.cpu.emitters import gemm_kernel as gk
    _, fn = gk.load(t)
    rng = np.random.default_rng(42)
    dt = O.DTYPE[t]
    for m, n, k in ((37, 45, 29), (130, 70, 300), (5, 3, 17), (1, 40, 17)):
        for a_t in (False, True):
            for b_t in (False, True):
                a = (rng.standard_normal((k, m)).astype(dt).T if a_t
                     else rng.standard_normal((m, k)).astype(dt))
                b = (rng.standard_normal((n, k)).astype(dt).T if b_t
                     else rng.standard_normal((k, n)).astype(dt))
                want = a.astype(np.float32) @ b.astype(np.float32)
                for chunks in (1, 2):
                    c = np.full((m, n), np.nan, np.float32)
                    gk.numpy_call(fn, a, b, c, chunks=chunks)()
                    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


# attention-sized per-head products over 10 heads x batches (4-5 MFLOP each, odd sizes):
# with 2 threads they split by loop index, each gemm whole on one thread
# (dot_general.splits_by_index: at least 4 gemms per thread); with 1 thread, or 3 (10 < 12
# gemms), they run one after another, each split by the gemm
_HEADS = (
    ((2, 203, 5, 61), None, (2, 197, 5, 61), None, (2, 5, 203, 197), None,
     "lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
     "rhs_contracting_dims={3}"),
    ((2, 5, 203, 197), None, (2, 197, 5, 64), None, (2, 5, 203, 64), None,
     "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
     "rhs_contracting_dims={1}"),
    ((2, 5, 203, 197), None, (2, 197, 5, 64), None, (2, 5, 203, 64), (3, 1, 2, 0),
     "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
     "rhs_contracting_dims={1}"),
)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_heads_split_by_index(threads):
    from xlapy.backends.cpu.compiler import CpuCompiler
    from xlapy.backends.cpu.emitters.dot_general import splits_by_index
    from xlapy.backends.interpreter import evaluate
    m, args = _module(_HEADS, seed=11)
    mod = parse(m.text())
    for i in (i for i in mod.entry.instructions if i.opcode == "dot"):
        p = strided_plan(i.attrs, i.operands[0].shape, i.operands[1].shape, i.shape)
        flops = 2 * p["m"] * p["n"] * p["k"]
        assert p["batch"] == 10 and flops >= 1 << 22
        assert splits_by_index(p["batch"], flops, threads) == (threads == 2)
    got = CpuCompiler().compile(mod, num_threads=threads).run(*args)
    want = evaluate(mod, *args)
    O.compare_outputs(list(got), list(want), m.labels, (O.CLOSE, 1e-4, 1e-4))


def test_loop_split_beside_one_parallel_kernel():
    """An entry that is one parallel loop kernel and a loop of gemms split by index (which
    calls the pool itself, recording no launch) is not a single launch: before, the
    runtime's launcher ran the loop kernel alone and the product was never computed."""
    from xlapy.backends.cpu.compiler import CpuCompiler
    from xlapy.backends.interpreter import evaluate
    text = """
HloModule side_by_side
ENTRY main {
  s = f32[2,3,70,800] parameter(0)
  v = f32[2,800,3,8] parameter(1)
  c = f32[] constant(0.1)
  cb = f32[2,3,70,800] broadcast(c), dimensions={}
  sc = f32[2,3,70,800] multiply(s, cb)
  e = f32[2,3,70,800] exponential(sc)
  d = f32[2,3,70,8] dot(s, v), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={1}
  ROOT t = (f32[2,3,70,8], f32[2,3,70,800]) tuple(d, e)
}
"""  # noqa: E501 (HLO text: one instruction a line)
    mod = parse(text)
    rng = np.random.default_rng(3)
    args = [rng.standard_normal((2, 3, 70, 800)).astype(np.float32),
            rng.standard_normal((2, 800, 3, 8)).astype(np.float32)]
    got = CpuCompiler().compile(mod, num_threads=2).run(*args)
    want = evaluate(mod, *args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-4)
