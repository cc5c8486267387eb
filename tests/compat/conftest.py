import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.jit import flags


@pytest.fixture(autouse=True)
def fresh_graph(monkeypatch):
    """Every test starts with an empty default graph and no TF_XLA_FLAGS; clusters compile
    on their first run (lazy compilation off unless a test turns it on), so that a test
    running a step once checks the compiled code, not the executor."""
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    monkeypatch.setattr(flags, "LAZY_DEFAULT", False)
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
