"""Collectives over a named axis, as jax.lax has them: psum, pmean, pmax, pmin, all_gather,
axis_index. The axis is named by an enclosing `xlapy.vmap(f, axis_name=...)`; inside it the
members of the batch are the participants:

    xp.vmap(lambda x: x - lax.pmean(x, "i"), axis_name="i")(xs)    # centre the batch
    xp.vmap(lambda x: lax.psum(1, "i"), axis_name="i")(xs)          # the batch size

axis_name is a name or a tuple of names (nested vmaps: their product axis, the first name
major). psum / pmean / pmax / pmin take a pytree. A name no enclosing vmap defines raises
UnboundAxisError (a NameError).
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend import pytree
from xlapy.frontend.core import Tracer
from xlapy.frontend.primitives import collectives as K
from xlapy.frontend.primitives.all_to_all import all_to_all_p
from xlapy.frontend.primitives.collectives import UnboundAxisError

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size",
           "ppermute", "psum_scatter", "all_to_all", "pswapaxes", "UnboundAxisError"]


def _names(axis_name) -> tuple:
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    if not names:
        raise XlapyError("a collective needs at least one axis name")
    return names


def _leaf(x):
    if isinstance(x, Tracer):
        return x
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise XlapyError(f"collectives take arrays or numbers, got {type(x).__name__}")
    return arr


def _tree_collective(prim, x, axis_name):
    leaves, tree = pytree.flatten(x)
    if not leaves:
        return x
    outs = prim.bind(*[_leaf(v) for v in leaves], axis_name=_names(axis_name))
    return pytree.unflatten(tree, list(outs))


def psum(x, axis_name):
    """The sum of x over the members of the named axis (a pytree of arrays)."""
    return _tree_collective(K.psum_p, x, axis_name)


def pmax(x, axis_name):
    """The elementwise maximum of x over the members of the named axis."""
    return _tree_collective(K.pmax_p, x, axis_name)


def pmin(x, axis_name):
    """The elementwise minimum of x over the members of the named axis."""
    return _tree_collective(K.pmin_p, x, axis_name)


def axis_size(axis_name) -> int:
    """The number of members of the named axis (a Python int; several names: the product)."""
    n = 1
    for name in _names(axis_name):
        n *= K.axis_size(name)
    return n


def pmean(x, axis_name):
    """The mean of x over the members of the named axis."""
    import xlapy.numpy as xnp
    n = axis_size(axis_name)
    return pytree.tree_map(lambda s: xnp.true_divide(s, n), psum(x, axis_name))


def axis_index(axis_name):
    """This member's position along the named axis (int32)."""
    return K.axis_index_p.bind(axis_name=_names(axis_name))


def all_gather(x, axis_name, *, axis: int = 0, tiled: bool = False):
    """Every member's x, stacked along a new axis `axis` (concatenated along it when tiled):
    the same array for every member."""
    def one(v):
        v = _leaf(v)
        nd = np.ndim(v) if not isinstance(v, Tracer) else v.ndim
        ax = axis + nd + (0 if tiled else 1) if axis < 0 else axis
        return K.all_gather_p.bind(v, axis_name=_names(axis_name), axis=int(ax),
                                   tiled=bool(tiled))
    return pytree.tree_map(one, x)


def ppermute(x, axis_name, perm):
    """Member t of the axis gets member s's x for each (s, t) in perm (a pytree); members
    no pair sends to get zeros. Sources and targets must each be distinct."""
    pairs = tuple((int(s), int(t)) for s, t in perm)
    for k, what in ((0, "source"), (1, "target")):
        ids = [p[k] for p in pairs]
        if len(set(ids)) != len(ids) or min(ids, default=0) < 0:
            raise XlapyError(f"ppermute: perm {list(perm)} repeats a {what} or has a "
                             "negative index")
    return pytree.tree_map(
        lambda v: K.ppermute_p.bind(_leaf(v), axis_name=_names(axis_name), perm=pairs), x)


def psum_scatter(x, axis_name, *, scatter_dimension: int = 0, tiled: bool = False):
    """The sum over the members, member i keeping block i of dimension scatter_dimension
    (untiled: that dimension has the axis size and is removed; tiled: it is divided)."""
    def one(v):
        v = _leaf(v)
        nd = np.ndim(v) if not isinstance(v, Tracer) else v.ndim
        sd = scatter_dimension + nd if scatter_dimension < 0 else scatter_dimension
        return K.psum_scatter_p.bind(v, axis_name=_names(axis_name),
                                     scatter_dimension=int(sd), tiled=bool(tiled))
    return pytree.tree_map(one, x)


def all_to_all(x, axis_name, split_axis: int, concat_axis: int, *, axis_index_groups=None,
               tiled: bool = False):
    """Member j gets block j of every member's x (a pytree), member i's block at position i
    of concat_axis (untiled: x.shape[split_axis] is the axis size and that axis is replaced
    by a new one at concat_axis; tiled: split_axis is divided, concat_axis multiplied)."""
    if axis_index_groups is not None:
        raise XlapyError("all_to_all: axis_index_groups is not supported")

    def one(v):
        v = _leaf(v)
        nd = np.ndim(v) if not isinstance(v, Tracer) else v.ndim
        s = split_axis + nd if split_axis < 0 else split_axis
        c = concat_axis + nd if concat_axis < 0 else concat_axis
        return all_to_all_p.bind(v, axis_name=_names(axis_name), split_axis=int(s),
                                 concat_axis=int(c), tiled=bool(tiled))
    return pytree.tree_map(one, x)


def pswapaxes(x, axis_name, axis: int, *, axis_index_groups=None):
    """Swap the named axis with positional axis `axis` (x.shape[axis] is the axis size):
    all_to_all with split_axis = concat_axis = axis."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)
