"""xlapy.random against jax.random: for the same key, the same values bit for bit.

Every row of SAMPLERS is one sampler with its arguments; each row runs for several keys,
eagerly (xlapy's sampler compiles its own program) and inside the caller's jit, and the
result must have JAX's dtype, shape and bits. Rows marked `close` are samplers whose math
goes through functions xlapy does not reproduce bit for bit (tan, f64 erf_inv): they are
compared with a tolerance instead.
"""

from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
import pytest

import xlapy as xp
import xlapy.random as xr
from xlapy.passes.fusion import count_kernels

SEEDS = [0, 42, 2 ** 31 - 1]
BF16 = ml_dtypes.bfloat16


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    if a.dtype.kind in "fV" or a.dtype == BF16:
        u = np.dtype(f"u{a.dtype.itemsize}")
        a, b = np.ascontiguousarray(a).view(u), np.ascontiguousarray(b).view(u)
    bad = np.nonzero(np.ravel(a != b))[0]
    assert bad.size == 0, f"{bad.size} of {a.size} differ, first at {bad[:5]}"


def close(a, b, rtol):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol,
                               atol=rtol)


LOGITS = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
P4 = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
X34 = np.arange(12, dtype=np.int32).reshape(3, 4)

# (name, function of (random module, key) -> array, tolerance or None for bit equality)
SAMPLERS = [
    ("bits", lambda r, k: r.bits(k, (3, 5)), None),
    ("bits_u8", lambda r, k: r.bits(k, (7,), np.uint8), None),
    ("bits_u16", lambda r, k: r.bits(k, (2, 3), np.uint16), None),
    ("uniform", lambda r, k: r.uniform(k, (4, 33)), None),
    ("uniform_scalar", lambda r, k: r.uniform(k), None),
    ("uniform_range", lambda r, k: r.uniform(k, (5, 7), minval=-2.5, maxval=3.0), None),
    ("uniform_array_range", lambda r, k: r.uniform(k, (2, 3), minval=np.float32([-1, 0, 1]),
                                                   maxval=np.float32(4)), None),
    ("uniform_f16", lambda r, k: r.uniform(k, (9,), np.float16), None),
    ("uniform_bf16", lambda r, k: r.uniform(k, (9,), BF16), None),
    ("normal", lambda r, k: r.normal(k, (3, 17)), None),
    ("normal_f16", lambda r, k: r.normal(k, (11,), np.float16), None),
    ("normal_bf16", lambda r, k: r.normal(k, (11,), BF16), None),
    ("truncated_normal", lambda r, k: r.truncated_normal(k, -1.5, 2.0, (64,)), None),
    ("truncated_normal_arrays", lambda r, k: r.truncated_normal(
        k, np.float32([-3, -1, 0.5]), np.float32(np.inf)), None),
    ("exponential", lambda r, k: r.exponential(k, (40,)), None),
    ("laplace", lambda r, k: r.laplace(k, (40,)), None),
    ("logistic", lambda r, k: r.logistic(k, (40,)), None),
    ("gumbel", lambda r, k: r.gumbel(k, (40,)), None),
    ("gumbel_high", lambda r, k: r.gumbel(k, (40,), mode="high"), None),
    ("cauchy", lambda r, k: r.cauchy(k, (40,)), 1e-5),
    ("bernoulli", lambda r, k: r.bernoulli(k, 0.3, (50,)), None),
    ("bernoulli_array_p", lambda r, k: r.bernoulli(k, np.float32([0.1, 0.5, 0.9])), None),
    ("bernoulli_high", lambda r, k: r.bernoulli(k, 0.3, (50,), mode="high"), None),
    ("randint", lambda r, k: r.randint(k, (6, 5), 0, 10), None),
    ("randint_negative", lambda r, k: r.randint(k, (30,), -1000, 7), None),
    ("randint_int8", lambda r, k: r.randint(k, (30,), -5, 1000, np.int8), None),
    ("randint_uint16", lambda r, k: r.randint(k, (30,), 3, 60000, np.uint16), None),
    ("randint_full_range", lambda r, k: r.randint(k, (30,), -2 ** 31, 2 ** 31 - 1), None),
    ("randint_empty_range", lambda r, k: r.randint(k, (5,), 4, 4), None),
    ("permutation_int", lambda r, k: r.permutation(k, 20), None),
    ("permutation_axis", lambda r, k: r.permutation(k, X34, axis=1), None),
    ("permutation_independent", lambda r, k: r.permutation(k, X34, 1, independent=True),
     None),
    ("choice", lambda r, k: r.choice(k, 10, (5,)), None),
    ("choice_array", lambda r, k: r.choice(k, X34, (2,), axis=1), None),
    ("choice_no_replace", lambda r, k: r.choice(k, 10, (5,), replace=False), None),
    ("choice_p", lambda r, k: r.choice(k, 4, (6,), p=P4), None),
    ("choice_p_no_replace", lambda r, k: r.choice(k, 4, (3,), replace=False, p=P4), None),
    ("categorical", lambda r, k: r.categorical(k, LOGITS), None),
    ("categorical_axis0_shape", lambda r, k: r.categorical(k, LOGITS, 0, (2, 5)), None),
    ("categorical_no_replace", lambda r, k: r.categorical(k, LOGITS, -1, (2, 3),
                                                          replace=False), None),
    ("rademacher", lambda r, k: r.rademacher(k, (20,)), None),
    ("rayleigh", lambda r, k: r.rayleigh(k, 2.0, (20,)), None),
    ("lognormal", lambda r, k: r.lognormal(k, 0.5, (9,)), 1e-6),
    ("triangular", lambda r, k: r.triangular(k, 0.0, 1.0, 3.0, (9,)), 1e-6),
    ("weibull_min", lambda r, k: r.weibull_min(k, 2.0, 1.5, (9,)), 1e-5),
    ("geometric", lambda r, k: r.geometric(k, 0.3, (20,)), None),
    ("pareto", lambda r, k: r.pareto(k, 3.0, (9,)), 1e-5),
    ("maxwell", lambda r, k: r.maxwell(k, (9,)), 1e-5),
    ("double_sided_maxwell", lambda r, k: r.double_sided_maxwell(k, 1.0, 2.0, (9,)), 1e-5),
    ("wald", lambda r, k: r.wald(k, 1.5, (9,)), 1e-5),
    ("gamma", lambda r, k: r.gamma(k, np.float32([0.3, 1.0, 2.5, 7.0, 0.05])), 1e-5),
    ("loggamma", lambda r, k: r.loggamma(k, np.float32([0.3, 1.0, 2.5, 7.0, 0.05])), 1e-5),
    ("beta", lambda r, k: r.beta(k, 2.0, 3.0, (6,)), 1e-5),
    ("dirichlet", lambda r, k: r.dirichlet(k, np.float32([1.0, 2.0, 3.0]), (2,)), 1e-5),
    ("chisquare", lambda r, k: r.chisquare(k, 3.0, (5,)), 1e-5),
    ("t", lambda r, k: r.t(k, 4.0, (5,)), 1e-5),
    ("f", lambda r, k: r.f(k, 4.0, 6.0, (5,)), 1e-5),
    ("generalized_normal", lambda r, k: r.generalized_normal(k, 1.5, (5,)), 1e-5),
    ("ball", lambda r, k: r.ball(k, 3, 2, (4,)), 1e-5),
    ("poisson", lambda r, k: r.poisson(k, np.float32([0.5, 3.0, 9.9, 12.0, 100.0, 0.0])),
     None),
    ("multivariate_normal", lambda r, k: r.multivariate_normal(
        k, np.float32([1.0, 2.0]), np.float32([[2.0, 0.5], [0.5, 1.0]]), (3,)), 1e-5),
]


@pytest.mark.parametrize("name,fn,tol", SAMPLERS, ids=[s[0] for s in SAMPLERS])
def test_sampler_matches_jax_eagerly(name, fn, tol):
    for seed in SEEDS:
        want = fn(jax.random, jax.random.PRNGKey(seed))
        got = fn(xr, xr.PRNGKey(seed))
        same_bits(got, want) if tol is None else close(got, want, tol)


JIT_ROWS = ["uniform_range", "normal", "truncated_normal", "gumbel", "randint_int8",
            "permutation_axis", "choice_p", "categorical"]


@pytest.mark.parametrize("name", JIT_ROWS)
def test_sampler_matches_jax_inside_jit(name):
    fn = dict((s[0], s[1]) for s in SAMPLERS)[name]
    f = xp.jit(lambda k: fn(xr, k))
    for seed in SEEDS[:2]:
        same_bits(f(xr.PRNGKey(seed)), fn(jax.random, jax.random.PRNGKey(seed)))


def test_typed_keys_match_jax():
    jk, xk = jax.random.key(7), xr.key(7)
    assert xk.shape == () and str(xk.dtype) == "key<fry>"
    same_bits(xr.key_data(xk), jax.random.key_data(jk))
    jks, xks = jax.random.split(jk, (2, 3)), xr.split(xk, (2, 3))
    assert xks.shape == (2, 3)
    same_bits(xr.key_data(xks), jax.random.key_data(jks))
    a, b = xr.split(xk)
    same_bits(xr.normal(b, (5,)), jax.random.normal(jax.random.split(jk)[1], (5,)))
    same_bits(xr.key_data(xr.fold_in(xks[1, 2], 99)),
              jax.random.key_data(jax.random.fold_in(jks[1, 2], 99)))
    wrapped = xr.wrap_key_data(np.asarray(jax.random.key_data(jks)))
    assert wrapped.shape == (2, 3) and bool(np.all(wrapped == xks))


def test_typed_keys_pass_through_jit():
    f = xp.jit(lambda k, x: (xr.split(k)[0], x + xr.normal(k, x.shape)))
    k2, y = f(xr.key(3), np.zeros(4, np.float32))
    assert isinstance(k2, xr.PRNGKeyArray) and k2.shape == ()
    same_bits(xr.key_data(k2), jax.random.key_data(jax.random.split(jax.random.key(3))[0]))
    same_bits(y, jax.random.normal(jax.random.key(3), (4,)))


@pytest.mark.parametrize("seed", [0, 1, 2 ** 32 + 5, -1, 2 ** 63 - 1, np.int32(-7),
                                  np.uint32(4000000000)])
def test_seeds(seed):
    same_bits(xr.PRNGKey(seed), jax.random.PRNGKey(seed))


def test_seed_traced_under_jit():
    f = xp.jit(lambda s: xr.normal(xr.PRNGKey(s), (3,)))
    same_bits(f(np.int32(123)), jax.random.normal(jax.random.PRNGKey(123), (3,)))


@pytest.mark.parametrize("num", [2, 5, (2, 3), (1,), 0])
def test_split(num):
    for seed in SEEDS:
        same_bits(xr.split(xr.PRNGKey(seed), num), jax.random.split(jax.random.PRNGKey(seed),
                                                                     num))


@pytest.mark.parametrize("data", [0, 1, 12345, 2 ** 32 - 1, np.int32(-3), np.uint32(77)])
def test_fold_in(data):
    for seed in SEEDS:
        same_bits(xr.fold_in(xr.PRNGKey(seed), data),
                  jax.random.fold_in(jax.random.PRNGKey(seed), data))


def test_fold_in_traced_data():
    f = xp.jit(lambda k, i: xr.fold_in(k, i))
    same_bits(f(xr.PRNGKey(4), np.int32(9)), jax.random.fold_in(jax.random.PRNGKey(4), 9))


def test_large_shapes_cover_counter_layout():
    # multi-dimensional shapes: the counter is the row-major linear index
    k = 11
    same_bits(xr.bits(xr.PRNGKey(k), (3, 1, 70, 2)), jax.random.bits(jax.random.PRNGKey(k),
                                                                       (3, 1, 70, 2)))
    same_bits(xr.uniform(xr.PRNGKey(k), (0, 3)), jax.random.uniform(jax.random.PRNGKey(k),
                                                                     (0, 3)))


def test_one_fused_kernel_under_jit():
    for fn in (lambda k: xr.normal(k, (1000,)), lambda k: xr.uniform(k, (8, 9), minval=-1.),
               lambda k: xr.bernoulli(k, 0.5, (100,))):
        c = xp.jit(fn).lower(xr.PRNGKey(0)).compile()
        assert count_kernels(c.executable.optimized_module) == 1


@pytest.mark.parametrize("call,match", [
    (lambda: xr.normal(np.zeros(2, np.float32), (2,)), "uint32 array"),
    (lambda: xr.normal(np.zeros((3, 2), np.uint32), (2,)), "single key"),
    (lambda: xr.split(xr.split(xr.PRNGKey(0), 3)), "single key"),
    (lambda: xr.normal(1.5), "expected a PRNG key"),
    (lambda: xr.PRNGKey(1.5), "must be an integer"),
    (lambda: xr.PRNGKey(np.arange(3)), "scalar seed"),
    (lambda: xr.PRNGKey(2 ** 64), "does not fit"),
    (lambda: xr.uniform(xr.PRNGKey(0), (3,), minval=np.zeros(4)), "uniform"),
    (lambda: xr.uniform(xr.PRNGKey(0), (3,), dtype=np.int32), "float dtype"),
    (lambda: xr.normal(xr.PRNGKey(0), (-1,)), "non-negative"),
    (lambda: xr.randint(xr.PRNGKey(0), (3,), 0, 5, dtype=np.float32), "integer dtype"),
    (lambda: xr.choice(xr.PRNGKey(0), 3, (5,), replace=False), "larger sample"),
    (lambda: xr.choice(xr.PRNGKey(0), 3, (2,), p=np.ones(4)), "same size"),
    (lambda: xr.bernoulli(xr.PRNGKey(0), np.int32(1)), "float dtype"),
    (lambda: xr.fold_in(xr.PRNGKey(0), np.arange(2)), "scalar"),
    (lambda: xr.categorical(xr.PRNGKey(0), LOGITS, shape=(4,)), "broadcast"),
])
def test_bad_arguments_raise_random_error(call, match):
    with pytest.raises(xr.RandomError, match=match):
        call()


def test_typed_key_refuses_numpy_conversion():
    with pytest.raises(TypeError, match="key_data"):
        np.asarray(xr.key(0))


VMAP_ROWS = ["normal", "uniform_range", "bernoulli", "randint", "permutation_int", "choice_p",
             "categorical", "gumbel", "gamma"]


@pytest.mark.parametrize("name", VMAP_ROWS)
def test_vmap_over_keys_matches_jax(name):
    fn, tol = next((s[1], s[2]) for s in SAMPLERS if s[0] == name)
    got = xp.vmap(lambda k: fn(xr, k))(xr.split(xr.PRNGKey(5), 3))
    want = jax.vmap(lambda k: fn(jax.random, k))(jax.random.split(jax.random.PRNGKey(5), 3))
    same_bits(got, want) if tol is None else close(got, want, tol)


def test_vmap_of_split_and_fold_in_with_typed_keys():
    keys = xr.split(xr.key(9), 4)
    jkeys = jax.random.split(jax.random.key(9), 4)
    got = xp.vmap(lambda k: xr.key_data(xr.split(xr.fold_in(k, 3), 2)))(keys)
    want = jax.vmap(lambda k: jax.random.key_data(jax.random.split(jax.random.fold_in(k, 3))))(
        jkeys)
    same_bits(got, want)


@pytest.fixture
def x64():
    """64-bit mode on both sides: jax_enable_x64 for JAX and for xlapy."""
    with jax.enable_x64(), xp.enable_x64(True):
        yield


X64_ROWS = [
    ("bits", lambda r, k: r.bits(k, (5,)), None),
    ("uniform", lambda r, k: r.uniform(k, (50,)), None),
    ("randint", lambda r, k: r.randint(k, (20,), -5, 2 ** 40), None),
    ("permutation", lambda r, k: r.permutation(k, 10), None),
    ("seed", lambda r, k: r.PRNGKey(2 ** 40 + 5), None),
    ("normal", lambda r, k: r.normal(k, (500,)), 1e-14),
    ("uniform_range", lambda r, k: r.uniform(k, (50,), minval=-3.0, maxval=2.0), 1e-15),
    ("truncated_normal", lambda r, k: r.truncated_normal(k, -2.0, 2.0, (500,)), 1e-14),
    ("exponential", lambda r, k: r.exponential(k, (500,)), 1e-14),
]


@pytest.mark.parametrize("name,fn,tol", X64_ROWS, ids=[r[0] for r in X64_ROWS])
def test_64_bit_mode_matches_jax(x64, name, fn, tol):
    got, want = fn(xr, xr.PRNGKey(3)), fn(jax.random, jax.random.PRNGKey(3))
    same_bits(got, want) if tol is None else close(got, want, tol)
