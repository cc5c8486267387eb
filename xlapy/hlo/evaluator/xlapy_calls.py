"""Reference implementations of the custom-calls xlapy's own passes create.

  __xlapy$gemm_update(W, A, B)   W + alpha * dot_general(A, B) (backend_config holds alpha
                                 and the dot dimension numbers); see
                                 backends/cpu/passes/gemm_update.py
  xlapy_host_callback(...)       a Python function (jax.debug.print, pure_callback, ...),
                                 by the id in backend_config; see hlo/host_callbacks.py
"""

from __future__ import annotations

import json

import numpy as np

from xlapy.hlo import host_callbacks
from xlapy.hlo.evaluator.control import xlapy_call
from xlapy.hlo.evaluator.linalg import matmul_dims


@xlapy_call("__xlapy$gemm_update")
def _gemm_update(ev, instr, operands):
    cfg = json.loads(str(instr.attrs["backend_config"]))
    w, a, b = operands
    prod = matmul_dims(a.astype(np.float64), b.astype(np.float64), cfg["lhs_contracting_dims"],
                       cfg["rhs_contracting_dims"], cfg["lhs_batch_dims"], cfg["rhs_batch_dims"])
    return (w.astype(np.float64) + cfg["alpha"] * prod).astype(w.dtype)


@xlapy_call(host_callbacks.TARGET)
def _host_callback(ev, instr, operands):
    """A host callback (hlo/host_callbacks.py): the registered function on the operands;
    the result is always a tuple of its results (empty for debug.print/callback)."""
    outs = host_callbacks.invoke(host_callbacks.callback_id_of(instr), list(operands))
    return tuple(outs)
