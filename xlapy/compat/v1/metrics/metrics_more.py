"""The rest of TF 1.x's tf.metrics (metrics_impl.py), on the state design of metrics_impl:
every metric keeps its state in local variables (LOCAL_VARIABLES and METRIC_VARIABLES)
under a variable scope named after it and returns (value, update_op).

- Means of a per-element quantity (mean_absolute_error, mean_relative_error,
  percentage_below, mean_cosine_distance, root_mean_squared_error) go through `mean`.
- Counts (true_positives, ...) keep one float32 `count`; the *_at_thresholds family keeps
  [len(thresholds)] vectors counting predictions strictly above each threshold.
- sensitivity_at_specificity / specificity_at_sensitivity pick the threshold (of
  `num_thresholds` spread over [0, 1]) whose specificity (sensitivity) is nearest the target:
  the first such threshold for the former, the last for the latter, as TF does.
- mean_iou accumulates a float64 [num_classes, num_classes] confusion matrix (rows: labels)
  and averages IoU over the classes whose row or column is not empty; its update_op returns
  the matrix. mean_per_class_accuracy keeps per-class `total` and `count` and averages over
  all num_classes (a class never seen counts 0); its update_op returns the per-class vector.
- The @k metrics (precision_at_k, recall_at_k, precision_at_top_k, recall_at_top_k,
  average_precision_at_k) treat each row of labels (class ids, dense or a SparseTensor) and
  of the top-k predicted ids as sets, as TF's set ops do: duplicates count once, and a dense
  label outside [0, num_classes) matches no prediction (so for recall it is a false
  negative). Their state is float64 and precision/recall of nothing is NaN (TF's 0 / 0);
  average precision of nothing is 0.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.metrics.metrics_impl import _collect, _metric_variable, mean
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import (expand_dims, ones_like, reshape, shape, squeeze,
                                           transpose)
from xlapy.compat.v1.ops.gather_ops import gather, top_k
from xlapy.compat.v1.ops.index_ops import one_hot, where
from xlapy.compat.v1.ops.manip_ops import cumsum, range_
from xlapy.compat.v1.ops.math_ops import (abs, add, argmax, argmin, cast, equal, greater, less,
                                          logical_and, logical_not, matmul, maximum,
                                          minimum, multiply, realdiv, reduce_any,
                                          reduce_mean, reduce_min, reduce_sum, sqrt,
                                          squared_difference, subtract)
from xlapy.compat.v1.ops.sparse_ops import sparse_tensor_to_dense
from xlapy.compat.v1.ops.special_math_ops import div_no_nan
from xlapy.compat.v1.ops.variable_ops import assign_add
from xlapy.compat.v1.sparse_tensor import SparseTensor, SparseTensorValue
from xlapy.compat.v1.variables import variable_scope

_F32, _F64, _I64 = dtypes.float32, dtypes.float64, dtypes.int64


def _f32(x):
    return cast(tensor(x), _F32)


def _const(v, dtype=np.float32):
    return tensor(np.asarray(v, dtype))


def _check_weights(weights, values, what):
    """TF's static check: weights are a scalar or of the values' rank, each dimension 1 or
    the values' (ValueError, as TF's assert_broadcastable when the shapes are known)."""
    if weights is None:
        return None
    w = tensor(weights)
    ws, vs = w.shape, values.shape
    if ws.ndims is None or vs.ndims is None or ws.ndims == 0:
        return w
    if ws.ndims != vs.ndims:
        raise InvalidArgumentError(f"{what}: weights can not be broadcast to values: weights "
                                   f"rank {ws.ndims}, values rank {vs.ndims}")
    for a, b in zip(ws.dims, vs.dims):
        if a is not None and b is not None and a != 1 and a != b:
            raise InvalidArgumentError(f"{what}: weights shape {ws.as_list()} can not be "
                                       f"broadcast to values shape {vs.as_list()}")
    return w


def _squeezable(a, b):
    """(a, b) with the last dimension (of size 1) of one dropped where the static ranks
    differ by one, as TF's remove_squeezable_dimensions."""
    ra, rb = a.shape.ndims, b.shape.ndims
    if ra is not None and rb is not None:
        if ra == rb + 1 and a.shape.dims[-1] == 1:
            a = squeeze(a, [-1])
        elif rb == ra + 1 and b.shape.dims[-1] == 1:
            b = squeeze(b, [-1])
    return a, b


def _prepare(labels, predictions, weights, what, dtype=_F32):
    """labels and predictions cast to `dtype`, squeezed to one shape (ValueError where the
    shapes differ), and weights squeezed or expanded by one trailing dimension to their
    rank (TF's _remove_squeezable_dimensions)."""
    lab, pred = _squeezable(cast(tensor(labels), dtype), cast(tensor(predictions), dtype))
    _compatible(pred, lab, what)
    if weights is None:
        return lab, pred, None
    w = tensor(weights)
    rw, rp = w.shape.ndims, pred.shape.ndims
    if rw and rp is not None:
        if rw == rp + 1 and w.shape.dims[-1] in (1, None):
            w = squeeze(w, [-1])
        elif rp == rw + 1:
            w = expand_dims(w, -1)
    return lab, pred, w


def _compatible(a, b, what):
    if not a.shape.is_compatible_with(b.shape):
        raise InvalidArgumentError(f"{what}: shapes {a.shape.as_list()} and "
                                   f"{b.shape.as_list()} are incompatible")


def _broadcast_w(w, values, dtype=_F32):
    """weights cast to `dtype` and broadcast to `values`' shape."""
    return multiply(cast(w, dtype), ones_like(cast(values, dtype)))


def _finish(value, update_op, metrics_collections, updates_collections):
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


# ---- means of a per-element quantity ---------------------------------------------------------

def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """The (weighted) mean of |predictions - labels|."""
    lab, pred, weights = _prepare(labels, predictions, weights, "mean_absolute_error")
    return mean(abs(subtract(pred, lab)), weights, metrics_collections, updates_collections,
                name or "mean_absolute_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """The square root of the (weighted) mean squared error."""
    lab, pred, weights = _prepare(labels, predictions, weights, "root_mean_squared_error")
    mse, update = mean(squared_difference(lab, pred), weights, None, None,
                       name or "root_mean_squared_error")
    return _finish(sqrt(mse), sqrt(update), metrics_collections, updates_collections)


def mean_relative_error(labels, predictions, normalizer, weights=None,
                        metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of |labels - predictions| / normalizer (0 where normalizer is 0)."""
    lab, pred, weights = _prepare(labels, predictions, weights, "mean_relative_error")
    pred, norm = _squeezable(pred, _f32(normalizer))
    _compatible(pred, norm, "mean_relative_error")
    zero = _const(0.0)
    is_zero = equal(norm, zero)
    safe = where(is_zero, ones_like(norm), norm)
    rel = where(is_zero, multiply(lab, zero),
                realdiv(abs(subtract(lab, pred)), safe))
    return mean(rel, weights, metrics_collections, updates_collections,
                name or "mean_relative_error")


def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """1 - the (weighted) mean of sum(labels * predictions, dim) (inputs unit-normalized by
    the caller); weights broadcast to the products summed over `dim` (kept as size 1)."""
    lab, pred = _f32(labels), _f32(predictions)
    _compatible(pred, lab, "mean_cosine_distance")
    radial = reduce_sum(multiply(pred, lab), [dim], keepdims=True)
    value, update = mean(radial, weights, None, None, name or "mean_cosine_distance")
    one = _const(1.0)
    return _finish(subtract(one, value), subtract(one, update), metrics_collections,
                   updates_collections)


def percentage_below(values, threshold, weights=None, metrics_collections=None,
                     updates_collections=None, name=None):
    """The (weighted) fraction of values < threshold."""
    v = tensor(values)
    below = cast(less(v, tensor(threshold, dtype=v.dtype)), _F32)
    return mean(below, weights, metrics_collections, updates_collections,
                name or "percentage_below_threshold")


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None,
                name=None):
    """The element-wise (weighted) mean of `values` over the batches: variables
    total_tensor and count_tensor of values' (fully defined) shape."""
    with variable_scope(name, "mean"):
        values = _f32(values)
        if not values.shape.is_fully_defined():
            raise InvalidArgumentError("mean_tensor: the shape of values must be fully "
                                       f"defined, got {values.shape}")
        dims = values.shape.as_list()
        total = _metric_variable(dims, _F32, name="total_tensor")
        count = _metric_variable(dims, _F32, name="count_tensor")
        num = ones_like(values)
        w = _check_weights(weights, values, "mean_tensor")
        if w is not None:
            w = _broadcast_w(w, values)
            values = multiply(values, w)
            num = multiply(num, w)
        update_total = assign_add(total, values)
        update_count = assign_add(count, num)
        zero = _const(0.0)
        value = div_no_nan(total.value(), maximum(count.value(), zero), name="value")
        update_op = div_no_nan(update_total, maximum(update_count, zero), name="update_op")
    return _finish(value, update_op, metrics_collections, updates_collections)


# ---- counts -------------------------------------------------------------------------------

def _count_condition(cond, weights, metrics_collections, updates_collections, what):
    count = _metric_variable([], _F32, name="count")
    v = cast(cond, _F32)
    w = _check_weights(weights, v, what)
    if w is not None:
        v = multiply(v, cast(w, _F32))
    update_op = assign_add(count, reduce_sum(v))
    return _finish(count.value(), update_op, metrics_collections, updates_collections)


def _counter(default_name, lab_true, pred_true):
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name):
            lab, pred, weights = _prepare(labels, predictions, weights, default_name,
                                          dtypes.bool)
            if not lab_true:
                lab = logical_not(lab)
            if not pred_true:
                pred = logical_not(pred)
            return _count_condition(logical_and(lab, pred), weights, metrics_collections,
                                    updates_collections, default_name)
    metric.__name__ = metric.__qualname__ = default_name
    metric.__doc__ = (f"The (weighted) number of {default_name.replace('_', ' ')} of boolean "
                      "predictions (labels and predictions are cast to bool).")
    return metric


true_positives = _counter("true_positives", True, True)
false_positives = _counter("false_positives", False, True)
true_negatives = _counter("true_negatives", False, False)
false_negatives = _counter("false_negatives", True, False)

_KEYS = {"tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives",
         "fp": "false_positives"}


def _confusion_at_thresholds(labels, predictions, thresholds, weights, includes):
    """{key: variable read}, {key: update} of the weighted tp/fn/tn/fp counts of
    predictions > thresholds[i] ([len(thresholds)] float32 variables named as TF's)."""
    th = np.asarray(thresholds, np.float32).reshape(-1)
    lab, pred, weights = _prepare(labels, predictions, weights,
                                  "confusion matrix at thresholds")
    lab = cast(lab, dtypes.bool)
    w = _check_weights(weights, pred, "confusion matrix at thresholds")
    lab = reshape(lab, [1, -1])
    above = greater(reshape(pred, [1, -1]), tensor(th.reshape(-1, 1)))    # [t, n]
    if w is not None:
        w = reshape(_broadcast_w(w, pred), [1, -1])
    conds = {"tp": logical_and(lab, above), "fn": logical_and(lab, logical_not(above)),
             "tn": logical_and(logical_not(lab), logical_not(above)),
             "fp": logical_and(logical_not(lab), above)}
    values, updates = {}, {}
    for key in ("tp", "fn", "tn", "fp"):
        if key not in includes:
            continue
        var = _metric_variable([th.size], _F32, name=_KEYS[key])
        v = cast(conds[key], _F32)
        if w is not None:
            v = multiply(v, w)
        values[key] = var.value()
        updates[key] = assign_add(var, reduce_sum(v, 1))
    return values, updates


def _at_thresholds(key):
    default_name = _KEYS[key]

    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name):
            values, updates = _confusion_at_thresholds(labels, predictions, thresholds,
                                                       weights, (key,))
        return _finish(values[key], updates[key], metrics_collections, updates_collections)
    metric.__name__ = metric.__qualname__ = default_name + "_at_thresholds"
    metric.__doc__ = (f"The (weighted) {default_name.replace('_', ' ')} at each threshold "
                      "(a prediction is positive when above it): [len(thresholds)] float32.")
    return metric


true_positives_at_thresholds = _at_thresholds("tp")
false_positives_at_thresholds = _at_thresholds("fp")
true_negatives_at_thresholds = _at_thresholds("tn")
false_negatives_at_thresholds = _at_thresholds("fn")


def _ratio_at_thresholds(default_name, other):
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with variable_scope(name, default_name):
            values, updates = _confusion_at_thresholds(labels, predictions, thresholds,
                                                       weights, ("tp", other))
            eps = _const(1e-7)

            def ratio(s, name_):
                return realdiv(s["tp"], add(add(eps, s["tp"]), s[other]), name=name_)
            value = ratio(values, "value")
            update_op = ratio(updates, "update_op")
        return _finish(value, update_op, metrics_collections, updates_collections)
    metric.__name__ = metric.__qualname__ = default_name
    metric.__doc__ = (f"tp / (tp + {other} + 1e-7) at each threshold: [len(thresholds)].")
    return metric


precision_at_thresholds = _ratio_at_thresholds("precision_at_thresholds", "fp")
recall_at_thresholds = _ratio_at_thresholds("recall_at_thresholds", "fn")


def _even_thresholds(num_thresholds):
    eps = 1e-7
    inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - eps] + inner + [1.0 + eps]


def _pick(v, index):
    return gather(v, cast(index, dtypes.int32))


def sensitivity_at_specificity(labels, predictions, specificity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """The sensitivity at the first threshold whose specificity is nearest `specificity`."""
    if specificity < 0 or specificity > 1:
        raise InvalidArgumentError("`specificity` must be in the range [0, 1].")
    with variable_scope(name, "sensitivity_at_specificity"):
        values, updates = _confusion_at_thresholds(labels, predictions,
                                                   _even_thresholds(num_thresholds), weights,
                                                   ("tp", "fn", "tn", "fp"))
        eps = _const(1e-7)

        def compute(s, name_):
            spec = realdiv(s["tn"], add(add(s["tn"], s["fp"]), eps))
            i = argmin(abs(subtract(spec, _const(specificity))), 0)
            tp, fn = _pick(s["tp"], i), _pick(s["fn"], i)
            return realdiv(tp, add(add(tp, fn), eps), name=name_)
        value = compute(values, "value")
        update_op = compute(updates, "update_op")
    return _finish(value, update_op, metrics_collections, updates_collections)


def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """The specificity at the last threshold whose sensitivity is nearest `sensitivity`."""
    if sensitivity < 0 or sensitivity > 1:
        raise InvalidArgumentError("`sensitivity` must be in the range [0, 1].")
    with variable_scope(name, "specificity_at_sensitivity"):
        values, updates = _confusion_at_thresholds(labels, predictions,
                                                   _even_thresholds(num_thresholds), weights,
                                                   ("tp", "fn", "tn", "fp"))
        eps = _const(1e-7)

        def compute(s, name_):
            sens = realdiv(s["tp"], add(add(s["tp"], s["fn"]), eps))
            gap = abs(subtract(sens, _const(sensitivity)))
            at_min = cast(equal(gap, reduce_min(gap)), _I64)
            i = argmax(cumsum(at_min), 0)          # the last index at the minimum
            tn, fp = _pick(s["tn"], i), _pick(s["fp"], i)
            return realdiv(tn, add(add(tn, fp), eps), name=name_)
        value = compute(values, "value")
        update_op = compute(updates, "update_op")
    return _finish(value, update_op, metrics_collections, updates_collections)


# ---- class-id metrics --------------------------------------------------------------------

def _flat(x):
    return x if x.shape.ndims == 1 else reshape(x, [-1])


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """The mean intersection-over-union over the classes present (a nonempty row or column
    of the accumulated confusion matrix). update_op returns the float64 matrix."""
    with variable_scope(name, "mean_iou"):
        pred, lab = tensor(predictions), tensor(labels)
        _compatible(pred, lab, "mean_iou")
        w = _check_weights(weights, lab, "mean_iou")
        total_cm = _metric_variable([num_classes, num_classes], _F64,
                                    name="total_confusion_matrix")
        lab_oh = one_hot(_flat(cast(lab, _I64)), num_classes, dtype=_F64)     # [n, c]
        pred_oh = one_hot(_flat(cast(pred, _I64)), num_classes, dtype=_F64)
        if w is not None:
            lab_oh = multiply(lab_oh, expand_dims(_flat(_broadcast_w(w, lab, _F64)), 1))
        update_op = assign_add(total_cm, matmul(transpose(lab_oh), pred_oh))

        cm = cast(total_cm.value(), _F32)
        rows, cols = reduce_sum(cm, 0), reduce_sum(cm, 1)
        diag = reduce_sum(multiply(cm, _const(np.eye(num_classes))), 1)
        denom = subtract(add(rows, cols), diag)
        zero = _const(0.0)
        valid = reduce_sum(cast(greater(denom, zero), _F32))
        iou = realdiv(diag, where(greater(denom, zero), denom, ones_like(denom)))
        value = where(greater(valid, zero), realdiv(reduce_sum(iou), maximum(valid, _const(1.0))),
                      zero, name="mean_iou")
    return _finish(value, update_op, metrics_collections, updates_collections)


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None,
                            metrics_collections=None, updates_collections=None, name=None):
    """The mean over all num_classes of each class's accuracy (0 for a class not seen).
    update_op returns the per-class accuracies ([num_classes] float32)."""
    with variable_scope(name, "mean_accuracy"):
        lab_in = cast(tensor(labels), _I64)
        w = _check_weights(weights, lab_in, "mean_per_class_accuracy")
        lab = _flat(lab_in)
        pred = _flat(cast(tensor(predictions), _I64))
        _compatible(pred, lab, "mean_per_class_accuracy")
        total = _metric_variable([num_classes], _F32, name="total")
        count = _metric_variable([num_classes], _F32, name="count")
        oh = one_hot(lab, num_classes, dtype=_F32)                         # [n, c]
        is_correct = cast(equal(pred, lab), _F32)
        ones = ones_like(is_correct)
        if w is not None:
            w = _flat(_broadcast_w(w, lab_in))
            is_correct = multiply(is_correct, w)
            ones = multiply(ones, w)
        update_total = assign_add(total, reduce_sum(multiply(oh, expand_dims(ones, 1)), 0))
        update_count = assign_add(count, reduce_sum(multiply(oh, expand_dims(is_correct, 1)),
                                                    0))
        zero = _const(0.0)
        per_class = div_no_nan(count.value(), maximum(total.value(), zero))
        value = reduce_mean(per_class, name="mean_accuracy")
        update_op = div_no_nan(update_count, maximum(update_total, zero), name="update_op")
    return _finish(value, update_op, metrics_collections, updates_collections)


# ---- @k metrics on sets of class ids -----------------------------------------------------

def _at_k_name(name, k=None, class_id=None):
    name = f"{name}_at_{k}" if k is not None else f"{name}_at_k"
    return name if class_id is None else f"{name}_class{class_id}"


def _labels_and_presence(labels, predictions_idx):
    """labels as int64 [D1, ... DN, L] beside predictions_idx [D1, ... DN, k], and a bool
    mask of the entries that are set elements (None: all; a SparseTensor's absent entries
    are not)."""
    rank = predictions_idx.shape.ndims
    if isinstance(labels, SparseTensorValue):
        labels = SparseTensor(*labels)
    if isinstance(labels, SparseTensor):
        ids = sparse_tensor_to_dense(labels, default_value=-1)
        present = sparse_tensor_to_dense(
            SparseTensor(labels.indices, ones_like(cast(labels.values, _F32)),
                         labels.dense_shape), default_value=0.0)
        ids, present = cast(ids, _I64), greater(present, _const(0.0))
        nd = labels.dense_shape.shape.dims[0] if labels.dense_shape.shape.ndims else None
        if rank is not None and nd is not None and nd + 1 == rank:
            ids, present = expand_dims(ids, -1), expand_dims(present, -1)
        elif nd is not None and nd != rank:   # (an unknown rank is taken as predictions')
            raise InvalidArgumentError(f"Unexpected labels rank {nd} for predictions rank "
                                       f"{rank}: labels rank should be the predictions' or "
                                       "one less.")
        return ids, present
    ids = cast(tensor(labels), _I64)
    lr = ids.shape.ndims
    if lr is None or rank is None:
        raise InvalidArgumentError("the ranks of labels and predictions must be known")
    if lr + 1 == rank:
        ids = expand_dims(ids, -1)
    elif lr != rank:
        raise InvalidArgumentError(f"Unexpected labels shape {ids.shape.as_list()} for "
                                   f"predictions shape {predictions_idx.shape.as_list()}. "
                                   "Predictions rank should be the same rank as labels rank "
                                   "or labels rank plus one .")
    return ids, None


def _member(a, b, b_present):
    """[..., K] bool: a[..., i] is a (present) element of the row b[..., :]."""
    eq = equal(expand_dims(a, -1), expand_dims(b, -2))                  # [..., K, L]
    if b_present is not None:
        eq = logical_and(eq, expand_dims(b_present, -2))
    return reduce_any(eq, -1)


def _first(a, a_present):
    """[..., K] bool: a[..., i] is present and no present a[..., j < i] equals it."""
    n = a.shape.dims[-1] if a.shape.ndims else None
    if n is not None:
        earlier = tensor(np.tri(n, n, -1, dtype=bool))                  # [i, j]: j < i
    else:
        r = range_(shape(a)[-1])
        earlier = less(expand_dims(r, 0), expand_dims(r, 1))
    eq = logical_and(equal(expand_dims(a, -1), expand_dims(a, -2)), earlier)
    if a_present is not None:
        eq = logical_and(eq, expand_dims(a_present, -2))
    first = logical_not(reduce_any(eq, -1))
    return first if a_present is None else logical_and(first, a_present)


def _contains(a, a_present, class_id):
    hit = equal(a, tensor(np.int64(class_id)))
    if a_present is not None:
        hit = logical_and(hit, a_present)
    return reduce_any(hit, -1)


def _set_counts(labels, present, pred_idx, class_id, keys):
    """Per-row counts {tp, fp, fn} (float64, shape [D1, ... DN]) of the sets of top-k ids
    against the sets of labels, restricted to `class_id` when given."""
    out = {}
    if class_id is not None:
        in_p = _contains(pred_idx, None, class_id)
        in_l = _contains(labels, present, class_id)
        conds = {"tp": logical_and(in_p, in_l), "fp": logical_and(in_p, logical_not(in_l)),
                 "fn": logical_and(in_l, logical_not(in_p))}
        return {k: cast(conds[k], _F64) for k in keys}
    first_p = _first(pred_idx, None)
    p_in_l = _member(pred_idx, labels, present)
    if "tp" in keys:
        out["tp"] = reduce_sum(cast(logical_and(first_p, p_in_l), _F64), -1)
    if "fp" in keys:
        out["fp"] = reduce_sum(cast(logical_and(first_p, logical_not(p_in_l)), _F64), -1)
    if "fn" in keys:
        l_in_p = _member(labels, pred_idx, None)
        out["fn"] = reduce_sum(cast(logical_and(_first(labels, present),
                                                logical_not(l_in_p)), _F64), -1)
    return out


def _streaming_at_top_k(kind, labels, predictions_idx, k, class_id, weights,
                        metrics_collections, updates_collections, name):
    other = "fp" if kind == "precision" else "fn"
    long = {"tp": "true_positive", "fp": "false_positive", "fn": "false_negative"}
    with variable_scope(name, _at_k_name(kind, k, class_id)):
        pred_idx = cast(tensor(predictions_idx), _I64)
        if pred_idx.shape.ndims is None or pred_idx.shape.ndims < 1:
            raise InvalidArgumentError("The rank of predictions_idx must be at least 1.")
        lab, present = _labels_and_presence(labels, pred_idx)
        counts = _set_counts(lab, present, pred_idx, class_id, ("tp", other))
        w = _check_weights(weights, counts["tp"], _at_k_name(kind, k, class_id))
        state, ups = {}, {}
        for key in ("tp", other):
            c = counts[key]
            if w is not None:
                c = multiply(c, cast(w, _F64))
            var = _metric_variable([], _F64, name=_at_k_name(long[key], k, class_id))
            state[key] = var.value()
            ups[key] = assign_add(var, reduce_sum(c))
        value = realdiv(state["tp"], add(state["tp"], state[other]), name="value")
        update_op = realdiv(ups["tp"], add(ups["tp"], ups[other]), name="update")
    return _finish(value, update_op, metrics_collections, updates_collections)


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                       metrics_collections=None, updates_collections=None, name=None):
    """Precision of the predicted class ids `predictions_idx` ([D1, ... DN, k]) against the
    label ids: true positives / (true positives + false positives), float64."""
    return _streaming_at_top_k("precision", labels, predictions_idx, k, class_id, weights,
                               metrics_collections, updates_collections, name)


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                    metrics_collections=None, updates_collections=None, name=None):
    """Recall of the predicted class ids `predictions_idx` ([D1, ... DN, k]) against the
    label ids: true positives / (true positives + false negatives), float64."""
    return _streaming_at_top_k("recall", labels, predictions_idx, k, class_id, weights,
                               metrics_collections, updates_collections, name)


def _top_k_idx(predictions, k):
    if k < 1:
        raise InvalidArgumentError(f"Invalid k={k}.")
    return top_k(tensor(predictions), k)[1]


def precision_at_k(labels, predictions, k, class_id=None, weights=None,
                   metrics_collections=None, updates_collections=None, name=None):
    """precision_at_top_k of the top `k` classes of `predictions` ([D1, ... DN, C] scores)."""
    return precision_at_top_k(labels, _top_k_idx(predictions, k), k, class_id, weights,
                              metrics_collections, updates_collections, name)


def recall_at_k(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
                updates_collections=None, name=None):
    """recall_at_top_k of the top `k` classes of `predictions` ([D1, ... DN, C] scores)."""
    return recall_at_top_k(labels, _top_k_idx(predictions, k), k, class_id, weights,
                           metrics_collections, updates_collections, name)


sparse_precision_at_k = precision_at_k


def _average_precision_rows(labels, present, pred_idx, k):
    """[D1, ... DN] float64: sum over i <= k of precision@i where prediction i is a label,
    divided by min(k, number of distinct labels of the row)."""
    relevant = cast(_member(pred_idx, labels, present), _F64)           # [..., k]
    hits = cumsum(relevant, axis=-1)
    rank = _const(np.arange(1, k + 1), np.float64)
    prec_sum = reduce_sum(multiply(realdiv(hits, rank), relevant), -1)
    if present is None:
        n = labels.shape.dims[-1] if labels.shape.ndims else None
        if n is None:
            n = cast(shape(labels)[-1], _F64)
            num = minimum(n, _const(float(k), np.float64))
        else:
            num = _const(float(min(n, k)), np.float64)
    else:
        distinct = reduce_sum(cast(_first(labels, present), _F64), -1)
        num = minimum(distinct, _const(float(k), np.float64))
    return realdiv(prec_sum, num)


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """The mean over rows of the average precision of the top `k` predicted classes
    (local variables total and max, float64)."""
    pred_idx = cast(_top_k_idx(predictions, k), _I64)
    with variable_scope(name, _at_k_name("average_precision", k)):
        lab, present = _labels_and_presence(labels, pred_idx)
        ap = _average_precision_rows(lab, present, pred_idx, k)
        w = _check_weights(weights, ap, "average_precision_at_k")
        if w is not None:
            w = _broadcast_w(w, ap, _F64)
            ap = multiply(ap, w)
            batch_max = reduce_sum(w)
        else:
            batch_max = reduce_sum(ones_like(ap))
        max_var = _metric_variable([], _F64, name="max")
        total_var = _metric_variable([], _F64, name="total")
        max_up = assign_add(max_var, batch_max)
        total_up = assign_add(total_var, reduce_sum(ap))
        value = div_no_nan(total_var.value(), max_var.value(), name="mean")
        update_op = div_no_nan(total_up, max_up, name="update")
    return _finish(value, update_op, metrics_collections, updates_collections)


sparse_average_precision_at_k = average_precision_at_k

__all__ = [
    "average_precision_at_k", "false_negatives", "false_negatives_at_thresholds",
    "false_positives", "false_positives_at_thresholds", "mean_absolute_error",
    "mean_cosine_distance", "mean_iou", "mean_per_class_accuracy", "mean_relative_error",
    "mean_tensor", "percentage_below", "precision_at_k", "precision_at_thresholds",
    "precision_at_top_k", "recall_at_k", "recall_at_thresholds", "recall_at_top_k",
    "root_mean_squared_error", "sensitivity_at_specificity", "sparse_average_precision_at_k",
    "sparse_precision_at_k", "specificity_at_sensitivity", "true_negatives",
    "true_negatives_at_thresholds", "true_positives", "true_positives_at_thresholds",
]
