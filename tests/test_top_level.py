"""After `import xlapy`, its subpackages are attributes, as jax.random / jax.scipy are after
`import jax` (programs renamed from JAX write xlapy.random.PRNGKey(0) without importing it)."""

import subprocess
import sys

import pytest


def test_subpackages_are_attributes_after_import_xlapy():
    code = ("import xlapy as jax\n"
            "print(jax.random.PRNGKey(0).shape, jax.scipy.special.logsumexp([0.0, 0.0]) > 0,\n"
            "      jax.scipy.stats.norm.cdf(0.0), jax.scipy.linalg.solve is not None,\n"
            "      jax.numpy.linalg.norm([3.0, 4.0]), jax.nn.relu(-1.0), jax.lax.add(1, 2))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["(2,)", "True", "0.5", "True", "5.0", "0.0", "3"]


@pytest.mark.parametrize("module", ["xlapy.scipy.special", "xlapy.scipy.stats", "xlapy.lax",
                                    "xlapy.image", "xlapy.random", "xlapy.nn"])
def test_each_package_imports_first_in_a_fresh_process(module):
    """No import cycle depends on which package a program imports first (importing
    xlapy.scipy.special first once failed on lax's special-function names)."""
    r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
