"""tf.train.MonitoredTrainingSession, MonitoredSession, SingularMonitoredSession and
Scaffold, single-process, as TF 1.x's monitored_session.py.

Creating the session: the hooks' begin() runs, the Scaffold is finalized (init_op =
global_variables_initializer, local_init_op = local_variables_initializer and
tables_initializer, a Saver, the merged summaries) and the graph is finalized, so ops can
no longer be added; the session is
restored from the latest checkpoint in checkpoint_dir when there is one, else initialized
(init_op, init_fn), then local_init_op runs and the hooks' after_create_session.

MonitoredTrainingSession adds, for the chief with a checkpoint_dir: a CheckpointSaverHook
(every save_checkpoint_secs=600 s, or save_checkpoint_steps), a SummarySaverHook (every
save_summaries_steps=100 steps, when the graph has summaries) and a StepCounterHook
(log_step_count_steps=100), writing to summary_dir (default checkpoint_dir).

run() adds the hooks' SessionRunArgs to the caller's fetches and feeds, runs once, and
hands each hook its values. OutOfRangeError (an exhausted input) ends a `with` block
quietly, as in TF; close() calls the hooks' end() after a normal exit.
"""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError, OutOfRangeError
from xlapy.compat.v1.framework import GraphKeys, get_default_graph
from xlapy.compat.v1.train import session_run_hook as hooks_lib
from xlapy.compat.v1.train.session_run_hook import (SessionRunArgs, SessionRunContext,
                                                    SessionRunValues)

USE_DEFAULT = object()


def _can_write_events() -> bool:
    """Whether tensorboardX (tf.summary's optional writer) is installed: without it the
    step counter only logs."""
    from xlapy.compat.v1.errors import UnimplementedError
    from xlapy.compat.v1.summary._tb import tb
    try:
        tb()
        return True
    except UnimplementedError:
        return False


class Scaffold:
    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None,
                 saver=None, copy_from_scaffold=None):
        self._init_op, self._init_feed_dict, self._init_fn = init_op, init_feed_dict, init_fn
        self._ready_op, self._local_init_op = ready_op, local_init_op
        self._summary_op, self._saver = summary_op, saver

    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    init_fn = property(lambda self: self._init_fn)
    ready_op = property(lambda self: self._ready_op)
    local_init_op = property(lambda self: self._local_init_op)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)

    def finalize(self):
        from xlapy.compat.v1.ops.array_ops import no_op
        from xlapy.compat.v1.summary import merge_all
        from xlapy.compat.v1.train.saver import Saver
        from xlapy.compat.v1.variables import (global_variables,
                                               global_variables_initializer,
                                               local_variables_initializer)
        g = get_default_graph()
        if g._finalized:
            return self
        if self._init_op is None:
            self._init_op = global_variables_initializer()
        if self._local_init_op is None:  # TF's: local variables and lookup tables
            from xlapy.compat.v1.ops.array_ops import group
            from xlapy.compat.v1.ops.lookup_table_ops import tables_initializer
            self._local_init_op = group(local_variables_initializer(), tables_initializer())
        if self._summary_op is None:
            self._summary_op = merge_all()
        if self._saver is None:
            saved = g.get_collection(GraphKeys.SAVEABLE_OBJECTS)
            self._saver = Saver(allow_empty=True) if global_variables() or saved else None
        if self._ready_op is None:
            self._ready_op = no_op(name="ready")
        g.finalize()
        return self


class ChiefSessionCreator:
    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._config, self._dir = config, checkpoint_dir
        self._path = checkpoint_filename_with_path

    def create_session(self):
        from xlapy.compat.v1.session import Session
        from xlapy.compat.v1.train.saver import latest_checkpoint
        self._scaffold.finalize()
        sess = Session(config=self._config)
        s = self._scaffold
        path = self._path or (latest_checkpoint(self._dir) if self._dir else None)
        if path and s.saver is not None:
            s.saver.restore(sess, path)
            if self._dir and not s.saver.last_checkpoints:  # TF's session manager's
                from xlapy.compat.v1.train.saver import get_checkpoint_state
                st = get_checkpoint_state(self._dir)
                if st is not None:
                    s.saver.recover_last_checkpoints(st.all_model_checkpoint_paths)
        else:
            sess.run(s.init_op, feed_dict=s.init_feed_dict)
            if s.init_fn is not None:
                s.init_fn(s, sess)
        sess.run(s.local_init_op)
        return sess


class _Coordinator:
    """The coordinator hooks receive: single-process, nothing to join."""

    def __init__(self):
        self._stop = False

    def request_stop(self, ex=None):
        self._stop = True

    def should_stop(self):
        return self._stop

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        pass


class MonitoredSession:
    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        self._hooks = list(hooks or [])
        for h in self._hooks:
            if not isinstance(h, hooks_lib.SessionRunHook):
                raise InvalidArgumentError(f"hooks must be SessionRunHook objects, got {h!r}")
        for h in self._hooks:
            h.begin()
        self._creator = session_creator or ChiefSessionCreator()
        self._sess = self._creator.create_session()
        self._coord = _Coordinator()
        for h in self._hooks:
            h.after_create_session(self._sess, self._coord)
        self._should_stop = False
        self._closed = False

    graph = property(lambda self: self._sess.graph)

    def _tf_sess(self):
        return self._sess

    def should_stop(self):
        return self._closed or self._should_stop or self._coord.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._closed:
            raise RuntimeError("Run called on a closed MonitoredSession")
        ctx = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), self._sess)
        all_fetches = {"caller": fetches}
        feeds = dict(feed_dict or {})
        trace = options.trace_level if options is not None else 0
        for i, h in enumerate(self._hooks):
            req = h.before_run(ctx)
            if req is None:
                continue
            if req.fetches is not None:
                all_fetches[f"hook_{i}"] = req.fetches
            for k, v in (req.feed_dict or {}).items():
                if k in feeds:
                    raise RuntimeError(f"Same tensor is fed by a SessionRunHook and user: {k}")
                feeds[k] = v
            if req.options is not None:  # TF merges the hooks' options: the deepest trace
                trace = max(trace, req.options.trace_level)
        run_options, metadata = options, run_metadata
        if trace and (options is None or trace != options.trace_level):
            import dataclasses

            from xlapy.compat.v1.protos import RunOptions
            run_options = dataclasses.replace(options, trace_level=trace) \
                if options is not None else RunOptions(trace_level=trace)
        if trace and metadata is None:
            from xlapy.compat.v1.protos import RunMetadata
            metadata = RunMetadata()
        out = self._sess.run(all_fetches, feed_dict=feeds or None, options=run_options,
                             run_metadata=metadata)
        for i, h in enumerate(self._hooks):
            h.after_run(ctx, SessionRunValues(out.get(f"hook_{i}"), run_options, metadata))
        self._should_stop = self._should_stop or ctx.stop_requested
        return out["caller"]

    def run_step_fn(self, step_fn):
        class _StepContext:
            def __init__(ctx, sess):
                ctx.session = sess

            def run_with_hooks(ctx, *args, **kwargs):
                return self.run(*args, **kwargs)

            def request_stop(ctx):
                self._should_stop = True
        return step_fn(_StepContext(self._sess))

    def close(self):
        self._close(normal=True)

    def _close(self, normal):
        if self._closed:
            return
        try:
            if normal:
                for h in self._hooks:
                    h.end(self._sess)
        finally:
            self._closed = True
            self._sess.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        quiet = exc_type is None or issubclass(exc_type, (OutOfRangeError, StopIteration))
        self._close(normal=quiet)
        return exc_type is not None and quiet


class SingularMonitoredSession(MonitoredSession):
    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        super().__init__(ChiefSessionCreator(scaffold, master, config, checkpoint_dir,
                                             checkpoint_filename_with_path), hooks)

    def raw_session(self):
        return self._sess


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None,
                             hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT,
                             config=None, stop_grace_period_secs=120,
                             log_step_count_steps=100, max_wait_secs=7200,
                             save_checkpoint_steps=USE_DEFAULT, summary_dir=None):
    """A MonitoredSession with TF 1.x's default hooks for training (see the module doc)."""
    if master:
        raise InvalidArgumentError("MonitoredTrainingSession: only the in-process session "
                                   f"(master='') is supported, got {master!r}")
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    else:
        save_summaries_steps = None if save_summaries_steps is USE_DEFAULT \
            else save_summaries_steps
        save_summaries_secs = None if save_summaries_secs is USE_DEFAULT \
            else save_summaries_secs
    if save_checkpoint_secs is USE_DEFAULT and save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_secs, save_checkpoint_steps = 600, None
    else:
        save_checkpoint_secs = None if save_checkpoint_secs is USE_DEFAULT \
            else save_checkpoint_secs
        save_checkpoint_steps = None if save_checkpoint_steps is USE_DEFAULT \
            else save_checkpoint_steps
    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or [])
    if is_chief:
        all_hooks += list(chief_only_hooks or [])
        summary_dir = summary_dir or checkpoint_dir
        from xlapy.compat.v1.train.training_util import get_global_step
        has_step = get_global_step() is not None
        if summary_dir and has_step:
            if log_step_count_steps and log_step_count_steps > 0:
                all_hooks.append(hooks_lib.StepCounterHook(
                    log_step_count_steps,
                    output_dir=summary_dir if _can_write_events() else None))
            if (save_summaries_steps and save_summaries_steps > 0) or \
                    (save_summaries_secs and save_summaries_secs > 0):
                from xlapy.compat.v1.summary import merge_all
                if get_default_graph().get_collection(GraphKeys.SUMMARIES) or \
                        scaffold.summary_op is not None:
                    all_hooks.append(hooks_lib.SummarySaverHook(
                        save_steps=save_summaries_steps if save_summaries_steps else None,
                        save_secs=None if save_summaries_steps else save_summaries_secs,
                        scaffold=scaffold if scaffold.summary_op is not None else None,
                        summary_op=None if scaffold.summary_op is not None else merge_all(),
                        output_dir=summary_dir))
        if checkpoint_dir and has_step and (
                (save_checkpoint_secs and save_checkpoint_secs > 0) or
                (save_checkpoint_steps and save_checkpoint_steps > 0)):
            all_hooks.append(hooks_lib.CheckpointSaverHook(
                checkpoint_dir, save_steps=save_checkpoint_steps if save_checkpoint_steps
                else None, save_secs=None if save_checkpoint_steps else save_checkpoint_secs,
                scaffold=scaffold))
    creator = ChiefSessionCreator(scaffold, config=config, checkpoint_dir=checkpoint_dir)
    return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
