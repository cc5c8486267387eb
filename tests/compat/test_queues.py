"""TF 1.x queues and the queue-based input pipeline: FIFOQueue / RandomShuffleQueue
semantics, QueueRunners with a Coordinator, slice_input_producer + shuffle_batch over
epochs (executor and XLA), batch with a smaller final batch, and clear errors where TF hung."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.ops import queue_ops

from .conftest import jit_config

X = np.arange(100, dtype=np.float32).reshape(50, 2)
Y = np.arange(50, dtype=np.int64)


@pytest.mark.parametrize("xla", [False, True])
def test_shuffle_batch_pipeline_sees_every_example_each_epoch(xla):
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x, y = tf.train.slice_input_producer([tf.constant(X), tf.constant(Y)], num_epochs=2)
        xb, yb = tf.train.shuffle_batch([x * 2.0, y], batch_size=10, capacity=40,
                                        min_after_dequeue=10, num_threads=2)
        w = tf.Variable(tf.ones([2, 1]))
        loss = tf.reduce_mean(tf.matmul(xb, w))
        with tf.Session(config=jit_config() if xla else None) as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            seen = []
            with pytest.raises(tf.errors.OutOfRangeError, match="is closed and has "
                                                                "insufficient elements"):
                while True:
                    a, b, v = sess.run([xb, yb, loss])
                    np.testing.assert_array_equal(a, 2 * X[b])
                    np.testing.assert_allclose(v, (2 * X[b]).sum(1).mean(), rtol=1e-6)
                    seen += list(b)
            coord.request_stop()
            coord.join(threads)
    assert sorted(seen) == sorted(list(Y) * 2)
    assert seen[:50] != list(range(50))  # shuffled


def test_fifo_queue_semantics():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(3, [tf.float32, tf.int32], shapes=[[2], []])
        enq = q.enqueue_many([tf.constant(X[:3]), tf.constant([7, 8, 9])])
        one = q.enqueue([tf.constant(X[0]), 5])
        a, b = q.dequeue()
        many = q.dequeue_many(2)
        upto = q.dequeue_up_to(3)
        with tf.Session() as s:
            s.run(enq)
            assert s.run(q.size()) == 3
            got = s.run([a, b])
            np.testing.assert_array_equal(got[0], X[0])
            assert got[1] == 7
            s.run(one)
            m = s.run(many)
            np.testing.assert_array_equal(m[1], [8, 9])
            s.run(q.close())
            assert s.run(q.is_closed())
            u = s.run(upto)  # the last element, fewer than asked once closed
            np.testing.assert_array_equal(u[1], [5])
            with pytest.raises(tf.errors.OutOfRangeError, match="current size 0"):
                s.run(a)
            with pytest.raises(tf.errors.CancelledError, match="is closed"):
                s.run(one)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Shape mismatch"):
            q.enqueue([tf.constant([1.0, 2.0, 3.0]), 1])


def test_batch_of_a_dict_with_a_smaller_final_batch():
    with tf.Graph().as_default():
        x, y = tf.train.slice_input_producer([tf.constant(X[:7]), tf.constant(Y[:7])],
                                             num_epochs=1, shuffle=False)
        out = tf.train.batch({"x": x, "y": y}, batch_size=3, allow_smaller_final_batch=True)
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(s, coord)
            sizes = []
            try:
                while True:
                    v = s.run(out)
                    np.testing.assert_array_equal(v["x"], X[v["y"]])
                    sizes.append(len(v["y"]))
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    assert sizes == [3, 3, 1]


def test_waiting_without_runners_or_past_the_timeout_is_an_error(monkeypatch):
    monkeypatch.setattr(queue_ops, "NO_RUNNER_WAIT_S", 0.2)
    with tf.Graph().as_default():
        q = tf.FIFOQueue(2, tf.float32)
        d = q.dequeue()
        with tf.Session() as s:
            with pytest.raises(tf.errors.DeadlineExceededError, match="start_queue_runners"):
                s.run(d)
        cfg = tf.ConfigProto(operation_timeout_in_ms=150)
        with tf.Session(config=cfg) as s:
            s.run(q.enqueue(1.0))
            s.run(q.enqueue(2.0))
            with pytest.raises(tf.errors.DeadlineExceededError, match="Timed out"):
                s.run(q.enqueue(3.0))  # full, nothing dequeues
