"""slim.learning: create_train_op and the training loop of TF-Slim (TF 1.15's
contrib/slim/python/slim/learning.py).

    train_op = slim.learning.create_train_op(total_loss, optimizer, clip_gradient_norm=4)
    final_loss = slim.learning.train(train_op, logdir, number_of_steps=1000,
                                     save_summaries_secs=60, save_interval_secs=600)

train runs train_step_fn under a tf.train.Supervisor on logdir (restoring its latest
checkpoint, else running init_op and init_fn) until the global step reaches
number_of_steps (or an input raises OutOfRangeError), logs the loss every
log_every_n_steps steps, writes checkpoints and summaries on their intervals and a final
checkpoint, and returns the last loss.
"""

from __future__ import annotations

import os
import time

from xlapy.compat.v1 import logging
from xlapy.compat.v1.contrib.training.train_ops import (add_gradients_summaries,
                                                        clip_gradient_norms,
                                                        create_train_op as _create_train_op,
                                                        multiply_gradients)
from xlapy.compat.v1.errors import InvalidArgumentError, OutOfRangeError
from xlapy.compat.v1 import framework as _framework

__all__ = ["add_gradients_summaries", "clip_gradient_norms", "create_train_op",
           "multiply_gradients", "train", "train_step"]

_USE_DEFAULT = 0


def create_train_op(total_loss, optimizer, global_step=_USE_DEFAULT, update_ops=None,
                    variables_to_train=None, clip_gradient_norm=0,
                    summarize_gradients=False, gate_gradients=1, aggregation_method=None,
                    colocate_gradients_with_ops=False, gradient_multipliers=None,
                    check_numerics=True):
    """contrib.training.create_train_op, the gradients multiplied by gradient_multipliers
    and each clipped to clip_gradient_norm (when > 0) first."""
    from xlapy.compat.v1.train.training_util import get_or_create_global_step
    if global_step is _USE_DEFAULT:
        global_step = get_or_create_global_step()

    def transform_grads_fn(grads):
        if gradient_multipliers:
            with _framework.get_default_graph().name_scope("multiply_grads"):
                grads = multiply_gradients(grads, gradient_multipliers)
        if clip_gradient_norm > 0:
            with _framework.get_default_graph().name_scope("clip_grads"):
                grads = clip_gradient_norms(grads, clip_gradient_norm)
        return grads
    return _create_train_op(total_loss, optimizer, global_step, update_ops,
                            variables_to_train, transform_grads_fn, summarize_gradients,
                            gate_gradients, aggregation_method, colocate_gradients_with_ops,
                            check_numerics)


def train_step(sess, train_op, global_step, train_step_kwargs):
    """One step: (total_loss, should_stop)."""
    start = time.time()
    total_loss, np_global_step = sess.run([train_op, global_step])
    elapsed = time.time() - start
    if "should_log" in train_step_kwargs and sess.run(train_step_kwargs["should_log"]):
        logging.info("global step %d: loss = %.4f (%.3f sec/step)", np_global_step,
                     total_loss, elapsed)
    should_stop = bool(sess.run(train_step_kwargs["should_stop"])) \
        if "should_stop" in train_step_kwargs else False
    return total_loss, should_stop


def train(train_op, logdir, train_step_fn=train_step, train_step_kwargs=_USE_DEFAULT,
          log_every_n_steps=1, graph=None, master="", is_chief=True, global_step=None,
          number_of_steps=None, init_op=_USE_DEFAULT, init_feed_dict=None,
          local_init_op=_USE_DEFAULT, init_fn=None, ready_op=_USE_DEFAULT,
          summary_op=_USE_DEFAULT, save_summaries_secs=600, summary_writer=_USE_DEFAULT,
          startup_delay_steps=0, saver=None, save_interval_secs=600, sync_optimizer=None,
          session_config=None, session_wrapper=None, trace_every_n_steps=None,
          ignore_live_threads=False):
    from xlapy.compat.v1.ops.math_ops import equal, greater_equal, mod
    from xlapy.compat.v1.ops._common import tensor
    from xlapy.compat.v1.train.saver import Saver
    from xlapy.compat.v1.train.supervisor import USE_DEFAULT, Supervisor
    from xlapy.compat.v1.train.training_util import get_or_create_global_step
    if train_op is None:
        raise InvalidArgumentError("train_op cannot be None.")
    if logdir is None:
        if summary_op is not _USE_DEFAULT:
            raise InvalidArgumentError("Cannot provide summary_op because logdir=None")
        if saver is not None:
            raise InvalidArgumentError("Cannot provide saver because logdir=None")
        if trace_every_n_steps is not None:
            raise InvalidArgumentError("Cannot provide trace_every_n_steps because "
                                       "logdir=None")
    if sync_optimizer is not None:
        raise InvalidArgumentError("slim.learning.train: sync_optimizer is not supported")
    if session_wrapper is not None:
        raise InvalidArgumentError("slim.learning.train: session_wrapper is not supported")
    if logdir:  # (TF's Supervisor makes it with its summary writer)
        os.makedirs(logdir, exist_ok=True)
    graph = graph or _framework.get_default_graph()
    with graph.as_default():
        if global_step is None:
            global_step = get_or_create_global_step()
        saver = saver or Saver()
        if train_step_kwargs is _USE_DEFAULT:
            with graph.name_scope("train_step"):
                train_step_kwargs = {}
                if number_of_steps:
                    train_step_kwargs["should_stop"] = greater_equal(
                        global_step, tensor(number_of_steps, dtype=global_step.dtype))
                else:
                    train_step_kwargs["should_stop"] = tensor(False)
                if log_every_n_steps > 0:
                    train_step_kwargs["should_log"] = equal(
                        mod(global_step, tensor(log_every_n_steps, dtype=global_step.dtype)),
                        tensor(0, dtype=global_step.dtype))

    def pick(v):
        return USE_DEFAULT if v is _USE_DEFAULT else v
    sv = Supervisor(graph=graph, is_chief=is_chief, logdir=logdir, init_op=pick(init_op),
                    init_feed_dict=init_feed_dict, local_init_op=pick(local_init_op),
                    ready_op=pick(ready_op),
                    summary_op=pick(summary_op) if logdir else None,
                    summary_writer=pick(summary_writer) if logdir else None,
                    global_step=global_step, saver=saver,
                    save_summaries_secs=save_summaries_secs,
                    save_model_secs=save_interval_secs, init_fn=init_fn)
    total_loss = None
    with sv.managed_session(master, start_standard_services=False,
                            config=session_config) as sess:
        logging.info("Starting Session.")
        if is_chief and logdir:
            sv.start_standard_services(sess)
        try:
            while not sv.should_stop():
                total_loss, should_stop = train_step_fn(sess, train_op, global_step,
                                                        train_step_kwargs)
                if should_stop:
                    logging.info("Stopping Training.")
                    sv.request_stop()
                    break
        except OutOfRangeError as e:
            logging.info("Caught OutOfRangeError. Stopping Training. %s", e)
        if logdir and sv.is_chief:
            logging.info("Finished training! Saving model to disk.")
            sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
    return total_loss
