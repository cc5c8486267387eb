"""The MLP training step with OpenBLAS against xlapy's own gemm, each against JAX.

    .venv/bin/python benchmarks/mlp_gemm_ab.py [--rounds 6] [--donated]

The two gemm choices cannot share a process (OpenBLAS's threads keep spinning after a call
and slow down the pool's next kernels), so each round starts one process per choice
(XLAPY_GEMM=blas, XLAPY_GEMM=xlapy, in alternating order); each process times the step of
`make bench` (784-1024-1024-10, batch 256) for xlapy and JAX alternately (best of 20, five
times) and reports the medians. Printed: per round and choice the xlapy / JAX ratio, then
the median ratio per choice over all rounds. The ratio to JAX measured in the same process
is what the issue's target is about; comparing the two choices through it cancels most of
the machine's drift between processes. --donated times the training loop of `make bench`'s
"weights donated" row instead: the new weights fed back, the old ones donated, for both.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def child() -> None:
    sys.path.insert(0, HERE)
    import numpy as np

    import jax
    import jax.numpy as jnp

    import xlapy as xp
    import xlapy.numpy as xnp
    from harness import best
    from workloads import grad_steps, make_numpy_like, mlp_params, one_hot
    rng = np.random.default_rng(0)
    args = (*mlp_params(rng), rng.standard_normal((256, 784)).astype(np.float32),
            one_hot(rng, 256, 10))
    _, step = grad_steps(xp.grad, make_numpy_like(xnp)["xent"])
    _, jstep = grad_steps(jax.grad, make_numpy_like(jnp)["xent"])
    if "--donated" in sys.argv:
        ours = xp.jit(step, donate_argnums=tuple(range(6)))
        theirs = jax.jit(jstep, donate_argnums=tuple(range(6)))
        xs, js = [a.copy() for a in args], [jnp.asarray(a) for a in args]

        def x_loop():
            xs[:6] = ours(*xs)

        def j_loop():
            js[:6] = theirs(*js)
            jax.block_until_ready(js[0])
        runs = {"xlapy": x_loop, "jax": j_loop}
    else:
        ours = xp.jit(step)
        theirs = jax.jit(jstep)
        jargs = [jnp.asarray(a) for a in args]
        runs = {"xlapy": lambda: ours(*args),
                "jax": lambda: jax.block_until_ready(theirs(*jargs))}
    times = {k: [] for k in runs}
    for _ in range(5):
        for k, fn in runs.items():
            times[k].append(best(fn, 20))
    print(json.dumps({k: sorted(v)[2] for k, v in times.items()}))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--donated", action="store_true", help="the donated-weights training loop")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child()
        return 0
    ratios = {"blas": [], "auto": []}
    for r in range(args.rounds):
        order = ["blas", "auto"] if r % 2 == 0 else ["auto", "blas"]
        line = []
        for choice in order:
            env = dict(os.environ, XLAPY_GEMM=choice)
            out = subprocess.run([sys.executable, __file__, "--child"]
                                 + (["--donated"] if args.donated else []), env=env, check=True,
                                 capture_output=True, text=True).stdout
            t = json.loads(out.strip().splitlines()[-1])
            ratios[choice].append(t["xlapy"] / t["jax"])
            line.append(f"{choice}: xlapy {t['xlapy'] * 1e3:.2f} ms, JAX {t['jax'] * 1e3:.2f} ms, "
                        f"ratio {t['xlapy'] / t['jax']:.3f}")
        print(f"round {r + 1}: " + "; ".join(line), flush=True)
    for choice, rs in ratios.items():
        rs = sorted(rs)
        print(f"XLAPY_GEMM={choice}: xlapy / JAX median {rs[len(rs) // 2]:.3f} "
              f"(range {rs[0]:.3f}-{rs[-1]:.3f}, {len(rs)} processes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
