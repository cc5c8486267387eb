"""tf.train: optimizers (GradientDescent, Momentum, Adam, Adagrad) and the global step.

opt.minimize(loss) = compute_gradients (tf.gradients for the trainable variables) +
apply_gradients (one Apply* op per variable, grouped by a NoOp named after the optimizer),
exactly the graph TF 1.x built, so one training step is one fetch of that NoOp.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import (GraphKeys, Tensor, convert_to_tensor,
                                       get_default_graph)
from xlapy.compat.v1.gradients import gradients
from xlapy.compat.v1.ops._common import make
from xlapy.compat.v1.ops.array_ops import group, zeros
from xlapy.compat.v1.ops.math_ops import cast, multiply
from xlapy.compat.v1.variables import Variable, trainable_variables


class Optimizer:
    GATE_NONE, GATE_OP, GATE_GRAPH = 0, 1, 2

    def __init__(self, use_locking: bool, name: str):
        if not name:
            raise InvalidArgumentError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict = {}  # slot name -> {var: slot variable}
        self._extra_vars: list = []

    def get_name(self) -> str:
        return self._name

    # ---- the two halves of minimize ----------------------------------------------------------
    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        if callable(loss):
            raise InvalidArgumentError("loss must be a Tensor (eager callables are TF 2)")
        loss = convert_to_tensor(loss)
        if var_list is None:
            var_list = trainable_variables()
        var_list = list(var_list)
        if not var_list:
            raise InvalidArgumentError("No variables to optimize.")
        grads = gradients(loss, var_list, grad_ys=grad_loss)
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise InvalidArgumentError(
                "No gradients provided for any variable, check your graph for ops that do not "
                "support gradients, between variables "
                f"{[v.name for _, v in grads_and_vars]} and loss.")
        graph = get_default_graph()
        var_list = [v for _, v in pairs]
        with graph.name_scope(None):
            self._create_slots(var_list)
        with graph.name_scope(name or self._name) as scope:
            self._prepare()
            updates = []
            for g, v in pairs:
                with graph.name_scope("update_" + v.op.name):
                    updates.append(self._apply_dense(convert_to_tensor(g), v))
            if global_step is None:
                return self._finish(updates, scope)
            with graph.control_dependencies([self._finish(updates, "update")]):
                return global_step.assign_add(1, name=scope).op

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        gv = self.compute_gradients(loss, var_list=var_list, grad_loss=grad_loss)
        return self.apply_gradients(gv, global_step=global_step, name=name)

    # ---- slots -------------------------------------------------------------------------------
    def _zeros_slot(self, var, slot_name: str, op_name: str, init_value=0.0):
        table = self._slots.setdefault(slot_name, {})
        if var not in table:
            shape = var.shape.as_list()
            value = zeros(shape, var.dtype) if init_value == 0.0 else \
                convert_to_tensor(np.full(shape, init_value, var.dtype.np))
            table[var] = Variable(value, trainable=False, name=f"{var.op.name}/{op_name}")
        return table[var]

    def get_slot(self, var, name):
        return self._slots.get(name, {}).get(var)

    def get_slot_names(self) -> list:
        return sorted(self._slots)

    def variables(self) -> list:
        out = list(self._extra_vars)
        for table in self._slots.values():
            out.extend(table.values())
        return out

    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError

    def _finish(self, update_ops, name):
        return group(*update_ops, name=name)

    def _lr(self, value, var, name):
        v = value() if callable(value) else value
        t = convert_to_tensor(v, dtype=var.dtype) if not isinstance(v, Tensor) else v
        return cast(t, var.dtype)


class GradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply_dense(self, grad, var):
        lr = self._lr(self._learning_rate, var, "learning_rate")
        return make("ApplyGradientDescent", [var._ref(), lr, grad],
                    {"use_locking": self._use_locking}).op


class MomentumOptimizer(Optimizer):
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
        return make("ApplyMomentum", [var._ref(), acc._ref(), self._lr(self._learning_rate, var,
                                                                        "lr"),
                                      grad, self._lr(self._momentum, var, "momentum")],
                    {"use_nesterov": self._nesterov}).op


class AdagradOptimizer(Optimizer):
    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        super().__init__(use_locking, name)
        self._learning_rate, self._init = learning_rate, initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accumulator", self._name, init_value=self._init)

    def _apply_dense(self, grad, var):
        acc = self.get_slot(var, "accumulator")
        return make("ApplyAdagrad", [var._ref(), acc._ref(),
                                     self._lr(self._learning_rate, var, "lr"), grad]).op


class AdamOptimizer(Optimizer):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr_v, self._beta1, self._beta2, self._eps = learning_rate, beta1, beta2, epsilon
        self._beta1_power = self._beta2_power = None

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        if self._beta1_power is None:
            self._beta1_power = Variable(convert_to_tensor(self._beta1, dtype=first.dtype),
                                         trainable=False, name="beta1_power")
            self._beta2_power = Variable(convert_to_tensor(self._beta2, dtype=first.dtype),
                                         trainable=False, name="beta2_power")
            self._extra_vars += [self._beta1_power, self._beta2_power]
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name + "_1")

    def _get_beta_accumulators(self):
        return self._beta1_power, self._beta2_power

    def _apply_dense(self, grad, var):
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        return make("ApplyAdam", [
            var._ref(), m._ref(), v._ref(),
            cast(self._beta1_power.value(), var.dtype), cast(self._beta2_power.value(),
                                                             var.dtype),
            self._lr(self._lr_v, var, "learning_rate"), self._lr(self._beta1, var, "beta1"),
            self._lr(self._beta2, var, "beta2"), self._lr(self._eps, var, "epsilon"), grad],
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


# ---- global step -------------------------------------------------------------------------------

def get_global_step(graph=None):
    g = graph or get_default_graph()
    steps = g.get_collection(GraphKeys.GLOBAL_STEP)
    return steps[0] if steps else None


def create_global_step(graph=None):
    if get_global_step(graph) is not None:
        raise InvalidArgumentError("global_step already exists.")
    g = graph or get_default_graph()
    with g.name_scope(None):
        return Variable(zeros([], dtypes.int64), trainable=False, name="global_step",
                        collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    return get_global_step(graph) or create_global_step(graph)


def global_step(sess, global_step_tensor):
    return int(sess.run(global_step_tensor))
