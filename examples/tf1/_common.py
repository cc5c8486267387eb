"""What the TF 1.x tutorials of examples/tf1/ share: the module they run against, the
session config, the timed training loop and the main() that runs one mode or both.

The tutorials run against xlapy.compat.v1. With XLAPY_TF1_MODULE=tensorflow they run the
same code against TensorFlow's own tf.compat.v1 in graph mode (TensorFlow 2.x; its
BasicLSTMCell needs the tf_keras package), so that their accuracy can be checked against
TensorFlow's (benchmarks/compat_vs_tf.py):

    XLAPY_TF1_MODULE=tensorflow TF_USE_LEGACY_KERAS=1 python examples/tf1/mnist_rnn.py
"""

from __future__ import annotations

import importlib.util
import os
import time
import types

MODULE_ENV = "XLAPY_TF1_MODULE"
WARMUP_STEPS = 2   # timed apart: the executor's first run, then XLA's compilation


def load_tf():
    """xlapy.compat.v1, or TensorFlow's tf.compat.v1 when $XLAPY_TF1_MODULE is tensorflow."""
    which = os.environ.get(MODULE_ENV, "xlapy")
    if which == "tensorflow":
        import tensorflow.compat.v1 as tf
        tf.disable_eager_execution()
        return tf
    if which != "xlapy":
        raise ValueError(f"${MODULE_ENV} is {which!r}: expected 'xlapy' or 'tensorflow'")
    import xlapy.compat.v1 as tf
    return tf


def mnist_library(tf):
    """The fully_connected_feed tutorial's model library (mnist.inference, loss, training,
    evaluation) built with `tf`: xlapy's copy of it, its import renamed for TensorFlow
    (which no longer ships tensorflow.examples.tutorials)."""
    from xlapy.compat.v1.examples.tutorials.mnist import mnist
    if tf.__name__.startswith("xlapy"):
        return mnist
    spec = importlib.util.find_spec(mnist.__name__)
    source = spec.loader.get_source(mnist.__name__)
    renamed = source.replace("import xlapy.compat.v1 as tf", "import tensorflow.compat.v1 as tf")
    module = types.ModuleType("mnist_tensorflow")
    exec(compile(renamed, spec.origin, "exec"), module.__dict__)
    return module


def session_config(tf, xla: bool):
    """A ConfigProto with session-level XLA (global_jit_level ON_1) when `xla`."""
    config = tf.ConfigProto()
    if xla:
        config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    return config


def train(sess, fetches, steps: int, next_feed, after_step=None) -> dict:
    """Run `fetches` (the training op, then the loss) `steps` times, feeding next_feed(step);
    after_step(step, feed, loss, seconds) follows each step. Returns the losses, the time of
    the first two steps ("first": with XLA's lazy compilation the first runs on the executor
    and the second compiles), the mean time of the others, the total, and the cluster
    summary of the step (xlapy only; empty under TensorFlow)."""
    first = rest = 0.0
    losses, summary = [], ""
    for step in range(steps):
        feed = next_feed(step)
        start = time.perf_counter()
        loss = sess.run(fetches, feed)[1]
        elapsed = time.perf_counter() - start
        losses.append(float(loss))
        if step < WARMUP_STEPS:
            first += elapsed
            if step == 0 and hasattr(sess, "cluster_summary"):
                summary = sess.cluster_summary(fetches, feed)
        else:
            rest += elapsed
        if after_step is not None:
            after_step(step, feed, loss, elapsed)
    return {"losses": losses, "first": first,
            "per_step": rest / max(steps - WARMUP_STEPS, 1),
            "total": first + rest, "cluster_summary": summary}


def run_modes(flags, run_training, describe) -> int:
    """main() of a tutorial: run_training(xla) without XLA, with it (--xla), or both
    (--compare, then the speedup); describe(result) ends each mode's line."""
    results = {}
    modes = [("no XLA", False), ("XLA", True)] if flags.compare else \
        [("XLA" if flags.xla else "no XLA", flags.xla)]
    for name, xla in modes:
        r = results[name] = run_training(xla)
        print(f"[{name}] {len(r['losses'])} steps in {r['total']:.2f} s (first two "
              f"steps {r['first'] * 1e3:.1f} ms, then {r['per_step'] * 1e3:.3f} ms/step); "
              f"{describe(r)}")
        if xla and r["cluster_summary"]:
            print(r["cluster_summary"])
    if flags.compare:
        a, b = results["no XLA"], results["XLA"]
        print(f"speedup with XLA: {a['per_step'] / b['per_step']:.2f}x per training step, "
              f"{a['total'] / b['total']:.2f}x for the whole loop with compilation")
    return 0


def accuracy_line(r: dict) -> str:
    return f"test accuracy {r['test_accuracy']:.4f}"


def add_mnist_flags(parser, steps: int, batch_size: int, learning_rate: float):
    """The MNIST tutorials' data directory, loop length, batch size and learning rate."""
    parser.add_argument("--data_dir", type=str, default="/tmp/tensorflow/mnist/input_data",
                        help="Directory with the MNIST IDX files (optional)")
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--batch_size", type=int, default=batch_size)
    parser.add_argument("--learning_rate", type=float, default=learning_rate)


def add_mode_flags(parser):
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--xla", action="store_true", help="Turn XLA JIT compilation on")
    parser.add_argument("--compare", action="store_true", help="Train without and with XLA")
