"""Functions compiled ahead of time from example arguments: captured weights become
constants of the object (not arguments), pytree arguments are flattened and named, shapes
may be given without data; matrix-vector and matrix-matrix products both on xlapy's own
gemm (the object has no BLAS), run on x86-64 and AArch64."""

import numpy as np

import xlapy as xp
import xlapy.aot as aot
import xlapy.numpy as xnp
from xlapy_tests_aot_harness import TRIPLES, run_in_c

RNG = np.random.default_rng(7)
W2 = RNG.standard_normal((300, 40)).astype(np.float32) / 10   # 12,000 elements: a constant
B2 = RNG.standard_normal(40).astype(np.float32)
PARAMS = {"w1": RNG.standard_normal((100, 300)).astype(np.float32) / 10,
          "b1": RNG.standard_normal(300).astype(np.float32)}
X1 = RNG.standard_normal((1, 100)).astype(np.float32)
X5 = RNG.standard_normal((5, 100)).astype(np.float32)


def layers(params, x):
    h = xnp.maximum(x @ params["w1"] + params["b1"], 0)
    return xp.nn.softmax(h @ W2 + B2, axis=-1)


def model(params, x1, x5):
    return layers(params, x1), layers(params, x5)


def reference(x):
    h = np.maximum(x.astype(np.float64) @ PARAMS["w1"] + PARAMS["b1"], 0)
    z = h @ W2 + B2
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_weights_are_constants_and_results_match(machine, tc, tmp_path):
    c = aot.compile(model, PARAMS, X1, X5, cpp_class="t::Mlp", entry_point="mlp",
                    target_triple=TRIPLES[machine])
    # arguments: the parameters' leaves (sorted keys) and the inputs; W2 and B2 are not
    assert [(b.name, b.shape.dims) for b in c.signature.args] == [
        ("params_0", (300,)), ("params_1", (100, 300)), ("x1", (1, 100)), ("x5", (5, 100))]
    assert c.sizes()["rodata"] >= W2.nbytes
    [out] = run_in_c(tc, [(c, [PARAMS["b1"], PARAMS["w1"], X1, X5])], tmp_path)
    np.testing.assert_allclose(out[0], reference(X1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1], reference(X5), rtol=1e-5, atol=1e-6)


def test_shapes_without_data():
    """Example arguments may be shapes: "f32[2,3]" or anything with .shape and .dtype."""
    class Spec:
        shape, dtype = (3,), np.float32
    f = xp.jit(lambda a, b: a.sum(0) + b)
    c = aot.compile(f, "f32[2,3]", Spec(), cpp_class="Shapes")
    assert [b.shape.dims for b in c.signature.args] == [(2, 3), (3,)]
    assert [b.shape.dims for b in c.signature.results] == [(3,)]


def big(x, a, b):
    return xnp.tanh(x) * 2.0, a @ b


def test_thread_pool_runs_large_kernels(machine, tc, tmp_path):
    """With set_num_threads(3) the object's pool runs the large elementwise kernel and the
    gemm (both above their thresholds) in chunks on its workers."""
    x = RNG.standard_normal((600, 500)).astype(np.float32)
    a = RNG.standard_normal((256, 300)).astype(np.float32)
    b = RNG.standard_normal((300, 256)).astype(np.float32)
    c = aot.compile(big, x, a, b, entry_point="big", target_triple=TRIPLES[machine])
    assert "pthread_create" in c.code.info.undefined()
    [(t, p)] = run_in_c(tc, [(c, [x, a, b])], tmp_path, threads=3)
    np.testing.assert_allclose(t, np.tanh(x.astype(np.float64)) * 2, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(p, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def heads(q, k, v):
    """An attention core on [batch, seq, heads, dh] views: fused per batch element and block
    of rows (passes/attention_fusion.py), the head merge a bitcast (passes/dot_layout.py)."""
    def split(t):
        return xnp.transpose(xnp.reshape(t, (2, 40, 3, 16)), (0, 2, 1, 3))
    s = xnp.einsum("bhqd,bhkd->bhqk", split(q), split(k)) * 0.25
    e = xnp.exp(s - xnp.max(s, -1, keepdims=True))
    o = xnp.einsum("bhqk,bhkd->bhqd", e / xnp.sum(e, -1, keepdims=True), split(v))
    return xnp.reshape(xnp.transpose(o, (0, 2, 1, 3)), (2, 40, 48))


def test_fused_attention(machine, tc, tmp_path):
    q, k, v = (RNG.standard_normal((2, 40, 48)).astype(np.float32) for _ in range(3))
    c = aot.compile(heads, q, k, v, entry_point="heads", target_triple=TRIPLES[machine])
    want = np.asarray(xp.jit(heads, backend="interpreter")(q, k, v))
    [[got]] = run_in_c(tc, [(c, [q, k, v])], tmp_path, threads=2)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
