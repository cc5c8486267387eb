"""xlapy.numpy against NumPy, driven by the op table (optable.py).

For every row: eagerly (xnp on NumPy arrays), under jit on the interpreter backend (every
case), and under jit on the cpu backend (every dtype on the row's first case and every case
in float32). Each jit test compiles ONE function holding all of the row's cases, to keep
compile time down. Deviations from NumPy are documented in optable.py and pinned by the
test_deviation_* tests at the end.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optable as T

# NumPy's semantics, 64-bit dtypes included, are what these rows check: run with
# jax_enable_x64 on (test_x64.py checks the 32-bit default mode)
pytestmark = pytest.mark.usefixtures("x64")

ROWS = T.OPS


def _fail(op, failures):
    if failures:
        head = f"{op.name}: {len(failures)} case(s) disagree with NumPy\n"
        pytest.fail(head + "\n---\n".join(failures[:6]), pytrace=False)


def _case_fn(op, cases):
    """One function computing every case of a row: traced once by jit."""
    def fn(arglists):
        outs = []
        for (dt, _ci, case, _, kwargs, _, _), args in zip(cases, arglists):
            try:
                outs.append(op.xfn(*args, **kwargs))
            except Exception as e:
                e.add_note(f"while tracing {T.describe(op, dt, case, args)}")
                raise
        return outs
    return fn


@pytest.mark.parametrize("op", ROWS, ids=str)
def test_eager(op):
    failures = []
    for dt, _ci, case, args, kwargs, want, err in T.all_cases(op):
        where = T.describe(op, dt, case, args)
        try:
            got = op.xfn(*args, **kwargs)
        except Exception as e:
            if err is None or not isinstance(e, T.accepted_errors()):
                failures.append(f"{where}: raised {type(e).__name__}: {e}"
                                + (f" (NumPy raised {type(err).__name__})" if err else ""))
            continue
        if err is not None:
            failures.append(f"{where}: NumPy raises {type(err).__name__}({err}) but xnp "
                            f"returned {got!r}")
            continue
        try:
            T.assert_same(op, got, want, where, eager=True)
        except AssertionError as e:
            failures.append(str(e))
    _fail(op, failures)


def _jit_check(op, backend, cases):
    ok = [c for c in cases if c[6] is None]
    failures = []
    if ok:
        got = xp.jit(_case_fn(op, ok), backend=backend)([c[3] for c in ok])
        for (dt, _ci, case, args, _kwargs, want, _), g in zip(ok, got):
            try:
                T.assert_same(op, g, want, T.describe(op, dt, case, args) + f" [jit {backend}]")
            except AssertionError as e:
                failures.append(str(e))
    return failures


@pytest.mark.parametrize("op", ROWS, ids=str)
def test_jit_interpreter(op):
    cases = T.all_cases(op)
    failures = _jit_check(op, "interpreter", cases)
    # where NumPy raises, tracing raises too
    for dt, _ci, case, args, kwargs, _want, err in cases:
        if err is None:
            continue
        try:
            # the lambda uses this iteration's values: it is called at once
            xp.jit(lambda *a: op.xfn(*a, **kwargs), backend="interpreter")(*args)  # noqa: B023
        except T.accepted_errors():
            continue
        except Exception as e:
            failures.append(f"{T.describe(op, dt, case, args)} [jit]: raised "
                            f"{type(e).__name__}: {e} (NumPy raised {type(err).__name__})")
            continue
        failures.append(f"{T.describe(op, dt, case, args)} [jit]: NumPy raises "
                        f"{type(err).__name__}({err}) but the traced function did not")
    _fail(op, failures)


@pytest.mark.parametrize("op", ROWS, ids=str)
def test_jit_cpu(op):
    """Every dtype on the row's first case, and every case in the row's main dtype (float32
    where it is swept): one native compile per row."""
    cases = T.all_cases(op)
    main = np.dtype(np.float32) if np.float32 in op.dtypes else cases[0][0]
    _fail(op, _jit_check(op, "cpu", [c for c in cases if c[1] == 0 or c[0] == main]))


# ---- operators and methods of traced values ---------------------------------------------------

def _operator_exprs(x, y, w, i, b, u, s, c):
    """The same Python code runs on NumPy arrays (the reference) and on traced values."""
    return {
        "x + 1": x + 1, "2 * x": 2 * x, "x * 2.0": x * 2.0, "x / 2": x / 2, "1 / y": 1 / y,
        "x - y": x - y, "y - x": y - x, "x @ w": x @ w, "x[1:, None]": x[1:, None],
        "-x": -x, "+x": +x, "abs(x)": abs(x), "x ** 2": x ** 2, "abs(x) ** 0.5": abs(x) ** 0.5,
        "2 ** u": 2 ** u, "x < y": x < y, "x <= 1": x <= 1, "x == y": x == y, "x != 0": x != 0,
        "x > y": x > y, "1 >= x": 1 >= x, "x.T": x.T, "w.mT": w.mT, "x.sum(axis=0)": x.sum(axis=0),
        "x.mean()": x.mean(), "x.max(1, keepdims=True)": x.max(1, keepdims=True),
        "x.min(axis=1)": x.min(axis=1), "x.argmax()": x.argmax(),
        "x.argmin(axis=0)": x.argmin(axis=0),
        "x.prod()": x.prod(), "x.std(ddof=1)": x.std(ddof=1),
        "x.any()": x.any(), "b.all(axis=0)": b.all(axis=0),
        "x.astype(int32)": x.astype(np.int32), "i.astype(float16)": i.astype(np.float16),
        "b.astype(uint8)": b.astype(np.uint8), "x.reshape(3, 2)": x.reshape(3, 2),
        "x.reshape((-1,))": x.reshape((-1,)), "x.ravel()": x.ravel(), "x.flatten()": x.flatten(),
        "x.transpose()": x.transpose(), "w.transpose(1, 0)": w.transpose(1, 0),
        "x[None].squeeze(0)": x[None].squeeze(0), "x.swapaxes(0, 1)": x.swapaxes(0, 1),
        "x.dot(w)": x.dot(w), "x.clip(-1, 1)": x.clip(-1, 1), "x[..., ::-1]": x[..., ::-1],
        "x[-1]": x[-1], "x[0, 1]": x[0, 1], "x[:, 1:2]": x[:, 1:2], "w[::2, 1::2]": w[::2, 1::2],
        "i // 3": i // 3, "i % 3": i % 3, "-i // 4": -i // 4, "x // y": x // y, "x % y": x % y,
        "divmod(i, 3)": divmod(i, 3), "i + x": i + x, "u + s": u + s, "b + b": b + b,
        "b * i": b * i, "i & 3": i & 3, "i | u": i | u, "~b": ~b, "~i": ~i, "i << 2": i << 2,
        "i >> 1": i >> 1, "b ^ b": b ^ b, "3 - i": 3 - i, "c + x": c + x, "c * s": c * s,
        "np.float32(2) * x": np.float32(2) * x, "np.int8(3) + s": np.int8(3) + s,
        "x @ c": x @ c, "c @ w": c @ w, "round(x.sum())": x.sum().round(),
    }


def _operator_args():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((2, 3)).astype(np.float32),
            (rng.uniform(0.5, 2, (3,)) * rng.choice([-1, 1], 3)).astype(np.float32),
            rng.standard_normal((3, 4)).astype(np.float32),
            rng.integers(-20, 20, (2, 3)).astype(np.int32),
            rng.random((2, 3)) < 0.5,
            rng.integers(0, 10, (2, 3)).astype(np.uint8),
            rng.integers(-5, 5, (3,)).astype(np.int8),
            rng.standard_normal((3,))]


def test_operators_on_traced_values():
    args = _operator_args()
    with np.errstate(all="ignore"):
        want = _operator_exprs(*args)
    c = args[-1]
    got = xp.jit(lambda *a: _operator_exprs(*a, c))(*args[:-1])  # c: a NumPy constant
    assert sorted(got) == sorted(want)
    op = T.Op("operators", None, None, [])
    for k in want:
        T.assert_same(op, got[k], want[k], k)


def test_var_method_on_traced_value():
    # GraphTracer's `var` slot (its graph variable) must not hide the ndarray method
    x = np.arange(6.0).reshape(2, 3)
    got = xp.jit(lambda v: (v.var(), v.var(axis=0, ddof=1)), backend="interpreter")(x)
    np.testing.assert_allclose(got[0], x.var())
    np.testing.assert_allclose(got[1], x.var(axis=0, ddof=1))


def test_operators_eager_on_numpy_values_return_numpy():
    # xnp functions on NumPy inputs return NumPy arrays, so eager code mixes freely
    x = np.arange(6.0).reshape(2, 3)
    y = xnp.exp(x) + 1
    assert isinstance(y, np.ndarray)
    assert isinstance(xnp.sum(x, axis=0), np.ndarray)
    assert isinstance(xnp.reshape(x, (3, 2)) @ xnp.ones((2, 2)), np.ndarray)


def test_traced_value_properties():
    seen = {}

    def f(x):
        seen.update(shape=x.shape, ndim=x.ndim, size=x.size, dtype=x.dtype, len=len(x))
        return x

    xp.jit(f, backend="interpreter")(np.zeros((2, 3), np.int8))
    assert seen == dict(shape=(2, 3), ndim=2, size=6, dtype=np.dtype(np.int8), len=2)


# ---- type promotion (NumPy 2 / NEP 50) ----------------------------------------------------------

def test_promotion_all_dtype_pairs():
    """xnp.add / multiply / maximum / where on every pair of dtypes: NumPy's result dtype
    (and values), eagerly and under jit."""
    pairs = [(a, b) for a in T.ALL for b in T.ALL]
    rng = np.random.default_rng(1)
    inputs = [(T.gen(rng, (2, 2), a, "pos"), T.gen(rng, (2,), b, "pos")) for a, b in pairs]
    cond = np.array([True, False])

    def fn(ins):
        return [(xnp.add(x, y), xnp.multiply(x, y), xnp.maximum(x, y), xnp.where(cond, x, y),
                 x + y, y - x if x.dtype != np.bool_ or y.dtype != np.bool_ else x)
                for x, y in ins]

    def ref(ins):
        return [(np.add(x, y), np.multiply(x, y), np.maximum(x, y), np.where(cond, x, y),
                 x + y, y - x if x.dtype != np.bool_ or y.dtype != np.bool_ else x)
                for x, y in ins]

    op = T.Op("promotion", None, None, [])
    want = ref(inputs)
    for got, tag in ((fn(inputs), "eager"), (xp.jit(fn, backend="interpreter")(inputs), "jit")):
        for (a, b), g, w in zip(pairs, got, want):
            T.assert_same(op, g, w, f"{np.dtype(a).name} with {np.dtype(b).name} [{tag}]")


@pytest.mark.parametrize("dt", T.ALL, ids=lambda d: np.dtype(d).name)
def test_promotion_with_python_scalars(dt):
    """Python scalars are weak: x_f32 * 2.0 stays float32, int8 + 1 stays int8, int + 1.5
    gives float64, bool + 1 gives int64; out-of-range ints raise OverflowError (NEP 50)."""
    x = T.gen(np.random.default_rng(2), (3,), dt, "pos")
    scalars = [1, 2.5, True, -1, 300, 1e300]
    op = T.Op("scalars", None, None, [], tol={np.float16: (2e-3, 2e-3)})
    ok = []
    for v in scalars:
        for name, xf, nf in (("add", xnp.add, np.add), ("radd", lambda a, b: xnp.add(b, a),
                                                         lambda a, b: np.add(b, a)),
                             ("mul", xnp.multiply, np.multiply)):
            want, err = T.numpy_ref(T.Op(name, None, nf, []), [x, np.asarray(v)], {}) if False \
                else _scalar_ref(nf, x, v)
            if err is not None:
                with pytest.raises(T.accepted_errors()):
                    xf(x, v)
                continue
            T.assert_same(op, xf(x, v), want, f"{name}({np.dtype(dt).name}, {v!r})")
            ok.append((name, xf, v, want))
    got = xp.jit(lambda x: [xf(x, v) for _, xf, v, _ in ok], backend="interpreter")(x)
    for (name, _, v, want), g in zip(ok, got):
        T.assert_same(op, g, want, f"{name}({np.dtype(dt).name}, {v!r}) [jit]")
    # operators on traced values follow the same rules
    if dt is not np.bool_:
        g = xp.jit(lambda x: (x + 1, 2.5 * x, x * True), backend="interpreter")(x)
        T.assert_same(op, g, (x + 1, 2.5 * x, x * True), "operators with scalars [jit]")


def _scalar_ref(nf, x, v):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                return nf(x, v), None
            except Exception as e:
                return None, e


def test_promotion_examples():
    f32, i32, u8, i8 = (np.ones(2, t) for t in (np.float32, np.int32, np.uint8, np.int8))
    b = np.ones(2, bool)
    assert xnp.add(i32, f32).dtype == np.float64          # as NumPy: i32 + f32 -> f64
    assert xnp.multiply(f32, 2.0).dtype == np.float32     # weak Python scalar
    assert xnp.add(u8, i8).dtype == np.int16
    assert xnp.add(b, b).dtype == np.bool_ and xnp.add(b, b).tolist() == [True, True]
    assert xnp.true_divide(i32, i32).dtype == np.float64
    assert xnp.add(np.float16(1), f32).dtype == np.float32
    assert xnp.result_type(np.int8, np.uint8) == np.int16
    out = xp.jit(lambda a, b_: (a + b_, a * 2.0, b_ + 1), backend="interpreter")(f32, i32)
    assert [o.dtype for o in out] == [np.float64, np.float32, np.int32]


def test_python_scalar_arguments_stay_weak_under_jit():
    x = np.ones(2, np.float32)
    assert xp.jit(lambda v, s: v * s, backend="interpreter")(x, 2.0).dtype == np.float32
    assert xp.jit(lambda v, s: v + s, backend="interpreter")(x.astype(np.int8), 3).dtype == np.int8


def test_weak_scalar_arguments_match_jax_and_propagate_through_scalar_arithmetic():
    jax = pytest.importorskip("jax")
    x = np.arange(4, dtype=np.float32) / 3
    for fn in (lambda v, s: v * s, lambda v, s: (s * 2 + 1) * v, lambda v, s: v - s / 3):
        got = xp.jit(fn)(x, 0.7)
        want = np.asarray(jax.jit(fn)(x, 0.7))
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-6)
    # a strong 0-d array still promotes, as in NumPy and JAX
    assert xp.jit(lambda v, s: v * s)(x, np.float64(0.7)).dtype == np.float64
    # alone, a Python float computes in float64 (NumPy's default; JAX without x64: float32)
    assert xp.jit(lambda s: s * 2)(0.5).dtype == np.float64


# ---- broadcasting -------------------------------------------------------------------------------

def test_broadcasting_error_names_shapes():
    from xlapy.errors import XlapyError
    a, b = np.ones((2, 3)), np.ones((4,))
    with pytest.raises(XlapyError, match=r"\[2, 3\] \[4\]"):
        xnp.add(a, b)
    with pytest.raises(XlapyError, match=r"\[2, 3\] \[4\]"):
        xp.jit(lambda x, y: x * y, backend="interpreter")(a, b)
    with pytest.raises(XlapyError, match=r"cannot broadcast .* shape \[2, 3\] to \[3, 3\]"):
        xnp.broadcast_to(a, (3, 3))
    with pytest.raises(XlapyError, match=r"\[2, 3\] @ \[4, 2\]"):
        xnp.matmul(a, np.ones((4, 2)))


# ---- documented deviations from NumPy ---------------------------------------------------------

@pytest.mark.parametrize("backend", [None, "interpreter", "cpu"])
def test_deviation_float_to_int_casts_saturate(backend):
    """NumPy's out-of-range float->int casts are undefined; xlapy saturates like XLA."""
    x = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 300.7, -300.7, 2.9, -2.9], np.float32)
    fn = lambda v: [xnp.astype(v, t) for t in (np.int8, np.uint8, np.int32, np.int64)]
    got = fn(x) if backend is None else xp.jit(fn, backend=backend)(x)
    want = {np.int8: [0, 127, -128, 127, -128, 127, -128, 2, -2],
            np.uint8: [0, 255, 0, 255, 0, 255, 0, 2, 0],
            np.int32: [0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 300, -300, 2, -2],
            np.int64: [0, 2**63 - 1, -2**63, 10**10, -10**10, 300, -300, 2, -2]}
    for g, (t, w) in zip(got, want.items()):
        assert g.dtype == t
        assert g.tolist() == w, t


@pytest.mark.parametrize("backend", [None, "interpreter", "cpu"])
def test_deviation_integer_division_by_zero(backend):
    """xnp: x // 0 == x % 0 == fmod(x, 0) == 0, as NumPy (which also warns)."""
    x = np.array([7, -7, 0, 5, -5], np.int32)
    y = np.array([0, 0, 0, 2, 2], np.int32)

    def fn(a, b):
        out = (xnp.floor_divide(a, b), xnp.remainder(a, b), xnp.fmod(a, b), xnp.divmod(a, b),
               xnp.floor_divide(xnp.astype(a, np.uint8), xnp.astype(b, np.uint8)))
        if backend is not None:  # the operators of traced values too
            assert_ops = (a // b, a % b, divmod(a, b))
            out = out + assert_ops
        return out

    got = fn(x, y) if backend is None else xp.jit(fn, backend=backend)(x, y)
    with np.errstate(all="ignore"):
        want = (x // y, x % y, np.fmod(x, y), np.divmod(x, y),
                np.floor_divide(x.astype(np.uint8), y.astype(np.uint8)))
        if backend is not None:
            want = want + (x // y, x % y, divmod(x, y))
    T.assert_same(T.Op("div0", None, None, []), got, want, "integer division by zero")
    assert got[0].tolist() == [0, 0, 0, 2, -3]


def test_deviation_integer_power_negative_exponent():
    """NumPy raises for int ** negative int; traced code cannot check values and follows
    XLA: 0, except for bases 1 and -1."""
    x = np.array([2, 1, -1, 3], np.int32)
    y = np.array([-1, -2, -3, 2], np.int32)
    with pytest.raises(ValueError):
        np.power(x, y)
    got = xp.jit(xnp.power, backend="interpreter")(x, y)
    assert got.tolist() == [0, 1, -1, 9]


# ---- coverage of the table ---------------------------------------------------------------------

def test_every_function_is_in_the_table():
    import types
    rows = {op.name for op in ROWS}
    public = sorted(n for n in dir(xnp) if not n.startswith("_")
                    and isinstance(getattr(xnp, n), types.FunctionType))
    missing = [n for n in public if n not in rows and n not in T.NOT_IN_TABLE
               and n not in T.ALIASES]
    assert not missing, f"xlapy.numpy functions without a row in optable.py: {missing}"
    for alias, name in T.ALIASES.items():
        assert getattr(xnp, alias) is getattr(xnp, name), alias
        assert getattr(np, alias) is getattr(np, name) or alias == "pow", alias


def test_metadata_functions():
    x = np.ones((2, 3))
    assert xnp.shape(x) == (2, 3) and xnp.ndim(x) == 2 and xnp.size(x) == 6
    assert xnp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    seen = {}

    def f(v):
        seen.update(shape=xnp.shape(v), ndim=xnp.ndim(v), size=xnp.size(v))
        return v

    xp.jit(f, backend="interpreter")(x)
    assert seen == dict(shape=(2, 3), ndim=2, size=6)


# ---- the composite functions are differentiable ------------------------------------------------

def test_gradients_of_composite_functions_match_jax():
    """Functions composed here from primitives (sinh, arcsinh, hypot, logaddexp, var,
    logsumexp, average, roll/tile/repeat, triu, trace, ...) get their gradients from the
    primitives' rules; JAX is the oracle."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp as jlse

    x = np.array([-2.5, -0.3, 0.2, 1.7, 3.0])
    y = np.array([0.5, -1.2, 2.0, 0.1, -3.0])
    ct = np.linspace(0.5, 1.5, 5)
    pairs = {  # name: (f(xnp, v), same for jnp)
        "sinh": lambda m, v: m.sinh(v), "cosh": lambda m, v: m.cosh(v),
        "arcsinh": lambda m, v: m.arcsinh(v), "arctan": lambda m, v: m.arctan(v),
        "arcsin": lambda m, v: m.arcsin(v / 4), "arccos": lambda m, v: m.arccos(v / 4),
        "arctanh": lambda m, v: m.arctanh(v / 4),
        "arccosh": lambda m, v: m.arccosh(m.abs(v) + 1.1),
        "log2": lambda m, v: m.log2(m.abs(v)), "exp2": lambda m, v: m.exp2(v),
        "logaddexp": lambda m, v: m.logaddexp(v, y), "hypot": lambda m, v: m.hypot(v, y),
        "copysign": lambda m, v: m.copysign(v, y), "remainder": lambda m, v: m.remainder(v, 0.7),
        "var": lambda m, v: m.var(v) * v, "std": lambda m, v: m.std(v, ddof=1) * v,
        "nanmean": lambda m, v: m.nanmean(v) * v,
        "average": lambda m, v: m.average(v, weights=m.abs(y)) * v,
        "roll_tile_repeat": lambda m, v: m.roll(m.tile(v, 2), 3)[:5] * m.repeat(v, 2)[:5],
        "triu": lambda m, v: m.sum(m.triu(m.outer(v, v)), axis=0),
        "trace_diag": lambda m, v: (m.trace(m.outer(v, y)) + m.sum(m.diag(v, 1))) * v,
    }
    jax_config = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        for name, f in pairs.items():
            gx = xp.grad(lambda v: xnp.sum(f(xnp, v) * ct))(x)  # noqa: B023 (called at once)
            gj = jax.grad(lambda v: jnp.sum(f(jnp, v) * ct))(x)  # noqa: B023 (called at once)
            np.testing.assert_allclose(gx, np.asarray(gj), rtol=1e-9, atol=1e-12, err_msg=name)
        gx = xp.grad(lambda v: xnp.logsumexp(v))(x)
        np.testing.assert_allclose(gx, np.asarray(jax.grad(jlse)(x)), rtol=1e-12)
    finally:
        jax.config.update("jax_enable_x64", jax_config)
