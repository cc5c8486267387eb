"""Ahead-of-time compilation: the size and speed targets of issue 18.

    .venv/bin/python benchmarks/aot.py            sizes for both machines, speed on this host
    .venv/bin/python benchmarks/aot.py --quick    a few calls only (checks that it runs)

Size: the LSTM example (examples/aot/lstm.py: 3-deep, 60-wide, weights as constants)
compiled for x86-64 and AArch64 with generic CPUs (tfcompile's default): the object's
text + rodata + data against the target of 450 KB (the seed's compiled LSTM: 600 KB), what
each part costs (the weights, the program's code, xlapy's gemm, the thread pool and entry),
and the stripped executable with its C++ driver (libc and libstdc++ shared). The MNIST
softmax model's object too.

Speed, on this host: each program compiled ahead of time for this CPU (--target_cpu=native,
as the JIT compiles for the host) and called in a loop from C through its C API, against
the same program called through xp.jit from Python, in alternating rounds (the best round
of each). The tiny program (f32[4] x + 1) measures the call overhead: target at most 1 us
from C. Programs: tiny, the LSTM (16 steps), the MNIST model on one image and on 100.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "aot"))

import lstm as lstm_model  # noqa: E402  (examples/aot)
import mnist as mnist_model  # noqa: E402

import xlapy as xp  # noqa: E402
import xlapy.aot as aot  # noqa: E402
from xlapy.aot import toolchain  # noqa: E402
from xlapy.errors import AotError  # noqa: E402

TRIPLES = {"x86_64": "x86_64-pc-linux-gnu", "aarch64": "aarch64-unknown-linux-gnu"}
SIZE_TARGET = 450 * 1024

BENCH_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include "prog.h"

static void* aligned(size_t n) {
  char* p = malloc(n + 64);
  return (void*)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

int main(int argc, char** argv) {
  long calls = atol(argv[2]);
  FILE* in = fopen(argv[1], "rb");
  const void* args[PROG_NUM_ARGS > 0 ? PROG_NUM_ARGS : 1];
  void* results[PROG_NUM_RESULTS];
  static const size_t arg_sizes[] = {ARG_SIZES};
  static const size_t result_sizes[] = {RESULT_SIZES};
  void* temp = PROG_TEMP_SIZE ? aligned(PROG_TEMP_SIZE) : NULL;
  struct timespec t0, t1;
  long i;
  for (i = 0; i < PROG_NUM_ARGS; ++i) {
    void* p = aligned(arg_sizes[i]);
    if (fread(p, 1, arg_sizes[i], in) != arg_sizes[i]) return 3;
    args[i] = p;
  }
  for (i = 0; i < PROG_NUM_RESULTS; ++i) results[i] = aligned(result_sizes[i]);
  prog(args, results, temp);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (i = 0; i < calls; ++i) prog(args, results, temp);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%.6f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / calls);
  return 0;
}
"""


def _constants(compiled) -> int:
    return sum(i.shape.byte_size for c in compiled.program.module.computations
               for i in c.instructions if i.opcode == "constant")


def sizes(workdir: pathlib.Path) -> None:
    print("Size (generic CPUs; text + rodata + data of the object, target <= 450 KB):")
    graph, sess, _ = mnist_model.train(steps=50)
    for machine, triple in TRIPLES.items():
        lstm = aot.compile(xp.jit(lstm_model.lstm), lstm_model.example_input(),
                           cpp_class="examples::Lstm", entry_point="lstm",
                           target_triple=triple)
        mnist = aot.compile(graph, config=mnist_model.CONFIG, session=sess,
                            cpp_class="examples::Mnist", entry_point="mnist",
                            target_triple=triple)
        for name, c in (("LSTM 3x60", lstm), ("MNIST softmax", mnist)):
            s = c.sizes()
            total = s["text"] + s["rodata"] + s["data"]
            weights = _constants(c)
            parts = c.code.part_sizes()
            verdict = ("within" if total <= SIZE_TARGET else "OVER") \
                if name.startswith("LSTM") else ""
            print(f"  {name:14s} {machine:8s} {total / 1024:6.1f} KB {verdict:6s} = text "
                  f"{s['text']:,} + rodata {s['rodata']:,} + data {s['data']:,}")
            print(f"      weights {weights:,}, other constants {s['rodata'] - weights:,}; code: "
                  + ", ".join(f"{k} {v:,}" for k, v in sorted(parts.items(),
                                                              key=lambda kv: -kv[1]))
                  + f"; temp at run time {c.signature.temp_size:,}")
        try:
            tc = toolchain.find(machine)
        except AotError as e:
            print(f"      (no executable for {machine}: {e})")
            continue
        d = workdir / machine
        d.mkdir(parents=True, exist_ok=True)
        lstm.write(header=d / "lstm.h", object=d / "lstm.o")
        exe = tc.build([ROOT / "examples" / "aot" / "lstm_main.cc"], [d / "lstm.o"],
                       d / "lstm_main", libraries=lstm.libraries, flags=["-I", str(d)])
        stripped = tc.stripped_size(exe)
        if stripped:
            print(f"      LSTM executable, stripped (C++ driver included; libc, libstdc++ "
                  f"shared): {stripped / 1024:.1f} KB")


def _programs():
    x4 = np.arange(4, dtype=np.float32)
    graph, sess, data = mnist_model.train(steps=50)
    w, b = sess.run([graph.get_tensor_by_name("W:0"), graph.get_tensor_by_name("b:0")])
    images = data.test.images[:100].astype(np.float32)

    def mnist(x):   # the trained weights captured: constants, as in the object
        return xp.nn.softmax(x @ w + b, axis=-1)

    return [("tiny f32[4] x + 1", xp.jit(lambda x: x + 1), [x4]),
            ("LSTM 3x60, 16 steps", xp.jit(lstm_model.lstm), [lstm_model.example_input()]),
            ("MNIST softmax, batch 1", xp.jit(mnist), [images[:1]]),
            ("MNIST softmax, batch 100", xp.jit(mnist), [images])]


def speed(workdir: pathlib.Path, quick: bool) -> None:
    tc = toolchain.find(toolchain.HOST)
    rounds = 1 if quick else 5
    print(f"\nSpeed on this host ({toolchain.HOST}; AOT with --target_cpu=native, best of "
          f"{rounds} alternating rounds):")
    print(f"  {'program':28s} {'C call':>12s} {'xp.jit call':>12s}  C / jit")
    for name, fn, args in _programs():
        c = aot.compile(fn, *args, cpp_class="Prog", entry_point="prog", target_cpu="native")
        d = workdir / name.split()[0].lower()
        d.mkdir(parents=True, exist_ok=True)
        c.write(header=d / "prog.h", object=d / "prog.o")
        src = BENCH_C.replace("ARG_SIZES", ", ".join(str(b.size) for b in c.signature.args)
                              or "0")
        src = src.replace("RESULT_SIZES", ", ".join(str(b.size) for b in c.signature.results))
        (d / "bench.c").write_text(src)
        exe = tc.build([d / "bench.c"], [d / "prog.o"], d / "bench", libraries=c.libraries,
                       flags=["-I", str(d), "-D_POSIX_C_SOURCE=199309L"])
        (d / "in.bin").write_bytes(b"".join(np.ascontiguousarray(a).tobytes() for a in args))
        fn(*args)
        t_one = _jit_time(fn, args, 20)
        calls = max(20, int((0.02 if quick else 0.2) / max(t_one, 1e-7)))
        best_c = best_j = float("inf")
        for _ in range(rounds):
            done = tc.run([exe, d / "in.bin", calls])
            best_c = min(best_c, float(done.stdout) * 1e-9)
            best_j = min(best_j, _jit_time(fn, args, calls))
        print(f"  {name:28s} {_fmt(best_c):>12s} {_fmt(best_j):>12s}  {best_c / best_j:.3f}")


def _jit_time(fn, args, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter() - t0) / calls


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e9:.0f} ns" if seconds < 1e-6 else f"{seconds * 1e6:.2f} us"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="a few calls: checks that it runs")
    p.add_argument("--skip-sizes", action="store_true")
    p.add_argument("--skip-speed", action="store_true")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        if not args.skip_sizes:
            sizes(pathlib.Path(d))
        if not args.skip_speed:
            speed(pathlib.Path(d), args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
