"""Shared setup for the ahead-of-time tests: harness.py importable as `xlapy_tests_aot_harness`
(pytest runs with --import-mode=importlib, which puts no test directory on sys.path), and
the toolchain fixtures, which skip a test with the reason when the compilers (or qemu for
AArch64) are missing: `make aot-toolchains` installs them on Debian."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import sys

import pytest

_NAME = "xlapy_tests_aot_harness"
if _NAME not in sys.modules:
    _spec = importlib.util.spec_from_file_location(
        _NAME, pathlib.Path(__file__).with_name("harness.py"))
    sys.modules[_NAME] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules[_NAME])

harness = sys.modules[_NAME]


@pytest.fixture(params=["x86_64", "aarch64"])
def machine(request):
    """Each machine the tests build for (x86-64 natively, AArch64 under qemu)."""
    return request.param


@pytest.fixture
def tc(machine):
    """The toolchain of `machine`, or a skip saying what is missing."""
    if harness.toolchain.HOST != "x86_64" and machine == "x86_64":
        pytest.skip("x86-64 programs are only run on an x86-64 host")
    return harness.toolchain_or_skip(machine)


@pytest.fixture
def host_tc():
    return harness.toolchain_or_skip(harness.toolchain.HOST)


@pytest.fixture
def ieee_denormals(monkeypatch):
    """Compile with --xla_cpu_ftz=false: gradual underflow, as the interpreter computes."""
    flags = os.environ.get("XLAPY_FLAGS", "")
    monkeypatch.setenv("XLAPY_FLAGS", f"{flags} --xla_cpu_ftz=false".strip())
