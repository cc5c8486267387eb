"""tf.estimator.WarmStartSettings: which variables an Estimator's training starts from a
checkpoint's values when model_dir has no checkpoint yet (tf.train.warm_start)."""

from __future__ import annotations

import collections
import os

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError


class WarmStartSettings(collections.namedtuple("WarmStartSettings", [
        "ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info",
        "var_name_to_prev_var_name"])):
    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start=".*",
                var_name_to_vocab_info=None, var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise InvalidArgumentError("Need to specify `ckpt_to_initialize_from`.")
        return super().__new__(cls, ckpt_to_initialize_from, vars_to_warm_start,
                               var_name_to_vocab_info or {}, var_name_to_prev_var_name or {})


def settings_of(warm_start_from):
    """WarmStartSettings from Estimator's warm_start_from: settings, a checkpoint (or its
    directory), or a SavedModel directory (its variables)."""
    if warm_start_from is None:
        return None
    if isinstance(warm_start_from, WarmStartSettings):
        ws = warm_start_from
    elif isinstance(warm_start_from, (str, bytes, os.PathLike)):
        ws = WarmStartSettings(ckpt_to_initialize_from=warm_start_from)
    else:
        raise InvalidTypeError(f"warm_start_from must be a string or a WarmStartSettings, "
                               f"instead got {type(warm_start_from).__name__}")
    path = os.fspath(ws.ckpt_to_initialize_from)
    if isinstance(path, bytes):
        path = path.decode()
    from xlapy.compat.v1.saved_model.loader import maybe_saved_model_directory
    if os.path.isdir(path) and maybe_saved_model_directory(path):
        path = os.path.join(path, "variables", "variables")
    return ws._replace(ckpt_to_initialize_from=path)
