"""dynamic_slice and dynamic_update_slice: slices at traced start positions.

  dynamic_slice(x, *starts, slice_sizes)
      x[s0:s0+z0, ...] where every start is an integer scalar (one dtype for all), CLAMPED
      to [0, dim - size] so the slice always lies inside x (XLA semantics, no error).
  dynamic_update_slice(x, update, *starts)
      x with `update` written at the starts, clamped the same way (update dims as sizes).

VJPs:
  dynamic_slice         ct_x = dynamic_update_slice(0, ct)            (ct into zeros)
  dynamic_update_slice  ct_x = ct with the window zeroed;  ct_u = dynamic_slice(ct)

The strict functions (also re-exported by indexing.py) take Python ints, NumPy scalars or
traced 0-d integers as starts and convert them to one dtype (the traced ones' if they
agree, else the default int: int32, int64 with jax_enable_x64).
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError, XlapyError
from xlapy.frontend.core import ShapedArray, Tracer, bind, primitive
from xlapy.frontend.dtypes import default_int
from xlapy.frontend.primitives.basic import aval_of, convert, zeros_like


def _ints(xs) -> tuple:
    return tuple(int(x) for x in xs)


def _np_clamped(starts, dims, sizes) -> list:
    out = []
    for s, n, z in zip(starts, dims, sizes):
        s = np.asarray(s)
        v = int(np.minimum(s, np.uint64(1 << 62))) if s.dtype.kind == "u" else int(s)
        out.append(min(max(v, 0), n - z))
    return out


def _check_starts(name, x: ShapedArray, starts):
    if len(starts) != x.ndim:
        raise ShapeError(f"{name}: {x} needs {x.ndim} start indices, got {len(starts)}")
    for s in starts:
        if s.shape != () or s.dtype.kind not in "iu" or s.dtype != starts[0].dtype:
            raise ShapeError(f"{name}: start indices must be integer scalars of one dtype, got "
                             f"{', '.join(map(str, starts))}")


dynamic_slice_p = primitive("dynamic_slice")


@dynamic_slice_p.def_impl
def _ds_impl(x, *starts, slice_sizes):
    _ds_aval(aval_of(x), *map(aval_of, starts), slice_sizes=slice_sizes)
    x = np.asarray(x)
    st = _np_clamped(starts, x.shape, slice_sizes)
    return x[tuple(slice(s, s + z) for s, z in zip(st, slice_sizes))].copy()


@dynamic_slice_p.def_abstract_eval
def _ds_aval(x, *starts, slice_sizes):
    _check_starts("dynamic_slice", x, starts)
    if len(slice_sizes) != x.ndim or any(not 0 <= z <= n for z, n in zip(slice_sizes, x.shape)):
        raise ShapeError(f"dynamic_slice: slice_sizes {list(slice_sizes)} do not fit {x}")
    return ShapedArray(slice_sizes, x.dtype)


dynamic_slice_p.def_lowering(
    lambda ctx, x, *starts, slice_sizes: ctx.b.dynamic_slice(x, list(starts), slice_sizes))


@dynamic_slice_p.def_vjp
def _ds_vjp(ct, x, *starts, out, slice_sizes):
    # ct_x = ct written into zeros at the (clamped) window
    return (bind(dynamic_update_slice_p, zeros_like(x), ct, *starts),) + (None,) * len(starts)


dynamic_update_slice_p = primitive("dynamic_update_slice")


@dynamic_update_slice_p.def_impl
def _dus_impl(x, update, *starts):
    _dus_aval(aval_of(x), aval_of(update), *map(aval_of, starts))
    out, u = np.array(x), np.asarray(update)
    st = _np_clamped(starts, out.shape, u.shape)
    out[tuple(slice(s, s + z) for s, z in zip(st, u.shape))] = u
    return out


@dynamic_update_slice_p.def_abstract_eval
def _dus_aval(x, u, *starts):
    _check_starts("dynamic_update_slice", x, starts)
    if u.dtype != x.dtype or u.ndim != x.ndim or any(a > b for a, b in zip(u.shape, x.shape)):
        raise ShapeError(f"dynamic_update_slice: the update {u} must have the dtype and rank "
                         f"of {x} and fit inside it")
    return x


dynamic_update_slice_p.def_lowering(
    lambda ctx, x, u, *starts: ctx.b.dynamic_update_slice(x, u, list(starts)))


@dynamic_update_slice_p.def_vjp
def _dus_vjp(ct, x, u, *starts, out):
    # ct_x = ct with the window zeroed; ct_u = the window of ct
    ct_x = bind(dynamic_update_slice_p, ct, zeros_like(u), *starts)
    ct_u = bind(dynamic_slice_p, ct, *starts, slice_sizes=aval_of(u).shape)
    return (ct_x, ct_u) + (None,) * len(starts)


# ---- functions (the strict "lax" API) ------------------------------------------------------------

def _starts(name, starts) -> list:
    """Start indices as scalars of one integer dtype (the traced ones' if they agree, else
    int64)."""
    starts = list(starts)
    traced = {np.dtype(s.dtype) for s in starts if isinstance(s, Tracer)}
    dt = traced.pop() if len(traced) == 1 else default_int()
    out = []
    for s in starts:
        if isinstance(s, Tracer):
            if s.shape != () or s.dtype.kind not in "iu":
                raise XlapyError(f"{name}: start indices must be integer scalars, got {s.aval}")
            out.append(convert(s, dt))
            continue
        v = np.asarray(s)
        if v.shape != () or v.dtype.kind not in "iub":
            raise XlapyError(f"{name}: start indices must be integer scalars, got {s!r}")
        iv = int(v)
        fits = np.iinfo(dt).min <= iv <= np.iinfo(dt).max
        out.append(np.asarray(iv if fits else min(max(iv, np.iinfo(dt).min), np.iinfo(dt).max),
                              dtype=dt))
    return out


def dynamic_slice(x, start_indices, slice_sizes):
    """x[s0:s0+z0, ...] with traced starts, each clamped to [0, dim - size] (XLA)."""
    starts = _starts("dynamic_slice", start_indices)
    return bind(dynamic_slice_p, x, *starts, slice_sizes=_ints(slice_sizes))


def dynamic_update_slice(x, update, start_indices):
    """x with `update` written at the (clamped) starts."""
    starts = _starts("dynamic_update_slice", start_indices)
    return bind(dynamic_update_slice_p, x, update, *starts)


def dynamic_slice_in_dim(x, start, size, axis=0):
    a = aval_of(x)
    axis = axis % a.ndim
    starts = [start if d == axis else 0 for d in range(a.ndim)]
    sizes = [size if d == axis else n for d, n in enumerate(a.shape)]
    return dynamic_slice(x, starts, sizes)


def dynamic_update_slice_in_dim(x, update, start, axis=0):
    a = aval_of(x)
    axis = axis % a.ndim
    return dynamic_update_slice(x, update, [start if d == axis else 0 for d in range(a.ndim)])


__all__ = ["dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim",
           "dynamic_update_slice_in_dim"]
