"""tf.gradients: symbolic reverse-mode differentiation that adds gradient ops to the graph.

Algorithm (as TF's gradients_impl):
  1. the ops between xs and ys: downstream of xs and upstream of ys;
  2. seed each y with grad_ys (default: ones shaped like y);
  3. visit those ops in reverse creation order (creation order is topological), sum the
     partial gradients of each output (AddN), call the op type's registered gradient
     function, and hand the input gradients to the producers.
Gradient ops are named "gradients/<op>_grad/..." and inherit the forward op's jit_scope
attributes (_XlaCompile, _XlaScope), so gradients of compiled code are compiled too.
Because the result is ordinary graph ops, gradient ops are clustered like any others.
"""

from __future__ import annotations

import enum

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError
from xlapy.compat.v1.framework import Tensor, convert_to_tensor
from xlapy.compat.v1.custom_gradients import override_gradient, registered_gradient
from xlapy.compat.v1.op_registry import get_op_def

_JIT_ATTRS = ("_XlaCompile", "_XlaScope", "_XlaSeparateCompiledGradients")


class LookupGradientError(NotFoundError, LookupError):
    """No gradient function is registered for an op on the path from xs to ys."""


class AggregationMethod:
    """tf.AggregationMethod: how tf.gradients adds the partial gradients of a tensor. xlapy
    adds them with AddN whichever method is named (the sums are the same; TF's methods
    differ in memory use)."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


_AGGREGATION = (None, AggregationMethod.ADD_N, AggregationMethod.EXPERIMENTAL_TREE,
                AggregationMethod.EXPERIMENTAL_ACCUMULATE_N)


class UnconnectedGradients(enum.Enum):
    """tf.UnconnectedGradients: what tf.gradients returns for an x that the ys do not
    depend on: None or zeros shaped like x."""

    NONE = "none"
    ZERO = "zero"


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _ref_or_tensor(x) -> Tensor:
    if hasattr(x, "_ref"):
        return x._ref()  # a Variable: differentiate with respect to its storage
    return convert_to_tensor(x)


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE):
    if aggregation_method not in _AGGREGATION:
        raise InvalidArgumentError(f"Invalid aggregation_method specified "
                                   f"{aggregation_method}.")
    try:
        unconnected = UnconnectedGradients(unconnected_gradients)
    except ValueError:
        raise InvalidArgumentError(f"Unknown value for unconnected_gradients: "
                                   f"{unconnected_gradients!r}") from None
    out = _gradients(ys, xs, grad_ys, name, stop_gradients)
    if unconnected is UnconnectedGradients.ZERO and any(g is None for g in out):
        from xlapy.compat.v1.ops.array_ops import zeros_like  # (ops import this module)
        with convert_to_tensor(_as_list(ys)[0]).graph.name_scope(name):
            out = [zeros_like(x) if g is None else g for g, x in zip(out, _as_list(xs))]
    return out


def _gradients(ys, xs, grad_ys, name, stop_gradients):
    from xlapy.compat.v1.ops.array_ops import ones_like
    from xlapy.compat.v1.ops.math_ops import add_n
    ys = [convert_to_tensor(y) for y in _as_list(ys)]
    xs = [_ref_or_tensor(x) for x in _as_list(xs)]
    grad_ys = _as_list(grad_ys) if grad_ys is not None else [None] * len(ys)
    if len(grad_ys) != len(ys):
        raise InvalidArgumentError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    stops = {id(convert_to_tensor(s).op) for s in _as_list(stop_gradients or [])}
    graph = ys[0].graph

    # 1. the ops between xs and ys
    from_xs: set = set()
    stack = [c for x in xs for c in x._consumers]
    while stack:
        op = stack.pop()
        if id(op) in from_xs:
            continue
        from_xs.add(id(op))
        for t in op.outputs:
            stack.extend(t._consumers)
    between: dict[int, object] = {}
    stack = [y.op for y in ys]
    seen: set = set()
    while stack:
        op = stack.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        if id(op) in from_xs:
            between[id(op)] = op
        stack.extend(t.op for t in op.inputs)
    x_ids = {id(x) for x in xs}

    grads: dict[int, list] = {}

    def add_grad(t: Tensor, g) -> None:
        if g is None or not (t.dtype.is_floating or t.dtype.is_complex):
            return
        grads.setdefault(id(t), []).append(g)

    with graph.name_scope(name) as grad_scope:
        # gradients of ops in a separate_compiled_gradients jit scope get their own scope,
        # named after this call's name scope (jit_scope_0_grad_gradients), as in TF
        grad_suffix = grad_scope.rstrip("/").replace("/", "_")
        # 2. seeds
        for y, gy in zip(ys, grad_ys):
            if gy is None:
                if not y.dtype.is_floating:
                    raise InvalidArgumentError(f"gradients: y {y.name} has dtype "
                                               f"{y.dtype.name}; it must be floating point")
                if y.shape.is_fully_defined():
                    gy = convert_to_tensor(np.ones(y.shape.as_list(), y.dtype.np),
                                           name="grad_ys")
                else:
                    gy = ones_like(y, name="grad_ys")
            else:
                gy = convert_to_tensor(gy, dtype=y.dtype)
            add_grad(y, gy)

        # 3. reverse topological sweep
        for op in sorted(between.values(), key=lambda o: o._id, reverse=True):
            out_grads = [_aggregate(grads.get(id(t)), add_n) for t in op.outputs]
            if all(g is None for g in out_grads) or id(op) in stops:
                continue
            d = get_op_def(op.type)
            override = op._attrs.get("_gradient_op_type")
            if override:
                found, grad_fn = override_gradient(_as_str(override))
                if not found:
                    raise LookupGradientError(
                        f"No gradient defined for operation '{op.name}' (op type: "
                        f"{op.type}): gradient_override_map names '{_as_str(override)}', "
                        f"which is neither a RegisterGradient name nor an op type with a "
                        f"gradient")
                if grad_fn is None:   # mapped to a NotDifferentiable name
                    continue
            else:
                grad_fn = d.grad or registered_gradient(op.type)
            if d.not_differentiable and not override:
                continue
            if grad_fn is None:
                raise LookupGradientError(f"No gradient defined for operation '{op.name}' "
                                          f"(op type: {op.type})")
            jit = {k: op._attrs[k] for k in _JIT_ATTRS if k in op._attrs}
            if jit.get("_XlaSeparateCompiledGradients") and "_XlaScope" in jit:
                jit["_XlaScope"] = _as_bytes(jit["_XlaScope"]) + b"_grad_" + \
                    grad_suffix.encode()
            # which inputs need a gradient: ops that compute every input's gradient at
            # once (While's) may skip the others
            op._grad_wanted = [id(t.op) in between or id(t) in x_ids for t in op.inputs]
            with graph.name_scope(op.name + "_grad"), graph._attr_scope(jit), \
                    graph.control_dependencies(None):
                in_grads = grad_fn(op, *out_grads)
            # (a function of a one-input op may return the gradient itself, as in TF)
            in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
            if len(in_grads) != len(op.inputs):
                raise InvalidArgumentError(f"gradient function of {op.type} returned "
                                           f"{len(in_grads)} gradients for {len(op.inputs)} "
                                           "inputs")
            for t, g in zip(op.inputs, in_grads):
                if id(t.op) in between or id(t) in x_ids:
                    add_grad(t, g)

        return [_aggregate(grads.get(id(x)), add_n) for x in xs]


def _as_bytes(s) -> bytes:
    return s if isinstance(s, bytes) else str(s).encode()


def _as_str(s) -> str:
    return s.decode() if isinstance(s, bytes) else str(s)


def _aggregate(parts, add_n):
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return add_n(parts)
