"""The host_callback primitive: a Python function called while the program runs (the
machinery under xlapy.debug.print, xlapy.debug.callback and xlapy.pure_callback).

    outs = bind(host_callback_p, *operands, callback_id=k, effect=True|False,
                vmap_method=None|"sequential"|"expand_dims"|"broadcast_all")

`callback_id` names the function in the process-wide registry (hlo/host_callbacks.py),
which also holds the operand and result avals. It takes and returns flat lists of NumPy
arrays (the API wrappers, frontend/callbacks.py, deal with pytrees and formatting).

  effect=True   debug.print / debug.callback: no results, an ordered side effect. The
                custom-call is marked custom_call_has_side_effect, so DCE and CSE keep it
                and never merge two; in a loop body it runs every iteration.
  effect=False  pure_callback: results, no side effect (removed when unused).

Eagerly the function is called directly. Lowering: one custom-call
`xlapy_host_callback` whose result is the tuple of the results (empty for effects), the id
in backend_config. Rules:
  JVP / grad   effects: called on the primal values, no tangent (they have no results);
               pure_callback: a clear error when a tangent or cotangent would have to flow
               through it (as JAX: give it a custom_jvp / custom_vjp).
  vmap         effects: JAX's rule, one call per member of the batch, in order (the
               operands sliced); pure_callback by its vmap_method: "sequential" calls it
               once per member (an unrolled loop) and stacks the results, "expand_dims"
               calls it once with the batch axis leading (size 1 on the unbatched operands),
               "broadcast_all" the same with every operand broadcast to the batch size;
               None is an error, as in JAX.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.batching.trace import NOT_MAPPED, bdim_to_front, moveaxis
from xlapy.frontend.core import ShapedArray, bind, get_aval, primitive
from xlapy.frontend.dtypes import canonicalize_dtype
from xlapy.frontend.lowering import shape_of
from xlapy.frontend.primitives.basic import broadcast_in_dim, full
from xlapy.frontend.primitives.shapes import concatenate, reshape, slice_
from xlapy.hlo import host_callbacks
from xlapy.hlo.shapes import Shape

VMAP_METHODS = (None, "sequential", "expand_dims", "broadcast_all")

host_callback_p = primitive("host_callback", multiple_results=True)


def _avals(callback_id: int) -> list:
    return [ShapedArray(d, dt) for d, dt in host_callbacks.lookup(callback_id).out_avals]


@host_callback_p.def_impl
def _impl(*args, callback_id, effect, vmap_method):
    return host_callbacks.invoke(callback_id, [np.asarray(a) for a in args])


@host_callback_p.def_abstract_eval
def _abstract(*avals, callback_id, effect, vmap_method):
    return _avals(callback_id)


@host_callback_p.def_lowering
def _lower(ctx, *operands, callback_id, effect, vmap_method):
    outs = _avals(callback_id)
    shape = Shape.tuple([shape_of(a) for a in outs])
    cc = ctx.b.custom_call(host_callbacks.TARGET, list(operands), shape,
                           has_side_effect=bool(effect),
                           backend_config=host_callbacks.backend_config(callback_id))
    return [ctx.b.get_tuple_element(cc, i) for i in range(len(outs))]


def call(fn, args, result_avals, name: str, effect: bool, vmap_method=None) -> list:
    """Bind a callback of the flat function fn(*arrays) -> list of arrays on flat args."""
    if vmap_method not in VMAP_METHODS:
        raise XlapyError(f"{name}: vmap_method must be one of {VMAP_METHODS[1:]} or None, "
                         f"got {vmap_method!r}")
    # (the dtypes bind will give the operands: 64-bit ones become 32-bit without x64)
    in_avals = [get_aval(a) for a in args]
    k = host_callbacks.register(fn, [(a.shape, canonicalize_dtype(a.dtype)) for a in in_avals],
                                [(a.shape, a.dtype) for a in result_avals], name, effect)
    return bind(host_callback_p, *args, callback_id=k, effect=bool(effect),
                vmap_method=vmap_method)


def _name(callback_id: int) -> str:
    return host_callbacks.lookup(callback_id).name


# ---- JVP and VJP -----------------------------------------------------------------------------

def _no_derivative(callback_id) -> XlapyError:
    return XlapyError(f"{_name(callback_id)} cannot be differentiated: xlapy does not know "
                      "the derivative of a host callback (as in JAX, wrap it in "
                      "xlapy.custom_jvp or xlapy.custom_vjp to give it one)")


def _jvp(primals, tangents, callback_id, effect, vmap_method):
    outs = bind(host_callback_p, *primals, callback_id=callback_id, effect=effect,
                vmap_method=vmap_method)
    if not effect and any(t is not None for t in tangents) and outs:
        raise _no_derivative(callback_id)
    return outs, [None] * len(outs)


def _vjp(cts, *primals, out, callback_id, effect, vmap_method):
    raise _no_derivative(callback_id)


host_callback_p.def_jvp(_jvp)
host_callback_p.def_vjp(_vjp)


# ---- vmap ------------------------------------------------------------------------------------

def _member(x, d, i: int):
    """Member i of a batched value (batch axis d), or x itself when unmapped."""
    if d is NOT_MAPPED:
        return x
    a = get_aval(x)
    starts = [0] * a.ndim
    limits = list(a.shape)
    starts[d], limits[d] = i, i + 1
    return reshape(slice_(x, starts, limits), a.shape[:d] + a.shape[d + 1:])


def _batch(frame, vals, dims, callback_id, effect, vmap_method):
    cb = host_callbacks.lookup(callback_id)
    n = frame.size
    params = dict(callback_id=callback_id, effect=effect, vmap_method=vmap_method)
    if effect or vmap_method == "sequential":
        members = [bind(host_callback_p, *[_member(v, d, i) for v, d in zip(vals, dims)],
                        **params) for i in range(n)]
        outs = []
        for k, (dshape, dt) in enumerate(cb.out_avals):
            parts = [reshape(m[k], (1,) + dshape) for m in members]
            outs.append(full((0,) + dshape, 0, dt) if n == 0 else
                        parts[0] if n == 1 else concatenate(parts, 0))
        return outs, [0] * len(outs)
    if vmap_method is None:
        raise XlapyError(f"{cb.name} under vmap: give pure_callback a vmap_method "
                         "('sequential', 'expand_dims' or 'broadcast_all'); with "
                         "vmap_method=None it cannot be batched (as in JAX)")
    ops = []
    for v, d in zip(vals, dims):
        if d is not NOT_MAPPED:
            ops.append(moveaxis(v, d, 0))
        elif vmap_method == "broadcast_all":
            ops.append(bdim_to_front(v, NOT_MAPPED, n))
        else:
            a = get_aval(v)
            ops.append(broadcast_in_dim(v, (1,) + a.shape, tuple(range(1, a.ndim + 1))))
    res = [((n,) + d, dt) for d, dt in cb.out_avals]
    k = host_callbacks.register(cb.fn, [(get_aval(o).shape, get_aval(o).dtype) for o in ops],
                                res, cb.name, effect)
    outs = bind(host_callback_p, *ops, callback_id=k, effect=effect, vmap_method=vmap_method)
    return outs, [0] * len(outs)


host_callback_p.def_batch(_batch)

__all__ = ["host_callback_p", "call", "VMAP_METHODS"]
