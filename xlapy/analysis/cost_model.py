"""A static cost model: flops, transcendentals and bytes accessed, as XLA's cost analysis
reports them (keys "flops", "transcendentals", "bytes accessed").

  elementwise op      1 flop per output element (transcendentals counted separately)
  reduce              1 flop per input element (per reducer application)
  dot                 2 * (output elements) * (contracted size)
  convolution         2 * (output elements) * (input features per group) * (window size)
  data movement       0 flops
  bytes accessed      for every kernel the program launches (a fusion or an unfused
                      instruction of the entry or a control-flow body): the bytes of its
                      operands plus its outputs. Inside a fusion nothing is counted: that
                      is the point of fusion.

Loop bodies are counted once (trip counts are unknown statically).
"""

from __future__ import annotations

from xlapy.hlo.ir import Computation, Instruction, Module
from xlapy.hlo.opcodes import CONTROL_FLOW, NO_KERNEL, OPCODES, TRANSCENDENTAL


def _out_elements(i: Instruction) -> int:
    return sum(s.size for s in i.shape.leaves())


def instruction_flops(i: Instruction) -> tuple[int, int]:
    """(flops, transcendentals) of one instruction (fusions: of their computation)."""
    op = i.opcode
    how = OPCODES[op].flops  # the opcode table's flops column
    if op == "fusion":
        return computation_flops(i.fused_computation)
    if how == "called":
        f = t = 0
        for c in i.called_computations():
            cf, ct = computation_flops(c)
            f, t = f + cf, t + ct
        return f, t
    if how == "none":
        return 0, 0
    if how == "dot":
        k = 1
        for d in i.attrs.get("lhs_contracting_dims", ()):
            k *= i.operands[0].shape.dims[d]
        return 2 * _out_elements(i) * k, 0
    if how == "convolution":
        dn, w = i.attrs["dim_labels"], i.attrs["window"]
        k = i.operands[1].shape.dims[dn.kernel_input_feature]
        for s in w.size:
            k *= s
        return 2 * _out_elements(i) * k, 0
    if how == "input":  # one reducer/comparator application per input element
        return sum(o.shape.size for o in i.operands[:max(len(i.operands) // 2, 1)]), 0
    n = _out_elements(i)
    return (n, n) if op in TRANSCENDENTAL else (n, 0)


def computation_flops(comp: Computation) -> tuple[int, int]:
    f = t = 0
    for i in comp.instructions:
        a, b = instruction_flops(i)
        f, t = f + a, t + b
    return f, t


def _bytes(comp: Computation) -> int:
    total = 0
    for i in comp.instructions:
        if i.opcode in NO_KERNEL:
            continue
        if i.opcode in CONTROL_FLOW:
            total += sum(_bytes(c) for c in i.called_computations())
            continue
        total += sum(o.shape.byte_size for o in i.operands) + i.shape.byte_size
    return total


def module_cost(module: Module) -> dict:
    flops, trans = computation_flops(module.entry)
    return {"flops": float(flops), "transcendentals": float(trans),
            "bytes accessed": float(_bytes(module.entry))}
