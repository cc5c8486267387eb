"""xlapy.distributed with real MPI jobs: the data-parallel MLP example on 2 processes takes
the same steps as on one; a process that raises makes the job fail within the timeout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlapy as xp
from xlapy.errors import XlapyError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "distributed"


def _mpirun(n, argv, tmp, env=None, timeout=240):
    pytest.importorskip("mpi4py", reason="mpi4py is not installed (xlapy[distributed])")
    mpirun = (shutil.which("mpirun", path=str(Path(sys.executable).parent))
              or shutil.which("mpirun"))
    if mpirun is None:
        pytest.skip("no mpirun (pip install 'xlapy[distributed]' brings Open MPI)")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PYTHONPATH=str(ROOT), **(env or {}))
    r = subprocess.run([mpirun, "--oversubscribe", "-n", str(n), sys.executable, *argv],
                       capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp,
                       errors="replace")
    if r.returncode and "Traceback" not in r.stderr and "xlapy" not in r.stderr:
        pytest.skip(f"MPI could not start here: {r.stderr[-500:]}")
    return r


@pytest.mark.parametrize("example", ["dp_mlp.py", "dp_cnn.py"])
def test_data_parallel_training_on_two_processes_equals_one(tmp_path, example):
    # 2 processes with batch B/2 each take the same steps as 1 with batch B (up to the
    # reassociation of the gradient's sums)
    path = str(EXAMPLES / example)
    one = subprocess.run([sys.executable, path, "--steps", "3", "--out", "one.npz"],
                         capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert one.returncode == 0, one.stderr[-2000:]
    two = _mpirun(2, [path, "--steps", "3", "--out", "two.npz"], tmp_path)
    assert two.returncode == 0, two.stderr[-3000:]
    # the same losses (up to the gradient sums' reassociation), printed once
    def losses(out):
        return [float(line.split("loss ")[1]) for line in out.splitlines()]
    assert len(losses(two.stdout)) == len(losses(one.stdout)) == 3
    np.testing.assert_allclose(losses(two.stdout), losses(one.stdout), rtol=1e-5)
    a, b = np.load(tmp_path / "one.npz"), np.load(tmp_path / "two.npz")
    assert sorted(a) == sorted(b) and len(a) >= 4
    for k in a:
        np.testing.assert_allclose(b[k], a[k], rtol=1e-5, atol=1e-6, err_msg=k)


AXES = """
import numpy as np, xlapy as xp
from xlapy import lax
from xlapy.frontend.pmap_axes import PmapError
xp.distributed.initialize()
r, n = xp.process_index(), xp.process_count()
assert xp.local_device_count() == 1 and xp.device_count() == n
assert [d.process_index for d in xp.devices()] == list(range(n))
assert xp.local_devices() == [xp.devices()[r]]
w = np.arange(3, dtype=np.float32)           # broadcast: the same on every process
x = np.full((3, 1), r + 1, np.float32)       # mapped along axis 1 (this process's slice)
out = xp.pmap(lambda a, b, k: lax.psum(a * b, "i") * k, "i", in_axes=(1, None),
              static_broadcasted_argnums=2, out_axes=None)(x, w, 2)
np.testing.assert_array_equal(out, 2 * w * n * (n + 1) / 2)
try:
    xp.pmap(lambda a: a, "i")(np.ones((2, 3), np.float32))
except PmapError as e:
    assert "only 1 local devices" in str(e), e
else:
    raise AssertionError("a leading axis of 2 on one local device must fail")
print("ok", r)
"""


@pytest.mark.parametrize("n", [2, 4])
def test_pmap_axes_under_mpi(tmp_path, n):
    (tmp_path / "axes.py").write_text(AXES)
    r = _mpirun(n, ["axes.py"], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert sorted(r.stdout.split("\n")[:n]) == [f"ok {i}" for i in range(n)]


FAILING = """
import sys, numpy as np, xlapy as xp
from xlapy import lax
xp.distributed.initialize()
assert xp.process_count() == 2
if xp.process_index() == 1:
    raise RuntimeError("rank 1 gives up")
xp.pmap(lambda x: lax.psum(x, "i"), axis_name="i")(np.ones((1, 3), np.float32))
print("rank 0 must not get here")
"""


def test_a_raising_process_fails_the_job(tmp_path):
    (tmp_path / "f.py").write_text(FAILING)
    r = _mpirun(2, ["f.py"], tmp_path, env={"XLAPY_MPI_TIMEOUT": "5"})
    assert r.returncode != 0
    assert "rank 1 gives up" in r.stderr
    assert "must not get here" not in r.stdout


def test_single_process_api():
    xp.distributed.initialize()
    assert xp.process_index() == 0 and xp.process_count() == 1
    assert xp.distributed.is_initialized()
    with pytest.raises(XlapyError, match="through MPI, not a coordinator"):
        xp.distributed.initialize("localhost:1234")
    with pytest.raises(XlapyError, match="not started by mpirun"):
        xp.distributed.initialize(num_processes=2)
