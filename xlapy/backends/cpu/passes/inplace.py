"""Which operands an instruction's cpu code may overwrite with its own result.

Buffer assignment lets an instruction write its result into the buffer of an operand that
dies at that instruction (in-place), and the entry program writes a result into the buffer
of a donated parameter (input/output aliasing). Both are only correct when the code reads
each element of that operand before writing the output element at the same position and
never reads another position of it afterwards. That holds for:

  - an elementwise instruction, for each operand with the output's dimensions, layout and
    element size;
  - a loop fusion with an array (non-tuple) result, for each parameter of the fused
    computation whose every path to the root goes through such elementwise instructions
    only (no broadcast, transpose, slice, reduce, ... of it);
  - xlapy's gemm-update custom-call (out = W + alpha * A.B), for W: the gemm reads and
    writes W in place with beta = 1;
  - dynamic-update-slice, for its operand: its emitter (dynamic_update_slice.py) then
    writes only the update;
  - an all-reduce of one operand: its emitter (emitters/collectives.py) then passes
    MPI_IN_PLACE to MPI_Allreduce.

The kernel then reads that operand through its output pointer (backends/llvm/loop_kernel.py), so the
generated code never has two `noalias` pointers to one buffer.
"""

from __future__ import annotations

from xlapy.backends.cpu.passes.column_plan import column_plan, overwritable_operands
from xlapy.backends.cpu.passes.gemm_update import TARGET as GEMM_UPDATE
from xlapy.hlo.ir import Instruction
from xlapy.hlo.opcodes import ELEMENTWISE
from xlapy.hlo.shapes import Shape, same_buffer_shape


def _elementwise_to_root(param: Instruction, out: Shape, root: Instruction) -> bool:
    stack, seen = [param], set()
    while stack:
        i = stack.pop()
        if id(i) in seen:
            continue
        seen.add(id(i))
        if i is not param and (i.opcode not in ELEMENTWISE or i.shape.is_tuple
                               or i.shape.dims != out.dims
                               or i.shape.minor_to_major != out.minor_to_major):
            return False
        if i is root:
            continue
        if not i.users:
            continue  # dead code inside the fusion reads nothing at run time
        stack.extend(i.users)
    return True


def inplace_operands(instr: Instruction) -> list[int]:
    """Indices of the operands whose buffer instr's cpu code may overwrite with its result."""
    out = instr.shape
    if out.is_tuple or out.size == 0:
        return []
    if instr.opcode == "custom-call":
        if instr.attrs.get("custom_call_target") == GEMM_UPDATE:
            return [0] if same_buffer_shape(instr.operands[0].shape, out) else []
        return []
    if instr.opcode == "dynamic-update-slice":  # dynamic_update_slice.py writes the update only
        return [0] if same_buffer_shape(instr.operands[0].shape, out) else []
    if instr.opcode == "all-reduce":   # MPI_Allreduce(MPI_IN_PLACE, ...): collectives.py
        ops = instr.operands
        return [0] if len(ops) == 1 and same_buffer_shape(ops[0].shape, out) else []
    if instr.opcode in ELEMENTWISE:
        if instr.opcode == "copy":
            return []
        return [k for k, o in enumerate(instr.operands) if same_buffer_shape(o.shape, out)]
    if instr.opcode != "fusion" or instr.attrs.get("kind", "kLoop") != "kLoop":
        return []
    if column_plan(instr) is not None:
        return []
    comp = instr.fused_computation
    if comp.root.shape.is_tuple:
        return []
    params = {p.parameter_number: p for p in comp.parameters}
    return [k for k, o in enumerate(instr.operands)
            if same_buffer_shape(o.shape, out) and k in params
            and _elementwise_to_root(params[k], out, comp.root)]


def donatable_operands(instr: Instruction, element: int | None = None) -> list[int]:
    """Operands whose buffer instr's output (root element `element` of a multi-output
    kernel) may be written into when that output is donated: column kernels by their own
    rule (column_plan.overwritable_operands), the rest as inplace_operands."""
    if column_plan(instr) is not None:
        return overwritable_operands(instr, element)
    return inplace_operands(instr) if element is None else []
