"""Reference implementations of the custom-calls xlapy's own passes create.

  __xlapy$gemm_update(W, A, B)   W + alpha * dot_general(A, B) (backend_config holds alpha
                                 and the dot dimension numbers); see
                                 backends/cpu/passes/gemm_update.py
"""

from __future__ import annotations

import json

import numpy as np

from xlapy.hlo.evaluator.control import xlapy_call


def dot_general(a, b, lc, rc, lb, rb, out_dtype):
    lfree = [d for d in range(a.ndim) if d not in lc and d not in lb]
    rfree = [d for d in range(b.ndim) if d not in rc and d not in rb]
    acc = np.float64
    at = np.transpose(a, list(lb) + lfree + list(lc)).astype(acc)
    bt = np.transpose(b, list(rb) + list(rc) + rfree).astype(acc)
    nb = len(lb)
    bshape = at.shape[:nb]
    m = int(np.prod(at.shape[nb:nb + len(lfree)], dtype=np.int64))
    k = int(np.prod(at.shape[nb + len(lfree):], dtype=np.int64))
    n = int(np.prod(bt.shape[nb + len(rc):], dtype=np.int64))
    r = np.matmul(at.reshape(bshape + (m, k)), bt.reshape(bshape + (k, n)))
    shape = bshape + tuple(a.shape[d] for d in lfree) + tuple(b.shape[d] for d in rfree)
    return r.reshape(shape)


@xlapy_call("__xlapy$gemm_update")
def _gemm_update(ev, instr, operands):
    cfg = json.loads(str(instr.attrs["backend_config"]))
    w, a, b = operands
    prod = dot_general(a, b, cfg["lhs_contracting_dims"], cfg["rhs_contracting_dims"],
                       cfg["lhs_batch_dims"], cfg["rhs_batch_dims"], w.dtype)
    return (w.astype(np.float64) + cfg["alpha"] * prod).astype(w.dtype)
