"""Where the MLP training step's time goes (the row where xlapy trails JAX).

    .venv/bin/python benchmarks/mlp_breakdown.py

Prints (1) the per-instruction time of xlapy's compiled step (--xla_hlo_profile cycle
counters, per step), (2) NumPy's BLAS on each of the step's eight gemm shapes alone, (3) one
of the step's elementwise kernels, relu(h + b) on 256x1024, in a hot loop before any BLAS
call (its 2 MB of data stays in the core's cache), right after a 256x1024x1024 gemm each
time (the gemm's 6 MB evict it: the situation inside the step), and in a hot loop again
after the BLAS calls (slower than the first while OpenBLAS's threads keep spinning and take
the second core; with OPENBLAS_NUM_THREADS=1 the two are equal), (4) the step compiled with
and without column fusion in this process (profiled kernel times, then alternating step
times), and (5) the step itself, xlapy and JAX alternating. With XLAPY_GEMM=xlapy the step
uses xlapy's own gemm. Informative only: timings on a shared machine move by a few percent
between runs.
"""
import os
import sys
import time

os.environ.setdefault("XLAPY_FLAGS", "--xla_hlo_profile")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np

import xlapy as xp
import xlapy.numpy as xnp
from harness import best
from workloads import grad_steps, make_numpy_like, mlp_params, one_hot

# (name, lhs shape, rhs shape, lhs transposed, rhs transposed) of the step's gemms
GEMMS = [("fwd 1", (256, 784), (784, 1024), False, False),
         ("fwd 2", (256, 1024), (1024, 1024), False, False),
         ("fwd 3", (256, 1024), (1024, 10), False, False),
         ("dh2 = g3 w3^T", (256, 10), (1024, 10), False, True),
         ("dh1 = g2 w2^T", (256, 1024), (1024, 1024), False, True),
         ("dW1 = x^T g1", (256, 784), (256, 1024), True, False),
         ("dW2 = h1^T g2", (256, 1024), (256, 1024), True, False),
         ("dW3 = h2^T g3", (256, 1024), (256, 10), True, False)]


def time_relu(rng, after_gemm: bool) -> float:
    """One of the step's elementwise kernels (relu(h + b), multiply_fusion.5) alone."""
    h = rng.standard_normal((256, 1024)).astype(np.float32)
    bias = rng.standard_normal(1024).astype(np.float32)
    relu = xp.jit(lambda h, b: (lambda v: v * (v > 0))(h + b))
    if not after_gemm:
        return best(lambda: relu(h, bias), 200)
    a = rng.standard_normal((256, 1024)).astype(np.float32)
    w = rng.standard_normal((1024, 1024)).astype(np.float32)
    relu(h, bias)
    ts = []
    for _ in range(200):
        a @ w
        t = time.perf_counter()
        relu(h, bias)
        ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2]


def profile_split(compiled, args, rounds: int = 5, n: int = 20) -> tuple:
    """(gemm ms, other kernels ms) per step from the --xla_hlo_profile counters: each
    instruction's minimum over `rounds` rounds of n steps, summed."""
    exe = compiled.executable
    for _ in range(3):
        compiled(*args)
    per: dict = {}
    for _ in range(rounds):
        exe.profile(reset=True)
        for _ in range(n):
            compiled(*args)
        for r in exe.profile():
            key = (r["instruction"], r["opcode"])
            per[key] = min(per.get(key, 1e9), r["seconds"] / n)
    gemms = gemm_names(compiled)
    gemm = sum(t for (name, op), t in per.items() if name in gemms)
    return gemm * 1e3, (sum(per.values()) - gemm) * 1e3


def gemm_names(compiled) -> set:
    """Instructions of the optimized step that run a gemm: dots, the weight updates
    (custom-calls) and the dots with their fused epilogues (kind=kOutput fusions)."""
    return {i.name for i in compiled.executable.optimized_module.entry.instructions
            if i.opcode in ("dot", "custom-call")
            or (i.opcode == "fusion" and i.attrs.get("kind") == "kOutput")}


def pass_ab(step, args, name: str, rounds: int = 11) -> None:
    """The step compiled with and without pass `name`, in this process: profiled kernel
    times, then step times in alternating rounds (best of 10 each)."""
    variants = {}
    for label, flags in (("with", ""), ("without", f"--xla_disable_hlo_passes={name}")):
        os.environ["XLAPY_FLAGS"] = f"--xla_hlo_profile {flags}"
        gemm, other = profile_split(xp.jit(step).lower(*args).compile(), args)
        os.environ["XLAPY_FLAGS"] = flags
        variants[label] = xp.jit(step).lower(*args).compile()
        print(f"{label:8s} {name}: profiled gemms {gemm:.2f} ms, other kernels {other:.2f} ms")
    times = {label: [] for label in variants}
    for _ in range(rounds):
        for label, c in variants.items():
            times[label].append(best(lambda: c(*args), 10))  # noqa: B023 (timed at once)
    ratios = sorted(a / b for a, b in zip(times["with"], times["without"]))
    print(f"step with / without {name}: median ratio {ratios[rounds // 2]:.3f} over {rounds} "
          f"alternating rounds (medians {sorted(times['with'])[rounds // 2] * 1e3:.2f} and "
          f"{sorted(times['without'])[rounds // 2] * 1e3:.2f} ms)")
    os.environ["XLAPY_FLAGS"] = ""


def main() -> int:
    rng = np.random.default_rng(0)
    flags, os.environ["XLAPY_FLAGS"] = os.environ["XLAPY_FLAGS"], ""
    hot = time_relu(rng, False)
    os.environ["XLAPY_FLAGS"] = flags
    args = (*mlp_params(rng), rng.standard_normal((256, 784)).astype(np.float32),
            one_hot(rng, 256, 10))
    _, step = grad_steps(xp.grad, make_numpy_like(xnp)["xent"])
    compiled = xp.jit(step).lower(*args).compile()
    exe = compiled.executable
    for _ in range(3):
        compiled(*args)
    exe.profile(reset=True)
    n = 20
    for _ in range(n):
        compiled(*args)
    print("xlapy step, per instruction (profiled build, per step):")
    rows = exe.profile()
    for r in rows:
        print(f"  {r['instruction'][:32]:32s} {r['opcode']:12s} {r['seconds'] / n * 1e3:7.3f} ms")
    gemms = gemm_names(compiled)
    gemm = sum(r["seconds"] for r in rows if r["instruction"] in gemms) / n
    other = sum(r["seconds"] for r in rows) / n - gemm
    print(f"  gemms {gemm * 1e3:.2f} ms, other kernels {other * 1e3:.2f} ms")
    print("NumPy's BLAS on the same gemm shapes, alone:")
    total = 0.0
    for name, sa, sb, ta, tb in GEMMS:
        a = rng.standard_normal(sa).astype(np.float32)
        b = rng.standard_normal(sb).astype(np.float32)
        a, b = (a.T if ta else a), (b.T if tb else b)
        t = best(lambda: a @ b)  # noqa: B023 (timed at once)
        total += t
        flops = 2 * a.shape[0] * a.shape[1] * b.shape[1]
        print(f"  {name:16s} {t * 1e3:7.3f} ms  {flops / t / 1e9:6.1f} GFLOP/s")
    print(f"  total {total * 1e3:.2f} ms")
    os.environ["XLAPY_FLAGS"] = ""  # the rest is timed without the profiling counters
    print(f"relu(h + b) 256x1024: {hot * 1e6:.1f} us in a hot loop before any BLAS call "
          "(best), "
          f"{time_relu(rng, True) * 1e6:.1f} us right after a gemm (median), "
          f"{time_relu(rng, False) * 1e6:.1f} us in a hot loop after the BLAS calls (best)")
    pass_ab(step, args, "column-fusion")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return 0
    fx = xp.jit(grad_steps(xp.grad, make_numpy_like(xnp)["xent"])[1])
    fj = jax.jit(grad_steps(jax.grad, make_numpy_like(jnp)["xent"])[1])
    jargs = [jax.device_put(a) for a in args]
    rounds = {"xlapy": [], "jax": []}
    for _ in range(5):
        rounds["jax"].append(best(lambda: jax.block_until_ready(fj(*jargs)), 20))
        rounds["xlapy"].append(best(lambda: fx(*args), 20))
    for k, v in rounds.items():
        print(f"step {k:6s} " + " ".join(f"{t * 1e3:.2f}" for t in v)
              + " ms (best of 20, 5 rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
