"""Premade estimators (TF 1.15's tf.estimator.DNNClassifier, DNNRegressor, LinearClassifier,
LinearRegressor, DNNLinearCombinedClassifier, DNNLinearCombinedRegressor): model_fns built
from feature columns, run by Estimator's train/evaluate/predict.

Models (variable names as TF's, so checkpoints look familiar):
  DNN     dnn/input_from_feature_columns/input_layer/..., dnn/hiddenlayer_<i>/{kernel,bias}
          (activation_fn, then batch norm dnn/hiddenlayer_<i>/batchnorm_<i> when batch_norm,
          then dropout in training when dropout), dnn/logits/{kernel,bias}.
  Linear  linear/linear_model/<column>/weights, linear/linear_model/bias_weights.
  Combined: the sum of both logits; each part has its own optimizer, the global step
          counts one per step.
Default optimizers as TF 1.x's: Adagrad(0.05) for DNNs, Ftrl(min(0.2, 1/sqrt(number of
linear feature columns))) for linear models. An optimizer is a name ('Adagrad', 'Adam',
'Ftrl', 'RMSProp', 'SGD'), an Optimizer, or a callable returning one.

Heads (TF 1.15's v1 heads):
  n_classes == 2  one logit, sigmoid cross entropy; labels 0/1 (or label_vocabulary strings).
  n_classes > 2   n logits, sparse softmax cross entropy; labels in [0, n_classes).
  regressors      label_dimension logits, squared error summed over the label dimension.
Loss reduction: TF 1.15's tf.estimator.* (v1) canned estimators default to
loss_reduction=tf.losses.Reduction.SUM (the training loss is the weighted sum over the batch;
the v2 classes use SUM_OVER_BATCH_SIZE), and so do these; SUM_OVER_BATCH_SIZE may be passed.
evaluate() reports `average_loss` (the weighted mean per-example loss over all of the
evaluation data) and `loss` (the mean over batches of the training loss, so with SUM it is
about batch_size * average_loss), as TF 1.15 does. Classifiers also report `accuracy`, and
binary ones `accuracy_baseline`, `auc`, `auc_precision_recall`, `precision`, `recall`,
`label/mean` and `prediction/mean`; regressors `label/mean` and `prediction/mean`.
predict() yields, per example: classifiers `logits`, `probabilities`, `class_ids`, `classes`
(bytes: the label_vocabulary entry or the id's text), `all_class_ids`, `all_classes`, and
binary ones `logistic`; regressors `predictions`.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.estimator.estimator import Estimator
from xlapy.compat.v1.estimator.spec import EstimatorSpec, ModeKeys
from xlapy.compat.v1.ops.nn_ops import relu

_DNN_LEARNING_RATE = 0.05
_LINEAR_LEARNING_RATE = 0.2


def _tf():
    import xlapy.compat.v1 as tf
    return tf


def _linear_learning_rate(num_columns):
    return min(_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(max(num_columns, 1)))


def _optimizer(opt, default_lr):
    """An Optimizer from a name, an instance or a callable (TF's get_optimizer_instance)."""
    tf = _tf()
    names = {"Adagrad": tf.train.AdagradOptimizer, "Adam": tf.train.AdamOptimizer,
             "Ftrl": tf.train.FtrlOptimizer, "RMSProp": tf.train.RMSPropOptimizer,
             "SGD": tf.train.GradientDescentOptimizer}
    if isinstance(opt, str):
        if opt not in names:
            raise InvalidArgumentError(f"Unsupported optimizer name: {opt}. Supported names "
                                       f"are: {tuple(sorted(names))}")
        return names[opt](learning_rate=default_lr)
    if isinstance(opt, tf.train.Optimizer):
        return opt
    if callable(opt):
        opt = opt()
        if isinstance(opt, tf.train.Optimizer):
            return opt
    raise InvalidTypeError(f"The given object is not an Optimizer instance. Given: {opt!r}")


# ---- heads -----------------------------------------------------------------------------------

class _Head:
    """The loss, predictions and metrics of a model's logits (TF's v1 _Head)."""

    def __init__(self, kind, n_classes=2, label_dimension=1, weight_column=None,
                 label_vocabulary=None, loss_reduction=None):
        tf = _tf()
        self.kind, self.n_classes, self.label_dimension = kind, n_classes, label_dimension
        self.weight_column = weight_column
        self.label_vocabulary = None if label_vocabulary is None else list(label_vocabulary)
        self.loss_reduction = loss_reduction or tf.losses.Reduction.SUM
        if self.loss_reduction not in (tf.losses.Reduction.SUM,
                                       tf.losses.Reduction.SUM_OVER_BATCH_SIZE):
            raise InvalidArgumentError(f"Invalid loss_reduction: {loss_reduction} (xlapy's "
                                       "premade estimators take SUM or SUM_OVER_BATCH_SIZE)")
        if kind == "classifier":
            if n_classes is None or n_classes < 2:
                raise InvalidArgumentError(f"n_classes must be > 1: {n_classes}")
            if self.label_vocabulary is not None:
                if len(self.label_vocabulary) != n_classes:
                    raise InvalidArgumentError(f"label_vocabulary does not have n_classes "
                                               f"items. label_vocabulary: {label_vocabulary} "
                                               f"n_classes: {n_classes}")
                if not all(isinstance(v, str) for v in self.label_vocabulary):
                    raise InvalidTypeError("label_vocabulary should be a list of strings")
        elif label_dimension < 1:
            raise InvalidArgumentError(f"Invalid label_dimension {label_dimension}.")

    @property
    def logits_dimension(self):
        if self.kind == "classifier":
            return 1 if self.n_classes == 2 else self.n_classes
        return self.label_dimension

    def _weights(self, features):
        tf = _tf()
        if self.weight_column is None:
            return None
        key = self.weight_column if isinstance(self.weight_column, str) else \
            getattr(self.weight_column, "key", None)
        if key is None:
            raise InvalidTypeError(f"weight_column must be a string or a numeric_column, got "
                                   f"{self.weight_column!r}")
        if key not in features:
            raise InvalidArgumentError(f"weight_column {key!r} is not in the features "
                                       f"({sorted(features)})")
        return tf.reshape(tf.cast(features[key], dtypes.float32), [-1, 1])

    def _labels(self, labels):
        """[batch, 1] int64 class ids (classifiers) or [batch, label_dim] float32."""
        tf = _tf()
        if labels is None:
            raise InvalidArgumentError("You must provide a labels Tensor. Given: None.")
        if isinstance(labels, dict):
            if len(labels) != 1:
                raise InvalidArgumentError(f"labels must be one tensor, got a dict of "
                                           f"{sorted(labels)}")
            labels = next(iter(labels.values()))
        labels = tf.convert_to_tensor(labels)
        if self.kind == "regressor":
            return tf.reshape(tf.cast(labels, dtypes.float32), [-1, self.label_dimension])
        if self.label_vocabulary is not None:
            if labels.dtype != dtypes.string:
                raise InvalidTypeError("Labels dtype should be string if there is a "
                                       f"vocabulary. Given: {labels.dtype.name}")
            from xlapy.compat.v1.ops.lookup_ops import vocabulary_lookup
            ids = vocabulary_lookup(labels, self.label_vocabulary, default_value=-1)
        else:
            if labels.dtype == dtypes.string:
                raise InvalidTypeError("Labels dtype should be integer; give label_vocabulary "
                                       "for string labels")
            ids = tf.cast(labels, dtypes.int64)
        ids = tf.reshape(ids, [-1, 1])
        check = tf.debugging.assert_equal(
            tf.reduce_all(tf.logical_and(
                tf.greater_equal(ids, tf.zeros_like(ids)),
                tf.less(ids, tf.ones_like(ids) * np.int64(self.n_classes)))),
            tf.constant(True),
            message=f"Labels must be in [0, {self.n_classes}) (or in label_vocabulary)")
        with tf.control_dependencies([check]):
            return tf.identity(ids)

    def _class_names(self):
        return [v.encode() for v in self.label_vocabulary] if self.label_vocabulary \
            is not None else [str(i).encode() for i in range(self.n_classes)]

    def predictions(self, logits):
        tf = _tf()
        if self.kind == "regressor":
            return {"predictions": logits}
        n = self.n_classes
        out = {"logits": logits}
        if n == 2:
            logistic = tf.sigmoid(logits)
            probs = tf.concat([tf.subtract(tf.ones_like(logistic), logistic), logistic], 1)
            out["logistic"] = logistic
        else:
            probs = tf.nn.softmax(logits)
        class_ids = tf.expand_dims(tf.argmax(probs, 1), 1)
        names = tf.constant(np.array(self._class_names(), dtype=object))
        batch = tf.shape(logits)[:1]
        out.update({
            "probabilities": probs,
            "class_ids": class_ids,
            "classes": tf.gather(names, class_ids),
            "all_class_ids": tf.tile(tf.constant(np.arange(n, dtype=np.int32)[None, :]),
                                     tf.concat([batch, tf.constant([1])], 0)),
            "all_classes": tf.tile(tf.expand_dims(names, 0),
                                   tf.concat([batch, tf.constant([1])], 0)),
        })
        return out

    def export_outputs(self, preds):
        """TF's v1 heads' signatures: serving_default and classification (classes: every
        class name, scores: the probabilities), binary ones also regression (the logistic),
        regressors serving_default and regression; predict has every prediction."""
        from xlapy.compat.v1.estimator import export as ex
        predict = ex.PredictOutput(preds)
        if self.kind == "regressor":
            reg = ex.RegressionOutput(preds["predictions"])
            return {"serving_default": reg, "regression": reg, "predict": predict}
        cls = ex.ClassificationOutput(scores=preds["probabilities"],
                                      classes=preds["all_classes"])
        out = {"serving_default": cls, "classification": cls, "predict": predict}
        if self.n_classes == 2:
            out["regression"] = ex.RegressionOutput(preds["logistic"])
        return out

    def unreduced_loss(self, labels, logits):
        tf = _tf()
        if self.kind == "regressor":
            return tf.square(tf.subtract(logits, labels))
        if self.n_classes == 2:
            return tf.nn.sigmoid_cross_entropy_with_logits(
                labels=tf.cast(labels, dtypes.float32), logits=logits)
        return tf.expand_dims(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.reshape(labels, [-1]), logits=logits), 1)

    def loss(self, unreduced, weights):
        tf = _tf()
        w = unreduced if weights is None else tf.multiply(unreduced, weights)
        total = tf.reduce_sum(w)
        if self.loss_reduction == tf.losses.Reduction.SUM:
            return total
        return tf.div(total, tf.cast(tf.size(unreduced), dtypes.float32))

    def metrics(self, labels, preds, unreduced, weights):
        tf = _tf()
        m = tf.metrics
        w = weights
        out = {"average_loss": m.mean(unreduced, weights=w, name="average_loss")}
        if self.kind == "regressor":
            out["label/mean"] = m.mean(labels, weights=w, name="label/mean")
            out["prediction/mean"] = m.mean(preds["predictions"], weights=w,
                                            name="prediction/mean")
            return out
        out["accuracy"] = m.accuracy(labels, preds["class_ids"], weights=w, name="accuracy")
        if self.n_classes == 2:
            lab = tf.cast(labels, dtypes.float32)
            label_mean = m.mean(lab, weights=w, name="label/mean")
            out["label/mean"] = label_mean
            out["prediction/mean"] = m.mean(preds["logistic"], weights=w,
                                            name="prediction/mean")
            out["accuracy_baseline"] = tuple(
                tf.maximum(v, tf.subtract(tf.ones_like(v), v)) for v in label_mean)
            out["auc"] = m.auc(lab, preds["logistic"], weights=w, curve="ROC", name="auc")
            out["auc_precision_recall"] = m.auc(
                lab, preds["logistic"], weights=w, curve="PR",
                summation_method="careful_interpolation", name="auc_precision_recall")
            out["precision"] = m.precision(labels, preds["class_ids"], weights=w,
                                           name="precision")
            out["recall"] = m.recall(labels, preds["class_ids"], weights=w, name="recall")
        return out

    def spec(self, features, mode, logits, labels, train_op_fn):
        """The EstimatorSpec for `mode`; train_op_fn(loss) makes the train op."""
        tf = _tf()
        with tf.name_scope("head"):
            preds = self.predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=preds,
                                     export_outputs=self.export_outputs(preds))
            lab = self._labels(labels)
            weights = self._weights(features)
            unreduced = self.unreduced_loss(lab, logits)
            loss = self.loss(unreduced, weights)
        if mode == ModeKeys.EVAL:
            return EstimatorSpec(mode, predictions=preds, loss=loss,
                                 eval_metric_ops=self.metrics(lab, preds, unreduced, weights))
        tf.summary.scalar("loss", loss)
        return EstimatorSpec(mode, predictions=preds, loss=loss, train_op=train_op_fn(loss))


# ---- models ------------------------------------------------------------------------------------

def _dnn_logits(features, mode, hidden_units, feature_columns, units, activation_fn,
                dropout, batch_norm):
    tf = _tf()
    training = mode == ModeKeys.TRAIN
    with tf.variable_scope("dnn"):
        with tf.variable_scope("input_from_feature_columns"):
            net = tf.feature_column.input_layer(features, feature_columns)
        for i, n in enumerate(hidden_units):
            with tf.variable_scope(f"hiddenlayer_{i}") as scope:
                net = tf.layers.dense(net, n, activation=activation_fn,
                                      kernel_initializer=tf.glorot_uniform_initializer(),
                                      name=scope)
                if batch_norm:
                    net = tf.layers.batch_normalization(net, momentum=0.999,
                                                        training=training,
                                                        name=f"batchnorm_{i}")
                if dropout is not None and training:
                    net = tf.layers.dropout(net, rate=dropout, training=True)
        with tf.variable_scope("logits") as scope:
            return tf.layers.dense(net, units, activation=None,
                                   kernel_initializer=tf.glorot_uniform_initializer(),
                                   name=scope)


def _linear_logits(features, feature_columns, units, sparse_combiner):
    tf = _tf()
    with tf.variable_scope("linear"):
        return tf.feature_column.linear_model(features, feature_columns, units=units,
                                              sparse_combiner=sparse_combiner)


def _minimize(pairs, loss):
    """One train op applying each (optimizer, var scope) to its variables, then counting
    the global step once."""
    tf = _tf()
    step = tf.train.get_global_step()
    ops = []
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        for opt, scope in pairs:
            var_list = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope=scope)
            ops.append(opt.minimize(loss, var_list=var_list))
    with tf.control_dependencies(ops):
        return tf.assign_add(step, 1).op


def _check_columns(feature_columns, what):
    from xlapy.compat.v1.feature_column import _FeatureColumn
    cols = [feature_columns] if isinstance(feature_columns, _FeatureColumn) else \
        list(feature_columns or ())
    if not cols:
        raise InvalidArgumentError(f"{what}: feature_columns must not be empty")
    return cols


class _Premade(Estimator):
    """An Estimator built from (head, logits_fn(features, mode), optimizers)."""

    def _init(self, head, logits_fn, optimizers, model_dir, config, warm_start_from=None):
        def model_fn(features, labels, mode, config):
            if not isinstance(features, dict):
                raise InvalidTypeError(f"features should be a dictionary of `Tensor`s. Given "
                                       f"type: {type(features).__name__}")
            logits = logits_fn(features, mode)
            pairs = [(_optimizer(opt, lr), scope) for opt, lr, scope in optimizers]
            return head.spec(features, mode, logits, labels,
                             lambda loss: _minimize(pairs, loss))
        Estimator.__init__(self, model_fn, model_dir=model_dir, config=config,
                           warm_start_from=warm_start_from)


class DNNClassifier(_Premade):
    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 activation_fn=relu, dropout=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=None, batch_norm=False):
        cols = _check_columns(feature_columns, "DNNClassifier")
        head = _Head("classifier", n_classes, weight_column=weight_column,
                     label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)
        act = activation_fn
        units = list(hidden_units)
        self._init(head, lambda f, mode: _dnn_logits(f, mode, units, cols,
                                                     head.logits_dimension, act, dropout,
                                                     batch_norm),
                   [(optimizer, _DNN_LEARNING_RATE, "dnn")], model_dir, config,
                   warm_start_from)


class DNNRegressor(_Premade):
    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Adagrad", activation_fn=relu, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 loss_reduction=None, batch_norm=False):
        cols = _check_columns(feature_columns, "DNNRegressor")
        head = _Head("regressor", label_dimension=label_dimension,
                     weight_column=weight_column, loss_reduction=loss_reduction)
        act = activation_fn
        units = list(hidden_units)
        self._init(head, lambda f, mode: _dnn_logits(f, mode, units, cols,
                                                     head.logits_dimension, act, dropout,
                                                     batch_norm),
                   [(optimizer, _DNN_LEARNING_RATE, "dnn")], model_dir, config,
                   warm_start_from)


class LinearClassifier(_Premade):
    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None, partitioner=None,
                 warm_start_from=None, loss_reduction=None, sparse_combiner="sum"):
        cols = _check_columns(feature_columns, "LinearClassifier")
        head = _Head("classifier", n_classes, weight_column=weight_column,
                     label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)
        self._init(head, lambda f, mode: _linear_logits(f, cols, head.logits_dimension,
                                                        sparse_combiner),
                   [(optimizer, _linear_learning_rate(len(cols)), "linear")], model_dir,
                   config, warm_start_from)


class LinearRegressor(_Premade):
    def __init__(self, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Ftrl", config=None, partitioner=None,
                 warm_start_from=None, loss_reduction=None, sparse_combiner="sum"):
        cols = _check_columns(feature_columns, "LinearRegressor")
        head = _Head("regressor", label_dimension=label_dimension,
                     weight_column=weight_column, loss_reduction=loss_reduction)
        self._init(head, lambda f, mode: _linear_logits(f, cols, head.logits_dimension,
                                                        sparse_combiner),
                   [(optimizer, _linear_learning_rate(len(cols)), "linear")], model_dir,
                   config, warm_start_from)


def _combined(head, linear_feature_columns, linear_optimizer, dnn_feature_columns,
              dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout, batch_norm,
              linear_sparse_combiner):
    tf = _tf()
    lin = list(linear_feature_columns or ())
    dnn = list(dnn_feature_columns or ())
    if not lin and not dnn:
        raise InvalidArgumentError("Either linear_feature_columns or dnn_feature_columns "
                                   "must be defined.")
    if dnn and not dnn_hidden_units:
        raise InvalidArgumentError("dnn_hidden_units must be defined when "
                                   "dnn_feature_columns is specified.")
    act = dnn_activation_fn

    def logits_fn(features, mode):
        parts = []
        if dnn:
            parts.append(_dnn_logits(features, mode, list(dnn_hidden_units), dnn,
                                     head.logits_dimension, act, dnn_dropout, batch_norm))
        if lin:
            parts.append(_linear_logits(features, lin, head.logits_dimension,
                                        linear_sparse_combiner))
        return parts[0] if len(parts) == 1 else tf.add(parts[0], parts[1])
    opts = ([(dnn_optimizer, _DNN_LEARNING_RATE, "dnn")] if dnn else []) + \
        ([(linear_optimizer, _linear_learning_rate(len(lin)), "linear")] if lin else [])
    return logits_fn, opts


class DNNLinearCombinedClassifier(_Premade):
    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=relu, dnn_dropout=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=None, batch_norm=False,
                 linear_sparse_combiner="sum"):
        head = _Head("classifier", n_classes, weight_column=weight_column,
                     label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)
        logits_fn, opts = _combined(head, linear_feature_columns, linear_optimizer,
                                    dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                                    dnn_activation_fn, dnn_dropout, batch_norm,
                                    linear_sparse_combiner)
        self._init(head, logits_fn, opts, model_dir, config, warm_start_from)


class DNNLinearCombinedRegressor(_Premade):
    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=relu, dnn_dropout=None, label_dimension=1,
                 weight_column=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=None, batch_norm=False,
                 linear_sparse_combiner="sum"):
        head = _Head("regressor", label_dimension=label_dimension,
                     weight_column=weight_column, loss_reduction=loss_reduction)
        logits_fn, opts = _combined(head, linear_feature_columns, linear_optimizer,
                                    dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                                    dnn_activation_fn, dnn_dropout, batch_norm,
                                    linear_sparse_combiner)
        self._init(head, logits_fn, opts, model_dir, config, warm_start_from)
