"""Every xlapy module answers a missing attribute with an AttributeError (so hasattr and
feature checks work), and names NumPy has but xlapy.numpy lacks say so."""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pytest

import xlapy
import xlapy.numpy as xnp
from xlapy.errors import UnsupportedError, XlapyError

# modules that need an optional dependency or a device to import
_OPTIONAL = ("xlapy.backends.gpu",)


def _modules():
    names = ["xlapy"]
    for info in pkgutil.walk_packages(xlapy.__path__, "xlapy."):
        if info.name.startswith(_OPTIONAL) or info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return names


def test_every_module_raises_attribute_error():
    checked = 0
    for name in _modules():
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        assert not hasattr(mod, "surely_not_an_xlapy_name"), name
        with pytest.raises(AttributeError, match="surely_not_an_xlapy_name"):
            mod.surely_not_an_xlapy_name  # noqa: B018
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("name", ["busday_count", "is_busday", "genfromtxt"])
def test_numpy_names_xlapy_lacks(name):
    assert hasattr(np, name) and not hasattr(xnp, name)
    with pytest.raises(AttributeError, match=rf"numpy\.{name} is not supported") as e:
        getattr(xnp, name)
    assert isinstance(e.value, (UnsupportedError, XlapyError))


def test_lazy_top_level_names():
    for name in ("jit", "grad", "jvp", "jacfwd", "hessian", "custom_vjp", "checkpoint",
                 "make_jaxpr", "eval_shape", "device_put", "Array", "tree_util", "tree",
                 "config", "dtypes", "enable_x64"):
        assert hasattr(xlapy, name), name
