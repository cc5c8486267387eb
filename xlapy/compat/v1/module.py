"""tf.Module: a named container of variables and other modules (TF 1.15's tf.Module).

    class Dense(tf.Module):
        def __init__(self, n_in, n_out, name=None):
            super().__init__(name=name)
            with self.name_scope:
                self.w = tf.Variable(tf.random_normal([n_in, n_out]), name="w")
                self.b = tf.Variable(tf.zeros([n_out]), name="b")

        @tf.Module.with_name_scope
        def __call__(self, x):
            return tf.nn.relu(tf.matmul(x, self.w) + self.b)

`variables`, `trainable_variables` and `submodules` walk the module's attributes in sorted
name order, each attribute's value flattened as tf.nest does (lists, tuples, dicts by sorted
key), yielding the module's own matches first and then those of each submodule found, in
that order, depth first; an object reached twice is yielded once.

As in TF 1.x graph mode, the name scope is entered once at construction (so two modules named
"dense" get the scopes "dense/" and "dense_1/"), and `name_scope` re-enters that scope.
"""

from __future__ import annotations

import functools
import re

from xlapy.compat.v1.framework import name_scope as _name_scope
from xlapy.compat.v1.variables import Variable

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CAMEL = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")


def _camel_to_snake(name: str) -> str:
    return _CAMEL.sub(r"_\1", name).lower()


def _leaves_with_paths(value, path=()):
    """(path, leaf) pairs of a nested value, as tf.nest flattens it."""
    if isinstance(value, dict):
        for k in sorted(value):
            yield from _leaves_with_paths(value[k], path + (k,))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _leaves_with_paths(v, path + (i,))
    else:
        yield path, value


def _flatten_module(module, recursive, predicate, key, with_path, module_path, seen):
    attrs = vars(module)
    submodules = []
    for name in sorted(attrs, key=key):
        for leaf_path, leaf in _leaves_with_paths(attrs[name], (name,)):
            if not with_path:
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
            if predicate(leaf):
                yield (module_path + leaf_path, leaf) if with_path else leaf
            if recursive and isinstance(leaf, Module):
                submodules.append((module_path + leaf_path, leaf))
    for sub_path, sub in submodules:
        yield from _flatten_module(sub, recursive, predicate, key, with_path, sub_path, seen)


class Module:
    """A named container of tf.Variables and other Modules (see the module docstring)."""

    def __init__(self, name=None):
        if name is None:
            name = _camel_to_snake(type(self).__name__)
        elif not isinstance(name, str) or not _IDENTIFIER.match(name):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be "
                             f"valid Python identifiers (e.g. a valid class name).")
        self._name = name
        with _name_scope(name) as scope_name:
            self._scope_name = scope_name

    @property
    def name(self) -> str:
        """The module's name (the constructor's, or the class name in snake_case)."""
        return self._name

    @property
    def name_scope(self):
        """A context manager re-entering the module's name scope (unique in its graph)."""
        return _name_scope(self._scope_name)

    @property
    def variables(self) -> tuple:
        """The tf.Variables of this module and its submodules, in attribute order."""
        return tuple(self._flatten(predicate=_is_variable))

    @property
    def trainable_variables(self) -> tuple:
        """The trainable tf.Variables of this module and its submodules."""
        return tuple(self._flatten(predicate=_is_trainable_variable))

    @property
    def submodules(self) -> tuple:
        """Every Module reachable from this one's attributes (not this one)."""
        return tuple(self._flatten(predicate=_is_module))

    def _flatten(self, recursive=True, predicate=None, attribute_traversal_key=None,
                 with_path=False):
        """The attribute leaves for which predicate holds (all if None), this module's
        first; with_path: (path, leaf) pairs, path the attribute names and indices."""
        return _flatten_module(self, bool(recursive), predicate or (lambda _: True),
                               attribute_traversal_key, with_path, (), {id(self)})

    @classmethod
    def with_name_scope(cls, method):
        """Decorates a method so that it runs inside the module's name scope."""
        @functools.wraps(method)
        def method_with_name_scope(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return method_with_name_scope


def _is_variable(obj) -> bool:
    return isinstance(obj, Variable)


def _is_trainable_variable(obj) -> bool:
    return isinstance(obj, Variable) and bool(getattr(obj, "trainable", False))


def _is_module(obj) -> bool:
    return isinstance(obj, Module)
