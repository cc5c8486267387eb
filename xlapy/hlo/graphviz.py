"""HLO as a Graphviz graph (the --xla_dump_hlo_as_dot format).

One node per instruction, labelled with its opcode, name and shape; edges go from operand
to user. Each fusion is drawn as a box (a Graphviz cluster) around the instructions of its
fused computation, with the fusion's parameters connected to the producers outside, so
the picture shows which arrays stay inside a kernel. Control-flow bodies (while,
conditional) are drawn as separate clusters. `dot -Tpng module.dot -o module.png` renders
it.
"""

from __future__ import annotations

from xlapy.hlo.ir import Computation, Instruction, Module
from xlapy.hlo.literal import format_literal
from xlapy.hlo.opcodes import CONTROL_FLOW, opcode_set

_COLORS = {"parameter": "#fff3b0", "constant": "#eeeeee", "dot": "#f4a261",
           "convolution": "#f4a261", "reduce": "#a8dadc", "fusion": "#cdb4db",
           "while": "#ffafcc", "conditional": "#ffafcc", "custom-call": "#e63946"}
opcode_set(_COLORS, "hlo_graph._COLORS")


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("{", "\\{").replace("}", "\\}") \
        .replace("<", "\\<").replace(">", "\\>").replace("|", "\\|")


class _Ids:
    def __init__(self):
        self.ids: dict[int, str] = {}

    def __call__(self, instr: Instruction) -> str:
        if id(instr) not in self.ids:
            self.ids[id(instr)] = f"n{len(self.ids)}"
        return self.ids[id(instr)]


def _label(instr: Instruction) -> str:
    shape = instr.shape.to_string(print_layout=False)
    if len(shape) > 48:
        shape = shape[:45] + "..."
    extra = ""
    if instr.opcode == "constant" and instr.shape.size == 1 and not instr.shape.is_tuple:
        extra = f"\\n= {_esc(format_literal(instr.literal, instr.shape))}"
    op = instr.opcode
    if op == "fusion":
        op = f"fusion ({instr.attrs.get('kind', '')})"
    return f"{_esc(op)}\\n{_esc(instr.name)}\\n{_esc(shape)}{extra}"


def computation_to_dot(comp: Computation, ids: _Ids | None = None, indent: str = "  ") -> str:
    ids = ids or _Ids()
    lines: list[str] = []
    _emit_body(comp, ids, lines, indent)
    return "\n".join(lines)


def _emit_body(comp: Computation, ids: _Ids, lines: list[str], indent: str) -> None:
    for instr in comp.instructions:
        if instr.opcode == "fusion":
            fc = instr.fused_computation
            lines.append(f'{indent}subgraph cluster_{ids(instr)} {{')
            kind = _esc(instr.attrs.get("kind", ""))
            lines.append(f'{indent}  label="{_esc(instr.name)} ({kind})";'
                         ' style="rounded,filled"; fillcolor="#f3ecf9"; color="#7b2cbf";')
            _emit_body(fc, ids, lines, indent + "  ")
            lines.append(f"{indent}}}")
            # fusion parameters are fed by the fusion's operands outside
            for p in fc.parameters:
                src = instr.operands[p.parameter_number]
                lines.append(f"{indent}{_src(src, ids)} -> {ids(p)} [style=dashed];")
            continue
        color = _COLORS.get(instr.opcode, "#ffffff")
        shape = "ellipse" if instr.opcode in ("parameter", "constant") else "box"
        bold = ", penwidth=2" if instr is comp.root else ""
        lines.append(f'{indent}{ids(instr)} [label="{_label(instr)}", shape={shape}, '
                     f'style=filled, fillcolor="{color}"{bold}];')
        for op in instr.operands:
            lines.append(f"{indent}{_src(op, ids)} -> {ids(instr)};")
        for sub in instr.called_computations():
            if instr.opcode in CONTROL_FLOW:
                sub_id = sub.name.replace(".", "_").replace("-", "_")
                lines.append(f'{indent}subgraph cluster_{ids(instr)}_{sub_id} {{')
                lines.append(f'{indent}  label="{_esc(instr.opcode)} {_esc(sub.name)}";'
                             ' style=dashed;')
                _emit_body(sub, ids, lines, indent + "  ")
                lines.append(f"{indent}}}")


def _src(instr: Instruction, ids: _Ids) -> str:
    """The node edges leave from: a fusion's root inside its box."""
    if instr.opcode == "fusion":
        return _src(instr.fused_computation.root, ids)
    return ids(instr)


def module_to_dot(module: Module, title: str | None = None) -> str:
    ids = _Ids()
    lines = [f'digraph "{_esc(title or module.name)}" {{', "  rankdir=TB;",
             '  node [fontname="Helvetica", fontsize=10];', '  edge [color="#555555"];',
             f'  label="{_esc(title or module.name)}"; labelloc=t;']
    _emit_body(module.entry, ids, lines, "  ")
    lines.append("}")
    return "\n".join(lines) + "\n"
