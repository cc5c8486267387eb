"""The whole tests/hlo corpus in StableHLO form (NAME.mlir, what JAX's lower().as_text()
gave) runs like the HLO form: parsed by xlapy's StableHLO reader, run on the interpreter
and compared with XLA's outputs (NAME.out.npz) with the corpus tolerances, and run on the
cpu backend and compared with the interpreter.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import xlapy_tests_interpreter_corpus as ic
import xlapy_tests_stablehlo as util
from xlapy.backends.base import flatten, get_platform
from xlapy.backends.interpreter import evaluate
from xlapy.errors import EvaluationError, LoweringError
from xlapy.hlo.stablehlo import parse_stablehlo_file
from xlapy.tools.compare import compare_outputs

CASES = [pytest.param(e, id=e["files"]["mlir"]) for e in util.entries()]


def _inputs(entry):
    return ic._load(util.CORPUS / entry["files"]["inputs"], entry["inputs"])


def test_every_corpus_program_has_stablehlo():
    assert len(util.entries()) == len(util.MANIFEST) >= 48


@pytest.mark.parametrize("entry", CASES)
def test_interpreter_matches_xla(entry):
    path = util.CORPUS / entry["files"]["mlir"]
    module = parse_stablehlo_file(path)
    inputs = _inputs(entry)
    if util.expects_unsupported(entry, "mlir"):
        with pytest.raises(EvaluationError) as info:
            evaluate(module, *inputs)
        assert any(f"'{t}'" in str(info.value) for t in entry["custom_call_targets"]["mlir"])
        return
    runs = [flatten(evaluate(module, *inputs))]
    flushed = [ic._flush_subnormals(a) for a in inputs]  # XLA:CPU flushes denormals
    if any(not np.array_equal(a, f, equal_nan=True) for a, f in zip(inputs, flushed)
           if a.dtype in ic.TOLERANCES):
        runs.append(flatten(evaluate(module, *flushed)))
    expected = ic._load(util.CORPUS / entry["files"]["outputs"], entry["outputs"])
    assert len(runs[0]) == len(expected)
    hlo_text = (util.CORPUS / entry["files"]["hlo"]).read_text()  # sets f16/bf16 tolerances
    for i, want in enumerate(expected):
        ic.assert_matches([r[i] for r in runs], want, f"{path.name} output {i}", hlo_text)


@pytest.mark.parametrize("entry", CASES)
@pytest.mark.usefixtures("ieee_denormals")
def test_cpu_matches_interpreter(entry):
    module = parse_stablehlo_file(util.CORPUS / entry["files"]["mlir"])
    inputs = _inputs(entry)
    if util.expects_unsupported(entry, "mlir"):
        try:
            exe = get_platform("cpu").compiler.compile(module)
        except LoweringError as e:
            assert "unsupported custom-call target" in str(e)
            return
        # the cpu backend implements the target: then it must give XLA's outputs
        want = ic._load(util.CORPUS / entry["files"]["outputs"], entry["outputs"])
        reports = compare_outputs(want, flatten(exe.run(*inputs)))
        assert all(r.ok for r in reports), [r.line() for r in reports if not r.ok]
        return
    want = flatten(evaluate(module, *inputs))
    got = flatten(get_platform("cpu").compiler.compile(module).run(*inputs))
    reports = compare_outputs(want, got)
    assert all(r.ok for r in reports), "\n".join(r.line() for r in reports if not r.ok)


@pytest.fixture
def ieee_denormals(monkeypatch):
    """Compile without denormal flushing (the interpreter keeps denormals, as NumPy does)."""
    flags = os.environ.get("XLAPY_FLAGS", "")
    monkeypatch.setenv("XLAPY_FLAGS", f"{flags} --xla_cpu_ftz=false".strip())
