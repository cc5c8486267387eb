"""The tests/hlo corpus as the gpu tests use it (loaded by path: pytest runs with
--import-mode=importlib). None of the gpu tests needs a GPU, except those in
test_gpu_runtime.py that skip without one.
- CORPUS, CASES, load_inputs: the tests/hlo corpus as tests/backends/cpu uses it
- UNSUPPORTED: corpus modules using an opcode the gpu backend has no lowering for yet
  (the TopK and Cholesky custom calls): their tests expect that clear error,
  and fail (as a reminder to update the list) once the module compiles
- ptxas(): NVIDIA's assembler (/usr/local/bin/ptxas, XLAPY_PTXAS, or PATH), or None
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil

import ml_dtypes
import numpy as np

CORPUS = pathlib.Path(__file__).parents[2] / "hlo"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())
CASES = [(e, f) for e in MANIFEST for key, f in e["files"].items() if f.endswith(".hlo")]
FILES = [f for _, f in CASES]

UNSUPPORTED = {   # file -> the opcode without a gpu lowering
    "custom_call_top_k.opt.hlo": "custom-call (TopK)",
    "custom_call_cholesky.hlo": "custom-call (Cholesky)",
    "custom_call_cholesky.opt.hlo": "custom-call (Cholesky)",
}


def unsupported_op(filename: str) -> str | None:
    return UNSUPPORTED.get(filename)


def load_inputs(entry):
    with np.load(CORPUS / entry["files"]["inputs"]) as z:
        arrays = [z[f"arr_{i}"] for i in range(len(z.files))]
    specs = entry.get("inputs", [])
    return [a.view(ml_dtypes.bfloat16) if i < len(specs) and specs[i].get("stored_as") == "uint16"
            else a for i, a in enumerate(arrays)]


def ptxas() -> str | None:
    for c in (os.environ.get("XLAPY_PTXAS"), "/usr/local/bin/ptxas", shutil.which("ptxas")):
        if c and os.path.exists(c):
            return c
    return None
