"""The examples (examples/aot): the 3-deep 60-wide LSTM and the MNIST softmax model, each
compiled for x86-64 and AArch64, driven by its C++ program (natively or under qemu) and
checked: the LSTM against NumPy, MNIST against the session on 1,000 test digits. The
LSTM's code and data stay within the size target (450 KB)."""

import importlib.util
import pathlib
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples" / "aot"


def _build_module():
    name = "xlapy_examples_aot_build"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / "build.py")
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


@pytest.mark.parametrize("model", ["lstm", "mnist"])
def test_example_builds_runs_and_matches(model, machine, tc, tmp_path):
    build = _build_module()
    b = build.BUILDERS[model](machine, tmp_path)
    report = b.check(b)   # raises when a result is off
    assert ("max error against NumPy" if model == "lstm" else "all predictions the same") \
        in report
    if model == "lstm":
        s = b.compiled.sizes()
        assert b.constants > 340_000                  # the weights are in the object
        assert s["text"] + s["rodata"] + s["data"] <= 450 * 1024
