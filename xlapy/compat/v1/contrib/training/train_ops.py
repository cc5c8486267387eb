"""contrib.training's (and slim.learning's) training-op helpers, as TF 1.15's
contrib/training/python/training/training.py:

- create_train_op(total_loss, optimizer, ...): a tensor that, when evaluated, computes the
  gradients (after the UPDATE_OPS), applies them (incrementing the global step) and returns
  the loss (checked for NaN/Inf with check_numerics unless check_numerics=False); added to
  the TRAIN_OP collection.
- multiply_gradients (by variable or variable op name), clip_gradient_norms (each gradient
  clipped to max_norm on its own, tf.clip_by_norm), add_gradients_summaries.
"""

from __future__ import annotations

from xlapy.compat.v1 import logging
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import GraphKeys, get_default_graph

_USE_GLOBAL_STEP = 0


def multiply_gradients(grads_and_vars, gradient_multipliers):
    """Each gradient whose variable (or variable op name) is a key of
    gradient_multipliers, multiplied by its value."""
    from xlapy.compat.v1.ops.math_ops import cast, multiply
    from xlapy.compat.v1.ops._common import tensor
    if not isinstance(grads_and_vars, list):
        raise InvalidArgumentError("`grads_and_vars` must be a list.")
    if not gradient_multipliers:
        raise InvalidArgumentError("`gradient_multipliers` is empty.")
    out = []
    for grad, var in grads_and_vars:
        key = var if var in gradient_multipliers else var.op.name
        if key in gradient_multipliers:
            if grad is None:
                raise InvalidArgumentError(f"Requested multiple of `None` gradient for "
                                           f"{var.op.name}.")
            grad = multiply(grad, cast(tensor(gradient_multipliers[key]), grad.dtype))
        out.append((grad, var))
    return out


def clip_gradient_norms(gradients_to_variables, max_norm):
    """Each gradient clipped to norm max_norm on its own (tf.clip_by_norm)."""
    from xlapy.compat.v1.ops.clip_ops import clip_by_norm
    return [(None if g is None else clip_by_norm(g, max_norm), v)
            for g, v in gradients_to_variables]


def add_gradients_summaries(grads_and_vars):
    """A histogram of each gradient and a scalar of its norm; returns the summaries."""
    from xlapy.compat.v1 import summary
    from xlapy.compat.v1.ops.clip_ops import global_norm
    out = []
    for grad, var in grads_and_vars:
        if grad is None:
            logging.info("Var %s has no gradient", var.op.name)
            continue
        out.append(summary.histogram(var.op.name + "_gradient", grad))
        out.append(summary.scalar(var.op.name + "_gradient_norm", global_norm([grad])))
    return out


def create_train_op(total_loss, optimizer, global_step=_USE_GLOBAL_STEP, update_ops=None,
                    variables_to_train=None, transform_grads_fn=None,
                    summarize_gradients=False, gate_gradients=1, aggregation_method=None,
                    colocate_gradients_with_ops=False, check_numerics=True):
    from xlapy.compat.v1.ops._common import tensor
    from xlapy.compat.v1.ops.array_ops import identity, no_op
    from xlapy.compat.v1.ops.check_ops import check_numerics as _check
    from xlapy.compat.v1.train.training_util import get_or_create_global_step
    from xlapy.compat.v1.variables import trainable_variables
    graph = get_default_graph()
    if global_step is _USE_GLOBAL_STEP:
        global_step = get_or_create_global_step()
    total_loss = tensor(total_loss)
    global_update_ops = list(graph.get_collection(GraphKeys.UPDATE_OPS))
    update_ops = global_update_ops if update_ops is None else list(update_ops)
    if any(op not in update_ops for op in global_update_ops):
        logging.warning("update_ops in create_train_op does not contain all the update_ops "
                        "in GraphKeys.UPDATE_OPS")
    if update_ops:
        with graph.control_dependencies(update_ops):
            barrier = no_op(name="update_barrier")
        with graph.control_dependencies([barrier]):
            total_loss = identity(total_loss)
    if variables_to_train is None:
        variables_to_train = trainable_variables()
    if not variables_to_train:
        raise InvalidArgumentError("create_train_op: no variables to train")
    grads = optimizer.compute_gradients(
        total_loss, variables_to_train,
        colocate_gradients_with_ops=colocate_gradients_with_ops)
    grads = list(grads)
    if transform_grads_fn:
        grads = transform_grads_fn(grads)
    if summarize_gradients:
        with graph.name_scope("summarize_grads"):
            add_gradients_summaries(grads)
    grad_updates = optimizer.apply_gradients(grads, global_step=global_step)
    with graph.name_scope("train_op"):
        if check_numerics:
            total_loss = _check(total_loss, "LossTensor is inf or nan")
        with graph.control_dependencies([grad_updates]):
            train_op = identity(total_loss)
    if train_op not in graph.get_collection(GraphKeys.TRAIN_OP):
        graph.add_to_collection(GraphKeys.TRAIN_OP, train_op)
    return train_op
