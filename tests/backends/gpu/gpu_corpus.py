"""The tests/hlo corpus as the gpu tests use it (loaded by path: pytest runs with
--import-mode=importlib). None of the gpu tests needs a GPU, except those in
test_gpu_runtime.py that skip without one.
- CORPUS, CASES, load_inputs: the tests/hlo corpus as tests/backends/cpu uses it
- expects_unsupported(entry, filename): the modules whose custom call (TopK, Cholesky) the
  manifest marks unsupported: the gpu backend refuses them with a clear LoweringError
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

def expects_unsupported(entry, filename: str) -> bool:
    """The manifest says XLA's custom call in this module is not supported (the interpreter
    refuses it; the cpu backend implements some as an extra, the gpu backend none yet)."""
    if entry.get("expect") != "unsupported-custom-call":
        return False
    which = entry.get("expect_files")
    return which is None or any(entry["files"].get(k) == filename for k in which)


ENTRY_OF = {f: e for e, f in CASES}


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
