"""From a finding to a regression case: shrink the module, take XLA's outputs of the small
module, write tests/fuzz/regressions/NAME.{hlo,npz}.

  .venv/bin/python tests/fuzz/triage.py --seed 28 [--generator hlo|jax] [--name NAME]
"""

from __future__ import annotations

import re

import numpy as np

from fuzzlib import harness, regressions, xla
from fuzzlib.shrink import Shrinker, interpreter_oracle


def _exception_type(detail: str) -> str:
    return detail.split(":", 1)[0]


def same_failure(finding):
    """The shrinker's test: the module still fails on finding's backend the same way."""
    def still_fails(text, inputs) -> bool:
        result = harness.check(text, inputs, backends=(finding.backend,))
        harness.clear_caches()
        for f in result.findings:
            if f.kind != finding.kind or f.backend != finding.backend:
                continue
            if f.kind == "mismatch" or _exception_type(f.detail) == \
                    _exception_type(finding.detail):
                return True
        return False
    return still_fails


def xla_oracle(text, inputs):
    return xla.run_text(text, inputs, fast=False)


def shrink(text, inputs, finding, budget: int = 300):
    oracle = xla_oracle if finding.backend == "interpreter" else interpreter_oracle
    shrinker = Shrinker(same_failure(finding), oracle, budget)
    return shrinker.shrink(text, inputs, finding.outputs)


def reference_outputs(text, inputs):
    """(outputs, where from) for a regression case."""
    from xlapy.hlo.parser import parse
    module = parse(text)
    if xla.unreliable(module) or xla.crashes_default_xla(module):
        return interpreter_oracle(text, inputs), "interpreter"
    return xla.run_text(text, inputs, fast=False), "xla"


def write_case(name, text, inputs, comment):
    outputs, reference = reference_outputs(text, inputs)
    name = re.sub(r"[^A-Za-z0-9_]+", "_", name)
    return regressions.write(name, text, inputs, outputs, comment, reference)


def main(argv=None) -> int:
    import argparse
    import os
    os.environ.setdefault("XLAPY_DISABLE_CACHE", "1")
    from fuzzlib.generators import generate
    p = argparse.ArgumentParser(description="shrink a campaign's finding")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--generator", default="hlo")
    p.add_argument("--bundle", type=int, default=6)
    p.add_argument("--write", metavar="NAME", help="write the shrunk case as a regression")
    p.add_argument("--comment", default="", help="what failed and what was fixed")
    p.add_argument("--budget", type=int, default=300)
    p.add_argument("--backend", help="only the finding on this backend")
    p.add_argument("--save", metavar="DIR", help="also save the shrunk module and inputs as "
                   "DIR/shrunk_GENERATOR_SEED.{hlo,npz}, in the regression format")
    args = p.parse_args(argv)
    prog = generate(args.generator, args.seed, args.bundle)
    result = harness.check(prog.text, prog.inputs)
    findings = [f for f in result.findings if not args.backend or f.backend == args.backend]
    if not findings:
        print(f"seed {args.seed}: no finding ({result.explained or 'all match'})")
        return 0
    finding = findings[0]
    print(f"finding: {finding}")
    text, inputs = shrink(prog.text, prog.inputs, finding, args.budget)
    print(text)
    for i, x in enumerate(inputs):
        a = np.asarray(x)
        print(f"input {i}: {a.dtype}{list(a.shape)} {a.ravel()[:16]}")
    if args.save:
        import pathlib
        path = regressions.write(f"shrunk_{args.generator}_{args.seed}", text, inputs, [],
                                 str(finding), "none", directory=pathlib.Path(args.save))
        print("saved", path, "(read it with fuzzlib.regressions.load)")
    again = harness.check(text, inputs)
    print("shrunk case:", [str(f) for f in again.findings] or "passes?!")
    if args.write:
        comment = args.comment or f"found by the fuzzer: {args.generator} seed {args.seed}"
        print("wrote", write_case(args.write, text, inputs, comment + "\n" + str(finding)))
    return 0
