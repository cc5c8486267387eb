"""The corpus still computes the same values with each cpu pipeline pass disabled in turn.

For every corpus module and every pass of the cpu pipeline, the pipeline runs with that pass
disabled (--xla_disable_hlo_passes), the optimized module is evaluated by the reference
interpreter and compared with the unoptimized module's result. A representative subset is
also compiled natively with the pass disabled and compared the same way.
"""

import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

from xlapy.backends.base import flatten, get_platform
from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
from xlapy.backends.interpreter import evaluate
from xlapy.hlo import parse_file
from xlapy.tools.compare import compare_outputs

CORPUS = pathlib.Path(__file__).parents[1] / "hlo"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())
PASSES = ["call-inliner", "fusion-inliner", "fusion-legalizer", "algsimp", "constant_folding",
          "cse", "dce", "tuple-simplifier", "conv-phases",
          "transpose-folding", "reduction-splitter", "gemm-update-fusion",
          "gemm-epilogue-fusion", "fusion", "row-fusion", "column-fusion", "boundary-layouts",
          "reshape-to-bitcast", "dot-output-layout", "attention-fusion"]
RUNNABLE = [(e, f) for e in MANIFEST for k, f in e["files"].items()
            if f.endswith(".hlo") and e.get("expect") != "unsupported-custom-call"]
NATIVE_SUBSET = {"mlp_train_step.hlo", "cnn_train_step.opt.hlo", "fori_loop.hlo"}
_REFERENCE: dict = {}


def _reference(filename, module, args):
    """The unoptimized module's interpreter result (computed once per module)."""
    if filename not in _REFERENCE:
        _REFERENCE[filename] = flatten(evaluate(module, *args))
    return _REFERENCE[filename]


def _inputs(entry):
    with np.load(CORPUS / entry["files"]["inputs"]) as z:
        arrays = [z[f"arr_{i}"] for i in range(len(z.files))]
    specs = entry.get("inputs", [])
    return [a.view(ml_dtypes.bfloat16) if i < len(specs) and specs[i].get("stored_as") == "uint16"
            else a for i, a in enumerate(arrays)]


def test_every_pipeline_pass_is_listed():
    from xlapy.backends.cpu.passes.pipeline import cpu_pipeline

    def names(pipeline):
        for p in pipeline.passes:
            yield from names(p) if hasattr(p, "passes") else [p.name]
    assert set(names(cpu_pipeline())) == set(PASSES)


@pytest.mark.parametrize("disabled", PASSES)
def test_corpus_with_pass_disabled(disabled, monkeypatch):
    monkeypatch.setenv("XLAPY_FLAGS", f"--xla_disable_hlo_passes={disabled}")
    failures = []
    for entry, filename in RUNNABLE:
        module = parse_file(CORPUS / filename)
        args = _inputs(entry)
        want = _reference(filename, module, args)
        optimized = run_cpu_pipeline(module.clone())
        got = flatten(evaluate(optimized, *args))
        bad = [r.line() for r in compare_outputs(want, got) if not r.ok]
        if filename in NATIVE_SUBSET:
            native = flatten(get_platform("cpu").compiler.compile(module).run(*args))
            bad += ["native " + r.line() for r in compare_outputs(want, native) if not r.ok]
        if bad:
            failures.append(f"{filename}: {bad}")
    assert not failures, "\n".join(failures)
