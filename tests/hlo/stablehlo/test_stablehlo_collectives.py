"""StableHLO collectives as JAX emits them: the per-device body of a jax.pmap over 4 forced
host devices (lowered in a subprocess) read by parse_stablehlo and run as 4 devices on the
interpreter, each output compared with what jax.pmap computed."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from xlapy.errors import ParseError
from xlapy.hlo.evaluator import run_replicated
from xlapy.hlo.stablehlo import parse_stablehlo

JAX_SCRIPT = r'''
import sys, numpy as np, jax
from jax import lax
x = (np.arange(32, dtype=np.float32).reshape(4, 8) - 12) / 5
# (no NaN: XLA:CPU's all-reduce max/min drop a NaN depending on the device order, where
# xlapy's reducer, the HLO maximum/minimum, propagates it)
def f(v):
    return (lax.psum(v, "i"), lax.pmax(v, "i"), lax.pmin(v, "i"), lax.all_gather(v, "i"),
            lax.psum_scatter(v, "i", tiled=True),
            lax.all_to_all(v.reshape(4, 2), "i", 0, 0),
            lax.all_to_all(v.reshape(2, 4), "i", 1, 0, tiled=True),
            lax.all_to_all(v.reshape(4, 2), "i", 0, 1, tiled=True),
            lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
            lax.ppermute(v, "i", [(0, 2)]), lax.axis_index("i"),
            lax.psum(v.astype(np.int32), "i"))
g = jax.pmap(f, axis_name="i")
open(sys.argv[1], "w").write(g.lower(x).as_text())
np.savez(sys.argv[2], x=x, *[np.asarray(o) for o in g(x)])
'''


def per_device_body(text: str) -> str:
    """The body of the sdy.manual_computation JAX wraps a pmap in, as a module whose @main
    is the per-device program (the ops inside are the StableHLO xlapy reads)."""
    head = re.search(r"sdy\.manual_computation\(.*?manual_axes=\{[^}]*\} \((%\w+: [^)]*)\) \{\n",
                     text)
    assert head, "JAX's pmap lowering changed shape"
    body, depth = [], 1
    for line in text[head.end():].splitlines():
        depth += line.count("{") - line.count("}")
        if depth <= 0:
            break
        body.append(line)
    ret = next(i for i, line in enumerate(body) if "sdy.return" in line)
    types = body[ret].split(" : ", 1)[1]
    body[ret] = body[ret].replace("sdy.return", "return")
    counts = re.search(r"attributes \{([^}]*)\}", text).group(1)
    return (f"module @pmap_body attributes {{{counts}}} {{\n"
            f"  func.func public @main({head.group(1)}) -> ({types}) {{\n"
            + "\n".join(body) + "\n  }\n}\n")


@pytest.fixture(scope="module")
def jax_pmap(tmp_path_factory):
    pytest.importorskip("jax")
    tmp = tmp_path_factory.mktemp("shlo_coll")
    (tmp / "gen.py").write_text(JAX_SCRIPT)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu")
    r = subprocess.run([sys.executable, "gen.py", "f.mlir", "out.npz"], cwd=tmp, env=env,
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    return (tmp / "f.mlir").read_text(), dict(np.load(tmp / "out.npz"))


def test_pmap_body_runs_as_jax_ran_it(jax_pmap):
    text, out = jax_pmap
    module = parse_stablehlo(per_device_body(text), "pmap_body.mlir")
    hlo = module.to_string()
    for op in ("all-reduce(", "all-gather(", "reduce-scatter(", "all-to-all(",
               "collective-permute(", "partition-id("):
        assert op in hlo, op
    assert module.attrs["num_partitions"] == "4"
    x = out.pop("x")
    results = run_replicated(module, [[x[d:d + 1]] for d in range(4)], 1, 4)
    n_out = len(out)
    for d, res in enumerate(results):
        res = res if isinstance(res, tuple) else (res,)
        assert len(res) == n_out
        for k in range(n_out):
            want = out[f"arr_{k}"][d]
            got = np.asarray(res[k])
            assert got.shape == (1,) + want.shape, (k, got.shape, want.shape)
            np.testing.assert_allclose(got[0], want, rtol=1e-6, atol=1e-6,
                                       err_msg=f"output {k} on device {d}")


BAD_GROUPS = """
module @m attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 3 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "stablehlo.all_reduce"(%arg0) <{
        replica_groups = dense<[[0, 1], [2, -1]]> : tensor<2x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %1 = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


def test_errors_name_the_op_and_its_line():
    with pytest.raises(ParseError, match=r":4:.*stablehlo.all_reduce: replica_groups: groups "
                                         "of different sizes"):
        parse_stablehlo(BAD_GROUPS)
    text = BAD_GROUPS.replace("[[0, 1], [2, -1]]", "[[0, 1, 2]]").replace("2x2xi64", "1x3xi64")
    module = parse_stablehlo(text)
    outs = run_replicated(module, [[np.full(4, r, np.float32)] for r in range(3)], 3)
    for o in outs:
        np.testing.assert_array_equal(o, np.full(4, 3, np.float32))
    bad = text.replace("[[0, 1, 2]]", "[[0, 1, 5]]")
    with pytest.raises(Exception, match="5"):
        parse_stablehlo(bad)
