"""xlapy.example_libraries against jax.example_libraries: the same initial parameters
for the same key (bit for bit), the same outputs, and the same training trajectory with
every optimizer (to float32 rounding)."""

from __future__ import annotations

import jax
import jax.example_libraries.optimizers as jopt
import jax.example_libraries.stax as jstax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.example_libraries.optimizers as xopt
import xlapy.example_libraries.stax as xstax
import xlapy.numpy as xnp
import xlapy.random as xr
from xlapy.frontend import pytree

rng = np.random.default_rng(0)


def leaves(tree):
    return jax.tree_util.tree_leaves(tree)


def assert_same_tree(got, want, rtol=None):
    g, w = pytree.flatten(got)[0], leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        if rtol is None:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)


def models(s):
    return {
        "mlp": (s.serial(s.Dense(32), s.Relu, s.Dense(16), s.Tanh, s.Dense(10), s.LogSoftmax),
                (4, 20)),
        "convnet": (s.serial(s.Conv(8, (3, 3), padding="SAME"), s.BatchNorm(), s.Relu,
                             s.MaxPool((2, 2), strides=(2, 2)),
                             s.Conv(6, (3, 3), strides=(2, 1)), s.Gelu,
                             s.AvgPool((2, 2), padding="SAME"), s.Flatten, s.Dense(5),
                             s.Softmax), (2, 12, 10, 3)),
        "branches": (s.serial(s.Dense(12), s.FanOut(3),
                              s.parallel(s.Dense(6), s.serial(s.Dense(6), s.Sigmoid),
                                         s.Identity),
                              s.parallel(s.Identity, s.Identity, s.Dense(6)), s.FanInSum,
                              s.Softplus), (3, 7)),
        "concat": (s.serial(s.FanOut(2), s.parallel(s.Dense(3), s.Dense(4)),
                            s.FanInConcat(), s.Elu, s.Dense(2), s.Selu), (5, 6)),
        "transpose": (s.serial(s.ConvTranspose(4, (3, 3), strides=(2, 2), padding="SAME"),
                               s.LeakyRelu, s.SumPool((2, 2))), (1, 5, 5, 2)),
    }


@pytest.mark.parametrize("name", ["mlp", "convnet", "branches", "concat", "transpose"])
def test_stax_init_and_apply_match_jax(name):
    (xinit, xapply), shape = models(xstax)[name]
    (jinit, japply), _ = models(jstax)[name]
    xshape, xparams = xinit(xr.PRNGKey(1), shape)
    jshape, jparams = jinit(jax.random.PRNGKey(1), shape)
    assert tuple(xshape) == tuple(jshape)
    assert_same_tree(xparams, jparams)
    x = rng.standard_normal(shape).astype(np.float32)
    want = japply(jparams, x)
    assert_same_tree(xapply(xparams, x), want, rtol=1e-5)
    assert_same_tree(xp.jit(xapply)(xparams, x), want, rtol=1e-5)


def test_dropout_matches_jax():
    xinit, xapply = xstax.serial(xstax.Dense(16), xstax.Dropout(0.7), xstax.Dense(3))
    jinit, japply = jstax.serial(jstax.Dense(16), jstax.Dropout(0.7), jstax.Dense(3))
    _, xparams = xinit(xr.PRNGKey(2), (4, 5))
    _, jparams = jinit(jax.random.PRNGKey(2), (4, 5))
    x = rng.standard_normal((4, 5)).astype(np.float32)
    want = japply(jparams, x, rng=jax.random.PRNGKey(3))
    assert_same_tree(xp.jit(lambda p, x, k: xapply(p, x, rng=k))(xparams, x, xr.PRNGKey(3)),
                     want, rtol=1e-5)
    with pytest.raises(ValueError, match="PRNG key"):
        xapply(xparams, x)


OPTIMIZERS = [
    ("sgd", lambda o: o.sgd(0.1)),
    ("sgd_schedule", lambda o: o.sgd(o.exponential_decay(0.2, 3, 0.5))),
    ("momentum", lambda o: o.momentum(0.05, 0.9)),
    ("nesterov", lambda o: o.nesterov(o.inverse_time_decay(0.05, 2, 0.3, staircase=True),
                                      0.9)),
    ("adagrad", lambda o: o.adagrad(0.1)),
    ("rmsprop", lambda o: o.rmsprop(o.polynomial_decay(0.01, 4, 0.001))),
    ("rmsprop_momentum", lambda o: o.rmsprop_momentum(0.01)),
    ("adam", lambda o: o.adam(1e-2)),
    ("adam_piecewise", lambda o: o.adam(o.piecewise_constant([2, 4], [1e-2, 5e-3, 1e-3]))),
    ("adamax", lambda o: o.adamax(1e-2)),
    ("sm3", lambda o: o.sm3(0.1)),
]


def _loss(np_, apply):
    def loss(params, x, y):
        return -np_.mean(np_.sum(apply(params, x) * y, axis=-1))
    return loss


@pytest.mark.parametrize("name,make", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_training_trajectory_matches_jax(name, make):
    (xinit, xapply), shape = models(xstax)["mlp"]
    (jinit, japply), _ = models(jstax)["mlp"]
    _, xparams = xinit(xr.PRNGKey(0), shape)
    _, jparams = jinit(jax.random.PRNGKey(0), shape)
    xo_init, xo_update, xo_params = make(xopt)
    jo_init, jo_update, jo_params = make(jopt)
    x = rng.standard_normal(shape).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, shape[0])]
    xloss, jloss = _loss(xnp, xapply), _loss(jnp, japply)

    # (get_params outside jit: sm3 keeps the parameter's shape as Python ints in its state)
    @xp.jit
    def xstep(i, state, params):
        return xo_update(i, xp.grad(xloss)(params, x, y), state)

    @jax.jit
    def jstep(i, state, params):
        return jo_update(i, jax.grad(jloss)(params, x, y), state)

    xs, js = xo_init(xparams), jo_init(jparams)
    for i in range(6):
        xs, js = xstep(np.int32(i), xs, xo_params(xs)), jstep(i, js, jo_params(js))
    assert isinstance(xs, xopt.OptimizerState)
    assert_same_tree(xo_params(xs), jo_params(js), rtol=2e-5)


def test_eager_updates_and_state_round_trip():
    opt_init, opt_update, get_params = xopt.adam(0.1)
    params = {"w": np.ones((2, 3), np.float32), "b": [np.zeros(3, np.float32)]}
    state = opt_init(params)
    grads = {"w": np.full((2, 3), 0.5, np.float32), "b": [np.ones(3, np.float32)]}
    state = opt_update(0, grads, state)
    j_init, j_update, j_params = jopt.adam(0.1)
    jstate = j_update(0, grads, j_init(params))
    assert_same_tree(get_params(state), j_params(jstate), rtol=1e-6)
    unpacked = xopt.unpack_optimizer_state(state)
    assert isinstance(unpacked["w"], xopt.JoinPoint)
    again = xopt.pack_optimizer_state(unpacked)
    assert_same_tree(get_params(again), get_params(state))
    with pytest.raises(xopt.OptimizerError, match="gradient tree"):
        opt_update(1, {"w": grads["w"]}, state)


def test_clip_grads_and_l2_norm():
    tree = {"a": np.float32([3.0, 0.0]), "b": np.float32([[4.0]])}
    np.testing.assert_allclose(xopt.l2_norm(tree), jopt.l2_norm(tree))
    assert_same_tree(xopt.clip_grads(tree, 1.0), jopt.clip_grads(tree, 1.0), rtol=1e-6)
