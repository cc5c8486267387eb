"""Pytrees: nested tuples, lists and dicts (and None) of leaves.

`flatten(tree) -> (leaves, treedef)` and `unflatten(treedef, leaves)`. A treedef is a
hashable description of the structure (it is part of jit's cache key). Dict keys are
sorted, as in JAX, so {'b':1,'a':2} and {'a':2,'b':1} share a structure.
"""

from __future__ import annotations

from typing import Any

LEAF = "*"

# Classes registered as pytree nodes: type -> (flatten, unflatten), where
# flatten(obj) -> (children, aux) and unflatten(aux, children) -> obj (aux is hashable).
_NODES: dict = {}


def register_pytree_node(nodetype, flatten_func, unflatten_func) -> None:
    """Make instances of `nodetype` pytree nodes (their children are traced, not them), as
    jax.tree_util.register_pytree_node: flatten_func(x) -> (children, aux),
    unflatten_func(aux, children) -> x."""
    _NODES[nodetype] = (flatten_func, unflatten_func)


def flatten(tree) -> tuple[list, Any]:
    leaves: list = []

    def walk(t):
        node = _NODES.get(type(t))
        if node is not None:  # registered classes first (a registered namedtuple too)
            children, aux = node[0](t)
            return ("node", type(t), aux, tuple(walk(x) for x in children))
        if isinstance(t, tuple) and not hasattr(t, "_fields"):
            return ("tuple", tuple(walk(x) for x in t))
        if isinstance(t, tuple):  # namedtuple
            return ("namedtuple", type(t), tuple(walk(x) for x in t))
        if isinstance(t, list):
            return ("list", tuple(walk(x) for x in t))
        if isinstance(t, dict):
            keys = sorted(t)
            return ("dict", tuple(keys), tuple(walk(t[k]) for k in keys))
        if t is None:
            return ("none",)
        leaves.append(t)
        return LEAF

    return leaves, walk(tree)


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
    if kind == "node":
        return _NODES[d[1]][1](d[2], [_build(x, it) for x in d[3]])
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
                else treedef[3] if kind == "node"
                else treedef[1] if kind != "none" else ())
    return sum(num_leaves(c) for c in children)
