"""The gemm-update custom call (passes/gemm_update.py) as one gemm: out = W + alpha * A.B
with beta = 1, reading W where it lies (or in place when W's buffer is the result's)."""

from __future__ import annotations

from xlapy.backends.cpu.emitters.gemm import emit_gemm
from xlapy.backends.cpu.emitters.registry import custom_call_target
from xlapy.backends.cpu.passes.dot_plan import plan_for
from xlapy.backends.cpu.passes.gemm_update import DIMS, TARGET, config_of


@custom_call_target(TARGET)
def emit_gemm_update(pe, instr, dest, operands) -> bool:
    cfg = config_of(instr)
    w, a, b = instr.operands
    attrs = {k: tuple(cfg[k]) for k in DIMS}
    plan = plan_for(attrs, a.shape, b.shape, instr.shape)
    if plan is None:
        return False
    # W is read where it lies (cin), unless it already is the result's buffer; the fusion
    # only forms with W laid out like the result, a hand-written custom-call may differ
    cin = None
    if 0 not in pe.shared_operands(instr):
        if w.shape.minor_to_major == instr.shape.minor_to_major:
            cin = operands[0]
        else:
            pe.memcpy(dest[0], operands[0], instr.shape.byte_size)
    emit_gemm(pe, plan, dest[0], operands[1], operands[2], alpha=cfg["alpha"], beta=1.0,
              cin_ptr=cin)
    return True
