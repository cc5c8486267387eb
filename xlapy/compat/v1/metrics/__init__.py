"""tf.metrics: streaming metrics as TF 1.x's (metrics_impl.py).

Each metric returns (value, update_op). Its state lives in local variables (collections
LOCAL_VARIABLES and METRIC_VARIABLES, so tf.local_variables_initializer() resets them)
created in a variable scope named after the metric (accuracy/total, accuracy/count, ...).
update_op adds one batch to the state and returns the metric over everything seen so far;
value reads the state without changing it.

metrics_impl.py holds mean, accuracy, mean_squared_error, precision, recall and auc;
metrics_more.py the rest of TF 1.x's tf.metrics (errors, counts, the *_at_thresholds
family, sensitivity/specificity, mean_iou, mean_per_class_accuracy, mean_tensor and the
@k metrics on class ids).
"""

from __future__ import annotations

from xlapy.compat.v1.metrics.metrics_impl import (accuracy, auc, mean, mean_squared_error,
                                                  precision, recall)
from xlapy.compat.v1.metrics.metrics_more import (
    average_precision_at_k, false_negatives, false_negatives_at_thresholds, false_positives,
    false_positives_at_thresholds, mean_absolute_error, mean_cosine_distance, mean_iou,
    mean_per_class_accuracy, mean_relative_error, mean_tensor, percentage_below,
    precision_at_k, precision_at_thresholds, precision_at_top_k, recall_at_k,
    recall_at_thresholds, recall_at_top_k, root_mean_squared_error, sensitivity_at_specificity,
    sparse_average_precision_at_k, sparse_precision_at_k, specificity_at_sensitivity,
    true_negatives, true_negatives_at_thresholds, true_positives, true_positives_at_thresholds)
