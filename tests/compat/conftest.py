import numpy as np
import pytest

import xlapy.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph(monkeypatch):
    """Every test starts with an empty default graph and no TF_XLA_FLAGS."""
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


def jit_config(level=None):
    config = tf.ConfigProto()
    config.graph_options.optimizer_options.global_jit_level = (
        tf.OptimizerOptions.ON_1 if level is None else level)
    return config


@pytest.fixture
def rng():
    return np.random.default_rng(0)
