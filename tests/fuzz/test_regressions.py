"""Every failure the fuzzer found, shrunk (tests/fuzz/regressions/): each module runs on the
interpreter, on cpu and on cpu without fusion and must match the outputs XLA gave for it
(or, where XLA cannot run it, the interpreter's), judged as the campaigns judge.
"""

import pytest

from fuzzlib import harness, regressions

CASES = regressions.cases()


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_regression(path):
    text, inputs, outputs, comment = regressions.load(path)
    reference = next((c.split(":", 1)[1].strip() for c in comment
                      if c.startswith("reference:")), "xla")
    backends = [b for b in harness.BACKENDS if not (b == "interpreter" and
                                                    reference == "interpreter")]
    result = harness.check(text, inputs, backends, expected=outputs)
    harness.clear_caches()
    assert not result.findings, "\n".join(str(f) for f in result.findings)


def test_there_are_cases():
    assert len(CASES) >= 2
