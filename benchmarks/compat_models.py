"""Training steps of the models TF 1.x's tutorials built, in xlapy.compat.v1 without XLA
(the op-by-op executor) and with session-level XLA (global_jit_level ON_1):

  cnn       deep MNIST: conv 5x5x32 - pool - conv 5x5x64 - pool - fc 1024 - dropout - fc 10,
            Adam (batch 50)
  lstm      MNIST rows through BasicLSTMCell(128) with dynamic_rnn, Adam (batch 128)
  word2vec  embedding lookup + NCE loss with the log-uniform sampler, SGD (vocab 5000,
            dim 128, batch 128, 64 negatives)

    .venv/bin/python benchmarks/compat_models.py [--only cnn,lstm] [--small] [--json PATH]

Per model and system: the first step (compilation included) and the best / median step
time (harness.measure), wall and process CPU time, and the cluster summary's first line.
Both systems run the same graph on the same fixed batch in the same process; --small
shrinks the models so the script can be checked quickly.
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


def _config(tf, xla):
    cfg = tf.ConfigProto()
    if xla:
        cfg.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    return cfg


def cnn(tf, small):
    side, c1, c2, fc, batch = (12, 4, 8, 32, 8) if small else (28, 32, 64, 1024, 50)
    rng = np.random.default_rng(0)
    xs = rng.random((batch, side * side), dtype=np.float32)
    ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    x = tf.placeholder(tf.float32, [None, side * side])
    y_ = tf.placeholder(tf.float32, [None, 10])
    keep = tf.placeholder(tf.float32)

    def weight(shape):
        return tf.Variable(tf.truncated_normal(shape, stddev=0.1))

    def bias(shape):
        return tf.Variable(tf.constant(0.1, shape=shape))
    h = tf.reshape(x, [-1, side, side, 1])
    for cin, cout in ((1, c1), (c1, c2)):
        h = tf.nn.relu(tf.nn.conv2d(h, weight([5, 5, cin, cout]), [1, 1, 1, 1], "SAME") +
                       bias([cout]))
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    q = side // 4
    h = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, q * q * c2]), weight([q * q * c2, fc])) +
                   bias([fc]))
    logits = tf.matmul(tf.nn.dropout(h, keep), weight([fc, 10])) + bias([10])
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_,
                                                                     logits=logits))
    return tf.train.AdamOptimizer(1e-4).minimize(loss), {x: xs, y_: ys, keep: 0.5}


def lstm(tf, small):
    steps, depth, units, batch = (6, 5, 16, 8) if small else (28, 28, 128, 128)
    rng = np.random.default_rng(0)
    xs = rng.random((batch, steps, depth), dtype=np.float32)
    ys = rng.integers(0, 10, batch)
    x = tf.placeholder(tf.float32, [None, steps, depth])
    y = tf.placeholder(tf.int64, [None])
    _, state = tf.nn.dynamic_rnn(tf.contrib.rnn.BasicLSTMCell(units), x, dtype=tf.float32)
    logits = tf.layers.dense(state.h, 10)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    return tf.train.AdamOptimizer(1e-3).minimize(loss), {x: xs, y: ys}


def word2vec(tf, small):
    vocab, dim, batch, sampled = (200, 16, 16, 8) if small else (5000, 128, 128, 64)
    rng = np.random.default_rng(0)
    xs = rng.integers(0, vocab, batch).astype(np.int32)
    ys = rng.integers(0, vocab, (batch, 1)).astype(np.int64)
    x = tf.placeholder(tf.int32, [batch])
    y = tf.placeholder(tf.int64, [batch, 1])
    emb = tf.Variable(tf.random_uniform([vocab, dim], -1.0, 1.0))
    w = tf.Variable(tf.truncated_normal([vocab, dim], stddev=1.0 / np.sqrt(dim)))
    b = tf.Variable(tf.zeros([vocab]))
    loss = tf.reduce_mean(tf.nn.nce_loss(w, b, y, tf.nn.embedding_lookup(emb, x), sampled,
                                         vocab))
    return tf.train.GradientDescentOptimizer(1.0).minimize(loss), {x: xs, y: ys}


MODELS = {"cnn": cnn, "lstm": lstm, "word2vec": word2vec}


def run_model(name, small, min_time):
    import xlapy.compat.v1 as tf
    out = {}
    for xla in (False, True):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(1)
            train, feed = MODELS[name](tf, small)
            sess = tf.Session(graph=g, config=_config(tf, xla))
            sess.run(tf.global_variables_initializer())
            summary = sess.cluster_summary(train, feed).splitlines()[0]
            t0 = time.perf_counter()
            sess.run(train, feed)
            first = time.perf_counter() - t0
            c0 = time.process_time()
            t = measure(lambda s=sess, tr=train, f=feed: s.run(tr, f), min_time=min_time)
            cpu = (time.process_time() - c0) / (t.runs + 1)
        key = "xla" if xla else "executor"
        out[key] = {"first_s": first, "best_s": t.best, "median_s": t.median,
                    "cpu_s": cpu, "summary": summary}
        print(f"  {key:8s} first {fmt_time(first)}  best {fmt_time(t.best)}  median "
              f"{fmt_time(t.median)}  cpu/step {fmt_time(cpu)}  | {summary}")
    print(f"  XLA / executor: best {out['xla']['best_s'] / out['executor']['best_s']:.2f}, "
          f"cpu {out['xla']['cpu_s'] / out['executor']['cpu_s']:.2f}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(MODELS))
    ap.add_argument("--small", action="store_true", help="tiny models (a quick check)")
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--json")
    a = ap.parse_args()
    results = {}
    for name in a.only.split(","):
        print(name)
        results[name] = run_model(name, a.small, 0.2 if a.small else a.min_time)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
