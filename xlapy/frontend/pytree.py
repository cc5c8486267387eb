"""Pytrees: nested containers of leaves, with JAX's rules (xlapy.tree_util is the public face).

    leaves, treedef = flatten(tree)          # treedef: a hashable PyTreeDef
    tree = unflatten(treedef, leaves)

Containers (nodes) are tuples, lists, dicts (children in sorted key order, so {'b':1,'a':2}
and {'a':2,'b':1} share a structure), None (a node with no children, so it holds no leaf),
namedtuples, collections.OrderedDict (insertion order) and defaultdict (sorted keys), plus
any type registered with register_pytree_node / register_pytree_node_class /
register_dataclass / register_static. Everything else is a leaf; subclasses of dict or
list are leaves unless registered, as in JAX.

A PyTreeDef is part of jit's cache key: two treedefs are equal when their node types,
auxiliary data (dict keys, a custom node's aux) and children are equal. Key paths
(SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey; `keystr`) name a leaf's place in a
tree; jit uses them to name the argument a traced value came from.
"""

from __future__ import annotations

import collections
import functools
from dataclasses import dataclass
from typing import Any, Callable

from xlapy.errors import XlapyError


class PyTreeError(XlapyError, ValueError):
    """Two pytrees do not have the structure an operation needs (or a treedef was given the
    wrong number of leaves)."""


# ---- key path entries ------------------------------------------------------------------------

@dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclass(frozen=True)
class DictKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"


@dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"


@dataclass(frozen=True)
class FlattenedIndexKey:
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def keystr(path, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text, e.g. "[0]['w'].b" (simple=True: "0/w/b" with separator '/')."""
    if not simple:
        return separator.join(str(k) for k in path)

    def plain(k):
        for attr in ("idx", "key", "name"):
            if hasattr(k, attr):
                return str(getattr(k, attr))
        return str(k)
    return separator.join(plain(k) for k in path)


# ---- the registry ----------------------------------------------------------------------------

@dataclass(frozen=True)
class _Node:
    name: str
    # x -> (children, aux); aux must be hashable and comparable for jit's cache key
    flatten: Callable
    unflatten: Callable          # (aux, children) -> x
    keys: Callable | None = None  # (x, aux, n) -> n key entries; None: FlattenedIndexKey


def _dict_flatten(d):
    try:
        keys = sorted(d)
    except TypeError:
        raise PyTreeError(f"the keys of a dict in a pytree must be sortable (JAX sorts them), "
                          f"got {list(d)!r}") from None
    return [d[k] for k in keys], tuple(keys)


def _defaultdict_flatten(d):
    children, keys = _dict_flatten(d)
    return children, (d.default_factory, keys)


_REGISTRY: dict[type, _Node] = {
    tuple: _Node("tuple", lambda t: (t, None), lambda _, c: tuple(c),
                 lambda t, aux, n: [SequenceKey(i) for i in range(n)]),
    list: _Node("list", lambda t: (t, None), lambda _, c: list(c),
                lambda t, aux, n: [SequenceKey(i) for i in range(n)]),
    dict: _Node("dict", _dict_flatten, lambda keys, c: dict(zip(keys, c)),
                lambda t, keys, n: [DictKey(k) for k in keys]),
    type(None): _Node("None", lambda t: ((), None), lambda _, c: None,
                      lambda t, aux, n: []),
    collections.OrderedDict: _Node(
        "OrderedDict", lambda d: (list(d.values()), tuple(d.keys())),
        lambda keys, c: collections.OrderedDict(zip(keys, c)),
        lambda t, keys, n: [DictKey(k) for k in keys]),
    collections.defaultdict: _Node(
        "defaultdict", _defaultdict_flatten,
        lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)),
        lambda t, aux, n: [DictKey(k) for k in aux[1]]),
}

_NAMEDTUPLE = _Node("namedtuple", lambda t: (tuple(t), None), None,
                    lambda t, aux, n: [GetAttrKey(f) for f in type(t)._fields])


def _is_namedtuple(typ) -> bool:
    return issubclass(typ, tuple) and hasattr(typ, "_fields")


def _node_of(typ) -> _Node | None:
    node = _REGISTRY.get(typ)
    if node is None and _is_namedtuple(typ):
        return _NAMEDTUPLE
    return node


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Make `nodetype` a pytree node: flatten_func(x) -> (children, aux_data),
    unflatten_func(aux_data, children) -> x. aux_data must be hashable (it is part of jit's
    cache key). flatten_with_keys_func(x) -> ([(key, child), ...], aux_data) names the
    children in key paths (otherwise they are FlattenedIndexKey(i))."""
    if nodetype in _REGISTRY:
        raise XlapyError(f"{nodetype.__name__} is already registered as a pytree node")
    keys = None
    if flatten_with_keys_func is not None:
        def keys(x, aux, n, _f=flatten_with_keys_func):
            return [k for k, _ in _f(x)[0]]

    def flatten(x, _f=flatten_func):
        children, aux = _f(x)
        return list(children), aux
    _REGISTRY[nodetype] = _Node(getattr(nodetype, "__name__", str(nodetype)), flatten,
                                unflatten_func, keys)


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable, flatten_func: Callable | None = None):
    """register_pytree_node with named children: flatten_with_keys(x) ->
    ([(key, child), ...], aux_data)."""
    if flatten_func is None:
        def flatten_func(x):
            kc, aux = flatten_with_keys(x)
            return [c for _, c in kc], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls):
    """Class decorator: cls.tree_flatten(self) -> (children, aux) and the classmethod
    cls.tree_unflatten(aux, children) make it a pytree node."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls):
    """Class decorator: cls.tree_flatten_with_keys(self) and cls.tree_unflatten."""
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              getattr(cls, "tree_flatten", None) and (lambda x: x.tree_flatten()))
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """A dataclass as a pytree node: data_fields are children, meta_fields are static (part
    of the treedef, so they must be hashable). With both None, fields whose metadata has
    static=True are meta, the others data (as JAX). Usable as a decorator."""
    import dataclasses
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise XlapyError(f"register_dataclass: {nodetype.__name__} is not a dataclass; "
                             "pass data_fields and meta_fields")
        fields = [f for f in dataclasses.fields(nodetype) if f.init]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    data_fields, meta_fields = list(data_fields or ()), list(meta_fields or ())
    if dataclasses.is_dataclass(nodetype):
        init = {f.name for f in dataclasses.fields(nodetype) if f.init}
        missing = init - set(data_fields) - set(meta_fields) - set(drop_fields)
        if missing:
            raise XlapyError(f"register_dataclass: fields {sorted(missing)} of "
                             f"{nodetype.__name__} are neither data_fields nor meta_fields")

    def flatten(x):
        return ([getattr(x, f) for f in data_fields],
                tuple(getattr(x, f) for f in meta_fields))

    def unflatten(meta, children):
        kw = dict(zip(data_fields, children))
        kw.update(zip(meta_fields, meta))
        return nodetype(**kw)

    _REGISTRY[nodetype] = _Node(nodetype.__name__, flatten, unflatten,
                                lambda x, aux, n: [GetAttrKey(f) for f in data_fields])
    return nodetype


def register_static(cls):
    """Instances of cls hold no leaves: each is part of the treedef (must be hashable)."""
    _REGISTRY[cls] = _Node(cls.__name__, lambda x: ((), x), lambda aux, c: aux,
                           lambda x, aux, n: [])
    return cls


class Partial(functools.partial):
    """functools.partial as a pytree: the bound arguments are children, the function is
    static. Pass it to jitted functions and transformations as a value."""

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):  # flatten nested partials, as JAX does
            args = func.args + args
            kw = {**func.keywords, **kw}
            func = func.func
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, c: Partial(func, *c[0], **c[1]))


# ---- PyTreeDef -------------------------------------------------------------------------------

class PyTreeDef:
    """The structure of a pytree: node types, auxiliary data and where the leaves go."""

    __slots__ = ("node_type", "aux", "children_defs", "num_leaves", "_hash")

    def __init__(self, node_type, aux, children_defs: tuple):
        self.node_type = node_type  # None for a leaf
        self.aux = aux
        self.children_defs = children_defs
        self.num_leaves = 1 if node_type is None else sum(c.num_leaves for c in children_defs)
        self._hash = None

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children_defs)

    def children(self) -> list:
        return list(self.children_defs)

    def unflatten(self, leaves):
        return unflatten(self, leaves)

    def flatten_up_to(self, tree) -> list:
        return flatten_up_to(self, tree)

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return (self.node_type is other.node_type and self.num_leaves == other.num_leaves
                and self.aux == other.aux and self.children_defs == other.children_defs)

    def __hash__(self):
        if self._hash is None:
            try:
                h = hash((self.node_type, self.aux, self.children_defs))
            except TypeError:  # unhashable aux data: equal treedefs still hash alike
                h = hash((self.node_type, self.children_defs))
            self._hash = h
        return self._hash

    def _repr(self) -> str:
        if self.node_type is None:
            return "*"
        kids = [c._repr() for c in self.children_defs]
        t = self.node_type
        if t is tuple:
            return "(" + ", ".join(kids) + ("," if len(kids) == 1 else "") + ")"
        if t is list:
            return "[" + ", ".join(kids) + "]"
        if t is dict:
            return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(self.aux, kids)) + "}"
        if t is type(None):
            return "None"
        name = (f"namedtuple[{t.__name__}]" if _is_namedtuple(t)
                else getattr(t, "__name__", str(t)))
        aux = "" if _is_namedtuple(t) else f"[{self.aux!r}]"
        return f"CustomNode({name}{aux}, [{', '.join(kids)}])"

    def __repr__(self):
        return f"PyTreeDef({self._repr()})"


LEAF = PyTreeDef(None, None, ())


# How deep a pytree may nest: each level takes Python stack frames to walk (and a list that
# contains itself is found as one nested too deep).
MAX_DEPTH = 256


def _too_deep() -> PyTreeError:
    return PyTreeError(f"a pytree nested more than {MAX_DEPTH} deep, or containing itself")


def _flatten(t, leaves: list, is_leaf, depth: int = 0) -> PyTreeDef:
    if is_leaf is not None and is_leaf(t):
        leaves.append(t)
        return LEAF
    typ = type(t)
    if typ is tuple or typ is list:
        if depth >= MAX_DEPTH:
            raise _too_deep()
        return PyTreeDef(typ, None, tuple([_flatten(c, leaves, is_leaf, depth + 1)
                                           for c in t]))
    node = _node_of(typ)
    if node is None:
        leaves.append(t)
        return LEAF
    if depth >= MAX_DEPTH:
        raise _too_deep()
    children, aux = node.flatten(t)
    return PyTreeDef(typ, aux, tuple([_flatten(c, leaves, is_leaf, depth + 1)
                                      for c in children]))


def flatten(tree, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
    """(leaves in order, treedef). is_leaf(x) -> True stops the descent at x. A tree nested
    more than MAX_DEPTH deep raises PyTreeError."""
    leaves: list = []
    return leaves, _flatten(tree, leaves, is_leaf)


def unflatten(treedef: PyTreeDef, leaves) -> Any:
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise PyTreeError(f"{treedef} needs {treedef.num_leaves} leaves, got {len(leaves)}")
    # (a module-level recursive helper: a recursive closure would form a reference cycle
    # that keeps `leaves` alive until the garbage collector runs)
    return _build(treedef, iter(leaves))


def _build(d: PyTreeDef, it):
    t = d.node_type
    if t is None:
        return next(it)
    if t is tuple:
        return tuple([_build(c, it) for c in d.children_defs])
    if t is list:
        return [_build(c, it) for c in d.children_defs]
    children = [_build(c, it) for c in d.children_defs]
    if _is_namedtuple(t):
        return t(*children)
    return _node_of(t).unflatten(d.aux, children)


def num_leaves(treedef: PyTreeDef) -> int:
    return treedef.num_leaves


def _where(path) -> str:
    return f" at {keystr(path)}" if path else " at the root"


def flatten_up_to(treedef: PyTreeDef, tree) -> list:
    """The subtrees of `tree` at the leaves of `treedef` (tree must have treedef's
    structure down to those leaves). PyTreeError names the first place they differ."""
    out: list = []

    def walk(d, t, path):
        if d.node_type is None:
            out.append(t)
            return
        typ = type(t)
        if typ is not d.node_type:
            raise PyTreeError(f"pytree structure mismatch{_where(path)}: expected "
                              f"{d.node_type.__name__} (as in {d}), got {typ.__name__}")
        node = _node_of(typ)
        children, aux = node.flatten(t)
        children = list(children)
        if len(children) != len(d.children_defs) or aux != d.aux:
            raise PyTreeError(f"pytree structure mismatch{_where(path)}: expected {d}, got "
                              f"{flatten(t)[1]}")
        keys = node.keys(t, aux, len(children)) if node.keys else \
            [FlattenedIndexKey(i) for i in range(len(children))]
        for cd, c, k in zip(d.children_defs, children, keys):
            walk(cd, c, path + (k,))

    walk(treedef, tree, ())
    return out


def flatten_with_path(tree, is_leaf: Callable | None = None):
    """([(key path, leaf), ...], treedef): each key path is a tuple of key entries."""
    out: list = []

    def walk(t, path):
        if is_leaf is not None and is_leaf(t):
            out.append((path, t))
            return
        node = _node_of(type(t))
        if node is None:
            out.append((path, t))
            return
        if len(path) >= MAX_DEPTH:
            raise _too_deep()
        children, aux = node.flatten(t)
        children = list(children)
        keys = node.keys(t, aux, len(children)) if node.keys else \
            [FlattenedIndexKey(i) for i in range(len(children))]
        for k, c in zip(keys, children):
            walk(c, path + (k,))

    walk(tree, ())
    return out, flatten(tree, is_leaf)[1]


def treedef_paths(treedef: PyTreeDef) -> list:
    """The key path of each leaf of a treedef (rebuilt with placeholder leaves)."""
    try:
        return [p for p, _ in flatten_with_path(unflatten(treedef, [object()] *
                                                          treedef.num_leaves))[0]]
    except Exception:  # a custom node whose unflatten inspects its leaves
        return [(FlattenedIndexKey(i),) for i in range(treedef.num_leaves)]


def tree_map(fn, tree, *rest, is_leaf: Callable | None = None):
    """fn applied to the leaves of `tree` (and the matching subtrees of each of `rest`,
    which must have tree's structure at least down to its leaves)."""
    leaves, treedef = flatten(tree, is_leaf)
    others = [flatten_up_to(treedef, r) for r in rest]
    return unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others)])


def tree_map_with_path(fn, tree, *rest, is_leaf: Callable | None = None):
    """fn(key_path, leaf, *matching leaves of rest) at every leaf of `tree`."""
    pairs, treedef = flatten_with_path(tree, is_leaf)
    others = [flatten_up_to(treedef, r) for r in rest]
    return unflatten(treedef, [fn(p, x, *ys) for (p, x), *ys in zip(pairs, *others)])
