"""tf.contrib.layers' layer_norm, embed_sequence and optimize_loss; contrib.training's
HParams; contrib.framework's variable selection and assign_from_checkpoint_fn;
contrib.seq2seq / legacy_seq2seq sequence losses: values against NumPy, executor and XLA."""

import json
import os

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError

from .helpers import assert_close, run_both, single_cluster

R = np.random.default_rng(11)


def _log_softmax(a):
    m = a.max(-1, keepdims=True)
    return a - m - np.log(np.exp(a - m).sum(-1, keepdims=True))


# ---- layer_norm -----------------------------------------------------------------------------

@pytest.mark.parametrize("begin_norm_axis, begin_params_axis", [(1, -1), (-1, -1), (2, 1)])
def test_layer_norm_against_numpy(begin_norm_axis, begin_params_axis):
    xv = R.standard_normal((3, 4, 5)).astype(np.float32) * 3 + 1
    gv = R.uniform(0.5, 2, (4, 5) if begin_params_axis == 1 else (5,)).astype(np.float32)
    bv = R.standard_normal(gv.shape).astype(np.float32)

    def build():
        x = tf.placeholder(tf.float32, [3, 4, 5])
        y = tf.contrib.layers.layer_norm(x, begin_norm_axis=begin_norm_axis,
                                         begin_params_axis=begin_params_axis,
                                         activation_fn=tf.nn.relu)
        gamma = [v for v in tf.global_variables() if v.op.name == "LayerNorm/gamma"][0]
        beta = [v for v in tf.global_variables() if v.op.name == "LayerNorm/beta"][0]
        return [y, gamma.assign(gv), beta.assign(bv)], {x: xv}

    # (the first run assigns: compare the second, with the assigned parameters)
    ex, xla, sess, fetches, fd = run_both(build)
    got = sess.run(fetches[0], fd)
    axes = tuple(range(begin_norm_axis % 3, 3))
    m = xv.mean(axes, keepdims=True)
    v = xv.var(axes, keepdims=True)
    want = np.maximum((xv - m) / np.sqrt(v + 1e-12) * gv + bv, 0)
    assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_layer_norm_variables_and_errors():
    x = tf.placeholder(tf.float32, [2, 6])
    tf.contrib.layers.layer_norm(x, center=False)
    tf.contrib.layers.layer_norm(x, scope="ln2")
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["LayerNorm/gamma", "ln2/beta", "ln2/gamma"]
    assert all(v in tf.model_variables() for v in tf.global_variables())
    with pytest.raises(InvalidArgumentError, match="must be < rank"):
        tf.contrib.layers.layer_norm(x, begin_norm_axis=2)
    with pytest.raises(InvalidArgumentError, match="undefined rank"):
        tf.contrib.layers.layer_norm(tf.placeholder(tf.float32))


# ---- embed_sequence -------------------------------------------------------------------------

def test_embed_sequence_looks_up_its_variable():
    ids = np.array([[1, 0, 3], [2, 2, 9]], np.int32)
    table = R.standard_normal((10, 4)).astype(np.float32)
    x = tf.placeholder(tf.int32, [2, 3])
    e = tf.contrib.layers.embed_sequence(x, vocab_size=10, embed_dim=4,
                                         initializer=tf.constant_initializer(table))
    (v,) = tf.global_variables()
    assert v.op.name == "EmbedSequence/embeddings" and v.shape.as_list() == [10, 4]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert_close(s.run(e, {x: ids}), table[ids])
    with pytest.raises(InvalidArgumentError, match="vocab size"):
        tf.contrib.layers.embed_sequence(x, embed_dim=3)


# ---- optimize_loss --------------------------------------------------------------------------

def _regression():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((64, 3)).astype(np.float32)
    ys = xs @ np.array([[1.5], [-2.0], [0.5]], np.float32) + 0.25
    return xs, ys


@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "RMSProp", "Adagrad",
                                       "class", "instance", "function"])
def test_optimize_loss_trains(optimizer):
    xs, ys = _regression()
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1])
    pred = tf.contrib.layers.fully_connected(x, 1, activation_fn=None)
    loss = tf.reduce_mean(tf.square(pred - y))
    step = tf.train.get_or_create_global_step()
    opt = {"class": tf.train.GradientDescentOptimizer,
           "instance": tf.train.GradientDescentOptimizer(0.1),
           "function": lambda lr: tf.train.MomentumOptimizer(lr, 0.9)}.get(optimizer,
                                                                        optimizer)
    lr = {"Adam": 0.3, "Adagrad": 0.3, "RMSProp": 0.03}.get(optimizer, 0.1)
    train = tf.contrib.layers.optimize_loss(loss, step, lr, opt, clip_gradients=5.0)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        first = s.run(loss, {x: xs, y: ys})
        for _ in range(150):
            s.run(train, {x: xs, y: ys})
        last = s.run(loss, {x: xs, y: ys})
        assert s.run(step) == 150
    assert last < 0.02 * first, (first, last)


def test_optimize_loss_decay_multipliers_summaries_and_errors():
    xs, ys = _regression()
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    step = tf.train.get_or_create_global_step()
    decay = lambda lr, gs: tf.train.exponential_decay(lr, gs, 10, 0.5)
    train = tf.contrib.layers.optimize_loss(loss, step, 0.1, "SGD",
                                            learning_rate_decay_fn=decay,
                                            gradient_multipliers={b: 0.0})
    assert len(tf.get_collection(tf.GraphKeys.SUMMARIES)) == 2  # loss, learning_rate
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for _ in range(5):
            s.run(train, {x: xs, y: ys})
        assert s.run(b)[0] == 0.0  # multiplied by 0
        assert abs(s.run(w)).sum() > 0
    with pytest.raises(InvalidArgumentError, match="Optimizer name should be one of"):
        tf.contrib.layers.optimize_loss(loss, step, 0.1, "Nadam")
    with pytest.raises(InvalidArgumentError, match="Learning rate is None"):
        tf.contrib.layers.optimize_loss(loss, step, None, "SGD")
    with pytest.raises(InvalidArgumentError, match="Summaries should be one of"):
        tf.contrib.layers.optimize_loss(loss, step, 0.1, "SGD", summaries=["weights"])


def test_optimize_loss_compiles_into_one_cluster_with_xla():
    xs, ys = _regression()

    def build():
        x = tf.placeholder(tf.float32, [64, 3])
        y = tf.placeholder(tf.float32, [64, 1])
        pred = tf.contrib.layers.fully_connected(
            x, 1, activation_fn=None, weights_initializer=tf.constant_initializer(0.1))
        loss = tf.reduce_mean(tf.square(pred - y))
        step = tf.train.get_or_create_global_step()
        train = tf.contrib.layers.optimize_loss(loss, step, 0.1, "SGD", summaries=[])
        return train, {x: xs, y: ys}
    ex, xla, sess, fetches, feed = run_both(build)
    assert_close(xla, ex, rtol=1e-5)
    single_cluster(sess, fetches, feed)


# ---- HParams --------------------------------------------------------------------------------

def test_hparams_parse_keeps_types():
    h = tf.contrib.training.HParams(learning_rate=0.1, layers=[64, 32], use_bn=False,
                                    name="net", steps=10)
    h.parse("learning_rate=1,layers=[128,64],use_bn=true,name='abc',steps=5")
    assert h.values() == {"learning_rate": 1.0, "layers": [128, 64], "use_bn": True,
                          "name": "abc", "steps": 5}
    assert isinstance(h.learning_rate, float)
    h.parse("layers[1]=7")
    assert h.layers == [128, 7]
    assert "steps" in h and h.get("missing", 3) == 3
    assert json.loads(h.to_json()) == h.values()
    h2 = tf.contrib.training.HParams(a=1).parse_json('{"a": 4}')
    assert h2.a == 4
    h.add_hparam("extra", 2.5)
    h.set_hparam("extra", 3)
    assert h.extra == 3.0
    with pytest.raises(InvalidArgumentError, match="type 'int'"):
        h.parse("steps=1.5")
    with pytest.raises(InvalidArgumentError, match="Unknown hyperparameter"):
        h.parse("nope=1")
    with pytest.raises(InvalidArgumentError, match="Must pass a list"):
        h.set_hparam("layers", 3)
    with pytest.raises(InvalidArgumentError, match="reserved"):
        h.add_hparam("steps", 1)


# ---- variable selection, fine-tuning from a checkpoint ----------------------------------------

def test_variables_to_restore_and_assign_from_checkpoint(tmp_path):
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        with tf.variable_scope("base"):
            tf.get_variable("w", initializer=np.full([2, 2], 3.0, np.float32))
        with tf.variable_scope("head"):
            tf.get_variable("w", initializer=np.full([2], 4.0, np.float32))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver().save(s, path)
    with tf.variable_scope("base"):
        bw = tf.get_variable("w", initializer=np.zeros([2, 2], np.float32))
    with tf.variable_scope("head"):
        hw = tf.get_variable("w", initializer=np.zeros([2], np.float32))
        extra = tf.get_variable("new", initializer=np.ones([1], np.float32))
    slim = tf.contrib.slim
    assert slim.get_variables_to_restore(exclude=["head"]) == [bw]
    assert slim.get_variables_to_restore(include=["head"], exclude=["head/new"]) == [hw]
    assert tf.contrib.framework.get_variables("head", suffix="new") == [extra]
    assert tf.contrib.framework.get_variables_by_name("w") == [bw, hw]
    assert tf.contrib.framework.filter_variables(
        tf.global_variables(), include_patterns=["w"], exclude_patterns=["head"]) == [bw]
    with pytest.raises(InvalidArgumentError, match="not a list"):
        slim.get_variables_to_restore(exclude="head")
    init_fn = slim.assign_from_checkpoint_fn(path, slim.get_variables_to_restore(
        exclude=["head"]))
    missing_ok = slim.assign_from_checkpoint_fn(path, [extra, hw], ignore_missing_vars=True)
    assert slim.assign_from_checkpoint_fn(path, [extra], ignore_missing_vars=True) is None
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        init_fn(s)
        assert_close(s.run(bw), np.full([2, 2], 3.0, np.float32))
        assert_close(s.run(hw), np.zeros([2], np.float32))
        missing_ok(s)
        assert_close(s.run(hw), np.full([2], 4.0, np.float32))
        assert_close(s.run(extra), np.ones([1], np.float32))
    assert os.path.exists(path + ".index")


# ---- sequence losses ------------------------------------------------------------------------

LOGITS = R.standard_normal((3, 4, 5)).astype(np.float32)
TARGETS = R.integers(0, 5, (3, 4)).astype(np.int32)
WEIGHTS = (R.uniform(0, 1, (3, 4)) > 0.3).astype(np.float32)
CE = -np.take_along_axis(_log_softmax(LOGITS), TARGETS[..., None], -1)[..., 0] * WEIGHTS


@pytest.mark.parametrize("flags, want", [
    ({}, CE.sum() / WEIGHTS.sum()),
    ({"average_across_batch": False}, CE.sum(1) / WEIGHTS.sum(1)),
    ({"average_across_timesteps": False}, CE.sum(0) / WEIGHTS.sum(0)),
    ({"average_across_timesteps": False, "average_across_batch": False}, CE),
    ({"average_across_timesteps": False, "average_across_batch": False,
      "sum_over_timesteps": True, "sum_over_batch": True}, CE.sum() / (WEIGHTS != 0).sum()),
    ({"average_across_timesteps": False, "average_across_batch": False,
      "sum_over_timesteps": True}, CE.sum(1) / (WEIGHTS != 0).sum(1)),
])
def test_seq2seq_sequence_loss(flags, want):
    def build():
        lg = tf.placeholder(tf.float32, [3, 4, 5])
        tg = tf.placeholder(tf.int32, [3, 4])
        w = tf.placeholder(tf.float32, [3, 4])
        return tf.contrib.seq2seq.sequence_loss(lg, tg, w, **flags), \
            {lg: LOGITS, tg: TARGETS, w: WEIGHTS}
    ex, xla, _, _, _ = run_both(build)
    assert_close(ex, want.astype(np.float32), rtol=1e-5)
    assert_close(xla, want.astype(np.float32), rtol=1e-5)


def test_seq2seq_errors_and_what_is_missing_says_so():
    lg = tf.placeholder(tf.float32, [3, 4, 5])
    tg = tf.placeholder(tf.int32, [3, 4])
    with pytest.raises(InvalidArgumentError, match="Logits must be"):
        tf.contrib.seq2seq.sequence_loss(tg, tg, tg)
    with pytest.raises(InvalidArgumentError, match="cannot be set to True at same time"):
        tf.contrib.seq2seq.sequence_loss(lg, tg, tf.ones([3, 4]), sum_over_timesteps=True)
    with pytest.raises(UnimplementedError, match="InferenceHelper"):
        _ = tf.contrib.seq2seq.InferenceHelper
    with pytest.raises(AttributeError):
        _ = tf.contrib.seq2seq.NoSuchThing


def test_legacy_sequence_loss_by_example():
    lgs = [tf.constant(LOGITS[:, t]) for t in range(4)]
    tgs = [tf.constant(TARGETS[:, t]) for t in range(4)]
    ws = [tf.constant(WEIGHTS[:, t]) for t in range(4)]
    by_example = tf.contrib.legacy_seq2seq.sequence_loss_by_example(lgs, tgs, ws)
    total = tf.contrib.legacy_seq2seq.sequence_loss(lgs, tgs, ws)
    summed = tf.contrib.legacy_seq2seq.sequence_loss(lgs, tgs, ws, average_across_batch=False,
                                                     average_across_timesteps=False)
    want = CE.sum(1) / (WEIGHTS.sum(1) + 1e-12)
    with tf.Session() as s:
        a, b, c = s.run([by_example, total, summed])
    assert_close(a, want.astype(np.float32), rtol=1e-5)
    assert_close(b, np.float32(want.sum() / 3), rtol=1e-5)
    assert_close(c, np.float32(CE.sum()), rtol=1e-5)
    with pytest.raises(InvalidArgumentError, match="must be the same"):
        tf.contrib.legacy_seq2seq.sequence_loss_by_example(lgs, tgs[:2], ws)
