"""Driver of the malformed-input fuzzer (malformed.py): seeds -> mutants -> findings.

  .venv/bin/python tests/fuzz/malformed.py [--seconds 60] [--start-seed 0] [--out DIR]

Mutant k of a run is made from seed start + k alone (replay: --start-seed K --count 1).
A mutant that takes longer than --hang-seconds is a hang (SIGALRM).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import signal
import tempfile
import time

import numpy as np

from fuzzlib import malformed

HERE = pathlib.Path(__file__).resolve().parents[1]
CORPUS = HERE.parents[0] / "hlo"


class _Hang(Exception):
    pass


def sources() -> list[str]:
    """Texts to mutate: the HLO corpus's and the regression cases' small modules, and a few
    generated ones."""
    from fuzzlib.generators import generate
    texts = []
    for p in sorted(CORPUS.glob("*.hlo")) + sorted((HERE / "regressions").glob("*.hlo")):
        t = p.read_text()
        if len(t) < 6000:
            texts.append(t)
    texts += [generate("hlo", s, 2).text for s in range(4)]
    return texts


def stablehlo_sources() -> list[str]:
    return [t for p in sorted(CORPUS.glob("*.mlir")) if len(t := p.read_text()) < 6000]


def mutant(seed: int, texts: list[str], mlir: list[str] = ()):
    """("text", text), ("stablehlo", text) or ("npz", module text, file bytes) for a seed
    (StableHLO only when `mlir` texts are given)."""
    rng = np.random.default_rng(seed)
    text = texts[int(rng.integers(len(texts)))]
    if rng.random() < 0.8:
        if mlir and rng.random() < 0.35:
            return ("stablehlo", malformed.mutate(mlir[int(rng.integers(len(mlir)))], rng))
        return ("text", malformed.mutate(text, rng))
    from xlapy.hlo.parser import parse
    module = parse(text)
    leaves = [leaf for p in module.entry.parameters for leaf in p.shape.leaves()]
    specs = [(tuple(s.dims), s.dtype) for s in leaves]
    return ("npz", text, malformed.hostile_npz(specs, rng))


def check(seed: int, texts: list[str], tmp: pathlib.Path, hang_seconds: float = 30,
          mlir: list[str] = ()):
    """(kind, finding or None) for one seed."""
    m = mutant(seed, texts, mlir)

    def alarm(signum, frame):
        raise _Hang()
    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, hang_seconds)
    try:
        if m[0] == "text":
            return "text", malformed.check_text(m[1])
        if m[0] == "stablehlo":
            return "stablehlo", malformed.check_text(m[1], "stablehlo")
        return "npz", malformed.check_npz(m[1], m[2], tmp / f"in_{seed}.npz")
    except _Hang:
        return m[0], f"hang: no answer in {hang_seconds} s"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="malformed-input fuzzer")
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--count", type=int, default=0, help="stop after this many mutants")
    p.add_argument("--start-seed", type=int, default=0)
    p.add_argument("--hang-seconds", type=float, default=30)
    p.add_argument("--out", default="out/fuzz")
    args = p.parse_args(argv)
    texts, mlir = sources(), stablehlo_sources()
    counts = {"text": 0, "stablehlo": 0, "npz": 0}
    findings = []
    deadline = time.monotonic() + args.seconds
    seed = args.start_seed
    with tempfile.TemporaryDirectory() as tmp:
        while time.monotonic() < deadline and not (args.count and
                                                   sum(counts.values()) >= args.count):
            kind, finding = check(seed, texts, pathlib.Path(tmp), args.hang_seconds, mlir)
            counts[kind] += 1
            if finding:
                findings.append({"seed": seed, "kind": kind, "finding": finding})
            seed += 1
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"mutants": counts, "seeds": [args.start_seed, seed], "findings": findings}
    (out / "malformed.json").write_text(json.dumps(report, indent=1))
    print(f"malformed inputs: {counts['text']} HLO texts, {counts['stablehlo']} StableHLO "
          f"texts, {counts['npz']} npz files "
          f"(seeds {args.start_seed}..{seed - 1}); findings: {len(findings)}")
    for f in findings[:30]:
        print(" ", json.dumps(f)[:300])
    return 1 if findings else 0
