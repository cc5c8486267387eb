"""Looking at a traced function without running it: make_jaxpr, eval_shape,
ShapeDtypeStruct (as JAX's).

make_jaxpr(f)(*args) traces f as jit would (pytrees, static_argnums, 32-bit
canonicalization) and returns a ClosedJaxpr: the graph (xlapy's frontend IR, one equation
per primitive application) printed as JAX prints jaxprs:

    { lambda ; a:f32[3] b:f32[]. let
        c:f32[3] = sin a
        d:f32[3] = mul c b
      in (d,) }

Variables are named a, b, ..., z, ba, bb, ... in order of appearance; captured arrays are
constvars (before the ';'); literals print as value:type; parameters print sorted by name,
sub-graphs (scan bodies, cond branches, ...) nested. Primitive names and parameters are
xlapy's (often JAX's: sin, mul, dot_general, reduce_sum, scan, cond, while).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend import pytree
from xlapy.frontend.core import ShapedArray, Tracer
from xlapy.frontend.dtypes import canonicalize_dtype, canonicalize_value
from xlapy.frontend.graph import Graph, Literal, make_graph

_SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
          "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint64": "u64",
          "uint32": "u32", "uint16": "u16", "uint8": "u8", "bool": "bool"}


def type_str(aval) -> str:
    name = np.dtype(aval.dtype).name
    return f"{_SHORT.get(name, name)}[{','.join(map(str, aval.shape))}]"


class ShapeDtypeStruct:
    """A shape and a dtype standing for an array (as jax.ShapeDtypeStruct): an argument of
    eval_shape / make_jaxpr / jit(...).lower, or what eval_shape returns."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, weak_type: bool = False, sharding=None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self.sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]


def _aval_of_arg(x) -> ShapedArray:
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, canonicalize_dtype(x.dtype), x.weak_type)
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (np.ndarray,
                                                                           np.generic)):
        return ShapedArray(tuple(x.shape), canonicalize_dtype(x.dtype))
    arr = canonicalize_value(np.asarray(x))
    if arr.dtype.kind not in "biuf" and arr.dtype.name != "bfloat16":
        raise XlapyError(f"argument of type {type(x).__name__} is not an array; mark it "
                         "static with static_argnums")
    return ShapedArray(arr.shape, arr.dtype, type(x) in (int, float))


def _trace(fun, static_argnums, args, kwargs):
    n = len(args)
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    nums = {i % n for i in static if -n <= i < n}
    dyn = tuple(a for i, a in enumerate(args) if i not in nums)
    flat, in_tree = pytree.flatten((dyn, kwargs))
    avals = [_aval_of_arg(x) for x in flat]

    def traced(*d, **kw):
        it = iter(d)
        full = [args[i] if i in nums else next(it) for i in range(n)]
        return fun(*full, **kw)

    graph, consts, out_tree = make_graph(traced, avals, in_tree=in_tree)
    return graph, consts, out_tree


# ---- eval_shape --------------------------------------------------------------------------------

def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of fun's outputs (a pytree of ShapeDtypeStruct), found by
    tracing, without computing anything. Arguments may be arrays or ShapeDtypeStructs."""
    graph, _, out_tree = _trace(fun, (), args, kwargs)
    return pytree.unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                                       for a in graph.out_avals])


# ---- make_jaxpr --------------------------------------------------------------------------------

class ClosedJaxpr:
    """A traced function: .jaxpr (the graph), .consts (captured arrays), .in_avals,
    .out_avals, .eqns; str() prints it as JAX prints a jaxpr."""

    def __init__(self, graph: Graph, consts: list):
        self.jaxpr = graph
        self.consts = [np.asarray(c) for c in consts]

    in_avals = property(lambda self: [v.aval for v in self.jaxpr.invars])
    out_avals = property(lambda self: list(self.jaxpr.out_avals))
    eqns = property(lambda self: self.jaxpr.eqns)

    def __str__(self):
        return pretty(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, **_) -> str:
        return pretty(self.jaxpr)


def make_jaxpr(fun, static_argnums=(), return_shape: bool = False):
    """A function returning the ClosedJaxpr of fun on the given arguments (and, with
    return_shape, the outputs' ShapeDtypeStructs too)."""

    @functools.wraps(fun)
    def make(*args, **kwargs):
        graph, consts, out_tree = _trace(fun, static_argnums, args, kwargs)
        closed = ClosedJaxpr(graph, consts)
        if return_shape:
            shapes = pytree.unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                                                 for a in graph.out_avals])
            return closed, shapes
        return closed

    return make


def _names():
    letters = "abcdefghijklmnopqrstuvwxyz"
    for n in itertools.count(1):
        for combo in itertools.product(letters, repeat=n):
            if n > 1 and combo[0] == "a":
                continue  # a, ..., z, ba, bb, ... as JAX (no leading 'a')
            yield "".join(combo)


def pretty(graph: Graph) -> str:
    names: dict[int, str] = {}
    gen = _names()
    return "\n".join(_pp(graph, names, gen, 0))


def _var(v, names, gen) -> str:
    if v.id not in names:
        names[v.id] = next(gen)
    return names[v.id]


def _atom(a, names, gen) -> str:
    if isinstance(a, Literal):
        v = a.value
        text = repr(v.item()) if v.shape == () else np.array2string(v, separator=",")
        if v.dtype == np.bool_:
            text = str(bool(v))
        return f"{text}:{type_str(a.aval)}"
    return _var(a, names, gen)


def _binder(v, names, gen) -> str:
    return f"{_var(v, names, gen)}:{type_str(v.aval)}"


def _param(v, names, gen, indent) -> str:
    if isinstance(v, Graph):
        lines = _pp(v, names, gen, indent + 4)
        return "\n".join(lines)
    if isinstance(v, tuple) and v and all(isinstance(g, Graph) for g in v):
        return "(\n" + "\n".join("\n".join(_pp(g, names, gen, indent + 4)) for g in v) + \
            "\n" + " " * (indent + 2) + ")"
    if isinstance(v, np.dtype):
        return v.name
    if callable(v) and not isinstance(v, type):
        return getattr(v, "__name__", None) or type(v).__name__
    return repr(v)


def _pp(graph: Graph, names, gen, indent) -> list:
    pad = " " * indent
    consts = " ".join(_binder(v, names, gen) for v in graph.constvars)
    ins = " ".join(_binder(v, names, gen) for v in graph.invars)
    lines = [f"{pad}{{ lambda {consts}; {ins}. let"]
    for e in graph.eqns:
        outs = " ".join(_binder(v, names, gen) for v in e.outputs)
        args = " ".join(_atom(a, names, gen) for a in e.inputs)
        params = sorted(e.params.items())
        nested = any(isinstance(v, Graph) or (isinstance(v, tuple) and v and
                                              all(isinstance(g, Graph) for g in v))
                     for _, v in params)
        if not params:
            lines.append(f"{pad}    {outs} = {e.prim.name} {args}".rstrip())
        elif not nested:
            ps = " ".join(f"{k}={_param(v, names, gen, indent)}" for k, v in params)
            lines.append(f"{pad}    {outs} = {e.prim.name}[{ps}] {args}".rstrip())
        else:
            lines.append(f"{pad}    {outs} = {e.prim.name}[")
            for k, v in params:
                text = _param(v, names, gen, indent + 4)
                if isinstance(v, Graph):
                    lines.append(f"{pad}      {k}=" + text.lstrip())
                else:
                    lines.append(f"{pad}      {k}={text}")
            lines.append(f"{pad}    ] {args}".rstrip())
    outs = ", ".join(_atom(a, names, gen) for a in graph.outputs)
    if len(graph.outputs) == 1:
        outs += ","
    lines.append(f"{pad}  in ({outs}) }}")
    return lines
