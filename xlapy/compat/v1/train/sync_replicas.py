"""tf.train.SyncReplicasOptimizer (synchronous replicated training: the gradients of
replicas_to_aggregate replicas averaged into one update) and tf.train.LooperThread.

SyncReplicasOptimizer builds TF's graph. apply_gradients(grads_and_vars, global_step)
gives one ConditionalAccumulator per variable (SparseConditionalAccumulator for an
IndexedSlices gradient) and a token queue of global-step values, and returns the workers'
train op: apply each gradient to its accumulator tagged with the worker's local step (see
below), then dequeue a token and make it the new local step.
The chief's sync op takes the mean of the accumulated gradients (take_grad), applies them
with the wrapped optimizer (incrementing global_step) and enqueues
max(total_num_replicas, replicas_to_aggregate) tokens holding the new global step; with
variable_averages (an ExponentialMovingAverage), the chief's runner then updates the
averages of variables_to_average. An
accumulator drops a gradient whose local step is behind its global step: the gradient of a
replica that computed it on variables since updated (a stale one).

As in TF, the token queue starts with the tokens of get_init_tokens_op (the global step, 0),
so the first step of each replica does not wait for the chief, and its second step computes
a gradient from local step 0 which the accumulators drop (stale); from then on each update
averages replicas_to_aggregate fresh gradients.

Every replica runs in this process here (no server connects others): each is a thread
running the train op in the session the chief's hook set up, so the replicas share the
variables, the accumulators and the token queue (there is one graph). The local step is
each replica's own, as each TF worker has its own local variable: it is kept per thread of
the session (ops XlapySyncReplicasLocalStep / XlapySyncReplicasSetLocalStep), set by the
train op (to the token it dequeued) and by local_step_init_op (to the global step) in the
thread that runs them; a thread that has run neither starts as a TF worker that just ran
local_step_init_op, from the global step. Both ops also assign the sync_rep_local_step
variable, so that reading it gives the local step of the replica that set one last (TF's
value for a single worker).

make_session_run_hook(is_chief=True) runs chief_init_op and the init tokens op after the
session is made and starts the chief queue runner: a thread that waits until every
accumulator holds replicas_to_aggregate gradients and then runs the sync op, so it waits as
long as the replicas take (the accumulators' own no-gradient deadline is for a take_grad a
user runs by hand), and ends when the session closes or the coordinator stops.
"""

from __future__ import annotations

import threading
import time
import weakref

import numpy as np

from xlapy.compat.v1 import dtypes, logging
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import GraphKeys, convert_to_tensor, get_default_graph
from xlapy.compat.v1.misc_api import report_uninitialized_variables
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops._common import make_op
from xlapy.compat.v1.ops.array_ops import fill, group, identity, no_op
from xlapy.compat.v1.ops.misc_framework import IndexedSlices
from xlapy.compat.v1.ops.queue_more_accum import (ConditionalAccumulator,
                                                  SparseConditionalAccumulator)
from xlapy.compat.v1.ops.queue_ops import FIFOQueue
from xlapy.compat.v1.tensor_shape import TensorShape
from xlapy.compat.v1.train.coordinator import Coordinator
from xlapy.compat.v1.train.optimizer import Optimizer
from xlapy.compat.v1.train.queue_runner import QueueRunner
from xlapy.compat.v1.train.session_run_hook import SessionRunHook
from xlapy.compat.v1.variables import Variable, global_variables

_UNBOUNDED = 2 ** 31 - 1   # the token queue's capacity (TF's -1: no bound)


class SyncReplicasOptimizer(Optimizer):
    """Averages the gradients of replicas_to_aggregate replicas before each update of the
    wrapped optimizer (see the module doc)."""

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if not isinstance(opt, Optimizer):
            raise InvalidTypeError(f"SyncReplicasOptimizer wraps a tf.train.Optimizer, got "
                                   f"{opt!r}")
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        for what, n in (("replicas_to_aggregate", replicas_to_aggregate),
                        ("total_num_replicas", total_num_replicas)):
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise InvalidArgumentError(f"SyncReplicasOptimizer: {what} must be a positive "
                                           f"integer, got {n!r}")
        super().__init__(use_locking, name)
        logging.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s",
                     replicas_to_aggregate, total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list: list = []
        self._local_step = None
        self.local_step_init_op = None
        self.chief_init_op = None
        self.ready_for_local_init_op = None

    # ---- what the wrapped optimizer does ------------------------------------------------------
    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's compute_gradients."""
        return self._opt.compute_gradients(*args, **kwargs)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        """The wrapped optimizer's variables (not the local step)."""
        return self._opt.variables()

    # ---- the graph -----------------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The workers' train op: each gradient into its accumulator, then the next token
        (see the module doc). Builds the chief's sync op and init ops too."""
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise InvalidArgumentError("Must supply at least one variable")
        if global_step is None:
            raise InvalidArgumentError("Global step is required to check staleness")
        for _, v in grads_and_vars:
            if not hasattr(v, "_ref"):
                raise InvalidArgumentError(f"apply_gradients: {v!r} is not a Variable (each "
                                           "pair is (gradient, variable))")
        graph = get_default_graph()
        step_dtype = global_step.dtype
        self._global_step = global_step
        self._local_step = Variable(0, trainable=False, collections=[
            GraphKeys.LOCAL_VARIABLES], dtype=step_dtype, name="sync_rep_local_step")
        self.local_step_init_op = self._set_local_step(self._local_step.assign(global_step))
        chief_init_ops = [self.local_step_init_op]
        self.ready_for_local_init_op = report_uninitialized_variables(global_variables())

        train_ops, aggregated, var_list = [], [], []
        self._accumulator_list = []
        with graph.name_scope(name or self._name):
            local_step = make_op("XlapySyncReplicasLocalStep", [_read(global_step)],
                                 {"replicas": self}, name="local_step").outputs[0]
            for grad, var in grads_and_vars:
                var_list.append(var)
                if grad is None:
                    aggregated.append(None)
                    continue
                if isinstance(grad, IndexedSlices):
                    acc = SparseConditionalAccumulator(
                        grad.dtype, shape=var.get_shape(),
                        shared_name=var.name + "/grad_accum")
                    train_ops.append(acc.apply_indexed_slices_grad(
                        grad, local_step=local_step))
                    aggregated.append(acc.take_indexed_slices_grad(
                        self._replicas_to_aggregate))
                else:
                    grad = convert_to_tensor(grad)
                    acc = ConditionalAccumulator(grad.dtype, shape=var.get_shape(),
                                                 shared_name=var.name + "/grad_accum")
                    train_ops.append(acc.apply_grad(grad, local_step=local_step))
                    aggregated.append(acc.take_grad(self._replicas_to_aggregate))
                self._accumulator_list.append((acc, var.device))
        if not train_ops:
            raise InvalidArgumentError(
                f"No gradients provided for any variable: "
                f"{[v.name for _, v in grads_and_vars]}")

        with graph.name_scope(None):
            update_op = self._opt.apply_gradients(list(zip(aggregated, var_list)),
                                                  global_step)
            self._sync_token_queue = FIFOQueue(_UNBOUNDED, step_dtype, shapes=(),
                                               name="sync_token_q", shared_name="sync_token_q")
            # (the chief queue runner's queue: nothing is enqueued to it; the sync op is
            # the runner's op)
            dummy_queue = FIFOQueue(1, dtypes.int32, shapes=(), name="dummy_queue",
                                    shared_name="dummy_queue")
            with graph.control_dependencies(train_ops):
                token = self._sync_token_queue.dequeue()
            train_op = self._set_local_step(self._local_step.assign(token))
            with graph.control_dependencies([update_op]):
                # (the global step read after the update: the next step's tokens)
                tokens = fill([self._tokens_per_step], _read(global_step))
                sync_op = self._sync_token_queue.enqueue_many((tokens,))
            after = []
            if self._variable_averages is not None:
                # (run by the chief's runner after the sync op, in a run of its own: the
                # averages read the variables' values as that run starts, so these are
                # the updated ones)
                after.append(self._variable_averages.apply(self._variables_to_average))
            self._chief_queue_runner = _ChiefQueueRunner(
                dummy_queue, [sync_op], accumulators=[a for a, _ in self._accumulator_list],
                required=self._replicas_to_aggregate, token_queue=self._sync_token_queue,
                after_ops=after)
        for acc, _ in self._accumulator_list:
            chief_init_ops.append(acc.set_global_step(global_step, name="SetGlobalStep"))
        self.chief_init_op = group(*chief_init_ops)
        self._gradients_applied = True
        return train_op

    def _set_local_step(self, value):
        return make_op("XlapySyncReplicasSetLocalStep", [value], {"replicas": self},
                       name="set_local_step").outputs[0]

    def get_chief_queue_runner(self):
        """The QueueRunner running the sync op (the chief starts it)."""
        if not self._gradients_applied:
            raise InvalidArgumentError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens=-1):
        """An op putting num_tokens tokens (the global step) into the token queue: the
        first step's tokens, replicas_to_aggregate by default (-1)."""
        if not self._gradients_applied:
            raise InvalidArgumentError("get_init_tokens_op() should be called after "
                                       "apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise InvalidArgumentError(f"Too few tokens to finish the first step: {num_tokens} "
                                       f"(given) vs {tokens_needed} (needed)")
        if num_tokens > 0:
            with get_default_graph().name_scope(None):
                tokens = fill([num_tokens], _read(self._global_step))
                return self._sync_token_queue.enqueue_many((tokens,))
        return no_op(name="no_init_tokens")

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """A SessionRunHook running the init ops (and, on the chief, the init tokens op
        and the chief queue runner) once the session exists."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


# ---- the replicas' local steps: per thread of a session -----------------------------------------

_LOCAL_STEPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # session -> {opt: local}
_LOCAL_STEPS_LOCK = threading.Lock()


def _thread_local(session, replicas) -> threading.local:
    with _LOCAL_STEPS_LOCK:
        per = _LOCAL_STEPS.setdefault(session, {})
        if replicas not in per:
            per[replicas] = threading.local()
        return per[replicas]


def _local_step_executor(session, op):
    replicas = op.get_attr("replicas")

    def run(global_step):
        """The calling thread's local step, or the global step for a thread that has none."""
        return [getattr(_thread_local(session, replicas), "step", np.asarray(global_step))]
    return run


def _set_local_step_executor(session, op):
    replicas = op.get_attr("replicas")

    def run(value):
        value = np.asarray(value)
        _thread_local(session, replicas).step = value
        return [value]
    return run


def _scalar_like_input(op):
    return [(op.inputs[0].dtype, TensorShape([]))]


for _t, _executor in (("XlapySyncReplicasLocalStep", _local_step_executor),
                      ("XlapySyncReplicasSetLocalStep", _set_local_step_executor)):
    register_op(_t, lowering=None, stateful=True, infer=_scalar_like_input)(lambda m, *a: None)
    get_op_def(_t).extra.update(executor=_executor)
not_differentiable("XlapySyncReplicasLocalStep", "XlapySyncReplicasSetLocalStep")


def _read(v):
    """v's value, read when the op runs (after the control dependencies in effect)."""
    return v.read_value() if hasattr(v, "read_value") else identity(v)


class _ChiefQueueRunner(QueueRunner):
    """The chief's QueueRunner: each run of the sync op waits until every accumulator
    holds the gradients it needs; it counts as a runner of the token queue too (so that a
    replica waiting for a token is not told that nothing feeds the queue)."""

    def __init__(self, queue, enqueue_ops, accumulators, required, token_queue,
                 after_ops=()):
        super().__init__(queue, enqueue_ops)
        self._after_ops = list(after_ops)
        self._accumulators = list(accumulators)
        self._required = required
        self._token_queue = token_queue

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        states = [self._queue._state(sess), self._token_queue._state(sess)]
        threads = [threading.Thread(target=self._run, args=(sess, op, coord, states),
                                    name=f"SyncReplicasChiefThread-{k}", daemon=daemon)
                   for k, op in enumerate(self._enqueue_ops)]
        for st in states:
            with st.cond:
                st.runners += len(threads)
        if coord is not None and hasattr(coord, "register_thread"):
            for t in threads:
                coord.register_thread(t)
        if start:
            for t in threads:
                t.start()
        return threads

    def _ready(self, sess, coord, states) -> bool:
        """Wait until every accumulator has the gradients; False when the session closes
        or the coordinator stops first."""
        for acc in self._accumulators:
            st = acc._state(sess)
            with st.cond:
                while st.count < self._required:
                    if st.closed or states[0].closed or \
                            (coord is not None and coord.should_stop()):
                        return False
                    st.cond.wait(0.05)
        return True

    def _run(self, sess, op, coord, states):
        try:
            while not (coord is not None and coord.should_stop()):
                if not self._ready(sess, coord, states):
                    return
                try:
                    sess.run(op)
                    if self._after_ops:
                        sess.run(self._after_ops)
                except self._closed_types:  # (the session closed: SessionClosedError too)
                    return
        except Exception as e:
            self._exceptions.append(e)
            if coord is None or not hasattr(coord, "request_stop"):
                raise
            coord.request_stop(e)
        finally:
            for st in states:
                with st.cond:
                    st.runners -= 1


class _SyncReplicasOptimizerHook(SessionRunHook):
    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise InvalidArgumentError("SyncReplicasOptimizer.apply_gradient should be called "
                                       "before using the hook.")
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session, coord):
        missing = [n.decode() if isinstance(n, bytes) else str(n)
                   for n in session.run(self._ready_for_local_init_op)]
        if missing:
            raise RuntimeError(f"Init operations did not make model ready for "
                               f"SyncReplicasOptimizer local_init. Init op: "
                               f"{self._local_init_op.name}, error: Variables not "
                               f"initialized: {', '.join(missing)}")
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)


class LooperThread(threading.Thread):
    """A daemon thread calling target(*args, **kwargs) (or run_loop() of a subclass) every
    timer_interval_secs seconds (back to back when None) until the coordinator stops; an
    exception in it stops the coordinator, which re-raises it at join()."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise InvalidArgumentError(f"'coord' argument must be a Coordinator: {coord!r}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        if self._target:
            self._args = tuple(args or ())
            self._kwargs = dict(kwargs or {})
        elif args or kwargs:
            raise InvalidArgumentError("'args' and 'kwargs' argument require that you also "
                                       "pass 'target'")
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Start a LooperThread calling target every timer_interval_secs; returns it."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.time()
                while not self._coord.wait_for_stop(max(0.0, next_time - time.time())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once when the thread starts (a subclass's setup)."""

    def stop_loop(self):
        """Called once when the loop ends (a subclass's cleanup)."""

    def run_loop(self):
        """One call of the loop: target(*args, **kwargs)."""
        if self._target:
            self._target(*self._args, **self._kwargs)


__all__ = ["LooperThread", "SyncReplicasOptimizer"]
