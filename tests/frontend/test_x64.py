"""jax_enable_x64: xlapy's 32-bit default mode against JAX's, the option and its
environment variables, the enable_x64 context, JAX's truncation warning, and the whole
xlapy.numpy op table run in the default mode (every row on 64-bit inputs gives the 32-bit
counterpart of NumPy's result dtype, and NumPy's values)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optable as T

F64, I64 = np.ones(3), np.arange(3)
# expressions over a NumPy-like module N: xlapy.numpy and jax.numpy must give one dtype
EXPRS = {
    "zeros": lambda N: N.zeros(3), "ones": lambda N: N.ones((2, 2)),
    "empty": lambda N: N.empty(2), "full_int": lambda N: N.full(2, 1),
    "full_float": lambda N: N.full(2, 1.0), "full_bool": lambda N: N.full(2, True),
    "arange_int": lambda N: N.arange(3), "arange_float": lambda N: N.arange(0.5, 3),
    "array_float": lambda N: N.array(1.0), "array_int": lambda N: N.array([1, 2]),
    "asarray_f64": lambda N: N.asarray(F64), "asarray_i64": lambda N: N.asarray(I64),
    "linspace": lambda N: N.linspace(0, 1, 3), "logspace": lambda N: N.logspace(0, 1, 3),
    "eye": lambda N: N.eye(2), "identity": lambda N: N.identity(2), "tri": lambda N: N.tri(2),
    "zeros_like_f64": lambda N: N.zeros_like(F64), "ones_like_i64": lambda N: N.ones_like(I64),
    "mean_int": lambda N: N.mean(I64), "sum_int8": lambda N: N.sum(np.ones(3, np.int8)),
    "sin_int": lambda N: N.sin(I64), "sqrt_f64": lambda N: N.sqrt(F64),
    "true_divide_ints": lambda N: N.true_divide(I64, I64 + 1), "argmax": lambda N: N.argmax(F64),
    "cumsum_int32": lambda N: N.cumsum(np.ones(3, np.int32)),
    "f64_plus_weak": lambda N: N.asarray(F64) + 1.5,
    "int_times_float": lambda N: N.multiply(I64, N.ones(3)),
    "var_int": lambda N: N.var(I64), "where": lambda N: N.where(F64 > 0, I64, 0),
}


@pytest.mark.parametrize("name", sorted(EXPRS))
def test_default_dtypes_match_jax(name):
    want = np.asarray(EXPRS[name](jnp)).dtype
    assert np.asarray(EXPRS[name](xnp)).dtype == want, "eager"
    assert np.asarray(xp.jit(lambda: EXPRS[name](xnp))()).dtype == want, "jit"


@pytest.mark.parametrize("name", ["zeros", "arange_int", "mean_int", "asarray_f64", "sin_int"])
def test_x64_on_gives_numpy_dtypes(name):
    with xp.enable_x64():
        assert xp.config.jax_enable_x64
        want = np.asarray(EXPRS[name](np)).dtype
        assert np.asarray(EXPRS[name](xnp)).dtype == want
        assert np.asarray(xp.jit(lambda: EXPRS[name](xnp))()).dtype == want


@pytest.mark.parametrize("call, where", [
    (lambda N: N.zeros(2, dtype=np.float64), "zeros"),
    (lambda N: N.asarray(np.ones(2), dtype=np.int64), "asarray"),
    (lambda N: N.array([1.0], dtype=np.float64), "array"),
    (lambda N: N.arange(3, dtype=np.int64), "arange"),
    (lambda N: N.ones(2).astype(np.float64), "astype"),
])
def test_explicit_64_bit_request_warns_with_jax_text(call, where):
    def caught(N):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = call(N)
        return out, [str(x.message) for x in w if "Explicitly requested" in str(x.message)]
    jout, jmsgs = caught(jnp)
    if where == "astype":  # xlapy's eager results are NumPy arrays: use xnp.astype
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = xnp.astype(xnp.ones(2), np.float64)
        msgs = [str(x.message) for x in w]
    else:
        out, msgs = caught(xnp)
    assert msgs == jmsgs and len(msgs) == 1 and f"requested in {where} " in msgs[0]
    assert np.asarray(out).dtype == np.asarray(jout).dtype


def test_jit_canonicalizes_64_bit_arguments_silently():
    f = lambda x, s: x * s
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = xp.jit(f)(np.ones(3), 2.0)
        jout = jax.jit(f)(np.ones(3), 2.0)
    assert out.dtype == jout.dtype == np.float32
    assert xp.jit(f)(np.ones(3, np.float16), 2.0).dtype == np.float16  # 2.0 stays weak
    assert xp.jit(lambda i: i + 1)(np.arange(3)).dtype == np.int32
    with pytest.raises(OverflowError):
        jax.jit(lambda i: i + 1)(2 ** 40)
    with pytest.raises(OverflowError):
        xp.jit(lambda i: i + 1)(2 ** 40)


def test_grad_jvp_and_control_flow_canonicalize():
    assert xp.grad(lambda x: (x * x).sum())(np.ones(3)).dtype == np.float32
    assert xp.jvp(lambda x: x * 2, (np.ones(2),), (np.ones(2, np.float32),))[1].dtype == \
        np.float32
    out = xp.lax.fori_loop(0, 3, lambda i, c: c * 2, np.ones(2))
    assert out.dtype == np.float32
    out = xp.lax.scan(lambda c, x: (c + x, c), np.zeros(2), np.ones((3, 2)))
    assert out[0].dtype == out[1].dtype == np.float32


def test_jit_recompiles_when_the_option_changes():
    f = xp.jit(lambda x: x + 1)
    x = np.ones(2)
    assert f(x).dtype == np.float32
    with xp.enable_x64():
        assert f(x).dtype == np.float64
    assert f(x).dtype == np.float32
    xp.config.update("jax_enable_x64", True)
    try:
        assert f(x).dtype == np.float64 and xp.config.jax_enable_x64
    finally:
        xp.config.update("jax_enable_x64", False)
    assert f(x).dtype == np.float32 and not xp.config.jax_enable_x64


def test_enable_x64_is_per_thread():
    seen = {}

    def other():
        seen["other"] = (xp.config.jax_enable_x64, xnp.zeros(1).dtype)
    with xp.enable_x64():
        t = threading.Thread(target=other)
        t.start()
        t.join()
        seen["here"] = (xp.config.jax_enable_x64, xnp.zeros(1).dtype)
    assert seen == {"other": (False, np.float32), "here": (True, np.float64)}


def test_unknown_option():
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_nope"):
        xp.config.update("jax_nope", 1)
    with pytest.raises(AttributeError, match="jax_nope"):
        xp.config.jax_nope  # noqa: B018


@pytest.mark.parametrize("var", ["JAX_ENABLE_X64", "XLAPY_ENABLE_X64"])
def test_environment_variable(var):
    code = ("import xlapy as xp, xlapy.numpy as xnp; "
            "print(xp.config.jax_enable_x64, xnp.zeros(1).dtype, xnp.arange(2).dtype)")
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64",
                                                           "XLAPY_ENABLE_X64")}
    out = subprocess.run([sys.executable, "-c", code], env={**env, var: "1"},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "float64", "int64"]
    out = subprocess.run([sys.executable, "-c", code], env={**env, var: "0"},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "float32", "int32"]


# ---- the op table in the 32-bit default mode ----------------------------------------------------

_CANON = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.int64): np.dtype(np.int32),
          np.dtype(np.uint64): np.dtype(np.uint32)}


def _canon(a):
    return a.astype(_CANON.get(a.dtype, a.dtype)) if isinstance(a, np.ndarray) else a


ROWS = [op for op in T.OPS if not op.dtype_kwarg and (np.float64 in op.dtypes or
                                                       np.int64 in op.dtypes)]


@pytest.mark.parametrize("op", ROWS, ids=str)
def test_op_table_in_default_mode(op):
    """Each row on float64 / int64 inputs (its first case): xlapy canonicalizes them to 32
    bits, so it must agree with NumPy run on the 32-bit inputs, with NumPy's result dtype
    made 32-bit."""
    for dt in (np.float64, np.int64):
        if dt not in op.dtypes:
            continue
        args, kwargs = T.make_inputs(op, dt, 0, op.cases[0])
        args32 = [_canon(a) for a in args]
        want, err = T.numpy_ref(op, args32, kwargs)
        where = T.describe(op, np.dtype(dt), op.cases[0], args)
        if err is not None:
            with pytest.raises(T.accepted_errors()):
                op.xfn(*args, **kwargs)
            continue
        want = T._map_leaves(want, lambda w: _canon(np.asarray(w)))
        T.assert_same(op, op.xfn(*args, **kwargs), want, where + " eager")


def test_fast_path_is_off_inside_enable_x64_blocks():
    # int32 arguments need no canonicalization, so the second call takes jit's fast path;
    # inside a block (this thread's or another's) the option's value decides again
    import threading
    f = xp.jit(lambda x: x + xp.numpy.arange(3))
    x = np.arange(3, dtype=np.int32)
    assert f(x).dtype == np.int32 and f(x).dtype == np.int32
    with xp.enable_x64():
        assert f(x).dtype == np.int64 and f(x).dtype == np.int64
    assert f(x).dtype == np.int32
    inside, release, seen = threading.Event(), threading.Event(), {}

    def other():
        with xp.enable_x64():
            seen["other"] = f(x).dtype
            inside.set()
            release.wait(10)
    t = threading.Thread(target=other)
    t.start()
    inside.wait(10)
    seen["main"] = f(x).dtype   # while the other thread's block is open
    release.set()
    t.join()
    assert seen == {"other": np.int64, "main": np.int32}
    assert f(x).dtype == np.int32
