"""`make demo`: what xlapy does today, end to end, on a real module dumped by JAX.

1. parse   examples/hlo/layernorm_gelu.hlo (JAX's HLO text for layernorm + gelu)
2. verify  shapes and structure
3. print   it back in XLA's text format (and check the round trip)
4. run     it on the reference interpreter and on the native cpu backend, compare them
"""

from __future__ import annotations

import pathlib
import time

import numpy as np

from xlapy.backends.base import get_platform, list_platforms
from xlapy.hlo import module_diff, parse_file
from xlapy.hlo.verifier import verify
from xlapy.tools.compare import compare_outputs, random_inputs

HERE = pathlib.Path(__file__).parent


def main() -> None:
    path = HERE / "hlo" / "layernorm_gelu.hlo"
    module = parse_file(path)
    verify(module)
    n_instr = sum(len(c.instructions) for c in module.computations)
    print(f"parsed and verified {path.relative_to(HERE.parent)}: module {module.name}, "
          f"{len(module.computations)} computations, {n_instr} instructions")
    text = module.to_string()
    again = parse_file(path)  # fresh copy, then compare with the printed form parsed back
    from xlapy.hlo import parse
    assert module_diff(again, parse(text)) is None
    print("printed in XLA's text format; parse(print(module)) == module")
    print("\n".join("    " + line for line in text.splitlines()[:12]))
    print("    ...")

    inputs = random_inputs([p.shape for p in module.entry.parameters], seed=0)
    results = {}
    for backend in ("interpreter", "cpu"):
        if backend not in list_platforms():
            continue
        platform = get_platform(backend)
        t0 = time.perf_counter()
        exe = platform.compiler.compile(module)
        t1 = time.perf_counter()
        out = exe.run(*inputs)
        t2 = time.perf_counter()
        results[backend] = out if isinstance(out, tuple) else (out,)
        print(f"ran on {backend:11s}: compile {1e3 * (t1 - t0):7.1f} ms, "
              f"run {1e3 * (t2 - t1):7.2f} ms,"
              f" output {results[backend][0].dtype}{list(results[backend][0].shape)}")
    if len(results) == 2:
        reports = compare_outputs(list(results["interpreter"]), list(results["cpu"]))
        for r in reports:
            print("cpu vs interpreter: " + r.line())
    print("\nTry: python -m xlapy run-hlo examples/hlo/layernorm_gelu.hlo --random-inputs "
          "--backend cpu --compare interpreter")


if __name__ == "__main__":
    np.set_printoptions(precision=4, suppress=True)
    main()
