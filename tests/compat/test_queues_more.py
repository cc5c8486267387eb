"""TF 1.x's other queues and the gradient accumulators: PaddingFIFOQueue (padded batches),
PriorityQueue (smallest priority first), ConditionalAccumulator and
SparseConditionalAccumulator (mean / sum, stale gradients dropped, take_grad waiting for
the gradients of other threads), tf.train.batch(dynamic_pad=True) and
tf.contrib.training.bucket_by_sequence_length, on the executor and with the model under XLA."""

import threading
import time

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.ops import queue_ops

from .conftest import jit_config


def _drain(sess, fetches):
    out = []
    try:
        while True:
            out.append(sess.run(fetches))
    except tf.errors.OutOfRangeError:
        return out


def _padded(rows, fill=0, dtype=None):
    width = max(len(r) for r in rows)
    return np.array([list(r) + [fill] * (width - len(r)) for r in rows], dtype=dtype)


# ---- PaddingFIFOQueue -------------------------------------------------------------------------

def test_padding_fifo_queue_pads_each_batch_to_its_largest_element():
    q = tf.PaddingFIFOQueue(10, [tf.float32, tf.string, tf.int32],
                            shapes=[[None], [None], [None, 2]])
    x = tf.placeholder(tf.float32, [None])
    s = tf.placeholder(tf.string, [None])
    m = tf.placeholder(tf.int32, [None, 2])
    enq = q.enqueue([x, s, m])
    many = q.dequeue_many(2)
    upto = q.dequeue_up_to(5)
    one = q.dequeue()
    assert many[0].shape.as_list() == [2, None] and many[2].shape.as_list() == [2, None, 2]
    assert upto[0].shape.as_list() == [None, None] and one[0].shape.as_list() == [None]
    data = [([1.0, 2.0, 3.0], [b"a"], [[1, 2]]), ([4.0], [b"b", b"cc"], [[3, 4], [5, 6]]),
            ([], [b"d", b"e", b"f"], np.zeros((0, 2), np.int32)), ([7.0, 8.0], [], [[9, 9]]),
            ([5.0], [b"z"], [[1, 1]])]
    with tf.Session() as sess:
        for a, b, c in data:
            sess.run(enq, {x: a, s: b, m: c})
        f, st, mm = sess.run(many)
        np.testing.assert_array_equal(f, [[1, 2, 3], [4, 0, 0]])
        assert st.tolist() == [[b"a", b""], [b"b", b"cc"]]
        np.testing.assert_array_equal(mm, [[[1, 2], [0, 0]], [[3, 4], [5, 6]]])
        f, st, mm = sess.run(one)  # one element: as it was enqueued, no padding
        assert f.shape == (0,) and st.tolist() == [b"d", b"e", b"f"] and mm.shape == (0, 2)
        sess.run(q.close())
        f, st, mm = sess.run(upto)  # closed: the two left, padded
        np.testing.assert_array_equal(f, [[7, 8], [5, 0]])
        assert st.tolist() == [[b""], [b"z"]] and mm.dtype == np.int32
        with pytest.raises(tf.errors.OutOfRangeError, match="current size 0"):
            sess.run(upto)
        with pytest.raises(tf.errors.CancelledError, match="is closed"):
            sess.run(enq, {x: [1.0], s: [b"a"], m: [[1, 1]]})


def test_padding_fifo_queue_checks_shapes():
    with pytest.raises(ValueError, match="a list of shapes must be provided"):
        tf.PaddingFIFOQueue(3, [tf.float32], shapes=[None])
    with pytest.raises(ValueError, match="defined rank"):
        tf.PaddingFIFOQueue(3, [tf.float32], shapes=[tf.TensorShape(None)])
    with pytest.raises(ValueError, match="received 2 dtypes and 1 shapes"):
        tf.PaddingFIFOQueue(3, [tf.float32, tf.int32], shapes=[[None]])
    q = tf.PaddingFIFOQueue(3, tf.float32, shapes=[[None, 3]])
    with pytest.raises(ValueError, match="Shape mismatch"):
        q.enqueue(tf.zeros([2, 2]))  # known when the graph is built
    p = tf.placeholder(tf.float32)
    enq = q.enqueue(p)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"component 0 .*Expected \[\?,3\], got \[3\]"):
            sess.run(enq, {p: np.zeros(3)})  # rank 1 where the queue has rank 2
        sess.run(enq, {p: np.ones((1, 3))})
        assert sess.run(q.size()) == 1


# ---- PriorityQueue ----------------------------------------------------------------------------

def test_priority_queue_dequeues_smallest_priority_first():
    q = tf.PriorityQueue(10, [tf.string, tf.float32], shapes=[[], [2]])
    enq = q.enqueue_many([tf.constant([5, 1, 3, 1, -2], tf.int64),
                          tf.constant([b"e", b"a", b"c", b"b", b"n"]),
                          tf.constant(np.arange(10, dtype=np.float32).reshape(5, 2))])
    prio, label, vec = q.dequeue()
    many = q.dequeue_many(3)
    assert prio.dtype == tf.int64 and many[2].shape.as_list() == [3, 2]
    with tf.Session() as sess:
        sess.run(enq)
        got = sess.run([prio, label, vec])
        assert got[0] == -2 and got[1] == b"n"
        np.testing.assert_array_equal(got[2], [8, 9])
        p, lab, v = sess.run(many)  # ties leave in the order they came
        assert p.tolist() == [1, 1, 3] and lab.tolist() == [b"a", b"b", b"c"]
        np.testing.assert_array_equal(v, [[2, 3], [6, 7], [4, 5]])
        sess.run(q.enqueue([0, "x", [0.5, 0.5]]))
        assert sess.run(q.size()) == 2
        assert sess.run(label) == b"x"
        sess.run(q.close())
        assert sess.run(q.dequeue_up_to(4))[0].tolist() == [5]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(prio)


def test_priority_queue_names_and_errors():
    q = tf.PriorityQueue(4, [tf.int32], shapes=[[]], names=["p", "v"])
    d = q.dequeue()
    with tf.Session() as sess:
        sess.run(q.enqueue({"p": 7, "v": 70}))
        sess.run(q.enqueue({"p": 2, "v": 20}))
        assert sess.run(d) == {"p": 2, "v": 20}
    with pytest.raises(ValueError, match="fully defined"):
        tf.PriorityQueue(4, [tf.int32], shapes=[[None]])
    with pytest.raises(ValueError, match="names"):
        tf.PriorityQueue(4, [tf.int32], shapes=[[]], names=["v"])
    free = tf.PriorityQueue(4, [tf.float32])  # no shapes: one element at a time
    with pytest.raises(ValueError, match="needs the components' shapes"):
        free.dequeue_many(2)
    p = tf.placeholder(tf.int64)
    enq = free.enqueue([p, 1.0])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="must be a scalar"):
            sess.run(enq, {p: [1, 2]})


# ---- ConditionalAccumulator -------------------------------------------------------------------

def test_conditional_accumulator_mean_sum_and_stale_gradients():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    g = tf.placeholder(tf.float32, [2])
    step = tf.placeholder(tf.int64, [])
    apply = acc.apply_grad(g, local_step=step)
    take = acc.take_grad(2)
    num = acc.num_accumulated()
    assert take.shape.as_list() == [2] and num.dtype == tf.int32
    with tf.Session() as sess:
        for v in ([1.0, 2.0], [3.0, 6.0], [5.0, 1.0]):
            sess.run(apply, {g: v, step: 0})
        assert sess.run(num) == 3
        np.testing.assert_allclose(sess.run(take), [3.0, 3.0])  # the mean of all three
        assert sess.run(num) == 0
        sess.run(apply, {g: [9.0, 9.0], step: 0})  # the global step is 1 now: stale
        assert sess.run(num) == 0
        sess.run(apply, {g: [1.0, 1.0], step: 1})
        sess.run(apply, {g: [2.0, 4.0], step: 5})
        np.testing.assert_allclose(sess.run(take), [1.5, 2.5])
        sess.run(acc.set_global_step(10))
        sess.run(apply, {g: [1.0, 1.0], step: 9})
        assert sess.run(num) == 0
    total = tf.ConditionalAccumulator(tf.int32, shape=[3], reduction_type="SUM")
    ints = tf.ConditionalAccumulator(tf.int32, shape=[3])
    ops = [a.apply_grad(tf.constant(v)) for a in (total, ints)
           for v in ([1, -5, 7], [2, 0, 1])]
    with tf.Session() as sess:
        sess.run(ops)
        np.testing.assert_array_equal(sess.run(total.take_grad(2)), [3, -5, 8])
        # integers: the mean truncates toward zero, as TF's integer division
        np.testing.assert_array_equal(sess.run(ints.take_grad(1)), [1, -2, 4])


def test_conditional_accumulator_errors():
    with pytest.raises(ValueError, match="reduction_type"):
        tf.ConditionalAccumulator(tf.float32, reduction_type="MAX")
    with pytest.raises(TypeError, match="numeric"):
        tf.ConditionalAccumulator(tf.string)
    acc = tf.ConditionalAccumulator(tf.float32, shape=[None, 2])
    with pytest.raises(ValueError, match="incompatible"):
        acc.apply_grad(tf.zeros([3]))
    p = tf.placeholder(tf.float32)
    apply = acc.apply_grad(p)
    n = tf.placeholder(tf.int32)
    take = acc.take_grad(n)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"expected \[\?,2\], got \[3\]"):
            sess.run(apply, {p: np.zeros(3)})
        sess.run(apply, {p: np.ones((4, 2))})
        with pytest.raises(tf.errors.InvalidArgumentError, match="applied so far"):
            sess.run(apply, {p: np.ones((3, 2))})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must be positive"):
            sess.run(take, {n: 0})
        assert sess.run(take, {n: 1}).shape == (4, 2)


def test_take_grad_waits_for_other_threads_and_a_model_uses_it_under_xla():
    """SyncReplicas' pattern: workers apply gradients of their batch, the chief takes the
    mean of num_required of them and applies it (the training step compiles)."""
    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(3, 4, 2)).astype(np.float32), rng.normal(size=(3, 4, 1))
    for xla in (False, True):
        with tf.Graph().as_default():
            w = tf.Variable(np.array([[0.5], [-1.0]], np.float32))
            x, y = tf.placeholder(tf.float32, [4, 2]), tf.placeholder(tf.float32, [4, 1])
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            acc = tf.ConditionalAccumulator(tf.float32, shape=[2, 1])
            apply = acc.apply_grad(tf.gradients(loss, w)[0], local_step=0)
            train = tf.assign_sub(w, 0.1 * acc.take_grad(3))
            with tf.Session(config=jit_config() if xla else None) as sess:
                if xla:  # the workers' gradient compiles
                    assert "XLA clustering: 1 cluster(s)" in sess.cluster_summary(
                        apply, {x: xs[0], y: ys[0]})
                sess.run(tf.global_variables_initializer())
                w0 = sess.run(w)

                def worker(k, sess=sess, apply=apply, x=x, y=y):
                    time.sleep(0.05 * k)
                    sess.run(apply, {x: xs[k], y: ys[k].astype(np.float32)})
                threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
                for t in threads:
                    t.start()
                got = sess.run(train)  # waits for the three
                for t in threads:
                    t.join()
        grads = [2 * xs[k].T @ (xs[k] @ w0 - ys[k]) / 4 for k in range(3)]
        np.testing.assert_allclose(got, w0 - 0.1 * np.mean(grads, 0), rtol=1e-5, atol=1e-6)


def test_take_grad_without_gradients_times_out_or_is_cancelled(monkeypatch):
    monkeypatch.setattr(queue_ops, "NO_RUNNER_WAIT_S", 0.2)
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    take = acc.take_grad(2)
    apply = acc.apply_grad(1.0)
    with tf.Session() as sess:
        sess.run(apply)
        with pytest.raises(tf.errors.DeadlineExceededError, match="has 1 of the 2 gradients"):
            sess.run(take)
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=100)) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError, match="Timed out"):
            sess.run(take)
    monkeypatch.setattr(queue_ops, "NO_RUNNER_WAIT_S", 30.0)
    sess = tf.Session()
    errors = []

    def taker():
        try:
            sess.run(take)
        except tf.errors.CancelledError as e:
            errors.append(e)
    t = threading.Thread(target=taker)
    t.start()
    time.sleep(0.1)
    sess.close()  # wakes the waiting take_grad
    t.join(5)
    assert not t.is_alive() and len(errors) == 1


# ---- SparseConditionalAccumulator -------------------------------------------------------------

def test_sparse_conditional_accumulator_averages_per_index():
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[6, 2])
    g1 = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([4, 1]),
                          tf.constant([6, 2], tf.int64))
    g2 = tf.IndexedSlices(tf.constant([[10.0, 10.0], [5.0, 7.0], [1.0, 1.0]]),
                          tf.constant([1, 0, 0]))
    apply1 = acc.apply_indexed_slices_grad(g1)
    apply2 = acc.apply_grad(g2.indices, g2.values, local_step=0)
    taken = acc.take_indexed_slices_grad(2)
    assert taken.values.shape.as_list() == [None, 2] and taken.indices.dtype == tf.int64
    summed = tf.SparseConditionalAccumulator(tf.float32, shape=[None, 2], reduction_type="SUM")
    s_apply = [summed.apply_indexed_slices_grad(g1), summed.apply_grad([2], [[1.0, 1.0]])]
    with tf.Session() as sess:
        sess.run([apply1, apply2])
        v = sess.run(taken)
        # index 1 had both gradients, 0 only the second (its two rows add up), 4 the first
        assert v.indices.tolist() == [0, 1, 4] and v.dense_shape.tolist() == [6, 2]
        np.testing.assert_allclose(v.values, [[6.0, 8.0], [6.5, 7.0], [1.0, 2.0]])
        sess.run(apply1)  # stale: the take moved the global step to 1
        assert sess.run(acc.num_accumulated()) == 0
        sess.run(s_apply)
        i, vals, shape = sess.run(summed.take_grad(2))
        assert i.tolist() == [1, 2, 4] and shape.tolist() == [-1, 2]  # dim 0 unknown
        np.testing.assert_allclose(vals, [[3.0, 4.0], [1.0, 1.0], [1.0, 2.0]])


def test_sparse_conditional_accumulator_errors():
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 2])
    with pytest.raises(ValueError, match="does not fit"):
        acc.apply_grad([0], [[1.0, 2.0, 3.0]])
    i, v = tf.placeholder(tf.int64), tf.placeholder(tf.float32, [None, 2])
    apply = acc.apply_grad(i, v)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices must be in \[0, 4\)"):
            sess.run(apply, {i: [4], v: [[1.0, 1.0]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="one per index"):
            sess.run(apply, {i: [0, 1], v: [[1.0, 1.0]]})


# ---- batch(dynamic_pad=True) and bucket_by_sequence_length ------------------------------------

def _lengths_pipeline(limit):
    """Examples (n, [1, 2, ..., n]) for n = 0..limit-1, in order, one epoch."""
    n = tf.train.range_input_producer(limit, num_epochs=1, shuffle=False).dequeue()
    return n, tf.range(1, n + 1)


def _run_pipeline(fetches, xla=False):
    with tf.Session(config=jit_config() if xla else None) as sess:
        if xla:  # the model on the batches compiles (around the executor's dequeue)
            assert "XLA clustering: 1 cluster(s)" in sess.cluster_summary(fetches)
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        out = _drain(sess, fetches)
        coord.request_stop()
        coord.join(threads)
    return out


@pytest.mark.parametrize("xla", [False, True])
def test_batch_with_dynamic_pad(xla):
    n, seq = _lengths_pipeline(7)
    lengths, batch = tf.train.batch([n, seq], batch_size=3, dynamic_pad=True,
                                    allow_smaller_final_batch=True)
    assert batch.shape.as_list() == [None, None]
    total = tf.reduce_sum(tf.square(tf.to_float(batch)) * 2.0, axis=1)  # a model on it
    got = _run_pipeline([lengths, batch, total], xla)
    assert [b[0].tolist() for b in got] == [[0, 1, 2], [3, 4, 5], [6]]
    for ls, b, t in got:
        np.testing.assert_array_equal(b, _padded([range(1, k + 1) for k in ls]))
        np.testing.assert_allclose(t, [k * (k + 1) * (2 * k + 1) / 3 for k in ls])
    with pytest.raises(ValueError, match="fully defined"):
        tf.train.batch([seq], batch_size=2)


def test_batch_join_and_maybe_batch_with_dynamic_pad():
    """batch_join / maybe_batch / maybe_batch_join pad as batch does (one enqueue thread
    per member: the batches' order across members is not fixed, their contents are)."""
    n, seq = _lengths_pipeline(6)
    lengths, batch = tf.train.batch_join([[n, seq]], batch_size=2, dynamic_pad=True,
                                         allow_smaller_final_batch=True)
    got = _run_pipeline([lengths, batch])
    assert sorted(k for ls, _ in got for k in ls) == list(range(6))
    for ls, b in got:
        np.testing.assert_array_equal(b, _padded([range(1, k + 1) for k in ls]))
    tf.reset_default_graph()
    n, seq = _lengths_pipeline(6)
    lengths, batch = tf.train.maybe_batch([n, seq], tf.equal(n % 2, 1), batch_size=2,
                                          dynamic_pad=True, allow_smaller_final_batch=True)
    got = _run_pipeline([lengths, batch])
    assert [b[0].tolist() for b in got] == [[1, 3], [5]]
    for ls, b in got:
        np.testing.assert_array_equal(b, _padded([range(1, k + 1) for k in ls]))
    with pytest.raises(ValueError, match="of known rank"):
        tf.train.batch_join([[tf.placeholder(tf.int32)]], batch_size=2, dynamic_pad=True)


@pytest.mark.parametrize("xla", [False, True])
def test_bucket_by_sequence_length(xla):
    n, seq = _lengths_pipeline(10)
    lengths, out = tf.contrib.training.bucket_by_sequence_length(
        n, {"seq": seq, "label": n * 10}, batch_size=2, bucket_boundaries=[3, 6],
        dynamic_pad=True, allow_smaller_final_batch=True)
    assert lengths.shape.as_list() == [None] and out["seq"].shape.as_list() == [None, None]
    mean = tf.reduce_sum(tf.to_float(out["seq"]), 1) / tf.maximum(tf.to_float(lengths), 1.0)
    got = _run_pipeline([lengths, out, mean], xla)
    # one routing thread: full batches in the order they filled, then (closed) the rest
    assert [g[0].tolist() for g in got] == [[0, 1], [3, 4], [6, 7], [8, 9], [2], [5]]
    for ls, o, m in got:
        np.testing.assert_array_equal(o["seq"], _padded([range(1, k + 1) for k in ls]))
        np.testing.assert_array_equal(o["label"], ls * 10)
        np.testing.assert_allclose(m, [(k + 1) / 2 if k else 0 for k in ls])


def test_bucket_with_batch_sizes_per_bucket_and_keep_input():
    n, _ = _lengths_pipeline(12)
    which, out = tf.contrib.training.bucket([n], which_bucket=tf.cast(n % 2, tf.int32),
                                            batch_size=[2, 3], num_buckets=2,
                                            keep_input=n < 10)
    assert which.shape.as_list() == [] and out[0].shape.as_list() == [None]
    got = _run_pipeline([which, out[0]])
    # evens in twos, odds in threes; 10 and 11 not kept; partial batches dropped
    assert [(w, b.tolist()) for w, b in got] == [(0, [0, 2]), (1, [1, 3, 5]), (0, [4, 6])]


def test_bucket_argument_errors():
    n, seq = _lengths_pipeline(3)
    bucket_by_length = tf.contrib.training.bucket_by_sequence_length
    with pytest.raises(ValueError, match="sequential increasing"):
        bucket_by_length(n, [seq], 2, [4, 2], dynamic_pad=True)
    with pytest.raises(TypeError, match="list or tuple"):
        bucket_by_length(n, [seq], 2, 4, dynamic_pad=True)
    with pytest.raises(ValueError, match="3 buckets"):
        bucket_by_length(n, [seq], [2, 2], [1, 2], dynamic_pad=True)
    with pytest.raises(ValueError, match="fully defined"):
        bucket_by_length(n, [seq], 2, [1, 2])
