"""The MNIST softmax model for ahead-of-time compilation: TensorFlow 1.x's tutorial model
(softmax(x W + b)) built and trained with xlapy.compat.v1, then compiled from its graph
with the tf2xla config mnist.config.pbtxt, as tfcompile takes a graph: the image is fed,
the probabilities fetched, and the trained W and b (readonly variables) become constants
of the object.

  graph, sess, data = train(steps)   the graph, its session (W, b trained), the data sets
"""

from __future__ import annotations

import pathlib

import numpy as np

import xlapy.compat.v1 as tf
from xlapy.compat.v1.examples.tutorials.mnist import input_data

CONFIG = pathlib.Path(__file__).with_name("mnist.config.pbtxt")


def train(steps: int = 300, seed: int = 0, data_dir: str = "/tmp/xlapy_mnist_data"):
    data = input_data.read_data_sets(data_dir, one_hot=True, seed=seed)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 784], name="x")
        W = tf.Variable(tf.zeros([784, 10]), name="W")
        b = tf.Variable(tf.zeros([10]), name="b")
        logits = tf.matmul(x, W) + b
        tf.nn.softmax(logits, name="y")
        y_ = tf.placeholder(tf.float32, [None, 10], name="labels")
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=logits))
        step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    for _ in range(steps):
        xs, ys = data.train.next_batch(100)
        sess.run(step, feed_dict={x: xs, y_: ys})
    return graph, sess, data


def session_predictions(graph, sess, images: np.ndarray) -> np.ndarray:
    """The session's probabilities for each image (what the compiled program must give)."""
    return sess.run(graph.get_tensor_by_name("y:0"),
                    feed_dict={graph.get_tensor_by_name("x:0"): images})


def model():
    """For `python -m xlapy aot --graph examples/aot/mnist.py:model --config
    examples/aot/mnist.config.pbtxt`: (graph, session) after training."""
    graph, sess, _ = train()
    return graph, sess
