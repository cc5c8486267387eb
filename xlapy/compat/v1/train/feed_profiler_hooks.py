"""tf.train.FeedFnHook and tf.train.ProfilerHook (TF 1.x's basic_session_run_hooks).

FeedFnHook(feed_fn) feeds feed_fn()'s dict into every run. ProfilerHook(save_steps or
save_secs, output_dir) traces a run every N steps or seconds (RunOptions FULL_TRACE,
merged into the MonitoredSession's run) and writes its Chrome trace as
output_dir/timeline-<global step>.json (tensorflow.python.client.timeline), and the run
metadata to output_dir's shared event file when tensorboardX is installed.
"""

from __future__ import annotations

import os

from xlapy.compat.v1.train.session_run_hook import (SecondOrStepTimer, SessionRunArgs,
                                                    SessionRunHook, _cached_writer,
                                                    _global_step_tensor)

__all__ = ["FeedFnHook", "ProfilerHook"]


class FeedFnHook(SessionRunHook):
    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class ProfilerHook(SessionRunHook):
    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True,
                 show_memory=False):
        self._output_file = os.path.join(os.fspath(output_dir), "timeline-{}.json")
        self._output_dir = os.fspath(output_dir)
        self._show_dataflow, self._show_memory = show_dataflow, show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        self._next_step = None
        self._gs = _global_step_tensor("ProfilerHook")
        self._writer = _cached_writer(self._output_dir or ".")

    def before_run(self, run_context):
        from xlapy.compat.v1.protos import RunOptions
        self._request = self._next_step is not None and \
            self._timer.should_trigger_for_step(self._next_step)
        opts = RunOptions(trace_level=RunOptions.FULL_TRACE) if self._request else None
        return SessionRunArgs({"global_step": self._gs}, options=opts)

    def after_run(self, run_context, run_values):
        # xlapy's fetched global step is its value after the run (TF's: before, "stale");
        # the timer starts at the step before the first run, as TF's, so a trace is saved
        # at steps save_steps, 2 * save_steps, ... of a training from step 0
        step = int(run_values.results["global_step"])
        if self._next_step is None:
            self._timer.update_last_triggered_step(step - 1)
        if self._request:
            self._timer.update_last_triggered_step(step)
            self._save(step, run_values.run_metadata)
        self._next_step = step + 1

    def _save(self, step, run_metadata):
        from xlapy.compat.v1 import logging
        from xlapy.compat.v1.python.client.timeline import Timeline
        path = self._output_file.format(step)
        logging.info("Saving timeline for %d into '%s'.", step, path)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        trace = Timeline(run_metadata.step_stats).generate_chrome_trace_format(
            show_dataflow=self._show_dataflow, show_memory=self._show_memory)
        with open(path, "w") as f:
            f.write(trace)
        if self._writer is not None:
            self._writer.add_run_metadata(run_metadata, f"step_{step}", step)
