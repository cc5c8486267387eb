"""Run every module of the JAX/XLA corpus (tests/hlo, see MANIFEST.json) on the interpreter
and compare with XLA's outputs.

One test per HLO file (pre-optimization <name>.hlo and optimized <name>.opt.hlo), so a
module that needs a missing rule fails on its own.  Floats compare with a tolerance that
fits the type (XLA:CPU uses its own polynomial approximations for transcendentals); NaN
matches NaN; integers and pred compare exactly.

XLA:CPU runs with denormals-are-zero / flush-to-zero, while the interpreter is IEEE (a
subnormal input is a tiny nonzero number: log(1e-45) = -103.3, not -inf).  When an input
holds subnormals the module is run a second time with them flushed to signed zero, and each
output element must match one of the two runs.

XLA:CPU also allows excess precision (xla_allow_excess_precision): it computes f16/bf16 ops
in f32 and may drop the rounding between them (convert(bf16 divide) to f32 is the f32
quotient), while the interpreter rounds every op.  So every float output of a module that
uses f16/bf16 anywhere compares with the tolerance of the narrowest float type it uses.  Modules
whose manifest says "expect": "unsupported-custom-call" must raise EvaluationError naming
the custom-call target.
"""

from __future__ import annotations

import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

from xlapy.backends.base import flatten
from xlapy.backends.interpreter import evaluate
from xlapy.errors import EvaluationError
from xlapy.hlo.parser import parse_file

CORPUS = pathlib.Path(__file__).resolve().parents[2] / "hlo"

# (rtol, atol) per float dtype.
TOLERANCES = {
    np.dtype(np.float64): (1e-9, 1e-12),
    np.dtype(np.float32): (2e-4, 1e-5),
    np.dtype(np.float16): (1e-2, 1e-3),
    np.dtype(ml_dtypes.bfloat16): (2e-2, 1e-2),
}


def _manifest() -> list[dict]:
    path = CORPUS / "MANIFEST.json"
    return json.loads(path.read_text()) if path.exists() else []


def _cases():
    for entry in _manifest():
        for kind in ("hlo", "opt_hlo"):
            name = entry["files"].get(kind)
            if name:
                yield pytest.param(entry, kind, id=name)


def _load(path: pathlib.Path, infos: list[dict]) -> list[np.ndarray]:
    with np.load(path) as z:
        arrays = [z[f"arr_{i}"] for i in range(len(z.files))]
    out = []
    for a, info in zip(arrays, infos):
        if info.get("stored_as") == "uint16" and info["dtype"] == "bfloat16":
            a = a.view(ml_dtypes.bfloat16)
        out.append(a)
    return out


def _flush_subnormals(a: np.ndarray) -> np.ndarray:
    if a.dtype not in TOLERANCES:
        return a
    with np.errstate(invalid="ignore"):
        wide = a.astype(np.float64)
    tiny = float(ml_dtypes.finfo(a.dtype).tiny)
    flushed = np.where((wide != 0) & (np.abs(wide) < tiny), np.copysign(0, wide), wide)
    with np.errstate(invalid="ignore"):
        return flushed.astype(a.dtype)


def _tolerance(dtype: np.dtype, module_text: str) -> tuple[float, float]:
    """(rtol, atol) for a float output: its own type's, or a looser f16/bf16 one when the
    module computes in that type (excess precision, see the module docstring)."""
    rtol, atol = TOLERANCES[dtype]
    for name, dt in (("f16[", np.float16), ("bf16[", ml_dtypes.bfloat16)):
        if name in module_text:
            r, a = TOLERANCES[np.dtype(dt)]
            rtol, atol = max(rtol, r), max(atol, a)
    return rtol, atol


def _close(got: np.ndarray, want: np.ndarray, module_text: str) -> np.ndarray:
    """Elementwise: does got match want (tolerance for floats, NaN == NaN; complex: both
    parts, each with its float type's tolerance)?"""
    if want.dtype.kind == "c":
        return _close(got.real, want.real, module_text) & _close(got.imag, want.imag,
                                                                module_text)
    if want.dtype in TOLERANCES:
        rtol, atol = _tolerance(want.dtype, module_text)
        with np.errstate(invalid="ignore"):  # casting bf16 NaN warns
            g, w = got.astype(np.float64), want.astype(np.float64)
        return np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    return got == want


def assert_matches(alternatives: list[np.ndarray], want: np.ndarray, what: str,
                   module_text: str) -> None:
    """Every element of XLA's `want` matches that element of one of the interpreter runs."""
    ok = np.zeros(want.shape, dtype=bool)
    for got in alternatives:
        got = np.asarray(got)
        assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, XLA gave {want.dtype}"
        assert got.shape == want.shape, f"{what}: shape {got.shape}, XLA gave {want.shape}"
        ok |= _close(got, want, module_text)
    if not ok.all():
        bad = np.nonzero(~ok)
        raise AssertionError(f"{what}: {int((~ok).sum())} of {want.size} elements differ; first "
                             f"at index {tuple(int(i[0]) for i in bad)}: interpreter "
                             f"{[np.asarray(g)[bad][:8] for g in alternatives]}, XLA "
                             f"{want[bad][:8]}")


@pytest.mark.parametrize("entry,kind", list(_cases()))
def test_corpus_module(entry, kind):
    path = CORPUS / entry["files"][kind]
    text = path.read_text()
    module = parse_file(path)
    inputs = _load(CORPUS / entry["files"]["inputs"], entry["inputs"])
    if entry.get("expect") == "unsupported-custom-call" and kind in entry.get("expect_files", []):
        targets = entry["custom_call_targets"][kind]
        with pytest.raises(EvaluationError) as info:
            evaluate(module, *inputs)
        assert any(f"'{t}'" in str(info.value) for t in targets), str(info.value)
        return
    runs = [flatten(evaluate(module, *inputs))]
    flushed = [_flush_subnormals(a) for a in inputs]
    if any(not np.array_equal(a, f, equal_nan=True) for a, f in zip(inputs, flushed)
           if a.dtype in TOLERANCES):
        runs.append(flatten(evaluate(module, *flushed)))
    expected = _load(CORPUS / entry["files"]["outputs"], entry["outputs"])
    assert len(runs[0]) == len(expected), f"{len(runs[0])} outputs, XLA gave {len(expected)}"
    for i, want in enumerate(expected):
        assert_matches([run[i] for run in runs], want, f"{path.name} output {i}", text)


def test_corpus_is_present():
    assert len(_manifest()) > 0, f"no corpus manifest in {CORPUS}"
