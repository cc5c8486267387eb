"""`make bench`: xlapy against NumPy, JAX (and numexpr / torch.compile when installed).

    .venv/bin/python benchmarks/run.py [--quick] [--only NAME[,NAME]] [--out docs] [--busy]

For every workload it prints the best time per system (the systems taking turns in five
rounds: run_times) and the ratio to JAX and to NumPy measured in the same run (in wall
time, and in CPU time per call: every thread of the process, spinning ones included), the
first-call (compile) time of the jitted systems, and for memory-bound workloads the ratio
to the machine's measured memory-bandwidth bound. It also
measures the machine limits themselves: copy bandwidth (a 256 MB copy) and gemm GFLOP/s
(NumPy's BLAS, 2048^3). Results go to docs/benchmarks.md, docs/benchmarks.json and a bar
chart docs/benchmarks.svg. --busy runs every suite beside a CPU-bound neighbour process
(benchmarks/busy.py), as on a shared machine: threads that busy-wait or wait for a
descheduled worker show there.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import statistics
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from harness import first_call, fmt_time, measure  # noqa: E402
from workloads import (f32, grad_steps, make_numpy_like, mlp_params, np_layernorm_gelu,  # noqa: E402
                       np_mlp_step, np_mnist_step, np_softmax, one_hot)


def machine_limits(quick: bool) -> dict:
    """Copy bandwidth: a large array copied by every core at once (np.copyto releases the
    GIL; each thread copies its own slice), so the bound is the machine's, not one core's."""
    from concurrent.futures import ThreadPoolExecutor
    n = (64 if quick else 256) * 1024 * 1024 // 4
    a = np.ones(n, f32)
    b = np.empty_like(a)
    cores = os.cpu_count() or 1
    cuts = np.linspace(0, n, cores + 1).astype(int)
    pool = ThreadPoolExecutor(cores)

    def copy():
        list(pool.map(lambda k: np.copyto(b[cuts[k]:cuts[k + 1]], a[cuts[k]:cuts[k + 1]]),
                      range(cores)))

    t = measure(copy, min_time=0.3)
    pool.shutdown()
    bw = 2 * a.nbytes / t.best
    m = 1024 if quick else 2048
    x = np.random.default_rng(0).standard_normal((m, m)).astype(f32)
    tg = measure(lambda: x @ x, min_time=0.3)
    return {"copy_bandwidth_GBps": bw / 1e9, "gemm_GFLOPs": 2 * m ** 3 / tg.best / 1e9,
            "cpu": _cpu_name(), "cores": os.cpu_count()}


def _cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip() + f" ({platform.machine()})"
    except OSError:
        pass
    return platform.processor() or platform.machine()


def systems():
    import xlapy as xp
    import xlapy.numpy as xnp
    out = {"xlapy": (xp, xnp)}
    try:
        import jax
        import jax.numpy as jnp
        out["jax"] = (jax, jnp)
    except ImportError:
        pass
    return out


def build(quick: bool, with_torch: bool = True):
    """[(name, issue, inputs, min_bytes, {system: fn})]"""
    import xlapy as xp
    import xlapy.numpy as xnp
    rng = np.random.default_rng(0)
    big = (4 if quick else 16) * 1024 * 1024
    x, y, z = (rng.standard_normal(big).astype(f32) for _ in range(3))
    rows = 2048 if quick else 8192
    sm = rng.standard_normal((rows, 1024)).astype(f32)
    ln_n = 1024 if quick else 4096
    ln = (rng.standard_normal((ln_n, ln_n)).astype(f32), rng.standard_normal(ln_n).astype(f32),
          rng.standard_normal(ln_n).astype(f32))
    dense = (rng.standard_normal((1024, 784)).astype(f32),
             (rng.standard_normal((784, 512)) * 0.05).astype(f32),
             rng.standard_normal(512).astype(f32))
    mnist = ((rng.standard_normal((784, 10)) * 0.01).astype(f32), np.zeros(10, f32),
             rng.random((100, 784)).astype(f32), one_hot(rng, 100, 10))
    mlp = tuple(mlp_params(rng)) + (rng.random((256, 784)).astype(f32), one_hot(rng, 256, 10))
    tiny = (np.ones(4, f32),)

    X = make_numpy_like(xnp)
    xl_mnist, xl_mlp = grad_steps(xp.grad, X["xent"])
    W = []

    def add(name, issue, inputs, min_bytes, fns):
        W.append((name, issue, inputs, min_bytes, fns))

    fn_np = {
        "add 16M f32": lambda a, b: np.add(a, b),
        "exp 16M f32": np.exp,
        "tanh 16M f32": np.tanh,
        "sum 16M f32": np.sum,
        "sum(x + y*z) 16M": lambda a, b, c: np.sum(a + b * c),
    }
    add("add 16M f32", "3", (x, y), 3 * x.nbytes,
        {"numpy": fn_np["add 16M f32"], "xlapy": xp.jit(lambda a, b: a + b)})
    add("exp 16M f32", "3", (x,), 2 * x.nbytes, {"numpy": np.exp, "xlapy": xp.jit(xnp.exp)})
    add("tanh 16M f32", "3", (x,), 2 * x.nbytes, {"numpy": np.tanh, "xlapy": xp.jit(xnp.tanh)})
    add("sum 16M f32", "3", (x,), x.nbytes, {"numpy": np.sum, "xlapy": xp.jit(xnp.sum)})
    add("sum(x + y*z) 16M", "5", (x, y, z), 3 * x.nbytes,
        {"numpy": fn_np["sum(x + y*z) 16M"], "xlapy": xp.jit(lambda a, b, c: xnp.sum(a + b * c))})
    add(f"row softmax {rows}x1024", "3,5", (sm,), 2 * sm.nbytes,
        {"numpy": np_softmax, "xlapy": xp.jit(X["softmax"])})
    add("dense 1024x784x512+bias+relu", "3", dense, 0,
        {"numpy": lambda a, w, b: np.maximum(a @ w + b, 0), "xlapy": xp.jit(X["dense_relu"])})
    add("dense+bias+relu+softmax", "5", dense, 0,
        {"numpy": lambda a, w, b: np_softmax(np.maximum(a @ w + b, 0)),
         "xlapy": xp.jit(X["dense_relu_softmax"])})
    add(f"layernorm+gelu {ln_n}x{ln_n}", "4,5", ln, 2 * ln[0].nbytes,
        {"numpy": np_layernorm_gelu, "xlapy": xp.jit(X["layernorm_gelu"])})
    add("MNIST SGD step (100, 784->10)", "4,5", mnist, 0,
        {"numpy": np_mnist_step, "xlapy": xp.jit(xl_mnist)})
    add("MLP step 784-1024-1024-10 b256", "4,5", mlp, 0,
        {"numpy": np_mlp_step, "xlapy": xp.jit(xl_mlp)})
    add("call overhead f32[4] x+1", "3,4", tiny, 0,
        {"numpy": lambda a: a + f32(1), "xlapy": xp.jit(lambda a: a + 1)})

    try:
        import jax
        import jax.numpy as jnp
        J = make_numpy_like(jnp)
        j_mnist, j_mlp = grad_steps(jax.grad, J["xent"])
        jax_fns = {
            "add 16M f32": jax.jit(lambda a, b: a + b), "exp 16M f32": jax.jit(jnp.exp),
            "tanh 16M f32": jax.jit(jnp.tanh), "sum 16M f32": jax.jit(jnp.sum),
            "sum(x + y*z) 16M": jax.jit(lambda a, b, c: jnp.sum(a + b * c)),
            f"row softmax {rows}x1024": jax.jit(J["softmax"]),
            "dense 1024x784x512+bias+relu": jax.jit(J["dense_relu"]),
            "dense+bias+relu+softmax": jax.jit(J["dense_relu_softmax"]),
            f"layernorm+gelu {ln_n}x{ln_n}": jax.jit(J["layernorm_gelu"]),
            "MNIST SGD step (100, 784->10)": jax.jit(j_mnist),
            "MLP step 784-1024-1024-10 b256": jax.jit(j_mlp),
            "call overhead f32[4] x+1": jax.jit(lambda a: a + 1),
        }
        for name, _, inputs, _, fns in W:
            f = jax_fns[name]
            # JAX computes on its own buffers: the inputs are placed there once, as a JAX
            # user holds them (otherwise every call would also copy them from NumPy)
            on_device = [jax.device_put(a) for a in inputs]
            fns["jax"] = (lambda g, d: lambda *a: jax.block_until_ready(g(*d)))(f, on_device)
    except ImportError:
        pass
    # The same MLP step as a training loop writes it: the new weights are fed back and the
    # old ones donated (xlapy updates them in place; JAX reuses their device buffers).
    n_par = 6
    xs = [a.copy() for a in mlp]
    x_step = xp.jit(xl_mlp, donate_argnums=tuple(range(n_par)))

    def x_loop():
        xs[:n_par] = x_step(*xs)
    fns = {"numpy": lambda: np_mlp_step(*mlp), "xlapy": x_loop}
    try:
        import jax
        j_step = jax.jit(grad_steps(jax.grad, make_numpy_like(jax.numpy)["xent"])[1],
                         donate_argnums=tuple(range(n_par)))
        js = [jax.device_put(a) for a in mlp]

        def j_loop():
            js[:n_par] = j_step(*js)
            jax.block_until_ready(js[0])
        fns["jax"] = j_loop
    except ImportError:
        pass
    add("MLP step, weights donated", "4,5", (), 0, fns)
    try:
        import numexpr as ne
        for name, _, _inputs, _, fns in W:
            if name == "sum(x + y*z) 16M":
                fns["numexpr"] = lambda a, b, c: ne.evaluate("sum(a + b*c)")
            if name == "add 16M f32":
                fns["numexpr"] = lambda a, b: ne.evaluate("a + b")
    except ImportError:
        pass
    if with_torch:
        from torch_fns import torch_fns
        keys = {"add 16M f32": "add", "exp 16M f32": "exp", "tanh 16M f32": "tanh",
                "sum 16M f32": "sum", "sum(x + y*z) 16M": "sum3",
                f"row softmax {rows}x1024": "softmax", "dense 1024x784x512+bias+relu": "dense_relu",
                "dense+bias+relu+softmax": "dense_relu_softmax",
                f"layernorm+gelu {ln_n}x{ln_n}": "layernorm_gelu",
                "MNIST SGD step (100, 784->10)": "mnist", "MLP step 784-1024-1024-10 b256": "mlp",
                "call overhead f32[4] x+1": "tiny"}
        extra = torch_fns(keys)
        for name, _, _inputs, _, fns in W:
            fns.update(extra.get(name, {}))
    return W


def host_fed_mnist(steps: int) -> dict:
    """1000 MNIST SGD steps, batches fed from host arrays (per-call overhead dominates); the
    best of three such loops."""
    import xlapy as xp
    import xlapy.numpy as xnp
    rng = np.random.default_rng(1)
    data = rng.random((steps * 100 % 6000 + 6000, 784)).astype(f32)
    labels = one_hot(rng, data.shape[0], 10)
    out = {}
    X = make_numpy_like(xnp)
    step_x, _ = grad_steps(xp.grad, X["xent"])
    fns = {"numpy": np_mnist_step, "xlapy": xp.jit(step_x)}
    try:
        import jax
        import jax.numpy as jnp
        step_j, _ = grad_steps(jax.grad, make_numpy_like(jnp)["xent"])
        jf = jax.jit(step_j)
        fns["jax"] = jf
    except ImportError:
        pass
    for name, f in fns.items():
        best = None
        for _ in range(3):  # best of three loops, as the other rows take the best call
            w, b = np.zeros((784, 10), f32), np.zeros(10, f32)
            f(w, b, data[:100], labels[:100])
            t0 = time.perf_counter()
            for i in range(steps):
                lo = (i * 100) % (data.shape[0] - 100)
                w, b = f(w, b, data[lo:lo + 100], labels[lo:lo + 100])
            if name == "jax":
                w = np.asarray(w)
            t = time.perf_counter() - t0
            best = t if best is None else min(best, t)
        out[name] = best
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes, shorter timing")
    ap.add_argument("--only", help="comma-separated substrings of workload names")
    ap.add_argument("--no-torch", action="store_true",
                    help="skip torch.compile even when torch is installed (it compiles slowly)")
    ap.add_argument("--out", default=str(HERE.parent / "docs"), help="where to write results")
    ap.add_argument("--no-models", action="store_true",
                    help="skip the model-class suite (benchmarks/models.py)")
    ap.add_argument("--no-big-constants", action="store_true",
                    help="skip the big-constants rows (benchmarks/big_constants.py)")
    ap.add_argument("--busy", action="store_true",
                    help="run everything beside a CPU-bound neighbour process (busy.py)")
    args = ap.parse_args(argv)
    if args.busy:
        from busy import neighbour
        with neighbour():
            return _main(args)
    return _main(args)


def _main(args) -> int:
    # a fresh compilation cache: first-call times must measure real compilation
    import tempfile
    os.environ["XLAPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="xlapy-bench-cache-")
    load_at_start = os.getloadavg()[0]
    limits = machine_limits(args.quick)
    bw = limits["copy_bandwidth_GBps"] * 1e9
    print(f"machine: {limits['cpu']}, {limits['cores']} cores; copy bandwidth "
          f"{limits['copy_bandwidth_GBps']:.1f} GB/s; gemm {limits['gemm_GFLOPs']:.0f} GFLOP/s")
    limits.update(start_up())
    # first calls are repeated after clearing each system's in-memory caches (torch.compile's
    # take seconds: once); xlapy's disk cache is off from here, so repeats compile again
    os.environ["XLAPY_DISABLE_CACHE"] = "1"
    import xlapy as xp
    resets = {"xlapy": xp.clear_caches}
    try:
        import jax
        resets["jax"] = jax.clear_caches
    except ImportError:
        pass
    print("start-up before the rows: " + ", ".join(f"{k} {v:.0f} ms" for k, v in
                                                    limits.items() if k.endswith("_ms")))
    results = []
    for name, issue, inputs, min_bytes, fns in build(args.quick, not args.no_torch):
        if args.only and not any(s in name for s in args.only.split(",")):
            continue
        row = {"name": name, "issue": issue, "times": {}, "first_call": {}}
        for system, fn in fns.items():
            if system in ("xlapy", "jax", "torch"):
                # the lambda uses this iteration's values: it is timed at once
                calls = first_call(lambda: fn(*inputs), reset=resets.get(system))  # noqa: B023
                row["first_call"][system] = statistics.median(calls)
                row.setdefault("first_call_samples", {})[system] = calls
        row["cpu"] = {}
        row["times"] = run_times(fns, inputs, 0.2 if args.quick else 0.5, cpu=row["cpu"])
        if min_bytes:
            row["bandwidth_bound"] = min_bytes / bw
        results.append(row)
        print(_line(row))
    if not args.only or "host" in args.only:
        steps = 200 if args.quick else 1000
        hf = host_fed_mnist(steps)
        row = {"name": f"{steps} MNIST steps fed from host", "issue": "5", "times": hf,
               "first_call": {}}
        results.append(row)
        print(_line(row))
    if not args.no_models:
        from models import build_rows, run_rows
        only = args.only.split(",") if args.only else None
        rows = build_rows(args.quick, not args.no_torch, only)
        results += run_rows(rows, 0.5 if args.quick else 1.5, run_times, resets)
    if not args.no_big_constants and (not args.only or "constant" in args.only):
        import big_constants
        for row in big_constants.rows((200_000 if args.quick else 1_000_000,)):
            row["suite"] = "big_constants"
            results.append(row)
            print(big_constants.line(row))
    limits["busy"] = bool(args.busy)
    limits["load_average"] = (load_at_start, os.getloadavg()[0])
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from report import write_reports
    write_reports(out, limits, results, quick=args.quick)
    print(f"\nwrote {out / 'benchmarks.md'}, {out / 'benchmarks.json'}, {out / 'benchmarks.svg'}")
    return 0


ROUNDS = 5           # run_times: rounds per row, the systems taking turns
SETTLE_S = 0.05      # idle before each system's turn


def run_times(fns: dict, inputs, budget: float, cpu: dict | None = None) -> dict:
    """{system: best seconds per call}: ROUNDS rounds in which every system runs for
    budget / ROUNDS seconds in turn (in reverse order every other round), after SETTLE_S of
    idle so that the previous system's worker threads (OpenBLAS's and XLA's spin for a while
    after a call) have stopped taking cores. Taking turns, a spell of machine load that
    lasts seconds slows every system's share of the row rather than one system's. `cpu`,
    when given, receives {system: CPU seconds per call}, the least of the rounds' (the
    process's CPU time over a round, all threads, per call, the warm-up call included)."""
    best: dict = {}
    names = list(fns)
    for r in range(ROUNDS):
        for system in (names if r % 2 == 0 else names[::-1]):
            time.sleep(SETTLE_S)
            fn = fns[system]
            c0 = time.process_time()
            t = measure(lambda: fn(*inputs), min_time=budget / ROUNDS)  # noqa: B023 (timed at once)
            per_call = (time.process_time() - c0) / (t.runs + 1)
            best[system] = min(best.get(system, t.best), t.best)
            if cpu is not None:
                cpu[system] = min(cpu.get(system, per_call), per_call)
    if cpu is not None:
        cpu.update({s: cpu.pop(s) for s in names})   # in the systems' order
    return {s: best[s] for s in names}


def start_up() -> dict:
    """Each system's one-time start-up, timed and done before the rows, so that a row's first
    call is that workload's own trace + compile: a 256x256 f32 matmul jitted by each. For
    xlapy that builds its runtime objects, the thread pool and the gemm kernel, into the
    fresh cache (on a user's machine: once, then loaded from the disk cache in a few ms),
    and loads LLVM; for JAX it creates the CPU client."""
    a = np.ones((256, 256), f32)
    out = {}
    t = time.perf_counter()
    import xlapy as xp
    xp.jit(lambda x, y: x @ y)(a, a)
    out["xlapy_start_up_ms"] = (time.perf_counter() - t) * 1e3
    try:
        t = time.perf_counter()
        import jax
        jax.block_until_ready(jax.jit(lambda x, y: x @ y)(a, a))
        out["jax_start_up_ms"] = (time.perf_counter() - t) * 1e3
    except ImportError:
        pass
    return out


def _line(row) -> str:
    t = row["times"]
    parts = [f"{row['name']:34s}"]
    for s in t:
        if s in t:
            parts.append(f"{s} {fmt_time(t[s])}")
    if "jax" in t and "xlapy" in t:
        parts.append(f"xlapy/jax {t['xlapy'] / t['jax']:5.2f}")
    c = row.get("cpu", {})
    if "jax" in c and "xlapy" in c:
        parts.append(f"CPU xlapy/jax {c['xlapy'] / c['jax']:5.2f}")
    if "numpy" in t and "xlapy" in t:
        parts.append(f"xlapy/numpy {t['xlapy'] / t['numpy']:5.2f}")
    if row.get("bandwidth_bound"):
        parts.append(f"xlapy/bw-bound {t['xlapy'] / row['bandwidth_bound']:4.2f}")
    return "  ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
