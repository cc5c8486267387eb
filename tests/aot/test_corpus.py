"""The tests/hlo corpus compiled ahead of time for x86-64 and AArch64, each module's object
linked into one C program run natively or under qemu, the results compared with the
reference interpreter on the corpus inputs (for a LAPACK custom-call, which the interpreter
does not run, with XLA's recorded outputs)."""

import json
import pathlib

import numpy as np
import pytest

import xlapy.aot as aot
from xlapy.backends.base import flatten
from xlapy.backends.interpreter import evaluate
from xlapy.hlo import parse_file
from xlapy.tools.compare import compare_outputs
from xlapy_tests_aot_harness import TRIPLES, run_in_c

CORPUS = pathlib.Path(__file__).parents[1] / "hlo"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())


def _inputs(entry):
    import ml_dtypes
    with np.load(CORPUS / entry["files"]["inputs"]) as z:
        arrays = [z[f"arr_{i}"] for i in range(len(z.files))]
    specs = entry.get("inputs", [])
    return [a.view(ml_dtypes.bfloat16) if i < len(specs) and specs[i].get("stored_as") ==
            "uint16" else a for i, a in enumerate(arrays)]


@pytest.mark.usefixtures("ieee_denormals")  # the interpreter keeps denormals (NumPy)
def test_corpus_matches_interpreter(machine, tc, tmp_path):
    programs, expected, names = [], [], []
    for entry in MANIFEST:
        name = entry["files"]["hlo"]
        module = parse_file(CORPUS / name)
        inputs = _inputs(entry)
        c = aot.compile(CORPUS / name, target_triple=TRIPLES[machine],
                        entry_point="corpus_" + name.split(".")[0])
        programs.append((c, inputs))
        if entry.get("expect") == "unsupported-custom-call":   # (the interpreter has no
            with np.load(CORPUS / entry["files"]["outputs"]) as z:   # LAPACK: XLA's outputs)
                expected.append([z[f"arr_{i}"] for i in range(len(z.files))])
        else:
            expected.append([np.asarray(x) for x in flatten(evaluate(module, *inputs))])
        names.append(name)
    results = run_in_c(tc, programs, tmp_path)
    bad = []
    for name, want, got in zip(names, expected, results):
        reports = compare_outputs(want, got)
        bad += [f"{name}: {r.line()}" for r in reports if not r.ok]
    assert not bad, "\n".join(bad)
