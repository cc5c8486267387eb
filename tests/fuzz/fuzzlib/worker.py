"""One campaign worker: checks the bundles of a range of seeds and logs each as a JSON line.

  python -m fuzzlib.worker --generator hlo --seeds 1000:1100 --bundle 6 --log LOG.jsonl
                           --cases DIR

Before a bundle it logs {"start": seed}, after it {"seed": ..., "programs": ..., ...}; the
campaign reads the log to find where a worker that died (a crash) or stopped making
progress (a hang) was. A bundle with findings is written to DIR as seed_<gen>_<N>.hlo/.npz
for triage.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

# 200,000 programs must not fill the disk: with --runtime-cache (the campaign's) only the
# runtime's own fixed objects (gemm kernels, the thread pool, ...) are cached on disk, which
# every worker process would otherwise compile again (about 15 s of LLVM each on this
# machine); programs are never stored or looked up
_RUNTIME_CACHE = next((a.split("=", 1)[1] for a in sys.argv if a.startswith(
    "--runtime-cache=")), None)
if _RUNTIME_CACHE:
    os.environ.pop("XLAPY_DISABLE_CACHE", None)
    os.environ["XLAPY_CACHE_DIR"] = _RUNTIME_CACHE
else:
    os.environ.setdefault("XLAPY_DISABLE_CACHE", "1")

from fuzzlib import harness, regressions  # noqa: E402
from fuzzlib.generators import generate  # noqa: E402


def _programs_never_cached() -> None:
    from xlapy.backends.cpu import disk_cache
    disk_cache.load = lambda key, module: None
    disk_cache.store = lambda key, spec: None


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--generator", default="hlo")
    p.add_argument("--seeds", required=True, help="first:last (last excluded)")
    p.add_argument("--bundle", type=int, default=6)
    p.add_argument("--log", required=True)
    p.add_argument("--cases", required=True)
    p.add_argument("--backends", default=",".join(harness.BACKENDS))
    p.add_argument("--reference", default="xla", choices=("xla", "interpreter-ieee"),
                   help="interpreter-ieee for the gpu backends (harness.py)")
    p.add_argument("--runtime-cache", help="a directory for the runtime's own objects")
    p.add_argument("--until", type=float, help="stop starting bundles after this time.time()")
    args = p.parse_args(argv)
    if args.runtime_cache:
        _programs_never_cached()
    first, last = (int(x) for x in args.seeds.split(":"))
    backends = tuple(args.backends.split(","))
    with open(args.log, "a", buffering=1) as log:
        for seed in range(first, last):
            if args.until is not None and time.time() > args.until:
                break
            log.write(json.dumps({"start": seed, "generator": args.generator}) + "\n")
            log.flush()
            t0 = time.perf_counter()
            try:
                prog = generate(args.generator, seed, args.bundle)
            except Exception as e:
                log.write(json.dumps({"seed": seed, "generator": args.generator,
                                      "generator_error": f"{type(e).__name__}: {e}"}) + "\n")
                continue
            result = harness.check(prog.text, prog.inputs, backends,
                                   reference=args.reference)
            harness.clear_caches()
            record = {"seed": seed, "generator": args.generator, "programs": prog.programs,
                      "ops": sorted(prog.ops), "dtypes": sorted(prog.dtypes),
                      "skipped": result.skipped, "explained": result.explained,
                      "findings": [f.__dict__ for f in result.findings],
                      "seconds": round(time.perf_counter() - t0, 3)}
            if result.findings:
                regressions.write(f"seed_{args.generator}_{seed}", prog.text, prog.inputs, [],
                                  "\n".join(str(f) for f in result.findings), "none",
                                  directory=__import__("pathlib").Path(args.cases))
            log.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
