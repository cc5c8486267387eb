"""xlapy's native cpu fft (backends/cpu/emitters/fft.py) against JAX (XLA:CPU, ducc) and
numpy.fft (pocketfft): time and accuracy, under jit.

    .venv/bin/python benchmarks/fft.py [--quick] [--budget SECONDS]

Rows (complex64 unless said): fft of 64 rows of a power-of-two length (radix-2), of a
non-power-of-two length (Bluestein in xlapy), rfft/irfft, a 2-D fft2, and a complex128 fft.
Each row reports the best time per call of each system (benchmarks/run.py's run_times:
rounds taken in turn) and xlapy's and JAX's error relative to the largest output, against
numpy.fft computed in float64/complex128. Timing claims need a quiet machine.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def rows(quick: bool):
    n2, nb, b = (256, 250, 8) if quick else (4096, 1000, 64)
    rng = np.random.default_rng(0)

    def cplx(shape, dt=np.complex64):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)

    real = rng.standard_normal((b, n2)).astype(np.float32)
    return [
        (f"fft c64 {b}x{n2}", "fft", {}, cplx((b, n2))),
        (f"fft c64 {b}x{nb} (Bluestein)", "fft", {}, cplx((b, nb))),
        (f"rfft f32 {b}x{n2}", "rfft", {}, real),
        (f"irfft c64 {b}x{n2 // 2 + 1}", "irfft", {"n": n2}, cplx((b, n2 // 2 + 1))),
        (f"fft2 c64 {b}x{64 if not quick else 16}x{64 if not quick else 16}", "fft2", {},
         cplx((b, 64 if not quick else 16, 64 if not quick else 16))),
        (f"fft c128 {b}x{n2}", "fft", {}, cplx((b, n2), np.complex128)),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    ap.add_argument("--budget", type=float, default=2.0, help="seconds per system and row")
    args = ap.parse_args(argv)
    import jax
    import jax.numpy as jnp

    import xlapy as xp
    import xlapy.numpy as xnp
    from run import run_times

    print(f"{'row':34s} {'xlapy ms':>9s} {'jax ms':>9s} {'numpy ms':>9s} "
          f"{'xlapy err':>10s} {'jax err':>10s}")
    for name, fn, kw, x in rows(args.quick):
        wide = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
        want = getattr(np.fft, fn)(wide, **kw)
        enable = x.dtype in (np.complex128, np.float64)
        with xp.enable_x64(enable), jax.enable_x64(enable):
            fx = xp.jit(lambda a: getattr(xnp.fft, fn)(a, **kw))  # noqa: B023 (used at once)
            fj = jax.jit(lambda a: getattr(jnp.fft, fn)(a, **kw))  # noqa: B023
            errs = [np.abs(np.asarray(f(x)) - want).max() / np.abs(want).max() for f in (fx, fj)]
            times = run_times({"xlapy": fx,
                               "jax": lambda a: fj(a).block_until_ready(),  # noqa: B023
                               "numpy": lambda a: getattr(np.fft, fn)(a, **kw)},  # noqa: B023
                              [x], args.budget)
        print(f"{name:34s} {times['xlapy'] * 1e3:9.3f} {times['jax'] * 1e3:9.3f} "
              f"{times['numpy'] * 1e3:9.3f} {errs[0]:10.2e} {errs[1]:10.2e}")


if __name__ == "__main__":
    main()
