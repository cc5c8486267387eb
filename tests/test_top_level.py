"""After `import xlapy`, its subpackages are attributes, as jax.random / jax.scipy are after
`import jax` (programs renamed from JAX write xlapy.random.PRNGKey(0) without importing it)."""

import subprocess
import sys


def test_subpackages_are_attributes_after_import_xlapy():
    code = ("import xlapy as jax\n"
            "print(jax.random.PRNGKey(0).shape, jax.scipy.special.logsumexp([0.0, 0.0]) > 0,\n"
            "      jax.scipy.stats.norm.cdf(0.0), jax.scipy.linalg.solve is not None,\n"
            "      jax.numpy.linalg.norm([3.0, 4.0]), jax.nn.relu(-1.0), jax.lax.add(1, 2))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["(2,)", "True", "0.5", "True", "5.0", "0.0", "3"]
