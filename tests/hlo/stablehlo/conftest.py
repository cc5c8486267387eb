"""Shared helpers of the StableHLO tests, importable as `xlapy_tests_stablehlo` (pytest runs
with --import-mode=importlib, which puts no test directory on sys.path).

The corpus comparisons reuse the interpreter corpus test's loaders and tolerances
(tests/backends/interpreter/test_corpus.py) so that NAME.mlir is held to exactly the
standard NAME.hlo is.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

HERE = pathlib.Path(__file__).parent


def _register(name: str, path: pathlib.Path) -> None:
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])


_register("xlapy_tests_interpreter_corpus",
          HERE.parents[1] / "backends" / "interpreter" / "test_corpus.py")
_register("xlapy_tests_stablehlo", HERE / "util.py")
