"""What a TF 1.x script's XLA step imports of the compiler. TF's own scripts do not import
the compiler up front, so its import is paid by XLA's first compiled step; a step whose
program comes from the disk cache traces the cluster (xlapy.numpy, the frontend) and loads
the program, and must not import what only a compilation, eager evaluation or other
frontends use: xlapy.lax, jit, the HLO evaluator, the passes and the emitters."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np

from xlapy.backends.cpu.target import vector_bits

ROOT = pathlib.Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys
import numpy as np
import xlapy.compat.v1 as tf
x = tf.placeholder(tf.float32, [None, 784])
y_ = tf.placeholder(tf.float32, [None, 10])
W = tf.Variable(tf.zeros([784, 10]))
b = tf.Variable(tf.zeros([10]))
y = tf.matmul(x, W) + b
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y))
step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
config = tf.ConfigProto()
config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
sess = tf.Session(config=config)
sess.run(tf.global_variables_initializer())
rng = np.random.default_rng(0)
xs = rng.random((100, 784), dtype=np.float32)
ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 100)]
for _ in range(3):
    sess.run(step, feed_dict={x: xs, y_: ys})
from xlapy.backends.base import get_platform
prefixes = ("xlapy.lax", "xlapy.frontend.jit", "xlapy.hlo.evaluator", "xlapy.passes",
            "xlapy.backends.cpu.emitters", "xlapy.backends.cpu.passes")
print(json.dumps({"stats": get_platform("cpu").compiler.stats,
                  "numpy": "xlapy.numpy" in sys.modules,
                  "loaded": sorted(m for m in sys.modules if m.startswith(prefixes)),
                  "W": sess.run(W).tolist()}))
"""


def _child(tmp_path) -> dict:
    env = {"XLAPY_CACHE_DIR": str(tmp_path / "programs"),
           "XLAPY_RUNTIME_CACHE_DIR": str(tmp_path / "runtime"), "PATH": "/usr/bin:/bin",
           "OPENBLAS_NUM_THREADS": "1",
           "TF_XLA_FLAGS": "--tf_xla_enable_lazy_compilation=false"}
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_warm_xla_step_imports_no_lax_jit_evaluator_or_passes(tmp_path):
    cold = _child(tmp_path)
    assert cold["stats"]["compiles"] >= 1
    assert "xlapy.passes.pipeline" in cold["loaded"]   # (the check can see an import)
    # a cold compile of a model without convolutions, sorts or LAPACK calls imports the
    # emitters it uses, not those (emitters/registry.py), nor the evaluator's LAPACK calls
    for name in ("emitters.gemm", "emitters.program"):
        assert f"xlapy.backends.cpu.{name}" in cold["loaded"], name
    for name in ("backends.cpu.emitters.conv", "backends.cpu.emitters.sort",
                 "backends.cpu.emitters.fft", "backends.cpu.emitters.collectives",
                 "backends.cpu.passes.conv_plan", "hlo.evaluator.lapack"):
        assert f"xlapy.{name}" not in cold["loaded"], name
    warm = _child(tmp_path)
    assert warm["stats"]["compiles"] == 0 and warm["stats"]["disk_hits"] >= 1
    assert warm["numpy"]   # tracing the cluster still needs xlapy.numpy's lowerings
    # the step's products run on the narrow gemm kernels (gemm_narrow.py): a cached program
    # that calls them registers their symbols, the kernels' objects come from the runtime's
    # cache, and their IR builder stays unloaded
    narrow = vector_bits() >= 512  # (dot_plan.narrow_form: AVX-512 machines only)
    assert warm["loaded"] == (["xlapy.backends.cpu.emitters",
                               "xlapy.backends.cpu.emitters.gemm_narrow_symbols"]
                              if narrow else [])
    np.testing.assert_array_equal(warm["W"], cold["W"])


def test_importing_compat_v1_leaves_unittest_and_asyncio_for_tf_test():
    """tf.test (unittest) and tf.test.mock (unittest.mock, which imports asyncio) load on
    first use: eager, they were about 35 ms of every `import xlapy.compat.v1`."""
    code = ("import sys, xlapy.compat.v1 as tf\n"
            "before = [m for m in ('unittest', 'unittest.mock', 'asyncio') if m in sys.modules]\n"
            "case, mock = tf.test.TestCase, tf.test.mock.MagicMock\n"
            "print(before, 'test' in dir(tf), 'asyncio' in sys.modules, mock.__name__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "True", "True", "MagicMock"]
