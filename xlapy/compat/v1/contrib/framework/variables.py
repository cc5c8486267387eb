"""tf.contrib.framework's variable helpers (slim.get_variables_to_restore and friends):
selecting variables by scope, suffix or name, and restoring some of them from a
checkpoint (fine-tuning a pretrained network with a new head)."""

from __future__ import annotations

import re

from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError
from xlapy.compat.v1.framework import GraphKeys, get_default_graph


def _op_name(v) -> str:
    return v.op.name if hasattr(v, "op") else v.name.split(":")[0]


def get_variables(scope=None, suffix=None, collection=GraphKeys.GLOBAL_VARIABLES):
    """The variables of `collection` whose name starts with `scope` (a string or a
    VariableScope) and ends with `suffix`."""
    if scope is not None and hasattr(scope, "name"):
        scope = scope.name
    found = get_default_graph().get_collection(collection, scope)
    if suffix is not None:
        found = [v for v in found if _op_name(v).endswith(suffix)]
    return found


def get_model_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.MODEL_VARIABLES)


def get_local_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.LOCAL_VARIABLES)


def get_trainable_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.TRAINABLE_VARIABLES)


def get_variables_by_name(given_name, scope=None):
    """The variables named `given_name` (the last component of the name)."""
    return get_variables(scope=scope, suffix="/" + given_name) + [
        v for v in get_variables(scope=scope) if _op_name(v) == given_name]


def get_variables_by_suffix(suffix, scope=None):
    return get_variables(scope=scope, suffix=suffix)


def get_unique_variable(var_op_name):
    found = [v for v in get_variables() if _op_name(v) == var_op_name]
    if not found:
        raise InvalidArgumentError(f"Couldn't find variable {var_op_name}")
    return found[0]


def get_variables_to_restore(include=None, exclude=None):
    """The global variables under one of the `include` scopes (all when None) and under none
    of the `exclude` scopes (name prefixes, as slim's)."""
    if include is not None and not isinstance(include, (list, tuple)):
        raise InvalidArgumentError("include is provided but is not a list or a tuple.")
    if exclude is not None and not isinstance(exclude, (list, tuple)):
        raise InvalidArgumentError("exclude is provided but is not a list or a tuple.")
    if include is None:
        chosen = list(get_variables())
    else:
        chosen = []
        for scope in include:
            chosen += [v for v in get_variables(scope) if v not in chosen]
    drop = []
    for scope in exclude or ():
        drop += get_variables(scope)
    return [v for v in chosen if v not in drop]


def filter_variables(var_list, include_patterns=None, exclude_patterns=None,
                     reg_search=True):
    """The variables whose names match one of include_patterns and none of
    exclude_patterns (regular expressions: re.search, or re.match with reg_search=False)."""
    test = re.search if reg_search else re.match

    def hit(v, patterns):
        return any(test(p, v.name) for p in patterns)
    out = list(var_list)
    if include_patterns is not None:
        out = [v for v in out if hit(v, include_patterns)]
    if exclude_patterns is not None:
        out = [v for v in out if not hit(v, exclude_patterns)]
    return out


def assign_from_checkpoint_fn(model_path, var_list, ignore_missing_vars=False,
                              reshape_variables=False):
    """A function of a session that restores `var_list` (a list, or a dict of checkpoint
    name -> variable) from the checkpoint at model_path; with ignore_missing_vars, the
    variables the checkpoint lacks are left as they are (None when it has none of them)."""
    from xlapy.compat.v1.train.saver import Saver, list_variables
    if isinstance(var_list, dict):
        pairs = dict(var_list)
    else:
        pairs = {_op_name(v): v for v in var_list}
    if ignore_missing_vars:
        try:
            have = {name for name, _ in list_variables(model_path)}
        except NotFoundError:
            have = set()
        pairs = {k: v for k, v in pairs.items() if k in have}
        if not pairs:
            return None
    saver = Saver(pairs, reshape=reshape_variables)

    def callback(session):
        return saver.restore(session, model_path)
    return callback
