"""The MNIST model library of TF 1.x's fully_connected_feed tutorial: a two-hidden-layer
perceptron built in four steps (inference, loss, training, evaluation).

    logits = mnist.inference(images, hidden1_units, hidden2_units)
    loss = mnist.loss(logits, labels)
    train_op = mnist.training(loss, learning_rate)     # also a "loss" scalar summary
    correct = mnist.evaluation(logits, labels)         # number of correct predictions

Weights start truncated-normal with stddev 1/sqrt(fan_in), biases at zero; layers are
named hidden1, hidden2 and softmax_linear, as in the tutorial, so checkpoints and
TensorBoard graphs show the same names.
"""

from __future__ import annotations

import math

import xlapy.compat.v1 as tf

NUM_CLASSES = 10
IMAGE_SIZE = 28
IMAGE_PIXELS = IMAGE_SIZE * IMAGE_SIZE


def _layer(name, inputs, fan_in, fan_out, activation):
    with tf.name_scope(name):
        weights = tf.Variable(tf.truncated_normal([fan_in, fan_out],
                                                  stddev=1.0 / math.sqrt(float(fan_in))),
                              name="weights")
        biases = tf.Variable(tf.zeros([fan_out]), name="biases")
        out = tf.matmul(inputs, weights) + biases
        return activation(out) if activation else out


def inference(images, hidden1_units, hidden2_units):
    """Logits [batch, NUM_CLASSES] of images [batch, IMAGE_PIXELS]."""
    hidden1 = _layer("hidden1", images, IMAGE_PIXELS, hidden1_units, tf.nn.relu)
    hidden2 = _layer("hidden2", hidden1, hidden1_units, hidden2_units, tf.nn.relu)
    return _layer("softmax_linear", hidden2, hidden2_units, NUM_CLASSES, None)


def loss(logits, labels):
    """Mean cross entropy of the logits against int labels [batch]."""
    labels = tf.to_int64(labels)
    return tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)


def training(loss, learning_rate):
    """The training op: one gradient-descent step, incrementing global_step."""
    tf.summary.scalar("loss", loss)
    optimizer = tf.train.GradientDescentOptimizer(learning_rate)
    global_step = tf.Variable(0, name="global_step", trainable=False)
    return optimizer.minimize(loss, global_step=global_step)


def evaluation(logits, labels):
    """How many of the batch's predictions (the largest logit) are the label."""
    correct = tf.equal(tf.argmax(logits, 1), tf.to_int64(labels))
    return tf.reduce_sum(tf.cast(correct, tf.int32))
