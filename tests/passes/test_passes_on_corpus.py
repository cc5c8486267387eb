"""Every pass alone, and the whole simplification pipeline, on every module of the JAX
corpus (tests/hlo, see MANIFEST.json), with the verifier and the no-change check after
each pass; the results are evaluated with the reference interpreter on the corpus inputs.

Two comparisons per output:
  - against the interpreter run of the unoptimized module, which must agree up to float
    noise (the passes are exact apart from x+0 on -0; constant folding uses the same
    interpreter rules);
  - against XLA's outputs (xlapy.tools.compare.compare_outputs): where the unoptimized
    module's interpreter result matches XLA, the optimized one must too (where it does not,
    the reason is the interpreter-vs-XLA differences that tests/backends/interpreter/
    test_corpus.py explains: denormal flushing and excess precision).
Modules with fusions are also run through FusionInliner(all_fusions=True) then the pipeline,
since the passes leave fusion computations alone. Modules whose manifest expects an
unsupported custom-call are only optimized and verified.
"""

from __future__ import annotations

import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

from xlapy.backends.base import flatten
from xlapy.backends.interpreter import evaluate
from xlapy.hlo.parser import parse_file
from xlapy.passes.algebraic_simplifier import AlgebraicSimplifier
from xlapy.passes.constant_folding import ConstantFolding
from xlapy.passes.cse import CSE
from xlapy.passes.dce import DCE
from xlapy.passes.inliner import FusionInliner
from xlapy.passes.pipeline import Pipeline
from xlapy.passes.simplify import simplification_pipeline
from xlapy.passes.tuple_simplifier import TupleSimplifier
from xlapy.tools.compare import compare_outputs

CORPUS = pathlib.Path(__file__).resolve().parents[1] / "hlo"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())

PASSES = {"algsimp": AlgebraicSimplifier, "constant_folding": ConstantFolding, "cse": CSE,
          "dce": DCE, "tuple-simplifier": TupleSimplifier}


def _cases():
    for entry in MANIFEST:
        for kind in ("hlo", "opt_hlo"):
            if entry["files"].get(kind):
                yield pytest.param(entry, kind, id=entry["files"][kind])


def _load(name: str, infos: list[dict]) -> list[np.ndarray]:
    with np.load(CORPUS / name) as z:
        arrays = [z[f"arr_{i}"] for i in range(len(z.files))]
    return [a.view(ml_dtypes.bfloat16)
            if info.get("stored_as") == "uint16" and info["dtype"] == "bfloat16" else a
            for a, info in zip(arrays, infos)]


def _evaluates(entry, kind) -> bool:
    return not (entry.get("expect") == "unsupported-custom-call"
                and kind in entry.get("expect_files", []))


def _check_outputs(entry, reference: list, got: list, what: str) -> None:
    expected = _load(entry["files"]["outputs"], entry["outputs"])
    assert len(got) == len(reference) == len(expected)
    with np.errstate(invalid="ignore"):
        same = compare_outputs(reference, got, rtol=1e-5, atol=1e-6)
    bad = [r.line() for r in same if not r.ok]
    assert not bad, f"{what}: optimized module differs from the unoptimized one:\n" + \
        "\n".join(bad)
    with np.errstate(invalid="ignore"):  # NaN/inf outputs
        ref_vs_xla = compare_outputs(expected, reference)
        got_vs_xla = compare_outputs(expected, got)
    for r, g in zip(ref_vs_xla, got_vs_xla):
        assert g.ok or not r.ok, f"{what}: {g.line()} (the unoptimized module matched XLA)"


@pytest.mark.parametrize("entry,kind", list(_cases()))
def test_passes_on_corpus_module(entry, kind, no_pass_flags):
    path = CORPUS / entry["files"][kind]
    original = parse_file(path)
    evaluates = _evaluates(entry, kind)
    if evaluates:
        inputs = _load(entry["files"]["inputs"], entry["inputs"])
        reference = flatten(evaluate(original, *inputs))
    runs = {name: Pipeline(f"only-{name}", [cls()], verify=True) for name, cls in PASSES.items()}
    runs["simplification"] = simplification_pipeline(verify=True)
    if any(i.opcode == "fusion" for i in original.instructions()):
        # XLA-optimized modules keep most code in fusions, which the passes skip: inline
        # them to give the passes real work.
        runs["fusion-inliner+simplification"] = Pipeline("inlined", [
            FusionInliner(all_fusions=True), simplification_pipeline()], verify=True)
    for name, pipeline in runs.items():
        mod = original.clone()
        pipeline.run(mod)
        if evaluates:
            _check_outputs(entry, reference, flatten(evaluate(mod, *inputs)),
                           f"{path.name} after {name}")


def _count(mod, opcode=None) -> int:
    return sum(1 for i in mod.instructions() if opcode is None or i.opcode == opcode)


def test_simplifier_removes_jax_broadcast_chains(no_pass_flags):
    """softmax.hlo: every broadcast_in_dim is reshape -> identity broadcast -> reshape ->
    broadcast; the simplifier leaves one broadcast per use."""
    mod = parse_file(CORPUS / "softmax.hlo")
    before_reshape, before_broadcast = _count(mod, "reshape"), _count(mod, "broadcast")
    before = _count(mod)
    assert Pipeline("t", [AlgebraicSimplifier()], verify=True).run(mod)
    identity = [i for i in mod.instructions() if i.opcode == "broadcast"
                and i.operands[0].shape.dims == i.shape.dims]
    assert identity == []
    # 6 chains: each loses its identity broadcast; the reshape pairs go except around log.
    assert _count(mod, "broadcast") == before_broadcast - 6 - 3  # and 3 broadcast(-inf)
    assert _count(mod, "reshape") < before_reshape - 8
    assert _count(mod) <= before - 20
    assert _count(mod, "maximum") == 3  # the reducers' only; max(x, -inf) folded
