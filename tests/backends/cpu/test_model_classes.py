"""The model classes of the benchmark suite (benchmarks/model_fns.py: deep-MNIST CNN, ResNet
basic block, attention block, MobileNet depthwise-separable block, stacked LSTM over
lax.scan), at small batch / spatial / sequence sizes, compiled on the cpu backend: the
gradient of each loss for every parameter and the inference form against JAX's. These run
the convolution gemm and its epilogues, the depthwise kernels, strided batched dots,
column reductions and a scan with its stacked output carried in place, all together."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp

_PATH = Path(__file__).resolve().parents[3] / "benchmarks" / "model_fns.py"
_spec = importlib.util.spec_from_file_location("model_fns_for_tests", _PATH)
M = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(M)

f32 = np.float32


def _small(name, rng):
    """(params, inputs) for the model at sizes a test can afford (parameters as the
    benchmark's, except the attention block's width)."""
    if name == "cnn":
        x = rng.random((3, 28, 28, 1)).astype(f32)
        y = np.eye(10, dtype=f32)[rng.integers(0, 10, 3)]
        return M.cnn_params(rng), [x, y]
    if name == "resnet":
        return M.resnet_params(rng), [rng.standard_normal((2, 7, 9, 64)).astype(f32),
                                      rng.standard_normal((2, 7, 9, 64)).astype(f32)]
    if name == "attention":
        return M.attention_params(rng, width=32), \
            [rng.standard_normal((2, 12, 32)).astype(f32),
             rng.standard_normal((2, 12, 32)).astype(f32)]
    if name == "mobilenet":
        return M.mobilenet_params(rng), [rng.standard_normal((2, 9, 11, 64)).astype(f32),
                                         rng.standard_normal((2, 9, 11, 128)).astype(f32)]
    assert name == "lstm"
    return M.lstm_params(rng), [rng.standard_normal((5, 3, M.LSTM_WIDTH)).astype(f32),
                                rng.standard_normal((3, M.LSTM_WIDTH)).astype(f32)]


def _close(got, want, what):
    got = got if isinstance(got, (list, tuple)) else [got]
    want = want if isinstance(want, (list, tuple)) else [want]
    assert len(got) == len(want), what
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"{what} output {k}: {g.shape} vs {w.shape}"
        scale = max(float(np.max(np.abs(w))), 1e-6)
        err = float(np.max(np.abs(g.astype(np.float64) - w)))
        assert np.isfinite(g).all() and err <= 2e-4 * scale, \
            f"{what} output {k}: differs by {err:.3g} (scale {scale:.3g})"


@pytest.mark.parametrize("name", list(M.BUILDERS))
def test_model_gradients_and_inference(name):
    params, inputs = _small(name, np.random.default_rng(7))
    xl_loss, xl_infer = M.models(xnp, xp.lax)[name]
    jx_loss, jx_infer = M.models(jnp, jax.lax)[name]
    want = jax.jit(jax.grad(jx_loss))(params, inputs)
    got = xp.jit(xp.grad(xl_loss))(params, inputs)
    _close(got, want, f"{name} gradients")
    _close(xp.jit(xl_infer)(params, inputs), jax.jit(jx_infer)(params, inputs),
           f"{name} inference")
