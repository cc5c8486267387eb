"""tf.estimator.Estimator: see the package docstring."""

from __future__ import annotations

import inspect
import os
import tempfile

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError, OutOfRangeError
from xlapy.compat.v1.estimator.spec import EstimatorSpec, ModeKeys, RunConfig

class Estimator:
    def __init__(self, model_fn, model_dir=None, config=None, params=None,
                 warm_start_from=None):
        if not callable(model_fn):
            raise InvalidTypeError(f"model_fn must be callable, got {model_fn!r}")
        from xlapy.compat.v1.estimator.warm_start_settings import settings_of
        self._warm_start_settings = settings_of(warm_start_from)
        self._model_fn = model_fn
        self._config = config or RunConfig()
        if model_dir and self._config.model_dir and model_dir != self._config.model_dir:
            raise InvalidArgumentError(f"model_dir {model_dir!r} and RunConfig's "
                                       f"{self._config.model_dir!r} differ")
        self._model_dir = model_dir or self._config.model_dir or tempfile.mkdtemp(
            prefix="xlapy_estimator_")
        os.makedirs(self._model_dir, exist_ok=True)
        self._params = dict(params or {})

    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: self._config)
    params = property(lambda self: dict(self._params))
    model_fn = property(lambda self: self._model_fn)

    # ---- building ----------------------------------------------------------------------------
    def _graph(self):
        from xlapy.compat.v1.framework import Graph
        g = Graph()
        if self._config.tf_random_seed is not None:
            g.seed = self._config.tf_random_seed
        return g

    @staticmethod
    def _inputs(input_fn, mode):
        from xlapy.compat.v1.data.dataset import Dataset
        sig = inspect.signature(input_fn).parameters
        kw = {}
        if "mode" in sig:
            kw["mode"] = mode
        out = input_fn(**kw)
        if isinstance(out, Dataset):
            out = out.make_one_shot_iterator().get_next()
        if isinstance(out, (tuple, list)) and len(out) == 2:
            return out[0], out[1]
        return out, None

    def _spec(self, features, labels, mode) -> EstimatorSpec:
        sig = inspect.signature(self._model_fn).parameters
        kw = {}
        if "labels" in sig:
            kw["labels"] = labels
        elif labels is not None and mode != ModeKeys.PREDICT:
            raise InvalidArgumentError("model_fn does not take labels, but input_fn gave them")
        if "mode" in sig:
            kw["mode"] = mode
        if "params" in sig:
            kw["params"] = self._params
        if "config" in sig:
            kw["config"] = self._config
        spec = self._model_fn(features=features, **kw)
        if not isinstance(spec, EstimatorSpec):
            raise InvalidTypeError(f"model_fn must return an EstimatorSpec, got "
                                   f"{type(spec).__name__}")
        return spec

    def latest_checkpoint(self):
        from xlapy.compat.v1.train.saver import latest_checkpoint
        return latest_checkpoint(self._model_dir)

    # ---- train / evaluate / predict ----------------------------------------------------------
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        from xlapy.compat.v1.train import session_run_hook as h
        from xlapy.compat.v1.train.monitored_session import MonitoredTrainingSession, Scaffold
        from xlapy.compat.v1.train.saver import Saver
        from xlapy.compat.v1.train.training_util import get_or_create_global_step
        if steps is not None and max_steps is not None:
            raise InvalidArgumentError("Can not provide both steps and max_steps.")
        for n, v in (("steps", steps), ("max_steps", max_steps)):
            if v is not None and v <= 0:
                raise InvalidArgumentError(f"Must specify {n} > 0, given: {v}")
        if max_steps is not None and self._step_of_checkpoint() >= max_steps:
            return self  # (TF: "Skipping training since max_steps has already saved.")
        c = self._config
        with self._graph().as_default():
            step = get_or_create_global_step()
            features, labels = self._inputs(input_fn, ModeKeys.TRAIN)
            spec = self._spec(features, labels, ModeKeys.TRAIN)
            if spec.train_op is None or spec.loss is None:
                raise InvalidArgumentError("model_fn must return train_op and loss in TRAIN "
                                           "mode")
            all_hooks = list(hooks or []) + list(spec.training_hooks)
            if steps is not None or max_steps is not None:
                all_hooks.append(h.StopAtStepHook(num_steps=steps, last_step=max_steps))
            all_hooks.append(h.NanTensorHook(spec.loss))
            all_hooks.append(_LossLogger(spec.loss, step, c.log_step_count_steps))
            if self._warm_start_settings is not None:
                from xlapy.compat.v1.train.warm_starting import warm_start
                warm_start(*self._warm_start_settings)
            scaffold = spec.scaffold or Scaffold()
            if scaffold.saver is None:  # TF's: keep_checkpoint_max of the RunConfig
                scaffold._saver = Saver(max_to_keep=c.keep_checkpoint_max, sharded=True,
                                        keep_checkpoint_every_n_hours=(
                                            c.keep_checkpoint_every_n_hours),
                                        defer_build=True, save_relative_paths=True)
            chief = list(spec.training_chief_hooks)
            savers = [x for x in all_hooks + chief if isinstance(x, h.CheckpointSaverHook)]
            if not savers and (c.save_checkpoints_steps or c.save_checkpoints_secs):
                savers = [h.CheckpointSaverHook(
                    self._model_dir, save_secs=c.save_checkpoints_secs,
                    save_steps=c.save_checkpoints_steps, scaffold=scaffold)]
                chief += savers
            if saving_listeners:
                if not savers:
                    raise InvalidArgumentError(
                        "There should be a CheckpointSaverHook to use saving_listeners. "
                        "Please set one of the RunConfig.save_checkpoints_steps or "
                        "RunConfig.save_checkpoints_secs.")
                savers[0]._listeners.extend(saving_listeners)
            with MonitoredTrainingSession(
                    checkpoint_dir=self._model_dir, hooks=all_hooks, chief_only_hooks=chief,
                    config=c.session_config, save_summaries_steps=c.save_summary_steps,
                    log_step_count_steps=c.log_step_count_steps, scaffold=scaffold,
                    save_checkpoint_secs=0) as sess:
                while not sess.should_stop():
                    sess.run([spec.train_op, spec.loss])
        return self

    def _step_of_checkpoint(self) -> int:
        path = self.latest_checkpoint()
        if not path:
            return 0
        try:
            return int(self.get_variable_value("global_step"))
        except Exception:
            return 0

    def _restored_session(self, checkpoint_path):
        from xlapy.compat.v1.ops.array_ops import group
        from xlapy.compat.v1.session import Session
        from xlapy.compat.v1.train.saver import Saver
        from xlapy.compat.v1.variables import (global_variables, local_variables_initializer,
                                               global_variables_initializer)
        path = checkpoint_path or self.latest_checkpoint()
        sess = Session(config=self._config.session_config)
        if path:
            Saver(global_variables()).restore(sess, path)
        else:
            sess.run(global_variables_initializer())
        from xlapy.compat.v1.ops.lookup_table_ops import tables_initializer
        sess.run(group(local_variables_initializer(), tables_initializer()))
        return sess, path

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Runs the EVAL graph over input_fn (until it ends, or `steps` batches) with the
        latest checkpoint's variables, in a MonitoredSession running `hooks` and the spec's
        evaluation_hooks; returns the eval_metric_ops' values, the mean loss and the global
        step, and writes the scalar ones to eval_dir(name) when tensorboardX is installed
        (as TF: what BestExporter and the early-stopping hooks read)."""
        from xlapy.compat.v1.metrics import mean
        from xlapy.compat.v1.train.monitored_session import MonitoredSession
        from xlapy.compat.v1.train.training_util import get_or_create_global_step
        with self._graph().as_default():
            step = get_or_create_global_step()
            features, labels = self._inputs(input_fn, ModeKeys.EVAL)
            spec = self._spec(features, labels, ModeKeys.EVAL)
            metrics = dict(spec.eval_metric_ops)
            if spec.loss is not None and "loss" not in metrics:
                metrics["loss"] = mean(spec.loss)
            updates = [m[1] for m in metrics.values()]
            all_hooks = list(hooks or []) + list(spec.evaluation_hooks)
            with MonitoredSession(_RestoredSession(self, checkpoint_path), all_hooks) as sess:
                n = 0
                try:
                    while (steps is None or n < steps) and not sess.should_stop():
                        sess.run(updates)
                        n += 1
                except OutOfRangeError:
                    pass
                if n == 0:
                    raise InvalidArgumentError("evaluate: input_fn gave no batch")
                raw = sess._tf_sess()
                out = {k: _scalar(raw.run(v[0])) for k, v in metrics.items()}
                out["global_step"] = int(raw.run(step))
        _write_eval_summaries(self.eval_dir(name), out)
        return out

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields the model's predictions for each example (or batch) of input_fn."""
        with self._graph().as_default():
            from xlapy.compat.v1.train.training_util import get_or_create_global_step
            get_or_create_global_step()
            features, _ = self._inputs(input_fn, ModeKeys.PREDICT)
            spec = self._spec(features, None, ModeKeys.PREDICT)
            preds = spec.predictions
            if preds is None:
                raise InvalidArgumentError("model_fn must return predictions in PREDICT mode")
            single = not isinstance(preds, dict)
            if not single and predict_keys is not None:
                keys = [predict_keys] if isinstance(predict_keys, str) else list(predict_keys)
                missing = [k for k in keys if k not in preds]
                if missing:
                    raise InvalidArgumentError(f"predict_keys {missing} are not in the "
                                               f"predictions {sorted(preds)}")
                preds = {k: preds[k] for k in keys}
            from xlapy.compat.v1.train.monitored_session import MonitoredSession
            all_hooks = list(hooks or []) + list(spec.prediction_hooks)
            with MonitoredSession(_RestoredSession(self, checkpoint_path), all_hooks) as sess:
                while not sess.should_stop():
                    try:
                        batch = sess.run(preds)
                    except OutOfRangeError:
                        break
                    if not yield_single_examples:
                        yield batch
                        continue
                    n = len(batch) if single else len(next(iter(batch.values())))
                    for i in range(n):
                        yield batch[i] if single else {k: v[i] for k, v in batch.items()}

    # ---- export ------------------------------------------------------------------------------
    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None,
                           experimental_mode=ModeKeys.PREDICT):
        """Writes the PREDICT graph fed by serving_input_receiver_fn's receiver, with the
        latest (or the given) checkpoint's variables, as a SavedModel in a new
        export_dir_base/<timestamp> directory; returns that path (bytes, as TF)."""
        from xlapy.compat.v1.estimator.exporting import export_saved_model
        if experimental_mode != ModeKeys.PREDICT:
            raise InvalidArgumentError("export_saved_model: xlapy exports the PREDICT mode "
                                       "graph only")
        return export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                                  assets_extra=assets_extra, as_text=as_text,
                                  checkpoint_path=checkpoint_path)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn,
                          assets_extra=None, as_text=False, checkpoint_path=None,
                          strip_default_attrs=False):
        """TF 1.x's name of export_saved_model."""
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn,
                                       assets_extra=assets_extra, as_text=as_text,
                                       checkpoint_path=checkpoint_path)

    def eval_dir(self, name=None) -> str:
        return os.path.join(self._model_dir, "eval" if not name else f"eval_{name}")

    # ---- variables -----------------------------------------------------------------------------
    def get_variable_names(self) -> list:
        from xlapy.compat.v1.train.saver import list_variables
        path = self.latest_checkpoint()
        return [] if not path else [n for n, _ in list_variables(path)]

    def get_variable_value(self, name):
        from xlapy.compat.v1.train.saver import load_variable
        path = self.latest_checkpoint()
        if not path:
            raise InvalidArgumentError(f"Estimator: no checkpoint in {self._model_dir} yet")
        return load_variable(path, name)


class _RestoredSession:
    """A session creator: a Session with the checkpoint's variables (Estimator's)."""

    def __init__(self, estimator, checkpoint_path):
        self._est, self._path = estimator, checkpoint_path

    def create_session(self):
        return self._est._restored_session(self._path)[0]


def _write_eval_summaries(eval_dir, results) -> None:
    from xlapy.compat.v1.train.session_run_hook import _cached_writer
    writer = _cached_writer(eval_dir)
    if writer is None:
        return
    from xlapy.compat.v1.summary import Summary
    values = [Summary.Value(tag=k, simple_value=float(v)) for k, v in results.items()
              if k != "global_step" and np.ndim(v) == 0 and
              np.issubdtype(np.asarray(v).dtype, np.number)]
    writer.add_summary(Summary(value=values), results["global_step"])
    writer.flush()


def _scalar(v):
    a = np.asarray(v)
    return a.item() if a.ndim == 0 else a


class _LossLogger:
    """Logs the loss and the global step every n steps (TF's "loss = ..., step = ...")."""

    def __new__(cls, loss, step, every):
        from xlapy.compat.v1.train.session_run_hook import LoggingTensorHook
        every = every or 100
        return LoggingTensorHook({"loss": loss, "step": step}, every_n_iter=every)
