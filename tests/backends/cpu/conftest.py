"""Shared setup for the cpu backend tests.

- Every test session compiles into fresh disk caches (tests/conftest.py).
- `run_cpu_and_interpreter(module_or_text, *args)` compiles a module (HLO text or Module) on
  both the cpu backend and the reference interpreter, runs it and returns both flattened
  output lists; `assert_same(got, want)` compares arrays exactly (bit patterns for floats,
  so NaN payload signs and -0.0 count, when `bitwise`).
- `corpus_case(name)` loads tests/hlo/<name> with its inputs and XLA's outputs.
- the `ieee_denormals` fixture compiles without denormal flushing (--xla_cpu_ftz=false),
  for the op tables' exact comparisons with the interpreter.
- the `any_size` fixture lets Winograd take every convolution it can compute (1-d and 2-d),
  however small (test_conv_winograd.py, test_conv_winograd_1d.py).
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from xlapy.backends.base import flatten, get_platform
from xlapy.backends.interpreter import evaluate
from xlapy.hlo import parse
from xlapy.hlo.parser import parse_file

CORPUS = pathlib.Path(__file__).resolve().parents[2] / "hlo"


def _register(name: str, file: str) -> None:
    """A helper module of this directory, importable by its tests as `name` (a private
    name: tests/frontend has an optable module too, and pytest runs with
    --import-mode=importlib, which puts no test directory on sys.path)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, pathlib.Path(__file__).with_name(file))
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])


_register("xlapy_tests_cpu_optable", "optable.py")
_register("xlapy_tests_cpu_conv_cases", "conv_cases.py")
_register("xlapy_tests_cpu_jax_lowered", "jax_lowered.py")


def _module(m):
    return parse(m) if isinstance(m, str) else m


def run_cpu(module, *args) -> list[np.ndarray]:
    module = _module(module)
    return [np.asarray(g) for g in flatten(get_platform("cpu").compiler.compile(module).run(*args))]


def run_cpu_and_interpreter(module, *args):
    module = _module(module)
    got = flatten(get_platform("cpu").compiler.compile(module).run(*args))
    # evaluate() directly: Executable.check_arguments turns 0-d arguments into shape (1,)
    want = flatten(evaluate(module, *args))
    return [np.asarray(g) for g in got], [np.asarray(w) for w in want]


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16:
        return a.view(_UINT[a.dtype.itemsize])
    return a


def assert_same(got, want, bitwise: bool = True, what: str = "") -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if bitwise:
        np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def assert_close(got, want, rtol=1e-6, atol=1e-6, what: str = "") -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if got.dtype.kind in "fc" or got.dtype == ml_dtypes.bfloat16:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def check_against_jax(fn, *args, bitwise: bool = True, rtol=1e-6, atol=1e-6):
    """Lower fn with jax, run it on the cpu backend, the interpreter and jax itself; the cpu
    result must equal the interpreter's and jax's."""
    jax = pytest.importorskip("jax")
    text = jax.jit(fn).lower(*args).as_text(dialect="hlo")
    got, ref = run_cpu_and_interpreter(text, *args)
    want = [np.asarray(w) for w in jax.tree.leaves(jax.jit(fn)(*args))]
    assert len(got) == len(want)
    for k, (g, r, w) in enumerate(zip(got, ref, want)):
        if bitwise:
            assert_same(g, r, what=f"output {k} vs interpreter")
            assert_same(g, w, what=f"output {k} vs jax")
        else:
            assert_close(g, r, rtol, atol, what=f"output {k} vs interpreter")
            assert_close(g, w, rtol, atol, what=f"output {k} vs jax")
    return got


def corpus_case(name: str):
    """(module, inputs, XLA's outputs) of tests/hlo/<name> (.hlo or .opt.hlo)."""
    entries = json.loads((CORPUS / "MANIFEST.json").read_text())
    entry = next(e for e in entries if name in e["files"].values())

    def load(file, infos):
        with np.load(CORPUS / file) as z:
            arrays = [z[f"arr_{i}"] for i in range(len(z.files))]
        return [a.view(ml_dtypes.bfloat16) if info.get("stored_as") == "uint16" else a
                for a, info in zip(arrays, infos)]

    return (parse_file(CORPUS / name), load(entry["files"]["inputs"], entry["inputs"]),
            load(entry["files"]["outputs"], entry["outputs"]))


def check_corpus(name: str, rtol=2e-4, atol=1e-5):
    """Run a corpus module on the cpu backend: equal to the interpreter (up to float
    rounding of transcendentals), close to XLA's recorded outputs."""
    module, inputs, expected = corpus_case(name)
    got, ref = run_cpu_and_interpreter(module, *inputs)
    assert len(got) == len(expected)
    for k, (g, r, w) in enumerate(zip(got, ref, expected)):
        assert_close(g, r, rtol, atol, what=f"{name} output {k} vs interpreter")
        assert_close(g, w, rtol, atol, what=f"{name} output {k} vs XLA")


def in_forked_child(tmp_path, parent: str, child: str) -> None:
    """Run `parent` (Python, with os and numpy as np imported) in a fresh interpreter, fork,
    and run `child` in the child, which must set `ok`; assert that it is true there."""
    script = tmp_path / "fork_child.py"
    script.write_text("import os\nimport numpy as np\n" + parent + """
pid = os.fork()
if pid == 0:
    try:
""" + "".join(f"        {line}\n" for line in child.strip().splitlines()) + """
    except BaseException:
        import traceback
        traceback.print_exc()
        ok = False
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
print("child-status", os.waitstatus_to_exitcode(status))
""")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    assert "child-status 0" in proc.stdout, proc.stdout + proc.stderr


@pytest.fixture
def any_size(monkeypatch):
    """Winograd for every convolution it can compute, however small, and with two to four
    output features (the direct kernel of conv_one_output.py takes those otherwise; the
    thresholds are not part of the compile cache's key: no disk cache, and a fresh memory
    cache)."""
    from xlapy.backends.cpu.passes import conv_plan
    from xlapy.backends.cpu.passes import winograd_plan as W
    monkeypatch.setattr(conv_plan, "MAX_FEW_OUTPUTS", 1)
    monkeypatch.setattr(W, "MIN_INPUT_FEATURES", 1)
    monkeypatch.setattr(W, "MIN_FEATURES_1D", 1)
    monkeypatch.setattr(W, "MIN_TILES", 1)
    monkeypatch.setattr(W, "MIN_FLOPS", 0)
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    compiler = get_platform("cpu").compiler
    compiler.clear_cache()
    yield
    compiler.clear_cache()


@pytest.fixture
def ieee_denormals(monkeypatch):
    """Compile with --xla_cpu_ftz=false: IEEE gradual underflow, as the interpreter (NumPy)
    computes. The cpu backend flushes denormals by default, as XLA's CPU runtime does
    (fpmode.py, test_denormals.py checks that against JAX); the op tables feed denormals on
    purpose, to check each operation's arithmetic exactly against the interpreter."""
    flags = os.environ.get("XLAPY_FLAGS", "")
    monkeypatch.setenv("XLAPY_FLAGS", f"{flags} --xla_cpu_ftz=false".strip())


@pytest.fixture
def cpu_check():
    """The helpers above, for tests: cpu_check.jax(fn, *args), cpu_check.corpus(name), ..."""
    class Helpers:
        jax = staticmethod(check_against_jax)
        corpus = staticmethod(check_corpus)
        run = staticmethod(run_cpu_and_interpreter)
        cpu = staticmethod(run_cpu)
        same = staticmethod(assert_same)
        close = staticmethod(assert_close)
        corpus_case = staticmethod(corpus_case)
        in_forked_child = staticmethod(in_forked_child)
    return Helpers
