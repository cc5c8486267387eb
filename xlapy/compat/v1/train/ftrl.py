"""tf.train.FtrlOptimizer (FTRL-Proximal, McMahan et al. 2013), ProximalGradientDescent and
ProximalAdagrad, and the decoupled weight decay Adam of tf.contrib.opt (AdamWOptimizer), as
TF 1.x builds them: Ftrl's slots are
`<var>/Ftrl` (the accumulator, starting at initial_accumulator_value) and `<var>/Ftrl_1`
(the linear term); AdamW subtracts weight_decay * var before Adam's update, not scaled by
the learning rate (TF's DecoupledWeightDecayExtension)."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops import ftrl_ops  # noqa: F401  (registers ApplyFtrl, ApplyFtrlV2)
from xlapy.compat.v1.ops._common import make
from xlapy.compat.v1.ops.math_ops import multiply
from xlapy.compat.v1.ops.variable_ops import assign_sub
from xlapy.compat.v1.train.optimizer import Optimizer
from xlapy.compat.v1.train.optimizers import AdamOptimizer


class FtrlOptimizer(Optimizer):
    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0):
        super().__init__(use_locking, name)
        checks = [(initial_accumulator_value < 0.0, "initial_accumulator_value",
                   initial_accumulator_value, "positive"),
                  (learning_rate_power > 0.0, "learning_rate_power", learning_rate_power,
                   "less than or equal to 0.0"),
                  (l1_regularization_strength < 0.0, "l1_regularization_strength",
                   l1_regularization_strength, "non-negative"),
                  (l2_regularization_strength < 0.0, "l2_regularization_strength",
                   l2_regularization_strength, "non-negative"),
                  (l2_shrinkage_regularization_strength < 0.0,
                   "l2_shrinkage_regularization_strength",
                   l2_shrinkage_regularization_strength, "non-negative")]
        for bad, what, v, need in checks:
            if bad:
                raise InvalidArgumentError(f"{what} {v} must be {need}")
        self._learning_rate, self._lr_power = learning_rate, learning_rate_power
        self._init = initial_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._shrink = l2_shrinkage_regularization_strength
        self._accum_name, self._linear_name = accum_name, linear_name

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "accum", self._accum_name or self._name, self._init)
            self._slot(v, "linear", self._linear_name or self._name, 0.0)

    def _apply_dense(self, grad, var):
        h = [self._hyper(x, var) for x in (self._learning_rate, self._l1, self._l2)]
        refs = [var._ref(), self.get_slot(var, "accum")._ref(),
                self.get_slot(var, "linear")._ref(), grad]
        p = self._hyper(self._lr_power, var)
        if self._shrink == 0.0:
            return make("ApplyFtrl", refs + h + [p],
                        {"use_locking": self._use_locking}).op
        return make("ApplyFtrlV2", refs + h + [self._hyper(self._shrink, var), p],
                    {"use_locking": self._use_locking}).op


class ProximalGradientDescentOptimizer(Optimizer):
    """Gradient descent followed by the proximal step of l1 |w| + l2 w^2 / 2."""

    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _apply_dense(self, grad, var):
        h = [self._hyper(x, var) for x in (self._learning_rate, self._l1, self._l2)]
        return make("ApplyProximalGradientDescent", [var._ref()] + h + [grad],
                    {"use_locking": self._use_locking}).op


class ProximalAdagradOptimizer(Optimizer):
    """Adagrad's per-coordinate rate followed by the proximal step of l1 and l2; the
    accumulator slot `<var>/ProximalAdagrad` starts at initial_accumulator_value."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise InvalidArgumentError(f"initial_accumulator_value must be positive: "
                                       f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate, self._init = learning_rate, initial_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "accumulator", self._name, self._init)

    def _apply_dense(self, grad, var):
        h = [self._hyper(x, var) for x in (self._learning_rate, self._l1, self._l2)]
        return make("ApplyProximalAdagrad",
                    [var._ref(), self.get_slot(var, "accumulator")._ref()] + h + [grad],
                    {"use_locking": self._use_locking}).op


class AdamWOptimizer(AdamOptimizer):
    """Adam with decoupled weight decay: var -= weight_decay * var, then Adam's step."""

    def __init__(self, weight_decay, learning_rate=0.001, beta1=0.9, beta2=0.999,
                 epsilon=1e-08, use_locking=False, name="AdamW"):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)
        self._weight_decay = weight_decay

    def _apply_dense(self, grad, var):
        decay = assign_sub(var, multiply(self._hyper(self._weight_decay, var), var.value()))
        with get_default_graph().control_dependencies([decay]):
            return super()._apply_dense(grad, var)
