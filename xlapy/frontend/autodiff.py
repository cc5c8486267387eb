"""Reverse-mode differentiation: vjp, grad, value_and_grad.

Algorithm: run the function on TapeTracers. Each primitive applied to a tape tracer is
computed on the underlying (primal) values one level down — eagerly, or recorded by an
enclosing jit trace — and appended to the tape. The backward pass walks the tape in
reverse, calling each primitive's VJP rule, which is written with ordinary xlapy operations
(so it, too, runs eagerly or is traced by the enclosing jit, and can itself be
differentiated by an outer grad). Cotangents of values used several times are summed.

Composition: grad(f) inside jit traces forward and backward into one graph; jit(f) inside
grad traces through f; grad(grad(f)) nests two tapes. Integer and boolean values carry no
gradient (their cotangents are zero / None).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend import pytree
from xlapy.frontend.core import ShapedArray, Trace, Tracer, bind, get_aval
from xlapy.frontend.dtypes import canonicalize_value
from xlapy.frontend.primitives.basic import is_float, is_inexact


class TapeTracer(Tracer):
    __slots__ = ("primal", "needs_grad")

    def __init__(self, trace, primal, needs_grad: bool):
        aval = get_aval(primal)
        super().__init__(trace, aval, primal.origin if isinstance(primal, Tracer) else None)
        self.primal = primal
        self.needs_grad = needs_grad and _is_float(aval.dtype)

    def to_concrete(self):
        p = self.primal
        return p.to_concrete() if isinstance(p, Tracer) else np.asarray(p)


@dataclass
class _Record:
    prim: object
    inputs: list     # TapeTracers of this trace, or plain values
    outputs: list    # TapeTracers
    params: dict


def _is_float(dtype) -> bool:
    """Differentiable: floating point or complex (JAX's inexact types)."""
    return is_inexact(dtype)


class TapeTrace(Trace):
    def __init__(self):
        super().__init__()
        self.tape: list[_Record] = []

    def lift(self, value):
        return TapeTracer(self, value, needs_grad=False)

    def process_primitive(self, prim, args, params):
        primals = [a.primal if isinstance(a, TapeTracer) and a._trace is self else a
                   for a in args]
        needs = any(isinstance(a, TapeTracer) and a._trace is self and a.needs_grad
                    for a in args)
        if needs and prim.tape_rule is not None:
            # the primitive decides what its forward pass computes and keeps for the
            # backward pass (custom_vjp's fwd and residuals, checkpoint's saved values)
            if getattr(prim.tape_rule, "wants_differentiated", False):
                # which operands carry a gradient (the rule can skip the others' cotangents)
                params = dict(params, differentiated=tuple(
                    isinstance(a, TapeTracer) and a._trace is self and a.needs_grad
                    for a in args))
            out, vjp_params = prim.tape_rule(primals, **params)
            return self.record(prim, args, out, vjp_params)
        return self.record(prim, args, bind(prim, *primals, **params), params, needs)

    def record(self, prim, args, out, params, needs: bool = True):
        """Tracers for prim's outputs `out` (computed one level down), and a tape entry
        whose VJP is prim.vjp(cts, *primals, out=..., **params) when a float input carries
        a gradient and a float output exists."""
        outs = list(out) if prim.multiple_results else [out]
        needs = needs and any(isinstance(a, TapeTracer) and a._trace is self and a.needs_grad
                              for a in args)
        # integer/bool results (comparisons, argmax, ...) carry no gradient: nothing to record
        needs = needs and any(_is_float(get_aval(o).dtype) for o in outs)
        tracers = [TapeTracer(self, o, needs) for o in outs]
        if needs:
            if prim.vjp is None:
                raise XlapyError(f"differentiation of {prim.name} is not implemented")
            self.tape.append(_Record(prim, list(args), tracers, params))
        return tracers if prim.multiple_results else tracers[0]


def zeros_like_aval(aval: ShapedArray):
    from xlapy.frontend.primitives import basic
    return basic.full(aval.shape, 0, aval.dtype)


def _add_cotangents(a, b):
    if a is None:
        return b
    if b is None:
        return a
    from xlapy.frontend.primitives import basic
    return basic.add(a, b)


def vjp(fun, *primals, has_aux: bool = False):
    """(fun(*primals), vjp_fn) where vjp_fn(cotangent) returns one cotangent per primal."""
    flat_primals, in_tree = pytree.flatten(primals)
    with TapeTrace() as trace:
        tracers = [TapeTracer(trace, _primal_value(p), True) for p in flat_primals]
        args = pytree.unflatten(in_tree, tracers)
        result = fun(*args)
        if has_aux:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise XlapyError("with has_aux=True the function must return (output, aux)")
            result, aux = result
        flat_out, out_tree = pytree.flatten(result)
    out_primals = [_unwrap(o, trace) for o in flat_out]

    def vjp_fn(cotangent):
        flat_ct, ct_tree = pytree.flatten(cotangent)
        flat_ct = [canonicalize_value(c) for c in flat_ct]
        if ct_tree != out_tree:
            raise XlapyError("the cotangent's structure does not match the function's output")
        cts: dict[int, object] = {}
        for o, c in zip(flat_out, flat_ct):
            if isinstance(o, TapeTracer) and o._trace is trace:
                cts[id(o)] = _add_cotangents(cts.get(id(o)), c)
        for rec in reversed(trace.tape):
            out_cts = [cts.pop(id(t), None) for t in rec.outputs]
            if all(c is None for c in out_cts):
                continue
            out_cts = [c if c is not None else zeros_like_aval(t.aval)
                       for c, t in zip(out_cts, rec.outputs)]
            in_primals = [a.primal if isinstance(a, TapeTracer) and a._trace is trace else a
                          for a in rec.inputs]
            out_primals_rec = [t.primal for t in rec.outputs]
            in_cts = rec.prim.vjp(out_cts if rec.prim.multiple_results else out_cts[0],
                                  *in_primals,
                                  out=out_primals_rec if rec.prim.multiple_results
                                  else out_primals_rec[0],
                                  **rec.params)
            for a, c in zip(rec.inputs, in_cts):
                if c is None or not (isinstance(a, TapeTracer) and a._trace is trace
                                     and a.needs_grad):
                    continue
                cts[id(a)] = _add_cotangents(cts.get(id(a)), c)
        grads = []
        for t in tracers:
            g = cts.get(id(t))
            if g is None:
                g = zeros_like_aval(t.aval)
            grads.append(g)
        return pytree.unflatten(in_tree, grads)

    out = pytree.unflatten(out_tree, out_primals)
    if has_aux:
        return out, vjp_fn, _unwrap_tree(aux, trace)
    return out, vjp_fn


def _primal_value(x):
    if isinstance(x, Tracer):
        return x
    arr = canonicalize_value(np.asarray(x))
    if arr.dtype.kind not in "biufc" and not is_float(arr.dtype):
        raise XlapyError(f"cannot differentiate with respect to a value of type {type(x).__name__}")
    return arr


def _unwrap(o, trace):
    if isinstance(o, TapeTracer) and o._trace is trace:
        return o.primal
    return o


def _unwrap_tree(tree, trace):
    return pytree.tree_map(lambda x: _unwrap(x, trace), tree)


def _normalize_argnums(argnums, n):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -n <= a < n:
            raise XlapyError(f"argnums {argnums} is out of range for {n} positional arguments")
    return tuple(a % n for a in nums), isinstance(argnums, int)


def value_and_grad(fun, argnums=0, has_aux: bool = False):
    """A function returning (fun(*args), gradient of fun w.r.t. args[argnums]); fun must
    return a scalar (with has_aux: (scalar, aux), and the result is ((value, aux), grad))."""

    def wrapped(*args, **kwargs):
        nums, single = _normalize_argnums(argnums, len(args))

        def partial(*diff_args):
            full = list(args)
            for i, a in zip(nums, diff_args):
                full[i] = a
            return fun(*full, **kwargs)

        diff = tuple(args[i] for i in nums)
        if has_aux:
            value, fn, aux = vjp(partial, *diff, has_aux=True)
        else:
            value, fn = vjp(partial, *diff)
        aval = get_aval(value) if not isinstance(value, (tuple, list, dict)) else None
        if aval is None or aval.shape != ():
            raise XlapyError(f"grad requires a scalar output, got "
                             f"{aval if aval is not None else type(value).__name__}; use vjp "
                             "for non-scalar outputs")
        if not is_float(aval.dtype):
            raise XlapyError(f"grad requires a real floating-point output, got {aval} (for a "
                             "complex output use vjp, or grad of its real part)")
        from xlapy.frontend.primitives import basic
        grads = fn(basic.full((), 1, aval.dtype))
        grads = grads[0] if single else tuple(grads)
        return ((value, aux), grads) if has_aux else (value, grads)

    wrapped.__name__ = f"value_and_grad({getattr(fun, '__name__', 'fn')})"
    wrapped.__wrapped__ = fun  # inspect.signature (jit's argument names) sees fun's
    return wrapped


def grad(fun, argnums=0, has_aux: bool = False):
    """The gradient of scalar-valued fun with respect to args[argnums]."""
    vg = value_and_grad(fun, argnums, has_aux)

    def wrapped(*args, **kwargs):
        (value, g) = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    wrapped.__name__ = f"grad({getattr(fun, '__name__', 'fn')})"
    wrapped.__wrapped__ = fun  # inspect.signature (jit's argument names) sees fun's
    return wrapped
