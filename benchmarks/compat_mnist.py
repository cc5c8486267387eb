"""The MNIST softmax-regression tutorial's training loop: xlapy.compat.v1 without XLA (the
op-by-op executor), with session-level XLA (global_jit_level ON_1), and the same model as a
jax.jit training step; plain NumPy (a hand-fused step) is the anchor.

    .venv/bin/python benchmarks/compat_mnist.py [--steps 1000] [--repeats 3] [--json PATH]

Each system trains from zero weights on the same 1000 batches of 100 (prepared up front, so
the data pipeline is not measured) with SGD(0.5), then is evaluated on the test split.
Reported per system: the first step (compilation, for XLA and JAX), the best loop time
over --repeats loops of --steps steps (compilation excluded: the program is cached), the
best and median single-step time, and the test accuracy. Ratios are against the executor
and against JAX, measured in the same process (the machine may be shared and noisy: see
benchmarks/harness.py).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from harness import fmt_time, measure  # noqa: E402


def data(steps: int, data_dir: str):
    from xlapy.compat.v1.examples.tutorials.mnist import input_data
    mnist = input_data.read_data_sets(data_dir, one_hot=True, seed=1)
    batches = [mnist.train.next_batch(100) for _ in range(steps)]
    return batches, mnist.test.images, mnist.test.labels


class CompatSystem:
    def __init__(self, xla: bool):
        import xlapy.compat.v1 as tf
        self.tf = tf
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.x = tf.placeholder(tf.float32, [None, 784])
            self.W = tf.Variable(tf.zeros([784, 10]))
            self.b = tf.Variable(tf.zeros([10]))
            y = tf.matmul(self.x, self.W) + self.b
            self.y_ = tf.placeholder(tf.float32, [None, 10])
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=self.y_,
                                                                          logits=y))
            self.train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
            correct = tf.equal(tf.argmax(y, 1), tf.argmax(self.y_, 1))
            self.accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
            self.init = tf.global_variables_initializer()
        config = tf.ConfigProto()
        if xla:
            config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
        self.sess = tf.Session(graph=self.graph, config=config)

    def reset(self):
        self.sess.run(self.init)

    def step(self, bx, by):
        self.sess.run(self.train_op, {self.x: bx, self.y_: by})

    def finish(self):
        pass

    def evaluate(self, images, labels):
        return float(self.sess.run(self.accuracy, {self.x: images, self.y_: labels}))


class JaxSystem:
    def __init__(self):
        import jax
        import jax.numpy as jnp
        self.jax, self.jnp = jax, jnp

        def loss(w, b, x, y):
            return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(x @ w + b), axis=1))

        @jax.jit
        def step(w, b, x, y):
            gw, gb = jax.grad(loss, argnums=(0, 1))(w, b, x, y)
            return w - 0.5 * gw, b - 0.5 * gb
        self._step = step

    def reset(self):
        self.w = self.jnp.zeros((784, 10), self.jnp.float32)
        self.b = self.jnp.zeros(10, self.jnp.float32)

    def step(self, bx, by):
        self.w, self.b = self._step(self.w, self.b, bx, by)

    def finish(self):
        self.w.block_until_ready()

    def evaluate(self, images, labels):
        pred = np.asarray(images @ np.asarray(self.w) + np.asarray(self.b)).argmax(1)
        return float((pred == labels.argmax(1)).mean())


class NumpySystem:
    def reset(self):
        self.w = np.zeros((784, 10), np.float32)
        self.b = np.zeros(10, np.float32)

    def step(self, bx, by):
        logits = bx @ self.w + self.b
        e = np.exp(logits - logits.max(1, keepdims=True))
        g = (e / e.sum(1, keepdims=True) - by) * np.float32(1 / len(bx))
        self.w = self.w - np.float32(0.5) * (bx.T @ g)
        self.b = self.b - np.float32(0.5) * g.sum(0)

    def finish(self):
        pass

    def evaluate(self, images, labels):
        return float(((images @ self.w + self.b).argmax(1) == labels.argmax(1)).mean())


def run_system(sys_, batches, test, repeats):
    sys_.reset()
    t0 = time.perf_counter()
    sys_.step(*batches[0])
    sys_.finish()
    first = time.perf_counter() - t0
    loops = []
    for _ in range(repeats):
        sys_.reset()
        t0 = time.perf_counter()
        for bx, by in batches:
            sys_.step(bx, by)
        sys_.finish()
        loops.append(time.perf_counter() - t0)
    acc = sys_.evaluate(*test)
    bx, by = batches[0]

    def one():
        sys_.step(bx, by)
        sys_.finish()
    single = measure(one, min_time=0.3)
    return {"first_step_s": first, "loop_best_s": min(loops), "loops_s": loops,
            "step_best_s": single.best, "step_median_s": single.median, "accuracy": acc}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--data_dir", default="/tmp/tensorflow/mnist/input_data")
    p.add_argument("--json", default=None, help="also write the results here")
    args = p.parse_args(argv)
    from xlapy.backends.base import get_platform
    get_platform("cpu")  # load the compiler before timing anything
    batches, *test = data(args.steps, args.data_dir)
    systems = {"numpy (hand-fused)": NumpySystem(),
               "compat.v1 executor": CompatSystem(False),
               "compat.v1 XLA": CompatSystem(True)}
    try:
        systems["jax.jit"] = JaxSystem()
    except ImportError:
        print("jax not installed: skipping the JAX column")
    results = {name: run_system(s, batches, test, args.repeats) for name, s in systems.items()}
    print(f"\nMNIST softmax regression, {args.steps} steps of batch 100, SGD(0.5)")
    print(f"{'system':22} {'first step':>12} {'loop (best)':>12} {'per step':>11} "
          f"{'step best':>11} {'step median':>12} {'accuracy':>9}")
    for name, r in results.items():
        print(f"{name:22} {fmt_time(r['first_step_s']):>12} {fmt_time(r['loop_best_s']):>12} "
              f"{fmt_time(r['loop_best_s'] / args.steps):>11} {fmt_time(r['step_best_s']):>11} "
              f"{fmt_time(r['step_median_s']):>12} {r['accuracy']:9.4f}")
    xla, ex = results["compat.v1 XLA"], results["compat.v1 executor"]
    ratios = {"xla_vs_executor_loop": ex["loop_best_s"] / xla["loop_best_s"],
              "xla_vs_executor_step": ex["step_best_s"] / xla["step_best_s"]}
    print(f"\nXLA vs executor: {ratios['xla_vs_executor_loop']:.2f}x faster (loop), "
          f"{ratios['xla_vs_executor_step']:.2f}x (best step)")
    if "jax.jit" in results:
        jx = results["jax.jit"]
        ratios["xla_vs_jax_loop"] = jx["loop_best_s"] / xla["loop_best_s"]
        ratios["xla_vs_jax_step"] = jx["step_best_s"] / xla["step_best_s"]
        print(f"XLA vs jax.jit:  {ratios['xla_vs_jax_loop']:.2f}x faster (loop), "
              f"{ratios['xla_vs_jax_step']:.2f}x (best step)")
    out = {"steps": args.steps, "results": results, "ratios": ratios}
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
