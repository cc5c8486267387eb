"""optimizers: first-order optimizers as (init_fun, update_fun, get_params) triples, as
jax.example_libraries.optimizers.

    opt_init, opt_update, get_params = optimizers.adam(step_size=1e-3)
    state = opt_init(params)                       # any pytree of arrays
    state = opt_update(i, grads, state)            # i: the step number (int or traced)
    params = get_params(state)

An optimizer is written for one array (init(x0) -> per-array state, update(i, g, state),
get_params(state)); the `optimizer` decorator lifts it to pytrees. The state is an
OptimizerState pytree node (so it passes through jit); unpack_optimizer_state /
pack_optimizer_state convert it to and from a pytree with the parameters' structure (for
saving). Optimizers: sgd, momentum, nesterov, adagrad, rmsprop, rmsprop_momentum, adam,
adamax, sm3. Schedules: constant, exponential_decay, inverse_time_decay, polynomial_decay,
piecewise_constant. Utilities: l2_norm, clip_grads. The updates are JAX's formulas in
JAX's order of operations.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import numpy as np

import xlapy.numpy as xnp
from xlapy.errors import XlapyError
from xlapy.frontend import pytree

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
pytree.register_pytree_node(OptimizerState,
                     lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
                     lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))


class Optimizer(NamedTuple):
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


Schedule = Callable[[Any], Any]


class OptimizerError(XlapyError, TypeError):
    """A gradient tree that does not match the parameters' structure, or a bad schedule."""


def optimizer(opt_maker):
    """Lift an optimizer of single arrays to one of pytrees of arrays."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = pytree.flatten(x0_tree)
            states = [init(x0) for x0 in x0_flat]
            flats = [pytree.flatten(s) for s in states]
            return OptimizerState([f[0] for f in flats], tree, tuple(f[1] for f in flats))

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = pytree.flatten(grad_tree)
            if tree2 != tree:
                raise OptimizerError(
                    "optimizer update function was passed a gradient tree that did not "
                    f"match the parameter tree structure with which it was initialized: "
                    f"parameter tree {tree} and grad tree {tree2}")
            states = [pytree.unflatten(t, s) for t, s in zip(subtrees, states_flat)]
            new_states = [update(i, g, s) for g, s in zip(grad_flat, states)]
            flats = [pytree.flatten(s) for s in new_states]
            for t, (_, t2) in zip(subtrees, flats):
                if t2 != t:
                    raise OptimizerError(
                        "optimizer update function produced an output structure that did "
                        f"not match its input structure: input {t} and output {t2}")
            return OptimizerState([f[0] for f in flats], tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            states = [pytree.unflatten(t, s) for t, s in zip(subtrees, states_flat)]
            return pytree.unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


# ---- optimizers ------------------------------------------------------------------------------

def _zeros_init(k: int):
    """The init of an optimizer whose state is x0 and k zero arrays of its shape."""
    def init(x0):
        return (x0,) + tuple(xnp.zeros_like(x0) for _ in range(k))
    return init


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x - step_size(i) * g."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0, lambda i, g, x: x - step_size(i) * g, lambda x: x)


def _momentum(step_size, mass, nesterov: bool):
    """The velocity v = mass * v + g; the step along v, or (Nesterov) along mass * v + g."""
    step_size = make_schedule(step_size)
    init = _zeros_init(1)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        direction = mass * velocity + g if nesterov else velocity
        return x - step_size(i) * direction, velocity
    return init, update, lambda state: state[0]


@optimizer
def momentum(step_size, mass):
    """Heavy-ball momentum: v = mass * v + g; x - step_size(i) * v."""
    return _momentum(step_size, mass, nesterov=False)


@optimizer
def nesterov(step_size, mass):
    """Nesterov's accelerated gradient."""
    return _momentum(step_size, mass, nesterov=True)


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum."""
    step_size = make_schedule(step_size)
    init = _zeros_init(2)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + xnp.square(g)
        g_sq_inv_sqrt = xnp.where(g_sq > 0, 1.0 / xnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return init, update, lambda state: state[0]


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: divide by a running root mean square of the gradients."""
    step_size = make_schedule(step_size)
    init = _zeros_init(1)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + xnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / xnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return init, update, lambda state: state[0]


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum."""
    step_size = make_schedule(step_size)
    init = _zeros_init(2)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + xnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / xnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return init, update, lambda state: state[0]


def _step_float(i, dtype=None):
    """The step number as JAX's arithmetic sees it: a Python int stays one (weak); an
    integer array becomes the default float type (JAX: int32 / int -> float32, and
    float32 ** int32 -> float32; xlapy.numpy follows NumPy, where those give float64)."""
    if isinstance(i, (int, np.integer)) and not isinstance(i, np.ndarray):
        return i
    from xlapy.random._common import float_dtype
    return xnp.asarray(i).astype(dtype or float_dtype(None, "optimizers"))


def _pow_step(b, i, dtype):
    """b ** (i + 1) in dtype (b a Python float, i an int or traced int)."""
    return xnp.power(np.asarray(b, dtype), _step_float(xnp.add(i, 1), dtype))


def _adam(step_size, b1, b2, eps, infinity_norm: bool):
    """Adam's update of the first moment m, with the second moment v (Adam) or the
    infinity norm u (AdaMax) as the scale."""
    step_size = make_schedule(step_size)
    init = _zeros_init(2)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        if infinity_norm:
            v = xnp.maximum(b2 * v, xnp.abs(g))
            x = x - (step_size(i) / (1 - _pow_step(b1, i, xnp.result_type(m)))) * m / (v + eps)
            return x, m, v
        v = (1 - b2) * xnp.square(g) + b2 * v
        mhat = m / (1 - _pow_step(b1, i, xnp.result_type(m)))
        vhat = v / (1 - _pow_step(b2, i, xnp.result_type(m)))
        return x - step_size(i) * mhat / (xnp.sqrt(vhat) + eps), m, v
    return init, update, lambda state: state[0]


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba 2014)."""
    return _adam(step_size, b1, b2, eps, infinity_norm=False)


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm."""
    return _adam(step_size, b1, b2, eps, infinity_norm=True)


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): one accumulator per axis of each array."""
    step_size = make_schedule(step_size)

    def broadcast_into(ndim, x, axis):
        idx = [None] * ndim
        idx[axis] = slice(None)
        return x[tuple(idx)]

    def init(x0):
        x_shape = xnp.shape(x0)
        x0 = xnp.atleast_1d(x0)
        vs = [xnp.zeros(sz, dtype=xnp.result_type(x0)) for sz in xnp.shape(x0)]
        return x0, xnp.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        nd = xnp.ndim(g)
        vs = [broadcast_into(nd, v, k) for k, v in enumerate(vs)]
        accum = functools.reduce(xnp.minimum, vs) + xnp.square(g)
        accum_inv_sqrt = xnp.where(accum > 0, 1.0 / xnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [xnp.max(accum, axis=tuple(a for a in range(nd) if a != j)) for j in range(nd)]
        return x, m, vs, x_shape

    return init, update, lambda state: xnp.reshape(state[0], state[3])


# ---- schedules -------------------------------------------------------------------------------

def constant(step_size) -> Schedule:
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    return lambda i: step_size * decay_rate ** (_step_float(i) / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False) -> Schedule:
    if staircase:
        return lambda i: step_size / (1 + decay_rate * xnp.floor(_step_float(i) / decay_steps))
    return lambda i: step_size / (1 + decay_rate * _step_float(i) / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Schedule:
    def schedule(step_num):
        step_num = xnp.minimum(_step_float(step_num), decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def _array32(x):
    """jnp.array(x) without x64: 64-bit numbers become 32-bit."""
    from xlapy.random._common import x64_enabled
    a = np.asarray(x)
    if a.dtype.itemsize == 8 and a.dtype.kind in "fiu" and not x64_enabled():
        a = a.astype(f"{a.dtype.kind}4")
    return a


def piecewise_constant(boundaries, values) -> Schedule:
    boundaries, values = _array32(boundaries), _array32(values)
    if not xnp.ndim(boundaries) == xnp.ndim(values) == 1:
        raise OptimizerError("boundaries and values must be sequences")
    if not xnp.shape(boundaries)[0] == xnp.shape(values)[0] - 1:
        raise OptimizerError("boundaries length must be one shorter than values length")
    return lambda i: xnp.getitem(values, xnp.sum(i > boundaries))


def make_schedule(scalar_or_schedule) -> Schedule:
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if xnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise OptimizerError(f"a step size must be a scalar or a schedule, got "
                         f"{type(scalar_or_schedule).__name__}")


# ---- utilities -------------------------------------------------------------------------------

def l2_norm(tree):
    """The l2 norm of all the leaves of a pytree together."""
    leaves, _ = pytree.flatten(tree)
    return xnp.sqrt(sum(xnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """The gradients scaled down so that their l2_norm is at most max_norm."""
    norm = l2_norm(grad_tree)
    return pytree.tree_map(lambda g: xnp.where(norm < max_norm, g, g * (max_norm / norm)),
                           grad_tree)


class JoinPoint:
    """Marks where a parameter's optimizer state sits in an unpacked state tree."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An OptimizerState as a pytree with the parameters' structure, each leaf a
    JoinPoint holding that parameter's state (picklable)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [pytree.unflatten(t, s) for t, s in zip(subtree_defs, states_flat)]
    return pytree.unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree):
    """The inverse of unpack_optimizer_state."""
    sentinels, tree_def = pytree.flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise OptimizerError("pack_optimizer_state expects a tree of JoinPoints, as "
                             "unpack_optimizer_state returns")
    flats = [pytree.flatten(s.subtree) for s in sentinels]
    return OptimizerState([f[0] for f in flats], tree_def, tuple(f[1] for f in flats))


__all__ = ["OptimizerState", "Optimizer", "OptimizerError", "optimizer", "sgd", "momentum",
           "nesterov", "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3",
           "constant", "exponential_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_constant", "make_schedule", "l2_norm", "clip_grads", "JoinPoint",
           "unpack_optimizer_state", "pack_optimizer_state"]
