"""The tracing core: abstract values, primitives, traces and tracers.

A Primitive is one operation (add, dot_general, reduce_sum, scan, ...). Each concern is a
rule registered on the primitive by a decorator where the primitive is defined:

    add_p = Primitive("add")
    @add_p.def_impl            # eager: NumPy arrays in, NumPy array out
    @add_p.def_abstract_eval   # shapes/dtypes: ShapedArray in, ShapedArray out
    @add_p.def_lowering        # HLO: (ctx, *operand instructions, **params) -> instruction
    @add_p.def_vjp             # reverse mode: (cts, *primals, out=..., **params) -> cotangents
    add_p.def_jvp(rule)        # forward mode: (primals, tangents, **params) -> (out, tangent)
                               # (the JVP rules live in xlapy/frontend/jvp/, by concern)
    @add_p.def_batch           # vmap: (frame, vals, dims, **params) -> (out, out_dim)

`bind(prim, *args, **params)` applies a primitive. With no tracer among the args it runs
eagerly (impl on NumPy arrays). Otherwise the innermost active trace among the args' tracers
processes it: a GraphTrace records an equation (jit, control-flow bodies), a TapeTrace
(autodiff) computes the primal one level down and records the application for the
backward pass. Traces nest (jit of grad, grad of jit, grad of grad, scan inside jit): each
has a level, and a value from an outer level is just an input ("lifted") to an inner one.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np

from xlapy.frontend.array import as_result
from xlapy import config as _config
from xlapy.config import x64_enabled
from xlapy.errors import ResourceExhaustedError, XlapyError
from xlapy.frontend.dtypes import canonicalize_params, canonicalize_value


class NonFiniteError(XlapyError, FloatingPointError):
    """A NaN (an inf) appeared while jax_debug_nans (jax_debug_infs) is on. A
    FloatingPointError too, which JAX raises."""


def check_finite(values, where: str) -> None:
    """Under debug_nans / debug_infs (this thread), refuse NaNs / infs in concrete values."""
    nans, infs = _config.debug_checks()
    for v in values:
        a = np.asarray(v)
        if a.dtype.kind not in "fc" and a.dtype.name != "bfloat16":
            continue
        if nans and np.isnan(a).any():
            raise NonFiniteError(f"invalid value (nan) encountered in {where} (jax_debug_nans "
                                 "is on)")
        if infs and np.isinf(a).any():
            raise NonFiniteError(f"invalid value (inf) encountered in {where} (jax_debug_infs "
                                 "is on)")


class TracerError(XlapyError, TypeError):
    """A traced value was used where a concrete value is needed, or escaped its trace.
    A TypeError too, as JAX's ConcretizationTypeError and TracerBoolConversionError are."""


@dataclass(frozen=True)
class ShapedArray:
    shape: tuple
    dtype: np.dtype
    # a Python int/float passed to jit: like a Python scalar, it takes the type of the
    # arrays it meets (x_f32 * s stays f32), as JAX's weak types
    weak_type: bool = False

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __str__(self) -> str:
        return f"{dtype_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __repr__(self) -> str:
        return f"ShapedArray({self}{', weak_type=True' if self.weak_type else ''})"


def dtype_name(dtype) -> str:
    from xlapy.hlo.shapes import primitive_type
    try:
        return primitive_type(np.dtype(dtype)).name
    except XlapyError:
        return str(np.dtype(dtype))


def _rule_setter(attr: str):
    """Primitive.def_<attr>: a decorator that stores the function as the rule `attr`."""
    def define(self, fn):
        setattr(self, attr, fn)
        return fn
    define.__name__ = f"def_{attr}"
    return define


class Primitive:
    def __init__(self, name: str, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        self.impl: Callable | None = None
        self.abstract_eval: Callable | None = None
        self.lowering: Callable | None = None
        self.vjp: Callable | None = None
        self.jvp: Callable | None = None
        # reverse mode's forward step, for primitives that choose what it computes and
        # keeps (custom_vjp, checkpoint): (primals, **params) -> (outputs, params of vjp)
        self.tape_rule: Callable | None = None
        self.batch: Callable | None = None
        # collectives (psum, axis_index, ...) and control flow whose bodies use them:
        # params -> the trace owning their axis name (or None), which processes them even
        # when no operand is one of its tracers (unless a graph is being traced above it)
        self.axis_trace: Callable | None = None

    def_impl = _rule_setter("impl")
    def_abstract_eval = _rule_setter("abstract_eval")
    def_lowering = _rule_setter("lowering")
    def_vjp = _rule_setter("vjp")
    def_jvp = _rule_setter("jvp")
    def_tape_rule = _rule_setter("tape_rule")
    def_batch = _rule_setter("batch")

    def bind(self, *args, **params):
        return bind(self, *args, **params)

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


PRIMITIVES: dict[str, Primitive] = {}


def primitive(name: str, multiple_results: bool = False) -> Primitive:
    if name in PRIMITIVES:
        raise RuntimeError(f"primitive {name} defined twice")
    p = Primitive(name, multiple_results)
    PRIMITIVES[name] = p
    return p


# ---- traces ---------------------------------------------------------------------------------

class _TraceState(threading.local):
    """Each thread's own trace stack: functions traced on two threads at once (two first
    calls of jitted functions, a compat.v1 session's queue runners) must not record into
    each other's graphs, as with one process-wide stack they did (a tracer of one thread's
    graph turned up in the other's: 'a tracer was captured by a top-level jit graph')."""

    def __init__(self):
        self.active: list = []   # the active traces, innermost last
        # ensure_compile_time_eval (frontend/scopes.py): graphs of this level or below do
        # not stage operations on constants (they run eagerly, as outside jit)
        self.const_eval_level = 0


_state = _TraceState()


class Trace:
    """Base class. Subclasses implement `process_primitive` and `lift`."""

    stages_constants = False  # GraphTrace: record ops on constants too (omnistaging)

    def __init__(self):
        self.level = len(_state.active) + 1
        self.active = False

    def __enter__(self):
        self.level = (_state.active[-1].level + 1) if _state.active else 1
        _state.active.append(self)
        self.active = True
        return self

    def __exit__(self, *exc):
        _state.active.remove(self)
        self.active = False
        return False

    def process_primitive(self, prim: Primitive, args: list, params: dict):
        raise NotImplementedError

    def full_raise(self, value):
        """`value` as a tracer of this trace (values of outer levels are lifted)."""
        if isinstance(value, Tracer) and value._trace is self:
            return value
        return self.lift(value)

    def lift(self, value):
        raise NotImplementedError


class Tracer:
    """A value inside a trace. Behaves like an array (operators, .shape, .T, .at, ...)."""

    __array_priority__ = 1000
    __slots__ = ("_trace", "aval", "origin")

    def __init__(self, trace: Trace, aval: ShapedArray, origin: str | None = None):
        self._trace = trace
        self.aval = aval
        self.origin = origin

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def to_concrete(self):
        """The concrete NumPy value behind this tracer, or None when it is abstract. A
        differentiation tracer (grad, jvp) outside jit has one: its primal is a concrete
        array, so Python control flow on it works, as in JAX; jit and vmap tracers do not."""
        return None

    def _concrete_error(self, what: str):
        where = f" The value depends on {self.origin}." if self.origin else ""
        hint = (" If that argument is a Python value that controls the program's structure "
                "(a size, a flag, a loop count), mark it static: jit(f, static_argnums=...) "
                "or static_argnames=...; for data-dependent control flow use "
                "xlapy.lax.cond / while_loop / fori_loop.")
        return TracerError(f"a traced array {self.aval} was used where a concrete value is "
                           f"needed ({what}).{where}{hint}")

    def _concrete(self, what: str):
        c = self.to_concrete()
        if c is None:
            raise self._concrete_error(what)
        return c

    def __bool__(self):
        return bool(self._concrete("converted to bool, e.g. in `if` or `while`"))

    def __int__(self):
        return int(self._concrete("converted to int"))

    def __float__(self):
        if self.to_concrete() is not None:  # as JAX: float() would drop the derivative
            raise TracerError(
                f"float() of a value being differentiated ({self.aval}) would drop its "
                "derivative, so it is refused (as in JAX); use the array itself, "
                "x.astype(float) or xlapy.lax.stop_gradient(x)")
        raise self._concrete_error("converted to float")

    def __index__(self):
        c = self._concrete("used as a Python index (range(), a list index, a shape)")
        if c.shape != () or c.dtype.kind not in "iub":
            raise TypeError(f"only integer scalar arrays can be converted to an index, got "
                            f"{self.aval}")
        return int(c)

    def __array__(self, *a, **k):
        # refused even when a concrete value exists: NumPy would silently drop the derivative
        raise self._concrete_error("converted to a NumPy array")

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return f"Traced<{self.aval}>"


def active_traces() -> list[Trace]:
    return list(_state.active)


def top_trace(args) -> Trace | None:
    top = None
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            if not t.active:
                raise TracerError(
                    f"a traced value {a.aval} escaped the function it was traced in (for "
                    "example it was stored in a global or a closure and used after jit/grad "
                    "returned); pass it as an argument or return it instead")
            if top is None or t.level > top.level:
                top = t
    # Omnistaging: a graph trace opened above `top` (a loop body traced under grad) records
    # the operation, capturing the outer values as constants, so its tracers never escape.
    if top is not None:
        for t in reversed(_state.active):
            if t.level <= top.level:
                break
            if t.stages_constants:
                return t
    return top


def bind(prim: Primitive, *args, **params):
    if not x64_enabled():  # 64-bit operands and dtype parameters become 32-bit (as JAX)
        args = [canonicalize_value(a) for a in args]
        params = canonicalize_params(params)
    trace = top_trace(args)
    if prim.axis_trace is not None:
        owner = prim.axis_trace(params)
        if owner is not None and (trace is None or trace.level < owner.level) and not any(
                t.stages_constants and t.level > owner.level for t in _state.active):
            return owner.process_primitive(prim, [owner.full_raise(a) for a in args], params)
    if trace is None:
        # Omnistaging: inside jit, operations on constants are staged into the innermost
        # graph too (so zeros/iota become HLO ops, not captured arrays).
        for t in reversed(_state.active):
            if t.stages_constants and t.level > _state.const_eval_level:
                return t.process_primitive(prim, list(args), params)
        if prim.impl is None:
            raise XlapyError(f"primitive {prim.name} cannot run eagerly")
        result = None
        if prim.abstract_eval is not None:
            # the same shape/dtype checks as under jit, so eager and jit agree on errors
            result = prim.abstract_eval(*[get_aval(a) for a in args], **params)
        try:
            out = prim.impl(*args, **params)
        except MemoryError:
            what = f" {', '.join(map(str, result))}" if isinstance(result, (list, tuple)) \
                else f" {result}" if result is not None else ""
            raise ResourceExhaustedError(f"{prim.name}: not enough memory for its "
                                         f"result{what}") from None
        if _config._debug_any:
            check_finite(out if prim.multiple_results else [out], prim.name)
        if prim.multiple_results:
            return [_eager_out(o) for o in out]
        return _eager_out(out)
    return trace.process_primitive(prim, list(args), params)


def _eager_out(o):
    if isinstance(o, np.generic):
        o = np.asarray(o)
    return as_result(o if x64_enabled() else canonicalize_value(o))


def get_aval(x) -> ShapedArray:
    if isinstance(x, Tracer):
        return x.aval
    x = np.asarray(x)
    return ShapedArray(x.shape, x.dtype)


def is_traced(x) -> bool:
    return isinstance(x, Tracer)


def concrete_or_error(x, what: str):
    """A concrete NumPy value of x, or a TracerError explaining why it is needed."""
    if isinstance(x, Tracer):
        return x._concrete(what)
    return np.asarray(x)


def concrete_shape(shape, what: str = "a shape") -> tuple:
    """`shape` (an int or a sequence of ints) as a tuple of Python ints. A traced entry
    with no concrete value raises JAX's kind of error naming the jit argument it came
    from; under grad/jvp outside jit the concrete value is used."""
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    if all(type(d) is int for d in dims):  # the common case
        return tuple(dims)
    out = []
    for d in dims:
        if isinstance(d, Tracer):
            c = d.to_concrete()
            if c is None or c.shape != ():
                got = ", ".join(repr(e) for e in dims)
                where = f" The value depends on {d.origin}." if d.origin else ""
                raise TracerError(
                    f"shapes must be sequences of concrete integers, got ({got}) for {what}."
                    f"{where} Under jit, a size must be a Python value: mark the argument "
                    "static with jit(f, static_argnums=...) or static_argnames=..., or "
                    "compute the size from a static shape (x.shape[0])")
            d = c
        if isinstance(d, np.ndarray) and d.ndim != 0:
            raise TypeError(f"{what} must be an int or a sequence of ints, got {shape!r}")
        try:
            out.append(int(operator_index(d)))
        except TypeError:
            raise TypeError(f"{what} must be an int or a sequence of ints, got {shape!r}") \
                from None
    return tuple(out)


def operator_index(d):
    import operator
    if isinstance(d, np.ndarray):
        d = d[()]
    return operator.index(d)
