"""The gpu backend with a GPU: the corpus against the interpreter, dots through cuBLAS,
xp.jit(backend="gpu"). These skip without a GPU (no cuda-python, no driver or no device),
saying which. Without a GPU: the clear errors xp.jit, run-hlo and tf.device give, and TF's
soft placement of XLA_GPU ops on the CPU."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

import xlapy as xp
import xlapy.compat.v1 as tf
from xlapy.backends.base import flatten, get_platform
from xlapy.backends.gpu.runtime import cuda
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.errors import XlapyError
from xlapy.hlo import parse_file

_spec = importlib.util.spec_from_file_location("gpu_corpus",
                                               pathlib.Path(__file__).with_name("gpu_corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)


def _why_no_gpu() -> str | None:
    try:
        cuda.default_context()
    except XlapyError as e:
        return str(e)
    return None


NO_GPU = _why_no_gpu()
needs_gpu = pytest.mark.skipif(NO_GPU is not None, reason=f"needs a CUDA GPU: {NO_GPU}")
without_gpu = pytest.mark.skipif(NO_GPU is None, reason="checks the behaviour without a GPU")


@needs_gpu
@pytest.mark.parametrize("entry,filename", corpus.CASES, ids=corpus.FILES)
def test_gpu_matches_interpreter(entry, filename):
    refused = corpus.refusal(entry, filename)
    if refused:
        pytest.skip(f"refused by the gpu backend ({refused}; checked without a GPU)")
    module = parse_file(corpus.CORPUS / filename)
    inputs = corpus.load_inputs(entry)
    got = flatten(get_platform("gpu").compiler.compile(module).run(*inputs))
    corpus.assert_matches_interpreter(module, entry, inputs, got)


@needs_gpu
def test_jit_on_gpu_softmax_and_matmul():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 1000)).astype(np.float32)
    w = rng.standard_normal((1000, 64)).astype(np.float32)

    def f(x, w):
        e = xp.numpy.exp(x - x.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)) @ w
    got = np.asarray(xp.jit(f, backend="gpu")(x, w))
    want = np.asarray(xp.jit(f, backend="cpu")(x, w))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@without_gpu
def test_jit_without_gpu_says_why_and_how():
    with pytest.raises(XlapyError, match="xlapy\\[gpu\\]"):
        xp.jit(lambda x: x + 1, backend="gpu")(np.ones(3, np.float32))


@without_gpu
def test_xla_gpu_placement_without_gpu():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(np.arange(6, dtype=np.float32))
        with tf.device("/device:XLA_GPU:0"):
            y = tf.reduce_sum(x * 2.0)
        with tf.Session(graph=graph) as sess:
            assert not any("GPU" in d for d in sess.list_devices())
            with pytest.raises(InvalidArgumentError, match="Cannot assign a device"):
                sess.run(y)
        soft = tf.ConfigProto(allow_soft_placement=True)
        with tf.Session(graph=graph, config=soft) as sess:
            assert sess.run(y) == pytest.approx(30.0)


@needs_gpu
def test_device_arrays_on_the_gpu():
    """Results stay on the GPU, are read in place as inputs (no uploads), the allocator
    serves a steady loop of calls from its cache, pred and tuple results come back."""
    from xlapy.backends.gpu.runtime.device_array import DeviceArray
    ctx = get_platform("gpu").context
    x = np.random.default_rng(1).standard_normal((300, 1000)).astype(np.float32)
    dx = xp.device_put(x, xp.devices("gpu")[0])
    assert type(dx) is DeviceArray and dx.device.platform == "gpu"

    @xp.jit
    def f(a):
        e = xp.numpy.exp(a - a.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True), a > 0
    g = xp.jit(f.fun, backend="gpu")
    want = f(x)
    r = g(dx)
    r = g(dx)
    before = ctx.allocator.stats()
    for _ in range(10):
        r = g(dx)
    after = ctx.allocator.stats()
    assert after["raw_allocs"] == before["raw_allocs"]
    assert type(r[0]) is DeviceArray and r[0].block_until_ready() is r[0]
    np.testing.assert_allclose(np.asarray(r[0]), want[0], rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(np.asarray(r[1]), want[1])
    again = g(r[0])[0]                           # a result as the next input
    np.testing.assert_allclose(np.asarray(again), f(np.asarray(r[0]))[0], rtol=1e-5)


@without_gpu
def test_gpu_devices_without_gpu_say_why():
    with pytest.raises(XlapyError, match="xlapy\\[gpu\\]"):
        xp.devices("gpu")
    with pytest.raises(XlapyError, match="xlapy\\[gpu\\]"):
        xp.device_put(np.ones(3, np.float32), "gpu")
