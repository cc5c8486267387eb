"""The whole tests/hlo corpus runs on the cpu backend and matches the interpreter.

Same inputs as the corpus (XLA's own inputs), all cpu passes on (fusion included). Modules
whose manifest entry expects an unsupported custom-call must fail the same clear way on
both backends.
"""

import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

from xlapy.backends.base import flatten, get_platform
from xlapy.errors import EvaluationError, LoweringError
from xlapy.hlo import parse_file
from xlapy.tools.compare import compare_outputs

CORPUS = pathlib.Path(__file__).parents[2] / "hlo"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())
CASES = [(e, f) for e in MANIFEST for key, f in e["files"].items() if f.endswith(".hlo")]


def load_inputs(entry):
    with np.load(CORPUS / entry["files"]["inputs"]) as z:
        arrays = [z[f"arr_{i}"] for i in range(len(z.files))]
    specs = entry.get("inputs", [])
    return [a.view(ml_dtypes.bfloat16) if i < len(specs) and specs[i].get("stored_as") == "uint16"
            else a for i, a in enumerate(arrays)]


def _expects_unsupported(entry, filename):
    if entry.get("expect") != "unsupported-custom-call":
        return False
    which = entry.get("expect_files")
    if which is None:
        return True
    return any(entry["files"].get(k) == filename for k in which)


@pytest.mark.parametrize("entry,filename", CASES, ids=[f for _, f in CASES])
@pytest.mark.usefixtures("ieee_denormals")  # the interpreter keeps denormals (NumPy)
def test_cpu_matches_interpreter(entry, filename):
    module = parse_file(CORPUS / filename)
    inputs = load_inputs(entry)
    interp = get_platform("interpreter").compiler.compile(module)
    if _expects_unsupported(entry, filename):
        with pytest.raises(EvaluationError, match="unsupported custom-call target"):
            interp.run(*inputs)
        try:
            cpu = get_platform("cpu").compiler.compile(module)
        except LoweringError as e:
            assert "unsupported custom-call target" in str(e)
            return
        # the cpu backend supports this target: then it must match XLA's output
        with np.load(CORPUS / entry["files"]["outputs"]) as z:
            want = [z[f"arr_{i}"] for i in range(len(z.files))]
        reports = compare_outputs(want, flatten(cpu.run(*inputs)))
        assert all(r.ok for r in reports), [r.line() for r in reports if not r.ok]
        return
    expected = flatten(interp.run(*inputs))
    got = flatten(get_platform("cpu").compiler.compile(module).run(*inputs))
    reports = compare_outputs(expected, got)
    assert all(r.ok for r in reports), "\n".join(r.line() for r in reports if not r.ok)


@pytest.mark.parametrize("filename", ["elementwise_unary_f32_special.hlo",
                                      "elementwise_unary_f32_special.opt.hlo"])
def test_special_values_match_xla_with_denormals_flushed(filename):
    """By default the cpu backend flushes denormals as XLA's CPU runtime does: on the corpus
    of special values (denormals among them) it gives XLA's recorded outputs."""
    entry = next(e for e, f in CASES if f == filename)
    module = parse_file(CORPUS / filename)
    with np.load(CORPUS / entry["files"]["outputs"]) as z:
        want = [z[f"arr_{i}"] for i in range(len(z.files))]
    got = flatten(get_platform("cpu").compiler.compile(module).run(*load_inputs(entry)))
    reports = compare_outputs(want, got)
    assert all(r.ok for r in reports), "\n".join(r.line() for r in reports if not r.ok)
