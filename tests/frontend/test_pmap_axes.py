"""pmap's in_axes / out_axes / static_broadcasted_argnums / axis_size against jax.pmap on 4
forced host devices (XLA_FLAGS=--xla_force_host_platform_device_count=4, in a subprocess),
and the device count rules (xp.local_device_count() honours the same flag)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import xlapy as xp
from xlapy import lax
from xlapy.frontend.pmap_axes import PmapError

X = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 3
W = np.linspace(-1, 1, 3).astype(np.float32)
B = np.arange(4, dtype=np.float32)

# each case: (name, build(pmap, lax) -> callable, args builder); the same text runs under JAX
CASES = """
def cases(pmap, lax, X, W, B):
    return {
        "in_axes_1_none": lambda: pmap(lambda a, w: a * w + lax.psum(a, "i"), "i",
                                       in_axes=(1, None))(X, W),
        "out_axes": lambda: pmap(lambda a: (a * 2, lax.psum(a.sum(), "i"), lax.pmax(a, "i")),
                                 "i", in_axes=1, out_axes=(1, None, 0))(X),
        "pytree_axes": lambda: pmap(lambda a, p: {"y": a @ p["w"] + p["b"]}, "i",
                                    in_axes=(0, {"w": None, "b": 0}))(
            X.T, {"w": W, "b": B}),
        "static": lambda: pmap(lambda a, k, c: lax.pmean(a * k, "i") + c, "i",
                               static_broadcasted_argnums=(1,))(X.T, 3, B),
        "kwargs_axis0": lambda: pmap(lambda a, *, s: a - s, "i")(X.T, s=B),
        "axis_size": lambda: pmap(lambda a: lax.axis_index("i") + a, "i", axis_size=4,
                                  donate_argnums=0)(B.astype("int32")),
    }
"""

JAX_SCRIPT = CASES + """
import sys, numpy as np, jax
from jax import lax
d = np.load(sys.argv[1])
out = {}
for name, run in cases(jax.pmap, lax, d["X"], d["W"], d["B"]).items():
    leaves = jax.tree_util.tree_leaves(run())
    for k, v in enumerate(leaves):
        out[f"{name}/{k}"] = np.asarray(v)
np.savez(sys.argv[2], **out)
"""


@pytest.fixture(scope="module")
def jax_results(tmp_path_factory):
    pytest.importorskip("jax")
    tmp = tmp_path_factory.mktemp("jaxpmap")
    np.savez(tmp / "in.npz", X=X, W=W, B=B)
    (tmp / "run.py").write_text(JAX_SCRIPT)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu")
    r = subprocess.run([sys.executable, "run.py", "in.npz", "out.npz"], cwd=tmp, env=env,
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    return dict(np.load(tmp / "out.npz"))


def _cases():
    ns: dict = {}
    exec(CASES, ns)
    return ns["cases"](xp.pmap, lax, X, W, B)


@pytest.mark.parametrize("name", list(_cases()))
def test_axes_as_jax(name, jax_results):
    leaves = xp.tree_util.tree_leaves(_cases()[name]())
    want = sorted(k for k in jax_results if k.startswith(name + "/"))
    assert len(leaves) == len(want)
    for k, got in zip(want, leaves):
        ref = jax_results[k]
        assert got.shape == ref.shape, k
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6, err_msg=k)


def test_negative_axes_and_static_retrace():
    out = xp.pmap(lambda a: a * 2, in_axes=-1, out_axes=-1)(X)
    np.testing.assert_array_equal(out, X * 2)
    traces = []

    def f(a, k):
        traces.append(k)
        return a * k
    g = xp.pmap(f, static_broadcasted_argnums=1)
    np.testing.assert_array_equal(g(X, 2), X * 2)
    g(X, 2)
    np.testing.assert_array_equal(g(X, 5), X * 5)
    assert traces == [2, 5]


def test_axis_errors():
    with pytest.raises(PmapError, match="inconsistent sizes"):
        xp.pmap(lambda a, b: a + b)(X, X.T)
    with pytest.raises(PmapError, match="at least one argument with a mapped axis"):
        xp.pmap(lambda a: a, in_axes=None)(X)
    with pytest.raises(PmapError, match="map its argument args\\[0\\] along axis 2"):
        xp.pmap(lambda a: a, in_axes=2)(X)
    with pytest.raises(PmapError, match="len\\(in_axes\\)=2"):
        xp.pmap(lambda a: a, in_axes=(0, 0))(X)
    with pytest.raises(PmapError, match="Specified axis_size 2 doesn't match"):
        xp.pmap(lambda a: a, axis_size=2)(X)
    with pytest.raises(PmapError, match="must be hashable"):
        xp.pmap(lambda a, k: a, static_broadcasted_argnums=1)(X, [1])
    with pytest.raises(PmapError, match="in_axes must be an int"):
        xp.pmap(lambda a: a, in_axes="0")
    with pytest.raises(ValueError, match="tree prefix"):
        xp.pmap(lambda a: a, in_axes=({"w": 0},))({"v": X})


def test_device_count_follows_the_forced_host_platform(monkeypatch):
    assert xp.local_device_count() == 1 and xp.devices() == xp.local_devices()
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    assert xp.local_device_count() == 4 == xp.device_count()
    assert [d.id for d in xp.devices()] == [0, 1, 2, 3]
    assert all(d.process_index == 0 for d in xp.local_devices())
    np.testing.assert_array_equal(xp.pmap(lambda a: a + 1)(X.T), X.T + 1)
    np.testing.assert_array_equal(xp.pmap(lambda a: a + 1)(X), X + 1)  # fewer: allowed
    with pytest.raises(PmapError, match="size 5, but only 4 local devices"):
        xp.pmap(lambda a: a)(np.ones((5, 2), np.float32))
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=x")
    with pytest.raises(xp.errors.XlapyError, match="positive integer"):
        xp.local_device_count()
