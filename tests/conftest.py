"""Shared setup of the whole suite.

Every test session compiles into fresh disk caches (XLAPY_CACHE_DIR, and
XLAPY_RUNTIME_CACHE_DIR for the runtime's own objects, otherwise cached with the
installation, in temporary directories), so code generation changes are never hidden by
objects cached by an earlier run, whatever order the tests run in. Under pytest-xdist
(`make test` runs `-n 2`) the workers of one session share those directories: the caches
are safe for several processes (an entry is written to a temporary file and renamed into
place), and a module compiled by one worker is then loaded by the other, as it would be in
one process.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _fresh_compile_cache(tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent   # the session's directory, above each worker's own
    cache, runtime = base / "xlapy_cache", base / "xlapy_runtime"
    cache.mkdir(exist_ok=True)
    runtime.mkdir(exist_ok=True)
    saved = {k: os.environ.get(k) for k in ("XLAPY_CACHE_DIR", "XLAPY_RUNTIME_CACHE_DIR",
                                            "XLAPY_DISABLE_CACHE")}
    os.environ["XLAPY_CACHE_DIR"] = str(cache)
    os.environ["XLAPY_RUNTIME_CACHE_DIR"] = str(runtime)
    os.environ.pop("XLAPY_DISABLE_CACHE", None)
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
