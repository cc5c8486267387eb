"""xlapy.tree_util: JAX's pytree utilities (jax.tree_util) over xlapy's pytrees.

Nodes are tuples, lists, dicts (sorted keys), None (an empty subtree), namedtuples,
OrderedDict, defaultdict and registered types; everything else is a leaf. Every
transformation (jit, grad, jvp, vmap, custom_vjp, ...) flattens its arguments with these
rules, so a registered class can be passed to them (see xlapy/frontend/pytree.py).
"""

from __future__ import annotations

import functools as _functools

from xlapy.frontend.pytree import (LEAF as _LEAF, DictKey, FlattenedIndexKey, GetAttrKey,
                                   Partial, PyTreeDef, PyTreeError, SequenceKey, keystr,
                                   register_dataclass, register_pytree_node,
                                   register_pytree_node_class, register_pytree_with_keys,
                                   register_pytree_with_keys_class, register_static)
from xlapy.frontend import pytree as _pt

KeyEntry = SequenceKey | DictKey | GetAttrKey | FlattenedIndexKey
KeyPath = tuple


def tree_flatten(tree, is_leaf=None):
    """(leaves, treedef)."""
    return _pt.flatten(tree, is_leaf)


def tree_unflatten(treedef: PyTreeDef, leaves):
    return _pt.unflatten(treedef, leaves)


def tree_leaves(tree, is_leaf=None) -> list:
    return _pt.flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    return _pt.flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """f applied leaf by leaf; each of `rest` must have tree's structure (down to its
    leaves)."""
    return _pt.tree_map(f, tree, *rest, is_leaf=is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    return _pt.flatten_with_path(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None) -> list:
    return _pt.flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None):
    return _pt.tree_map_with_path(f, tree, *rest, is_leaf=is_leaf)


_MISSING = object()


def tree_reduce(function, tree, initializer=_MISSING, is_leaf=None):
    """functools.reduce over the leaves."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISSING:
        return _functools.reduce(function, leaves)
    return _functools.reduce(function, leaves, initializer)


def tree_all(tree, *, is_leaf=None) -> bool:
    """Whether every leaf is truthy (True for a tree without leaves)."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef, pytree_to_transpose):
    """An outer tree of inner trees becomes an inner tree of outer trees."""
    flat = outer_treedef.flatten_up_to(pytree_to_transpose)
    inner = [inner_treedef.flatten_up_to(x) for x in flat]
    per_inner = list(zip(*inner)) if inner else [()] * inner_treedef.num_leaves
    outers = [outer_treedef.unflatten(list(col)) for col in per_inner]
    return inner_treedef.unflatten(outers)


def all_leaves(iterable, is_leaf=None) -> bool:
    """Whether every element of `iterable` is a leaf."""
    return all(tree_structure(x, is_leaf) == _LEAF for x in iterable)


def treedef_children(treedef: PyTreeDef) -> list:
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.num_nodes == 1 and treedef.num_leaves == 1


def treedef_tuple(treedefs) -> PyTreeDef:
    treedefs = tuple(treedefs)
    return PyTreeDef(tuple, None, treedefs)


__all__ = ["DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
           "PyTreeDef", "PyTreeError", "SequenceKey", "all_leaves", "keystr",
           "register_dataclass", "register_pytree_node", "register_pytree_node_class",
           "register_pytree_with_keys", "register_pytree_with_keys_class", "register_static",
           "tree_all", "tree_flatten", "tree_flatten_with_path", "tree_leaves",
           "tree_leaves_with_path", "tree_map", "tree_map_with_path", "tree_reduce",
           "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
           "treedef_is_leaf", "treedef_tuple"]


def __getattr__(name):
    raise AttributeError(f"module 'xlapy.tree_util' has no attribute '{name}' (it has: "
                         f"{', '.join(__all__)})")
