"""Printer for XLA's HLO text format (the form XLA uses for optimized modules).

print -> parse gives back an equal module (tests/hlo/test_roundtrip.py checks it on the whole
corpus). Options:
  print_metadata   include metadata={...} (default True)
  print_layouts    include layouts on instruction shapes (default True)
  print_ids        unused; names are printed as stored
"""

from __future__ import annotations

from xlapy.hlo import attributes as A
from xlapy.hlo.attributes import Raw, quote
from xlapy.hlo.ir import Computation, Instruction, Module
from xlapy.hlo.literal import ELIDED, format_literal


def format_attr_value(value) -> str:
    """Text of an attribute value (computations print as %name)."""
    if isinstance(value, A.Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Computation):
        return "%" + value.name
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], Computation):
        return "{" + ", ".join("%" + c.name for c in value) + "}"
    if isinstance(value, tuple):
        return "{" + ",".join(map(str, value)) + "}"
    if isinstance(value, (A.SliceSpec, A.PaddingConfig, A.Window, A.ConvDimensionNumbers,
                          A.ReplicaGroups)):
        return str(value)
    if isinstance(value, str):
        return value
    raise TypeError(f"cannot print attribute value {value!r}")


def _metadata_to_string(md: dict) -> str:
    parts = []
    for k, v in md.items():
        if isinstance(v, Raw) or isinstance(v, int):
            parts.append(f"{k}={v}")
        else:
            parts.append(f"{k}={quote(str(v))}")
    return "{" + " ".join(parts) + "}"


LARGE_CONSTANT = 1024   # print_large_constants=False elides literals of more elements


def is_large_constant(instr: Instruction) -> bool:
    return (instr.opcode == "constant" and instr.literal is not ELIDED
            and not instr.shape.is_tuple and instr.shape.size > LARGE_CONSTANT)


def instruction_to_string(instr: Instruction, print_metadata: bool = True,
                          print_layouts: bool = True, print_large_constants: bool = True) -> str:
    shape = instr.shape.to_string(print_layouts)
    if instr.opcode == "parameter":
        args = str(instr.parameter_number)
    elif instr.opcode == "constant":
        args = "{...}" if not print_large_constants and is_large_constant(instr) else \
            format_literal(instr.literal, instr.shape)
    else:
        args = ", ".join("%" + op.name for op in instr.operands)
    text = f"%{instr.name} = {shape} {instr.opcode}({args})"
    for key, value in instr.attrs.items():
        if key in ("custom_call_target", "opaque") and not isinstance(value, Raw):
            text += f", {key}={quote(value)}"
        else:
            text += f", {key}={format_attr_value(value)}"
    if print_metadata and instr.metadata:
        text += f", metadata={_metadata_to_string(instr.metadata)}"
    return text


def computation_to_string(comp: Computation, print_metadata: bool = True,
                          print_layouts: bool = True, is_entry: bool | None = None,
                          print_large_constants: bool = True) -> str:
    if is_entry is None:
        is_entry = comp.module is not None and comp.module.entry is comp
    params = ", ".join(f"{p.name}: {p.shape.to_string(False)}" for p in comp.parameters)
    result = comp.root.shape.to_string(False) if comp.root is not None else "()"
    head = ("ENTRY " if is_entry else "") + f"%{comp.name} ({params}) -> {result} {{"
    lines = [head]
    for instr in comp.instructions:
        prefix = "  ROOT " if instr is comp.root else "  "
        lines.append(prefix + instruction_to_string(instr, print_metadata, print_layouts,
                                                    print_large_constants))
    tail = "}"
    for k, v in comp.attrs.items():
        tail += f", {k}={v}"
    lines.append(tail)
    return "\n".join(lines)


def entry_layout_string(mod: Module) -> str:
    e = mod.entry
    params = ", ".join(p.shape.with_default_layouts().to_string() for p in e.parameters)
    return "{(" + params + ")->" + e.root.shape.with_default_layouts().to_string() + "}"


def module_to_string(mod: Module, print_metadata: bool = True, print_layouts: bool = True,
                     print_large_constants: bool = True) -> str:
    """print_large_constants=False prints literals of more than LARGE_CONSTANT elements as
    {...} (XLA's HloPrintOptions of that name): text that is only shown, or hashed beside
    the constants' bytes, need not cost a module's weights in decimal."""
    header = f"HloModule {mod.name}"
    attrs = dict(mod.attrs)
    if mod.has_entry_layout and mod.entry is not None:
        # XLA prints is_scheduled before entry_computation_layout; keep that order.
        items = list(attrs.items())
        pos = 1 if items and items[0][0] == "is_scheduled" else 0
        items.insert(pos, ("entry_computation_layout", entry_layout_string(mod)))
        attrs = dict(items)
    for k, v in attrs.items():
        header += f", {k}={v}"
    out = [header, ""]
    for block, lines in mod.header_blocks.items():
        out.append(block)
        out.extend(lines)
        out.append("")
    for comp in mod.computations:
        out.append(computation_to_string(comp, print_metadata, print_layouts,
                                         is_entry=comp is mod.entry,
                                         print_large_constants=print_large_constants))
        out.append("")
    return "\n".join(out)
