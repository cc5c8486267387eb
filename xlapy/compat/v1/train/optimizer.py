"""tf.train.Optimizer: the base class of the optimizers, and their slots.

opt.minimize(loss) = compute_gradients (tf.gradients for the trainable variables) +
apply_gradients (one Apply* op per variable, grouped by a NoOp named after the optimizer;
with global_step, an AssignAdd of the step that runs after them), exactly the graph TF 1.x
built, so one training step is one fetch and, with XLA, one compiled cluster: the Apply*
ops have lowerings, so the update runs inside the step's compiled program.

Slots are the optimizer's per-variable state (Momentum's accumulator, Adam's m and v ...):
non-trainable global variables named `<var>/<optimizer name>` (`_1`, `_2` for a second
and third slot), created once per variable, found again with get_slot(var, name).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor, convert_to_tensor, get_default_graph
from xlapy.compat.v1.gradients import gradients
from xlapy.compat.v1.ops.array_ops import group
from xlapy.compat.v1.ops.math_ops import cast
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
        for _, v in grads_and_vars:
            if not hasattr(v, "_ref"):
                raise InvalidArgumentError(f"apply_gradients: {v!r} is not a Variable (each "
                                           "pair is (gradient, variable))")
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
    def _slot(self, var, slot_name: str, op_name: str, fill: float = 0.0):
        """The slot `slot_name` of `var`, created (filled with `fill`, shaped like var) on
        first use as the non-trainable variable `<var>/<op_name>`."""
        table = self._slots.setdefault(slot_name, {})
        if var not in table:
            shape, dtype = var.shape.as_list(), var.dtype.np
            table[var] = Variable(lambda: convert_to_tensor(np.full(shape, fill, dtype)),
                                  trainable=False, name=f"{var.op.name}/{op_name}")
        return table[var]

    def _zeros_slot(self, var, slot_name: str, op_name: str):
        return self._slot(var, slot_name, op_name, 0.0)

    def get_slot(self, var, name):
        """The slot variable `name` ('momentum', 'm', 'rms' ...) of `var`, or None."""
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

    def _hyper(self, value, var):
        """A hyperparameter (number, Tensor or callable returning one) as a tensor of the
        variable's dtype."""
        v = value() if callable(value) else value
        t = convert_to_tensor(v, dtype=var.dtype) if not isinstance(v, Tensor) else v
        return cast(t, var.dtype)
