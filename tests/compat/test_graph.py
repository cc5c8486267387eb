"""Graph construction: names, scopes, partial shapes, dtypes, conversion and its errors."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError, NotFoundError
from xlapy.errors import XlapyError


def test_names_are_unique_and_scoped():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    with tf.name_scope("layer") as scope:
        c = tf.add(a, b)
        with tf.name_scope("inner"):
            d = tf.multiply(c, c, name="prod")
    with tf.name_scope("layer"):
        e = tf.add(a, b)
    assert (a.name, b.name) == ("Const:0", "Const_1:0")
    assert scope == "layer/"
    assert c.op.name == "layer/Add" and d.op.name == "layer/inner/prod"
    assert e.op.name == "layer_1/Add"
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("layer/inner/prod:0") is d
    assert g.get_operation_by_name("layer/Add") is c.op
    with pytest.raises(NotFoundError, match="does not exist"):
        g.get_tensor_by_name("layer/missing:0")


def test_partial_shapes_through_ops():
    x = tf.placeholder(tf.float32, [None, 784])
    w = tf.Variable(tf.zeros([784, 10]))
    y = tf.matmul(x, w) + tf.zeros([10])
    assert y.shape.as_list() == [None, 10]
    assert y.get_shape()[1].value == 10 and y.get_shape()[0].value is None
    assert str(y.shape) == "(?, 10)"
    s = tf.reduce_sum(y, axis=1)
    assert s.shape.as_list() == [None]
    k = tf.reduce_mean(y, axis=0, keepdims=True)
    assert k.shape.as_list() == [1, 10]
    assert tf.argmax(y, 1).shape.as_list() == [None] and tf.argmax(y, 1).dtype == tf.int64
    r = tf.reshape(x, [-1, 28, 28, 1])
    assert r.shape.as_list() == [None, 28, 28, 1]
    t = tf.transpose(tf.placeholder(tf.float32, [2, None, 5]))
    assert t.shape.as_list() == [5, None, 2]
    c = tf.concat([tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.float32, [4, 2])], 1)
    assert c.shape.as_list() == [4, 5]
    u = tf.placeholder(tf.float32)  # unknown rank
    assert u.shape.ndims is None and (u + 1.0).shape.ndims is None
    assert tf.nn.softmax_cross_entropy_with_logits(
        labels=tf.placeholder(tf.float32, [None, 10]), logits=y).shape.as_list() == [None]


def test_construction_errors_are_clear():
    x = tf.placeholder(tf.float32, [None, 784])
    with pytest.raises(InvalidArgumentError, match=r"784 and 785 .*\[\?,784\], \[785,10\]"):
        tf.matmul(x, tf.zeros([785, 10]))
    with pytest.raises(InvalidTypeError, match="int32 that does not match type float32"):
        tf.add(x, tf.constant(1))
    with pytest.raises(InvalidTypeError, match="Expected int32"):
        tf.constant(0.5, dtype=tf.int32)
    with pytest.raises(InvalidArgumentError, match="Dimensions must be equal"):
        tf.placeholder(tf.float32, [3]) + tf.placeholder(tf.float32, [4])
    with pytest.raises(InvalidArgumentError, match="Cannot reshape"):
        tf.reshape(tf.zeros([4, 5]), [3, 7])
    with pytest.raises(InvalidTypeError, match="bool"):
        bool(x)
    # every one of them is an xlapy error, and a ValueError/TypeError like TensorFlow's
    assert issubclass(InvalidArgumentError, (XlapyError, ValueError))
    assert issubclass(InvalidTypeError, TypeError)


def test_python_values_convert_like_tensorflow():
    assert tf.constant(1.0).dtype == tf.float32
    assert tf.constant(1).dtype == tf.int32
    assert tf.constant([1.5, 2]).dtype == tf.float32
    assert tf.constant(np.ones(2)).dtype == tf.float64
    assert tf.constant(True).dtype == tf.bool
    x = tf.placeholder(tf.float64, [2])
    assert (x * 2).dtype == tf.float64 and (2 * x).dtype == tf.float64
    assert (tf.constant(3) / tf.constant(2)).dtype == tf.float64  # TF 1.x truediv
    assert tf.zeros([2, 3], tf.int64).dtype == tf.int64
    assert tf.as_dtype("float32") is tf.float32 and tf.float32 == np.float32
    assert tf.constant(7.0, shape=[2, 2]).shape.as_list() == [2, 2]


def test_control_dependencies_and_devices():
    a = tf.constant(1.0)
    with tf.control_dependencies([a]):
        b = tf.constant(2.0)
        with tf.control_dependencies(None):
            c = tf.constant(3.0)
    assert b.op.control_inputs == [a.op] and c.op.control_inputs == []
    with tf.device("/device:XLA_CPU:0"):
        d = tf.square(a)
    with tf.device("/cpu:0"):
        e = tf.square(a)
    assert d.op.device == "/job:localhost/replica:0/task:0/device:XLA_CPU:0"
    assert e.op.device.endswith("device:CPU:0")
    with pytest.raises(InvalidArgumentError, match="Unknown device type"):
        with tf.device("/device:TPU:0"):
            pass


def test_graph_as_default_and_collections():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(tf.zeros([2]), name="v")
        w = tf.Variable(tf.ones([2]), trainable=False, name="w")
        assert tf.get_default_graph() is g
    assert tf.get_default_graph() is not g
    assert g.get_collection(tf.GraphKeys.GLOBAL_VARIABLES) == [v, w]
    assert g.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES) == [v]
    assert v.name == "v:0" and v.op.name == "v"
    assert v.initializer.name == "v/Assign" and v.value().op.name == "v/read"
    with pytest.raises(InvalidArgumentError, match="same graph"):
        v + tf.constant([1.0, 2.0])  # v belongs to g, the constant to the default graph


def test_variable_scopes_and_get_variable():
    with tf.variable_scope("layer1"):
        w = tf.get_variable("w", [3, 4], initializer=tf.zeros_initializer())
    with tf.variable_scope("layer1", reuse=True):
        assert tf.get_variable("w") is w
    with pytest.raises(InvalidArgumentError, match="already exists"):
        with tf.variable_scope("layer1"):
            tf.get_variable("w", [3, 4])
    assert w.op.name == "layer1/w" and w.shape.as_list() == [3, 4]


def test_operators_build_ops():
    x = tf.placeholder(tf.float32, [2])
    ops = [x + 1, 1 - x, x * x, x / 2, -x, x ** 2, tf.reshape(x, [1, 2]) @ tf.ones([2, 2]),
           x > 0, x[0], abs(x)]
    types = [t.op.type for t in ops]
    assert types == ["Add", "Sub", "Mul", "RealDiv", "Neg", "Pow", "MatMul", "Greater",
                     "StridedSlice", "Abs"]
    assert x[0].shape.as_list() == [] and x[None, :].shape.as_list() == [1, 2]
