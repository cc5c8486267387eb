"""tf.train.QueueRunner, add_queue_runner and start_queue_runners: threads that run a queue's
enqueue ops in a session until the input ends (OutOfRangeError: the queue is closed) or
the coordinator asks them to stop."""

from __future__ import annotations

import threading

from xlapy.compat.v1.errors import (CancelledError, InvalidArgumentError, OutOfRangeError)
from xlapy.compat.v1.framework import GraphKeys, get_default_graph


class QueueRunner:
    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue is None or not enqueue_ops:
            raise InvalidArgumentError("QueueRunner needs a queue and its enqueue ops")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else self._close_op
        self._closed_types = tuple(queue_closed_exception_types or
                                   (OutOfRangeError, CancelledError))
        self._exceptions: list = []

    queue = property(lambda self: self._queue)
    enqueue_ops = property(lambda self: list(self._enqueue_ops))
    close_op = property(lambda self: self._close_op)
    exceptions_raised = property(lambda self: list(self._exceptions))

    def _run(self, sess, op, coord, alive):
        st = self._queue._state(sess)
        try:
            while not (coord is not None and coord.should_stop()):
                try:
                    sess.run(op)
                except self._closed_types:
                    with alive[1]:
                        alive[0] -= 1
                        last = alive[0] == 0
                    if last:
                        try:
                            sess.run(self._close_op)
                        except Exception as e:  # the session is gone
                            self._exceptions.append(e)
                    return
        except Exception as e:
            self._exceptions.append(e)
            if coord is not None:
                coord.request_stop(e)
            else:
                raise
        finally:
            with st.cond:
                st.runners -= 1

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        st = self._queue._state(sess)
        alive = [len(self._enqueue_ops), threading.Lock()]
        threads = []
        for k, op in enumerate(self._enqueue_ops):
            t = threading.Thread(target=self._run, args=(sess, op, coord, alive),
                                 name=f"QueueRunnerThread-{self._queue.name}-{k}",
                                 daemon=daemon)
            threads.append(t)
        with st.cond:
            st.runners += len(threads)
        if coord is not None:
            closer = threading.Thread(target=self._close_on_stop, args=(sess, coord),
                                      daemon=True)
            threads.append(closer)
            for t in threads:
                coord.register_thread(t)
        if start:
            for t in threads:
                t.start()
        return threads

    def _close_on_stop(self, sess, coord):
        coord.wait_for_stop()
        try:
            sess.run(self._cancel_op)
        except Exception:  # (a closed session: its queues are closed already)
            pass


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS):
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=GraphKeys.QUEUE_RUNNERS):
    from xlapy.compat.v1.session import get_default_session
    sess = sess or get_default_session()
    if sess is None:
        if not get_default_graph().get_collection(collection):
            return []  # (nothing to start: scripts calling it out of habit run on)
        raise InvalidArgumentError("Cannot start queue runners: No default session is "
                                   "registered. Use `with sess.as_default()` or pass an "
                                   "explicit session to tf.start_queue_runners(sess=sess)")
    threads = []
    for qr in sess.graph.get_collection(collection):
        threads += qr.create_threads(sess, coord=coord, daemon=daemon, start=start)
    return threads
