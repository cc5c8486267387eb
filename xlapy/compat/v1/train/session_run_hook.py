"""tf.train.SessionRunHook and the hooks of TF 1.x's basic_session_run_hooks:
StopAtStepHook, LoggingTensorHook, CheckpointSaverHook, SummarySaverHook, StepCounterHook,
NanTensorHook, with SecondOrStepTimer.

A hook sees every MonitoredSession.run: before_run(run_context) may return
SessionRunArgs(fetches, feed_dict) to run along with the caller's fetches, and
after_run(run_context, run_values) receives their values; run_context.request_stop()
ends the training loop (should_stop() becomes True). begin() runs before the session is
created, after_create_session(session, coord) once it is initialized or restored,
end(session) when the monitored session closes normally.
"""

from __future__ import annotations

import collections
import os
import time

import numpy as np

from xlapy.compat.v1 import logging
from xlapy.compat.v1.errors import InvalidArgumentError, XlapyError


class SessionRunHook:
    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class SessionRunArgs(collections.namedtuple("SessionRunArgs",
                                            ["fetches", "feed_dict", "options"])):
    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


SessionRunValues = collections.namedtuple("SessionRunValues",
                                          ["results", "options", "run_metadata"])


class SessionRunContext:
    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    original_args = property(lambda self: self._original_args)
    session = property(lambda self: self._session)
    stop_requested = property(lambda self: self._stop_requested)

    def request_stop(self):
        self._stop_requested = True


class SecondOrStepTimer:
    """Triggers every `every_secs` seconds or every `every_steps` steps (one of them)."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise InvalidArgumentError("exactly one of every_secs and every_steps should be "
                                       "provided.")
        self._every_secs, self._every_steps = every_secs, every_steps
        self.reset()

    def reset(self):
        self._last_time = self._last_step = None

    def should_trigger_for_step(self, step):
        if self._last_step is None:
            return True
        if self._last_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_time + self._every_secs
        return step >= self._last_step + self._every_steps

    def update_last_triggered_step(self, step):
        now = time.time()
        elapsed = None if self._last_time is None else (
            now - self._last_time, step - self._last_step)
        self._last_time, self._last_step = now, step
        return elapsed if elapsed is not None else (None, None)

    def last_triggered_step(self):
        return self._last_step


def _global_step_tensor(what):
    from xlapy.compat.v1.train.training_util import get_global_step
    gs = get_global_step()
    if gs is None:
        raise XlapyError(f"Global step should be created to use {what}.")
    return gs


class StopAtStepHook(SessionRunHook):
    """Requests a stop when the global step reaches last_step (or num_steps more than it
    was when the session started)."""

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise InvalidArgumentError("One of num_steps or last_step must be specified.")
        if num_steps is not None and num_steps < 0:
            raise InvalidArgumentError("num_steps must be non-negative.")
        if last_step is not None and last_step < 0:
            raise InvalidArgumentError("last_step must be non-negative.")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self):
        self._gs = _global_step_tensor("StopAtStepHook")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._gs)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._gs)

    def after_run(self, run_context, run_values):
        if int(run_values.results) + 1 >= self._last_step:
            if int(run_context.session.run(self._gs)) >= self._last_step:
                run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs the values of `tensors` (a dict name -> tensor, or a list) every N local steps
    or N seconds, or at the end, with tf.logging.info."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_end and (every_n_iter is None) == (every_n_secs is None):
            raise InvalidArgumentError("either at_end and/or exactly one of every_n_iter and "
                                       "every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise InvalidArgumentError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = list(tensors)
            tensors = {t if isinstance(t, str) else t.name: t for t in tensors}
        else:
            self._tag_order = sorted(tensors)
        self._tensors = tensors
        self._formatter = formatter
        self._log_at_end = at_end
        self._timer = None if only_end else SecondOrStepTimer(every_n_secs, every_n_iter)

    def begin(self):
        from xlapy.compat.v1.framework import get_default_graph
        if self._timer is not None:
            self._timer.reset()
        self._iter = 0
        g = get_default_graph()
        self._current = {k: (g.as_graph_element(t) if isinstance(t, str) else t)
                         for k, t in self._tensors.items()}

    def before_run(self, run_context):
        self._trigger = self._timer is not None and \
            self._timer.should_trigger_for_step(self._iter)
        return SessionRunArgs(self._current) if self._trigger else None

    def _log(self, values):
        if self._formatter:
            logging.info(self._formatter(values))
            return
        text = ", ".join(f"{t} = {values[t]}" for t in self._tag_order)
        elapsed, _ = self._timer.update_last_triggered_step(self._iter) if self._timer \
            else (None, None)
        if elapsed is not None:
            logging.info("%s (%.3f sec)", text, elapsed)
        else:
            logging.info("%s", text)

    def after_run(self, run_context, run_values):
        if self._trigger:
            self._log(run_values.results)
        self._iter += 1

    def end(self, session):
        if self._log_at_end:
            self._log(session.run(self._current))


class NanLossDuringTrainingError(XlapyError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss, self._fail = loss_tensor, fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            if self._fail:
                raise NanLossDuringTrainingError()
            logging.warning("Model diverged with loss = NaN.")
            run_context.request_stop()


def _cached_writer(logdir):
    """The shared FileWriter of logdir (tf.summary.FileWriterCache), or None without
    tensorboardX."""
    from xlapy.compat.v1.errors import UnimplementedError
    from xlapy.compat.v1.summary._tb import tb
    try:
        tb()
    except UnimplementedError:
        return None
    from xlapy.compat.v1.summary.writer_cache import FileWriterCache
    return FileWriterCache.get(logdir)


class CheckpointSaverListener:
    """Called by a CheckpointSaverHook around each checkpoint it saves: begin(), then
    before_save(session, step) and after_save(session, step) per save (after_save returning
    True stops the training), end(session, step) when the session ends."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint (checkpoint_dir/model.ckpt-<global step>) when the session starts,
    every save_secs seconds or save_steps steps, and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None):
        if saver is not None and scaffold is not None:
            raise InvalidArgumentError("You cannot provide both saver and scaffold.")
        self._dir = os.fspath(checkpoint_dir)
        self._path = os.path.join(self._dir, checkpoint_basename)
        self._saver, self._scaffold = saver, scaffold
        self._timer = SecondOrStepTimer(save_secs, save_steps)
        self._listeners = list(listeners or [])

    def begin(self):
        self._gs = _global_step_tensor("CheckpointSaverHook")
        self._writer = _cached_writer(self._dir)
        for listener in self._listeners:
            listener.begin()

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        from xlapy.compat.v1.train.saver import Saver
        self._saver = Saver()
        return self._saver

    def after_create_session(self, session, coord):
        step = int(session.run(self._gs))
        os.makedirs(self._dir, exist_ok=True)
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context):
        return SessionRunArgs(self._gs)

    def after_run(self, run_context, run_values):
        step = int(run_context.session.run(self._gs))
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._save(run_context.session, step):
                run_context.request_stop()

    def end(self, session):
        step = int(session.run(self._gs))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)
        if self._writer is not None:
            self._writer.flush()

    def _save(self, session, step):
        logging.info("Saving checkpoints for %d into %s.", step, self._path)
        for listener in self._listeners:
            listener.before_save(session, step)
        path = self._get_saver().save(session, self._path, global_step=step)
        if self._writer is not None and path:
            from xlapy.compat.v1.summary import SessionLog
            self._writer.add_session_log(SessionLog(status=SessionLog.CHECKPOINT,
                                                    checkpoint_path=path), step)
        stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                stop = True
        return stop


class SummarySaverHook(SessionRunHook):
    """Runs `summary_op` (default: tf.summary.merge_all()) every save_steps steps or
    save_secs seconds and writes it to output_dir (a FileWriter) at the global step."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None) and summary_op is not None:
            raise InvalidArgumentError("Exactly one of scaffold or summary_op should be "
                                       "provided.")
        self._summary_op, self._scaffold = summary_op, scaffold
        self._writer, self._dir = summary_writer, output_dir
        self._timer = SecondOrStepTimer(save_secs, save_steps)

    def begin(self):
        from xlapy.compat.v1.summary import merge_all
        if self._writer is None and self._dir:
            from xlapy.compat.v1.summary.writer_cache import FileWriterCache
            self._writer = FileWriterCache.get(self._dir)
        self._gs = _global_step_tensor("SummarySaverHook")
        if self._summary_op is None:
            self._summary_op = self._scaffold.summary_op if self._scaffold is not None \
                else merge_all()
        self._next_step = None

    def before_run(self, run_context):
        self._request = self._next_step is None or self._timer.should_trigger_for_step(
            self._next_step)
        fetches = {"global_step": self._gs}
        if self._request and self._summary_op is not None:
            fetches["summary"] = self._summary_op
        return SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        step = int(run_values.results["global_step"])
        if self._next_step is None and self._writer is not None:
            from xlapy.compat.v1.summary import SessionLog
            self._writer.add_session_log(SessionLog(status=SessionLog.START), step)
        if self._request:
            self._timer.update_last_triggered_step(step)
            if "summary" in run_values.results and self._writer is not None:
                self._writer.add_summary(run_values.results["summary"], step)
        self._next_step = step + 1

    def end(self, session):
        if self._writer is not None:
            self._writer.flush()


class StepCounterHook(SessionRunHook):
    """Logs (and writes as the summary "global_step/sec") the training speed every N
    steps or seconds."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise InvalidArgumentError("exactly one of every_n_steps and every_n_secs should "
                                       "be provided.")
        self._timer = SecondOrStepTimer(every_n_secs, every_n_steps)
        self._writer, self._dir = summary_writer, output_dir

    def begin(self):
        if self._writer is None and self._dir:
            from xlapy.compat.v1.summary.writer_cache import FileWriterCache
            self._writer = FileWriterCache.get(self._dir)
        self._gs = _global_step_tensor("StepCounterHook")

    def end(self, session):
        if self._writer is not None:
            self._writer.flush()

    def before_run(self, run_context):
        return SessionRunArgs(self._gs)

    def after_run(self, run_context, run_values):
        step = int(run_values.results) + 1
        if self._timer.should_trigger_for_step(step):
            secs, steps = self._timer.update_last_triggered_step(step)
            if secs is not None and secs > 0:
                rate = steps / secs
                logging.info("global_step/sec: %g", rate)
                if self._writer is not None:
                    from xlapy.compat.v1.summary import Summary
                    s = Summary(value=[Summary.Value(tag="global_step/sec",
                                                     simple_value=rate)])
                    self._writer.add_summary(s, step)
