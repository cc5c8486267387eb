"""Gradients a script defines itself: tf.RegisterGradient with Graph.gradient_override_map
(guided backprop's ReLU, a py_func's gradient), tf.custom_gradient, tf.NotDifferentiable /
tf.no_gradient, and tf.hessians.

    @tf.RegisterGradient("GuidedRelu")
    def _guided(op, grad):
        return tf.where(grad > 0., grad, tf.zeros_like(grad)) * tf.cast(op.outputs[0] > 0.,
                                                                          tf.float32)
    with tf.get_default_graph().gradient_override_map({"Relu": "GuidedRelu"}):
        y = tf.nn.relu(x)

An op made inside gradient_override_map carries the attribute _gradient_op_type (as TF's),
and tf.gradients calls the function registered under that name instead of the op type's.
custom_gradient(f) computes f's outputs as usual and passes them through an IdentityN op
whose gradient is f's grad_fn: nothing flows back through f's own ops.
"""

from __future__ import annotations

import inspect
import itertools

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import convert_to_tensor, get_default_graph
from xlapy.compat.v1.op_registry import (not_differentiable, register_gradient, register_op,
                                         registered_ops)

# name -> gradient function(op, *output_grads) -> one gradient per input
_GRADIENTS: dict = {}
_ids = itertools.count()


class RegisterGradient:
    """A decorator registering fn(op, *grads) as the gradient named `op_type`: the gradient
    of ops of that type, or of those an override map sends to that name."""

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise InvalidTypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn):
        if self._op_type in _GRADIENTS:
            raise KeyError(f"Registering two gradient with name '{self._op_type}'! "
                           f"(Previous registration was in {_GRADIENTS[self._op_type]})")
        builtin = registered_ops().get(self._op_type)
        if builtin is not None and builtin.grad is not None:
            # TF's registry holds the op types' own gradients under their names too
            raise KeyError(f"Registering two gradient with name '{self._op_type}'! "
                           f"(Previous registration was the gradient of op type "
                           f"{self._op_type})")
        _GRADIENTS[self._op_type] = fn
        return fn


def registered_gradient(name: str):
    """The gradient function registered under `name` by RegisterGradient, or None."""
    return _GRADIENTS.get(name)


def override_gradient(name: str):
    """(found, fn) for the name a gradient_override_map maps to: the function RegisterGradient
    registered under it, else the gradient of the op type so named (as TF's one registry
    holds both, {"Sign": "Identity"} gives Sign Identity's gradient). fn is None where the
    name is not differentiable (NotDifferentiable): no gradient flows through the op."""
    if name in _GRADIENTS:
        return True, _GRADIENTS[name]
    d = registered_ops().get(name)
    if d is None or (d.grad is None and not d.not_differentiable):
        return False, None
    return True, None if d.not_differentiable else d.grad


def NotDifferentiable(op_type):
    """Ops of type op_type have no gradient: tf.gradients passes over them (a type xlapy
    does not have is remembered, as TF's registry takes any name)."""
    if not isinstance(op_type, str):
        raise InvalidTypeError("op_type must be a string")
    if op_type in registered_ops():
        not_differentiable(op_type)
    else:
        _GRADIENTS.setdefault(op_type, None)


no_gradient = NotDifferentiable


# ---- IdentityN: the op custom_gradient routes gradients through -------------------------------

def _identity_n_infer(op):
    return [(t.dtype, t.shape) for t in op.inputs]


@register_op("IdentityN", infer=_identity_n_infer)
def _identity_n(m, *xs):
    return tuple(xs)


@register_gradient("IdentityN")
def _identity_n_grad(op, *grads):
    return list(grads)


def identity_n(inputs, name=None):
    from xlapy.compat.v1.ops._common import make_op
    ts = [convert_to_tensor(t) for t in inputs]
    return list(make_op("IdentityN", ts, name=name or "IdentityN").outputs)


# ---- custom_gradient -------------------------------------------------------------------------

def _flat(result) -> list:
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _variables_read(graph, first_id) -> list:
    """The Variables whose storage the ops made after op id first_id read."""
    from xlapy.compat.v1.framework import GraphKeys
    by_ref = {}
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
        for v in graph.get_collection(key):
            if hasattr(v, "_ref"):
                by_ref[id(v._ref().op)] = v
    found: list = []
    for op in graph.get_operations():
        if op._id < first_id:
            continue
        for t in op.inputs:
            src = t.op
            if src.type == "Identity" and src.inputs:   # a variable's cached read
                src = src.inputs[0].op
            v = by_ref.get(id(src))
            if v is not None and v not in found:
                found.append(v)
    return found


def custom_gradient(f):
    """f(*xs) -> (ys, grad_fn), where grad_fn(*dys) returns the gradients of the xs (and,
    when f reads variables, grad_fn(*dys, variables=...) returns (input_grads,
    variable_grads))."""
    def decorated(*args, **kwargs):
        graph = get_default_graph()
        xs = [convert_to_tensor(a) for a in args]
        first = next(graph._ids)
        result, grad_fn = f(*xs, **kwargs)
        ys = [convert_to_tensor(y) for y in _flat(result)]
        variables = _variables_read(graph, first)
        takes_vars = "variables" in inspect.signature(grad_fn).parameters or any(
            p.kind == p.VAR_KEYWORD for p in inspect.signature(grad_fn).parameters.values())
        if variables and not takes_vars:
            raise InvalidTypeError(
                "If using @custom_gradient with a function that uses variables, then grad_fn "
                "must accept a keyword argument 'variables'.")
        refs = [v._ref() for v in variables]
        n_y, n_x = len(ys), len(xs)
        gname = f"CustomGradient-{next(_ids)}"

        def grad(op, *dys):
            dys = [d if d is not None else _zeros_like(y) for d, y in zip(dys[:n_y], ys)]
            if variables:
                gx, gv = grad_fn(*dys, variables=variables)
                gv = _flat(gv)
            else:
                gx, gv = grad_fn(*dys), []
            gx = _flat(gx)
            if len(gx) != n_x or len(gv) != len(variables):
                raise InvalidArgumentError(
                    f"custom_gradient: grad_fn returned {len(gx)} input gradients and "
                    f"{len(gv)} variable gradients for {n_x} inputs and {len(variables)} "
                    "variables")
            return [None] * n_y + gx + gv + [None] * (len(dys) - n_y - n_x - len(gv))

        _GRADIENTS[gname] = grad
        with graph.gradient_override_map({"IdentityN": gname}):
            outs = identity_n(ys + xs + refs)
        flat = outs[:n_y]
        if isinstance(result, (list, tuple)):
            return type(result)(flat)
        return flat[0]
    decorated.__name__ = getattr(f, "__name__", "custom_gradient")
    decorated.__doc__ = getattr(f, "__doc__", None)
    return decorated


def _zeros_like(t):
    from xlapy.compat.v1.ops.array_ops import zeros_like
    return zeros_like(t)


# ---- hessians --------------------------------------------------------------------------------

def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False,
             gate_gradients=False, aggregation_method=None):
    """For each x of xs, the Hessian of sum(ys) with respect to x: shape x.shape + x.shape
    (the gradient's components differentiated one by one; x's shape must be known)."""
    from xlapy.compat.v1.gradients import gradients
    from xlapy.compat.v1.ops.array_ops import reshape, stack, zeros_like
    xs_list = _flat(xs)
    out = []
    with get_default_graph().name_scope(name):
        for x, g in zip(xs_list, gradients(ys, xs_list)):
            xt = x._ref() if hasattr(x, "_ref") else convert_to_tensor(x)
            if not xt.shape.is_fully_defined():
                raise InvalidArgumentError(f"hessians: the shape of {xt.name} must be known "
                                           f"(it is {xt.shape})")
            dims = xt.shape.as_list()
            n = int(np.prod(dims, dtype=np.int64))
            if g is None:
                out.append(convert_to_tensor(np.zeros(dims + dims, xt.dtype.np)))
                continue
            flat = reshape(g, [-1])
            rows = []
            for i in range(n):
                (r,) = gradients(flat[i], [x])
                rows.append(reshape(r if r is not None else zeros_like(xt), [-1]))
            out.append(reshape(stack(rows), dims + dims))
    return out
