"""tf.estimator.Exporter, LatestExporter, BestExporter and FinalExporter: what
train_and_evaluate (an EvalSpec's exporters) exports after an evaluation, into
model_dir/export/<exporter name>/<timestamp> (Estimator.export_saved_model)."""

from __future__ import annotations

import os
import shutil

from xlapy.compat.v1 import logging
from xlapy.compat.v1.errors import InvalidArgumentError

__all__ = ["Exporter", "LatestExporter", "BestExporter", "FinalExporter"]


class Exporter:
    @property
    def name(self):
        raise NotImplementedError

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        raise NotImplementedError


def _check_name(name):
    if not name:
        raise InvalidArgumentError("Exporter name must be a non-empty string")
    return name


def _export(estimator, export_path, serving_input_receiver_fn, checkpoint_path, assets_extra,
            as_text) -> bytes:
    return estimator.export_saved_model(export_path, serving_input_receiver_fn,
                                        assets_extra=assets_extra, as_text=as_text,
                                        checkpoint_path=checkpoint_path)


def _garbage_collect(export_path, keep: int) -> None:
    """Deletes all but the newest `keep` timestamped exports under export_path."""
    if not keep or not os.path.isdir(export_path):
        return
    stamps = sorted(int(d) for d in os.listdir(export_path) if d.isdigit())
    for s in stamps[:-keep]:
        shutil.rmtree(os.path.join(export_path, str(s)), ignore_errors=True)


class LatestExporter(Exporter):
    """Exports after every evaluation, keeping the newest exports_to_keep (None: all)."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False,
                 exports_to_keep=5):
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise InvalidArgumentError("`exports_to_keep`, if provided, must be positive "
                                       "number")
        self._name = _check_name(name)
        self._fn, self._assets, self._as_text = serving_input_receiver_fn, assets_extra, \
            as_text
        self._keep = exports_to_keep

    name = property(lambda self: self._name)

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        out = _export(estimator, export_path, self._fn, checkpoint_path, self._assets,
                      self._as_text)
        _garbage_collect(export_path, self._keep)
        return out


class FinalExporter(Exporter):
    """Exports once, after the final evaluation (at train_spec.max_steps)."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        self._name = _check_name(name)
        self._fn, self._assets, self._as_text = serving_input_receiver_fn, assets_extra, \
            as_text

    name = property(lambda self: self._name)

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if not is_the_final_export:
            return None
        return _export(estimator, export_path, self._fn, checkpoint_path, self._assets,
                       self._as_text)


def _loss_smaller(best_eval_result, current_eval_result):
    key = "loss"
    if not best_eval_result or key not in best_eval_result:
        raise InvalidArgumentError("best_eval_result cannot be empty or no loss is found in "
                                   "it.")
    if not current_eval_result or key not in current_eval_result:
        raise InvalidArgumentError("current_eval_result cannot be empty or no loss is found "
                                   "in it.")
    return best_eval_result[key] > current_eval_result[key]


class BestExporter(Exporter):
    """Exports when an evaluation is better than every one before (compare_fn(best,
    current) -> bool; default: a smaller loss), keeping the newest exports_to_keep. On its
    first export for an estimator the best so far is read from the evaluations in the
    event files under model_dir/event_file_pattern (eval/*.tfevents.*, which
    Estimator.evaluate writes when tensorboardX is installed), those of earlier global
    steps than the current evaluation's (TF reads them all, the current one included, and
    so does not export at a run's first evaluation)."""

    def __init__(self, name="best_exporter", serving_input_receiver_fn=None,
                 event_file_pattern="eval/*.tfevents.*", compare_fn=_loss_smaller,
                 assets_extra=None, as_text=False, exports_to_keep=5):
        if not callable(compare_fn):
            raise InvalidArgumentError("`compare_fn` must not be None.")
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise InvalidArgumentError("`exports_to_keep`, if provided, must be a positive "
                                       "number. Got %s" % exports_to_keep)
        self._name = _check_name(name)
        self._fn, self._assets, self._as_text = serving_input_receiver_fn, assets_extra, \
            as_text
        self._compare, self._keep = compare_fn, exports_to_keep
        self._pattern = event_file_pattern
        self._best = None
        self._model_dir = None

    name = property(lambda self: self._name)

    def _best_of_event_files(self, pattern, before_step):
        from xlapy.compat.v1.errors import UnimplementedError
        from xlapy.compat.v1.summary.event_reader import events_in
        best = None
        try:
            by_step: dict = {}
            for ev in events_in(pattern):
                if ev.HasField("summary") and ev.step < before_step:
                    for v in ev.summary.value:
                        if v.HasField("simple_value"):
                            by_step.setdefault(ev.step, {})[v.tag] = v.simple_value
        except UnimplementedError:  # no tensorboardX: no event files to read
            return None
        for step in sorted(by_step):
            result = by_step[step]
            if best is None or self._compare(best_eval_result=best,
                                             current_eval_result=result):
                best = result
        return best

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if self._model_dir != estimator.model_dir and self._pattern:
            self._model_dir = estimator.model_dir
            self._best = self._best_of_event_files(
                os.path.join(self._model_dir, self._pattern),
                eval_result.get("global_step", float("inf")))
        if self._best is None or self._compare(best_eval_result=self._best,
                                               current_eval_result=eval_result):
            logging.info("Performing best model export.")
            self._best = dict(eval_result)
            out = _export(estimator, export_path, self._fn, checkpoint_path, self._assets,
                          self._as_text)
            _garbage_collect(export_path, self._keep)
            return out
        return None
