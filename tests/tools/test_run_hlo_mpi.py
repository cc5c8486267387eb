"""`mpirun -n N python -m xlapy run-hlo --backend interpreter`: real 2- and 4-process MPI
jobs, each process one replica on the interpreter, checked against the in-process replicas
(run_replicated); and the faults: processes at different instructions, a process that never
arrives. (The cpu backend's compiled collectives: tests/backends/cpu/test_collectives_mpi.py.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from xlapy.hlo import parse
from xlapy.hlo.evaluator import run_replicated

pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install xlapy[distributed])")
MPIRUN = shutil.which("mpirun", path=str(Path(sys.executable).parent)) or shutil.which("mpirun")
if MPIRUN is None:
    pytest.skip("no mpirun (pip install xlapy[distributed] brings Open MPI)",
                allow_module_level=True)

ADD = """
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
"""

def _program(n: int) -> str:
    """All-reduce, all-gather, a ring permute, reduce-scatter and replica-id on n replicas."""
    g, sc = f"f32[{8 * n}]", f"f32[{8 // n}]"
    ring = ",".join(f"{{{r},{(r + 1) % n}}}" for r in range(n))
    out = f"(f32[8], {g}, f32[8], {sc}, u32[])"
    return f"""HloModule m
{ADD}
ENTRY %e (x: f32[8]) -> {out} {{
  %x = f32[8] parameter(0)
  %r = f32[8] all-reduce(%x), replica_groups={{}}, to_apply=%add
  %g = {g} all-gather(%x), replica_groups={{}}, dimensions={{0}}
  %p = f32[8] collective-permute(%x), source_target_pairs={{{ring}}}
  %s = {sc} reduce-scatter(%x), replica_groups={{}}, dimensions={{0}}, to_apply=%add
  %i = u32[] replica-id()
  ROOT %t = {out} tuple(%r, %g, %p, %s, %i)
}}
"""


PROGRAM = _program(2)


def _mpirun(n: int, argv_per_rank: list[list[str]], tmp: Path, timeout=240, env=None):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", **(env or {}))
    cmd = [MPIRUN, "--oversubscribe"]
    for i, argv in enumerate(argv_per_rank):
        cmd += ([":"] if i else []) + ["-n", str(n if len(argv_per_rank) == 1 else 1),
                                       sys.executable, "-m", "xlapy", "run-hlo", *argv]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                       cwd=tmp, errors="replace")
    if r.returncode and "xlapy" not in r.stdout + r.stderr:
        pytest.skip(f"MPI could not start here: {(r.stderr or r.stdout)[-500:]}")
    return r


@pytest.mark.parametrize("n", [2, 4])
def test_replicas_as_processes_match_the_interpreter(tmp_path, n):
    text = _program(n)
    (tmp_path / "p.hlo").write_text(text)
    xs = [np.arange(8, dtype=np.float32) * (r + 1) + r for r in range(n)]
    for r, x in enumerate(xs):
        np.savez(tmp_path / f"in{r}.npz", x)
    res = _mpirun(n, [["p.hlo", "--input", "in{rank}.npz", "--output", "out.npz",
                       "--quiet", "--backend", "interpreter"]], tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    want = run_replicated(parse(text), [[x] for x in xs], n)
    for r in range(n):
        got = np.load(tmp_path / f"out.rank{r}.npz")
        for k, w in enumerate(want[r]):
            np.testing.assert_array_equal(got[f"arr_{k}"], w, err_msg=f"rank {r} output {k}")
    assert int(np.load(tmp_path / "out.rank1.npz")["arr_4"]) == 1


def test_processes_at_different_instructions_are_named(tmp_path):
    (tmp_path / "a.hlo").write_text(PROGRAM)
    other = PROGRAM.replace("%r = f32[8] all-reduce(%x), replica_groups={}, to_apply=%add",
                            "%r = f32[8] collective-permute(%x), source_target_pairs={{0,1}}")
    assert other != PROGRAM
    (tmp_path / "b.hlo").write_text(other)
    res = _mpirun(2, [["a.hlo", "--random-inputs", "--quiet", "--backend", "interpreter"],
                      ["b.hlo", "--random-inputs", "--quiet", "--backend", "interpreter"]],
                  tmp_path)
    assert res.returncode != 0
    out = res.stdout + res.stderr
    assert "is at all-reduce r ((8,))" in out and "collective-permute r ((8,))" in out, out


def test_a_process_that_never_arrives_fails_the_others(tmp_path):
    (tmp_path / "a.hlo").write_text(PROGRAM)
    (tmp_path / "quiet.hlo").write_text(
        "HloModule q\nENTRY %e (x: f32[8]) -> f32[8] {\n  ROOT %x = f32[8] parameter(0)\n}\n")
    res = _mpirun(2, [["a.hlo", "--random-inputs", "--quiet", "--backend", "interpreter"],
                      ["quiet.hlo", "--random-inputs", "--quiet", "--backend", "interpreter"]],
                  tmp_path, env={"XLAPY_MPI_TIMEOUT": "3"})
    assert res.returncode != 0
    assert "not every rank of 2 reached collective #1 within 3 s" in res.stdout + res.stderr
