"""TF 1.15 framework additions: register_tensor_conversion_function,
convert_to_tensor_or_indexed_slices, Graph.gradient_override_map with RegisterGradient,
variable_creator_scope, partitioners and partitioned variables, op_scope /
variable_op_scope, GradientTape in graph mode, tf.train.Checkpoint / CheckpointManager,
nondifferentiable_batch_function and the LogMessage / SummaryMetadata protobufs. Values
against NumPy and JAX, in the executor and with auto-jit."""

import os
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import NotFoundError
from xlapy.compat.v1.partitioned_variables import PartitionedVariable

from .helpers import assert_close, run_both

R = np.random.default_rng(1115)
X = R.standard_normal((3, 4)).astype(np.float32)
W = R.standard_normal((4, 5)).astype(np.float32)


# ---- tensor conversion -------------------------------------------------------------------------

class _Point:
    def __init__(self, *xy):
        self.xy = xy


class _Opaque:
    pass


def _point_to_tensor(value, dtype=None, name=None, as_ref=False):
    return tf.constant(np.array(value.xy, np.float32), dtype=dtype, name=name)


tf.register_tensor_conversion_function(_Point, _point_to_tensor)
_CALLS = []
tf.register_tensor_conversion_function(
    _Opaque, lambda v, dtype=None, name=None, as_ref=False:
    _CALLS.append("late") or tf.constant(2.0), priority=200)
tf.register_tensor_conversion_function(
    _Opaque, lambda v, dtype=None, name=None, as_ref=False:
    _CALLS.append("early") or NotImplemented, priority=10)


def test_registered_conversion_in_ops_executor_and_xla():
    def build():
        p = _Point(1.0, -2.0, 3.5)
        x = tf.placeholder(tf.float32, [3])
        return [tf.convert_to_tensor(p), tf.add(p, x), x * p], {x: np.array([1, 2, 3],
                                                                            np.float32)}
    ex, xla, *_ = run_both(build)
    want = [np.array([1, -2, 3.5]), np.array([2, 0, 6.5]), np.array([1, -4, 10.5])]
    assert_close(ex, want)
    assert_close(xla, want)


def test_registered_conversion_priority_and_not_implemented():
    _CALLS.clear()
    with tf.Graph().as_default():
        t = tf.convert_to_tensor(_Opaque())
        assert _CALLS == ["early", "late"]  # the lower number first; NotImplemented: next
        with tf.Session() as s:
            assert s.run(t) == 2.0


def test_registered_conversion_dtype_checks():
    with tf.Graph().as_default():
        t = tf.convert_to_tensor(_Point(1, 2), dtype=tf.float64)
        assert t.dtype == tf.float64

        def bad(value, dtype=None, name=None, as_ref=False):
            return tf.constant([1, 2])  # int32 whatever is asked

        class _Bad:
            pass
        tf.register_tensor_conversion_function(_Bad, bad)
        with pytest.raises(RuntimeError, match="incompatible dtype"):
            tf.convert_to_tensor(_Bad(), dtype=tf.float32)
        assert tf.convert_to_tensor(_Bad()).dtype == tf.int32

        class _NotTensor:
            pass
        tf.register_tensor_conversion_function(_NotTensor, lambda v, **kw: 3)
        with pytest.raises(RuntimeError, match="non-Tensor"):
            tf.convert_to_tensor(_NotTensor())
        # preferred_dtype is tried first, then dropped when the conversion cannot make it
        assert tf.convert_to_tensor(_Bad(), preferred_dtype=tf.float32).dtype == tf.int32
        assert tf.convert_to_tensor(_Point(1), preferred_dtype=tf.float64).dtype == \
            tf.float64


def test_register_conversion_refuses_bad_arguments():
    with pytest.raises(TypeError, match="numeric types"):
        tf.register_tensor_conversion_function(float, _point_to_tensor)
    with pytest.raises(TypeError, match="numeric types"):
        tf.register_tensor_conversion_function(np.ndarray, _point_to_tensor)
    with pytest.raises(TypeError, match="type or a tuple"):
        tf.register_tensor_conversion_function("Point", _point_to_tensor)
    with pytest.raises(TypeError, match="callable"):
        tf.register_tensor_conversion_function(_Point, 3)


def test_convert_to_tensor_or_indexed_slices():
    with tf.Graph().as_default():
        s = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([3, 2]))
        assert tf.convert_to_tensor_or_indexed_slices(s) is s
        assert tf.convert_to_tensor_or_indexed_slices(s, dtype=tf.float32) is s
        with pytest.raises(ValueError, match="requested dtype int32"):
            tf.convert_to_tensor_or_indexed_slices(s, dtype=tf.int32)
        sp = tf.SparseTensor([[0, 1]], [5.0], [2, 2])
        assert tf.convert_to_tensor_or_indexed_slices(sp) is sp
        t = tf.convert_to_tensor_or_indexed_slices([[1, 2]], dtype=tf.float32)
        assert isinstance(t, tf.Tensor) and t.dtype == tf.float32
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(t), [[1.0, 2.0]])


# ---- gradient_override_map ---------------------------------------------------------------------

@tf.RegisterGradient("FwMoreCustomSquare")
def _custom_square_grad(op, grad):
    return grad * 10.0 * op.inputs[0]  # five times the true 2x


def test_gradient_override_map_with_register_gradient():
    def build():
        x = tf.placeholder(tf.float32, [3])
        with tf.get_default_graph().gradient_override_map({"Square": "FwMoreCustomSquare"}):
            y = tf.square(x)
        y_plain = tf.square(x)
        return [y, tf.gradients(y, x)[0], tf.gradients(y_plain, x)[0]], \
            {x: np.array([1.0, -2.0, 0.5], np.float32)}
    ex, xla, *_ = run_both(build)
    xs = np.array([1.0, -2.0, 0.5])
    for got in (ex, xla):
        assert_close(got, [xs ** 2, 10 * xs, 2 * xs])
    g = tf.Graph()
    with g.as_default():
        with pytest.raises(TypeError, match="mapping strings to strings"):
            with g.gradient_override_map({"Square": 3}):
                pass


# ---- variable_creator_scope --------------------------------------------------------------------

def test_variable_creator_scope_order_and_kwargs():
    log = []

    def outer(next_creator, **kwargs):
        log.append(("outer", kwargs["name"]))
        return next_creator(**kwargs)

    def inner(next_creator, **kwargs):
        log.append(("inner", kwargs["name"]))
        kwargs["trainable"] = False
        kwargs["name"] = kwargs["name"] + "_renamed"
        return next_creator(**kwargs)

    with tf.Graph().as_default():
        with tf.variable_creator_scope(outer), tf.variable_creator_scope(inner):
            v = tf.Variable(3.0, True, name="v")  # a positional argument is a keyword
            w = tf.get_variable("w", [2], initializer=tf.ones_initializer())
        after = tf.Variable(1.0, name="after")
        assert log == [("inner", "v"), ("outer", "v_renamed"), ("inner", "w"),
                       ("outer", "w_renamed")]
        assert v.op.name == "v_renamed" and not v.trainable
        assert w.op.name == "w_renamed" and w in tf.global_variables()
        assert tf.trainable_variables() == [after]
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert s.run(v) == 3.0
            np.testing.assert_array_equal(s.run(w), [1.0, 1.0])


def test_variable_creator_may_replace_the_variable():
    with tf.Graph().as_default():
        shared = tf.Variable(7.0, name="shared")
        with tf.variable_creator_scope(lambda next_creator, **kw: shared):
            got = tf.Variable(1.0, name="ignored")
        assert got is shared
        names = [op.name for op in tf.get_default_graph().get_operations()]
        assert "ignored" not in names
        with pytest.raises(TypeError, match="callable"):
            with tf.variable_creator_scope(3):
                pass
        with pytest.raises(TypeError, match="multiple values"):
            with tf.variable_creator_scope(lambda nc, **kw: nc(**kw)):
                tf.Variable(1.0, initial_value=2.0)


# ---- partitioners ------------------------------------------------------------------------------

def test_partitioner_functions():
    p = tf.fixed_size_partitioner(3)
    assert p(shape=tf.TensorShape([10, 4]), dtype=tf.float32) == [3, 1]
    assert p(shape=tf.TensorShape([2, 4]), dtype=tf.float32) == [2, 1]  # at most the rows
    assert tf.fixed_size_partitioner(2, axis=1)(shape=[3, 8], dtype=tf.float32) == [1, 2]
    # 100 rows of 10 float32 = 40 bytes a row: 256 bytes hold 6 rows -> ceil(100/6) = 17
    va = tf.variable_axis_size_partitioner(256)
    assert va(tf.TensorShape([100, 10]), tf.float32) == [17, 1]
    assert tf.variable_axis_size_partitioner(256, max_shards=5)([100, 10], tf.float32) == \
        [5, 1]
    assert tf.variable_axis_size_partitioner(1)([7, 10], tf.float32) == [7, 1]  # a row each
    assert tf.variable_axis_size_partitioner(64, bytes_per_string_element=8)(
        [10, 2], tf.string) == [3, 1]  # 16 bytes a row: 4 rows a shard
    # 1000 x 100 float32 = 400000 bytes; min slice 65536 -> ceil(6.1) = 7, capped by max
    mm = tf.min_max_variable_partitioner(max_partitions=5, min_slice_size=64 << 10)
    assert mm(tf.TensorShape([1000, 100]), tf.float32) == [5, 1]
    mm = tf.min_max_variable_partitioner(max_partitions=50, min_slice_size=64 << 10)
    assert mm(tf.TensorShape([1000, 100]), tf.float32) == [7, 1]
    assert tf.min_max_variable_partitioner(50, min_slice_size=1)([3, 4], tf.float32) == [3, 1]
    assert tf.min_max_variable_partitioner(50)([4, 4], tf.float32) == [1, 1]
    with pytest.raises(ValueError, match="max_shard_bytes"):
        tf.variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match="max_shards"):
        tf.variable_axis_size_partitioner(10, max_shards=0)
    with pytest.raises(ValueError, match="not fully defined"):
        tf.variable_axis_size_partitioner(10)(tf.TensorShape([None, 3]), tf.float32)
    with pytest.raises(ValueError, match="axis 2"):
        tf.min_max_variable_partitioner(2, axis=2)([4, 4], tf.float32)
    with pytest.raises(ValueError, match="num_shards"):
        tf.fixed_size_partitioner(0)


def _partitioned_graph():
    full = np.arange(40, dtype=np.float32).reshape(10, 4) / 10
    with tf.variable_scope("scope"):
        w = tf.get_variable("w", initializer=full, partitioner=tf.fixed_size_partitioner(3))
    return w, full


def test_get_variable_with_partitioner_parts_and_values():
    xs = R.standard_normal((2, 10)).astype(np.float32)

    def build():
        w, full = _partitioned_graph()
        x = tf.placeholder(tf.float32, [2, 10])
        return [tf.convert_to_tensor(w), tf.matmul(x, w)] + list(w), {x: xs}
    ex, xla, *_ = run_both(build)
    full = np.arange(40, dtype=np.float32).reshape(10, 4) / 10
    want = [full, xs @ full, full[:4], full[4:7], full[7:]]  # the first part is a row longer
    assert_close(ex, want, rtol=1e-5)
    assert_close(xla, want, rtol=1e-5)
    with tf.Graph().as_default():
        w, _ = _partitioned_graph()
        assert isinstance(w, PartitionedVariable)
        assert w.name == "scope/w" and w.get_shape().as_list() == [10, 4]
        assert len(w) == 3 and w._get_partitions() == [3, 1]
        assert [v.op.name for v in w] == [f"scope/w/part_{i}" for i in range(3)]
        assert tf.global_variables() == list(w) == tf.trainable_variables()


def test_partitioned_variable_gradients_assign_and_reuse():
    with tf.Graph().as_default():
        w, full = _partitioned_graph()
        xin = tf.constant(R.standard_normal((3, 10)).astype(np.float32))
        loss = tf.reduce_sum(tf.square(tf.matmul(xin, w)))
        grads = tf.gradients(loss, list(w))
        assign = w.assign(np.ones((10, 4), np.float32))
        with tf.variable_scope("scope", reuse=True):
            again = tf.get_variable("w", [10, 4], partitioner=tf.fixed_size_partitioner(3))
        assert again is w
        with pytest.raises(ValueError, match="already exists"):
            with tf.variable_scope("scope"):
                tf.get_variable("w", [10, 4], partitioner=tf.fixed_size_partitioner(3))
        with pytest.raises(ValueError, match="No partitioner was provided"):
            with tf.variable_scope("scope", reuse=True):
                tf.get_variable("w", [10, 4])
        with pytest.raises(ValueError, match="found partitions"):
            with tf.variable_scope("scope", reuse=True):
                tf.get_variable("w", [10, 4], partitioner=tf.fixed_size_partitioner(2))
        with pytest.raises(ValueError, match="specified shape"):
            with tf.variable_scope("scope", reuse=True):
                tf.get_variable("w", [10, 5], partitioner=tf.fixed_size_partitioner(3))
        plain = tf.get_variable("plain", [4, 2])
        with pytest.raises(ValueError, match="unpartitioned version"):
            with tf.variable_scope("", reuse=tf.AUTO_REUSE):
                tf.get_variable("plain", [4, 2], partitioner=tf.fixed_size_partitioner(2))
        del plain
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            xv = s.run(xin)
            g_full = 2 * xv.T @ (xv @ full)  # d/dm sum((x m)^2)
            got = s.run(grads)
            assert_close(got, [g_full[:4], g_full[4:7], g_full[7:]], rtol=1e-4, atol=1e-4)
            s.run(assign)
            np.testing.assert_array_equal(s.run(w.as_tensor()), np.ones((10, 4)))


def test_partition_info_scope_partitioner_and_regularizer():
    seen = []

    def init(shape, dtype=None, partition_info=None):
        seen.append((list(shape), partition_info.full_shape, partition_info.var_offset,
                     partition_info.single_offset(shape)))
        return tf.fill(shape, float(partition_info.var_offset[1]))

    with tf.Graph().as_default():
        with tf.variable_scope("outer", partitioner=tf.fixed_size_partitioner(2, axis=1)):
            w = tf.get_variable("w", [3, 5], initializer=init,
                                regularizer=lambda t: tf.reduce_sum(t))
        assert seen == [([3, 3], [3, 5], [0, 0], 0), ([3, 2], [3, 5], [0, 3], 3)]
        assert [v.op.name for v in w] == ["outer/w/part_0", "outer/w/part_1"]
        losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
        assert len(losses) == 2
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(s.run(w.as_tensor()),
                                          [[0, 0, 0, 3, 3]] * 3)
            assert sum(s.run(losses)) == 3 * 2 * 3.0


def test_create_partitioned_variables():
    full = np.arange(12, dtype=np.float32).reshape(6, 2)
    with tf.Graph().as_default():
        parts = tf.create_partitioned_variables([6, 2], [4, 1], full)
        assert [p.op.name for p in parts] == [f"PartitionedVariable/part_{i}" for i in range(4)]
        assert [p.shape.as_list() for p in parts] == [[2, 2], [2, 2], [1, 2], [1, 2]]
        named = tf.create_partitioned_variables([4, 3], [1, 3], tf.zeros_initializer(),
                                                name="emb")
        assert [p.op.name for p in named] == ["emb/part_0", "emb/part_1", "emb/part_2"]
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(np.concatenate(s.run(parts)), full)
        with pytest.raises(ValueError, match="same length|must have the length"):
            tf.create_partitioned_variables([4, 3], [2], full)
        with pytest.raises(ValueError, match="one dimension"):
            tf.create_partitioned_variables([4, 4], [2, 2], tf.zeros_initializer())
        with pytest.raises(ValueError, match="Cannot create 5 slices"):
            tf.create_partitioned_variables([4, 4], [5, 1], tf.zeros_initializer())


# ---- op_scope, variable_op_scope ---------------------------------------------------------------

def test_op_scope_and_variable_op_scope():
    with tf.Graph().as_default():
        a = tf.constant(1.0)
        with tf.op_scope([a], "mine") as scope:
            b = tf.identity(a, name="b")
        assert scope == "mine/" and b.op.name == "mine/b"
        with tf.op_scope([a], None, default_name="dflt") as scope:
            assert scope == "dflt/"
        with tf.variable_op_scope([a], "vs") as vs:
            v = tf.get_variable("v", [2])
        assert vs.name == "vs" and v.op.name == "vs/v"
        with tf.variable_op_scope([a], None, default_name="layer"):
            u = tf.get_variable("u", [1])
        with tf.variable_op_scope([a], None, default_name="layer"):
            u1 = tf.get_variable("u", [1])
        assert (u.op.name, u1.op.name) == ("layer/u", "layer_1/u")


# ---- GradientTape ------------------------------------------------------------------------------

def test_gradient_tape_against_jax_executor_and_xla():
    xs = np.array([0.5, -1.0, 2.0], np.float32)
    w0 = np.array([1.5, 0.5, -2.0], np.float32)

    def build():
        x = tf.placeholder(tf.float32, [3])
        w = tf.Variable(w0, name="w")
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.sin(x) * w + x * x * w)
        gx, gw = tape.gradient(y, [x, w])
        return [gx, gw], {x: xs}
    ex, xla, sess, fetches, feed = run_both(build)
    summary = sess.cluster_summary(fetches, feed)
    assert re.search(r"1 cluster\(s\), (\d+) of \1 ops compiled", summary), summary
    f = lambda x, w: jnp.sum(jnp.sin(x) * w + x * x * w)
    want = [np.asarray(g) for g in jax.grad(f, argnums=(0, 1))(xs, w0)]
    assert_close(ex, want, rtol=1e-5)
    assert_close(xla, want, rtol=1e-5)


def test_gradient_tape_records_only_its_ops():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0, 3.0])
        w = tf.Variable([2.0, 2.0, 2.0])
        frozen = tf.Variable([1.0, 1.0, 1.0], trainable=False)
        before = x * 3.0                             # made before the tape: no gradient
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.reduce_sum(x * x * w + before + frozen * x)
            with tape.stop_recording():
                z = x * 5.0                          # not recorded: a constant for the tape
            y2 = tf.reduce_sum(z * x)
        unwatched = tf.constant([1.0, 1.0, 1.0])
        gx, gw, gf, gu = tape.gradient(y, [x, w, frozen, unwatched])
        assert gf is None and gu is None             # not trainable / not watched
        assert tape.watched_variables() == (w,)
        zero = tape.gradient(y, unwatched, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        g2 = tape.gradient(y2, x)
        d = tape.gradient({"a": y, "b": y2}, {"x": x})  # targets summed, sources' structure
        og = tape.gradient(y, x, output_gradients=tf.constant(2.0))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            got = s.run([gx, gw, zero, g2, d["x"], og])
        xv = np.array([1.0, 2.0, 3.0])
        assert_close(got, [4 * xv + 1, xv ** 2, np.zeros(3), 5 * xv, 9 * xv + 1,
                           2 * (4 * xv + 1)])


def test_gradient_tape_options_and_errors():
    with tf.Graph().as_default():
        w = tf.Variable(3.0)
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            y = w * w
        assert tape.gradient(y, w) is None
        with pytest.raises(RuntimeError, match="only be called once"):
            tape.gradient(y, w)
        with tf.GradientTape() as tape:
            made = tf.Variable(1.0)                     # made inside, never read
            y = w * 2.0
        assert tape.watched_variables() == (w,) and made.trainable
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(w)
            y = w * w
        g = tape.gradient(y, w)
        with tf.GradientTape() as tape:
            with pytest.raises(ValueError, match="not tf.Tensor"):
                tape.watch("x")
            y = w * 2.0
            with pytest.raises(ValueError, match="re-enter"):
                tape.__enter__()
        with pytest.raises(ValueError, match="must be recording"):
            with tape.stop_recording():
                pass
        with tf.GradientTape(persistent=True) as tape:
            y = w * w
            tape.reset()
            y3 = w * w * w
        assert tape.gradient(y, w) is None              # forgotten by reset
        g3 = tape.gradient(y3, w)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert s.run(g) == 6.0 and s.run(g3) == 27.0


def test_gradient_tape_jacobians():
    xs = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    with tf.Graph().as_default():
        x = tf.constant(xs)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.sin(x) * x[:, :1]                 # [2, 2], row i uses row i only
        j = tape.jacobian(y, x)
        bj = tape.batch_jacobian(y, x)
        with tf.Session() as s:
            got_j, got_bj = s.run([j, bj])
    # d y[i, j] / d x[k, l] = [i == k] ([j == l] cos(x[i, j]) x[i, 0] + [l == 0] sin(x[i, j]))
    want = np.zeros((2, 2, 2, 2))
    for i in range(2):
        for j in range(2):
            want[i, j, i, j] += np.cos(xs[i, j]) * xs[i, 0]
            want[i, j, i, 0] += np.sin(xs[i, j])
    assert got_j.shape == (2, 2, 2, 2)
    assert_close(got_j, want, rtol=1e-5)
    assert_close(got_bj, np.stack([want[b, :, b, :] for b in range(2)]), rtol=1e-5)


# ---- tf.train.Checkpoint and CheckpointManager -------------------------------------------------

def _model_graph():
    layer = tf.keras.layers.Dense(3)
    x = tf.placeholder(tf.float32, [None, 4])
    loss = tf.reduce_sum(tf.square(layer(x)))
    opt = tf.train.AdamOptimizer(0.1)
    step = tf.train.get_or_create_global_step()
    train = opt.minimize(loss, global_step=step)
    return layer, opt, step, train, x


def test_checkpoint_manager_save_restore_round_trip(tmp_path):
    d = str(tmp_path / "ckpts")
    with tf.Graph().as_default():
        layer, opt, step, train, x = _model_graph()
        ckpt = tf.train.Checkpoint(model=layer, optimizer=opt, step=step)
        mgr = tf.train.CheckpointManager(ckpt, d, max_to_keep=2)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            paths = []
            for _ in range(3):
                s.run(train, {x: X})
                paths.append(mgr.save())
            kernel, m = s.run([layer.kernel, opt.get_slot(layer.kernel, "m")])
    assert paths == [os.path.join(d, f"ckpt-{i}") for i in (1, 2, 3)]
    assert mgr.checkpoints == paths[1:] and mgr.latest_checkpoint == paths[2]
    assert tf.train.latest_checkpoint(d) == paths[2]
    assert not tf.train.checkpoint_exists(paths[0])     # beyond max_to_keep: deleted
    keys = dict(tf.train.list_variables(d))
    assert keys["model/kernel/.ATTRIBUTES/VARIABLE_VALUE"] == [4, 3]
    assert keys["model/kernel/.OPTIMIZER_SLOT/optimizer/m"] == [4, 3]
    assert {"optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE",
            "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
            "step/.ATTRIBUTES/VARIABLE_VALUE"} <= set(keys)
    # a new graph built the same way (other op names would do too) restores it
    with tf.Graph().as_default():
        with tf.variable_scope("elsewhere"):
            layer, opt, step, train, x = _model_graph()
        ckpt = tf.train.Checkpoint(model=layer, optimizer=opt, step=step)
        status = ckpt.restore(tf.train.latest_checkpoint(d))
        with tf.Session() as s:
            status.initialize_or_restore(s)
            status.assert_consumed().assert_existing_objects_matched()
            status.assert_nontrivial_match()
            np.testing.assert_array_equal(s.run(layer.kernel), kernel)
            np.testing.assert_array_equal(s.run(opt.get_slot(layer.kernel, "m")), m)
            assert s.run(step) == 3 and s.run(ckpt.save_counter) == 3
            # a manager made again finds the kept checkpoints and numbers on
            mgr2 = tf.train.CheckpointManager(ckpt, d, max_to_keep=2)
            assert mgr2.checkpoints == paths[1:]
            assert mgr2.save() == os.path.join(d, "ckpt-4")
            assert mgr2.checkpoints == [paths[2], os.path.join(d, "ckpt-4")]
            assert mgr2.save(checkpoint_number=step) == os.path.join(d, "ckpt-3")
            assert mgr2.checkpoints == [os.path.join(d, "ckpt-4"), paths[2]]


def test_checkpoint_save_write_and_restore_status(tmp_path):
    prefix = str(tmp_path / "sub" / "model")
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        u = tf.Variable(5.0, name="u")
        nested = tf.train.Checkpoint(inner=u)
        ckpt = tf.train.Checkpoint(v=v, more=[nested])
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert ckpt.save(prefix) == prefix + "-1"   # the directory is made
            s.run(v.assign([3.0, 4.0]))
            assert ckpt.save(prefix) == prefix + "-2"
            written = ckpt.write(str(tmp_path / "plain"))
            assert written == str(tmp_path / "plain")
        assert tf.train.latest_checkpoint(str(tmp_path / "sub")) == prefix + "-2"
        assert "more/0/inner/.ATTRIBUTES/VARIABLE_VALUE" in dict(
            tf.train.list_variables(prefix + "-2"))
    with tf.Graph().as_default():
        v = tf.Variable([0.0, 0.0], name="v")
        extra = tf.Variable(9.0, name="extra")
        ckpt = tf.train.Checkpoint(v=v, extra=extra)
        status = ckpt.restore(prefix + "-1")
        with tf.Session() as s:
            with pytest.raises(AssertionError, match="Unresolved object"):
                status.assert_consumed()                # more/0/inner has no object
            with pytest.raises(AssertionError, match="not assigned a value"):
                status.assert_existing_objects_matched()  # extra has no value
            status.initialize_or_restore(s)
            np.testing.assert_array_equal(s.run(v), [1.0, 2.0])
            assert s.run(extra) == 9.0                  # initialized
            assert s.run(ckpt.save_counter) == 1
        init_only = tf.train.Checkpoint(v=v).restore(None)
        with tf.Session() as s:
            init_only.initialize_or_restore(s)
            np.testing.assert_array_equal(s.run(v), [0.0, 0.0])
            with pytest.raises(AssertionError, match="No checkpoint specified"):
                init_only.assert_consumed()
        with pytest.raises(NotFoundError):
            ckpt.restore(str(tmp_path / "missing"))
        with pytest.raises(ValueError, match="trackable"):
            tf.train.Checkpoint(x=3)
        with pytest.raises(ValueError, match="max_to_keep"):
            tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=0)


def test_checkpoint_restores_a_saver_checkpoint_by_name(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(s, str(tmp_path / "old"))
    with tf.Graph().as_default():
        v = tf.Variable([0.0, 0.0], name="v")
        status = tf.train.Checkpoint(weights=v).restore(path)
        with tf.Session() as s:
            status.run_restore_ops(s)
            np.testing.assert_array_equal(s.run(v), [1.0, 2.0])
            status.assert_nontrivial_match()
            with pytest.raises(AssertionError, match="name-based"):
                status.assert_consumed()


def test_checkpoint_manager_keep_every_n_hours(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
        mgr = tf.train.CheckpointManager(ckpt, d, max_to_keep=1,
                                         keep_checkpoint_every_n_hours=1e-12)
        keep_none = tf.train.CheckpointManager(ckpt, str(tmp_path / "all"), max_to_keep=None)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            paths = [mgr.save() for _ in range(3)]
            all_paths = [keep_none.save() for _ in range(3)]
    # each older checkpoint was preserved (hours elapsed) rather than deleted
    assert all(tf.train.checkpoint_exists(p) for p in paths)
    assert mgr.checkpoints == paths[-1:]
    assert all(tf.train.checkpoint_exists(p) for p in all_paths)
    assert keep_none.checkpoints == all_paths
    assert [os.path.basename(p) for p in all_paths] == ["ckpt-4", "ckpt-5", "ckpt-6"]


# ---- nondifferentiable_batch_function, protobufs -----------------------------------------------

def test_nondifferentiable_batch_function():
    @tf.nondifferentiable_batch_function(1, 4, 1000)
    def scaled(a, b):
        return a * 2.0 + b

    with tf.Graph().as_default():
        a = tf.constant(X)
        out = scaled(a, tf.constant(1.0))
        assert tf.gradients(tf.reduce_sum(out), a) == [None]
        with tf.Session() as s:
            assert_close(s.run(out), X * 2.0 + 1.0)
        with pytest.raises(ValueError, match="supposed to be Tensors"):
            scaled(a, 1.0)
    with pytest.raises(ValueError, match="max_batch_size"):
        tf.nondifferentiable_batch_function(1, 0, 10)


def test_log_message_and_summary_metadata_protos():
    m = tf.LogMessage(level=tf.LogMessage.WARN, message="careful")
    assert isinstance(m, tf.LogMessage)
    back = tf.LogMessage.FromString(m.SerializeToString())
    assert back.level == tf.LogMessage.WARN == 30 and back.message == "careful"
    md = tf.SummaryMetadata(display_name="loss", summary_description="the loss",
                            plugin_data=tf.SummaryMetadata.PluginData(plugin_name="scalars"))
    assert isinstance(md, tf.SummaryMetadata) and not isinstance(m, tf.SummaryMetadata)
    assert tf.SummaryMetadata.FromString(md.SerializeToString()).plugin_data.plugin_name == \
        "scalars"
    # the same class as tf.Summary's metadata field takes
    v = tf.Summary.Value(tag="t", metadata=md)
    assert v.metadata.display_name == "loss"
