"""Where the TF softmax tutorial's first compile goes, cold (an empty program cache) or warm,
by stage, in process CPU ms: each run is a fresh `python examples/mnist_softmax.py --xla`
(a few steps) whose compile entry points are wrapped with time.process_time marks.

    .venv/bin/python benchmarks/compat_cold_compile.py [--runs 5] [--warm] [--quick]

Stages (nested: "compile" holds the others): the cluster's trace and lowering to HLO; the
cache key (fingerprint: the module's text, xlapy's source fingerprint, the target); the
code generator's first import (the passes and emitters: compiler._code_generator); the HLO
pass pipeline; LLVM IR emission (dedicated emitters imported on first use land here); the
module's split into parts; LLVM (optimization and code generation, all parts: their threads'
CPU counts); the executable (loading the object); the disk cache's store. "gc genN" is the
time Python's cyclic garbage collector spent inside the compile, with the number of
collections. Prints min and median per stage; CPU times on a loaded machine are inflated,
compare runs made at the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]

CHILD = r'''
import contextlib, gc, io, json, runpy, sys, tempfile, time
sys.argv = ["mnist_softmax.py", "--xla", "--steps", "4", "--out_dir", tempfile.mkdtemp()]
pt = time.process_time
acc, state = {}, {"depth": 0}

def add(label, seconds):
    acc[label] = acc.get(label, 0.0) + seconds * 1e3

def timed(fn, label):
    def wrapper(*a, **k):
        t = pt()
        try:
            return fn(*a, **k)
        finally:
            add(label, pt() - t)
    return wrapper

def patch(owner, name, label):
    setattr(owner, name, timed(getattr(owner, name), label))

def on_gc(phase, info):
    if not state["depth"]:
        return
    if phase == "start":
        state["gc"] = pt()
    else:
        add(f"gc gen{info['generation']}", pt() - state["gc"])
        key = f"gc gen{info['generation']} count"
        acc[key] = acc.get(key, 0) + 1e-3  # (printed as a count)

gc.callbacks.append(on_gc)
import xlapy.compat.v1.jit.launch as L
import xlapy.backends.cpu.compiler as C
import xlapy.frontend.graph as G
import xlapy.frontend.lowering as FL
real_compile = L.CompiledCluster._compile

def compile_(*a, **k):
    state["depth"] += 1
    try:
        return real_compile(*a, **k)
    finally:
        state["depth"] -= 1

L.CompiledCluster._compile = timed(compile_, "compile")
real_generator = C._code_generator

def code_generator():
    t = pt()
    pipeline, emitter = real_generator()
    add("import passes+emitters", pt() - t)
    if not getattr(emitter.emit, "_timed", False):
        emitter.emit = timed(emitter.emit, "LLVM IR emission")
        emitter.emit._timed = True
    return timed(pipeline, "HLO passes"), emitter

C._code_generator = code_generator
patch(G, "make_graph", "trace")
patch(FL, "lower_to_module", "lower to HLO")
patch(C.CpuCompiler, "fingerprint", "cache key")
patch(C, "split_module", "split")
patch(C.codegen, "compile_objects", "LLVM")
patch(C, "CpuExecutable", "executable")
patch(C.disk_cache, "store", "disk store")
patch(C.disk_cache, "load", "disk load")
with contextlib.redirect_stdout(io.StringIO()):
    try:
        runpy.run_path("examples/mnist_softmax.py", run_name="__main__")
    except SystemExit:
        pass
print("JSON" + json.dumps(acc))
'''


def one_run(programs: str, runtime: str) -> dict:
    env = dict(os.environ, XLAPY_CACHE_DIR=programs, XLAPY_RUNTIME_CACHE_DIR=runtime,
               OPENBLAS_NUM_THREADS="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # (as a user's installation: .pyc files)
    env.pop("XLAPY_DISABLE_CACHE", None)
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=ROOT, capture_output=True,
                         text=True, check=True)
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("JSON"))
    return json.loads(line[4:])


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--warm", action="store_true", help="the program cache holds the model")
    p.add_argument("--quick", action="store_true", help="two runs")
    args = p.parse_args(argv)
    runs = 2 if args.quick else args.runs
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        runtime = f"{tmp}/runtime"
        one_run(f"{tmp}/fill", runtime)  # the runtime's own objects, as after any earlier run
        if args.warm:
            one_run(f"{tmp}/programs", runtime)
        for k in range(runs):
            programs = f"{tmp}/programs" if args.warm else f"{tmp}/cold{k}"
            results.append(one_run(programs, runtime))
    keys = sorted({k for r in results for k in r},
                  key=lambda k: -statistics.median(r.get(k, 0.0) for r in results))
    print(f"the tutorial's first compile, {'warm' if args.warm else 'cold'}, {runs} fresh "
          f"processes (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); "
          "CPU ms, min / median:")
    for k in keys:
        v = [r.get(k, 0.0) for r in results]
        if k.endswith("count"):
            print(f"  {k:24s} {1e3 * statistics.median(v):5.0f}")
        else:
            print(f"  {k:24s} {min(v):7.1f} {statistics.median(v):7.1f}")
    return {"runs": results}


if __name__ == "__main__":
    main()
