"""tf.estimator.train_and_evaluate, TrainSpec and EvalSpec: TF 1.x's local training loop.

    train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=1000)
    eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=None,
                                      exporters=[tf.estimator.LatestExporter("exporter",
                                                                             receiver_fn)])
    metrics, export_results = tf.estimator.train_and_evaluate(est, train_spec, eval_spec)

As TF 1.14+ runs it in one process: one Estimator.train call up to max_steps, with a
checkpoint listener that evaluates the newly saved checkpoint (eval_spec.steps batches of
eval_spec.input_fn; None: until it ends) each time the CheckpointSaverHook saves one (every
RunConfig.save_checkpoints_steps steps or save_checkpoints_secs seconds; not the first
save, of the untrained or restored model), and once more at the end unless the last
checkpoint was evaluated, then runs the exporters into model_dir/export/<name>. TF also
throttles those evaluations to one per EvalSpec.throttle_secs; in this local loop xlapy
evaluates at every checkpoint, so the checkpoint frequency alone sets the evaluation
frequency (throttle_secs and start_delay_secs are checked and kept, not used). Returns the
last evaluation's metrics (None when training had nothing to do) and the exporters'
results of that evaluation.
"""

from __future__ import annotations

import collections
import os

from xlapy.compat.v1 import logging
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.train.session_run_hook import CheckpointSaverListener, SessionRunHook

__all__ = ["TrainSpec", "EvalSpec", "train_and_evaluate"]


def _hooks(hooks, what):
    hooks = tuple(hooks or ())
    for h in hooks:
        if not isinstance(h, SessionRunHook):
            raise InvalidTypeError(f"All hooks must be SessionRunHook instances, given: {h!r} "
                                   f"({what})")
    return hooks


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks"])):
    def __new__(cls, input_fn, max_steps=None, hooks=None):
        if not callable(input_fn):
            raise InvalidTypeError(f"`input_fn` must be callable, given: {input_fn!r}")
        if max_steps is not None and max_steps <= 0:
            raise InvalidArgumentError(f"Must specify max_steps > 0, given: {max_steps}")
        return super().__new__(cls, input_fn, max_steps, _hooks(hooks, "TrainSpec"))


class EvalSpec(collections.namedtuple("EvalSpec", [
        "input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs",
        "throttle_secs"])):
    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        from xlapy.compat.v1.estimator.exporter import Exporter
        if not callable(input_fn):
            raise InvalidTypeError(f"`input_fn` must be callable, given: {input_fn!r}")
        if steps is not None and steps <= 0:
            raise InvalidArgumentError(f"Must specify steps > 0, given: {steps}")
        if name is not None and not isinstance(name, str):
            raise InvalidTypeError(f"`name` must be string, given: {name!r}")
        if exporters is None:
            exporters = ()
        elif isinstance(exporters, Exporter):
            exporters = (exporters,)
        exporters = tuple(exporters)
        names = set()
        for e in exporters:
            if not isinstance(e, Exporter):
                raise InvalidTypeError(f"`exporters` must be an Exporter, an iterable of "
                                       f"Exporter, or None, found {e!r}.")
            if not e.name or e.name in names:
                raise InvalidArgumentError(f"`exporters` must have unique non-empty names; "
                                           f"{e.name!r} is not")
            names.add(e.name)
        if start_delay_secs < 0:
            raise InvalidArgumentError(f"Must specify start_delay_secs >= 0, given: "
                                       f"{start_delay_secs}")
        if throttle_secs < 0:
            raise InvalidArgumentError(f"Must specify throttle_secs >= 0, given: "
                                       f"{throttle_secs}")
        return super().__new__(cls, input_fn, steps, name, _hooks(hooks, "EvalSpec"),
                               exporters, start_delay_secs, throttle_secs)


class _Evaluator:
    """Evaluates the latest checkpoint (once each) and runs the exporters on it."""

    def __init__(self, estimator, eval_spec, max_steps):
        self._est, self._spec, self._max_steps = estimator, eval_spec, max_steps
        self._last_path = None
        self.metrics, self.export_results = None, None

    def evaluate_and_export(self):
        path = self._est.latest_checkpoint()
        if not path:
            logging.info("Estimator is not trained yet. Will start an evaluation when a "
                         "checkpoint is ready.")
            return
        if path == self._last_path:
            logging.info("No new checkpoint ready for evaluation. Skip the current "
                         "evaluation pass as evaluation results are expected to be same for "
                         "the same checkpoint.")
            return
        s = self._spec
        metrics = self._est.evaluate(s.input_fn, steps=s.steps, hooks=s.hooks, name=s.name,
                                     checkpoint_path=path)
        final = bool(self._max_steps) and metrics["global_step"] >= self._max_steps
        results = []
        for e in s.exporters:
            where = os.path.join(self._est.model_dir, "export", e.name)
            results.append(e.export(self._est, where, path, metrics, final))
        self._last_path = path
        self.metrics, self.export_results = metrics, results


class _EvaluateOnSave(CheckpointSaverListener):
    def __init__(self, evaluator):
        self._evaluator = evaluator

    def begin(self):
        self._first = True
        self._last_step = None

    def after_save(self, session, global_step_value):
        if self._first:  # the untrained (or restored) model's save
            self._first = False
            return
        self._last_step = global_step_value
        self._evaluator.evaluate_and_export()

    def end(self, session, global_step_value):
        if global_step_value != self._last_step:
            self._evaluator.evaluate_and_export()


def train_and_evaluate(estimator, train_spec, eval_spec):
    from xlapy.compat.v1.estimator.estimator import Estimator
    if not isinstance(estimator, Estimator):
        raise InvalidTypeError(f"`estimator` must have type `tf.estimator.Estimator`. Got: "
                               f"{type(estimator).__name__}")
    if not isinstance(train_spec, TrainSpec):
        raise InvalidTypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: "
                               f"{type(train_spec).__name__}")
    if not isinstance(eval_spec, EvalSpec):
        raise InvalidTypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: "
                               f"{type(eval_spec).__name__}")
    c = estimator.config
    logging.info("Start train and evaluate loop. The evaluate will happen after every "
                 "checkpoint. Checkpoint frequency is determined based on RunConfig "
                 "arguments: save_checkpoints_steps %s or save_checkpoints_secs %s.",
                 c.save_checkpoints_steps, c.save_checkpoints_secs)
    evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
    estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks),
                    max_steps=train_spec.max_steps,
                    saving_listeners=[_EvaluateOnSave(evaluator)])
    return evaluator.metrics, evaluator.export_results
