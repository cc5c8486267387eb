"""The tests/hlo corpus as the gpu tests use it (loaded by path: pytest runs with
--import-mode=importlib). None of the gpu tests needs a GPU, except those in
test_gpu_runtime.py that skip without one.
- CORPUS, CASES, load_inputs: the tests/hlo corpus as tests/backends/cpu uses it
- refusal(entry, filename): what the gpu backend's clear LoweringError says for a module
  it does not compile (a custom call other than TopK: Cholesky through LAPACK; the fft
  opcode, not lowered for the gpu yet), else None
- assert_matches_interpreter(module, entry, inputs, got): the gpu's outputs against the
  interpreter's (XLA's recorded ones where the interpreter lacks a custom call)
- ptxas(): NVIDIA's assembler (/usr/local/bin/ptxas, XLAPY_PTXAS, or PATH), or None
"""

from __future__ import annotations

import json
import re
import os
import pathlib
import shutil

import ml_dtypes
import numpy as np

from xlapy.backends.base import flatten, get_platform
from xlapy.errors import EvaluationError
from xlapy.tools.compare import compare_outputs

CORPUS = pathlib.Path(__file__).parents[2] / "hlo"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())
CASES = [(e, f) for e in MANIFEST for key, f in e["files"].items() if f.endswith(".hlo")]
FILES = [f for _, f in CASES]

def refusal(entry, filename: str) -> str | None:
    """The words of the LoweringError the gpu backend refuses the module with: it makes a
    custom call other than TopK (JAX's LAPACK targets, lapack_*_ffi, are XLA CPU-only
    anyway), or it has an fft (no gpu lowering yet); None for a module it compiles."""
    text = (CORPUS / filename).read_text()
    if "custom-call(" in text and 'custom_call_target="TopK"' not in text:
        return "unsupported custom-call target"
    if re.search(r"\bfft\(", text):
        return "the gpu backend has no lowering for fft yet"
    return None


def xla_outputs(entry) -> list:
    """XLA's recorded outputs of a corpus entry."""
    with np.load(CORPUS / entry["files"]["outputs"]) as z:
        return [z[f"arr_{i}"] for i in range(len(z.files))]


ENTRY_OF = {f: e for e, f in CASES}


def load_inputs(entry):
    with np.load(CORPUS / entry["files"]["inputs"]) as z:
        arrays = [z[f"arr_{i}"] for i in range(len(z.files))]
    specs = entry.get("inputs", [])
    return [a.view(ml_dtypes.bfloat16) if i < len(specs) and specs[i].get("stored_as") == "uint16"
            else a for i, a in enumerate(arrays)]


def assert_matches_interpreter(module, entry, inputs, got) -> None:
    """`got` (flat outputs of the module run on `inputs`) against the interpreter's, or
    XLA's recorded outputs where the interpreter lacks a custom call (TopK)."""
    try:
        want = flatten(get_platform("interpreter").compiler.compile(module).run(*inputs))
    except EvaluationError as e:
        assert "unsupported custom-call target" in str(e)
        want = xla_outputs(entry)
    reports = compare_outputs(want, got)
    assert all(r.ok for r in reports), "\n".join(r.line() for r in reports if not r.ok)


def ptxas() -> str | None:
    for c in (os.environ.get("XLAPY_PTXAS"), "/usr/local/bin/ptxas", shutil.which("ptxas")):
        if c and os.path.exists(c):
            return c
    return None
