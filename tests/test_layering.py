"""The package layering (pyproject.toml's [tool.importlinter] contracts, docs/architecture.md)
holds, and the check catches what it is meant to catch: an upward import and an import
cycle inside a target package, each shown on a temporary copy of the package. Also:
inside the compiler's packages a function-level import of an xlapy module says why."""

from __future__ import annotations

import ast
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())", "--no-cache"]
# the packages whose function-level imports must say why (a comment on the line or above)
EXPLAINED = ("xlapy/backends", "xlapy/hlo", "xlapy/passes", "xlapy/analysis")


def _lint(cwd: pathlib.Path) -> subprocess.CompletedProcess:
    # UTF-8 both ways whatever locale an earlier test left this process in (module names
    # and contract titles may hold non-ASCII characters)
    env = dict(os.environ, PYTHONPATH=str(cwd), PYTHONUTF8="1")
    return subprocess.run(LINT, cwd=cwd, env=env, capture_output=True, encoding="utf-8",
                          timeout=300)


def test_contracts_hold():
    out = _lint(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> pathlib.Path:
    dst = tmp_path_factory.mktemp("layering")
    shutil.copytree(ROOT / "xlapy", dst / "xlapy",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", dst / "pyproject.toml")
    return dst


def _with_modules(copy: pathlib.Path, files: dict[str, str]):
    for rel, text in files.items():
        (copy / rel).write_text(text)
    try:
        return _lint(copy)
    finally:
        for rel in files:
            (copy / rel).unlink()


def test_an_upward_import_breaks_the_layers(copy):
    # the IR importing the frontend
    out = _with_modules(copy, {"xlapy/hlo/probe_upward.py": "import xlapy.frontend.jit\n"})
    assert out.returncode != 0
    assert "xlapy.hlo.probe_upward -> xlapy.frontend.jit" in out.stdout
    # the cpu runtime importing the compiler, even from inside a function
    out = _with_modules(copy, {"xlapy/backends/cpu/runtime/probe_up.py":
                               "def f():\n    from xlapy.backends.cpu import compiler\n"})
    assert out.returncode != 0
    assert "xlapy.backends.cpu.runtime.probe_up -> xlapy.backends.cpu.compiler" in out.stdout


def test_a_cycle_inside_a_target_package_breaks_the_contract(copy):
    out = _with_modules(copy, {
        "xlapy/backends/cpu/emitters/probe_a.py":
            "from xlapy.backends.cpu.emitters import probe_b\n",
        "xlapy/backends/cpu/emitters/probe_b.py":
            "def f():\n    from xlapy.backends.cpu.emitters import probe_a\n"})
    assert out.returncode != 0
    assert "No cycles are allowed in xlapy.backends.cpu.emitters" in out.stdout
    assert "probe_" in out.stdout


def _unexplained_function_level_imports(path: pathlib.Path, root: pathlib.Path = ROOT
                                        ) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    tree = ast.parse("\n".join(lines))
    allowed = {id(n) for n in tree.body}
    for node in ast.walk(tree):  # `if TYPE_CHECKING:` blocks are for annotations only
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            allowed |= {id(n) for n in node.body}
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in allowed:
            continue
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
            [a.name for a in node.names]
        if not any(n.startswith("xlapy") for n in names) and not getattr(node, "level", 0):
            continue
        line, above = lines[node.lineno - 1], lines[node.lineno - 2].strip()
        if "#" not in line and not above.startswith("#"):
            out.append(f"{path.relative_to(root)}:{node.lineno}: {line.strip()}")
    return out


def test_function_level_imports_say_why():
    found = [hit for pkg in EXPLAINED for p in sorted((ROOT / pkg).rglob("*.py"))
             for hit in _unexplained_function_level_imports(p)]
    assert not found, "function-level imports without a comment saying why:\n" + "\n".join(found)


def test_the_check_finds_an_unexplained_function_level_import(tmp_path):
    p = tmp_path / "probe_local_import.py"
    p.write_text("def f():\n    from xlapy.hlo import ir  # (a reason)\n"
                 "def g():\n    from xlapy.hlo import ir\n    return ir\n")
    assert _unexplained_function_level_imports(p, tmp_path) == [
        "probe_local_import.py:4: from xlapy.hlo import ir"]
