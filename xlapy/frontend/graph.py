"""Graphs: a traced function as a list of primitive applications (like a jaxpr).

    graph, consts, out_tree = make_graph(fn, avals)   # trace fn on abstract inputs
    outs = eval_graph(graph, consts, args)             # re-apply it (eagerly or in a trace)

A Graph has input variables, captured-constant variables, equations and output atoms. An
atom is a Var or a Literal (a concrete NumPy value). Values the function closes over are
captured: NumPy arrays become constants; tracers of an outer trace (a jit argument used
inside a scan body, say) become `consts` too, so whoever uses the graph passes them in.

Every equation remembers the user's source line (the first frame outside xlapy), which the
lowering puts into HLO metadata so fused kernels can be traced back to user code.
"""

from __future__ import annotations

import itertools
import os
import sys
from dataclasses import dataclass, field

import numpy as np

from xlapy.frontend import pytree
from xlapy.frontend.core import Primitive, ShapedArray, Trace, Tracer, bind, get_aval
from xlapy.frontend.dtypes import canonicalize_value

_counter = itertools.count()
_XLAPY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Var:
    __slots__ = ("aval", "id")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.id = next(_counter)

    def __repr__(self):
        return f"v{self.id}:{self.aval}"


@dataclass
class Literal:
    value: np.ndarray

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.value.shape, self.value.dtype)


@dataclass
class Eqn:
    prim: Primitive
    inputs: list          # atoms
    outputs: list         # Vars
    params: dict
    source: tuple | None = None  # (file, line) of the user's code


@dataclass
class Graph:
    invars: list
    constvars: list
    eqns: list
    outputs: list                      # atoms
    out_avals: list = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"{{ lambda {' '.join(map(repr, self.constvars))} ; "
                 f"{' '.join(map(repr, self.invars))} ."]
        for e in self.eqns:
            params = ", ".join(f"{k}={v}" for k, v in e.params.items()
                               if not isinstance(v, (Graph, tuple)) or isinstance(v, tuple))
            lines.append(f"    {' '.join(map(repr, e.outputs))} = {e.prim.name}[{params}] "
                         f"{' '.join(map(repr, e.inputs))}")
        lines.append(f"  in ({', '.join(map(repr, self.outputs))}) }}")
        return "\n".join(lines)


def user_frame() -> tuple | None:
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_XLAPY_DIR):
            return (fn, f.f_lineno)
        f = f.f_back
    return None


class GraphTracer(Tracer):
    __slots__ = ("_var",)  # not "var": that would hide the array method .var()

    def __init__(self, trace, var: Var, origin=None):
        super().__init__(trace, var.aval, origin)
        self._var = var


class GraphTrace(Trace):
    stages_constants = True

    def __init__(self):
        super().__init__()
        self.eqns: list[Eqn] = []
        self.invars: list[Var] = []
        self.constvars: list[Var] = []
        self.const_values: list = []
        self._captured: dict[int, tuple] = {}  # id -> (the value, its tracer)

    def new_arg(self, aval: ShapedArray, origin: str | None = None) -> GraphTracer:
        v = Var(aval)
        self.invars.append(v)
        return GraphTracer(self, v, origin)

    def lift(self, value) -> GraphTracer:
        """Capture `value` (an array, or a tracer of an outer trace) as a constant input."""
        cacheable = isinstance(value, (np.ndarray, Tracer))
        if cacheable and id(value) in self._captured:
            return self._captured[id(value)][1]
        stored = value if isinstance(value, Tracer) else canonicalize_value(np.asarray(value))
        v = Var(get_aval(stored))
        self.constvars.append(v)
        self.const_values.append(stored)
        t = GraphTracer(self, v, stored.origin if isinstance(stored, Tracer) else None)
        if cacheable:
            # the entry holds `value` itself, so its id cannot be reused while the trace
            # lives (np.asarray of an ndarray subclass such as ArrayImpl is a new object)
            self._captured[id(value)] = (value, t)
        return t

    def atom(self, value):
        if isinstance(value, GraphTracer) and value._trace is self:
            return value._var
        if not isinstance(value, Tracer) and np.ndim(value) == 0:
            return Literal(canonicalize_value(np.asarray(value)))
        return self.lift(value)._var

    def process_primitive(self, prim: Primitive, args: list, params: dict):
        inputs = [self.atom(a) for a in args]
        origin = next((a.origin for a in args if isinstance(a, Tracer) and a.origin), None)
        out = prim.abstract_eval(*[x.aval for x in inputs], **params)
        outs = list(out) if prim.multiple_results else [out]
        out_vars = [Var(a) for a in outs]
        self.eqns.append(Eqn(prim, inputs, out_vars, params, user_frame()))
        tracers = [GraphTracer(self, v, origin) for v in out_vars]
        return tracers if prim.multiple_results else tracers[0]


def make_graph(fn, avals: list[ShapedArray], origins: list[str] | None = None,
               in_tree=None):
    """Trace fn on abstract inputs. Returns (graph, const_values, out_tree).
    With in_tree, fn receives the pytree built from the inputs."""
    with GraphTrace() as trace:
        args = [trace.new_arg(a, origins[i] if origins else None) for i, a in enumerate(avals)]
        if in_tree is not None:
            a, kw = pytree.unflatten(in_tree, args)
            out = fn(*a, **kw)
        else:
            out = fn(*args)
        flat, out_tree = pytree.flatten(out)
        outputs = [trace.atom(o) for o in flat]
    graph = Graph(trace.invars, trace.constvars, trace.eqns, outputs,
                  [o.aval for o in outputs])
    return graph, trace.const_values, out_tree


def input_env(graph: Graph, consts: list, args: list) -> dict[int, object]:
    """{var id: value} of the graph's constants and inputs (where evaluating it starts)."""
    env: dict[int, object] = {v.id: c for v, c in zip(graph.constvars, consts)}
    env.update((v.id, a) for v, a in zip(graph.invars, args))
    return env


def eval_graph(graph: Graph, consts: list, args: list) -> list:
    """Apply the graph's equations with `bind` (eagerly, or inside the current trace)."""
    env = input_env(graph, consts, args)

    def read(atom):
        return atom.value if isinstance(atom, Literal) else env[atom.id]

    for e in graph.eqns:
        out = bind(e.prim, *[read(x) for x in e.inputs], **e.params)
        outs = out if e.prim.multiple_results else [out]
        for v, o in zip(e.outputs, outs):
            env[v.id] = o
    return [read(o) for o in graph.outputs]
