"""Compiled collectives over MPI: `mpirun -n N python -m xlapy run-hlo` on the cpu backend
(real 2- and 4-process jobs), every output equal to the in-process interpreter replicas
(run_replicated); one process without MPI (identity semantics); the faults (a rank that
hangs or dies, ranks running different programs); reducers the cpu cannot lower."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from xlapy.backends.base import flatten, get_platform
from xlapy.errors import LoweringError, XlapyError
from xlapy.hlo import parse
from xlapy.hlo.evaluator import run_replicated

MPIRUN = shutil.which("mpirun", path=str(Path(sys.executable).parent)) or shutil.which("mpirun")


def _comp(name, t, op):
    return (f"%{name} (a: {t}[], b: {t}[]) -> {t}[] {{\n  %a = {t}[] parameter(0)\n"
            f"  %b = {t}[] parameter(1)\n  ROOT %r = {t}[] {op}(%a, %b)\n}}\n")


def program(n: int) -> str:
    """Every collective, f32/f64/s32/bf16 (and pred/c64/f16 all-reduces), odd sizes, size 0,
    subset and iota groups, a column-major layout, on n replicas."""
    half = ",".join("{" + ",".join(str(r) for r in range(n) if r % 2 == k) + "}"
                    for k in range(min(n, 2)))
    ring = ",".join(f"{{{r},{(r + 1) % n}}}" for r in range(n))
    q = 8 // n
    outs = [
        ("f32[6,8]", "all-reduce(%x), replica_groups={}, to_apply=%add_f32"),
        ("f32[5]", "all-reduce(%v), replica_groups={}, to_apply=%max_f32"),
        ("f32[5]", "all-reduce(%v), replica_groups={}, to_apply=%min_f32"),
        ("f64[5]", "all-reduce(%y), replica_groups={}, to_apply=%add_f64"),
        ("s32[7]", "all-reduce(%z), replica_groups={}, to_apply=%max_s32"),
        ("s32[7]", "all-reduce(%z), replica_groups={}, to_apply=%mul_s32"),
        ("bf16[4,3]", "all-reduce(%w), replica_groups={}, to_apply=%add_bf16"),
        ("bf16[4,3]", "all-reduce(%w), replica_groups={}, to_apply=%max_bf16"),
        ("(f32[6,8], f32[5])", "all-reduce(%x, %v), replica_groups={}, to_apply=%add_f32"),
        ("f32[6,8]", f"all-reduce(%x), replica_groups={{{half}}}, to_apply=%add_f32"),
        ("f32[6,8]", "all-reduce(%x), replica_groups=[1," + str(n) + "]<=[" + str(n)
         + "], channel_id=1, use_global_device_ids=true, to_apply=%add_f32"),
        ("f32[0]", "all-reduce(%e), replica_groups={}, to_apply=%add_f32"),
        (f"f32[6,{8 * n}]", "all-gather(%x), replica_groups={}, dimensions={1}"),
        (f"s32[{7 * n}]", "all-gather(%z), replica_groups={}, dimensions={0}"),
        (f"bf16[{4 * n},3]", "all-gather(%w), replica_groups={}, dimensions={0}"),
        ("f32[0]", "all-gather(%e), replica_groups={}, dimensions={0}"),
        (f"f32[6,{q}]", "reduce-scatter(%x), replica_groups={}, dimensions={1}, "
                        "to_apply=%add_f32"),
        (f"f32[{q},3]", "reduce-scatter(%u), replica_groups={}, dimensions={0}, "
                        "to_apply=%add_f32"),
        ("f32[6,8]", "all-to-all(%x), replica_groups={}, dimensions={1}"),
        ("f32[8,3]", "all-to-all(%u), replica_groups={}, dimensions={0}"),
        ("(" + ", ".join(["s32[7]"] * n) + ")",
         "all-to-all(" + ", ".join(["%z"] * n) + "), replica_groups={}"),
        ("s32[7]", f"collective-permute(%z), source_target_pairs={{{ring}}}"),
        ("bf16[4,3]", "collective-permute(%w), source_target_pairs="
                      + ("{{0,1}}" if n > 1 else "{}")),   # the others get zeros
        ("f32[6,8]{0,1}", "all-reduce(%xt), replica_groups={}, to_apply=%add_f32"),
        (f"f32[6,{8 * n}]{{0,1}}", "all-gather(%xt), replica_groups={}, dimensions={1}"),
        ("pred[7]", "all-reduce(%pz), replica_groups={}, to_apply=%and_pred"),
        ("pred[7]", "all-reduce(%pz), replica_groups={}, to_apply=%or_pred"),
        ("s32[7]", "all-reduce(%z), replica_groups={}, to_apply=%or_s32"),
        ("c64[7]", "all-reduce(%cz), replica_groups={}, to_apply=%add_c64"),
        ("f16[5]", "all-reduce(%hv), replica_groups={}, to_apply=%max_f16"),
        ("f16[5]", "all-reduce(%hv), replica_groups={}, to_apply=%add_f16"),
        ("f32[6,8]", "negate(%ar)"),   # %ar may take %x2's buffer: MPI_IN_PLACE
        ("u32[]", "replica-id()"),
        ("u32[]", "partition-id()"),
    ]
    reducers = "".join(_comp(f"{op}_{t}", t, full) for t, ops in
                       (("f32", ("add", "max", "min")), ("f64", ("add",)),
                        ("s32", ("max", "mul", "or")), ("bf16", ("add", "max")),
                        ("pred", ("and", "or")), ("c64", ("add",)), ("f16", ("max", "add")))
                       for op in ops
                       for full in [{"add": "add", "max": "maximum", "min": "minimum",
                                     "mul": "multiply", "and": "and", "or": "or"}[op]])
    body = "\n".join(f"  %o{i} = {s} {op}" for i, (s, op) in enumerate(outs))
    root = ", ".join(s for s, _ in outs)
    names = ", ".join(f"%o{i}" for i in range(len(outs)))
    return (f"HloModule colls, replica_count={n}\n{reducers}\nENTRY %e (x: f32[6,8], "
            "v: f32[5], y: f64[5], z: s32[7], w: bf16[4,3], e: f32[0], u: f32[8,3]) -> "
            f"({root}) {{\n  %x = f32[6,8] parameter(0)\n  %v = f32[5] parameter(1)\n"
            "  %y = f64[5] parameter(2)\n  %z = s32[7] parameter(3)\n"
            "  %w = bf16[4,3] parameter(4)\n  %e = f32[0] parameter(5)\n"
            "  %u = f32[8,3] parameter(6)\n  %xt = f32[6,8]{0,1} copy(%x)\n"
            "  %pz = pred[7] convert(%z)\n  %cz = c64[7] convert(%z)\n"
            "  %hv = f16[5] convert(%v)\n  %x2 = f32[6,8] add(%x, %x)\n"
            "  %ar = f32[6,8] all-reduce(%x2), replica_groups={}, to_apply=%add_f32\n"
            f"{body}\n  ROOT %t = ({root}) tuple({names})\n}}\n")


def inputs(r: int) -> list:
    """Replica r's arguments: integer-valued (sums exact in any order), NaN and signed
    values for max/min."""
    x = (np.arange(48, dtype=np.float32).reshape(6, 8) * (r + 1) - 7 * r)
    v = np.array([1.5, -2.0, np.nan if r == 1 else 3.0, -0.0, 4.0 - r], np.float32)
    y = np.arange(5, dtype=np.float64) / 4 + r
    z = (np.arange(7, dtype=np.int32) - 3) * (r + 1) + 2 * r
    w = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5 + r).astype(ml_dtypes.bfloat16)
    u = np.arange(24, dtype=np.float32).reshape(8, 3) + 100 * r
    return [x, v, y, z, w, np.zeros(0, np.float32), u]


def _save(path, arrays) -> None:
    np.savez(path, *[a.view(np.uint16) if a.dtype == ml_dtypes.bfloat16 else a
                     for a in arrays])


def _mpirun(tmp: Path, ranks: list[list[str]], timeout=240, env=None, started=True):
    if MPIRUN is None:
        pytest.skip("no mpirun (pip install xlapy[distributed] brings Open MPI)")
    pytest.importorskip("mpi4py", reason="mpi4py is not installed")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", **(env or {}))
    cmd = [MPIRUN, "--oversubscribe"]
    for i, argv in enumerate(ranks):
        cmd += ([":"] if i else []) + ["-n", "1", sys.executable, *argv]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                       cwd=tmp, errors="replace")
    if started and r.returncode and "xlapy" not in r.stdout + r.stderr:
        pytest.skip(f"MPI could not start here: {(r.stderr or r.stdout)[-500:]}")
    return r


def _run_hlo(*argv) -> list[str]:
    return ["-m", "xlapy", "run-hlo", *argv]


@pytest.mark.parametrize("n", [2, 4])
def test_compiled_collectives_match_the_interpreter(tmp_path, n):
    text = program(n)
    (tmp_path / "p.hlo").write_text(text)
    args = [inputs(r) for r in range(n)]
    for r in range(n):
        _save(tmp_path / f"in{r}.npz", args[r])
    res = _mpirun(tmp_path, [_run_hlo("p.hlo", "--input", "in{rank}.npz", "--output",
                                      "out.npz", "--backend", "cpu")] * n)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    assert "on cpu" in res.stdout
    want = run_replicated(parse(text), args, n)
    for r in range(n):
        got = np.load(tmp_path / f"out.rank{r}.npz")
        leaves = flatten(want[r])
        assert len(got.files) == len(leaves)
        for k, w in enumerate(leaves):
            w = np.asarray(w)
            g = got[f"arr_{k}"]
            if w.dtype == ml_dtypes.bfloat16:
                g = g.view(ml_dtypes.bfloat16)
            np.testing.assert_array_equal(g, w, err_msg=f"rank {r} output {k}")
    nan_max = np.load(tmp_path / "out.rank0.npz")["arr_1"]
    assert np.isnan(nan_max[2]) and nan_max[4] == 4.0   # NaN propagates, as XLA's maximum


def test_one_process_without_mpi_is_the_identity():
    text = program(1)
    args = inputs(0)
    got = flatten(get_platform("cpu").compiler.compile(parse(text)).run(*args))
    want = flatten(run_replicated(parse(text), [args], 1)[0])
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=f"output {k}")


def test_a_reducer_the_cpu_cannot_lower_is_named():
    text = ("HloModule m\n" + _comp("sub", "f32", "subtract")
            + "ENTRY %e (x: f32[4]) -> f32[4] {\n  %x = f32[4] parameter(0)\n"
            "  ROOT %r = f32[4] all-reduce(%x), replica_groups={}, to_apply=%sub\n}\n")
    with pytest.raises(LoweringError, match="reducer computation sub on f32"):
        get_platform("cpu").compiler.compile(parse(text))


def test_pred_add_is_refused_and_groups_beyond_the_job_are_named():
    text = ("HloModule m\n" + _comp("addp", "pred", "add")
            + "ENTRY %e (x: pred[4]) -> pred[4] {\n  %x = pred[4] parameter(0)\n"
            "  ROOT %r = pred[4] all-reduce(%x), replica_groups={}, to_apply=%addp\n}\n")
    with pytest.raises(LoweringError, match="reducer add on pred"):
        get_platform("cpu").compiler.compile(parse(text))
    exe = get_platform("cpu").compiler.compile(parse(ALLREDUCE.replace(
        "replica_groups={}", "replica_groups={{0,1}}")))
    with pytest.raises(XlapyError, match=r"r: replica id\(s\) \[1\] in its groups, but there "
                                         r"are 1 replicas"):
        exe.run(np.ones(8, np.float32))


ALLREDUCE = ("HloModule a\n" + _comp("add", "f32", "add")
             + "ENTRY %e (x: f32[8]) -> f32[8] {\n  %x = f32[8] parameter(0)\n"
             "  ROOT %r = f32[8] all-reduce(%x), replica_groups={}, to_apply=%add\n}\n")


def test_processes_running_different_programs_are_named(tmp_path):
    (tmp_path / "a.hlo").write_text(ALLREDUCE)
    (tmp_path / "b.hlo").write_text(ALLREDUCE.replace("f32[8]", "f32[9]"))
    res = _mpirun(tmp_path, [_run_hlo("a.hlo", "--random-inputs", "--quiet"),
                             _run_hlo("b.hlo", "--random-inputs", "--quiet")])
    assert res.returncode != 0
    out = res.stdout + res.stderr
    assert "the processes run different programs or shapes" in out, out[-2000:]
    assert "runs compiled program a #" in out, out[-2000:]


@pytest.mark.parametrize("other", ["hang", "die"])
def test_a_rank_that_hangs_or_dies_fails_the_job(tmp_path, other):
    (tmp_path / "a.hlo").write_text(ALLREDUCE)
    # rank 1 prepares the same program (fingerprint exchange, communicator), then never
    # runs it: it sleeps, or exits abruptly; rank 0 waits inside MPI_Allreduce
    code = ("import os, time; from xlapy.hlo import parse_module_file; "
            "from xlapy.backends.base import get_platform; "
            "exe = get_platform('cpu').compiler.compile(parse_module_file('a.hlo')); "
            "exe._fill_plans(); "
            + ("time.sleep(60)" if other == "hang" else "time.sleep(0.5); os._exit(3)"))
    t0 = time.monotonic()
    res = _mpirun(tmp_path, [_run_hlo("a.hlo", "--random-inputs", "--quiet"), ["-c", code]],
                  timeout=60, env={"XLAPY_MPI_TIMEOUT": "3"}, started=other == "hang")
    assert res.returncode != 0
    assert time.monotonic() - t0 < 40   # (mpirun itself ends a job whose process died)
    out = res.stdout + res.stderr
    if other == "hang":
        assert ("all-reduce r: MPI did not complete within 3 s (XLAPY_MPI_TIMEOUT)"
                in out), out[-2000:]


LOOP = """HloModule w, replica_count=2
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
%body (p: (s32[], f32[3])) -> (s32[], f32[3]) {
  %p = (s32[], f32[3]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %x = f32[3] get-tuple-element(%p), index=1
  %one = s32[] constant(1)
  %i2 = s32[] add(%i, %one)
  %r = f32[3] all-reduce(%x), replica_groups={}, to_apply=%add
  %h = f32[3] constant({0.5, 0.5, 0.5})
  %y = f32[3] multiply(%r, %h)
  %e = f32[3] tanh(%y)
  ROOT %t = (s32[], f32[3]) tuple(%i2, %e)
}
%cond (p: (s32[], f32[3])) -> pred[] {
  %p = (s32[], f32[3]) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
ENTRY %e (x: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  %z = s32[] constant(0)
  %t = (s32[], f32[3]) tuple(%z, %x)
  %w = (s32[], f32[3]) while(%t), condition=%cond, body=%body
  ROOT %o = f32[3] get-tuple-element(%w), index=1
}
"""


def test_an_all_reduce_inside_a_while_loop(tmp_path):
    (tmp_path / "w.hlo").write_text(LOOP)
    xs = [np.array([0.1, 0.2, -0.3], np.float32) * (r + 1) for r in range(2)]
    for r, x in enumerate(xs):
        np.savez(tmp_path / f"in{r}.npz", x)
    res = _mpirun(tmp_path, [_run_hlo("w.hlo", "--input", "in{rank}.npz", "--output",
                                      "out.npz", "--quiet")] * 2)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    want = run_replicated(parse(LOOP), [[x] for x in xs], 2)
    for r in range(2):
        np.testing.assert_allclose(np.load(tmp_path / f"out.rank{r}.npz")["arr_0"], want[r],
                                   rtol=1e-6, err_msg=f"rank {r}")


PMAP = """
import numpy as np, xlapy as xp
from xlapy import lax
xp.distributed.initialize()
r, n = xp.process_index(), xp.process_count()

def f(x):
    return (lax.psum(x, "i"), lax.pmax(x, "i"), lax.all_gather(x, "i"),
            lax.ppermute(x, "i", [(k, (k + 1) % n) for k in range(n)]), lax.axis_index("i"))

x = (np.arange(6, dtype=np.float32).reshape(1, 2, 3) + 10 * r)
cpu = xp.pmap(f, axis_name="i")(x)
ref = xp.pmap(f, axis_name="i", backend="interpreter")(x)
for a, b in zip(cpu, ref):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
assert float(cpu[0][0, 0, 0]) == sum(10 * k for k in range(n)) and int(cpu[4][0]) == r
print("rank", r, "ok")
"""


def test_pmap_under_mpi_compiled_equals_interpreter(tmp_path):
    (tmp_path / "p.py").write_text(PMAP)
    res = _mpirun(tmp_path, [["p.py"]] * 2)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    assert "rank 0 ok" in res.stdout and "rank 1 ok" in res.stdout


def test_processes_of_one_mpi_job_share_the_cores(monkeypatch):
    from xlapy.backends.cpu.options import default_num_threads, usable_cores
    monkeypatch.delenv("XLAPY_NUM_THREADS", raising=False)
    monkeypatch.delenv("MPI_LOCALNRANKS", raising=False)
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2")
    assert default_num_threads() == max(1, usable_cores() // 2)
    monkeypatch.setenv("XLAPY_NUM_THREADS", "3")
    assert default_num_threads() == 3
