"""pmap's argument and result axes, as jax.pmap takes them (frontend/pmap.py runs them).

    in_axes      an int (negative counts from the end) or None (broadcast: every device
                 gets the whole value), or a tuple with one entry per positional argument,
                 each a tree prefix of its argument; keyword arguments are mapped on axis 0
    out_axes     the same for the results (None: device 0's value, which pmap assumes is
                 the same on every device)
    static_broadcasted_argnums   positional arguments that are Python values, hashable,
                 closed over in the traced program (a new value traces again)
    axis_size    checked against the mapped size; pmap needs at least one mapped argument

Errors are PmapError (a ValueError, as JAX raises), naming the argument and the axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend import pytree


class PmapError(XlapyError, ValueError):
    """pmap was given inconsistent axes, sizes, pytree prefixes or static arguments."""


def _vmap_prefix(prefix, tree, what, path):
    from xlapy.frontend.vmap import VmapError, _broadcast_prefix
    try:
        return _broadcast_prefix(prefix, tree, what, path)
    except VmapError as e:
        raise PmapError(str(e).replace("vmap ", "pmap ", 1)) from None


def check_spec(spec, what: str):
    if isinstance(spec, list):
        spec = tuple(spec)
    for a in pytree.flatten(spec)[0]:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise PmapError(f"pmap {what} must be an int, None, or a tuple of entries "
                            f"corresponding to the positional arguments passed to the "
                            f"function, but got {spec!r}")
    return spec


def static_argnums(argnums) -> tuple:
    nums = (argnums,) if isinstance(argnums, (int, np.integer)) else tuple(argnums)
    if any(not isinstance(i, (int, np.integer)) or isinstance(i, bool) for i in nums):
        raise PmapError(f"pmap static_broadcasted_argnums must be ints, got {argnums!r}")
    return nums


@dataclass
class Call:
    """One call's dynamic leaves with their mapped axis moved to the front."""
    leaves: list      # numpy arrays; mapped ones have the device axis first
    mapped: list      # one bool per leaf
    in_tree: object   # the pytree of (dynamic args, kwargs)
    static: tuple     # ((position, value), ...) of the static arguments
    size: int         # the number of devices

    def device_args(self, d: int) -> list:
        return [a[d] if m else a for a, m in zip(self.leaves, self.mapped)]


def prepare(args, kwargs, in_axes, static_nums, axis_size) -> Call:
    nargs = len(args)
    static_pos = []
    for i in static_nums:
        if not -nargs <= i < nargs:
            raise PmapError(f"pmap static_broadcasted_argnums {i} is out of range for a call "
                            f"with {nargs} positional arguments")
        static_pos.append(i % nargs)
    static = []
    for i in sorted(set(static_pos)):
        try:
            hash(args[i])
        except TypeError:
            raise PmapError(f"pmap: the static argument {i} must be hashable, got "
                            f"{type(args[i]).__name__}") from None
        static.append((i, args[i]))
    dyn = tuple(a for i, a in enumerate(args) if i not in static_pos)
    if isinstance(in_axes, tuple):
        if len(in_axes) == nargs and static:
            in_axes = tuple(a for i, a in enumerate(in_axes) if i not in static_pos)
        if len(in_axes) != len(dyn):
            raise PmapError(f"pmap in_axes must be an int, None, or a tuple of entries "
                            f"corresponding to the positional arguments passed to the "
                            f"function, but got len(in_axes)={len(in_axes)}, "
                            f"len(args)={nargs}")
        prefix = in_axes
    else:
        prefix = (in_axes,) * len(dyn)
    axes = _vmap_prefix(prefix, dyn, "in_axes", "in_axes")
    axes += [0] * len(pytree.flatten(kwargs)[0])
    flat, in_tree = pytree.flatten((dyn, kwargs))
    paths = [("args" if p[0].idx == 0 else "kwargs") + pytree.keystr(p[1:])
             for p, _ in pytree.flatten_with_path((dyn, kwargs))[0]]
    leaves, mapped, sizes = [], [], {}
    for x, ax, path in zip(flat, axes, paths):
        a = np.asarray(x)
        if a.dtype == object:
            raise PmapError(f"pmap: argument {path} of type {type(x).__name__} is not an "
                            "array (mark Python values static_broadcasted_argnums)")
        if ax is None:
            leaves.append(a)
            mapped.append(False)
            continue
        if not -a.ndim <= ax < max(a.ndim, 1) or a.ndim == 0:
            raise PmapError(f"pmap was requested to map its argument {path} along axis "
                            f"{ax}, which implies that its rank should be at least "
                            f"{(ax if ax >= 0 else -ax - 1) + 1}, but is only {a.ndim} "
                            f"(its shape is {a.shape})")
        a = np.moveaxis(a, ax % a.ndim, 0)
        sizes.setdefault(a.shape[0], []).append(f"axis {ax} of {path} (shape {x.shape})")
        leaves.append(a)
        mapped.append(True)
    if not sizes:
        raise PmapError("pmap requires at least one argument with a mapped axis")
    if len(sizes) > 1:
        raise PmapError("pmap got inconsistent sizes for array axes to be mapped:\n" + "\n".join(
            f"  * size {s}: {', '.join(w)}" for s, w in sorted(sizes.items())))
    n = next(iter(sizes))
    if axis_size is not None and int(axis_size) != n:
        raise PmapError(f"Specified axis_size {axis_size} doesn't match received axis_size "
                        f"{n}.")
    return Call(leaves, mapped, in_tree, tuple(static), n)


def with_static(fn, static: tuple):
    """fn taking only the dynamic positional arguments (the static ones closed over)."""
    if not static:
        return fn

    def bound(*dyn, **kwargs):
        args, it, pos = [], iter(dyn), dict(static)
        for i in range(len(dyn) + len(static)):
            args.append(pos[i] if i in pos else next(it))
        return fn(*args, **kwargs)
    return bound


def place_outputs(out_tree, per_device: list, out_axes):
    """The results' pytree from each device's flat outputs, stacked on out_axes."""
    outs = pytree.unflatten(out_tree, list(range(len(per_device[0]))))
    specs = _vmap_prefix(out_axes, outs, "out_axes", "out_axes")
    placed = []
    for k, spec in enumerate(specs):
        if spec is None:
            placed.append(np.asarray(per_device[0][k]))
            continue
        stacked = np.stack([np.asarray(dev[k]) for dev in per_device])
        if not -stacked.ndim <= spec < stacked.ndim:
            raise PmapError(f"pmap out_axes {spec} is out of range for a result of rank "
                            f"{stacked.ndim} (device axis included)")
        placed.append(np.moveaxis(stacked, 0, spec % stacked.ndim))
    return pytree.unflatten(out_tree, placed)
