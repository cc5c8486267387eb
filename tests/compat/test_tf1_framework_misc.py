"""TF 1.x top-level framework utilities (ops/api_misc.py, misc_framework.py, misc_io_ops.py):
tf.IndexedSlices, tf.is_tensor, collections, tf.get_local_variable, tf.py_function,
tf.where_v2, old names (arg_max, to_double, ...), scopes (init_scope, colocate_with,
container), shape broadcasting, tf.DeviceSpec, the enums, tf.gradients'
unconnected_gradients, tf.get_static_value, tf.assert_variables_initialized,
tf.parallel_stack, tf.timestamp, tf.switch_case, tf.vectorized_map and tf.io's
serialize_tensor / parse_tensor, base64, matching_files and write_graph. Values against
NumPy (executor and XLA_CPU where the ops compute) and TF's documented results."""

import base64
import logging
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1 import errors
from xlapy.compat.v1.errors import (FailedPreconditionError, InvalidArgumentError,
                                    InvalidTypeError)

from .helpers import assert_close, run_executor_and_xla_cpu

R = np.random.default_rng(11)
X = R.standard_normal((3, 4)).astype(np.float32)


def run(fetches, feed=None):
    return tf.Session().run(fetches, feed)


# ---- tf.IndexedSlices ------------------------------------------------------------------------

def test_indexed_slices_attributes_and_dense_value():
    vals = R.standard_normal((4, 3)).astype(np.float32)
    idx = np.array([2, 0, 2, 4], np.int32)
    want = np.zeros((5, 3), np.float32)
    np.add.at(want, idx, vals)  # repeated indices add up

    def build():
        s = tf.IndexedSlices(tf.constant(vals), tf.constant(idx), tf.constant([5, 3]))
        return {"dense": tf.convert_to_tensor(s), "plus": tf.add(s, 1.0),
                "neg": tf.convert_to_tensor(-s)}, None
    for got in run_executor_and_xla_cpu(build):
        assert_close(got["dense"], want)
        assert_close(got["plus"], want + 1)
        assert_close(got["neg"], -want)

    v = tf.constant(vals, name="vals")
    s = tf.IndexedSlices(v, tf.constant(idx), tf.constant([5, 3]))
    assert s.values is v and s.indices.dtype == tf.int32
    assert s.dtype == tf.float32 and s.name == "vals:0" and s.op is v.op
    assert s.graph is tf.get_default_graph() and s.device == v.device
    assert s.get_shape().as_list() == [5, 3] and s.shape.as_list() == [5, 3]
    assert tf.convert_to_tensor(s).shape.as_list() == [5, 3]
    assert "IndexedSlices(indices=" in str(s)


def test_indexed_slices_fetched_as_a_value():
    s = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([0, 2]),
                         tf.constant([3, 2]))
    no_shape = tf.IndexedSlices(tf.constant([[5.0]]), tf.constant([1]))
    got = tf.Session().run({"s": s, "n": [no_shape]})
    assert isinstance(got["s"], tf.IndexedSlicesValue)
    np.testing.assert_array_equal(got["s"].values, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(got["s"].indices, [0, 2])
    np.testing.assert_array_equal(got["s"].dense_shape, [3, 2])
    n = got["n"][0]
    assert n.dense_shape is None and n.indices.tolist() == [1] and n.values.tolist() == [[5.0]]


def test_indexed_slices_errors_and_value():
    s = tf.IndexedSlices(tf.ones([2, 2]), tf.constant([0, 1]))
    assert s.dense_shape is None and s.get_shape().ndims is None
    with pytest.raises(ValueError, match="without dense_shape"):
        tf.convert_to_tensor(s)
    with pytest.raises(TypeError, match="indices"):
        tf.IndexedSlices(tf.ones([2]), tf.constant([0.0, 1.0]))
    p = tf.placeholder(tf.int64, [2])
    dyn = tf.IndexedSlices(tf.ones([2, 2]), tf.constant([2, 0], tf.int64), p)
    assert dyn.get_shape().as_list() == [None, None]
    assert_close(run(tf.convert_to_tensor(dyn), {p: np.array([3, 2])}),
                 np.array([[1, 1], [0, 0], [1, 1]], np.float32))
    v = tf.IndexedSlicesValue(values=np.ones((1, 2)), indices=np.array([3]),
                              dense_shape=np.array([4, 2]))
    assert v._fields == ("values", "indices", "dense_shape") and v.indices[0] == 3
    # the components of an IndexedSlices fetched into an IndexedSlicesValue
    s = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([2, 2]))
    got = tf.IndexedSlicesValue(*run([s.values, s.indices, s.dense_shape]))
    assert_close(got.values, np.array([[1.0, 2.0]], np.float32))


def test_is_tensor():
    v = tf.Variable(1.0)
    st = tf.SparseTensor([[0]], [1.0], [2])
    s = tf.IndexedSlices(tf.ones([1]), [0], [3])
    assert all(tf.is_tensor(x) for x in (tf.constant(1), v, st, s))
    assert not any(tf.is_tensor(x) for x in (1.0, np.ones(2), [tf.constant(1)], "a"))


# ---- collections and variables ------------------------------------------------------------------

def test_collections():
    ref = tf.get_collection_ref("mine")
    assert ref == [] and ref is tf.get_default_graph().get_collection_ref("mine")
    ref.append(1)
    assert tf.get_collection("mine") == [1]
    tf.add_to_collections(["a", "b", "a"], 7)
    tf.add_to_collections("c", 8)
    assert tf.get_collection("a") == [7] and tf.get_collection("b") == [7]
    assert tf.get_collection("c") == [8]


def test_get_local_variable():
    v = tf.get_local_variable("lv", [2], initializer=tf.constant_initializer(3.0),
                              trainable=True, collections=["extra"])
    assert v in tf.local_variables() and v in tf.get_collection("extra")
    assert v not in tf.global_variables() and v not in tf.trainable_variables()
    assert v.op.name == "lv"
    with tf.Session() as sess:
        sess.run(tf.initialize_local_variables())
        assert_close(sess.run(v), np.full(2, 3.0, np.float32))
    assert tf.initialize_local_variables is tf.local_variables_initializer


def test_assert_variables_initialized():
    assert tf.assert_variables_initialized() is None  # no variables
    a = tf.Variable([1.0, 2.0], name="a")
    b = tf.Variable(3, name="b")
    check = tf.assert_variables_initialized()
    check_a = tf.assert_variables_initialized([a])
    assert isinstance(check, tf.Operation)
    with tf.Session() as sess:
        with pytest.raises(FailedPreconditionError, match="uninitialized"):
            sess.run(check)
        sess.run(a.initializer)
        sess.run(check_a)  # a alone is initialized now
        with pytest.raises(FailedPreconditionError, match="b"):
            sess.run(check)
        sess.run(b.initializer)
        assert sess.run(check) is None


# ---- py_function ------------------------------------------------------------------------------

def test_py_function():
    calls = []

    def f(x, s):
        calls.append((type(x.numpy()), s.numpy()))
        return x * 2, np.int32(len(s.numpy()))

    x = tf.constant([1.0, 2.0])
    out = tf.py_function(f, [x, tf.constant("abc")], [tf.float32, tf.int32])
    assert isinstance(out, list) and [o.dtype for o in out] == [tf.float32, tf.int32]
    one = tf.py_function(lambda a: a.numpy() + 1, [tf.constant(1.5)], tf.float64)
    assert isinstance(one, tf.Tensor) and one.dtype == tf.float64
    op = tf.py_function(lambda a: calls.append("side") or None, [x], [])
    assert isinstance(op, tf.Operation)
    got = run(out + [one])
    assert_close(got[0], np.array([2.0, 4.0], np.float32))
    assert got[1] == 3 and got[2] == 2.5
    assert calls[0] == (np.ndarray, b"abc")  # a string scalar's numpy() is bytes
    run(op)
    assert calls[-1] == "side"
    with pytest.raises(TypeError):
        tf.py_function(3, [x], tf.float32)


# ---- where_v2, old names, casts -----------------------------------------------------------------

def test_where_v2_and_old_names():
    c = X > 0

    def build():
        x = tf.constant(X)
        return {"w": tf.where_v2(x > 0, x, tf.constant([10.0, 20.0, 30.0, 40.0])),
                "wc": tf.where_v2(tf.constant([True, False, True, False]), x, 0.0),
                "amax": tf.arg_max(x, 1), "amin": tf.arg_min(x, dimension=0,
                                                             output_type=tf.int32),
                "d": tf.to_double(x), "c": tf.to_complex64(x)}, None
    for got in run_executor_and_xla_cpu(build):
        assert_close(got["w"], np.where(c, X, np.float32([10, 20, 30, 40])))
        assert_close(got["wc"], np.where([True, False, True, False], X, np.float32(0)))
        assert_close(got["amax"], np.argmax(X, 1).astype(np.int64))
        assert_close(got["amin"], np.argmin(X, 0).astype(np.int32))
        assert got["d"].dtype == np.float64 and got["c"].dtype == np.complex64
        assert_close(got["d"], X.astype(np.float64))
        assert_close(got["c"], X.astype(np.complex64))
    # where_v2 with only a condition: the coordinates of the true elements
    assert_close(run(tf.where_v2(tf.constant([[True, False], [False, True]]))),
                 np.array([[0, 0], [1, 1]], np.int64))
    # the gradient of where_v2 sums over the broadcast dimensions
    y_np = np.float32([1, 2, 3, 4])
    x, y = tf.constant(X), tf.constant(y_np)
    gx, gy = tf.gradients(tf.reduce_sum(tf.where_v2(x > 0, x * x, y)), [x, y])
    jx, jy = jax.grad(lambda a, b: jnp.sum(jnp.where(a > 0, a * a, b)), (0, 1))(X, y_np)
    assert_close(run(gx), np.asarray(jx))
    assert_close(run(gy), np.asarray(jy))


def test_parallel_stack():
    a, b = X[0], X[1]

    def build():
        return tf.parallel_stack([tf.constant(a), tf.constant(b)]), None
    for got in run_executor_and_xla_cpu(build):
        assert_close(got, np.stack([a, b]))
    with pytest.raises(ValueError, match="known"):
        tf.parallel_stack([tf.placeholder(tf.float32, [None])])
    with pytest.raises(ValueError):
        tf.parallel_stack([tf.ones([2]), tf.ones([3])])


# ---- scopes --------------------------------------------------------------------------------------

def test_init_scope_clears_control_dependencies_and_lifts_out_of_loops():
    a = tf.constant(1.0, name="a")
    with tf.name_scope("outer"), tf.control_dependencies([a]):
        inside = tf.constant(2.0, name="inside")
        with tf.init_scope():
            lifted = tf.constant(3.0, name="lifted")
    assert inside.op.control_inputs == [a.op] and lifted.op.control_inputs == []
    assert lifted.op.name == "outer/lifted"
    root = tf.get_default_graph()
    made = []

    def body(i):
        with tf.init_scope():
            made.append(tf.constant(5, name="init_const"))
        return [i + made[-1]]
    out = tf.while_loop(lambda i: i < 12, body, [tf.constant(0)])
    assert made[0].graph is root
    assert run(out) == 15


def test_colocate_with_places_ops_on_the_device_of_the_op():
    with tf.device("/device:XLA_CPU:0"):
        x = tf.constant(X)
    with tf.device("/device:CPU:0"):
        with tf.colocate_with(x):
            y = x * 2.0
        z = x + 1.0
        with tf.colocate_with(x.op):
            w = tf.identity(x)
        with tf.colocate_with(None, ignore_existing=True):
            u = tf.identity(x)
    assert y.device == x.device == w.device and "XLA_CPU" in y.device
    assert "device:CPU:0" in z.device and u.device == z.device
    v = tf.Variable(1.0)
    with tf.device("/device:CPU:0"), tf.colocate_with(v):
        t = tf.identity(v)
    assert t.device == ""  # v has no device: the tf.device scope is set aside
    assert_close(run([y, z, w]), [X * 2, X + 1, X])
    with pytest.raises(ValueError, match="ignore_existing"):
        with tf.colocate_with(None):
            pass


def test_container():
    with tf.container("experiment0") as c:
        v = tf.Variable(2.0)
    assert c == "experiment0"
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(v) == 2.0
    with pytest.raises(TypeError):
        with tf.container(3):
            pass


# ---- shapes ------------------------------------------------------------------------------------

def test_dimension_value_and_broadcast_static_shape():
    assert tf.dimension_value(tf.Dimension(4)) == 4
    assert tf.dimension_value(tf.Dimension(None)) is None
    assert tf.dimension_value(7) == 7 and tf.dimension_value(None) is None
    assert tf.dimension_value(tf.TensorShape([None, 3])[1]) == 3
    s = tf.broadcast_static_shape(tf.TensorShape([None, 1, 3]), tf.TensorShape([4, 1]))
    assert s.as_list() == [None, 4, 3]
    assert tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([5])).as_list() \
        == [2, 5]
    assert tf.broadcast_static_shape(tf.TensorShape(None), tf.TensorShape([2])).ndims is None
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        tf.broadcast_static_shape(tf.TensorShape([2, 3]), tf.TensorShape([4]))


def test_broadcast_dynamic_shape():
    a = np.zeros((2, 1, 3), np.float32)
    b = np.zeros((4, 1), np.float32)

    def build():
        x = tf.placeholder(tf.float32, [None, 1, 3])
        y = tf.placeholder(tf.float32, [None, 1])
        return {"dyn": tf.broadcast_dynamic_shape(tf.shape(x), tf.shape(y)),
                "dyn_rev": tf.broadcast_dynamic_shape(tf.shape(y), tf.shape(x))}, \
            {x: a, y: b}
    for got in run_executor_and_xla_cpu(build):
        assert_close(got["dyn"], np.array(np.broadcast_shapes(a.shape, b.shape), np.int32))
        assert_close(got["dyn_rev"], np.array([2, 4, 3], np.int32))
    static = tf.broadcast_dynamic_shape(tf.constant([2, 1]), tf.constant([3]))
    assert_close(run(static), np.array([2, 3], np.int32))
    assert_close(run(tf.broadcast_dynamic_shape(np.array([5, 1], np.int64),
                                                tf.constant([1, 1, 7], tf.int64))),
                 np.array([1, 5, 7], np.int64))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        tf.broadcast_dynamic_shape(tf.constant([2, 3]), tf.constant([4]))
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None])
    r = tf.broadcast_dynamic_shape(tf.shape(x), tf.shape(y))
    with pytest.raises(InvalidArgumentError, match="Incompatible shapes"):
        run(r, {x: np.zeros((2, 3)), y: np.zeros(4)})
    assert_close(run(r, {x: np.zeros((2, 3)), y: np.zeros(1)}), np.array([2, 3], np.int32))


def test_get_static_value():
    c = tf.constant([[1, 2]])
    got = tf.get_static_value(c)
    assert_close(got, np.array([[1, 2]], np.int32))
    got[0, 0] = 9  # a copy: the graph's constant is unchanged
    assert_close(tf.get_static_value(c), np.array([[1, 2]], np.int32))
    assert_close(tf.get_static_value(tf.shape(tf.ones([2, 5]))), np.array([2, 5], np.int32))
    p = tf.placeholder(tf.int32, [])
    assert tf.get_static_value(p) is None and tf.get_static_value(p + 1) is None
    assert tf.get_static_value(tf.Variable(1.0)) is None
    assert tf.get_static_value(3) == 3
    part = tf.get_static_value(tf.stack([tf.constant(4), p]), partial=True)
    assert part.tolist() == [4, None]
    assert tf.get_static_value(tf.stack([tf.constant(4), p])) is None


# ---- classes and enums ---------------------------------------------------------------------------

def test_device_spec():
    d = tf.DeviceSpec.from_string("/job:ps/replica:0/task:1/device:gpu:2")
    assert (d.job, d.replica, d.task, d.device_type, d.device_index) == ("ps", 0, 1, "GPU", 2)
    assert d.to_string() == "/job:ps/replica:0/task:1/device:GPU:2"
    assert tf.DeviceSpec.from_string("/cpu:0").to_string() == "/device:CPU:0"
    assert tf.DeviceSpec.from_string("/device:XLA_CPU:*").device_index is None
    assert tf.DeviceSpec(device_type="CPU").to_string() == "/device:CPU:*"
    assert tf.DeviceSpec().to_string() == "" and tf.DeviceSpec.from_string("").job is None
    a = tf.DeviceSpec(job="worker", task=3)
    a.merge_from(tf.DeviceSpec(task=5, device_type="CPU", device_index=0))
    assert a.to_string() == "/job:worker/task:5/device:CPU:0"
    b = tf.DeviceSpec(job="w").parse_from_string("/task:2/device:GPU:1")
    assert b.to_string() == "/job:w/task:2/device:GPU:1"
    assert b.make_merged_spec(tf.DeviceSpec(job="x")).job == "x" and b.job == "w"
    assert b.replace(device_index=4).to_string() == "/job:w/task:2/device:GPU:4"
    assert tf.DeviceSpec.from_string("/task:2") == tf.DeviceSpec(task=2)
    with pytest.raises(ValueError, match="Unknown attribute"):
        tf.DeviceSpec.from_string("/foo:1")
    with pytest.raises(ValueError):
        tf.DeviceSpec.from_string("/task:x")
    with tf.device(tf.DeviceSpec(device_type="CPU", device_index=0).to_string()):
        c = tf.constant(1)
    assert c.device.endswith("/device:CPU:0")


def test_enums_and_constants():
    assert tf.AggregationMethod.ADD_N == 0 and tf.AggregationMethod.DEFAULT == 0
    assert tf.AggregationMethod.EXPERIMENTAL_TREE == 1
    assert tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N == 2
    assert tf.UnconnectedGradients("zero") is tf.UnconnectedGradients.ZERO
    assert tf.UnconnectedGradients.NONE.value == "none"
    assert [(m.name, m.value) for m in tf.VariableAggregation] == [
        ("NONE", 0), ("SUM", 1), ("MEAN", 2), ("ONLY_FIRST_REPLICA", 3)]
    assert tf.VariableAggregation.ONLY_FIRST_TOWER is tf.VariableAggregation.ONLY_FIRST_REPLICA
    assert [(m.name, m.value) for m in tf.VariableSynchronization] == [
        ("AUTO", 0), ("NONE", 1), ("ON_WRITE", 2), ("ON_READ", 3)]
    assert tf.OpError is errors.OpError and issubclass(tf.errors.NotFoundError, tf.OpError)
    assert tf.NoGradient is tf.NotDifferentiable
    assert isinstance(tf.GIT_VERSION, str) and "xlapy" in tf.GIT_VERSION
    assert isinstance(tf.COMPILER_VERSION, str) and "xlapy" in tf.COMPILER_VERSION
    assert tf.resource_variables_enabled() is False
    assert tf.get_logger() is logging.getLogger("tensorflow")
    assert tf.get_logger().name == "tensorflow"


def test_no_gradient():
    assert tf.NoGradient is tf.NotDifferentiable
    tf.NoGradient("XlapyTestNoGradOp")  # a type that does not exist is remembered
    with pytest.raises(TypeError):
        tf.NoGradient(3)


def test_gradients_unconnected_and_aggregation():
    x = tf.constant([1.0, 2.0])
    y = tf.constant(3.0)
    v = tf.Variable([[1.0, 2.0]])
    loss = tf.reduce_sum(x * x) + tf.reduce_sum(x)  # x is used twice: two partials add
    g_none = tf.gradients(loss, [x, y, v])
    assert g_none[1] is None and g_none[2] is None
    g_zero = tf.gradients(loss, [x, y, v], unconnected_gradients="zero")
    g_zero2 = tf.gradients(loss, [x, y], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert g_zero[2].shape.as_list() == [1, 2]
    g_tree = tf.gradients(loss, x, aggregation_method=tf.AggregationMethod.EXPERIMENTAL_TREE)
    with tf.Session() as sess:
        sess.run(v.initializer)
        gz, gz2, gt = sess.run([g_zero, g_zero2, g_tree])
    assert_close(gz[0], np.array([3.0, 5.0], np.float32))
    assert gz[1] == 0.0 and gz2[1] == 0.0
    assert_close(gz[2], np.zeros((1, 2), np.float32))
    assert_close(gt[0], np.array([3.0, 5.0], np.float32))
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tf.gradients(loss, x, unconnected_gradients="ones")
    with pytest.raises(ValueError, match="aggregation_method"):
        tf.gradients(loss, x, aggregation_method=7)


# ---- control flow ----------------------------------------------------------------------------

def test_switch_case():
    def build():
        i = tf.placeholder(tf.int32, [])
        x = tf.constant(X)
        fns = [lambda: x * 2.0, lambda: x + 1.0, lambda: -x]
        return {"list": tf.switch_case(i, fns),
                "dict": tf.switch_case(i, {1: fns[1], 0: fns[0]}, default=lambda: x * 0.0),
                "pairs": tf.switch_case(i, [(1, fns[2]), (0, fns[1])])}, i
    want = [X * 2, X + 1, -X]
    execs = []
    for xla in (False, True):
        g = tf.Graph()
        with g.as_default():
            with tf.device("/device:XLA_CPU:0" if xla else None):
                f, i = build()
            sess = tf.Session(graph=g)
            execs.append({k: sess.run(f, {i: k}) for k in (-1, 0, 1, 2, 5)})
    for got in execs:
        for k in (0, 1, 2):
            assert_close(got[k]["list"], want[k])
        assert_close(got[-1]["list"], want[2])  # out of range: the last branch
        assert_close(got[5]["list"], want[2])
        assert_close(got[0]["dict"], want[0])
        assert_close(got[1]["dict"], want[1])
        for k in (-1, 2, 5):
            assert_close(got[k]["dict"], X * 0)  # out of range: the default
        assert_close(got[0]["pairs"], want[1])
        assert_close(got[1]["pairs"], want[2])
        assert_close(got[5]["pairs"], want[2])

    # only the branch taken runs
    ran = []
    i = tf.placeholder(tf.int32, [])
    r = tf.switch_case(i, [
        lambda: tf.py_function(lambda: ran.append(0) or np.float32(0), [], tf.float32),
        lambda: tf.py_function(lambda: ran.append(1) or np.float32(1), [], tf.float32)])
    assert run(r, {i: 1}) == 1.0 and ran == [1]
    # gradients through the branch taken
    x = tf.constant(X)
    y = tf.switch_case(tf.constant(1), [lambda: x * x, lambda: tf.sin(x)])
    assert_close(run(tf.gradients(tf.reduce_sum(y), x)[0]), np.cos(X))
    with pytest.raises(ValueError, match="contiguous"):
        tf.switch_case(tf.constant(0), {0: lambda: x, 2: lambda: x})
    with pytest.raises(TypeError, match="int32"):
        tf.switch_case(tf.constant(0.0), [lambda: x])
    with pytest.raises(ValueError, match="scalar"):
        tf.switch_case(tf.constant([0]), [lambda: x])
    with pytest.raises(TypeError):
        tf.switch_case(tf.constant(0), [(0, 3)])


def test_vectorized_map():
    def build():
        x = tf.constant(X)
        y = tf.constant(X[:, :2] * 3)
        return {"one": tf.vectorized_map(lambda r: tf.reduce_sum(r * r), x),
                "nested": tf.vectorized_map(lambda p: {"s": p[0] * 2.0, "t": p[1][::-1]},
                                            (x, y))}, None
    for got in run_executor_and_xla_cpu(build):
        assert_close(got["one"], (X * X).sum(1), rtol=1e-5)
        assert_close(got["nested"]["s"], X * 2)
        assert_close(got["nested"]["t"], (X[:, :2] * 3)[:, ::-1])
    p = tf.placeholder(tf.float32, [None, 2])
    out = tf.vectorized_map(lambda r: r + 1.0, p)
    assert_close(run(out, {p: np.ones((5, 2))}), np.full((5, 2), 2.0, np.float32))
    with pytest.raises(ValueError):
        tf.vectorized_map(lambda r: r, (tf.ones([2]), tf.ones([3])))


def test_timestamp():
    t = tf.timestamp()
    assert t.dtype == tf.float64 and t.shape.as_list() == []
    with tf.Session() as sess:
        before = time.time()
        a = sess.run(t)
        b = sess.run(t)
        after = time.time()
    assert before <= a <= b <= after  # read when the op runs, not when the graph is built


# ---- tf.io ------------------------------------------------------------------------------------

def test_serialize_tensor_bytes_as_tf():
    # TF 1.15: tf.io.serialize_tensor(tf.constant(1.0)) == b'\x08\x01\x12\x00"\x04\x00\x00\x80?'
    got = run([tf.io.serialize_tensor(tf.constant(1.0)),
               tf.serialize_tensor(tf.constant([1, 2])),
               tf.io.serialize_tensor(tf.constant("ab"))])
    assert got[0] == b'\x08\x01\x12\x00"\x04\x00\x00\x80?'
    assert got[1] == b'\x08\x03\x12\x04\x12\x02\x08\x02"\x08\x01\x00\x00\x00\x02\x00\x00\x00'
    assert got[2] == b"\x08\x07\x12\x00B\x02ab"


@pytest.mark.parametrize("value", [
    X, np.arange(6, dtype=np.int64).reshape(2, 3, 1), np.array(True),
    np.array([1.5, -2.25], np.float16), np.array([[1 + 2j, -3j]], np.complex64),
    np.array([200, 3], np.uint8), np.array([], np.float64).reshape(0, 2),
    np.array([[b"a", b""], [b"\xff", b"xyz"]], dtype=object)])
def test_serialize_parse_round_trip(value):
    dt = tf.string if value.dtype == object else tf.as_dtype(value.dtype)
    ser = tf.io.serialize_tensor(tf.constant(value, dtype=dt))
    back = tf.io.parse_tensor(ser, dt)
    back2 = tf.parse_tensor(ser, out_type=dt)
    assert ser.shape.as_list() == [] and ser.dtype == tf.string and back.dtype == dt
    got, got2 = run([back, back2])
    assert got.dtype == value.dtype and got.shape == value.shape
    np.testing.assert_array_equal(got, value)
    np.testing.assert_array_equal(got2, value)


def test_parse_tensor_errors():
    ser = tf.io.serialize_tensor(tf.constant([1.0]))
    with pytest.raises(InvalidArgumentError, match=r"Type mismatch.*float32.*int32"):
        run(tf.io.parse_tensor(ser, tf.int32))
    with pytest.raises(InvalidArgumentError, match="Could not parse"):
        run(tf.io.parse_tensor(tf.constant(b"\xff\xff\xff"), tf.float32))
    with pytest.raises(TypeError):
        tf.io.parse_tensor(tf.constant(1.0), tf.float32)
    with pytest.raises(ValueError, match="scalar"):
        tf.io.parse_tensor(tf.constant(["a", "b"]), tf.float32)


def test_base64():
    data = [b"hello", b"\xfb\xff\xfe", b"", b"ab", bytes(range(256))]
    enc, enc_pad = run([tf.io.encode_base64(data), tf.encode_base64(data, pad=True)])
    assert enc[0] == b"aGVsbG8" and enc_pad[0] == b"aGVsbG8="  # TF's documented results
    assert enc[1] == b"-__-"  # the web-safe alphabet ('-' and '_')
    for d, e, ep in zip(data, enc, enc_pad):
        assert ep == base64.urlsafe_b64encode(d) and e == ep.rstrip(b"=")
    dec, dec_pad = run([tf.io.decode_base64(enc), tf.decode_base64(enc_pad)])
    assert list(dec) == data and list(dec_pad) == data
    two_d = run(tf.io.decode_base64(tf.constant([[b"YQ", b"YWI="]])))
    assert two_d.shape == (1, 2) and two_d.tolist() == [[b"a", b"ab"]]
    for bad in (b"a+b/", b"ab c", b"a", b"YQ=a"):
        with pytest.raises(InvalidArgumentError):
            run(tf.io.decode_base64(tf.constant(bad)))
    with pytest.raises(TypeError):
        tf.io.encode_base64(tf.constant(1))


def test_matching_files(tmp_path):
    for n in ("b.txt", "a.txt", "c.csv", ".hidden.txt", "sub/d.txt"):
        p = tmp_path / n
        p.parent.mkdir(exist_ok=True)
        p.write_text("x")
    d = str(tmp_path)
    got = run(tf.io.matching_files(os.path.join(d, "*.txt")))
    assert got.tolist() == [os.path.join(d, n).encode() for n in (".hidden.txt", "a.txt",
                                                                  "b.txt")]
    both = run(tf.matching_files([os.path.join(d, "*.csv"), os.path.join(d, "*", "*.txt")]))
    assert both.tolist() == sorted([os.path.join(d, "c.csv").encode(),
                                    os.path.join(d, "sub", "d.txt").encode()])
    none = run(tf.io.matching_files(os.path.join(d, "*.nothing")))
    assert none.shape == (0,) and none.dtype == object
    with pytest.raises(ValueError):
        tf.io.matching_files(tf.constant([["a"]]))


def test_io_write_graph(tmp_path):
    tf.constant(1.0, name="c")
    path = tf.io.write_graph(tf.get_default_graph(), str(tmp_path), "g.pbtxt")
    assert path == os.path.join(str(tmp_path), "g.pbtxt")
    text = open(path).read()
    assert 'name: "c"' in text and 'op: "Const"' in text
    path = tf.io.write_graph(tf.get_default_graph().as_graph_def(), str(tmp_path), "g.pb",
                             as_text=False)
    g = tf.GraphDef()
    g.ParseFromString(open(path, "rb").read())
    assert [n.name for n in g.node] == ["c"]
    with pytest.raises(InvalidTypeError):
        tf.io.write_graph(3, str(tmp_path), "x")
