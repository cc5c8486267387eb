"""tf.train.init_from_checkpoint and tf.train.warm_start: variables whose initializers load
their values from a checkpoint, as TF 1.x's checkpoint_utils and warm_starting_util.

    tf.train.init_from_checkpoint("ckpt_dir", {"old_scope/": "new_scope/",   # a scope
                                               "w": "dense/kernel",          # a name
                                               "b": bias_variable})          # a Variable

assignment_map keys are checkpoint names or scopes (ending in '/', '/' the root), values
the current graph's variables, their names or scopes. A variable's initializer becomes an
assignment of the checkpoint's tensor (read when init_from_checkpoint runs), so
tf.global_variables_initializer() -- or a MonitoredTrainingSession's Scaffold, when there
is no checkpoint to restore -- sets it to the checkpoint's value. Call it before the
initializer op is built.
"""

from __future__ import annotations

import re

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.framework import GraphKeys, get_default_graph

__all__ = ["init_from_checkpoint", "warm_start"]


def _graph_variables() -> dict:
    g = get_default_graph()
    out = {}
    for v in g.get_collection(GraphKeys.GLOBAL_VARIABLES) + \
            g.get_collection(GraphKeys.LOCAL_VARIABLES):
        out.setdefault(v.op.name, v)
    return out


def _is_variable(v) -> bool:
    return hasattr(v, "_ref") and hasattr(v, "_initializer_op")


def _set_initializer(var, reader, tensor_name, ckpt) -> None:
    from xlapy.compat.v1.framework import constant_op
    from xlapy.compat.v1.ops._common import make_op
    from xlapy.compat.v1.ops.functional import in_root_graph
    value = reader.get_tensor(tensor_name)
    want = var.shape
    if want.ndims is not None and not want.is_compatible_with(np.shape(value)):
        raise InvalidArgumentError(f"Shape of variable {var.op.name} ({want}) doesn't match "
                                   f"with shape of tensor {tensor_name} "
                                   f"({list(np.shape(value))}) from checkpoint reader.")
    if np.asarray(value).dtype != var.dtype.np:
        raise InvalidArgumentError(f"tensor {tensor_name} of {ckpt} has dtype "
                                   f"{np.asarray(value).dtype}, the variable {var.op.name} "
                                   f"has {var.dtype.name}")
    g = var.graph
    with in_root_graph(), g.control_dependencies(None), \
            g.name_scope(f"{var.op.name}/checkpoint_initializer"):
        init = constant_op(value, var.dtype, name="value")
        var._initializer_op = make_op("Assign", [var._ref(), init],
                                      {"validate_shape": True, "use_locking": True},
                                      name="Assign")
        var._initial_value = init


def init_from_checkpoint(ckpt_dir_or_file, assignment_map) -> None:
    from xlapy.compat.v1.train.saver import _resolve, load_checkpoint
    ckpt = _resolve(ckpt_dir_or_file)
    reader = load_checkpoint(ckpt)
    in_ckpt = reader.get_variable_to_shape_map()
    store = _graph_variables()
    items = assignment_map.items() if isinstance(assignment_map, dict) else assignment_map
    for name_in_ckpt, current in items:
        var = None
        if _is_variable(current):
            var = current
        elif isinstance(current, (list, tuple)) and current and \
                all(_is_variable(v) for v in current):
            if len(current) != 1:
                raise UnimplementedError("init_from_checkpoint: partitioned variables are "
                                         "not supported by xlapy")
            var = current[0]
        elif isinstance(current, str) and current in store:
            var = store[current]
        if var is not None:
            if name_in_ckpt not in in_ckpt:
                raise InvalidArgumentError(f"Tensor {name_in_ckpt} is not found in {ckpt} "
                                           f"checkpoint {sorted(in_ckpt)}")
            _set_initializer(var, reader, name_in_ckpt, ckpt)
            continue
        if not isinstance(current, str):
            raise InvalidArgumentError(f"init_from_checkpoint: {current!r} is not a variable, "
                                       f"a variable's name or a scope")
        scopes = current[:current.rindex("/")] if "/" in current else ""
        if not name_in_ckpt.endswith("/"):
            raise InvalidArgumentError(
                f"Assignment map with scope only name {scopes} should map to scope only "
                f"{name_in_ckpt}. Should be 'scope/': 'other_scope/'.")
        for var_name in sorted(n for n in store if not scopes or n.startswith(scopes + "/")):
            full = var_name[len(scopes):]
            if current != "/":
                full = full[1:]
            if name_in_ckpt != "/":
                full = name_in_ckpt + full
            full = full.rstrip("/")
            if full not in in_ckpt:
                raise InvalidArgumentError(
                    f"Tensor {full} ({var_name[len(scopes) + 1:]} in {name_in_ckpt}) is not "
                    f"found in {ckpt} checkpoint")
            _set_initializer(store[var_name], reader, full, ckpt)


def _scope_match(pattern, variables) -> list:
    """The variables whose names match `pattern` from their start (TF's get_collection
    scope filter)."""
    rx = re.compile(pattern)
    return [v for v in variables if rx.match(v.name)]


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*",
               var_name_to_vocab_info=None, var_name_to_prev_var_name=None) -> None:
    """Initializes the chosen variables of the default graph from a checkpoint (TF's
    warm_starting_util.warm_start): vars_to_warm_start a regex over the TRAINABLE_VARIABLES'
    names (re.match), a list of regexes over GLOBAL_VARIABLES, a list of Variables, or None
    (none); var_name_to_prev_var_name renames them in the checkpoint."""
    if var_name_to_vocab_info:
        raise UnimplementedError("warm_start: var_name_to_vocab_info (remapping vocabularies) "
                                 "is not supported by xlapy")
    g = get_default_graph()
    if vars_to_warm_start is None:
        chosen = []
    elif isinstance(vars_to_warm_start, str):
        chosen = _scope_match(vars_to_warm_start,
                              g.get_collection(GraphKeys.TRAINABLE_VARIABLES))
    elif isinstance(vars_to_warm_start, (list, tuple)):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            chosen = []
            for pattern in vars_to_warm_start:
                chosen += [v for v in _scope_match(
                    pattern, g.get_collection(GraphKeys.GLOBAL_VARIABLES)) if v not in chosen]
        elif all(_is_variable(v) for v in vars_to_warm_start):
            chosen = list(vars_to_warm_start)
        else:
            raise InvalidArgumentError("If `vars_to_warm_start` is a list, it must be all "
                                       "`Variable` or all `str`.  Given types are "
                                       f"{[type(v).__name__ for v in vars_to_warm_start]}")
    else:
        raise InvalidArgumentError(f"vars_to_warm_start must be a regex, a list or None, got "
                                   f"{vars_to_warm_start!r}")
    prev = dict(var_name_to_prev_var_name or {})
    used = set()
    mapping = {}
    for v in chosen:
        name = v.op.name
        old = prev.get(name, name)
        used.add(name)
        mapping[old] = v
    unused = sorted(set(prev) - used)
    if unused:
        raise InvalidArgumentError(f"You provided the following variables in "
                                   f"var_name_to_prev_var_name that were not used: {unused}. "
                                   "Perhaps you misspelled them?")
    from xlapy.compat.v1 import logging
    logging.info("Warm-starting %d variables from %s.", len(mapping), ckpt_to_initialize_from)
    if mapping:
        init_from_checkpoint(ckpt_to_initialize_from, mapping)
