"""tf.train.AdagradDAOptimizer: Adagrad dual averaging (Duchi et al. 2011), the sparse
linear models' optimizer, and its update op ApplyAdagradDA (TF's training_ops).

The optimizer keeps two slots per variable, `gradient_accumulator` (`<var>/AdagradDA`,
starting at 0) and `gradient_squared_accumulator` (`<var>/AdagradDA_1`, starting at
initial_gradient_squared_accumulator_value), and reads the global step it was given, T (its
value before this step's increment when minimize(global_step=...) increments the same
step). With g the gradient accumulator, gg the squared one and lr the learning rate:

    g  <- g + grad;   gg <- gg + grad^2
    var = -lr sign(g) max(|g| - l1 T, 0) / (l2 T lr + sqrt(gg))     (l1 > 0)
    var = -lr g / (l2 T lr + sqrt(gg))                               (l1 = 0)

The variable is recomputed from the accumulators each step (its previous value plays no
part). The kernel is written once against the array module `m`, so the update runs in the
executor and inside a compiled training step.
"""

from __future__ import annotations

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, convert_to_tensor
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make
from xlapy.compat.v1.ops.array_ops import identity
from xlapy.compat.v1.ops.math_ops import cast
from xlapy.compat.v1.tensor_shape import TensorShape
from xlapy.compat.v1.train.optimizer import Optimizer


def _adagrad_da_infer(op):
    var, g_acc, gg_acc, grad, lr, l1, l2, step = op.inputs
    for ref in (var, g_acc, gg_acc):
        if ref.op.type != "VariableV2":
            raise InvalidTypeError(f"'{op.name}' (ApplyAdagradDA) needs variables as its first "
                                   f"three inputs; {ref.name} is the output of a "
                                   f"{ref.op.type} op")
    for t in (g_acc, gg_acc, grad, lr, l1, l2):
        if t.dtype != var.dtype:
            raise InvalidTypeError(f"'{op.name}' (ApplyAdagradDA): input {t.name} has dtype "
                                   f"{t.dtype.name}, the variable has {var.dtype.name}")
    if not var.dtype.is_floating:
        raise InvalidTypeError(f"'{op.name}' (ApplyAdagradDA): the variable must be floating "
                               f"point, got {var.dtype.name}")
    if step.dtype != dtypes.int64:
        raise InvalidTypeError(f"'{op.name}' (ApplyAdagradDA): global_step must be int64, got "
                               f"{step.dtype.name}")
    for t in (lr, l1, l2, step):
        if not t.shape.is_compatible_with(TensorShape([])):
            raise InvalidArgumentError(f"'{op.name}' (ApplyAdagradDA): {t.name} must be a "
                                       f"scalar, got shape {t.shape.tf_str()}")
    for t in (g_acc, gg_acc, grad):
        if not t.shape.is_compatible_with(var.shape):
            raise InvalidArgumentError(f"'{op.name}' (ApplyAdagradDA): {t.name} has shape "
                                       f"{t.shape.tf_str()}, the variable has "
                                       f"{var.shape.tf_str()}")
    return [(var.dtype, var.shape)]


@register_op("ApplyAdagradDA", infer=_adagrad_da_infer, ref_inputs=(0, 1, 2),
             attrs=("use_locking",))
def _apply_adagrad_da(m, var, g_acc, gg_acc, grad, lr, l1, l2, global_step,
                      use_locking=False):
    """g += grad; gg += grad^2; var = -lr sign(g) max(|g| - l1 T, 0) / (l2 T lr + sqrt(gg))
    (the shrinkage only when l1 > 0)."""
    g_acc = m.add(g_acc, grad)
    gg_acc = m.add(gg_acc, m.multiply(grad, grad))
    t = m.astype(global_step, var.dtype)
    denom = m.add(m.multiply(m.multiply(l2, t), lr), m.sqrt(gg_acc))
    shrunk = m.multiply(m.sign(g_acc), m.maximum(m.subtract(m.abs(g_acc), m.multiply(l1, t)),
                                                 m.zeros_like(g_acc)))
    num = m.where(m.greater(l1, m.zeros_like(l1)), shrunk, g_acc)
    return m.true_divide(m.negative(m.multiply(lr, num)), denom), g_acc, gg_acc


not_differentiable("ApplyAdagradDA")


class AdagradDAOptimizer(Optimizer):
    """Adagrad dual averaging (see the module doc). global_step is required: the
    regularization grows with it."""

    def __init__(self, learning_rate, global_step,
                 initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="AdagradDA"):
        if not isinstance(initial_gradient_squared_accumulator_value, Tensor) and \
                initial_gradient_squared_accumulator_value <= 0.0:
            raise InvalidArgumentError(f"initial_gradient_squared_accumulator_value must be "
                                       f"positive: {initial_gradient_squared_accumulator_value}")
        if global_step is None:
            raise InvalidArgumentError("AdagradDAOptimizer needs a global_step (a Variable or "
                                       "Tensor of an integer dtype)")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._init = initial_gradient_squared_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._global_step = global_step

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "gradient_accumulator", self._name, 0.0)
            self._slot(v, "gradient_squared_accumulator", self._name, self._init)

    def _step(self):
        step = self._global_step
        step = step.value() if hasattr(step, "_ref") else convert_to_tensor(step)
        if not step.dtype.is_integer:
            raise InvalidTypeError(f"AdagradDAOptimizer: global_step must be an integer, got "
                                   f"{step.dtype.name}")
        if step.shape.ndims not in (None, 0):
            raise InvalidArgumentError(f"AdagradDAOptimizer: global_step must be a scalar, "
                                       f"got shape {step.shape.tf_str()}")
        return identity(cast(step, dtypes.int64))

    def _apply_dense(self, grad, var):
        h = [self._hyper(x, var) for x in (self._learning_rate, self._l1, self._l2)]
        return make("ApplyAdagradDA", [
            var._ref(), self.get_slot(var, "gradient_accumulator")._ref(),
            self.get_slot(var, "gradient_squared_accumulator")._ref(), grad, *h,
            self._step()], {"use_locking": self._use_locking}).op


__all__ = ["AdagradDAOptimizer"]
