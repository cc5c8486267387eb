"""Errors a user can act on, and jit's argument handling: traced values in Python control
flow name the jit argument and suggest static_argnums; unsupported NumPy functions say so
by name; static_argnums / static_argnames; XLAPY_LOG_COMPILES=1 says why the cache missed.
"""

from __future__ import annotations

import logging
from collections import namedtuple

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.errors import XlapyError
from xlapy.frontend.core import TracerError


def _jit(f, **kw):
    return xp.jit(f, backend="interpreter", **kw)


# ---- traced values where Python needs a concrete one -----------------------------------------

def test_if_on_traced_value_names_the_argument():
    def f(x, n):
        if n > 0:
            return x
        return -x

    with pytest.raises(TracerError) as e:
        _jit(f)(np.ones(3), 2)
    msg = str(e.value)
    assert "argument 'n'" in msg and "argument 'x'" not in msg
    assert "bool" in msg and "static_argnums" in msg and "static_argnames" in msg
    assert _jit(f, static_argnums=1)(np.ones(3), 2).tolist() == [1, 1, 1]


@pytest.mark.parametrize("how", ["range", "int", "while", "index", "item"])
def test_concrete_value_errors_name_the_argument(how):
    def f(x, count):
        if how == "range":
            for _ in range(count):
                x = x + 1
        elif how == "int":
            x = x * int(count)
        elif how == "while":
            while count:
                count = count - 1
        elif how == "index":
            x = x[: count]
        else:
            x = x * count.item()
        return x

    with pytest.raises(TracerError, match="argument 'count'") as e:
        _jit(f)(np.ones(3), 2)
    assert "static_argnums" in str(e.value)
    assert "escaped" not in str(e.value)


def test_keyword_and_pytree_arguments_are_named():
    Params = namedtuple("Params", ["w", "b"])

    def f(x, params, *, cfg):
        if params["layers"][1].b.sum() > 0:
            return x
        if cfg["flag"]:
            return x
        return x

    params = {"layers": [Params(np.ones(2), np.ones(2)), Params(np.ones(2), np.ones(2))]}
    with pytest.raises(TracerError) as e:
        _jit(f)(np.ones(2), params, cfg={"flag": True})
    assert "argument 'params' (params['layers'][1].b)" in str(e.value)

    def g(x, *, cfg):
        return x if cfg["flag"] else -x

    with pytest.raises(TracerError, match=r"argument 'cfg' \(cfg\['flag'\]\)"):
        _jit(g)(np.ones(2), cfg={"flag": True})


def test_varargs_are_named():
    def f(*xs):
        return xs[0] if xs[1] else xs[0]

    with pytest.raises(TracerError, match=r"argument 'xs\[1\]'"):
        _jit(f)(np.ones(2), True)


def test_traced_value_converted_to_numpy():
    with pytest.raises(TracerError, match="converted to a NumPy array"):
        _jit(lambda x: np.asarray(x) + 1)(np.ones(2))


def test_escaped_tracer():
    leaked = []

    def f(x):
        leaked.append(x)
        return x

    _jit(f)(np.ones(2))
    with pytest.raises(TracerError, match="escaped"):
        xnp.add(leaked[0], 1)


# ---- unsupported functions and inputs --------------------------------------------------------

@pytest.mark.parametrize("name", ["genfromtxt", "nditer", "busday_count", "fromregex"])
def test_unsupported_numpy_function_is_named(name):
    with pytest.raises(XlapyError, match=rf"numpy\.{name} is not supported by xlapy\.numpy"):
        getattr(xnp, name)


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'not_a_numpy_function'"):
        xnp.not_a_numpy_function  # noqa: B018


def test_unsupported_dtypes():
    with pytest.raises(XlapyError, match=r"bool, int, uint, float .* or complex"):
        xnp.add(np.array(["a"]), np.array(["b"]))
    with pytest.raises(XlapyError, match=r"bool, int, uint, float .* or complex"):
        xnp.sin(np.array([1], dtype=object))
    with pytest.raises(XlapyError, match=r"bool, int, uint, float .* or complex"):
        xnp.asarray(["a", "b"])


def test_data_dependent_shapes_are_refused():
    with pytest.raises(XlapyError, match="size="):
        _jit(lambda x: xnp.where(x > 0))(np.ones(2))
    with pytest.raises(XlapyError, match="static Python value"):
        _jit(lambda x, r: xnp.repeat(x, r))(np.ones(2), np.array([1, 2]))
    with pytest.raises(XlapyError, match="arange needs concrete"):
        _jit(lambda n: xnp.arange(n))(3)


@pytest.mark.parametrize("call, pattern", [
    (lambda: xnp.reshape(np.ones(6), (4, -1)), r"cannot reshape array of size 6 into shape"),
    (lambda: xnp.sum(np.ones((2, 3)), axis=2), r"axis 2 is out of bounds for an array of dim"),
    (lambda: xnp.squeeze(np.ones((2, 3)), axis=0), r"axis 0 has size 2"),
    (lambda: xnp.concatenate([np.ones((2, 3)), np.ones((2, 2))]), r"\[2, 3\], \[2, 2\]"),
    (lambda: xnp.stack([np.ones(2), np.ones(3)]), r"same shape"),
    (lambda: xnp.split(np.ones(5), 2), r"equal division"),
    (lambda: xnp.ones((2, 3))[2], r"index 2 is out of bounds for axis 0 with size 2"),
    (lambda: xnp.getitem(np.ones((2, 3)), (0, 0, 0)), r"too many indices"),
    (lambda: xnp.max(np.ones((0, 3))), r"zero-size array .* no identity"),
    (lambda: xnp.argmax(np.ones((0,))), r"empty sequence"),
    (lambda: xnp.transpose(np.ones((2, 3)), (0, 0)), r"don't match"),
    (lambda: xnp.matmul(np.ones(3), np.ones(())), r"at least 1-dimensional"),
    (lambda: xnp.subtract(np.ones(2, bool), True), r"subtract .* boolean"),
    (lambda: xnp.bitwise_and(np.ones(2), 1.0), r"bitwise_and .* floating-point"),
])
def test_error_messages(call, pattern):
    with pytest.raises((XlapyError, IndexError, ValueError), match=pattern):
        call()


def test_errors_under_jit_too():
    with pytest.raises(XlapyError, match=r"\[2, 3\] \[4\]"):
        _jit(lambda a, b: a + b)(np.ones((2, 3)), np.ones(4))
    with pytest.raises(XlapyError, match="cannot reshape"):
        _jit(lambda a: a.reshape(4, -1))(np.ones(6))
    with pytest.raises(XlapyError, match="subtract"):
        _jit(lambda a: a - a)(np.ones(2, bool))


# ---- static arguments ------------------------------------------------------------------------

def _counting(fn):
    calls = []

    def wrapped(*a, **k):
        calls.append(1)
        return fn(*a, **k)
    wrapped.__signature__ = __import__("inspect").signature(fn)
    return wrapped, calls


def test_static_argnums_recompiles_when_the_value_changes():
    def f(x, n):
        return xnp.reshape(x, (n, -1)).sum(axis=1)

    g, traces = _counting(f)
    jf = _jit(g, static_argnums=1)
    x = np.arange(12.0)
    assert jf(x, 3).shape == (3,)
    assert jf(x, 3).shape == (3,)
    assert len(traces) == 1
    assert jf(x, 4).shape == (4,)
    assert len(traces) == 2
    assert jf(x, 3).shape == (3,) and len(traces) == 2      # cached per static value
    assert jf(x, n=4).shape == (4,)                         # by keyword: still static


def test_static_argnames_positional_or_keyword():
    def f(x, n, flag=False):
        y = xnp.tile(x, n)
        return -y if flag else y

    jf = _jit(f, static_argnames=("n", "flag"))
    x = np.arange(2.0)
    assert jf(x, n=2).tolist() == [0, 1, 0, 1]
    assert jf(x, 3).tolist() == [0, 1] * 3                  # by position: still static
    assert jf(x, 2, flag=True).tolist() == [0, -1, 0, -1]
    assert jf(x, 2, True).tolist() == [0, -1, 0, -1]


def test_static_argument_must_be_hashable():
    jf = _jit(lambda x, shape: xnp.reshape(x, shape), static_argnums=1)
    with pytest.raises(XlapyError, match="static arguments must be hashable"):
        jf(np.ones(4), [2, 2])
    assert jf(np.ones(4), (2, 2)).shape == (2, 2)


def test_missing_static_argument():
    jf = _jit(lambda x, n: x * n, static_argnums=1)
    with pytest.raises(XlapyError, match="static_argnums contains 1"):
        jf(np.ones(2))
    jd = _jit(lambda x, n=2: x * n, static_argnums=1)
    assert jd(np.ones(2)).tolist() == [2, 2]                # a defaulted static argument


def test_python_scalars_are_dynamic_unless_static():
    g, traces = _counting(lambda x, s: x * s)
    jf = _jit(g)
    jf(np.ones(2), 2.0)
    jf(np.ones(2), 3.0)
    assert len(traces) == 1  # the scalar is an argument, not a constant


# ---- XLAPY_LOG_COMPILES ----------------------------------------------------------------------

@pytest.mark.usefixtures("x64")  # the log reports a change from f32 to f64 arguments
def test_log_compiles_names_the_reason(monkeypatch, caplog):
    monkeypatch.setenv("XLAPY_LOG_COMPILES", "1")
    caplog.set_level(logging.WARNING, logger="xlapy.jit")

    def loss(x, params, n):
        return (x @ params["w"]).sum() * n

    jf = _jit(loss, static_argnums=2)
    w = np.ones((3, 2), np.float32)
    jf(np.ones((4, 3), np.float32), {"w": w}, 1)
    jf(np.ones((4, 3), np.float32), {"w": w}, 1)            # cached: no log
    jf(np.ones((5, 3), np.float32), {"w": w}, 1)
    jf(np.ones((5, 3), np.float64), {"w": w}, 1)
    jf(np.ones((5, 3), np.float64), {"w": w.astype(np.float64)}, 1)
    jf(np.ones((5, 3), np.float64), {"w": w.astype(np.float64)}, 2)
    jf(np.ones((5, 3), np.float64), {"w": w.astype(np.float64), "b": 1.0}, 2)
    msgs = [r.getMessage() for r in caplog.records if r.name == "xlapy.jit"]
    assert len(msgs) == 6, msgs
    assert all(m.startswith("compiling loss for ") for m in msgs)
    assert msgs[0].endswith("first call")
    assert msgs[1].endswith("argument 'x' changed shape from [4, 3] to [5, 3]")
    assert msgs[2].endswith("argument 'x' changed dtype from f32 to f64")
    assert msgs[3].endswith("argument 'params' (params['w']) changed dtype from f32 to f64")
    assert "static arguments changed" in msgs[4] and "1" in msgs[4] and "2" in msgs[4]
    assert "structure" in msgs[5]


def test_no_log_without_the_flag(monkeypatch, caplog):
    monkeypatch.delenv("XLAPY_LOG_COMPILES", raising=False)
    caplog.set_level(logging.DEBUG, logger="xlapy.jit")
    _jit(lambda x: x + 1)(np.ones(2))
    assert not [r for r in caplog.records if r.name == "xlapy.jit"]
