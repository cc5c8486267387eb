"""HLO as one self-contained HTML page (the --xla_dump_hlo_as_html format).

The page needs nothing but a browser: the entry computation is drawn as an inline SVG
(layered layout computed here: each node sits one layer below its deepest operand; within
a layer nodes are ordered by the mean position of their operands), where a fusion is one
box listing the instructions fused into it; below the picture, every computation's text,
each instruction with its op_name and source line as a tooltip.
"""

from __future__ import annotations

import html

from xlapy.hlo.ir import Instruction, Module
from xlapy.hlo.opcodes import opcode_set

_W, _H, _GX, _GY = 190, 44, 24, 46
_FREE = opcode_set({"tuple", "get-tuple-element", "bitcast"}, "hlo_html._FREE")  # not drawn
_FILL = {"fusion": "#eadcf8", "dot": "#fbd3b0", "parameter": "#fff3b0", "constant": "#eeeeee"}
opcode_set(_FILL, "hlo_html._FILL")


def _node_lines(instr: Instruction) -> list[str]:
    head = f"{instr.opcode} {instr.name}"
    shape = instr.shape.to_string(print_layout=False)
    lines = [head, shape]
    if instr.opcode == "fusion":
        ops = [i.opcode for i in instr.fused_computation.instructions if i.opcode != "parameter"]
        lines.append("fuses: " + ", ".join(dict.fromkeys(ops)))
    return lines


def _layout(module: Module):
    comp = module.entry
    nodes = [i for i in comp.post_order() if i.opcode not in _FREE or i is comp.root]
    keep = {id(i) for i in nodes}

    def real_operands(i):
        out = []
        for o in i.operands:
            while id(o) not in keep and o.operands:
                o = o.operands[0]
            if id(o) in keep:
                out.append(o)
        return out

    depth = {}
    for i in nodes:
        ops = real_operands(i)
        depth[id(i)] = 1 + max((depth[id(o)] for o in ops), default=-1)
    layers: dict[int, list] = {}
    for i in nodes:
        layers.setdefault(depth[id(i)], []).append(i)
    xpos: dict[int, float] = {}
    for d in sorted(layers):
        row = layers[d]
        if d > 0:
            row.sort(key=lambda i: sum(xpos[id(o)] for o in real_operands(i)) /
                     max(len(real_operands(i)), 1))
        for k, i in enumerate(row):
            xpos[id(i)] = k
    heights = {id(i): _H + 14 * (len(_node_lines(i)) - 2) for i in nodes}
    pos = {}
    y = 10
    for d in sorted(layers):
        row = layers[d]
        for k, i in enumerate(row):
            pos[id(i)] = (10 + k * (_W + _GX), y)
        y += max(heights[id(i)] for i in row) + _GY
    width = 20 + max(len(r) for r in layers.values()) * (_W + _GX)
    return nodes, real_operands, pos, heights, width, y


def _svg(module: Module) -> str:
    nodes, real_operands, pos, heights, width, height = _layout(module)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="monospace" font-size="11">',
           '<defs><marker id="a" markerWidth="8" markerHeight="8" refX="7" refY="4" '
           'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#666"/></marker></defs>']
    for i in nodes:
        x, y = pos[id(i)]
        for o in real_operands(i):
            ox, oy = pos[id(o)]
            out.append(f'<line x1="{ox + _W / 2}" y1="{oy + heights[id(o)]}" x2="{x + _W / 2}" '
                       f'y2="{y}" stroke="#888" marker-end="url(#a)"/>')
    for i in nodes:
        x, y = pos[id(i)]
        fill = _FILL.get(i.opcode, "#ffffff")
        tip = html.escape(i.metadata.get("op_name", "") if i.metadata else "")
        out.append(f'<g><title>{tip}</title><rect x="{x}" y="{y}" width="{_W}" '
                   f'height="{heights[id(i)]}" rx="6" fill="{fill}" stroke="#555"/>')
        for k, line in enumerate(_node_lines(i)):
            if len(line) > 30:
                line = line[:28] + ".."
            out.append(f'<text x="{x + 6}" y="{y + 16 + 14 * k}">{html.escape(line)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def module_to_html(module: Module, title: str | None = None) -> str:
    title = title or module.name
    parts = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>",
             f"<title>{html.escape(title)}</title>",
             "<style>body{font-family:sans-serif;margin:20px} pre{background:#f7f7f7;"
             "padding:8px;overflow-x:auto} .i:hover{background:#ffe8a3} h2{margin-top:28px}"
             "</style></head><body>",
             f"<h1>{html.escape(title)}</h1>",
             f"<p>{len(module.computations)} computations, "
             f"{sum(len(c.instructions) for c in module.computations)} instructions. "
             "Hover a node or an instruction for its op_name and source.</p>",
             "<h2>Entry computation</h2>", _svg(module), "<h2>Text</h2>"]
    for comp in module.computations:
        parts.append(f"<h3 id='{html.escape(comp.name)}'>{html.escape(comp.name)}</h3><pre>")
        for instr in comp.instructions:
            md = instr.metadata or {}
            tip = " ".join(f"{k}={v}" for k, v in md.items())
            text = instr.to_string(print_metadata=False)
            prefix = "ROOT " if instr is comp.root else ""
            parts.append(f"<span class='i' title='{html.escape(tip)}'>{html.escape(prefix + text)}"
                         "</span>")
        parts.append("</pre>")
    parts.append("</body></html>")
    return "\n".join(parts)
