"""Forward-mode differentiation: jvp, linearize, jacfwd, jacrev, hessian.

Algorithm: run the function on JVPTracers, each carrying a primal value and its tangent
(None: a symbolic zero, never materialized). A primitive applied to JVP tracers calls the
primitive's JVP rule (xlapy/frontend/jvp/, one file per primitives/ file), which computes
the primal output one level down (eagerly, or recorded by an enclosing jit or grad) and
the output tangent with ordinary xlapy operations, so forward mode composes with every
other transformation: jit(jvp(f)), jvp(grad(f)), grad(jvp(f)), jvp(jvp(f)), hessian =
jacfwd(jacrev(f)). Only floating-point values carry tangents: integer and bool results
get none, and at the API boundary integer tangents are float0 zeros, as in JAX.

A primitive whose operands all have zero tangents is simply applied to the primals, and a
primitive with no float output needs no rule. Any other primitive without a JVP rule
raises an XlapyError naming it (tests/frontend/test_jvp.py walks every primitive).

jacfwd is one JVP vmapped over the stacked basis of the inputs, jacrev one VJP whose
backward pass is vmapped over the stacked basis of the outputs (as JAX builds them).
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend import pytree
from xlapy.frontend.core import Trace, Tracer, bind, get_aval
from xlapy.frontend.dtypes import canonicalize_value
from xlapy.frontend.primitives.basic import full, is_float, is_inexact

# JAX's dtype of the tangents of integer and boolean values: zero bytes per element
float0 = np.dtype([("float0", np.void, 0)])


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        super().__init__(trace, get_aval(primal),
                         primal.origin if isinstance(primal, Tracer) else None)
        self.primal = primal
        self.tangent = tangent  # same shape and dtype as primal, or None (zero)

    def to_concrete(self):
        p = self.primal
        return p.to_concrete() if isinstance(p, Tracer) else np.asarray(p)


class JVPTrace(Trace):
    def lift(self, value):
        return JVPTracer(self, value, None)

    def process_primitive(self, prim, args, params):
        primals, tangents = [], []
        for a in args:
            if isinstance(a, JVPTracer) and a._trace is self:
                primals.append(a.primal)
                tangents.append(a.tangent)
            else:
                primals.append(a)
                tangents.append(None)
        if all(t is None for t in tangents):
            return bind(prim, *primals, **params)
        if prim.jvp is None:
            out = bind(prim, *primals, **params)
            outs = out if prim.multiple_results else [out]
            if not any(is_inexact(get_aval(o).dtype) for o in outs):
                return out  # integer / bool results carry no tangent
            raise XlapyError(f"forward-mode differentiation (jvp, jacfwd, hessian) of the "
                             f"primitive '{prim.name}' is not implemented")
        out, t_out = prim.jvp(primals, tangents, **params)
        if prim.multiple_results:
            return [self._wrap(o, t) for o, t in zip(out, t_out)]
        return self._wrap(out, t_out)

    def _wrap(self, out, tangent):
        if tangent is None or not is_inexact(get_aval(out).dtype):
            return out
        if not isinstance(tangent, Tracer):
            tangent = np.asarray(tangent)
        return JVPTracer(self, out, tangent)


# ---- the API ----------------------------------------------------------------------------------

def _check_pair(primal, tangent, k: int):
    """The tangent of primal k as the trace carries it (None for integer / bool values),
    checked as JAX checks it."""
    pa = get_aval(primal)
    t = canonicalize_value(tangent) if not isinstance(tangent, Tracer) else tangent
    ta = get_aval(t) if not (isinstance(t, np.ndarray) and t.dtype == float0) else None
    shape = ta.shape if ta is not None else np.shape(t)
    if tuple(shape) != pa.shape:
        raise XlapyError(f"jvp: primal {k} has shape {list(pa.shape)} but its tangent has shape "
                         f"{list(shape)}; they must be equal")
    if not is_inexact(pa.dtype):
        if ta is not None:
            raise XlapyError(f"jvp: primal {k} is {pa} (not floating point), so its tangent "
                             f"must have dtype float0 (xlapy.dtypes.float0, as in JAX), got "
                             f"{ta.dtype}")
        return None
    if ta is None or ta.dtype != pa.dtype:
        got = "float0" if ta is None else ta.dtype
        raise XlapyError(f"jvp: primal {k} is {pa} but its tangent has dtype {got}; the "
                         "dtypes must be equal")
    return t


def _instantiate(primal, tangent):
    """A materialized tangent for an output: zeros for a symbolic zero, float0 zeros for
    integer and bool outputs."""
    a = get_aval(primal)
    if not is_inexact(a.dtype):
        return np.zeros(a.shape, float0)
    if tangent is None:
        return full(a.shape, 0, a.dtype)
    return tangent


def _as_primal(x):
    if isinstance(x, Tracer):
        return x
    return canonicalize_value(np.asarray(x))


def _jvp_flat(fun, flat_primals, flat_tangents, in_tree, has_aux):
    with JVPTrace() as trace:
        tracers = [JVPTracer(trace, p, t) if t is not None else p
                   for p, t in zip(flat_primals, flat_tangents)]
        out = fun(*pytree.unflatten(in_tree, tracers))
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise XlapyError("with has_aux=True the function must return a pair "
                                 "(output, aux)")
            out, aux = out
        flat_out, out_tree = pytree.flatten(out)
    out_p, out_t = [], []
    for o in flat_out:
        if isinstance(o, JVPTracer) and o._trace is trace:
            p, t = o.primal, o.tangent
        else:
            p, t = _as_primal(o), None
        out_p.append(p)
        out_t.append(_instantiate(p, t))
    aux = pytree.tree_map(lambda x: x.primal if isinstance(x, JVPTracer) and x._trace is trace
                          else x, aux) if has_aux else None
    return out_p, out_t, out_tree, aux


def jvp(fun, primals, tangents, has_aux: bool = False):
    """(fun(*primals), the directional derivative of fun at primals along tangents).
    primals and tangents are tuples (or lists) of the same structure; each tangent has its
    primal's shape and dtype (float0 for integer and bool primals, as in JAX). With
    has_aux, fun returns (output, aux) and the result is (output, tangent, aux)."""
    import xlapy.frontend.jvp  # noqa: F401  (registers the JVP rules)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise XlapyError(f"jvp: primals and tangents must be tuples or lists, got "
                         f"{type(primals).__name__} and {type(tangents).__name__}")
    flat_p, in_tree = pytree.flatten(tuple(primals))
    flat_t, t_tree = pytree.flatten(tuple(tangents))
    if in_tree != t_tree:
        raise XlapyError(f"jvp: primals and tangents must have the same structure; primals "
                         f"have {in_tree}, tangents {t_tree}")
    flat_p = [_as_primal(p) for p in flat_p]
    flat_t = [_check_pair(p, t, k) for k, (p, t) in enumerate(zip(flat_p, flat_t))]
    out_p, out_t, out_tree, aux = _jvp_flat(fun, flat_p, flat_t, in_tree, has_aux)
    result = (pytree.unflatten(out_tree, out_p), pytree.unflatten(out_tree, out_t))
    return result + (aux,) if has_aux else result


def linearize(fun, *primals, has_aux: bool = False):
    """(fun(*primals), f_jvp) with f_jvp(*tangents) the JVP of fun at primals.
    f_jvp evaluates fun again at each call (xlapy does no partial evaluation); the values
    are those of jax.linearize."""
    zeros = tuple(pytree.tree_map(lambda p: _zero_tangent(_as_primal(p)), p) for p in primals)
    res = jvp(fun, primals, zeros, has_aux=has_aux)

    def f_jvp(*tangents):
        return jvp(fun, primals, tangents, has_aux=has_aux)[1]

    return (res[0], f_jvp, res[2]) if has_aux else (res[0], f_jvp)


def _zero_tangent(p):
    a = get_aval(p)
    return np.zeros(a.shape, a.dtype if is_inexact(a.dtype) else float0)


# ---- Jacobians and the Hessian ------------------------------------------------------------------

def _argnums(argnums, n: int):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -n <= a < n:
            raise XlapyError(f"argnums {argnums} is out of range for {n} positional arguments")
    return tuple(a % n for a in nums), isinstance(argnums, int)


def _basis(avals) -> list:
    """One stacked basis per leaf: leaf j gets an array [n, *shape_j] whose row k is the
    k-th unit vector of all the leaves flattened together (n: their total size)."""
    sizes = [a.size for a in avals]
    n, out, off = sum(sizes), [], 0
    for a, k in zip(avals, sizes):
        eye = np.zeros((n, k), a.dtype)
        eye[off:off + k] = np.eye(k, dtype=a.dtype)
        out.append(eye.reshape((n,) + a.shape))
        off += k
    return out


def _rows(x, start: int, stop: int, shape):
    """x[start:stop] (along axis 0) reshaped to `shape`."""
    from xlapy.frontend.primitives.shapes import reshape, slice_
    a = get_aval(x)
    return reshape(slice_(x, (start,) + (0,) * (a.ndim - 1), (stop,) + a.shape[1:]), shape)


def _move_leading(x, n_lead: int, n_rest: int):
    """[lead..., rest...] -> [rest..., lead...]."""
    from xlapy.frontend.primitives.shapes import transpose
    perm = tuple(range(n_lead, n_lead + n_rest)) + tuple(range(n_lead))
    return transpose(x, perm)


def _split_args(fun, args, kwargs, argnums):
    nums, single = _argnums(argnums, len(args))
    dyn = tuple(args[i] for i in nums)

    def partial(*d):
        full_args = list(args)
        for i, v in zip(nums, d):
            full_args[i] = v
        return fun(*full_args, **kwargs)
    return partial, dyn, single


def _refuse_holomorphic(name: str, holomorphic: bool) -> None:
    if holomorphic:
        raise XlapyError(f"{name}: holomorphic=True is not supported (xlapy has no complex "
                         "dtypes)")


def _require_real(name: str, avals, what: str, direct: str) -> None:
    """Refuse integer `what` (inputs or outputs) of jacfwd/jacrev, pointing to `direct`."""
    for a in avals:
        if not is_float(a.dtype):
            raise XlapyError(f"{name} requires real-valued {what} (a floating-point dtype), but "
                             f"got {a.dtype}; use {direct} directly for integer {what}")


def jacfwd(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Jacobian of fun with respect to args[argnums], by forward mode: for each output
    leaf o and input leaf i, an array of shape o.shape + i.shape (arranged as the output
    tree of input trees, as jax.jacfwd). One JVP, vmapped over the basis of the inputs."""
    _refuse_holomorphic("jacfwd", holomorphic)

    def jacfun(*args, **kwargs):
        import xlapy.frontend.jvp  # noqa: F401  (registers the JVP rules)
        from xlapy.frontend.vmap import vmap
        partial, dyn, single = _split_args(fun, args, kwargs, argnums)
        flat, in_tree = pytree.flatten(dyn)
        flat = [_as_primal(x) for x in flat]
        avals = [get_aval(x) for x in flat]
        _require_real("jacfwd", avals, "inputs", "jvp")
        seen = []  # the unbatched primal outputs and aux, from the traced function

        def pushfwd(*tangents):
            out_p, out_t, out_tree, aux = _jvp_flat(partial, flat, list(tangents), in_tree,
                                                    has_aux)
            seen[:] = [out_p, out_tree, aux]
            return [t if is_float(get_aval(p).dtype) else None for p, t in zip(out_p, out_t)]

        n = sum(a.size for a in avals)
        if n:
            cols = vmap(pushfwd)(*_basis(avals))          # per output: [n, *out.shape]
        else:
            cols = pushfwd(*[np.zeros(a.shape, a.dtype) for a in avals])
        out_p, out_tree, aux = seen
        jac_leaves = []
        for o, p in enumerate(out_p):
            pa, per_input, off = get_aval(p), [], 0
            for a in avals:
                if not is_float(pa.dtype) or not n:  # integer outputs: zeros, as JAX
                    per_input.append(full(pa.shape + a.shape, 0, pa.dtype))
                else:
                    m = _rows(cols[o], off, off + a.size, a.shape + pa.shape)
                    per_input.append(_move_leading(m, len(a.shape), len(pa.shape)))
                off += a.size
            jac_leaves.append(_unflatten_inputs(in_tree, per_input, single))
        jac = pytree.unflatten(out_tree, jac_leaves)
        return (jac, aux) if has_aux else jac

    jacfun.__name__ = f"jacfwd({getattr(fun, '__name__', 'fn')})"
    jacfun.__wrapped__ = fun
    return jacfun


def _unflatten_inputs(in_tree, per_input, single):
    tree = pytree.unflatten(in_tree, per_input)
    return tree[0] if single else tree


def jacrev(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
           allow_int: bool = False):
    """The Jacobian of fun with respect to args[argnums], by reverse mode: the same layout
    as jacfwd. One VJP, its backward pass vmapped over the basis of the outputs."""
    from xlapy.frontend.autodiff import vjp
    _refuse_holomorphic("jacrev", holomorphic)

    def jacfun(*args, **kwargs):
        from xlapy.frontend.vmap import vmap
        partial, dyn, single = _split_args(fun, args, kwargs, argnums)
        flat, in_tree = pytree.flatten(dyn)
        avals = [get_aval(_as_primal(x)) for x in flat]
        if not allow_int:
            _require_real("jacrev", avals, "inputs", "vjp")
        res = vjp(partial, *dyn, has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        flat_out, out_tree = pytree.flatten(out)
        out_avals = [get_aval(_as_primal(o)) for o in flat_out]
        _require_real("jacrev", out_avals, "outputs", "vjp")

        def pullback(*cts):
            return pytree.flatten(vjp_fn(pytree.unflatten(out_tree, list(cts))))[0]

        m = sum(a.size for a in out_avals)
        rows = vmap(pullback)(*_basis(out_avals)) if m else None  # per input: [m, *in.shape]
        jac_leaves, off = [], 0
        for oa in out_avals:
            per_input = [_rows(rows[j], off, off + oa.size, oa.shape + a.shape) if m
                         else full(oa.shape + a.shape, 0, a.dtype)
                         for j, a in enumerate(avals)]
            jac_leaves.append(_unflatten_inputs(in_tree, per_input, single))
            off += oa.size
        jac = pytree.unflatten(out_tree, jac_leaves)
        return (jac, res[2]) if has_aux else jac

    jacfun.__name__ = f"jacrev({getattr(fun, '__name__', 'fn')})"
    jacfun.__wrapped__ = fun
    return jacfun


def hessian(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Hessian of scalar-valued fun: jacfwd(jacrev(fun)), as jax.hessian."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)


def jvp_call(fn, primals: list, tangents: list) -> tuple[list, list]:
    """Run fn(*primals) -> list under a new JVP trace with the given tangents (None: zero).
    Returns (outputs, tangents): zeros for float outputs without a tangent, None for
    integer / bool outputs. Used by the JVP rules of control flow (a branch or loop body
    evaluated under its own JVP trace)."""
    with JVPTrace() as trace:
        args = [JVPTracer(trace, p, t) if t is not None else p
                for p, t in zip(primals, tangents)]
        outs = list(fn(*args))
    ps, ts = [], []
    for o in outs:
        if isinstance(o, JVPTracer) and o._trace is trace:
            p, t = o.primal, o.tangent
        else:
            p, t = o, None
        ps.append(p)
        a = get_aval(p)
        ts.append(None if not is_float(a.dtype) else
                  (t if t is not None else full(a.shape, 0, a.dtype)))
    return ps, ts
