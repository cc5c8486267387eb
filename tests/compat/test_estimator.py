"""tf.estimator: a custom model_fn trained, evaluated and used for prediction through
numpy_input_fn and tf.data input_fns, in the executor and with XLA auto-jit; checkpoints
carry the variables between calls; clear errors for a wrong spec or input_fn."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError

from .conftest import jit_config

R = np.random.default_rng(0)
X = R.standard_normal((400, 4)).astype(np.float32)
Y = (X @ np.array([1.0, -2.0, 0.5, 0.0], np.float32) > 0).astype(np.int32)


def model_fn(features, labels, mode, params):
    h = tf.layers.dense(features["x"], 16, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 2)
    preds = {"classes": tf.argmax(logits, 1), "probabilities": tf.nn.softmax(logits)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode=mode, predictions=preds)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        op = tf.train.GradientDescentOptimizer(params["lr"]).minimize(
            loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=op)
    acc = tf.metrics.accuracy(labels=labels, predictions=preds["classes"])
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops={"accuracy": acc})


@pytest.mark.parametrize("xla", [False, True])
def test_train_evaluate_predict(tmp_path, xla):
    cfg = tf.estimator.RunConfig(tf_random_seed=1, session_config=jit_config() if xla
                                 else None, log_step_count_steps=1000)
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), params={"lr": 0.5},
                                 config=cfg)
    train = tf.estimator.inputs.numpy_input_fn(x={"x": X}, y=Y, batch_size=50,
                                               num_epochs=None, shuffle=True)
    est.train(train, steps=150)
    ev = est.evaluate(tf.estimator.inputs.numpy_input_fn(x={"x": X}, y=Y, batch_size=100,
                                                         shuffle=False))
    assert ev["accuracy"] > 0.95 and ev["loss"] < 0.2 and ev["global_step"] == 150, ev
    est.train(train, steps=20)                 # continues from the checkpoint
    est.train(train, max_steps=100)            # already past: nothing to do
    assert est.get_variable_value("global_step") == 170
    assert "dense/kernel" in est.get_variable_names()
    preds = list(est.predict(tf.estimator.inputs.numpy_input_fn(
        x={"x": X[:20]}, shuffle=False), predict_keys="classes"))
    assert len(preds) == 20 and set(preds[0]) == {"classes"}
    assert np.mean([p["classes"] for p in preds] == Y[:20]) >= 0.9

    def dataset_fn():  # a tf.data input_fn, evaluated for a fixed number of batches
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(40)
    ev2 = est.evaluate(dataset_fn, steps=2)
    assert ev2["accuracy"] > 0.9


def test_errors(tmp_path):
    with pytest.raises(InvalidTypeError, match="shuffle"):
        tf.estimator.inputs.numpy_input_fn(x={"x": X}, y=Y)
    with pytest.raises(InvalidArgumentError, match="same length"):
        tf.estimator.inputs.numpy_input_fn(x={"x": X}, y=Y[:5], shuffle=False)
    with pytest.raises(InvalidArgumentError, match="train_op"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=tf.constant(1.0))
    est = tf.estimator.Estimator(lambda features, labels, mode: None, model_dir=str(tmp_path))
    inp = tf.estimator.inputs.numpy_input_fn(x={"x": X}, y=Y, shuffle=False)
    with pytest.raises(InvalidTypeError, match="EstimatorSpec"):
        est.train(inp, steps=1)
    with pytest.raises(InvalidArgumentError, match="both steps and max_steps"):
        est.train(inp, steps=1, max_steps=2)
