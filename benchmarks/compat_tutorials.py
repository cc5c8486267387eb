"""The TF 1.x tutorials of examples/tf1/ as training loops: xlapy.compat.v1's executor
against session-level XLA (global_jit_level ON_1), in one process, taking turns.

    .venv/bin/python benchmarks/compat_tutorials.py [--steps 500] [--rounds 3] [--json PATH]

Tutorials: fully_connected_feed (the two-layer MNIST network of TF's fully_connected_feed
tutorial, batch 100, SGD 0.01). Each system trains the same model from the same initial
weights on the same batches (prepared up front, so the data pipeline is not measured).
Reported per system: the first step (with XLA it compiles the training step), the best
loop time over --rounds loops of --steps steps (the systems alternate round by round, so a
spell of machine load slows both), the median step, and the test precision after the
last round. Timings need a quiet machine: collect them with nothing else running.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


class FullyConnectedFeed:
    name = "fully_connected_feed"

    def __init__(self, xla: bool, batches, test, seed: int = 1):
        import xlapy.compat.v1 as tf
        from xlapy.compat.v1.examples.tutorials.mnist import mnist
        self.tf, self.batches, self.test = tf, batches, test
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.set_random_seed(seed)
            self.x = tf.placeholder(tf.float32, [None, mnist.IMAGE_PIXELS])
            self.y = tf.placeholder(tf.int32, [None])
            logits = mnist.inference(self.x, 128, 32)
            self.loss = mnist.loss(logits, self.y)
            self.train_op = mnist.training(self.loss, 0.01)
            self.correct = mnist.evaluation(logits, self.y)
            self.init = tf.global_variables_initializer()
        config = tf.ConfigProto()
        if xla:
            config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
        self.sess = tf.Session(graph=self.graph, config=config)
        self.sess.run(self.init)

    def step(self, i: int):
        bx, by = self.batches[i % len(self.batches)]
        return self.sess.run([self.train_op, self.loss], {self.x: bx, self.y: by})

    def precision(self) -> float:
        images, labels = self.test
        return float(self.sess.run(self.correct, {self.x: images, self.y: labels})) / len(labels)


def mnist_batches(steps: int, data_dir: str):
    from xlapy.compat.v1.examples.tutorials.mnist import input_data
    sets = input_data.read_data_sets(data_dir, seed=1)
    batches = [sets.train.next_batch(100) for _ in range(steps)]
    return batches, (sets.test.images, sets.test.labels)


def run(tutorial, steps: int, rounds: int, data_dir: str) -> dict:
    batches, test = mnist_batches(steps, data_dir)
    systems = {name: tutorial(xla, batches, test) for name, xla in (("executor", False),
                                                                       ("XLA", True))}
    out = {name: {"loops": [], "steps": []} for name in systems}
    for name, s in systems.items():
        t0 = time.perf_counter()
        s.step(0)
        out[name]["first"] = time.perf_counter() - t0
    for r in range(rounds):
        order = list(systems.items())
        for name, s in (order if r % 2 == 0 else order[::-1]):
            time.sleep(0.05)
            t0 = time.perf_counter()
            for i in range(steps):
                t1 = time.perf_counter()
                s.step(i)
                out[name]["steps"].append(time.perf_counter() - t1)
            out[name]["loops"].append(time.perf_counter() - t0)
    res = {}
    for name, s in systems.items():
        o = out[name]
        res[name] = {"first_ms": o["first"] * 1e3, "loop_best_s": min(o["loops"]),
                     "step_median_us": statistics.median(o["steps"]) * 1e6,
                     "precision": s.precision()}
    summary = systems["XLA"].sess.cluster_summary([systems["XLA"].train_op,
                                                   systems["XLA"].loss],
                                                  {systems["XLA"].x: batches[0][0],
                                                   systems["XLA"].y: batches[0][1]})
    res["clusters"] = summary.splitlines()[0]
    return res


TUTORIALS = [FullyConnectedFeed]


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--data_dir", default="/tmp/tensorflow/mnist/input_data")
    p.add_argument("--json", default=None, help="also write the results here")
    args = p.parse_args(argv)
    results = {}
    for tutorial in TUTORIALS:
        r = results[tutorial.name] = run(tutorial, args.steps, args.rounds, args.data_dir)
        print(f"{tutorial.name}: {args.steps} steps x {args.rounds} rounds; {r['clusters']}")
        print(f"  {'system':10s} {'first step':>11s} {'loop (best)':>12s} {'step median':>12s} "
              f"{'test precision':>15s}")
        for name in ("executor", "XLA"):
            s = r[name]
            print(f"  {name:10s} {s['first_ms']:9.1f} ms {s['loop_best_s']:10.3f} s "
                  f"{s['step_median_us']:9.0f} us {s['precision']:15.4f}")
        ex, xla = r["executor"], r["XLA"]
        print(f"  XLA / executor: loop {xla['loop_best_s'] / ex['loop_best_s']:.2f}, median "
              f"step {xla['step_median_us'] / ex['step_median_us']:.2f}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
