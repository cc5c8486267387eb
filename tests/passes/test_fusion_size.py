"""Fusion keeps compile time linear in program size: a large producer with several
consumers (a random-bits hash feeding every sampler step) is computed once, as a kernel of
its own, not copied into each consumer; a small one is still duplicated. Checked by size
sweeps (instructions after fusion, bytes of LLVM IR), never by timing."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.backends.base import flatten, get_platform
from xlapy.backends.cpu.emitters.program import ModuleEmitter
from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
from xlapy.hlo import parse
from xlapy.passes import FusionPass
from xlapy.passes.fusion import MAX_DUPLICATED_INSTRUCTIONS, count_kernels


def hash_module(rounds: int, consumers: int) -> str:
    """x0, x1 mixed by `rounds` add/rotate/xor rounds (5 instructions each) into h, which
    `consumers` different additions read; they are the outputs."""
    s = "u32[16]"
    lines = [f"  x0_0 = {s} parameter(0)", f"  x1_0 = {s} parameter(1)",
             "  c13 = u32[] constant(13)", "  c19 = u32[] constant(19)",
             f"  b13 = {s} broadcast(c13), dimensions={{}}",
             f"  b19 = {s} broadcast(c19), dimensions={{}}"]
    for r in range(1, rounds + 1):
        a, b = f"x0_{r - 1}", f"x1_{r - 1}"
        lines += [f"  x0_{r} = {s} add({a}, {b})",
                  f"  l_{r} = {s} shift-left({b}, b13)",
                  f"  h_{r} = {s} shift-right-logical({b}, b19)",
                  f"  o_{r} = {s} or(l_{r}, h_{r})",
                  f"  x1_{r} = {s} xor(x0_{r}, o_{r})"]
    lines.append(f"  h = {s} xor(x0_{rounds}, x1_{rounds})")
    outs = []
    for k in range(consumers):
        lines += [f"  k{k} = u32[] constant({k + 1})",
                  f"  kb{k} = {s} broadcast(k{k}), dimensions={{}}",
                  f"  out{k} = {s} add(h, kb{k})"]
        outs.append(f"out{k}")
    lines.append(f"  ROOT t = ({', '.join([s] * consumers)}) tuple({', '.join(outs)})")
    return "HloModule hash\n\nENTRY main {\n" + "\n".join(lines) + "\n}\n"


def _fused_size(m) -> int:
    return sum(len(i.fused_computation.instructions) for i in m.entry.instructions
               if i.opcode == "fusion")


def _ir_bytes(m) -> int:
    e = ModuleEmitter(m, 1, 100_000, use_threads=False)
    e.emit("xlapy_entry")
    return len(str(e.llmod))


def _optimized(text):
    return run_cpu_pipeline(parse(text), verify=True)


def test_large_shared_producer_is_one_kernel():
    m = parse(hash_module(40, 4))
    log = []
    FusionPass(log=log).run(m)
    assert any(not fused and "would duplicate more than" in why for _, _, fused, why in log)
    # the hash is one kernel, read by the 4 consumers: 5 kernels, each op of it fused once
    assert count_kernels(m) == 5
    assert _fused_size(m) < 40 * 5 + 4 * 10


def test_size_grows_linearly_with_consumers():
    sizes = {k: _optimized(hash_module(40, k)) for k in (2, 4, 8)}
    fused = {k: _fused_size(m) for k, m in sizes.items()}
    ir = {k: _ir_bytes(m) for k, m in sizes.items()}
    # each extra consumer adds a few instructions, not another copy of the 200-op hash
    assert fused[8] - fused[4] <= 4 * 10, fused
    assert fused[4] - fused[2] <= 2 * 10, fused
    assert ir[8] - ir[4] < 0.5 * ir[4], ir
    assert (ir[8] - ir[4]) <= 2.5 * (ir[4] - ir[2]) + 1, ir


def test_size_grows_linearly_with_rounds():
    fused = {n: _fused_size(_optimized(hash_module(n, 6))) for n in (10, 20, 40, 80)}
    assert fused[40] - fused[20] <= 5 * 20 + 10, fused
    assert fused[20] - fused[10] <= 5 * 10 + 10, fused
    # 80 rounds chain more than fusion.MAX_FUSED_DEPTH operations: the hash is cut into two
    # kernels (x0, x1 passed through memory), each part of it computed once
    assert fused[80] <= 2 * fused[40] + 60, fused


@pytest.mark.parametrize("consumers", [2, 5])
def test_small_shared_producer_is_still_duplicated(consumers):
    # a hash of 3 rounds (16 instructions, under the limit) fuses into every consumer
    assert 3 * 5 + 1 < MAX_DUPLICATED_INSTRUCTIONS
    m = _optimized(hash_module(3, consumers))
    assert count_kernels(m) == consumers


@pytest.mark.parametrize("rounds", [3, 40])
def test_results_unchanged(rounds):
    text = hash_module(rounds, 3)
    rng = np.random.default_rng(0)
    args = [rng.integers(0, 2 ** 32, 16, dtype=np.uint32) for _ in range(2)]
    got = flatten(get_platform("cpu").compiler.compile(parse(text)).run(*args))
    want = flatten(get_platform("interpreter").compiler.compile(parse(text)).run(*args))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_random_sampler_does_not_grow_through_fusion():
    # gamma's rejection loop hashes its keys with threefry (~500 instructions) that
    # several consumers read: copied into each, the optimized module had 6.8k instructions
    # for 4.2k traced ones; computed once, fewer than traced
    import xlapy as xp
    import xlapy.random as xr
    m = xp.jit(lambda k: xr.gamma(k, np.float32([0.3, 1.0]))).lower(xr.PRNGKey(0)).module
    traced = sum(len(c.instructions) for c in m.computations)
    opt = run_cpu_pipeline(m.clone())
    assert sum(len(c.instructions) for c in opt.computations) < traced
