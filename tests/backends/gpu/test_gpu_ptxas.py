"""Every module of the tests/hlo corpus lowers to PTX that NVIDIA's ptxas assembles for
sm_80 and sm_90 (no GPU needed).

Every module's PTX is generated for sm_80 and assembled for sm_80 and for sm_90 (PTX runs on
later architectures); every third module of the .hlo half of the corpus is also generated
for sm_90 and assembled for it, so both code generation targets are checked without paying
LLVM twice for every module (the sm_90 code differs from sm_80's only in its target line and
the instructions LLVM may pick, so a sample of the op set catches a generator that breaks
there; XLAPY_PTXAS_ALL=1 generates every module for both). The PTX is made in a small
process pool (LLVM's NVPTX code generation is the slow part; a PTX already made from the
same LLVM IR by the same codegen.py, LLVM and libdevice is reused from pytest's cache
directory, .pytest_cache/d/gpu_ptx), ptxas runs in parallel threads, always; one test per
module checks its result.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import importlib.util
import multiprocessing
import os
import pathlib
import subprocess
import tempfile

import pytest

_spec = importlib.util.spec_from_file_location("gpu_corpus",
                                               pathlib.Path(__file__).with_name("gpu_corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)
CORPUS, FILES, ptxas = corpus.CORPUS, corpus.FILES, corpus.ptxas

def _plans(filename: str) -> list:
    """[(arch generated for, [archs assembled for])]"""
    plans = [(80, [80, 90])]
    if not filename.endswith(".opt.hlo") and (FILES.index(filename) % 3 == 0
                                               or os.environ.get("XLAPY_PTXAS_ALL") == "1"):
        plans.append((90, [90]))
    return plans


PTXAS = ptxas()
pytestmark = pytest.mark.skipif(PTXAS is None, reason="NVIDIA's ptxas is not installed "
                                "(set XLAPY_PTXAS or install the CUDA toolkit)")


def _codegen_key() -> str:
    """What the PTX of a given LLVM IR depends on besides the IR: codegen.py, llvmlite's LLVM
    and libdevice."""
    import llvmlite.binding as llvm

    from xlapy.backends.gpu import codegen
    h = hashlib.sha256(pathlib.Path(codegen.__file__).read_bytes())
    h.update(repr(llvm.llvm_version_info).encode())
    h.update(str(codegen.libdevice_path()).encode())
    return h.hexdigest()


def _compile(job) -> dict:
    """{arch: ptx} or {"error": message} for one corpus file (in a worker process). The PTX
    of an LLVM IR text already compiled (same codegen) comes from the cache directory."""
    filename, cache_dir, key = job
    from xlapy.backends.gpu import codegen
    from xlapy.backends.gpu.compiler import emit_program
    from xlapy.errors import LoweringError
    from xlapy.hlo import parse_file
    try:
        program, text = emit_program(parse_file(CORPUS / filename))
    except LoweringError as e:
        return {"error": str(e)}
    out = {"kinds": sorted({k.kind for k in program.kernels})}
    for arch, _ in _plans(filename):
        name = hashlib.sha256(f"{key}|{arch}|{text}".encode()).hexdigest() + ".ptx"
        cached = pathlib.Path(cache_dir) / name
        if cached.exists():
            out[arch] = cached.read_text()
        else:
            out[arch] = codegen.compile_ptx(text, arch)
            tmp = cached.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(out[arch])
            tmp.replace(cached)
    return out


def _assemble(ptx: str, arch: int) -> str | None:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        r = subprocess.run([PTXAS, f"-arch=sm_{arch}", path, "-o", os.path.join(d, "k.cubin")],
                           capture_output=True, text=True, timeout=120)
        return None if r.returncode == 0 else (r.stderr or r.stdout)[-2000:]


@pytest.fixture(scope="module")
def results(request, tmp_path_factory):
    workers = min(4, os.cpu_count() or 1)
    cache = getattr(request.config, "cache", None)   # (absent with -p no:cacheprovider)
    cache_dir = str(cache.mkdir("gpu_ptx") if cache else tmp_path_factory.mktemp("gpu_ptx"))
    key = _codegen_key()
    jobs = [(f, cache_dir, key) for f in FILES]
    with cf.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        compiled = dict(zip(FILES, pool.map(_compile, jobs)))
    jobs = {}
    with cf.ThreadPoolExecutor(workers) as threads:
        for f, r in compiled.items():
            if "error" in r:
                continue
            for gen, archs in _plans(f):
                for arch in archs:
                    jobs[(f, gen, arch)] = threads.submit(_assemble, r[gen], arch)
        assembled = {k: j.result() for k, j in jobs.items()}
    return compiled, assembled


@pytest.mark.parametrize("filename", FILES)
def test_ptx_assembles(results, filename):
    compiled, assembled = results
    r = compiled[filename]
    refused = corpus.refusal(corpus.ENTRY_OF[filename], filename)
    if refused:
        assert refused in r.get("error", ""), f"expected a refusal ({refused}): {r}"
        return
    assert "error" not in r, r.get("error")
    for gen, archs in _plans(filename):
        assert f".target sm_{gen}" in r[gen]
        assert ".extern .func __nv_" not in r[gen], "libdevice was not linked"
        for arch in archs:
            err = assembled[(filename, gen, arch)]
            assert err is None, f"PTX for sm_{gen}, ptxas -arch=sm_{arch}: {err}"
