"""tf.keras.metrics' confusion-matrix classes (TF 1.15, graph mode; metric_classes.py has
the Metric base and the averaging metrics): TruePositives ... FalseNegatives, Precision,
Recall (thresholds, top_k, class_id), SensitivityAtSpecificity, SpecificityAtSensitivity,
AUC (ROC or PR, interpolated sums as TF) and MeanIoU. Predictions must lie in [0, 1]."""

from __future__ import annotations


import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import (control_dependencies, convert_to_tensor)
from xlapy.compat.v1.keras import backend_ops as _K
from xlapy.compat.v1.metrics.metrics_impl import _interpolated_pr_auc
from xlapy.compat.v1.ops import array_ops as A
from xlapy.compat.v1.ops import math_ops as M
from xlapy.compat.v1.ops.check_ops import (assert_greater_equal, assert_less,
                                          assert_less_equal)
from xlapy.compat.v1.ops.diag_ops import diag_part
from xlapy.compat.v1.ops.gather_ops import gather, top_k
from xlapy.compat.v1.ops.index_ops import one_hot
from xlapy.compat.v1.ops.special_math_ops import div_no_nan
from xlapy.compat.v1.ops.stats_ops import confusion_matrix
from xlapy.compat.v1.keras.metric_classes import (
    Metric,
    _F32,
    _broadcast_weights,
    _squeeze_or_expand,
    _t)


NEG_INF = -1e10       # the threshold of Precision / Recall with top_k (every kept entry)


# ---- confusion-matrix metrics ----------------------------------------------------------------
def _to_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _parse_thresholds(thresholds, default):
    if thresholds is not None:
        bad = [t for t in _to_list(thresholds) if t is None or t < 0 or t > 1]
        if bad:
            raise InvalidArgumentError(f"Threshold values must be in [0, 1]. Invalid values: "
                                       f"{bad}")
    return [float(t) for t in _to_list(default if thresholds is None else thresholds)]


def _filter_top_k(x, k):
    """x where it is among the k largest of its last axis, NEG_INF elsewhere."""
    n = x.shape.as_list()[-1] if x.shape.ndims else None
    if n is None:
        raise InvalidArgumentError(f"top_k needs predictions with a known last dimension, "
                                   f"got {x.shape}")
    _, idx = top_k(x, k, sorted=False)
    mask = M.reduce_sum(one_hot(idx, n, dtype=x.dtype), axis=-2)
    return x * mask + np.float32(NEG_INF) * (1 - mask)


def _update_confusion(variables, y_true, y_pred, thresholds, top_k=None, class_id=None,
                      sample_weight=None):
    """Add this batch's weighted true/false positive/negative counts at each threshold
    (prediction > threshold is positive) to variables {'tp'|'fp'|'tn'|'fn': variable}."""
    y_true = _t(y_true, _F32)
    y_pred = _t(y_pred, _F32)
    if not y_pred.shape.is_compatible_with(y_true.shape):
        raise InvalidArgumentError(f"Shapes {y_pred.shape} and {y_true.shape} are "
                                   f"incompatible")
    checks = [assert_greater_equal(y_pred, np.float32(0), message="predictions must be >= 0"),
              assert_less_equal(y_pred, np.float32(1), message="predictions must be <= 1")]
    with control_dependencies(checks):
        y_pred = A.identity(y_pred)
    if sample_weight is not None:
        sample_weight = _t(sample_weight, _F32)
    y_pred, y_true, sample_weight = _squeeze_or_expand(y_pred, y_true, sample_weight)
    if top_k is not None:
        y_pred = _filter_top_k(y_pred, top_k)
    if class_id is not None:
        y_true = y_true[..., class_id]
        y_pred = y_pred[..., class_id]
    t = len(thresholds)
    pred = A.reshape(y_pred, [1, -1])
    label_pos = A.reshape(M.cast(y_true, dtypes.bool), [1, -1])
    th = convert_to_tensor(np.asarray(thresholds, np.float32).reshape(t, 1))
    pred_pos = M.greater(pred, th)                                          # [t, n]
    w = None if sample_weight is None else \
        A.reshape(_broadcast_weights(sample_weight, y_pred), [1, -1])
    conds = {"tp": lambda: M.logical_and(label_pos, pred_pos),
             "fn": lambda: M.logical_and(label_pos, M.logical_not(pred_pos)),
             "fp": lambda: M.logical_and(M.logical_not(label_pos), pred_pos),
             "tn": lambda: M.logical_and(M.logical_not(label_pos), M.logical_not(pred_pos))}
    ups = []
    for key, var in variables.items():
        hits = M.cast(conds[key](), _F32)
        if w is not None:
            hits = hits * w
        ups.append(var.assign_add(M.cast(M.reduce_sum(hits, 1), var.dtype)))
    return A.group(*ups)


class _ConfusionMatrixConditionCount(Metric):
    _COND = ""

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.thresholds = _parse_thresholds(thresholds, 0.5)
        self.accumulator = self.add_weight("accumulator", shape=(len(self.thresholds),))

    def update_state(self, y_true, y_pred, sample_weight=None):
        return _update_confusion({self._COND: self.accumulator}, y_true, y_pred,
                                 self.thresholds, sample_weight=sample_weight)

    def result(self):
        return self.accumulator[0] if len(self.thresholds) == 1 else \
            self.accumulator.read_value()

    def get_config(self) -> dict:
        return {**super().get_config(), "thresholds": self.init_thresholds}


class TruePositives(_ConfusionMatrixConditionCount):
    """The (weighted) number of true positives: y_true and y_pred > threshold."""
    _COND = "tp"


class FalsePositives(_ConfusionMatrixConditionCount):
    """The (weighted) number of false positives: not y_true but y_pred > threshold."""
    _COND = "fp"


class TrueNegatives(_ConfusionMatrixConditionCount):
    """The (weighted) number of true negatives: neither y_true nor y_pred > threshold."""
    _COND = "tn"


class FalseNegatives(_ConfusionMatrixConditionCount):
    """The (weighted) number of false negatives: y_true but not y_pred > threshold."""
    _COND = "fn"


class _PrecisionRecall(Metric):
    _OTHER = ""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.top_k = top_k
        self.class_id = class_id
        self.thresholds = _parse_thresholds(thresholds, 0.5 if top_k is None else NEG_INF)
        n = len(self.thresholds)
        self.true_positives = self.add_weight("true_positives", shape=(n,))
        other = {"fp": "false_positives", "fn": "false_negatives"}[self._OTHER]
        setattr(self, other, self.add_weight(other, shape=(n,)))
        self._other = getattr(self, other)

    def update_state(self, y_true, y_pred, sample_weight=None):
        return _update_confusion({"tp": self.true_positives, self._OTHER: self._other},
                                 y_true, y_pred, self.thresholds, top_k=self.top_k,
                                 class_id=self.class_id, sample_weight=sample_weight)

    def result(self):
        tp = self.true_positives.read_value()
        r = div_no_nan(tp, tp + self._other.read_value())
        return r[0] if len(self.thresholds) == 1 else r

    def get_config(self) -> dict:
        return {**super().get_config(), "thresholds": self.init_thresholds,
                "top_k": self.top_k, "class_id": self.class_id}


class Precision(_PrecisionRecall):
    """true_positives / (true_positives + false_positives) at each threshold (0.5 by
    default); top_k: only each row's k largest predictions count as positive; class_id: only
    that column of the labels and predictions."""
    _OTHER = "fp"


class Recall(_PrecisionRecall):
    """true_positives / (true_positives + false_negatives) at each threshold (0.5 by
    default); top_k and class_id as Precision's."""
    _OTHER = "fn"


class _Confusion4(Metric):
    """The four counts at num_thresholds thresholds."""

    def _make_counts(self, n):
        self.true_positives = self.add_weight("true_positives", shape=(n,))
        self.true_negatives = self.add_weight("true_negatives", shape=(n,))
        self.false_positives = self.add_weight("false_positives", shape=(n,))
        self.false_negatives = self.add_weight("false_negatives", shape=(n,))

    def update_state(self, y_true, y_pred, sample_weight=None):
        return _update_confusion({"tp": self.true_positives, "tn": self.true_negatives,
                                  "fp": self.false_positives, "fn": self.false_negatives},
                                 y_true, y_pred, self.thresholds, sample_weight=sample_weight)

    def _counts(self):
        return (self.true_positives.read_value(), self.true_negatives.read_value(),
                self.false_positives.read_value(), self.false_negatives.read_value())


class _SensitivitySpecificityBase(_Confusion4):
    def __init__(self, value, num_thresholds=200, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        if num_thresholds <= 0:
            raise InvalidArgumentError("`num_thresholds` must be > 0.")
        self.value = value
        self.num_thresholds = num_thresholds
        self._make_counts(num_thresholds)
        if num_thresholds == 1:
            self.thresholds = [0.5]
        else:
            self.thresholds = [0.0] + [(i + 1) / (num_thresholds - 1)
                                       for i in range(num_thresholds - 2)] + [1.0]

    def _at_closest(self, rate, num, other):
        """num / (num + other) at the threshold where `rate` is closest to self.value."""
        i = M.cast(M.argmin(M.abs(rate - np.float32(self.value)), 0), dtypes.int32)
        a, b = gather(num, i), gather(other, i)
        return div_no_nan(a, a + b)


class SensitivityAtSpecificity(_SensitivitySpecificityBase):
    """The sensitivity (tp / (tp + fn)) at the threshold whose specificity (tn / (tn + fp))
    is closest to `specificity`."""

    def __init__(self, specificity, num_thresholds=200, name=None, dtype=None):
        if specificity < 0 or specificity > 1:
            raise InvalidArgumentError("`specificity` must be in the range [0, 1].")
        self.specificity = specificity
        super().__init__(specificity, num_thresholds=num_thresholds, name=name, dtype=dtype)

    def result(self):
        tp, tn, fp, fn = self._counts()
        return self._at_closest(div_no_nan(tn, tn + fp), tp, fn)

    def get_config(self) -> dict:
        return {**super().get_config(), "num_thresholds": self.num_thresholds,
                "specificity": self.specificity}


class SpecificityAtSensitivity(_SensitivitySpecificityBase):
    """The specificity (tn / (tn + fp)) at the threshold whose sensitivity (tp / (tp + fn))
    is closest to `sensitivity`."""

    def __init__(self, sensitivity, num_thresholds=200, name=None, dtype=None):
        if sensitivity < 0 or sensitivity > 1:
            raise InvalidArgumentError("`sensitivity` must be in the range [0, 1].")
        self.sensitivity = sensitivity
        super().__init__(sensitivity, num_thresholds=num_thresholds, name=name, dtype=dtype)

    def result(self):
        tp, tn, fp, fn = self._counts()
        return self._at_closest(div_no_nan(tp, tp + fn), tn, fp)

    def get_config(self) -> dict:
        return {**super().get_config(), "num_thresholds": self.num_thresholds,
                "sensitivity": self.sensitivity}


_CURVES = {"roc": "ROC", "ROC": "ROC", "pr": "PR", "PR": "PR"}
_SUMMATIONS = {"interpolation": "interpolation", "Interpolation": "interpolation",
               "majoring": "majoring", "Majoring": "majoring", "minoring": "minoring",
               "Minoring": "minoring"}


class AUC(_Confusion4):
    """The area under the ROC curve (curve='ROC', false positive rate vs recall) or the
    precision-recall curve (curve='PR'), a Riemann sum over thresholds: num_thresholds evenly
    spaced in [0, 1] (or `thresholds`), plus -1e-7 and 1 + 1e-7 at the ends.
    summation_method 'interpolation' (the trapezoidal rule for ROC; for PR, true and false
    positives interpolated linearly between thresholds, Davis & Goadrich 2006), 'minoring'
    or 'majoring' (the lower / upper of the two heights)."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name=None, dtype=None, thresholds=None):
        if curve not in _CURVES:
            raise InvalidArgumentError(f'Invalid AUC curve value "{curve}".')
        if summation_method not in _SUMMATIONS:
            raise InvalidArgumentError(f'Invalid AUC summation method value '
                                       f'"{summation_method}".')
        if thresholds is not None:
            thresholds = sorted(_parse_thresholds(thresholds, None))
            self.num_thresholds = len(thresholds) + 2
        else:
            if num_thresholds <= 1:
                raise InvalidArgumentError("`num_thresholds` must be > 1.")
            self.num_thresholds = int(num_thresholds)
            thresholds = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        eps = _K.epsilon()
        self.thresholds = [0.0 - eps] + thresholds + [1.0 + eps]
        self.curve = _CURVES[curve]
        self.summation_method = _SUMMATIONS[summation_method]
        super().__init__(name=name, dtype=dtype)
        self._make_counts(self.num_thresholds)

    def result(self):
        tp, tn, fp, fn = self._counts()
        n = self.num_thresholds
        if self.curve == "PR" and self.summation_method == "interpolation":
            return _interpolated_pr_auc(tp, fp, fn, n, "interpolate_pr_auc")
        recall = div_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = div_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, div_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = M.minimum(y[:n - 1], y[1:])
        else:
            heights = M.maximum(y[:n - 1], y[1:])
        return M.reduce_sum(M.multiply(x[:n - 1] - x[1:], heights))

    def get_config(self) -> dict:
        return {**super().get_config(), "num_thresholds": self.num_thresholds,
                "curve": self.curve, "summation_method": self.summation_method,
                "thresholds": self.thresholds[1:-1]}


class MeanIoU(Metric):
    """The mean over classes of intersection / union (tp / (tp + fp + fn)), from the
    confusion matrix of num_classes integer labels and predictions (any shape, flattened);
    classes absent from both are left out of the mean."""

    def __init__(self, num_classes, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.num_classes = int(num_classes)
        self.total_cm = self.add_weight("total_confusion_matrix",
                                        shape=(self.num_classes, self.num_classes),
                                        dtype=dtypes.float64)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = _t(y_true, self._dtype)
        y_pred = _t(y_pred, self._dtype)
        if y_pred.shape.ndims != 1:
            y_pred = A.reshape(y_pred, [-1])
        if y_true.shape.ndims != 1:
            y_true = A.reshape(y_true, [-1])
        if sample_weight is not None:
            sample_weight = _t(sample_weight)
            if sample_weight.shape.ndims != 1:
                sample_weight = A.reshape(sample_weight, [-1])
        n = np.int64(self.num_classes)
        lab, pred = M.cast(y_true, dtypes.int64), M.cast(y_pred, dtypes.int64)
        checks = [assert_greater_equal(lab, np.int64(0),
                                       message="`labels` contains negative values"),
                  assert_greater_equal(pred, np.int64(0),
                                       message="`predictions` contains negative values"),
                  assert_less(lab, n, message="`labels` out of bound"),
                  assert_less(pred, n, message="`predictions` out of bound")]
        with control_dependencies(checks):
            lab = A.identity(lab)
        cm = confusion_matrix(lab, pred, self.num_classes, weights=sample_weight,
                              dtype=dtypes.float64)
        return self.total_cm.assign_add(cm)

    def result(self):
        cm = self.total_cm.read_value()
        rows = M.cast(M.reduce_sum(cm, axis=0), self._dtype)
        cols = M.cast(M.reduce_sum(cm, axis=1), self._dtype)
        tp = M.cast(diag_part(cm), self._dtype)
        denominator = rows + cols - tp
        valid = M.reduce_sum(M.cast(M.not_equal(denominator, 0), self._dtype))
        iou = div_no_nan(tp, denominator)
        return div_no_nan(M.reduce_sum(iou), valid)

    def get_config(self) -> dict:
        return {**super().get_config(), "num_classes": self.num_classes}
