"""tf.metrics: the core streaming metrics as TF 1.x's (metrics_impl.py).

Each metric returns (value, update_op). Its state lives in local variables (collections
LOCAL_VARIABLES and METRIC_VARIABLES, so tf.local_variables_initializer() resets them)
created in a variable scope named after the metric (accuracy/total, accuracy/count, ...).
update_op adds one batch to the state and returns the metric over everything seen so far;
value reads the state without changing it. Ratios with an empty denominator are 0.

auc accumulates the confusion matrix at `num_thresholds` thresholds spread evenly over
[0, 1] (with -1e-7 and 1 + 1e-7 at the ends) and sums the ROC or PR curve with TF's
'trapezoidal', 'careful_interpolation' (PR; the trapezoidal rule for ROC), 'minoring' or
'majoring' rule.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import GraphKeys, get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import ones_like, reshape, size, zeros
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.math_ops import (add, cast, equal, greater, logical_and, logical_not,
                                          maximum, minimum, multiply, realdiv, reduce_sum,
                                          squared_difference, subtract)
from xlapy.compat.v1.ops.special_math_ops import div_no_nan
from xlapy.compat.v1.ops.variable_ops import assign_add
from xlapy.compat.v1.variables import Variable, variable_scope

_F32 = dtypes.float32


def _metric_variable(shape, dtype, validate_shape=True, name=None):
    """A local variable of zeros holding a metric's state."""
    return Variable(zeros(shape, dtype), trainable=False, validate_shape=validate_shape,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                    name=name)


def _collect(collections, value):
    for c in collections or ():
        get_default_graph().add_to_collection(c, value)


def _weights_like(values, weights):
    if weights is None:
        return None
    return multiply(cast(tensor(weights), values.dtype), ones_like(values))


def mean(values, weights=None, metrics_collections=None, updates_collections=None,
         name=None):
    with variable_scope(name, "mean"):
        values = cast(tensor(values), _F32)
        total = _metric_variable([], _F32, name="total")
        count = _metric_variable([], _F32, name="count")
        w = _weights_like(values, weights)
        if w is None:
            num = cast(size(values), _F32)
        else:
            values = multiply(values, w)
            num = reduce_sum(w)
        update_total = assign_add(total, reduce_sum(values))
        with get_default_graph().control_dependencies([values]):
            update_count = assign_add(count, num)
        value = div_no_nan(total.value(), count.value(), name="value")
        update_op = div_no_nan(update_total, update_count, name="update_op")
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """How often predictions equal labels."""
    predictions = tensor(predictions)
    labels = tensor(labels)
    if labels.dtype != predictions.dtype:
        predictions = cast(predictions, labels.dtype)
    is_correct = cast(equal(predictions, labels), _F32)
    return mean(is_correct, weights, metrics_collections, updates_collections,
                name or "accuracy")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    predictions = cast(tensor(predictions), _F32)
    labels = cast(tensor(labels), _F32)
    return mean(squared_difference(labels, predictions), weights, metrics_collections,
                updates_collections, name or "mean_squared_error")


def _count(condition, weights, scope):
    """(variable read, update) of a weighted count of `condition`, in scope/count."""
    with variable_scope(None, scope):
        count = _metric_variable([], _F32, name="count")
        v = cast(condition, _F32)
        w = _weights_like(v, weights)
        if w is not None:
            v = multiply(v, w)
        return count.value(), assign_add(count, reduce_sum(v))


def _bools(labels, predictions):
    return cast(tensor(labels), dtypes.bool), cast(tensor(predictions), dtypes.bool)


def _ratio(num, other, name):
    total = add(num, other)
    zero = tensor(np.zeros((), np.float32))
    safe = where(greater(total, zero), total, ones_like(total))
    return where(greater(total, zero), realdiv(num, safe), zeros([], _F32), name=name)


def precision(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
    """true positives / (true positives + false positives) of boolean predictions."""
    with variable_scope(name, "precision"):
        lab, pred = _bools(labels, predictions)
        tp, tp_up = _count(logical_and(lab, pred), weights, "true_positives")
        fp, fp_up = _count(logical_and(logical_not(lab), pred), weights, "false_positives")
        value = _ratio(tp, fp, "value")
        update_op = _ratio(tp_up, fp_up, "update_op")
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def recall(labels, predictions, weights=None, metrics_collections=None,
           updates_collections=None, name=None):
    """true positives / (true positives + false negatives) of boolean predictions."""
    with variable_scope(name, "recall"):
        lab, pred = _bools(labels, predictions)
        tp, tp_up = _count(logical_and(lab, pred), weights, "true_positives")
        fn, fn_up = _count(logical_and(lab, logical_not(pred)), weights, "false_negatives")
        value = _ratio(tp, fn, "value")
        update_op = _ratio(tp_up, fn_up, "update_op")
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal",
        thresholds=None):
    if curve not in ("ROC", "PR"):
        raise InvalidArgumentError(f"curve must be 'ROC' or 'PR', got {curve!r}")
    if summation_method not in ("trapezoidal", "careful_interpolation", "minoring",
                                "majoring"):
        raise InvalidArgumentError(f"Invalid summation_method: {summation_method!r}; "
                                   "summation_method should be 'trapezoidal', "
                                   "'careful_interpolation', 'minoring', or 'majoring'.")
    if curve == "PR" and summation_method == "trapezoidal":
        from xlapy.compat.v1 import logging  # (a warning only on this path)
        logging.warning("Trapezoidal rule is known to produce incorrect PR-AUCs; please "
                        "switch to \"careful_interpolation\" instead.")
    if thresholds is None:
        if num_thresholds < 2:
            raise InvalidArgumentError("num_thresholds must be > 1.")
        eps = 1e-7
        thresholds = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        thresholds = [0.0 - eps] + thresholds + [1.0 + eps]
    else:
        thresholds = [0.0 - 1e-7] + list(thresholds) + [1.0 + 1e-7]
    t = len(thresholds)
    with variable_scope(name, "auc"):
        lab = reshape(cast(tensor(labels), dtypes.bool), [1, -1])
        pred = reshape(cast(tensor(predictions), _F32), [1, -1])
        th = tensor(np.asarray(thresholds, np.float32).reshape(t, 1))
        pos = greater(pred, th)                              # [t, n]
        w = None if weights is None else reshape(cast(tensor(weights), _F32), [1, -1])
        state, ups = {}, {}
        for key, cond in (("true_positives", logical_and(lab, pos)),
                          ("false_negatives", logical_and(lab, logical_not(pos))),
                          ("true_negatives", logical_and(logical_not(lab), logical_not(pos))),
                          ("false_positives", logical_and(logical_not(lab), pos))):
            var = _metric_variable([t], _F32, name=key)
            v = cast(cond, _F32)
            if w is not None:
                v = multiply(v, w)
            state[key] = var.value()
            ups[key] = assign_add(var, reduce_sum(v, 1))

        def area(s, name_):
            e = tensor(np.float32(1e-6))
            tp, fn, tn, fp = (s[k] for k in ("true_positives", "false_negatives",
                                             "true_negatives", "false_positives"))
            if curve == "PR" and summation_method == "careful_interpolation":
                return _interpolated_pr_auc(tp, fp, fn, t, name_)
            rec = realdiv(add(tp, e), add(add(tp, fn), e))
            if curve == "ROC":
                x, y = realdiv(fp, add(add(fp, tn), e)), rec
            else:
                x, y = rec, realdiv(add(tp, e), add(add(tp, fp), e))
            dx = subtract(x[:t - 1], x[1:])
            if summation_method in ("trapezoidal", "careful_interpolation"):
                h = multiply(add(y[:t - 1], y[1:]), tensor(np.float32(0.5)))
            elif summation_method == "minoring":
                h = minimum(y[:t - 1], y[1:])
            else:
                h = maximum(y[:t - 1], y[1:])
            return reduce_sum(multiply(dx, h), name=name_)
        value = area(state, "value")
        update_op = area(ups, "update_op")
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def _interpolated_pr_auc(tp, fp, fn, t, name):
    """The PR area with precision interpolated between thresholds as TF 1.x's
    'careful_interpolation' (Davis & Goadrich 2006): within each interval tp and the
    predicted positives p = tp + fp vary linearly, so precision is (a + b p) / p and its
    integral over recall is b (dtp + a log(p_lo / p_hi)) / (tp + fn)."""
    from xlapy.compat.v1.ops.math_ops import log  # (only this summation takes logs)
    zero = tensor(np.float32(0.0))
    p = add(tp, fp)
    d_tp = subtract(tp[:t - 1], tp[1:])
    slope = div_no_nan(d_tp, maximum(subtract(p[:t - 1], p[1:]), zero))
    intercept = subtract(tp[1:], multiply(slope, p[1:]))
    both = logical_and(greater(p[:t - 1], zero), greater(p[1:], zero))
    ratio = where(both, div_no_nan(p[:t - 1], maximum(p[1:], zero)), ones_like(p[1:]))
    inc = div_no_nan(multiply(slope, add(d_tp, multiply(intercept, log(ratio)))),
                     maximum(add(tp[1:], fn[1:]), zero))
    return reduce_sum(inc, name=name)
