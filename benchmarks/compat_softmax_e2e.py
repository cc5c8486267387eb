"""The seeds' TF 1.x softmax tutorial end to end, as `time python mnist_softmax_xla.py` sees
it: a fresh process per run, the executor against session-level XLA, with a cold disk
cache (an empty XLAPY_CACHE_DIR: every program compiled; the runtime's own objects come from
their cache with the installation, XLAPY_RUNTIME_CACHE_DIR, warm here as after any earlier
run) and a warm one (benchmarks/compat_softmax_time.py also times first runs after
installing, with both empty).

    .venv/bin/python benchmarks/compat_softmax_e2e.py [--runs 4] [--steps 1000]
                                                     [--lazy both|on|off]

Each run reports process CPU time (all threads; the machine is shared, so wall time is
reported too but means little under load) for the phases: importing xlapy.compat.v1,
reading the data, the 1000 training steps (first step apart: with XLA and lazy compilation
off it compiles; with it on, the second step does) and the test-set evaluation. The runs
alternate modes so that a spell of load hits all alike; the table gives the median.
OpenBLAS runs on one thread (the executor's matmuls) so that its spinning threads do not
count. The children may write .pyc files (PYTHONDONTWRITEBYTECODE is dropped): a user's
installation has them, and without them compiling xlapy's sources to bytecode cost about
0.34 s CPU of the 0.66 s that importing the compiler took.
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

HERE = pathlib.Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time
def now():
    return time.process_time(), time.perf_counter()
marks = {"start": now()}
import numpy as np
import xlapy.compat.v1 as tf
from xlapy.compat.v1.examples.tutorials.mnist import input_data
marks["import"] = now()
xla, steps = sys.argv[1] == "xla", int(sys.argv[2])
mnist = input_data.read_data_sets("/nonexistent", one_hot=True, seed=1)
marks["data"] = now()
x = tf.placeholder(tf.float32, [None, 784])
W = tf.Variable(tf.zeros([784, 10]))
b = tf.Variable(tf.zeros([10]))
y = tf.matmul(x, W) + b
y_ = tf.placeholder(tf.float32, [None, 10])
cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y))
train_step = tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy)
config = tf.ConfigProto()
if xla:
    config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
sess = tf.Session(config=config)
tf.global_variables_initializer().run(session=sess)
marks["graph"] = now()
for i in range(steps):
    batch_xs, batch_ys = mnist.train.next_batch(100)
    sess.run(train_step, feed_dict={x: batch_xs, y_: batch_ys})
    if i == 1:
        marks["two steps"] = now()
marks["loop"] = now()
correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
acc = sess.run(accuracy, feed_dict={x: mnist.test.images, y_: mnist.test.labels})
marks["eval"] = now()
print(json.dumps({"marks": marks, "accuracy": float(acc)}))
"""

PHASES = ["import", "data", "graph", "two steps", "loop", "eval"]


def one_run(mode: str, cold: bool, warm_dir: str, steps: int, lazy: bool) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1",
               XLAPY_RUNTIME_CACHE_DIR=os.path.join(warm_dir, "runtime"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)   # a user's Python caches the bytecode
    flag = f"--tf_xla_enable_lazy_compilation={'true' if lazy else 'false'}"
    env["TF_XLA_FLAGS"] = " ".join(filter(None, [env.get("TF_XLA_FLAGS", ""), flag]))
    with tempfile.TemporaryDirectory() as cold_dir:
        env["XLAPY_CACHE_DIR"] = cold_dir if cold else warm_dir
        out = subprocess.run([sys.executable, "-c", CHILD, mode, str(steps)], env=env,
                             capture_output=True, text=True, check=True, cwd=HERE.parent)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    marks = data["marks"]
    row, prev = {}, marks["start"]
    for p in PHASES:
        cur = marks[p]
        row[p] = (cur[0] - prev[0], cur[1] - prev[1])
        prev = cur
    row["loop"] = (row["loop"][0] + row["two steps"][0], row["loop"][1] + row["two steps"][1])
    row["total"] = (marks["eval"][0] - marks["start"][0], marks["eval"][1] - marks["start"][1])
    row["accuracy"] = data["accuracy"]
    return row


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=4)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--lazy", choices=("both", "on", "off"), default="both",
                   help="XLA with lazy compilation on (the default), off, or both")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    systems = [("executor", "exec", True)]
    if args.lazy in ("both", "on"):
        systems.append(("XLA lazy", "xla", True))
    if args.lazy in ("both", "off"):
        systems.append(("XLA eager", "xla", False))
    results: dict = {}
    with tempfile.TemporaryDirectory() as warm_dir:
        for _, mode, lazy in systems:   # fill the warm cache
            one_run(mode, False, warm_dir, 3, lazy)
        for r in range(args.runs):
            for cache in ("cold", "warm"):
                order = systems if r % 2 == 0 else systems[::-1]
                for name, mode, lazy in order:
                    row = one_run(mode, cache == "cold", warm_dir, args.steps, lazy)
                    results.setdefault(f"{name}, {cache}", []).append(row)
    cols = ["import", "data", "two steps", "loop", "eval", "total"]
    print(f"median of {args.runs} runs, {args.steps} steps; CPU ms (wall ms); "
          f"'two steps' is part of 'loop'")
    print(f"{'system, cache':22s}" + "".join(f"{c:>17s}" for c in cols) + "  accuracy")
    for key, rows in results.items():
        cells = []
        for c in cols:
            cpu = statistics.median(r[c][0] for r in rows) * 1e3
            wall = statistics.median(r[c][1] for r in rows) * 1e3
            cells.append(f"{cpu:8.0f} ({wall:5.0f})")
        print(f"{key:22s}" + "".join(f"{c:>17s}" for c in cells) + f"  {rows[0]['accuracy']:.4f}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    main()
