"""`vmap`: vectorize a function over an axis of its arguments, as jax.vmap does.

    xp.vmap(f)(xs)                             f applied to every xs[i], results stacked
    xp.vmap(f, in_axes=(0, None))(xs, w)       w shared by every call
    xp.vmap(f, in_axes=1, out_axes=1)          map over (and stack along) axis 1
    xp.vmap(f, axis_name="i")                  collectives inside f: lax.psum(x, "i"), ...

f runs once, on BatchTracers (xlapy.frontend.batching): each primitive it applies is
computed for the whole batch by its batching rule, so vmap(f) under jit is the batched
program one would write by hand (a dot_general with a batch dimension, not a loop).

in_axes / out_axes: an int (negative counts from the end), None (not mapped: the same
value for every member; for outputs, only allowed when the output does not depend on the
mapped inputs), or a tree prefix of the arguments / outputs: in_axes is a tuple (a list is
accepted) with one entry per positional argument, each an int, None or a container like
the argument's (a dict with the same keys, a tuple of the same length, ...). Keyword
arguments are always mapped over axis 0. Every mapped axis must have the same size (or
axis_size, which also allows no mapped argument at all). Errors are VmapError (an
XlapyError and a ValueError, as JAX raises ValueError).
"""

from __future__ import annotations

import functools

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend import pytree
from xlapy.frontend.core import Tracer, dtype_name, get_aval
from xlapy.frontend.batching import BatchFrame, BatchTrace, BatchTracer, moveaxis
from xlapy.frontend.batching.trace import NOT_MAPPED, broadcast_batch


class VmapError(XlapyError, ValueError):
    """vmap was given inconsistent axes, sizes or pytree prefixes."""


def _check_axis_spec(spec, what):
    leaves, _ = pytree.flatten(spec)
    for a in leaves:
        if not (isinstance(a, (int, np.integer)) and not isinstance(a, bool)):
            raise VmapError(f"vmap {what} must be an int, None, or a tuple of entries "
                            f"corresponding to the positional arguments passed to the "
                            f"function, but got {spec!r}")


def _broadcast_prefix(prefix, tree, what: str, path: str) -> list:
    """One axis (int or None) per leaf of `tree`, from a tree prefix of it."""
    if prefix is None or isinstance(prefix, (int, np.integer)):
        return [prefix] * len(pytree.flatten(tree)[0])
    if isinstance(prefix, tuple) and hasattr(prefix, "_fields"):
        ok = type(tree) is type(prefix)
        kids = list(zip(prefix._fields, prefix, tree)) if ok else []
    elif isinstance(prefix, (tuple, list)):
        ok = type(tree) is type(prefix) and len(tree) == len(prefix)
        kids = [(i, p, t) for i, (p, t) in enumerate(zip(prefix, tree))] if ok else []
    elif isinstance(prefix, dict):
        ok = isinstance(tree, dict) and sorted(tree) == sorted(prefix)
        kids = [(k, prefix[k], tree[k]) for k in sorted(prefix)] if ok else []
    else:
        raise VmapError(f"vmap {what} must contain only ints, None and containers, got "
                        f"{prefix!r} at {path}")
    if not ok:
        raise VmapError(f"vmap {what} specification must be a tree prefix of the "
                        f"corresponding value: at {path} the specification is {prefix!r} but "
                        f"the value is {_describe_tree(tree)}")
    out = []
    for key, p, t in kids:
        sub = f"{path}.{key}" if isinstance(key, str) and path and hasattr(prefix, "_fields") \
            else f"{path}[{key!r}]"
        out += _broadcast_prefix(p, t, what, sub)
    return out


def _describe_tree(tree) -> str:
    leaves, treedef = pytree.flatten(tree)
    shown = pytree.unflatten(treedef, ["*"] * len(leaves))
    return repr(shown).replace("'*'", "*")


def _leaf_paths(tree, path: str) -> list[str]:
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return [p for f, t in zip(tree._fields, tree) for p in _leaf_paths(t, f"{path}.{f}")]
    if isinstance(tree, (tuple, list)):
        return [p for i, t in enumerate(tree) for p in _leaf_paths(t, f"{path}[{i}]")]
    if isinstance(tree, dict):
        return [p for k in sorted(tree) for p in _leaf_paths(tree[k], f"{path}[{k!r}]")]
    if tree is None:
        return []
    return [path]


def _arg_names(fun, nargs: int) -> list[str]:
    import inspect
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(nargs):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY,
                                                   params[i].POSITIONAL_OR_KEYWORD):
            names.append(f"argument {params[i].name}")
        else:
            names.append(f"args[{i}]")
    return names


def _as_value(x):
    if isinstance(x, Tracer) or isinstance(x, np.ndarray):
        return x
    return np.asarray(x)


def _type_str(x) -> str:
    a = get_aval(x)
    return f"{dtype_name(a.dtype)}[{','.join(map(str, a.shape))}]"


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None):
    """Vectorize `fun` over axis `in_axes` of its arguments (see the module docstring)."""
    if not callable(fun):
        raise TypeError(f"vmap expects a callable, got {fun!r}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or isinstance(in_axes, (int, tuple))) or isinstance(in_axes, bool):
        raise VmapError(f"vmap in_axes must be an int, None, or a tuple of entries "
                        f"corresponding to the positional arguments passed to the function, "
                        f"but got {in_axes!r}")
    _check_axis_spec(in_axes, "in_axes")
    _check_axis_spec(out_axes, "out_axes")
    if axis_size is not None and (not isinstance(axis_size, (int, np.integer))
                                  or axis_size < 0):
        raise VmapError(f"vmap axis_size must be a non-negative int, got {axis_size!r}")

    @functools.wraps(fun, updated=())
    def batched(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise VmapError(f"vmap in_axes must be an int, None, or a tuple of entries "
                            f"corresponding to the positional arguments passed to the "
                            f"function, but got len(in_axes)={len(in_axes)}, "
                            f"len(args)={len(args)}")
        flat, in_tree = pytree.flatten((args, kwargs))
        prefix = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        axes = (_broadcast_prefix(prefix, tuple(args), "in_axes", "in_axes")
                + [0] * (len(flat) - len(pytree.flatten(tuple(args))[0])))
        names = _arg_names(fun, len(args))
        paths = ([p for i, a in enumerate(args) for p in _leaf_paths(a, names[i])]
                 + _leaf_paths(kwargs, "kwargs"))
        values, sizes = [], []
        for x, ax, path in zip(flat, axes, paths):
            if ax is None:
                values.append(x)
                continue
            x = _as_value(x)
            nd = len(get_aval(x).shape)
            if not -nd <= ax < nd:
                raise VmapError(f"vmap was requested to map its argument along axis {ax}, "
                                f"which implies that its rank should be at least "
                                f"{ax + 1 if ax >= 0 else -ax}, but is only {nd} (its shape "
                                f"is {get_aval(x).shape}) ({path})")
            ax %= nd
            values.append(x)
            sizes.append((get_aval(x).shape[ax], ax, path, x))
        size = _axis_size(sizes, axis_size)
        frame = BatchFrame(size, axis_name)
        with BatchTrace(frame) as trace:
            tracers = [v if (ax is None) else
                       BatchTracer(trace, v, (ax % len(get_aval(v).shape)))
                       for v, ax in zip(values, axes)]
            a, kw = pytree.unflatten(in_tree, tracers)
            out = fun(*a, **kw)
            out_flat, out_tree = pytree.flatten(out)
            out_specs = _broadcast_prefix(out_axes, out, "out_axes", "out_axes")
            results = [_place_output(trace, o, spec, size)
                       for o, spec in zip(out_flat, out_specs)]
        return pytree.unflatten(out_tree, results)

    batched.__name__ = f"vmap({getattr(fun, '__name__', 'fn')})"
    return batched


def _axis_size(sizes, axis_size) -> int:
    distinct = sorted({s for s, *_ in sizes})
    if axis_size is not None and (not distinct or distinct == [int(axis_size)]):
        return int(axis_size)
    if len(distinct) == 1 and axis_size is None:
        return distinct[0]
    if not distinct:
        raise VmapError("vmap must have at least one non-None value in in_axes or axis_size "
                        "must be specified")
    lines = []
    if axis_size is not None:
        lines.append(f"  * the `axis_size` argument was {axis_size}")
    for s in distinct:
        group = [(ax, path, x) for sz, ax, path, x in sizes if sz == s]
        ax, path, x = group[0]
        if len(group) == 1:
            lines.append(f"  * one axis had size {s}: axis {ax} of {path} of type "
                         f"{_type_str(x)}")
        else:
            lines.append(f"  * {len(group)} axes had size {s}, e.g. axis {ax} of {path} of "
                         f"type {_type_str(x)}")
    raise VmapError("vmap got inconsistent sizes for array axes to be mapped:\n"
                    + ";\n".join(lines))


def _place_output(trace, o, spec, size):
    """An output of the batched function with its batch axis at `spec`."""
    if isinstance(o, BatchTracer) and o._trace is trace:
        val, bdim = o.val, o.bdim
    else:
        val, bdim = _as_value(o), NOT_MAPPED
    if spec is None:
        if bdim is not NOT_MAPPED:
            raise VmapError(f"vmap has a mapped output but out_axes is None for it (the "
                            f"output {o.aval} depends on the mapped inputs): give it an "
                            "out_axes entry, or make it not depend on them")
        return val
    nd = len(get_aval(val).shape) + (1 if bdim is NOT_MAPPED else 0)
    if not -nd <= spec < nd:
        raise VmapError(f"vmap out_axes {spec} is out of range for an output of rank {nd} "
                        f"(batch axis included)")
    spec %= nd
    if bdim is NOT_MAPPED:
        return broadcast_batch(val, size, spec)
    return moveaxis(val, bdim, spec)
