"""Every failure the fuzzer found, shrunk (tests/fuzz/regressions/): each module runs on the
interpreter, on cpu and on cpu without fusion and must match the outputs XLA gave for it
(or, where XLA cannot run it, the interpreter's), judged as the campaigns judge. A case's
"// backends: a, b" line narrows the backends (a module of thousands of instructions whose
fault is in a pass that runs with and without fusion: unfused, each is a kernel to compile).
"""

import pytest

from fuzzlib import harness, regressions

CASES = regressions.cases()


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_regression(path):
    text, inputs, outputs, comment = regressions.load(path)
    reference = next((c.split(":", 1)[1].strip() for c in comment
                      if c.startswith("reference:")), "xla")
    only = next((c.split(":", 1)[1] for c in comment if c.startswith("backends:")), None)
    backends = [b for b in harness.BACKENDS if not (b == "interpreter" and
                                                    reference == "interpreter")]
    if only is not None:
        names = [n.strip() for n in only.split(",")]
        assert set(names) <= set(harness.BACKENDS), f"unknown backend in {names}"
        backends = [b for b in backends if b in names]
    result = harness.check(text, inputs, backends, expected=outputs)
    harness.clear_caches()
    assert not result.findings, "\n".join(str(f) for f in result.findings)


def test_there_are_cases():
    assert len(CASES) >= 2
