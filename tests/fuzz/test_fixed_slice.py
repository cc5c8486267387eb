"""`make test`'s slice of the differential fuzzer: a fixed set of seeds (1,000 programs in
40 modules of 25, half written as HLO, half lowered by JAX), each module run on XLA and on
the interpreter, cpu and cpu without fusion and judged as the campaigns judge (harness.py).
The open-ended campaign is `make fuzz` (campaign.py); a finding of either replays from its
generator and seed alone: tests/fuzz/triage.py --generator G --seed N --bundle 25.
"""

import pytest

from fuzzlib import harness
from fuzzlib.generators import generate

BUNDLE = 25
SEEDS = [(g, s) for g in ("hlo", "jax") for s in range(20)]
# Seeds whose modules show a finding not fixed yet: (generator, seed) -> the finding.
OPEN: dict[tuple[str, int], str] = {}


def _params():
    for g, s in SEEDS:
        marks = ([pytest.mark.xfail(reason=OPEN[(g, s)], strict=True)]
                 if (g, s) in OPEN else [])
        yield pytest.param(g, s, id=f"{g}-{s}", marks=marks)


@pytest.mark.parametrize("generator,seed", list(_params()))
def test_fixed_seed(generator, seed):
    prog = generate(generator, seed, BUNDLE)
    result = harness.check(prog.text, prog.inputs)
    harness.clear_caches()
    assert result.skipped is None, result.skipped
    assert not result.findings, "\n".join(str(f) for f in result.findings)


def test_slice_covers_the_op_set():
    """The slice's programs reach the opcodes and element types the issue names."""
    ops, dtypes, programs = set(), set(), 0
    for g, s in SEEDS:
        prog = generate(g, s, BUNDLE)
        ops |= set(prog.ops)
        dtypes |= set(prog.dtypes)
        programs += prog.programs
    assert programs >= 1000
    for op in ("divide", "remainder", "shift-left", "shift-right-arithmetic", "dot",
               "gather", "scatter", "dynamic-slice", "while", "conditional", "sort",
               "reduce-window", "convolution"):
        assert op in ops, op
    assert {"f16", "bf16", "f32", "f64", "s8", "u32", "s64", "pred"} <= dtypes, dtypes
