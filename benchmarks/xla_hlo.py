"""XLA itself (through jaxlib) on HLO text, for comparisons in the same process:

    m = parse(text)              # XLA's HLO text parser
    exe = compile(m)             # HloModule -> XlaComputation -> MLIR -> the CPU client
    outs = run(exe, [x, ...])    # flat list of NumPy arrays (tuple results flattened)

The calls are jaxlib's (0.10.x): `jaxlib._hlo.hlo_module_from_text`, the MLIR conversion
of an XlaComputation, and the CPU client's `compile_and_load`.
"""

from __future__ import annotations

import numpy as np


def _backend():
    import jax.extend.backend
    return jax.extend.backend.get_backend("cpu")


def parse(text: str):
    import jaxlib._hlo as hlo
    return hlo.hlo_module_from_text(text)


def compile(module):
    import jaxlib._hlo as hlo
    from jax._src.lib import xla_client as xc
    comp = hlo.XlaComputation(module.as_serialized_hlo_module_proto())
    mlir = xc._xla.mlir.xla_computation_to_mlir_module(comp)
    backend = _backend()
    devices = xc._xla.DeviceList(tuple(backend.local_devices()[:1]))
    return backend.compile_and_load(str(mlir), devices, xc.CompileOptions())


def put(args: list) -> list:
    """The arguments as device buffers (once: timed runs then exclude the transfer)."""
    import jax
    dev = _backend().local_devices()[0]
    return [jax.device_put(np.asarray(a), dev) for a in args]


def run(exe, buffers: list) -> list:
    outs = exe.execute_sharded(buffers).disassemble_into_single_device_arrays()
    return [np.asarray(o[0]) for o in outs]
