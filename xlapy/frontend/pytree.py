"""Pytrees: nested tuples, lists and dicts (and None) of leaves.

`flatten(tree) -> (leaves, treedef)` and `unflatten(treedef, leaves)`. A treedef is a
hashable description of the structure (it is part of jit's cache key). Dict keys are
sorted, as in JAX, so {'b':1,'a':2} and {'a':2,'b':1} share a structure.
"""

from __future__ import annotations

from typing import Any

from xlapy.errors import XlapyError

LEAF = "*"
# How deep a pytree may nest (each level takes Python stack frames to walk; a list that
# contains itself is found as one nested too deep).
MAX_DEPTH = 256


def flatten(tree) -> tuple[list, Any]:
    leaves: list = []

    def walk(t, depth):
        if depth > MAX_DEPTH and isinstance(t, (tuple, list, dict)):
            raise XlapyError(f"a pytree (tuples, lists, dicts) nested more than {MAX_DEPTH} "
                             "deep, or containing itself")
        depth += 1
        if isinstance(t, tuple) and not hasattr(t, "_fields"):
            return ("tuple", tuple([walk(x, depth) for x in t]))
        if isinstance(t, tuple):  # namedtuple
            return ("namedtuple", type(t), tuple([walk(x, depth) for x in t]))
        if isinstance(t, list):
            return ("list", tuple([walk(x, depth) for x in t]))
        if isinstance(t, dict):
            keys = sorted(t)
            return ("dict", tuple(keys), tuple([walk(t[k], depth) for k in keys]))
        if t is None:
            return ("none",)
        leaves.append(t)
        return LEAF

    return leaves, walk(tree, 0)


def unflatten(treedef, leaves) -> Any:
    # (a module-level recursive helper: a recursive closure would form a reference cycle
    # that keeps `leaves` alive until the garbage collector runs)
    return _build(treedef, iter(leaves))


def _build(d, it):
    if d == LEAF:
        return next(it)
    kind = d[0]
    if kind == "tuple":
        return tuple(_build(x, it) for x in d[1])
    if kind == "namedtuple":
        return d[1](*[_build(x, it) for x in d[2]])
    if kind == "list":
        return [_build(x, it) for x in d[1]]
    if kind == "dict":
        return {k: _build(x, it) for k, x in zip(d[1], d[2])}
    return None


def tree_map(fn, tree, *rest):
    leaves, treedef = flatten(tree)
    others = [flatten(r)[0] for r in rest]
    return unflatten(treedef, [fn(x, *ys) for x, *ys in zip(leaves, *others)])


def num_leaves(treedef) -> int:
    if treedef == LEAF:
        return 1
    kind = treedef[0]
    children = (treedef[2] if kind in ("dict", "namedtuple")
                else treedef[1] if kind != "none" else ())
    return sum(num_leaves(c) for c in children)
