"""Helpers for the StableHLO tests (registered as `xlapy_tests_stablehlo` by conftest.py)."""

from __future__ import annotations

import json
import pathlib

import numpy as np

from xlapy.errors import ParseError, XlapyError

CORPUS = pathlib.Path(__file__).resolve().parents[1]
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())


def entries():
    return [e for e in MANIFEST if "mlir" in e["files"]]


def expects_unsupported(entry, kind: str) -> bool:
    return entry.get("expect") == "unsupported-custom-call" and kind in entry.get(
        "expect_files", [])


def xla_backend():
    """jaxlib's CPU client, with the LAPACK custom-call targets registered (compiling text
    that calls them before they are registered crashes XLA)."""
    import jax
    jax.config.update("jax_platforms", "cpu")
    import jax._src.lax.linalg as linalg
    import jax.extend.backend
    linalg.initialize_lapack()
    return jax.extend.backend.get_backend("cpu")


def run_with_xla(text: str, inputs) -> list[np.ndarray]:
    """Compile StableHLO text with XLA:CPU and run it on `inputs`; the flat outputs."""
    import jax
    from jax._src.lib import xla_client as xc
    backend = xla_backend()
    devices = xc._xla.DeviceList(tuple(backend.local_devices()[:1]))
    exe = backend.compile_and_load(text, devices, xc.CompileOptions())
    with jax.enable_x64(True):
        bufs = [jax.device_put(np.asarray(x), exe.local_devices()[0]) for x in inputs]
    res = exe.execute_sharded(bufs)
    return [np.asarray(r[0]) for r in res.disassemble_into_single_device_arrays()]


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def assert_positioned(err: XlapyError) -> None:
    """A ParseError says file:line:column and shows the line (when it is not empty) with a
    caret under the column."""
    assert isinstance(err, ParseError), f"{type(err).__name__}: {err}"
    assert err.line > 0 and err.column > 0, str(err)
    assert "^" in str(err) or not err.source_line.strip(), str(err)
