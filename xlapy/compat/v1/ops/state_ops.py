"""Variables and the ops that update them (Assign*, the optimizers' Apply* ops).

A VariableV2 op's output is a reference to the variable's storage in the session. An op
that takes the reference as an ordinary input reads the value at the time the op runs
(TF 1.x ref semantics: `with tf.control_dependencies([assign]): tf.identity(v)` sees the
new value). Ops listing an input in ref_inputs update the variable: their kernel gets the
current value and returns the new one. Under XLA the same semantics are kept: a compiled
cluster takes the variables it touches as arguments, threads their values through its
ops in order, and returns the final values, which the session writes back.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import not_differentiable, register_op


def _variable_infer(op):
    return [(op.get_attr("dtype"), op.get_attr("shape"))]


def _never(m, *a, **k):
    raise AssertionError("VariableV2 is handled by the executor and the cluster tracer")


# has_lowering is true: variable reads join compiled clusters (as cluster arguments)
register_op("VariableV2", infer=_variable_infer, stateful=True)(_never)


def _ref_infer(op):
    ref, *rest = op.inputs
    if ref.op.type != "VariableV2":
        raise InvalidTypeError(f"'{op.name}' ({op.type}) needs a variable as its first input; "
                               f"{ref.name} is the output of a {ref.op.type} op")
    for t in rest:
        if t.dtype != ref.dtype:
            raise InvalidTypeError(f"'{op.name}' ({op.type}): input {t.name} has dtype "
                                   f"{t.dtype.name}, the variable has {ref.dtype.name}")
    return [(ref.dtype, ref.shape)]


def _assign_infer(op):
    ref, value = op.inputs
    out = _ref_infer(op)
    if op.get_attr("validate_shape") and not ref.shape.is_compatible_with(value.shape):
        raise InvalidArgumentError(f"Shapes must be equal rank, but are {ref.shape.tf_str()} "
                                   f"and {value.shape.tf_str()} for '{op.name}' (op: 'Assign')"
                                   if ref.shape.ndims != value.shape.ndims else
                                   f"Dimension mismatch: cannot assign a value of shape "
                                   f"{value.shape.tf_str()} to {ref.name} of shape "
                                   f"{ref.shape.tf_str()} ('{op.name}')")
    return out


@register_op("Assign", infer=_assign_infer, ref_inputs=(0,), ref_reads=False)
def _assign(m, ref, value):
    return (value,)


@register_op("AssignAdd", infer=_ref_infer, ref_inputs=(0,))
def _assign_add(m, ref, value):
    return (m.add(ref, value),)


@register_op("AssignSub", infer=_ref_infer, ref_inputs=(0,))
def _assign_sub(m, ref, value):
    return (m.subtract(ref, value),)


@register_op("ApplyGradientDescent", infer=_ref_infer, ref_inputs=(0,))
def _apply_gd(m, var, alpha, delta):
    return (m.subtract(var, m.multiply(alpha, delta)),)


@register_op("ApplyMomentum", infer=_ref_infer, ref_inputs=(0, 1), attrs=("use_nesterov",))
def _apply_momentum(m, var, accum, lr, grad, momentum, use_nesterov=False):
    accum = m.add(m.multiply(accum, momentum), grad)
    if use_nesterov:
        step = m.add(m.multiply(grad, lr), m.multiply(m.multiply(accum, momentum), lr))
    else:
        step = m.multiply(accum, lr)
    return m.subtract(var, step), accum


@register_op("ApplyAdam", infer=_ref_infer, ref_inputs=(0, 1, 2))
def _apply_adam(m, var, mt, vt, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad):
    one = np.ones((), var.dtype)
    lr_t = m.true_divide(m.multiply(lr, m.sqrt(m.subtract(one, beta2_power))),
                         m.subtract(one, beta1_power))
    mt = m.add(mt, m.multiply(m.subtract(grad, mt), m.subtract(one, beta1)))
    vt = m.add(vt, m.multiply(m.subtract(m.multiply(grad, grad), vt), m.subtract(one, beta2)))
    var = m.subtract(var, m.true_divide(m.multiply(lr_t, mt), m.add(m.sqrt(vt), epsilon)))
    return var, mt, vt


@register_op("ApplyAdagrad", infer=_ref_infer, ref_inputs=(0, 1))
def _apply_adagrad(m, var, accum, lr, grad):
    accum = m.add(accum, m.multiply(grad, grad))
    return m.subtract(var, m.true_divide(m.multiply(lr, grad), m.sqrt(accum))), accum


@register_op("IsVariableInitialized", infer=lambda op: [(_bool(), _scalar())], lowering=None,
             stateful=True)
def _is_initialized(m, ref):
    raise AssertionError("IsVariableInitialized is handled by the executor")


def _bool():
    from xlapy.compat.v1 import dtypes
    return dtypes.bool


def _scalar():
    from xlapy.compat.v1.tensor_shape import TensorShape
    return TensorShape([])


not_differentiable("VariableV2", "Assign", "AssignAdd", "AssignSub", "ApplyGradientDescent",
                   "ApplyMomentum", "ApplyAdam", "ApplyAdagrad", "IsVariableInitialized")
