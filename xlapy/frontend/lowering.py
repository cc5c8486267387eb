"""Lowering: a traced Graph becomes an HLO module, through the HLO Builder.

Each primitive's lowering rule receives a LoweringContext (`ctx.b` is the Builder of the
computation being built) and the HLO instructions of its operands, and returns the HLO
instruction(s) of its result(s). Control-flow primitives lower their sub-graphs into HLO
computations with `ctx.lower_subgraph`.

Every instruction carries metadata: op_name "jit(<fn>)/<primitive>" and the user's source
file and line, so an optimized (fused) kernel can be traced back to the user's code.

Captured constants: small ones become HLO constants; large ones (more than
LARGE_CONSTANT elements) become extra entry parameters that jit passes at each call, so
module text (and compile-cache fingerprints) stay small.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import LoweringError
from xlapy.frontend.core import Tracer
from xlapy.frontend.graph import Graph, Literal, input_env
from xlapy.hlo.builder import Builder
from xlapy.hlo.ir import Module
from xlapy.hlo.shapes import Shape, primitive_type

LARGE_CONSTANT = 4096


def shape_of(aval) -> Shape:
    return Shape.array(primitive_type(aval.dtype), aval.shape)


class LoweringContext:
    def __init__(self, builder: Builder, fn_name: str):
        self.b = builder
        self.fn_name = fn_name

    def sub(self, builder: Builder) -> "LoweringContext":
        return LoweringContext(builder, self.fn_name)

    def lower_subgraph(self, graph: Graph, name: str, tuple_param: bool = False,
                       param_avals: list | None = None):
        """An HLO computation computing `graph`. Parameters are the graph's constvars then
        invars (one tuple parameter holding them when tuple_param); the result is a tuple
        of the outputs when tuple_param or when there are several outputs."""
        sb = self.b.subcomputation(name)
        avals = [v.aval for v in graph.constvars + graph.invars]
        if tuple_param:
            tshape = Shape.tuple([shape_of(a) for a in avals])
            p = sb.parameter(tshape, "p")
            values = [sb.get_tuple_element(p, i) for i in range(len(avals))]
        else:
            values = [sb.parameter(shape_of(a), f"p{i}") for i, a in enumerate(avals)]
        nc = len(graph.constvars)
        outs = lower_graph(self.sub(sb), graph, values[:nc], values[nc:])
        root = sb.tuple(outs) if (tuple_param or len(outs) != 1) else outs[0]
        return sb.build(root)


def lower_graph(ctx: LoweringContext, graph: Graph, consts: list, args: list) -> list:
    b = ctx.b
    env = input_env(graph, consts, args)

    def read(atom):
        if isinstance(atom, Literal):
            return b.constant(atom.value)
        return env[atom.id]

    for e in graph.eqns:
        if e.prim.lowering is None:
            raise LoweringError(f"primitive {e.prim.name} has no lowering to HLO")
        md = {"op_name": f"jit({ctx.fn_name})/{e.prim.name}"}
        if e.source:
            md["source_file"], md["source_line"] = e.source[0], e.source[1]
        with b.metadata(**md):
            out = e.prim.lowering(ctx, *[read(x) for x in e.inputs], **e.params)
        outs = out if e.prim.multiple_results else [out]
        for v, o in zip(e.outputs, outs):
            env[v.id] = o
    return [read(o) for o in graph.outputs]


def lower_to_module(graph: Graph, consts: list, name: str) -> tuple[Module, list[int]]:
    """The entry module for a jit-traced graph. Returns (module, indices of the consts
    passed as extra trailing parameters)."""
    b = Builder("main")
    ctx = LoweringContext(b, name)
    params = [b.parameter(shape_of(v.aval), f"arg{i}") for i, v in enumerate(graph.invars)]
    const_instrs, extra = [], []
    for i, (_v, c) in enumerate(zip(graph.constvars, consts)):
        if isinstance(c, Tracer):
            raise LoweringError("internal error: a tracer was captured by a top-level jit graph")
        c = np.asarray(c)
        if c.size > LARGE_CONSTANT:
            extra.append(i)
            const_instrs.append(None)
        else:
            const_instrs.append(b.constant(c))
    for i in extra:
        const_instrs[i] = b.parameter(shape_of(graph.constvars[i].aval), f"const{i}")
    outs = lower_graph(ctx, graph, const_instrs, params)
    root = outs[0] if len(outs) == 1 else b.tuple(outs)
    module = b.build_module(root, name=f"jit_{_ident(name)}")
    return module, extra


def _ident(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out or "fn"
