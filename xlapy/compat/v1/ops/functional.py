"""Functions: the sub-graphs that control-flow ops (While, If) call.

TF 1.x built while loops and conds out of Enter/Exit/Switch/Merge nodes in the main graph;
TF's XLA bridge turned them back into functional While and If nodes (and TF 2 builds
those directly). xlapy builds the functional form from the start:

  FuncGraph   a Graph of its own for a loop body, a cond branch, ... An op created inside it
              with an input from an enclosing graph *captures* that tensor: a Placeholder
              stands for it inside, and the calling op takes the outer tensor as an input.
              Variables read inside are captured by value; variables created inside (an RNN
              cell building its kernel in the loop body) are created in the outermost graph.
  Function    (graph, input tensors, output tensors): evaluation feeds the inputs and
              computes the outputs, pruning everything else. Outputs may be appended later
              (the While gradient asks its body for intermediate values).

Two evaluators, matching the two ways ops run:
  executor_runner(session, fn)  the session's own NumPy steps (random ops keep their
                                per-session state), built once per session and function;
  trace(fn, args, m)            the lowering rules on traced values (xlapy.numpy), with the
                                folding rule of the cluster tracer: an op whose inputs are
                                all known at trace time runs its NumPy kernel instead.
"""

from __future__ import annotations

import contextlib

import numpy as np

from xlapy.compat.v1.errors import InternalError, InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.framework import Graph, Tensor, get_default_graph
from xlapy.compat.v1.op_registry import get_op_def, kernel_attrs, op_has_lowering
from xlapy.compat.v1.tensor_shape import TensorShape


class FuncGraph(Graph):
    """The graph of a function body; `outer` is the graph the calling op lives in."""

    def __init__(self, name: str, outer: Graph):
        super().__init__()
        self.name = name
        self.outer = outer
        self.seed = outer.seed
        self.captures: dict = {}       # outer tensor -> placeholder inside
        self.captured: list = []       # outer tensors, in order of capture
        self._name_stack = outer._name_stack

    @property
    def root(self) -> Graph:
        g = self
        while isinstance(g, FuncGraph):
            g = g.outer
        return g

    def is_enclosed_by(self, graph) -> bool:
        g = self.outer
        while True:
            if g is graph:
                return True
            if not isinstance(g, FuncGraph):
                return False
            g = g.outer

    def capture(self, t: Tensor) -> Tensor:
        """The tensor standing for `t` (a tensor of an enclosing graph) inside this one."""
        if t.graph is self:
            return t
        inner = self.captures.get(t)
        if inner is not None:
            return inner
        if t.graph is not self.outer:
            if not (isinstance(self.outer, FuncGraph) and self.outer.is_enclosed_by(t.graph)):
                raise InvalidArgumentError(f"Tensor {t.name} is from a graph that does not "
                                           f"enclose the function '{self.name}'")
            self.outer.capture(t)  # nested functions capture through each level
        with self.name_scope(None):
            inner = Graph.create_op(self, "Placeholder", [], {
                "dtype": t.dtype, "shape": t.shape}, name="capture").outputs[0]
        self.captures[t] = inner
        self.captured.append(t)
        return inner

    def create_op(self, op_type, inputs, attrs=None, name=None):
        d = get_op_def(op_type)
        ins = []
        for i, t in enumerate(inputs):
            if isinstance(t, Tensor) and t.graph is not self:
                if i in d.ref_inputs or (t.op.type == "VariableV2" and d.ref_inputs):
                    raise UnimplementedError(
                        f"{op_type} updates variable {t.op.name} inside the function "
                        f"'{self.name}' (a tf.while_loop body or tf.cond branch); xlapy's "
                        "control flow reads variables but does not assign them. Assign "
                        "outside the loop or cond, using its outputs.")
                t = self.capture(t)
            ins.append(t)
        return super().create_op(op_type, ins, attrs, name)

    def add_to_collection(self, name, value):
        self.root.add_to_collection(name, value)

    def get_collection(self, name, scope=None):
        return self.root.get_collection(name, scope)

    def get_collection_ref(self, name):
        return self.root.get_collection_ref(name)

    def __repr__(self):
        return f"<FuncGraph '{self.name}' with {len(self._ops)} ops>"


def root_graph(graph: Graph) -> Graph:
    return graph.root if isinstance(graph, FuncGraph) else graph


@contextlib.contextmanager
def in_root_graph():
    """Create ops in the outermost graph (variables made inside a loop body)."""
    g = get_default_graph()
    if not isinstance(g, FuncGraph):
        yield g
        return
    root = g.root
    with root.as_default():
        yield root


class Function:
    """A callable sub-graph: `inputs` are fed, `outputs` computed (None: no value)."""

    def __init__(self, graph: FuncGraph, inputs: list, outputs: list):
        self.graph = graph
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self._ops_cache: dict = {}

    name = property(lambda self: self.graph.name)

    def ops(self) -> list:
        """The ops computing the outputs from the inputs, in creation (topological) order."""
        key = len(self.outputs)
        ops = self._ops_cache.get(key)
        if ops is None:
            fed = set(self.inputs)
            needed: set = set()
            stack = [t.op for t in self.outputs if t is not None and t not in fed]
            while stack:
                op = stack.pop()
                if op in needed:
                    continue
                if op.type == "Placeholder":
                    raise InternalError(f"function '{self.name}' needs {op.name}, which is "
                                        "not one of its inputs")
                needed.add(op)
                stack.extend(t.op for t in op.inputs if t not in fed)
                stack.extend(op.control_inputs)
            ops = self._ops_cache[key] = sorted(needed, key=lambda o: o._id)
        return ops

    def can_lower(self) -> bool:
        """Whether every op it runs has an XLA lowering (no py_func; no random ops, whose
        values would have to be drawn on the host at every iteration)."""
        return all(op_has_lowering(op) and not get_op_def(op.type).rng for op in self.ops())

    def output_specs(self) -> list:
        return [(t.dtype, t.shape) for t in self.outputs]

    def __repr__(self):
        return f"<Function {self.name}: {len(self.inputs)} in, {len(self.outputs)} out>"


def placeholder_in(graph: FuncGraph, dtype, shape, name: str) -> Tensor:
    return Graph.create_op(graph, "Placeholder", [], {"dtype": dtype,
                                                      "shape": TensorShape(shape)},
                           name=name).outputs[0]


# ---- evaluation in the executor ----------------------------------------------------------

class _Runner:
    def __init__(self, session, fn: Function):
        ops = fn.ops()
        fed = set(fn.inputs)
        slot: dict = {}
        template: list = []
        for t in fn.inputs:
            slot[t] = len(template)
            template.append(None)
        for op in ops:
            for t in op.outputs:
                slot[t] = len(template)
                template.append(op.get_attr("value") if op.type == "Const" else None)
        self.template = template
        self.in_slots = [slot[t] for t in fn.inputs]
        self.out_slots = [None if t is None else slot[t] for t in fn.outputs]
        self.steps = [session._make_step(op, slot, fed) for op in ops if op.type != "Const"]

    def __call__(self, *args) -> list:
        vals = list(self.template)
        for s, a in zip(self.in_slots, args):
            vals[s] = a
        for step in self.steps:
            step(vals)
        return [None if s is None else vals[s] for s in self.out_slots]


def executor_runner(session, fn: Function) -> _Runner:
    cache = session.__dict__.setdefault("_function_runners", {})
    key = (id(fn), len(fn.outputs))
    r = cache.get(key)
    if r is None:
        r = cache[key] = _Runner(session, fn)
        r.fn = fn  # keeps fn alive while its id keys the cache
    return r


# ---- evaluation while tracing a cluster ---------------------------------------------------

def trace(fn: Function, args, m) -> list:
    """fn's outputs computed by the ops' lowering rules (m: xlapy.numpy) on `args`."""
    from xlapy.frontend.core import Tracer
    env = dict(zip(fn.inputs, args))
    for op in fn.ops():
        d = get_op_def(op.type)
        ins = [env[t] for t in op.inputs]
        attrs = kernel_attrs(op)
        if op.type == "Const":
            out = op.get_attr("value")
        elif not d.stateful and not any(isinstance(x, Tracer) for x in ins):
            out = d.kernel(np, *ins, **attrs)
        elif not op_has_lowering(op):
            raise UnimplementedError(f"op {op.name} ({op.type}) in function '{fn.name}' has no "
                                     "XLA lowering")
        else:
            out = d.lowering(m, *ins, **attrs)
        if len(op.outputs) == 1:
            env[op.outputs[0]] = out
        else:
            for t, o in zip(op.outputs, out):
                env[t] = o
    return [None if t is None else env[t] for t in fn.outputs]


def output_avals(fn: Function, args) -> list:
    """The shapes and dtypes of fn's outputs for `args` (traced or concrete), found by
    tracing it on the side (nothing is added to the current trace)."""
    from xlapy.frontend.core import ShapedArray, get_aval
    from xlapy.frontend.graph import make_graph
    import xlapy.numpy as xnp
    from xlapy.config import enable_x64
    avals = [ShapedArray(get_aval(a).shape, get_aval(a).dtype) for a in args]
    with enable_x64(True):  # TF keeps 64-bit types
        graph, _, _ = make_graph(lambda *a: tuple(trace(fn, list(a), xnp)), avals)
    return list(graph.out_avals)
