"""Gemm-update fusion: W - c*(A.B) (or W + c*(A.B)) as one BLAS call.

A training step's weight update reads the weight and its gradient and writes the new
weight; the gradient itself was just written by a gemm. Rewriting

    subtract(W, multiply(broadcast(c), dot(A, B)))   ->   custom-call "__xlapy$gemm_update"
                                                           (W, A, B), alpha = -c

lets the backend run one gemm with alpha and beta = 1 that reads W and writes the new
weight (xlapy's gemm does it in one pass; with BLAS, W is first copied into the result), so
the gradient never goes to memory. Also add(W, ...) (alpha = +c) and subtract(W, dot) (alpha
= -1). Applies to f32/f64 dots the gemm emitter handles, whose result and product have
no other users, with W of the same shape and layout. The reference interpreter evaluates
the custom-call too (hlo/evaluator/xlapy_calls.py), so optimized modules stay checkable.
"""

from __future__ import annotations

import json

from xlapy.backends.cpu.passes.dot_plan import plan_for
from xlapy.hlo.attributes import Raw
from xlapy.hlo.ir import Instruction
from xlapy.passes.rewrite import InstructionPass
from xlapy.passes.simplifier_rules_common import uniform_value

TARGET = "__xlapy$gemm_update"
DIMS = ("lhs_contracting_dims", "rhs_contracting_dims", "lhs_batch_dims", "rhs_batch_dims")


def _scale(m: Instruction, d: Instruction):
    """c if m = multiply(broadcast-or-constant c, d) (either order), else None."""
    if m.opcode != "multiply" or len(m.users) != 1:
        return None
    other = m.operands[1] if m.operands[0] is d else m.operands[0] if m.operands[1] is d else None
    if other is None:
        return None
    v = uniform_value(other)
    return None if v is None else float(v)


def _match(u: Instruction):
    if u.opcode not in ("subtract", "add") or u.shape.element_type.name not in ("f32", "f64"):
        return None
    w, m = u.operands
    sign = -1.0 if u.opcode == "subtract" else 1.0
    if m.opcode == "dot":
        d, c = m, 1.0
    elif m.opcode == "multiply":
        d = next((o for o in m.operands if o.opcode == "dot"), None)
        c = _scale(m, d) if d is not None else None
        if c is None:
            return None
    else:
        return None
    if len(d.users) != 1 or not w.shape.equal_with_layout(u.shape) \
            or not d.shape.equal_with_layout(u.shape):
        return None
    if plan_for(d.attrs, d.operands[0].shape, d.operands[1].shape, d.shape) is None:
        return None
    return w, d, sign * c


class GemmUpdateFusion(InstructionPass):
    name = "gemm-update-fusion"
    fused_too = True

    def rewrite(self, comp, u) -> bool:
        found = _match(u)
        if found is None:
            return False
        w, d, alpha = found
        config = {"alpha": alpha, **{k: list(d.attrs.get(k, ())) for k in DIMS}}
        call = Instruction("custom-call", u.shape, [w, d.operands[0], d.operands[1]],
                           {"custom_call_target": TARGET,
                            "backend_config": Raw(json.dumps(config))},
                           "gemm_update", dict(d.metadata))
        comp.add_instruction(call)
        comp.replace_instruction(u, call)  # the product and the dot die: DCE follows
        comp.instructions = comp.post_order()
        return True
def config_of(instr: Instruction) -> dict:
    return json.loads(str(instr.attrs["backend_config"]))
