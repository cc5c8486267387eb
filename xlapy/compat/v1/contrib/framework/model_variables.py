"""contrib.framework's (slim's) variable constructors: variable, model_variable and
local_variable, as TF 1.15's contrib/framework/python/ops/variables.py defines them.

    w = slim.model_variable("weights", [3, 3, 8, 16], initializer=...,
                            regularizer=slim.l2_regularizer(0.05), device="/cpu:0")

variable is tf.get_variable in the given collections (GLOBAL_VARIABLES by default) and on
the given device; model_variable adds it to GLOBAL_VARIABLES and MODEL_VARIABLES too. Both
take their defaults from arg_scope.
"""

from __future__ import annotations

import functools

from xlapy.compat.v1.contrib.framework.arg_scope import add_arg_scope
from xlapy.compat.v1.framework import GraphKeys, device as _device, get_default_graph


@add_arg_scope
def variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
             trainable=True, collections=None, caching_device=None, device=None,
             partitioner=None, custom_getter=None, use_resource=None, **kwargs):
    from xlapy.compat.v1.variables import get_variable, get_variable_scope
    collections = list(dict.fromkeys(collections if collections is not None
                                     else [GraphKeys.GLOBAL_VARIABLES]))
    getter = get_variable
    if custom_getter is not None:
        getter = functools.partial(custom_getter, reuse=get_variable_scope().reuse)
    with _device(device or ""):
        return getter(name, shape=shape, dtype=dtype, initializer=initializer,
                      regularizer=regularizer, trainable=trainable, collections=collections)


@add_arg_scope
def model_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                   trainable=True, collections=None, caching_device=None, device=None,
                   partitioner=None, custom_getter=None, use_resource=None, **kwargs):
    collections = list(collections or [])
    collections += [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    return variable(name, shape=shape, dtype=dtype, initializer=initializer,
                    regularizer=regularizer, trainable=trainable, collections=collections,
                    device=device, custom_getter=custom_getter)


def local_variable(initial_value, validate_shape=True, name=None, use_resource=None):
    from xlapy.compat.v1.variables import Variable
    return Variable(initial_value, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                    validate_shape=validate_shape, name=name)


def global_variable(initial_value, validate_shape=True, name=None, use_resource=None):
    from xlapy.compat.v1.variables import Variable
    return Variable(initial_value, trainable=False,
                    collections=[GraphKeys.GLOBAL_VARIABLES],
                    validate_shape=validate_shape, name=name)


def get_name_scope():
    """The current name scope of the default graph ("" at the top)."""
    return get_default_graph().get_name_scope()
