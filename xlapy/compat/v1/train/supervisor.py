"""tf.train.Supervisor (TF 1.x's pre-MonitoredSession training helper), single process.

    sv = tf.train.Supervisor(logdir=path)
    with sv.managed_session() as sess:
        while not sv.should_stop():
            sess.run(train_op)

Construction fills in what was not given (init_op = global_variables_initializer,
local_init_op = local_variables_initializer, a Saver, the merged summaries, the global
step, a FileWriter on logdir when summaries exist and tensorboardX is installed) and
finalizes the graph. managed_session restores the latest checkpoint in logdir, or runs
init_op (and init_fn), then local_init_op. TF runs its standard services (a checkpoint
every save_model_secs, summaries every save_summaries_secs) in threads; here they run
after each `run` of the session managed_session yields, when their interval has passed,
so a checkpoint or summary is never written concurrently with a training step. An
exception in the block stops the supervisor and is re-raised, except OutOfRangeError
(an input exhausted: a clean stop), as TF's.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.train.coordinator import Coordinator

USE_DEFAULT = 0


class _Supervised:
    """The session managed_session yields: runs like it, then the due services."""

    def __init__(self, sv, sess):
        self._sv, self._sess = sv, sess

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        out = self._sess.run(fetches, feed_dict, options, run_metadata)
        self._sv._services(self._sess)
        return out

    def __getattr__(self, name):
        return getattr(self._sess, name)


class Supervisor:
    USE_DEFAULT = USE_DEFAULT

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None,
                 local_init_op=USE_DEFAULT, logdir=None, summary_op=USE_DEFAULT,
                 saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        from xlapy.compat.v1.ops.array_ops import no_op
        from xlapy.compat.v1.summary import merge_all
        from xlapy.compat.v1.train.saver import Saver
        from xlapy.compat.v1.train.training_util import get_global_step
        from xlapy.compat.v1.variables import (global_variables, global_variables_initializer,
                                               local_variables_initializer)
        self._graph = graph or get_default_graph()
        with self._graph.as_default():
            self._init_op = global_variables_initializer() if init_op is USE_DEFAULT \
                else init_op
            from xlapy.compat.v1.ops.array_ops import group
            from xlapy.compat.v1.ops.lookup_table_ops import tables_initializer
            self._local_init_op = group(local_variables_initializer(), tables_initializer()) \
                if local_init_op is USE_DEFAULT else local_init_op
            self._ready_op = no_op(name="ready") if ready_op is USE_DEFAULT else ready_op
            self._summary_op = merge_all() if summary_op is USE_DEFAULT else summary_op
            if saver is USE_DEFAULT:
                saver = Saver() if global_variables() else None
            self._saver = saver
            self._global_step = get_global_step() if global_step is USE_DEFAULT \
                else global_step
        self._init_feed_dict, self._init_fn = init_feed_dict, init_fn
        self._is_chief = is_chief
        self._logdir = os.fspath(logdir) if logdir else None
        self._save_path = os.path.join(self._logdir, checkpoint_basename) \
            if self._logdir else None
        self._save_model_secs, self._save_summaries_secs = save_model_secs, \
            save_summaries_secs
        self._stop_grace_secs = stop_grace_secs
        if summary_writer is USE_DEFAULT:
            summary_writer = None
            if self._logdir and self._summary_op is not None and is_chief:
                from xlapy.compat.v1.train.monitored_session import _can_write_events
                if _can_write_events():
                    from xlapy.compat.v1.summary import FileWriter
                    summary_writer = FileWriter(self._logdir)
        self._summary_writer = summary_writer
        self._coord = Coordinator()
        self._threads: list = []
        self._services_on = False
        self._last_save = self._last_summary = 0.0
        self._graph.finalize()

    # ---- properties -------------------------------------------------------------------------
    coord = property(lambda self: self._coord)
    saver = property(lambda self: self._saver)
    global_step = property(lambda self: self._global_step)
    summary_op = property(lambda self: self._summary_op)
    summary_writer = property(lambda self: self._summary_writer)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    is_chief = property(lambda self: self._is_chief)
    save_path = property(lambda self: self._save_path)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)

    # ---- sessions ---------------------------------------------------------------------------
    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        from xlapy.compat.v1.session import Session
        from xlapy.compat.v1.train.saver import latest_checkpoint
        if master:
            raise InvalidArgumentError("Supervisor: only the in-process session (master='') "
                                       f"is supported, got {master!r}")
        sess = Session(graph=self._graph, config=config)
        ckpt = latest_checkpoint(self._logdir) if self._logdir and self._saver else None
        if ckpt:
            self._saver.restore(sess, ckpt)
        else:
            if self._init_op is not None:
                sess.run(self._init_op, feed_dict=self._init_feed_dict)
            if self._init_fn is not None:
                self._init_fn(sess)
        if self._local_init_op is not None:
            sess.run(self._local_init_op)
        if start_standard_services and self._is_chief:
            self.start_standard_services(sess)
        return _Supervised(self, sess)

    def start_standard_services(self, sess):
        if self._summary_writer is not None:
            self._summary_writer.add_graph(self._graph)
        self._services_on = True
        self._last_save = self._last_summary = time.time()
        return []

    def _services(self, sess):
        if not self._services_on:
            return
        now = time.time()
        if self._save_model_secs and self._saver is not None and self._save_path and \
                now - self._last_save >= self._save_model_secs:
            self._last_save = now
            self._saver.save(sess, self._save_path, global_step=self._global_step)
        if self._save_summaries_secs and self._summary_op is not None and \
                self._summary_writer is not None and \
                now - self._last_summary >= self._save_summaries_secs:
            self._last_summary = now
            step = None if self._global_step is None else sess.run(self._global_step)
            self._summary_writer.add_summary(sess.run(self._summary_op), step)

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        sess = self.prepare_or_wait_for_session(master, config,
                                                start_standard_services=start_standard_services)
        try:
            yield sess
        except Exception as e:  # every exception stops the supervisor, as TF's
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                sess.close()

    # ---- stopping ---------------------------------------------------------------------------
    def should_stop(self):
        return self._coord.should_stop()

    def request_stop(self, ex=None):
        self._coord.request_stop(ex)

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        self._coord.request_stop()
        try:
            self._coord.join(list(threads or []) + self._threads, self._stop_grace_secs,
                             ignore_live_threads)
        finally:
            self._services_on = False
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.close()

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    # ---- the rest of TF's interface ---------------------------------------------------------
    def summary_computed(self, sess, summary, global_step=None):
        if self._summary_writer is None:
            raise InvalidArgumentError("Supervisor: no summary writer (give a logdir, or "
                                       "summary_writer=...)")
        if global_step is None and self._global_step is not None:
            global_step = sess.run(self._global_step)
        self._summary_writer.add_summary(summary, global_step)

    def start_queue_runners(self, sess, queue_runners=None):
        from xlapy.compat.v1.train.queue_runner import start_queue_runners
        return start_queue_runners(getattr(sess, "_sess", sess), self._coord)

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Calls target(*args, **kwargs) every timer_interval_secs in a thread until the
        supervisor stops."""
        def run():
            with self._coord.stop_on_exception():
                while not self._coord.wait_for_stop(timer_interval_secs):
                    target(*(args or ()), **(kwargs or {}))
        t = threading.Thread(target=run, daemon=True)
        self._threads.append(t)
        t.start()
        return t

    def wait_for_stop(self):
        self._coord.wait_for_stop()


