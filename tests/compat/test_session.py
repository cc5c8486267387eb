"""Session.run: fetch structures, feeds and their errors, variables, default sessions."""

import collections

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import (FailedPreconditionError, InvalidArgumentError,
                                    InvalidTypeError, NotFoundError, OpError,
                                    SessionClosedError)
from xlapy.errors import XlapyError

from .conftest import jit_config


def test_nested_fetches_keep_their_structure():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = x * 2.0
    z = tf.reduce_sum(y)
    Pair = collections.namedtuple("Pair", "a b")
    noop = tf.no_op()
    xv = np.array([[1, 2], [3, 4]], np.float32)
    out = tf.Session().run({"list": [y, (z, noop)], "pair": Pair(z, "x:0"), "name": "Sum:0"},
                           feed_dict={x: xv})
    np.testing.assert_array_equal(out["list"][0], xv * 2)
    assert isinstance(out["list"][1], tuple) and out["list"][1][1] is None
    assert isinstance(out["pair"], Pair) and out["pair"].a == 20.0
    np.testing.assert_array_equal(out["pair"].b, xv)
    assert out["name"] == 20.0 and isinstance(out["name"], np.float32)


def test_feeds_with_unknown_batch_dimension():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.reduce_sum(x * x, axis=1)
    sess = tf.Session()
    for n in (1, 5, 2):
        v = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
        np.testing.assert_allclose(sess.run(y, {x: v}), (v * v).sum(1))


def test_feed_errors_name_the_tensor_and_both_shapes():
    x = tf.placeholder(tf.float32, [None, 784], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    y = tf.reduce_sum(x) + tf.cast(tf.reduce_sum(labels), tf.float32)
    sess = tf.Session()
    good = {x: np.zeros((2, 784), np.float32), labels: np.zeros(2, np.int64)}
    assert sess.run(y, good) == 0
    with pytest.raises(InvalidArgumentError) as e:
        sess.run(y, {x: np.zeros((2, 785), np.float32), labels: np.zeros(2, np.int64)})
    assert "Cannot feed value of shape (2, 785) for Tensor 'images:0', which has shape " \
           "'(?, 784)'" in str(e.value)
    with pytest.raises(InvalidArgumentError, match="dtype float64 for Tensor 'labels:0', "
                                                   "which has dtype int64"):
        sess.run(y, {x: good[x], labels: np.zeros(2)})
    with pytest.raises(InvalidArgumentError, match="You must feed a value for placeholder "
                                                   r"tensor 'labels' with dtype int64 and "
                                                   r"shape \[\?\]"):
        sess.run(y, {x: good[x]})
    with pytest.raises(InvalidArgumentError, match="rank|shape"):
        sess.run(y, {x: np.zeros(784, np.float32), labels: good[labels]})
    with pytest.raises(InvalidTypeError, match="cannot be a tf.Tensor"):
        sess.run(y, {x: tf.zeros([2, 784]), labels: good[labels]})
    # a float64 batch is converted (as TF did); lists too
    assert sess.run(y, {x: np.zeros((1, 784)), labels: [3]}) == 3.0
    for err in (InvalidArgumentError, InvalidTypeError):
        assert issubclass(err, XlapyError) and issubclass(err, OpError)


def test_fetching_unknown_tensors_is_a_clear_error():
    a = tf.constant(1.0, name="a")
    sess = tf.Session()
    with pytest.raises(NotFoundError, match="'nothing:0' refers to a Tensor which does not exist"):
        sess.run("nothing:0")
    with pytest.raises(NotFoundError, match="exists but only has 1 outputs"):
        sess.run("a:3")
    other = tf.Graph()
    with other.as_default():
        b = tf.constant(2.0)
    with pytest.raises(InvalidArgumentError, match="not an element of this graph"):
        sess.run(b)
    with pytest.raises(InvalidTypeError, match="Fetch argument None has invalid type"):
        sess.run([a, None])
    with pytest.raises(InvalidTypeError, match="invalid type"):
        sess.run(3.5)
    with pytest.raises(InvalidTypeError, match="Cannot interpret feed_dict key"):
        sess.run(a, {object(): 1})


def test_variables_initialization_assign_and_ref_semantics():
    v = tf.Variable(tf.constant([1.0, 2.0]), name="v")
    sess = tf.Session()
    with pytest.raises(FailedPreconditionError, match="uninitialized value v"):
        sess.run(v)
    assert not sess.run(tf.get_default_graph().create_op(
        "IsVariableInitialized", [v._ref()]).outputs[0])
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(v), [1, 2])
    np.testing.assert_array_equal(sess.run(v.assign_add([1.0, 1.0])), [2, 3])
    np.testing.assert_array_equal(sess.run(v.assign_sub([0.5, 0.5])), [1.5, 2.5])
    # a read that control-depends on an assign sees the new value (TF 1.x ref semantics)
    assign = v.assign([10.0, 20.0])
    with tf.control_dependencies([assign]):
        after = tf.identity(v._ref()) * 1.0
    np.testing.assert_array_equal(sess.run(after), [10, 20])
    # the fetched value is a copy
    got = sess.run(v)
    got[0] = 99
    assert sess.run(v)[0] == 10
    v.load([5.0, 6.0], sess)
    np.testing.assert_array_equal(v.eval(session=sess), [5, 6])
    with pytest.raises(InvalidArgumentError, match="shape"):
        v.load([1.0, 2.0, 3.0], sess)


def test_same_results_with_xla_for_assign_chains():
    def build():
        v = tf.Variable(tf.zeros([3]), name="v")
        step = tf.Variable(0, name="step")
        x = tf.placeholder(tf.float32, [3])
        up = v.assign_add(x * 2.0)
        with tf.control_dependencies([up]):
            out = tf.identity(v._ref()) + 1.0
            inc = step.assign_add(1)
        return v, step, x, tf.group(out, inc), out
    results = []
    for config in (None, jit_config()):
        tf.reset_default_graph()
        v, step, x, train, out = build()
        sess = tf.Session(config=config)
        sess.run(tf.global_variables_initializer())
        for i in range(3):
            o, _ = sess.run([out, train], {x: np.full(3, i, np.float32)})
        results.append((o, sess.run(v), sess.run(step)))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(results[0][1], [6, 6, 6])
    assert results[0][2] == 3


def test_operation_run_tensor_eval_and_default_sessions():
    v = tf.Variable(3.0)
    y = v * 2.0
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        assert y.eval() == 6.0
        v.assign(5.0).op.run()
        assert y.eval(session=sess) == 10.0
    with pytest.raises(InvalidArgumentError, match="No default session"):
        y.eval()
    with pytest.raises(SessionClosedError, match="closed Session"):
        sess.run(y)
    isess = tf.InteractiveSession()
    v.initializer.run()
    assert y.eval() == 6.0
    isess.close()
    other = tf.Session()
    with other.as_default():
        other.run(v.initializer)
        assert y.eval() == 6.0


def test_random_ops_are_seeded_like_tensorflow():
    tf.set_random_seed(42)
    a = tf.random_normal([1000], seed=1)
    b = tf.truncated_normal([1000], stddev=2.0)
    c = tf.random_uniform([100], minval=-1.0, maxval=1.0, dtype=tf.float64)
    s1, s2 = tf.Session(), tf.Session()
    r1, r2 = s1.run([a, b, c]), s2.run([a, b, c])
    for x, y in zip(r1, r2):
        np.testing.assert_array_equal(x, y)  # same graph seed: same sequence in a new session
    assert not np.array_equal(s1.run(a), r1[0])  # the next draw differs
    assert abs(r1[0].mean()) < 0.15 and 0.85 < r1[0].std() < 1.15
    assert np.abs(r1[1]).max() <= 4.0  # truncated at two standard deviations
    assert r1[2].dtype == np.float64 and r1[2].min() >= -1 and r1[2].max() <= 1


def test_feeding_an_intermediate_tensor_cuts_its_producer():
    x = tf.placeholder(tf.float32, [2])
    y = x * 2.0
    z = y + 1.0
    assert list(tf.Session().run(z, {y: [10.0, 20.0]})) == [11, 21]


def test_make_callable_and_kernel_errors():
    x = tf.placeholder(tf.float32, [None])
    y = tf.reshape(x, [2, -1])
    sess = tf.Session()
    f = sess.make_callable(y, [x])
    assert f(np.arange(4, dtype=np.float32)).shape == (2, 2)
    with pytest.raises(InvalidArgumentError, match="Reshape"):
        f(np.arange(3, dtype=np.float32))


def test_app_run_parses_flags_and_exits_with_main_result():
    flags = tf.app.flags
    flags.DEFINE_integer("test_app_steps", 5, "steps")
    flags.DEFINE_boolean("test_app_xla", False, "xla")
    seen = {}

    def main(argv):
        seen.update(steps=flags.FLAGS.test_app_steps, xla=flags.FLAGS.test_app_xla, argv=argv)
        return 3
    with pytest.raises(SystemExit) as e:
        tf.app.run(main=main, argv=["prog", "--test_app_steps", "7", "--test_app_xla", "rest"])
    assert e.value.code == 3
    assert seen == {"steps": 7, "xla": True, "argv": ["prog", "rest"]}
    with pytest.raises(SystemExit):
        tf.app.run(main=main, argv=["prog", "--test_app_xla=false"])
    assert seen["xla"] is False


def test_partial_run_feeds_step_by_step_and_runs_each_op_once():
    x = tf.placeholder(tf.float32, [])
    y = x * 2.0
    counter = tf.Variable(0.0)
    bump = tf.assign_add(counter, 1.0)
    with tf.control_dependencies([bump]):
        y_counted = tf.identity(y)
    z = y_counted + tf.placeholder_with_default(1.0, [])
    w = tf.placeholder(tf.float32, [])
    out = z * w
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        h = s.partial_run_setup([y_counted, z, out], [x, w])
        assert s.partial_run(h, y_counted, {x: 3.0}) == 6.0
        assert s.partial_run(h, z) == 7.0
        assert s.partial_run(h, out, {w: 2.0}) == 14.0
        assert s.run(counter) == 1.0   # y_counted's dependency ran once
        with pytest.raises(tf.errors.InvalidArgumentError, match="already fed"):
            s.partial_run(h, out, {x: 1.0})
        h2 = s.partial_run_setup([y_counted], [x])
        with pytest.raises(tf.errors.InvalidArgumentError, match="not specified"):
            s.partial_run(h2, z, {x: 1.0})
        with pytest.raises(tf.errors.InvalidArgumentError, match="partial_run_setup"):
            s.partial_run("nope", y)


def test_control_dependency_on_a_fed_placeholder_is_met():
    """tf.metrics.mean(x) on a fed placeholder: its update depends (control) on x's op,
    which the feed replaces."""
    x = tf.placeholder(tf.float32, [None])
    mean, update = tf.metrics.mean(x)
    with tf.control_dependencies([x.op]):
        y = tf.identity(x * 2.0)
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        s.run(update, {x: [1.0, 3.0]})
        s.run(update, {x: [5.0]})
        assert s.run(mean) == 3.0
        np.testing.assert_array_equal(s.run(y, {x: [1.0, 2.0]}), [2.0, 4.0])
