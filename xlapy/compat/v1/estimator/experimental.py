"""tf.estimator.experimental's early stopping hooks (TF 1.15's early_stopping.py), for
training in train_and_evaluate: every run_every_secs seconds (or run_every_steps steps)
the hook reads the evaluations written to the estimator's eval_dir (Estimator.evaluate
writes them; needs tensorboardX) and stops the training when its condition holds.

    hook = tf.estimator.experimental.stop_if_no_decrease_hook(
        est, "loss", max_steps_without_decrease=1000, run_every_secs=None,
        run_every_steps=100)
    tf.estimator.train_and_evaluate(est, tf.estimator.TrainSpec(input_fn, hooks=[hook]), ...)
"""

from __future__ import annotations

import operator

from xlapy.compat.v1 import logging
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.summary.event_reader import read_eval_metrics
from xlapy.compat.v1.train.session_run_hook import (SecondOrStepTimer, SessionRunArgs,
                                                    SessionRunHook, _global_step_tensor)

__all__ = ["make_early_stopping_hook", "stop_if_higher_hook", "stop_if_lower_hook",
           "stop_if_no_increase_hook", "stop_if_no_decrease_hook"]


class _StopOnPredicateHook(SessionRunHook):
    def __init__(self, should_stop_fn, run_every_secs=60, run_every_steps=None):
        if not callable(should_stop_fn):
            raise InvalidArgumentError("`should_stop_fn` must be callable.")
        self._fn = should_stop_fn
        self._timer = SecondOrStepTimer(every_secs=run_every_secs,
                                        every_steps=run_every_steps)

    def begin(self):
        self._gs = _global_step_tensor("early stopping hooks")

    def before_run(self, run_context):
        return SessionRunArgs(self._gs)

    def after_run(self, run_context, run_values):
        step = int(run_values.results)
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._fn():
                logging.info("Requesting early stopping at global step %d", step)
                run_context.request_stop()


def make_early_stopping_hook(estimator, should_stop_fn, run_every_secs=60,
                             run_every_steps=None):
    """A hook calling should_stop_fn() every run_every_secs (or run_every_steps) and
    stopping the training when it returns True."""
    if run_every_secs is not None and run_every_steps is not None:
        raise InvalidArgumentError("Only one of `run_every_secs` and `run_every_steps` can be "
                                   "set.")
    return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps)


def _threshold_hook(estimator, metric_name, threshold, is_better, eval_dir, min_steps,
                    run_every_secs, run_every_steps):
    eval_dir = eval_dir or estimator.eval_dir()

    def should_stop():
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            if metric_name not in metrics:
                raise InvalidArgumentError(f"metric_name {metric_name} not found in eval "
                                           f"metrics {sorted(metrics)} of step {step}")
            if is_better(metrics[metric_name], threshold):
                logging.info("At step %s, metric \"%s\" has value %s which passes the "
                             "threshold %s.", step, metric_name, metrics[metric_name],
                             threshold)
                return True
        return False
    return make_early_stopping_hook(estimator, should_stop, run_every_secs, run_every_steps)


def _no_improvement_hook(estimator, metric_name, max_steps, higher_is_better, eval_dir,
                         min_steps, run_every_secs, run_every_steps):
    eval_dir = eval_dir or estimator.eval_dir()
    better = operator.gt if higher_is_better else operator.lt

    def should_stop():
        best, best_step = None, None
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            if metric_name not in metrics:
                raise InvalidArgumentError(f"metric_name {metric_name} not found in eval "
                                           f"metrics {sorted(metrics)} of step {step}")
            value = metrics[metric_name]
            if best is None or better(value, best):
                best, best_step = value, step
            if step - best_step >= max_steps:
                logging.info("No %s in metric \"%s\" for %s steps, which is greater than or "
                             "equal to max steps (%s) configured for early stopping.",
                             "increase" if higher_is_better else "decrease", metric_name,
                             step - best_step, max_steps)
                return True
        return False
    return make_early_stopping_hook(estimator, should_stop, run_every_secs, run_every_steps)


def stop_if_higher_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                        run_every_secs=60, run_every_steps=None):
    return _threshold_hook(estimator, metric_name, threshold, operator.gt, eval_dir,
                           min_steps, run_every_secs, run_every_steps)


def stop_if_lower_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                       run_every_secs=60, run_every_steps=None):
    return _threshold_hook(estimator, metric_name, threshold, operator.lt, eval_dir,
                           min_steps, run_every_secs, run_every_steps)


def stop_if_no_increase_hook(estimator, metric_name, max_steps_without_increase,
                             eval_dir=None, min_steps=0, run_every_secs=60,
                             run_every_steps=None):
    return _no_improvement_hook(estimator, metric_name, max_steps_without_increase, True,
                                eval_dir, min_steps, run_every_secs, run_every_steps)


def stop_if_no_decrease_hook(estimator, metric_name, max_steps_without_decrease,
                             eval_dir=None, min_steps=0, run_every_secs=60,
                             run_every_steps=None):
    return _no_improvement_hook(estimator, metric_name, max_steps_without_decrease, False,
                                eval_dir, min_steps, run_every_secs, run_every_steps)
