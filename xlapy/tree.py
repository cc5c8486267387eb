"""xlapy.tree: the short names of xlapy.tree_util (as jax.tree): map, leaves, structure,
flatten, unflatten, reduce, all, transpose and the *_with_path forms."""

from __future__ import annotations

from xlapy.tree_util import (tree_all as all, tree_flatten as flatten,
                             tree_flatten_with_path as flatten_with_path,
                             tree_leaves as leaves, tree_leaves_with_path as leaves_with_path,
                             tree_map as map, tree_map_with_path as map_with_path,
                             tree_reduce as reduce, tree_structure as structure,
                             tree_transpose as transpose, tree_unflatten as unflatten)

__all__ = ["all", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
           "map_with_path", "reduce", "structure", "transpose", "unflatten"]


def __getattr__(name):
    raise AttributeError(f"module 'xlapy.tree' has no attribute '{name}' (it has: "
                         f"{', '.join(__all__)})")
