"""slim.evaluation: evaluate_once and evaluation_loop of TF-Slim (TF 1.15's
contrib/slim/python/slim/evaluation.py, on contrib/training's evaluation helpers).

    names_to_values, names_to_updates = slim.metrics.aggregate_metric_map({...})
    slim.evaluation.evaluation_loop("", checkpoint_dir, logdir, num_evals=10,
                                    eval_op=list(names_to_updates.values()),
                                    final_op=list(names_to_values.values()),
                                    max_number_of_evaluations=1)

Each evaluation opens a session, initializes the variables, restores variables_to_restore
(all saveable variables by default) from the checkpoint, runs initial_op, then eval_op
num_evals times (and increments the eval step), then final_op, whose value it returns; the
summaries (summary_op, by default the merged SUMMARIES) are written to logdir at the end.
evaluation_loop evaluates each new checkpoint of checkpoint_dir, waiting up to eval_interval_secs
between them, until max_number_of_evaluations or timeout.
"""

from __future__ import annotations

import os
import time

from xlapy.compat.v1 import logging
from xlapy.compat.v1.errors import OutOfRangeError
from xlapy.compat.v1.framework import GraphKeys, get_default_graph

__all__ = ["checkpoints_iterator", "evaluate_once", "evaluation_loop",
           "get_or_create_eval_step", "wait_for_new_checkpoint"]

_USE_DEFAULT = 0


def get_or_create_eval_step():
    """The int64 local variable eval_step (collection EVAL_STEP), counting eval_op runs."""
    from xlapy.compat.v1 import dtypes
    from xlapy.compat.v1.ops.array_ops import zeros
    from xlapy.compat.v1.variables import Variable
    graph = get_default_graph()
    found = graph.get_collection("eval_step")
    if found:
        return found[0]
    return Variable(zeros([], dtypes.int64), trainable=False, name="eval_step",
                    collections=[GraphKeys.LOCAL_VARIABLES, "eval_step"])


def wait_for_new_checkpoint(checkpoint_dir, last_checkpoint=None, seconds_to_sleep=1,
                            timeout=None):
    """The path of a checkpoint of checkpoint_dir other than last_checkpoint, or None after
    timeout seconds."""
    from xlapy.compat.v1.train.saver import latest_checkpoint
    stop = None if timeout is None else time.time() + timeout
    while True:
        path = latest_checkpoint(checkpoint_dir)
        if path is not None and path != last_checkpoint:
            return path
        if stop is not None and time.time() + seconds_to_sleep > stop:
            return None
        time.sleep(seconds_to_sleep)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new checkpoint of checkpoint_dir, until no new one comes within timeout
    seconds (and timeout_fn, if given, returns True)."""
    last = None
    while True:
        path = wait_for_new_checkpoint(checkpoint_dir, last, timeout=timeout)
        if path is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        start = time.time()
        last = path
        yield path
        left = start + min_interval_secs - time.time()
        if left > 0:
            time.sleep(left)


def _run(fetches, feed_dict, sess):
    return None if fetches is None else sess.run(fetches, feed_dict)


def _evaluate(checkpoint_path, logdir, num_evals, initial_op, initial_op_feed_dict, eval_op,
              eval_op_feed_dict, final_op, final_op_feed_dict, summary_op,
              summary_op_feed_dict, variables_to_restore, session_config, hooks):
    from xlapy.compat.v1.ops.array_ops import group
    from xlapy.compat.v1.ops.lookup_table_ops import tables_initializer
    from xlapy.compat.v1.ops.variable_ops import assign_add
    from xlapy.compat.v1.session import Session
    from xlapy.compat.v1.summary import FileWriter, merge_all
    from xlapy.compat.v1.train.monitored_session import _can_write_events
    from xlapy.compat.v1.train.saver import Saver
    from xlapy.compat.v1.train.training_util import get_global_step
    from xlapy.compat.v1.variables import (global_variables_initializer,
                                           local_variables_initializer)
    graph = get_default_graph()
    eval_step = get_or_create_eval_step()
    ops = [] if eval_op is None else (list(eval_op.values()) if isinstance(eval_op, dict)
                                      else list(eval_op) if isinstance(eval_op, (list, tuple))
                                      else [eval_op])
    step_up = assign_add(eval_step, 1)
    if summary_op is _USE_DEFAULT:
        summary_op = merge_all()
    init = global_variables_initializer()
    local_init = group(local_variables_initializer(), tables_initializer())
    saver = Saver(variables_to_restore)
    global_step = get_global_step()
    with Session(graph=graph, config=session_config) as sess:
        sess.run(init)
        saver.restore(sess, checkpoint_path)
        sess.run(local_init)
        _run(initial_op, initial_op_feed_dict, sess)
        try:
            for i in range(int(num_evals)):
                sess.run([ops, step_up], eval_op_feed_dict)
                logging.info("Evaluation [%d/%d]", i + 1, num_evals)
        except OutOfRangeError:
            pass
        final = _run(final_op, final_op_feed_dict, sess)
        if summary_op is not None and logdir and _can_write_events():
            step = sess.run(global_step) if global_step is not None else sess.run(eval_step)
            writer = FileWriter(logdir)
            writer.add_summary(sess.run(summary_op, summary_op_feed_dict), step)
            writer.close()
    return final


def evaluate_once(master, checkpoint_path, logdir, num_evals=1, initial_op=None,
                  initial_op_feed_dict=None, eval_op=None, eval_op_feed_dict=None,
                  final_op=None, final_op_feed_dict=None, summary_op=_USE_DEFAULT,
                  summary_op_feed_dict=None, variables_to_restore=None, session_config=None,
                  hooks=None):
    """One evaluation of the checkpoint at checkpoint_path; returns final_op's value."""
    logging.info("Starting evaluation at %s", time.strftime("%Y-%m-%d-%H:%M:%S",
                                                            time.gmtime()))
    return _evaluate(os.fspath(checkpoint_path), logdir, num_evals, initial_op,
                     initial_op_feed_dict, eval_op, eval_op_feed_dict, final_op,
                     final_op_feed_dict, summary_op, summary_op_feed_dict,
                     variables_to_restore, session_config, hooks)


def evaluation_loop(master, checkpoint_dir, logdir, num_evals=1, initial_op=None,
                    initial_op_feed_dict=None, init_fn=None, eval_op=None,
                    eval_op_feed_dict=None, final_op=None, final_op_feed_dict=None,
                    summary_op=_USE_DEFAULT, summary_op_feed_dict=None,
                    variables_to_restore=None, eval_interval_secs=60,
                    max_number_of_evaluations=None, session_config=None, timeout=None,
                    timeout_fn=None, hooks=None):
    """Evaluates each new checkpoint of checkpoint_dir; returns the last final_op value."""
    final = None
    done = 0
    for path in checkpoints_iterator(checkpoint_dir, eval_interval_secs, timeout,
                                     timeout_fn):
        final = _evaluate(path, logdir, num_evals, initial_op, initial_op_feed_dict,
                          eval_op, eval_op_feed_dict, final_op, final_op_feed_dict,
                          summary_op, summary_op_feed_dict, variables_to_restore,
                          session_config, hooks)
        done += 1
        if max_number_of_evaluations is not None and done >= max_number_of_evaluations:
            break
    return final
