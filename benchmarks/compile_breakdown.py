"""Where a first call's compile time goes (the rows where xlapy compiles slower than JAX).

    .venv/bin/python benchmarks/compile_breakdown.py [--only NAME] [--lanes N] [--unroll]
                                                     [--pipelines] [--marks] [--launch]
                                                     [--first-calls | --floor]

For sum, sum(x + y*z) and a row softmax (the shapes of `make bench`), after a warm-up
compile (LLVM, the runtime's own objects and the compiler's threads ready) and with every
cache cleared: lower + compile in total (median of 5), split into HLO passes, LLVM IR
emission (with the module split), LLVM (its parts compiled concurrently: wall time) and the
rest (tracing, loading); then, from a dumping compilation, LLVM's work on each part on its
own with the pipeline the compiler chose for it (parse + optimize + code generation, best
of 3), the whole unsplit module the same way with -O3,
the whole module with loop unrolling and interleaving on (the -O3 settings before they were
turned off), and the parts' already optimized IR optimized again (roughly what emitting
vector IR directly would leave). With --only NAME also LLVM's five most expensive passes.

--first-calls instead compares cold first calls (trace + compile + run, every cache
cleared, median of 5) of xlapy and JAX on the same three workloads, each system in a process
of its own, started right away and after 0.15 s of idle (as `make bench` does): a core that
has been idle makes xlapy's two compiling threads start with cold caches; and, after idle,
trace + lower + compile alone (`jit(f).lower(*args).compile()`, no run).

--floor reports LLVM's cost per function on this machine instead: modules of 1, 2, 4 and 8
copies of a trivial vectorizable loop (b[i] = a[i] + 1), -O3 and code generation, best of 3.

--lanes N sets the vector lanes of emitted reductions (elemental_reduce.LANES, 16 by
default) and also reports each workload's run time, to weigh compile time against speed.
--unroll also compiles and runs each workload with loop unrolling and the vectorizer's
interleaving on (codegen.LOOP_UNROLLING), against the default without.
--pipelines also compiles and runs each workload with -O3 for every part
(codegen.DIRECT_PIPELINE off), against the default (the "direct" pipeline for vector code).
--launch also compiles each workload with and without launch.py's shared entry (a program
that is one kernel on the thread pool gets no entry function of its own), alternating, each
after 0.15 s idle: lower + compile and its LLVM part, medians of 20, and run time (best of
20).
--marks also compiles each workload without call_graph's marks (kernels called once not
inlined, an entry that only calls not optnone): lower + compile and its LLVM part.
"""
import argparse
import contextlib
import os
import pathlib
import re
import sys
import tempfile
import time

os.environ["XLAPY_DISABLE_CACHE"] = "1"

import numpy as np

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.backends.cpu import codegen, target
from xlapy.backends.cpu.split import parts_of
from xlapy.backends.llvm import elemental_reduce


def softmax(x):
    m = xnp.max(x, axis=1, keepdims=True)
    e = xnp.exp(x - m)
    return e / xnp.sum(e, axis=1, keepdims=True)


def workloads(rng):
    n = 1 << 24
    v = [rng.standard_normal(n).astype(np.float32) for _ in range(3)]
    return {"sum 16M": (lambda x: xnp.sum(x), (v[0],)),
            "sum(x + y*z) 16M": (lambda x, y, z: xnp.sum(x + y * z), tuple(v)),
            "row softmax 8192x1024": (softmax,
                                      (rng.standard_normal((8192, 1024)).astype(np.float32),))}


@contextlib.contextmanager
def switched(name: str, on: bool):
    """codegen.<name> (LOOP_UNROLLING: loop unrolling and the vectorizer's interleaving;
    DIRECT_PIPELINE: the short pipeline for vector code) set to `on`."""
    saved = getattr(codegen, name)
    setattr(codegen, name, on)
    try:
        yield
    finally:
        setattr(codegen, name, saved)


def unrolling(on: bool):
    return switched("LOOP_UNROLLING", on)


def llvm_ms(text: str, passes: bool = False, unroll: bool = False, pipeline: str = "O3"):
    """(parse, optimize, codegen) ms, best of 3, with one of xlapy's pipelines (`unroll`:
    with loop unrolling and interleaving, as -O3 has them by default); with passes=True also
    the five most expensive passes."""
    best = None
    tm = target.target_machine()
    with unrolling(unroll):
        for _ in range(3):
            t0 = time.perf_counter()
            mod = codegen.parse_ir(text)
            t1 = time.perf_counter()
            codegen.optimize(mod, pipeline)
            t2 = time.perf_counter()
            tm.emit_object(mod)
            t3 = time.perf_counter()
            ms = ((t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3)
            best = ms if best is None or sum(ms) < sum(best) else best
        if not passes:
            return best
        mod = codegen.parse_ir(text)
        pb = codegen.pass_builder(None, pipeline)
        pb.start_pass_timing()
        mpm = codegen.direct_passes() if pipeline == "direct" else pb.getModulePassManager()
        mpm.run(mod, pb)
        report = pb.finish_pass_timing()
    per_pass: dict = {}
    for sec, name in re.findall(r"^\s*(?:[\d.]+ \(\s*[\d.]+%\)\s+){3}([\d.]+) \(\s*[\d.]+%\)"
                                r"\s+(\S.*?)(?: #\d+)?$", report, re.M):
        if name != "Total":
            per_pass[name] = per_pass.get(name, 0.0) + float(sec) * 1e3
    return best, sorted(per_pass.items(), key=lambda kv: -kv[1])[:5]


def compile_and_run(fn, inputs) -> tuple[float, float]:
    """(median lower + compile ms of 3, best run ms of 20) with every cache cleared."""
    times = []
    for _ in range(3):
        xp.clear_caches()
        t0 = time.perf_counter()
        compiled = xp.jit(fn).lower(*inputs).compile()
        times.append((time.perf_counter() - t0) * 1e3)
    compiled(*inputs)
    runs = []
    for _ in range(20):
        t0 = time.perf_counter()
        compiled(*inputs)
        runs.append((time.perf_counter() - t0) * 1e3)
    return sorted(times)[1], min(runs)


def compile_times(fn, inputs, n: int = 7) -> tuple[float, float]:
    """(lower + compile, its LLVM part) in ms, medians of n, every cache cleared."""
    import statistics
    total, llvm_part = [], []
    for _ in range(n):
        xp.clear_caches()
        t0 = time.perf_counter()
        compiled = xp.jit(fn).lower(*inputs).compile()
        total.append((time.perf_counter() - t0) * 1e3)
        llvm_part.append(compiled.executable.spec.compile_seconds["llvm_optimize_and_codegen"]
                         * 1e3)
    return statistics.median(total), statistics.median(llvm_part)


@contextlib.contextmanager
def unmarked():
    """call_graph's inlining and optnone marks off (the compiler looks them up per compile)."""
    from xlapy.backends.llvm import call_graph, loop_analysis
    saved = call_graph.inline_single_calls, loop_analysis.optnone_if_only_calls
    call_graph.inline_single_calls = lambda llmod, keep_callers=(): []
    loop_analysis.optnone_if_only_calls = lambda fn: False
    try:
        yield
    finally:
        call_graph.inline_single_calls, loop_analysis.optnone_if_only_calls = saved


def switch_ab(fn, inputs, owner, name: str, rounds: int = 20) -> dict:
    """{owner.<name> on: (median, mean lower + compile ms, best run ms, launched, median
    ms of the LLVM part)}, compiles alternating between the switch on and off, each after
    0.15 s of idle."""
    import statistics
    saved = getattr(owner, name)
    times: dict = {True: [], False: []}
    llvm_part: dict = {True: [], False: []}
    runs: dict = {}
    try:
        for k in range(rounds):
            for on in ((True, False) if k % 2 else (False, True)):
                setattr(owner, name, on)
                xp.clear_caches()
                time.sleep(0.15)
                t0 = time.perf_counter()
                compiled = xp.jit(fn).lower(*inputs).compile()
                times[on].append((time.perf_counter() - t0) * 1e3)
                llvm_part[on].append(compiled.executable.spec.compile_seconds[
                    "llvm_optimize_and_codegen"] * 1e3)
                runs[on] = compiled
    finally:
        setattr(owner, name, saved)
    out = {}
    for on, compiled in runs.items():
        compiled(*inputs)
        best = min(_timed(compiled, inputs) for _ in range(20))
        out[on] = (statistics.median(times[on]), statistics.mean(times[on]), best,
                   compiled.executable.spec.launch is not None,
                   statistics.median(llvm_part[on]))
    return out


def _timed(compiled, inputs) -> float:
    t0 = time.perf_counter()
    compiled(*inputs)
    return (time.perf_counter() - t0) * 1e3


def floor() -> None:
    loop = """define void @f{k}(ptr noalias %a, ptr noalias %b, i64 %n) {{
entry:
  br label %h
h:
  %i = phi i64 [0, %entry], [%i1, %body]
  %c = icmp slt i64 %i, %n
  br i1 %c, label %body, label %done
body:
  %p = getelementptr float, ptr %a, i64 %i
  %x = load float, ptr %p
  %y = fadd float %x, 1.0
  %q = getelementptr float, ptr %b, i64 %i
  store float %y, ptr %q
  %i1 = add nsw i64 %i, 1
  br label %h
done:
  ret void
}}
"""
    for n in (1, 2, 4, 8):
        parse, opt, codegen = llvm_ms("".join(loop.format(k=k) for k in range(n)))
        print(f"{n} trivial loop function(s): -O3 {opt:.1f} ms, codegen {codegen:.1f} ms "
              f"({(opt + codegen) / n:.1f} ms per function)")


def first_calls_of(system: str, rng, idles=(0.0, 0.15)) -> dict:
    """{workload: [median ms per idle]} of 5 cold first calls (trace + compile + run, every
    cache cleared, after a garbage collection and `idle` seconds of sleep), in a process that
    has only this system loaded (another system's worker threads could still be spinning)."""
    import gc
    import statistics
    a = np.ones((256, 256), np.float32)
    if system == "jax":
        import jax
        import jax.numpy as jnp

        def jsoftmax(x):
            m = jnp.max(x, axis=1, keepdims=True)
            e = jnp.exp(x - m)
            return e / jnp.sum(e, axis=1, keepdims=True)
        fns = [lambda x: jnp.sum(x), lambda x, y, z: jnp.sum(x + y * z), jsoftmax]
        jax.block_until_ready(jax.jit(lambda x, y: x @ y)(a, a))
        clear, block, jit_, put = jax.clear_caches, jax.block_until_ready, jax.jit, jax.device_put
    else:
        fns = [fn for fn, _ in workloads(np.random.default_rng(0)).values()]
        xp.jit(lambda x, y: x @ y)(a, a)
        clear, block, jit_, put = xp.clear_caches, (lambda r: r), xp.jit, (lambda x: x)
    out = {}
    for (name, (_, inputs)), fn in zip(workloads(rng).items(), fns):
        args = [put(x) for x in inputs]
        f = jit_(fn)
        out[name] = []
        for idle in idles:
            times = []
            for _ in range(5):
                clear()
                gc.collect()
                time.sleep(idle)
                t0 = time.perf_counter()
                block(f(*args))
                times.append((time.perf_counter() - t0) * 1e3)
            out[name].append(statistics.median(times))
        compiles = []   # trace + lower + compile alone, after the idle spell
        for _ in range(5):
            clear()
            gc.collect()
            time.sleep(idles[-1])
            t0 = time.perf_counter()
            jit_(fn).lower(*args).compile()
            compiles.append((time.perf_counter() - t0) * 1e3)
        out[name].append(statistics.median(compiles))
    return out


def first_calls() -> None:
    import json
    import subprocess
    res = {}
    for system in ("xlapy", "jax"):
        proc = subprocess.run([sys.executable, __file__, "--first-calls-of", system],
                              capture_output=True, text=True, check=True)
        res[system] = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, (x0, x1, xc) in res["xlapy"].items():
        j0, j1, jc = res["jax"][name]
        print(f"{name}: cold first call, median of 5 (ms): right away xlapy {x0:.1f}, JAX "
              f"{j0:.1f}; after 0.15 s idle xlapy {x1:.1f}, JAX {j1:.1f}; trace + lower + "
              f"compile alone after idle xlapy {xc:.1f}, JAX {jc:.1f}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lanes", type=int, default=elemental_reduce.LANES)
    ap.add_argument("--only", help="one workload (name prefix); LLVM's pass timers report only "
                    "once per process, so the most expensive passes are listed with --only")
    ap.add_argument("--floor", action="store_true", help="LLVM's cost per trivial function")
    ap.add_argument("--unroll", action="store_true",
                    help="also compile and run with loop unrolling and interleaving on")
    ap.add_argument("--pipelines", action="store_true",
                    help="also compile and run with -O3 for every part")
    ap.add_argument("--launch", action="store_true",
                    help="also compile with and without launch.py's shared entry")
    ap.add_argument("--marks", action="store_true",
                    help="also compile without call_graph's inlining and optnone marks")
    ap.add_argument("--first-calls", action="store_true",
                    help="cold first calls of xlapy and JAX, right away and after 0.15 s idle")
    ap.add_argument("--first-calls-of", choices=("xlapy", "jax"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.first_calls_of:
        import json
        print(json.dumps(first_calls_of(args.first_calls_of, np.random.default_rng(0))))
        return 0
    if args.floor:
        target.init_llvm()
        floor()
        return 0
    if args.first_calls:
        first_calls()
        return 0
    elemental_reduce.LANES = args.lanes
    rng = np.random.default_rng(0)
    xp.jit(lambda v: v + 1)(np.ones(1 << 21, np.float32))   # LLVM, the pool, the trampoline
    for name, (fn, inputs) in workloads(rng).items():
        if args.only and not name.startswith(args.only):
            continue
        runs = []
        for _ in range(5):
            xp.clear_caches()
            t0 = time.perf_counter()
            compiled = xp.jit(fn).lower(*inputs).compile()
            runs.append(((time.perf_counter() - t0) * 1e3, compiled.executable.spec))
        total, spec = sorted(runs, key=lambda r: r[0])[2]
        cs = {k: v * 1e3 for k, v in spec.compile_seconds.items()}
        n = len(spec.objects)
        print(f"{name} (reduction lanes {args.lanes}): lower + compile {total:.1f} ms = HLO "
              f"passes {cs['hlo_passes']:.1f} + IR emission {cs['llvm_ir_emission']:.1f} + LLVM "
              f"{cs['llvm_optimize_and_codegen']:.1f} ({n} part{'s' if n > 1 else ''}"
              f"{' concurrently' if n > 1 else ''}) + the rest "
              f"{total - sum(cs.values()):.1f}")
        # again with dumps, for the IR (a dumping compilation bypasses the caches; its time
        # would include writing the dumps and the assembly listing, so it is not the one timed)
        dump = pathlib.Path(tempfile.mkdtemp(prefix="xlapy-compile-"))
        os.environ["XLAPY_FLAGS"] = f"--xla_dump_to={dump}"
        xp.jit(fn).lower(*inputs).compile()
        os.environ["XLAPY_FLAGS"] = ""
        whole = next(dump.glob("*.ir-no-opt.ll")).read_text()
        split = list(dump.glob("*.ir-parts.ll"))
        parts = parts_of(split[0].read_text()) if split else [whole]
        optimized = parts_of(next(dump.glob("*.ir-with-opt.ll")).read_text())
        used = [re.match(r"; optimized with the (\S+) pipeline", p).group(1) for p in optimized]
        fmt = lambda ms: f"{sum(ms):.1f} ({ms[0]:.1f} + {ms[1]:.1f} + {ms[2]:.1f})"
        print("  LLVM per part, alone (parse + optimize + codegen): "
              + ", ".join(f"{fmt(llvm_ms(p, pipeline=u))} [{u}]" for p, u in zip(parts, used)))
        if args.only:
            for u in sorted(set(used)):
                _, top = llvm_ms(whole, passes=True, pipeline=u)
                print(f"  most expensive passes of the {u} pipeline, whole module (ms): "
                      + ", ".join(f"{p} {ms:.1f}" for p, ms in top))
        print(f"  whole module, -O3: {fmt(llvm_ms(whole))}; with unrolling and interleaving "
              f"{fmt(llvm_ms(whole, unroll=True))}; the optimized parts optimized again: "
              + ", ".join(fmt(llvm_ms(p, pipeline=u)) for p, u in zip(optimized, used)))
        if "--lanes" in sys.argv:
            print("  run %.2f ms (best of 20)" % compile_and_run(fn, inputs)[1])
        if args.unroll:
            lean = compile_and_run(fn, inputs)
            with unrolling(True):
                unrolled = compile_and_run(fn, inputs)
            print("  without / with unrolling and interleaving: lower + compile %.1f / %.1f ms, "
                  "run %.2f / %.2f ms (best of 20)" % (lean[0], unrolled[0], lean[1], unrolled[1]))
        if args.marks:
            with_marks = compile_times(fn, inputs)
            with unmarked():
                without = compile_times(fn, inputs)
            print("  with / without call_graph's marks: lower + compile %.1f / %.1f ms, LLVM "
                  "%.1f / %.1f ms (medians of 7)"
                  % (with_marks[0], without[0], with_marks[1], without[1]))
        if args.launch:
            from xlapy.backends.cpu import compiler
            ab = switch_ab(fn, inputs, compiler, "LAUNCH_SINGLE_KERNELS")
            print("  with / without the shared entry (%s): lower + compile %.1f / %.1f ms, "
                  "its LLVM part %.1f / %.1f ms (medians of 20 after idle), run %.2f / %.2f ms "
                  "(best of 20)"
                  % ("launched" if ab[True][3] else "not launched: an entry of its own",
                     ab[True][0], ab[False][0], ab[True][4], ab[False][4], ab[True][2],
                     ab[False][2]))
        if args.pipelines:
            chosen = compile_and_run(fn, inputs)
            with switched("DIRECT_PIPELINE", False):
                o3 = compile_and_run(fn, inputs)
            print("  pipelines as chosen / -O3 for every part: lower + compile %.1f / %.1f ms, "
                  "run %.2f / %.2f ms (best of 20)" % (chosen[0], o3[0], chosen[1], o3[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
