"""The TF 1.x tutorials of examples/tf1/ as training loops: xlapy.compat.v1's executor
against session-level XLA (global_jit_level ON_1), in one process, taking turns.

    .venv/bin/python benchmarks/compat_tutorials.py [--steps N] [--rounds 3] [--only NAME]
                                                    [--json PATH]

Tutorials (--steps scales each one's default loop length, given in brackets):
fully_connected_feed (the two-layer MNIST network, batch 100, SGD 0.01) [500], mnist_deep
(the deep MNIST CNN: two 5x5 convolutions of 32 and 64 maps, max pools, fc 1024, dropout
0.5, Adam 1e-4, batch 50) [20], mnist_rnn (a 128-unit BasicLSTMCell over the 28 rows with
dynamic_rnn, Adam 1e-3, batch 128) [100], word2vec (skip-gram with nce_loss on the
generated corpus of examples/tf1/word2vec_basic.py, batch 128, 16 negative samples, SGD
1.0) [500]. Each system trains the same model from the same initial weights on the same
batches (prepared up front, so the data pipeline is not measured). Reported per system:
the first two steps (with XLA's lazy compilation, as TF's, the executor runs the
first and the second compiles the training step), the best loop time over --rounds
loops of the steps (the systems alternate round by round, so a spell of machine load
slows both), the median step, and the model's score after the last round (test precision;
word2vec: the class agreement of the nearest neighbours). Timings need a quiet machine:
collect them with nothing else running.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import pathlib
import statistics
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "examples" / "tf1"))   # the tutorials' _common.py


def _example(name):
    """examples/tf1/<name>.py as a module (its model-building functions)."""
    spec = importlib.util.spec_from_file_location(f"tf1_{name}",
                                                  HERE.parent / "examples" / "tf1" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def mnist_data(data_dir: str, steps: int, batch: int, one_hot: bool):
    from xlapy.compat.v1.examples.tutorials.mnist import input_data
    sets = input_data.read_data_sets(data_dir, one_hot=one_hot, seed=1)
    batches = [sets.train.next_batch(batch) for _ in range(steps)]
    return batches, (sets.test.images, sets.test.labels)


class Tutorial:
    """A training loop on prepared batches: build(tf) makes the graph (setting self.x,
    self.y, self.fetches = [training op, loss] and what score() needs) under the seed, in a
    session with or without XLA; step(i) trains on batch i."""
    name = ""
    default_steps = 100
    train_feed = eval_feed = {}
    batch, one_hot = 0, False   # of an MNIST tutorial's batches

    @classmethod
    def data(cls, steps, data_dir):
        return mnist_data(data_dir, steps, cls.batch, cls.one_hot)

    def __init__(self, xla: bool, batches, test, seed: int = 1):
        import xlapy.compat.v1 as tf
        from _common import session_config
        self.batches, self.test = batches, test
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(seed)
            self.build(tf)
            init = tf.global_variables_initializer()
        self.sess = tf.Session(graph=graph, config=session_config(tf, xla))
        self.sess.run(init)

    def reshape(self, images):
        return images

    def feed(self, i):
        bx, by = self.batches[i % len(self.batches)]
        return {self.x: self.reshape(bx), self.y: by, **self.train_feed}

    def step(self, i: int):
        return self.sess.run(self.fetches, self.feed(i))


class FullyConnectedFeed(Tutorial):
    name = "fully_connected_feed"
    default_steps = 500
    batch, one_hot = 100, False

    def build(self, tf):
        from xlapy.compat.v1.examples.tutorials.mnist import mnist
        self.x = tf.placeholder(tf.float32, [None, mnist.IMAGE_PIXELS])
        self.y = tf.placeholder(tf.int32, [None])
        logits = mnist.inference(self.x, 128, 32)
        loss = mnist.loss(logits, self.y)
        self.fetches = [mnist.training(loss, 0.01), loss]
        self.correct = mnist.evaluation(logits, self.y)

    def score(self) -> float:
        images, labels = self.test
        return float(self.sess.run(self.correct, {self.x: images, self.y: labels})) / len(labels)


class _OneHotMnist(Tutorial):
    """Shared by the CNN and the LSTM: model(tf) gives the logits and the optimizer; one-hot
    labels, softmax cross entropy, an accuracy op."""

    def build(self, tf):
        logits, optimizer = self.model(tf)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=self.y,
                                                                         logits=logits))
        self.fetches = [optimizer.minimize(loss), loss]
        correct = tf.equal(tf.argmax(logits, 1), tf.argmax(self.y, 1))
        self.accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))

    def score(self) -> float:
        images, labels = self.test
        return float(self.sess.run(self.accuracy, {self.x: self.reshape(images),
                                                   self.y: labels, **self.eval_feed}))


class MnistDeep(_OneHotMnist):
    name = "mnist_deep"
    default_steps = 20
    batch, one_hot = 50, True

    def model(self, tf):
        self.x = tf.placeholder(tf.float32, [None, 784])
        self.y = tf.placeholder(tf.float32, [None, 10])
        logits, keep_prob = _example("mnist_deep").deepnn(self.x)
        self.train_feed, self.eval_feed = {keep_prob: 0.5}, {keep_prob: 1.0}
        return logits, tf.train.AdamOptimizer(1e-4)


class MnistRnn(_OneHotMnist):
    name = "mnist_rnn"
    default_steps = 100
    batch, one_hot = 128, True

    def model(self, tf):
        self.x = tf.placeholder(tf.float32, [None, 28, 28])
        self.y = tf.placeholder(tf.float32, [None, 10])
        w = {"out": tf.Variable(tf.random_normal([128, 10]))}
        b = {"out": tf.Variable(tf.random_normal([10]))}
        return _example("mnist_rnn").RNN(self.x, w, b, 128), tf.train.AdamOptimizer(1e-3)

    def reshape(self, images):
        return images.reshape((-1, 28, 28))


class Word2Vec(Tutorial):
    name = "word2vec"
    default_steps = 500

    @staticmethod
    def data(steps, data_dir):
        w2v = _example("word2vec_basic")
        data, dictionary, reverse = w2v.build_dataset(w2v.make_corpus(20000, 1))
        gen = w2v.BatchGenerator(data, 128, 2, 1, 1)
        return [gen.next() for _ in range(steps)], (w2v, dictionary, reverse)

    def build(self, tf):
        w2v, dictionary, _ = self.test
        vocab = len(dictionary)
        self.valid = np.array([dictionary[w] for ws in w2v.CLASSES.values() for w in ws],
                              np.int32)
        self.x = tf.placeholder(tf.int32, [128])
        self.y = tf.placeholder(tf.int32, [128, 1])
        emb = tf.Variable(tf.random_uniform([vocab, 32], -1.0, 1.0))
        nce_w = tf.Variable(tf.truncated_normal([vocab, 32], stddev=1.0 / np.sqrt(32)))
        nce_b = tf.Variable(tf.zeros([vocab]))
        loss = tf.reduce_mean(tf.nn.nce_loss(nce_w, nce_b, self.y,
                                             tf.nn.embedding_lookup(emb, self.x), 16, vocab))
        self.fetches = [tf.train.GradientDescentOptimizer(1.0).minimize(loss), loss]
        normalized = emb / tf.sqrt(tf.reduce_sum(tf.square(emb), 1, keepdims=True))
        self.similarity = tf.matmul(tf.nn.embedding_lookup(normalized, self.valid),
                                    normalized, transpose_b=True)

    def score(self) -> float:
        w2v, _, reverse = self.test
        return w2v.class_agreement(self.sess.run(self.similarity), self.valid, reverse, 3)


def run(tutorial, steps: int, rounds: int, data_dir: str) -> dict:
    batches, test = tutorial.data(steps, data_dir)
    systems = {name: tutorial(xla, batches, test) for name, xla in (("executor", False),
                                                                       ("XLA", True))}
    out = {name: {"loops": [], "steps": []} for name in systems}
    for name, s in systems.items():
        t0 = time.perf_counter()
        s.step(0)   # with XLA's lazy compilation the executor runs the first step,
        s.step(1)   # the second compiles
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
        res[name] = {"first_two_ms": o["first"] * 1e3, "loop_best_s": min(o["loops"]),
                     "step_median_us": statistics.median(o["steps"]) * 1e6,
                     "score": s.score()}
    xla = systems["XLA"]
    res["clusters"] = xla.sess.cluster_summary(xla.fetches, xla.feed(0)).splitlines()[0]
    return res


TUTORIALS = [FullyConnectedFeed, MnistDeep, MnistRnn, Word2Vec]


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=float, default=1.0,
                   help="loop length as a multiple of each tutorial's default")
    p.add_argument("--only", default=None, help="comma-separated tutorial names")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--data_dir", default="/tmp/tensorflow/mnist/input_data")
    p.add_argument("--json", default=None, help="also write the results here")
    args = p.parse_args(argv)
    results = {}
    only = set(args.only.split(",")) if args.only else None
    for tutorial in TUTORIALS:
        if only is not None and tutorial.name not in only:
            continue
        steps = max(1, round(args.steps * tutorial.default_steps))
        r = results[tutorial.name] = run(tutorial, steps, args.rounds, args.data_dir)
        print(f"{tutorial.name}: {steps} steps x {args.rounds} rounds; {r['clusters']}")
        print(f"  {'system':10s} {'first two':>11s} {'loop (best)':>12s} {'step median':>12s} "
              f"{'score':>8s}")
        for name in ("executor", "XLA"):
            s = r[name]
            print(f"  {name:10s} {s['first_two_ms']:9.1f} ms {s['loop_best_s']:10.3f} s "
                  f"{s['step_median_us']:9.0f} us {s['score']:8.4f}")
        ex, xla = r["executor"], r["XLA"]
        print(f"  XLA / executor: loop {xla['loop_best_s'] / ex['loop_best_s']:.2f}, median "
              f"step {xla['step_median_us'] / ex['step_median_us']:.2f}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
