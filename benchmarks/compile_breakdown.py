"""Where a first call's compile time goes (the rows where xlapy compiles slower than JAX).

    .venv/bin/python benchmarks/compile_breakdown.py [--lanes N]

For sum, sum(x + y*z) and a row softmax (the shapes of `make bench`), compiled without the
disk cache after a warm-up compile (so LLVM and the runtime's own objects are ready):
lower + compile in total, then the generated module's LLVM work on its own, measured on
the dumped IR (best of 3): parsing, -O3, code generation (with --only NAME also LLVM's five
most expensive passes), and three variants that bound what other strategies could save: -O2 instead of -O3,
re-optimizing the already optimized IR (roughly what emitting vector IR directly would
leave), and the math functions not inlined (one exp body instead of one per vector lane).
Python's share is the total minus LLVM's.

--floor reports LLVM's cost per function on this machine instead: modules of 1, 2, 4 and 8
copies of a trivial vectorizable loop (b[i] = a[i] + 1), -O3 and code generation, best of 3.

--lanes N sets the vector lanes of emitted reductions (elemental_reduce.LANES, 16 by
default) and also reports each workload's run time, to weigh compile time against speed.
"""
import argparse
import os
import pathlib
import re
import sys
import tempfile
import time

os.environ["XLAPY_DISABLE_CACHE"] = "1"

import llvmlite.binding as llvm  # noqa: E402
import numpy as np  # noqa: E402

import xlapy as xp  # noqa: E402
import xlapy.numpy as xnp  # noqa: E402
from xlapy.backends.cpu import jit  # noqa: E402
from xlapy.backends.llvm import elemental_reduce  # noqa: E402


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


def llvm_ms(text: str, level: int = 3, passes: bool = False):
    """(parse, optimize, codegen) ms, best of 3; with passes=True also the timing report."""
    best = None
    for _ in range(3):
        t0 = time.perf_counter()
        mod = jit.parse_ir(text)
        t1 = time.perf_counter()
        pto = llvm.create_pipeline_tuning_options(speed_level=level)
        pto.loop_vectorization = pto.slp_vectorization = pto.loop_unrolling = True
        pb = llvm.create_pass_builder(jit.target_machine(), pto)
        pb.getModulePassManager().run(mod, pb)
        t2 = time.perf_counter()
        jit.target_machine().emit_object(mod)
        t3 = time.perf_counter()
        ms = ((t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3)
        best = ms if best is None or sum(ms) < sum(best) else best
    if not passes:
        return best
    llvm.set_time_passes(True)
    mod = jit.parse_ir(text)
    jit.optimize(mod)
    jit.target_machine().emit_object(mod)
    report = llvm.report_and_reset_timings()
    llvm.set_time_passes(False)
    per_pass: dict = {}
    for sec, name in re.findall(r"^\s*(?:[\d.]+ \(\s*[\d.]+%\)\s+){3}([\d.]+) \(\s*[\d.]+%\)"
                                r"\s+(\S.*?)(?: #\d+)?$", report, re.M):
        if name != "Total":
            per_pass[name] = per_pass.get(name, 0.0) + float(sec) * 1e3
    return best, sorted(per_pass.items(), key=lambda kv: -kv[1])[:5]


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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lanes", type=int, default=elemental_reduce.LANES)
    ap.add_argument("--only", help="one workload (name prefix); LLVM's pass timers report only "
                    "once per process, so the most expensive passes are listed with --only")
    ap.add_argument("--floor", action="store_true", help="LLVM's cost per trivial function")
    args = ap.parse_args()
    if args.floor:
        jit._init()
        floor()
        return 0
    elemental_reduce.LANES = args.lanes
    rng = np.random.default_rng(0)
    xp.jit(lambda v: v + 1)(np.ones(1 << 21, np.float32))   # LLVM, the pool, the trampoline
    for name, (fn, inputs) in workloads(rng).items():
        if args.only and not name.startswith(args.only):
            continue
        t0 = time.perf_counter()
        compiled = xp.jit(fn).lower(*inputs).compile()
        total = (time.perf_counter() - t0) * 1e3
        # again with dumps, for the IR (a dumping compilation bypasses the caches; its time
        # would include writing the dumps and the assembly listing, so it is not the one timed)
        dump = pathlib.Path(tempfile.mkdtemp(prefix="xlapy-compile-"))
        os.environ["XLAPY_FLAGS"] = f"--xla_dump_to={dump}"
        xp.jit(fn).lower(*inputs).compile()
        os.environ["XLAPY_FLAGS"] = ""
        text = next(dump.glob("*.ir-no-opt.ll")).read_text()
        if args.only:
            (parse, opt, codegen), top = llvm_ms(text, passes=True)
        else:
            (parse, opt, codegen), top = llvm_ms(text), []
        print(f"{name} (reduction lanes {args.lanes}): lower + compile {total:.1f} ms = LLVM "
              f"{parse + opt + codegen:.1f} ms (parse {parse:.1f}, -O3 {opt:.1f}, codegen "
              f"{codegen:.1f}) + Python and the rest {total - parse - opt - codegen:.1f} ms")
        if top:
            print("  most expensive passes (ms): " + ", ".join(f"{n} {ms:.1f}" for n, ms in top))
        o2 = llvm_ms(text, level=2)
        reopt = llvm_ms(next(dump.glob("*.ir-with-opt.ll")).read_text())
        no_inline = llvm_ms(text.replace("alwaysinline", "noinline"))
        print(f"  -O2: {o2[1]:.1f} + {o2[2]:.1f} ms; already optimized IR again: "
              f"{reopt[1]:.1f} + {reopt[2]:.1f} ms; math not inlined: {no_inline[1]:.1f} + "
              f"{no_inline[2]:.1f} ms (optimize + codegen)")
        if args.lanes != 16 or "--lanes" in sys.argv:
            compiled(*inputs)
            times = []
            for _ in range(20):
                t0 = time.perf_counter()
                compiled(*inputs)
                times.append(time.perf_counter() - t0)
            print(f"  run {min(times) * 1e3:.2f} ms (best of 20)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
