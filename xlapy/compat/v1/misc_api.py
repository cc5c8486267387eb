"""Smaller TF 1.x entry points that scripts of the era call around their models:
tf.make_template, tf.is_variable_initialized, tf.report_uninitialized_variables,
tf.model_variables, tf.moving_average_variables, tf.numpy_function, tf.train.write_graph."""

from __future__ import annotations

import os

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import GraphKeys, get_default_graph


def model_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope=None):
    return get_default_graph().get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def is_variable_initialized(variable):
    """A bool scalar: whether the variable holds a value in the session running it."""
    from xlapy.compat.v1.ops._common import make
    ref = variable._ref() if hasattr(variable, "_ref") else variable
    if getattr(getattr(ref, "op", None), "type", None) != "VariableV2":
        raise InvalidTypeError(f"is_variable_initialized takes a variable, got {variable!r}")
    return make("IsVariableInitialized", [ref], name="IsVariableInitialized")


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor: the names of the variables of var_list (default: global and
    local) that hold no value yet, as tf.train.Supervisor and MonitoredSession check."""
    import numpy as np

    from xlapy.compat.v1.ops.array_ops import constant, stack
    from xlapy.compat.v1.ops.math_ops import logical_not
    from xlapy.compat.v1.ops.gather_ops import boolean_mask
    from xlapy.compat.v1.variables import global_variables, local_variables
    if var_list is None:
        var_list = global_variables() + local_variables()
    var_list = list(var_list)
    with get_default_graph().name_scope(name):
        names = np.array([v.op.name for v in var_list], dtype=object)
        if not var_list:
            return constant(np.array([], dtype=object), name="Const")
        inits = stack([is_variable_initialized(v) for v in var_list])
        return boolean_mask(constant(names), logical_not(inits))


def numpy_function(func, inp, Tout, stateful=True, name=None):
    """tf.numpy_function (TF 1.14): tf.py_func under its later name."""
    from xlapy.compat.v1.ops.script_ops import py_func
    return py_func(func, inp, Tout, stateful=stateful, name=name)


class _Template:
    """make_template's callable: the first call makes its variables in a scope of its own,
    every later call reuses them."""

    def __init__(self, name, func, create_scope_now, kwargs):
        from xlapy.compat.v1.variables import variable_scope
        if not callable(func):
            raise InvalidTypeError(f"make_template needs a callable, got {func!r}")
        self._name, self._func, self._kwargs = name, func, kwargs
        self._scope = None
        self._made = False  # (the first call makes the variables, later ones reuse them)
        if create_scope_now:
            with variable_scope(None, default_name=name) as vs:
                self._scope = vs

    @property
    def variable_scope(self):
        return self._scope

    @property
    def variable_scope_name(self):
        return None if self._scope is None else self._scope.name

    def __call__(self, *args, **kwargs):
        from xlapy.compat.v1.variables import variable_scope
        kw = dict(self._kwargs, **kwargs)
        if self._scope is None:
            with variable_scope(None, default_name=self._name) as vs:
                self._scope = vs
                self._made = True
                return self._func(*args, **kw)
        with variable_scope(self._scope, reuse=True if self._made else None):
            out = self._func(*args, **kw)
        self._made = True
        return out


def make_template(name_, func_, create_scope_now_=False, unique_name_=None,
                  custom_getter_=None, **kwargs):
    """func_ wrapped so that every call shares the variables its first call made."""
    if custom_getter_ is not None:
        raise InvalidArgumentError("make_template: custom_getter_ is not supported by xlapy")
    return _Template(unique_name_ or name_, func_, create_scope_now_, kwargs)


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Write the graph's GraphDef protobuf to logdir/name (text format by default) and
    return the path."""
    from xlapy.compat.v1.framework import Graph
    g = graph_or_graph_def
    if isinstance(g, Graph):
        g = g.as_graph_def()
    elif not hasattr(g, "SerializeToString") or not hasattr(g, "node"):
        raise InvalidTypeError("write_graph takes a tf.Graph or a GraphDef, got "
                               f"{type(graph_or_graph_def).__name__}")
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    if as_text:
        with open(path, "w") as f:
            f.write(str(g))
    else:
        with open(path, "wb") as f:
            f.write(g.SerializeToString())
    return path
