"""tf.estimator (TF 1.x): an Estimator runs a model_fn's graph for training, evaluation and
prediction, keeping its variables in checkpoints under model_dir between calls, as TF's
"Custom Estimators" and "Building a CNN with tf.layers" tutorials use it:

    clf = tf.estimator.Estimator(model_fn=cnn_model_fn, model_dir="/tmp/mnist_model")
    train_input_fn = tf.estimator.inputs.numpy_input_fn(x={"x": train_data}, y=labels,
                                                        batch_size=100, num_epochs=None,
                                                        shuffle=True)
    clf.train(input_fn=train_input_fn, steps=2000, hooks=[logging_hook])
    print(clf.evaluate(input_fn=eval_input_fn))          # {"accuracy": ..., "loss": ...}

model_fn(features, labels, mode[, params][, config]) returns an EstimatorSpec; input_fn()
returns (features, labels) tensors or a tf.data.Dataset of them. Training runs in a
MonitoredTrainingSession (checkpoints, step counter, summaries under model_dir); each
call builds a fresh graph, and with an XLA jit level in RunConfig(session_config=...) the
step compiles as any session's graph does.

The premade estimators of TF's "Premade Estimators" tutorial and the census wide-and-deep
scripts are Estimators with built-in model_fns over tf.feature_column columns
(canned.py): DNNClassifier, DNNRegressor, LinearClassifier, LinearRegressor,
DNNLinearCombinedClassifier and DNNLinearCombinedRegressor, with TF 1.15's defaults
(optimizers, loss_reduction=SUM), evaluate keys and predict dicts:

    cols = [tf.feature_column.numeric_column(k) for k in ("SepalLength", "SepalWidth", ...)]
    clf = tf.estimator.DNNClassifier(hidden_units=[10, 10], feature_columns=cols,
                                     n_classes=3)
    clf.train(input_fn=train_input_fn, steps=1000)
    clf.evaluate(input_fn=eval_input_fn)   # {"accuracy", "average_loss", "loss", ...}
    for p in clf.predict(input_fn=predict_input_fn):
        p["class_ids"][0], p["probabilities"]

The production workflow of TF 1.x scripts: tf.estimator.train_and_evaluate(est, TrainSpec,
EvalSpec) evaluates at each checkpoint save and runs the EvalSpec's exporters
(LatestExporter, BestExporter, FinalExporter; training.py, exporter.py);
est.export_savedmodel(base, serving_input_receiver_fn) writes a SavedModel with the
EstimatorSpec's export_outputs as signatures (export.py, exporting.py);
warm_start_from=path or WarmStartSettings initializes a new model_dir's training from a
checkpoint (tf.train.warm_start).
"""

from __future__ import annotations

from xlapy.compat.v1.estimator import experimental, export, inputs
from xlapy.compat.v1.estimator.canned import (DNNClassifier, DNNLinearCombinedClassifier,
                                              DNNLinearCombinedRegressor, DNNRegressor,
                                              LinearClassifier, LinearRegressor)
from xlapy.compat.v1.estimator.estimator import Estimator
from xlapy.compat.v1.estimator.exporter import (BestExporter, Exporter, FinalExporter,
                                                LatestExporter)
from xlapy.compat.v1.estimator.spec import EstimatorSpec, ModeKeys, RunConfig
from xlapy.compat.v1.estimator.training import EvalSpec, TrainSpec, train_and_evaluate
from xlapy.compat.v1.estimator.warm_start_settings import WarmStartSettings
from xlapy.compat.v1.ops.misc_more3 import (classifier_parse_example_spec,
                                            regressor_parse_example_spec)

__all__ = ["Estimator", "EstimatorSpec", "ModeKeys", "RunConfig", "inputs", "export",
           "experimental",
           "DNNClassifier", "DNNRegressor", "LinearClassifier", "LinearRegressor",
           "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor", "TrainSpec",
           "EvalSpec", "train_and_evaluate", "Exporter", "LatestExporter", "BestExporter",
           "FinalExporter", "WarmStartSettings", "classifier_parse_example_spec",
           "regressor_parse_example_spec"]
