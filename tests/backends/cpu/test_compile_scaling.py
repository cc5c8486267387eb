"""Compilation work grows linearly with the program: size sweeps, not timings (issue 16).

A value used twice inside a fusion (x * tanh(x), x + x) was emitted once per use, so the
LLVM IR doubled with every link of such a chain (x * tanh(x) repeated 16 times took 38 s
to compile, the chain x_i = x_{i-1} + x_{i-1} 55 s at depth 20). The emitted IR and the
work of the HLO pipeline (counted in executed Python lines, which a quadratic loop over a
growing list shows as clearly as time would) must now at most about double when the chain
doubles.
"""

import sys

import pytest

from xlapy.backends.cpu.emitters.program import ModuleEmitter
from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
from xlapy.hlo import parse


def _chain(n: int, op: str) -> str:
    lines = ["HloModule chain", "", "ENTRY main {", "  x0 = f32[64] parameter(0)"]
    for i in range(1, n + 1):
        if op == "add":
            lines.append(f"  x{i} = f32[64] add(x{i - 1}, x{i - 1})")
        else:  # x * tanh(x)
            lines.append(f"  t{i} = f32[64] tanh(x{i - 1})")
            lines.append(f"  x{i} = f32[64] multiply(x{i - 1}, t{i})")
    lines[-1] = lines[-1].replace(f"  x{n} =", f"  ROOT x{n} =")
    return "\n".join(lines + ["}", ""])


def _ir_instructions(text: str) -> int:
    em = ModuleEmitter(run_cpu_pipeline(parse(text)), 1, 1 << 30, use_threads=False)
    em.emit("xlapy_entry")
    return sum(1 for line in str(em.llmod).splitlines() if " = " in line)


@pytest.mark.parametrize("op", ["add", "tanh"])
def test_emitted_ir_is_linear_in_a_chain_of_shared_values(op):
    sizes = [_ir_instructions(_chain(n, op)) for n in (8, 16, 32)]
    assert sizes[1] <= 2.3 * sizes[0] and sizes[2] <= 2.3 * sizes[1], sizes


def _lines_executed(fn) -> int:
    count = [0]

    def tracer(frame, event, arg):
        if event == "line":
            count[0] += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count[0]


def test_pipeline_work_is_linear_in_a_long_chain():
    counts = []
    for n in (300, 600, 1200):
        module = parse(_chain(n, "add"))
        counts.append(_lines_executed(lambda m=module: run_cpu_pipeline(m)))
    assert counts[1] <= 2.3 * counts[0] and counts[2] <= 2.3 * counts[1], counts
