"""Build, run and size the ahead-of-time examples: the 3-deep 60-wide stacked LSTM
(lstm.py, weights as constants) and TF 1.x's MNIST softmax model (mnist.py, a compat.v1
graph with a tf2xla config), each compiled for x86-64 and AArch64 and driven by a small
C++ program (lstm_main.cc, mnist_main.cc), natively or under qemu-aarch64.

  .venv/bin/python examples/aot/build.py                       both models, both machines
  .venv/bin/python examples/aot/build.py --models lstm --machines x86_64
  .venv/bin/python examples/aot/build.py --bench               also time the C++ calls

Each run checks the program's results: the LSTM's against the model in NumPy (float64),
MNIST's against the session's probabilities on the 1,000 test digits. Everything is
written under --out (default out/aot/<machine>/): the header, the object, the C++ program.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
from dataclasses import dataclass

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import lstm as lstm_model  # noqa: E402  (the examples' own modules, next to this file)
import mnist as mnist_model  # noqa: E402

import xlapy as xp  # noqa: E402
import xlapy.aot as aot  # noqa: E402
from xlapy.aot import toolchain  # noqa: E402
from xlapy.errors import AotError  # noqa: E402

TRIPLES = {"x86_64": "x86_64-pc-linux-gnu", "aarch64": "aarch64-unknown-linux-gnu"}


@dataclass
class Built:
    model: str
    machine: str
    compiled: aot.Compiled
    exe: str
    tc: toolchain.Toolchain
    workdir: pathlib.Path
    constants: int          # bytes of the program's constants (the weights)
    check: object = None    # callable(Built) -> str, runs the program and checks it


def _constants(compiled) -> int:
    return sum(i.shape.byte_size for c in compiled.program.module.computations
               for i in c.instructions if i.opcode == "constant")


def build_lstm(machine: str, workdir: pathlib.Path, target_cpu=None) -> Built:
    xs = lstm_model.example_input()
    c = aot.compile(xp.jit(lstm_model.lstm), xs, cpp_class="examples::Lstm",
                    entry_point="lstm", target_triple=TRIPLES[machine], target_cpu=target_cpu)
    return _build("lstm", machine, c, workdir, _check_lstm)


def _check_lstm(b: Built) -> str:
    xs = lstm_model.example_input()
    (b.workdir / "lstm_in.bin").write_bytes(xs.tobytes())
    out = b.workdir / "lstm_out.bin"
    done = b.tc.run([b.exe, b.workdir / "lstm_in.bin", out])
    if done.returncode != 0:
        raise AotError(f"lstm_main failed: {done.stderr.strip()}")
    got = np.frombuffer(out.read_bytes(), np.float32).reshape(lstm_model.STEPS,
                                                              lstm_model.WIDTH)
    err = float(np.max(np.abs(got - lstm_model.reference(xs))))
    if not err < 1e-5:
        raise AotError(f"lstm on {b.machine}: max error {err:.3g} against NumPy")
    return f"{done.stdout.strip()}; max error against NumPy (float64) {err:.2g}"


_MNIST: list = []


def _trained():
    if not _MNIST:
        _MNIST.append(mnist_model.train())
    return _MNIST[0]


def build_mnist(machine: str, workdir: pathlib.Path, target_cpu=None) -> Built:
    graph, sess, _ = _trained()
    c = aot.compile(graph, config=mnist_model.CONFIG, session=sess,
                    cpp_class="examples::Mnist", entry_point="mnist",
                    target_triple=TRIPLES[machine], target_cpu=target_cpu)
    return _build("mnist", machine, c, workdir, _check_mnist)


def _check_mnist(b: Built) -> str:
    graph, sess, data = _trained()
    images = data.test.images.astype(np.float32)
    labels = np.argmax(data.test.labels, 1).astype(np.int32)
    (b.workdir / "mnist_images.bin").write_bytes(images.tobytes())
    (b.workdir / "mnist_labels.bin").write_bytes(labels.tobytes())
    out = b.workdir / "mnist_out.bin"
    done = b.tc.run([b.exe, b.workdir / "mnist_images.bin", b.workdir / "mnist_labels.bin",
                     out])
    if done.returncode != 0:
        raise AotError(f"mnist_main failed: {done.stderr.strip()}")
    got = np.frombuffer(out.read_bytes(), np.float32).reshape(len(labels), 10)
    want = mnist_model.session_predictions(graph, sess, images)
    err = float(np.max(np.abs(got - want)))
    same = int(np.sum(np.argmax(got, 1) == np.argmax(want, 1)))
    if not (err < 1e-5 and same == len(labels)):
        raise AotError(f"mnist on {b.machine}: max error {err:.3g} against the session, "
                       f"{len(labels) - same} predictions differ")
    return (f"{done.stdout.strip()}; the session's probabilities within {err:.2g}, all "
            "predictions the same")


def _build(model: str, machine: str, c, workdir: pathlib.Path, check) -> Built:
    tc = toolchain.find(machine)
    workdir.mkdir(parents=True, exist_ok=True)
    c.write(header=workdir / f"{model}.h", object=workdir / f"{model}.o")
    exe = tc.build([HERE / f"{model}_main.cc"], [workdir / f"{model}.o"],
                   workdir / f"{model}_main", libraries=c.libraries,
                   flags=["-I", str(workdir)])
    return Built(model, machine, c, exe, tc, workdir, _constants(c), check)


BUILDERS = {"lstm": build_lstm, "mnist": build_mnist}


def size_report(b: Built) -> list[str]:
    s = b.compiled.sizes()
    total = s["text"] + s["rodata"] + s["data"]
    parts = b.compiled.code.part_sizes()
    exe = b.tc.stripped_size(b.exe)
    lines = [f"  object: text {s['text']:,} + rodata {s['rodata']:,} + data {s['data']:,} = "
             f"{total:,} bytes ({total / 1024:.0f} KB); bss {s['bss']:,}; temp at run time "
             f"{b.compiled.signature.temp_size:,}",
             f"    constants (weights) {b.constants:,} bytes of the rodata; code: " +
             ", ".join(f"{k} {v:,}" for k, v in sorted(parts.items(), key=lambda kv: -kv[1]))]
    if exe is not None:
        lines.append(f"  executable (stripped, with the C++ driver; libc and libstdc++ "
                     f"shared): {exe:,} bytes ({exe / 1024:.0f} KB)")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", nargs="+", default=list(BUILDERS), choices=list(BUILDERS))
    p.add_argument("--machines", nargs="+", default=list(TRIPLES), choices=list(TRIPLES))
    p.add_argument("--out", default="out/aot")
    p.add_argument("--bench", action="store_true", help="time the C++ calls too")
    args = p.parse_args(argv)
    failed = 0
    for machine in args.machines:
        try:
            toolchain.find(machine)
        except AotError as e:
            print(f"[{machine}] skipped: {e}")
            continue
        for model in args.models:
            t0 = time.perf_counter()
            b = BUILDERS[model](machine, pathlib.Path(args.out) / machine)
            print(f"[{model} / {machine}] compiled for {b.compiled.target.describe()} in "
                  f"{time.perf_counter() - t0:.1f} s: {b.workdir}/{model}.h, {model}.o, "
                  f"{model}_main")
            try:
                print("  " + b.check(b))
            except AotError as e:
                print(f"  FAILED: {e}")
                failed += 1
            print("\n".join(size_report(b)))
            if args.bench and not b.tc.runner:  # (under qemu a time means nothing)
                done = b.tc.run([b.exe, "--bench", "2000" if model == "lstm" else "100000"])
                print(f"  {done.stdout.strip()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
