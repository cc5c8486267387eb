"""The optimizers of tf.train: GradientDescent, Momentum (optionally Nesterov), Adagrad,
Adadelta, RMSProp (optionally centered) and Adam.

Each builds the update op TF 1.x built for it (ApplyGradientDescent, ApplyMomentum, ...)
with the same slot names (`<var>/Momentum`, `<var>/Adam` and `<var>/Adam_1`, `<var>/RMSProp`
...), so graphs, checkpoints and get_slot look as in TensorFlow.
"""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import convert_to_tensor, get_default_graph
from xlapy.compat.v1.ops import training_ops  # noqa: F401  (registers the Apply* ops)
from xlapy.compat.v1.ops._common import make
from xlapy.compat.v1.ops.array_ops import group
from xlapy.compat.v1.ops.math_ops import cast, multiply
from xlapy.compat.v1.train.optimizer import Optimizer
from xlapy.compat.v1.variables import Variable


class GradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply_dense(self, grad, var):
        return make("ApplyGradientDescent", [var._ref(), self._hyper(self._learning_rate, var),
                                             grad], {"use_locking": self._use_locking}).op


class MomentumOptimizer(Optimizer):
    """accum <- momentum * accum + grad; var <- var - lr * accum, or with use_nesterov
    var <- var - lr * grad - lr * momentum * accum."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate, self._momentum, self._nesterov = learning_rate, momentum, \
            use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _apply_dense(self, grad, var):
        acc = self.get_slot(var, "momentum")
        return make("ApplyMomentum", [var._ref(), acc._ref(),
                                      self._hyper(self._learning_rate, var), grad,
                                      self._hyper(self._momentum, var)],
                    {"use_nesterov": bool(self._nesterov)}).op


class AdagradOptimizer(Optimizer):
    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise InvalidArgumentError(f"initial_accumulator_value must be positive: "
                                       f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate, self._init = learning_rate, initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "accumulator", self._name, self._init)

    def _apply_dense(self, grad, var):
        acc = self.get_slot(var, "accumulator")
        return make("ApplyAdagrad", [var._ref(), acc._ref(),
                                     self._hyper(self._learning_rate, var), grad]).op


class AdadeltaOptimizer(Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-08, use_locking=False,
                 name="Adadelta"):
        super().__init__(use_locking, name)
        self._learning_rate, self._rho, self._epsilon = learning_rate, rho, epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _apply_dense(self, grad, var):
        return make("ApplyAdadelta", [
            var._ref(), self.get_slot(var, "accum")._ref(),
            self.get_slot(var, "accum_update")._ref(), self._hyper(self._learning_rate, var),
            self._hyper(self._rho, var), self._hyper(self._epsilon, var), grad],
            {"use_locking": self._use_locking}).op


class RMSPropOptimizer(Optimizer):
    """ms <- decay ms + (1 - decay) g^2; mom <- momentum mom + lr g / sqrt(ms + epsilon);
    var <- var - mom. centered=True divides by sqrt(ms - mg^2 + epsilon) instead, mg the
    moving mean of the gradient. The rms slot starts at ones, as in TF 1.x."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate, self._decay, self._momentum = learning_rate, decay, momentum
        self._epsilon, self._centered = epsilon, centered

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "rms", self._name, 1.0)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _apply_dense(self, grad, var):
        hyper = [self._hyper(h, var) for h in (self._learning_rate, self._decay,
                                                self._momentum, self._epsilon)]
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        if self._centered:
            return make("ApplyCenteredRMSProp", [
                var._ref(), self.get_slot(var, "mg")._ref(), rms._ref(), mom._ref(), *hyper,
                grad], {"use_locking": self._use_locking}).op
        return make("ApplyRMSProp", [var._ref(), rms._ref(), mom._ref(), *hyper, grad],
                    {"use_locking": self._use_locking}).op


class AdamOptimizer(Optimizer):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr_v, self._beta1, self._beta2, self._eps = learning_rate, beta1, beta2, epsilon
        self._beta1_power = self._beta2_power = None

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        if self._beta1_power is None:
            # (initial values made inside the Variable: free of the control dependencies
            # apply_gradients may be called under)
            self._beta1_power = Variable(
                lambda: convert_to_tensor(self._beta1, dtype=first.dtype), trainable=False,
                name="beta1_power")
            self._beta2_power = Variable(
                lambda: convert_to_tensor(self._beta2, dtype=first.dtype), trainable=False,
                name="beta2_power")
            self._extra_vars += [self._beta1_power, self._beta2_power]
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _get_beta_accumulators(self):
        return self._beta1_power, self._beta2_power

    def _apply_dense(self, grad, var):
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        return make("ApplyAdam", [
            var._ref(), m._ref(), v._ref(),
            cast(self._beta1_power.value(), var.dtype), cast(self._beta2_power.value(),
                                                             var.dtype),
            self._hyper(self._lr_v, var), self._hyper(self._beta1, var),
            self._hyper(self._beta2, var), self._hyper(self._eps, var), grad],
            {"use_locking": self._use_locking}).op

    def _finish(self, update_ops, name):
        graph = get_default_graph()
        with graph.control_dependencies(update_ops):
            b1 = self._beta1_power.assign(multiply(self._beta1_power,
                                                   convert_to_tensor(self._beta1,
                                                                     self._beta1_power.dtype)),
                                          name="update_beta1")
            b2 = self._beta2_power.assign(multiply(self._beta2_power,
                                                   convert_to_tensor(self._beta2,
                                                                     self._beta2_power.dtype)),
                                          name="update_beta2")
        return group(*update_ops, b1, b2, name=name)

