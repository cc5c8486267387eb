"""More of tf.train and tf.contrib.opt: AdagradDAOptimizer (against a NumPy reference of
TF's ApplyAdagradDA, in the executor and compiled), SyncReplicasOptimizer (one replica
against the wrapped optimizer; two replica threads averaging their gradients; stale
gradients dropped; the hook in a MonitoredSession), LooperThread, the in-process
Server / ServerDef, and ScipyOptimizerInterface (L-BFGS-B, bounds, SLSQP constraints)."""

import threading
import time

import numpy as np
import pytest
import scipy.optimize

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidTypeError, UnimplementedError
from xlapy.compat.v1.ops._common import make

from .conftest import jit_config
from .helpers import assert_close, single_cluster

R = np.random.default_rng(11)
X = R.standard_normal((8, 3)).astype(np.float32)
X2 = R.standard_normal((8, 3)).astype(np.float32)
Y = R.standard_normal((8, 1)).astype(np.float32)
W0 = R.standard_normal((3, 1)).astype(np.float32)


def _grad(w, x=X):
    return 2 * x.T @ (x @ w - Y) / len(x)


def _linear_model():
    w = tf.Variable(W0, name="w")
    x = tf.placeholder(tf.float32, [8, 3], name="x")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - Y))
    return w, x, loss


# ---- AdagradDAOptimizer ------------------------------------------------------------------------

def _np_adagrad_da(steps, lr, l1, l2, init=0.1):
    """TF's ApplyAdagradDA, with T the global step before each step's increment."""
    w = W0.astype(np.float64)
    g, gg = np.zeros_like(w), np.full_like(w, init)
    for t in range(steps):
        grad = _grad(w)
        g, gg = g + grad, gg + grad * grad
        num = np.sign(g) * np.maximum(np.abs(g) - l1 * t, 0) if l1 > 0 else g
        w = -lr * num / (l2 * t * lr + np.sqrt(gg))
    return w, g, gg


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("l1,l2,init", [(0.0, 0.0, 0.1), (0.05, 0.1, 0.1), (0.8, 0.0, 0.5)])
def test_adagrad_da_matches_numpy(jit, l1, l2, init):
    w, x, loss = _linear_model()
    step_var = tf.train.get_or_create_global_step()
    opt = tf.train.AdagradDAOptimizer(0.5, step_var,
                                      initial_gradient_squared_accumulator_value=init,
                                      l1_regularization_strength=l1,
                                      l2_regularization_strength=l2)
    train = opt.minimize(loss, global_step=step_var)
    assert opt.get_slot_names() == ["gradient_accumulator", "gradient_squared_accumulator"]
    assert [v.op.name for v in opt.variables()] == ["w/AdagradDA", "w/AdagradDA_1"]
    sess = tf.Session(config=jit_config() if jit else None)
    sess.run(tf.global_variables_initializer())
    if jit:
        single_cluster(sess, train, {x: X})
    for _ in range(3):
        sess.run(train, {x: X})
    want_w, want_g, want_gg = _np_adagrad_da(3, 0.5, l1, l2, init)
    assert_close(sess.run(w), want_w.astype(np.float32), rtol=2e-5, atol=2e-6)
    assert_close(sess.run(opt.get_slot(w, "gradient_accumulator")),
                 want_g.astype(np.float32), rtol=2e-5, atol=2e-6)
    assert_close(sess.run(opt.get_slot(w, "gradient_squared_accumulator")),
                 want_gg.astype(np.float32), rtol=2e-5, atol=2e-6)
    assert sess.run(step_var) == 3
    if l1 == 0.8:  # the l1 shrinkage zeroes the coordinates whose mean gradient is small
        got = sess.run(w)
        assert np.any(got == 0) and not np.all(got == 0)


def test_adagrad_da_errors():
    step = tf.train.get_or_create_global_step()
    with pytest.raises(ValueError, match="initial_gradient_squared_accumulator_value"):
        tf.train.AdagradDAOptimizer(0.1, step, initial_gradient_squared_accumulator_value=0.0)
    with pytest.raises(ValueError, match="global_step"):
        tf.train.AdagradDAOptimizer(0.1, None)
    w, x, loss = _linear_model()
    with pytest.raises(TypeError, match="integer"):
        tf.train.AdagradDAOptimizer(0.1, tf.constant(1.0)).minimize(loss)
    with pytest.raises(InvalidTypeError, match="needs variables"):
        v = w._ref()   # (the second input is not a variable)
        make("ApplyAdagradDA", [v, tf.zeros([3, 1]), v, tf.zeros([3, 1]), tf.constant(0.1),
                                tf.constant(0.0), tf.constant(0.0),
                                tf.constant(0, tf.int64)])


# ---- SyncReplicasOptimizer -----------------------------------------------------------------------

def _wait_step(sess, step, n, timeout=10.0):
    end = time.monotonic() + timeout
    while sess.run(step) < n:
        assert time.monotonic() < end, f"the global step did not reach {n}"
        time.sleep(0.002)


def _sync_model(make_opt, replicas, jit=False):
    w, x, loss = _linear_model()
    step = tf.train.get_or_create_global_step()
    opt = tf.train.SyncReplicasOptimizer(make_opt(), replicas_to_aggregate=replicas)
    train = opt.minimize(loss, global_step=step)
    opt.pending = opt._accumulator_list[0][0].num_accumulated()  # (before the graph is final)
    sess = tf.train.MonitoredSession(
        tf.train.ChiefSessionCreator(config=jit_config() if jit else None),
        hooks=[opt.make_session_run_hook(is_chief=True)])
    return w, x, step, opt, train, sess


@pytest.mark.parametrize("jit", [False, True])
def test_sync_replicas_one_replica_matches_the_wrapped_optimizer(jit):
    w, x, step, opt, train, ms = _sync_model(lambda: tf.train.MomentumOptimizer(0.1, 0.9), 1,
                                             jit)
    assert opt.get_slot_names() == ["momentum"]
    assert [v.op.name for v in opt.variables()] == ["w/Momentum"]
    sess = ms._tf_sess()
    with ms:
        ms.run(train, {x: X})           # update 1, with the initial token (step 0)
        _wait_step(sess, step, 1)
        ms.run(train, {x: X})           # computed at local step 0: stale, dropped
        assert sess.run(opt._local_step) == 1 and sess.run(step) == 1
        assert sess.run(opt.pending) == 0
        for k in (2, 3):
            ms.run(train, {x: X})
            _wait_step(sess, step, k)
        got = sess.run(w)
    # the wrapped optimizer alone, 3 steps
    wv, acc = W0.astype(np.float64), np.zeros_like(W0, np.float64)
    for _ in range(3):
        acc = 0.9 * acc + _grad(wv)
        wv = wv - 0.1 * acc
    assert_close(got, wv.astype(np.float32), rtol=1e-5, atol=1e-6)


def test_sync_replicas_variable_averages():
    w, x, loss = _linear_model()
    step = tf.train.get_or_create_global_step()
    ema = tf.train.ExponentialMovingAverage(0.5)
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 1,
                                         variable_averages=ema, variables_to_average=[w])
    train = opt.minimize(loss, global_step=step)
    with tf.train.MonitoredSession(hooks=[opt.make_session_run_hook(True)]) as ms:
        sess = ms._tf_sess()
        ms.run(train, {x: X})
        w1 = W0 - 0.1 * _grad(W0)
        want = 0.5 * W0 + 0.5 * w1     # the average of the updated variable
        end = time.monotonic() + 10
        while not np.allclose(sess.run(ema.average(w)), want, rtol=1e-5, atol=1e-6):
            assert time.monotonic() < end, (sess.run(ema.average(w)), want)
            time.sleep(0.002)
        assert_close(sess.run(w), w1, rtol=1e-5, atol=1e-6)


def test_sync_replicas_sparse_gradient():
    """An IndexedSlices gradient goes through a SparseConditionalAccumulator."""
    w = tf.Variable(np.ones((4, 2), np.float32), name="w")
    step = tf.train.get_or_create_global_step()
    grad = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]),
                            tf.constant([0, 2], tf.int64), tf.constant([4, 2], tf.int64))
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5), 1)
    train = opt.apply_gradients([(grad, w)], global_step=step)
    assert isinstance(opt._accumulator_list[0][0], tf.SparseConditionalAccumulator)
    with tf.train.MonitoredSession(hooks=[opt.make_session_run_hook(True)]) as ms:
        sess = ms._tf_sess()
        ms.run(train)
        _wait_step(sess, step, 1)
        assert_close(sess.run(w), np.array([[0.5, 0], [1, 1], [-0.5, -1], [1, 1]], np.float32))


def test_sync_replicas_two_threads_average_their_gradients():
    w, x, step, opt, train, ms = _sync_model(lambda: tf.train.GradientDescentOptimizer(0.1), 2)
    sess = ms._tf_sess()
    rounds, errors = 4, []
    barrier = threading.Barrier(3, timeout=20)   # the two replicas and this thread

    def replica(batch):   # a worker: one step on its own batch per round
        try:
            for _ in range(rounds):
                barrier.wait()
                sess.run(train, {x: batch})
                barrier.wait()
        except Exception as e:  # (reported by the test's thread)
            errors.append(e)
            barrier.abort()

    def round_():
        barrier.wait()
        barrier.wait()
        assert not errors, errors

    with ms:
        threads = [threading.Thread(target=replica, args=(b,)) for b in (X, X2)]
        for t in threads:
            t.start()
        round_()
        _wait_step(sess, step, 1)
        want = W0 - 0.1 * (_grad(W0, X) + _grad(W0, X2)) / 2
        assert_close(sess.run(w), want, rtol=1e-5, atol=1e-6)
        # the second round's gradients come from local step 0 < global step 1 (the initial
        # tokens): dropped, as in TF
        round_()
        assert sess.run(step) == 1
        assert_close(sess.run(w), want, rtol=1e-5, atol=1e-6)
        for k in (2, 3):
            round_()
            _wait_step(sess, step, k)
            want = want - 0.1 * (_grad(want, X) + _grad(want, X2)) / 2
            assert_close(sess.run(w), want, rtol=1e-5, atol=1e-6)
        assert sess.run(opt._local_step) == 3
        for t in threads:
            t.join(20)
    assert _chief_threads_end()   # (the session closed: the chief's thread ends)


def _chief_threads_end(timeout=5.0):
    end = time.monotonic() + timeout
    while any(t.name.startswith("SyncReplicasChief") for t in threading.enumerate()):
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def test_sync_replicas_by_hand_and_errors():
    """The ops without the hook, as TF's test drives them: a stale gradient (local step
    behind the accumulator's global step) is not counted."""
    w, x, loss = _linear_model()
    step = tf.train.get_or_create_global_step()
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0), 2,
                                         total_num_replicas=3)
    with pytest.raises(ValueError, match="after apply_gradients"):
        opt.get_chief_queue_runner()
    with pytest.raises(ValueError, match="after apply_gradients"):
        opt.get_init_tokens_op()
    with pytest.raises(ValueError, match="Global step is required"):
        opt.apply_gradients(opt.compute_gradients(loss))
    train = opt.minimize(loss, global_step=step)
    with pytest.raises(ValueError, match="Too few tokens"):
        opt.get_init_tokens_op(num_tokens=-2)
    init_tokens = opt.get_init_tokens_op(num_tokens=0)
    assert init_tokens.type == "NoOp"
    acc = opt._accumulator_list[0][0]
    sess = tf.Session()
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    assert sess.run(opt.ready_for_local_init_op).size == 0
    sess.run(opt.chief_init_op)
    sess.run(opt.get_init_tokens_op(num_tokens=5))
    sess.run(acc.set_global_step(3))      # as if the chief had made 3 updates
    sess.run(train, {x: X})               # local step 0: stale
    assert sess.run(acc.num_accumulated()) == 0
    sess.run(step.assign(3))
    sess.run(opt.local_step_init_op)      # this thread's local step <- the global step
    sess.run(train, {x: X})
    assert sess.run(acc.num_accumulated()) == 1
    # a replica thread that has no local step yet starts from the global step (3): counted
    t = threading.Thread(target=sess.run, args=(train, {x: X2}))
    t.start()
    t.join(20)
    assert sess.run(acc.num_accumulated()) == 2
    assert sess.run(opt._sync_token_queue.size()) == 2   # 5 initial tokens, 3 taken
    sess.close()
    with pytest.raises(TypeError, match="wraps a tf.train.Optimizer"):
        tf.train.SyncReplicasOptimizer("sgd", 2)
    with pytest.raises(ValueError, match="replicas_to_aggregate"):
        tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0), 0)


def test_sync_replicas_hook_needs_apply_gradients_and_initialized_model():
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0), 1)
    with pytest.raises(ValueError, match="apply_gradient should be called"):
        opt.make_session_run_hook(True).begin()
    w, x, loss = _linear_model()
    step = tf.train.get_or_create_global_step()
    opt.minimize(loss, global_step=step)
    hook = opt.make_session_run_hook(False)
    hook.begin()
    sess = tf.Session()
    with pytest.raises(RuntimeError, match="not initialized: .*w"):
        hook.after_create_session(sess, tf.train.Coordinator())
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    sess.run(step.assign(7))
    hook.after_create_session(sess, tf.train.Coordinator())   # a worker: local step <- 7
    assert sess.run(opt._local_step) == 7
    sess.close()


# ---- LooperThread --------------------------------------------------------------------------

def test_looper_thread():
    coord = tf.train.Coordinator()
    calls = []
    looper = tf.train.LooperThread.loop(coord, 0.005, calls.append, args=("tick",))
    end = time.monotonic() + 5
    while len(calls) < 3 and time.monotonic() < end:
        time.sleep(0.002)
    coord.request_stop()
    coord.join([looper])
    assert calls[:3] == ["tick"] * 3 and not looper.is_alive() and looper.daemon

    class Counter(tf.train.LooperThread):   # run_loop overridden, called back to back
        def __init__(self, coord):
            super().__init__(coord, None)
            self.n, self.started, self.stopped = 0, False, False

        def start_loop(self):
            self.started = True

        def run_loop(self):
            self.n += 1
            if self.n == 5:
                self._coord.request_stop()

        def stop_loop(self):
            self.stopped = True
    coord = tf.train.Coordinator()
    c = Counter(coord)
    c.start()
    coord.join()
    assert (c.n, c.started, c.stopped) == (5, True, True)

    def boom():
        raise KeyError("bad step")
    coord = tf.train.Coordinator()
    tf.train.LooperThread.loop(coord, 0.001, boom)
    with pytest.raises(KeyError, match="bad step"):
        coord.join()
    with pytest.raises(ValueError, match="must be a Coordinator"):
        tf.train.LooperThread(object(), 1.0, boom)
    with pytest.raises(ValueError, match="require that you also pass 'target'"):
        tf.train.LooperThread(tf.train.Coordinator(), 1.0, args=(1,))


# ---- Server ------------------------------------------------------------------------------------

def test_server_in_process():
    server = tf.train.Server.create_local_server()
    sd = server.server_def
    assert (sd.job_name, sd.task_index, sd.protocol) == ("local", 0, "grpc")
    assert sd.cluster == tf.train.ClusterSpec({"local": ["localhost:0"]})
    with tf.Session(server.target) as sess:   # the in-process target
        assert sess.run(tf.constant(3) + 4) == 7
    with pytest.raises(UnimplementedError, match="would block forever"):
        server.join()

    cluster = tf.train.ClusterSpec({"ps": ["ps0:2222"], "worker": ["w0:2222", "w1:2222"]})
    s = tf.train.Server(cluster, job_name="worker", task_index=1, start=False)
    assert (s.server_def.job_name, s.server_def.task_index) == ("worker", 1)
    s.start()
    assert tf.train.Server(cluster.as_dict(), job_name="ps").server_def.task_index == 0
    s2 = tf.train.Server(s.server_def, task_index=0)
    assert s2.server_def == tf.train.ServerDef(cluster, "worker", 0, "grpc")
    with pytest.raises(ValueError, match="explicit `job_name`"):
        tf.train.Server(cluster)
    with pytest.raises(ValueError, match="explicit `task_index`"):
        tf.train.Server(cluster, job_name="worker")
    with pytest.raises(ValueError, match="No task with index 5"):
        tf.train.Server(cluster, job_name="worker", task_index=5)
    with pytest.raises(ValueError, match="No such job"):
        tf.train.Server(cluster, job_name="chief", task_index=0)
    with pytest.raises(TypeError, match="Could not convert"):
        tf.train.Server("grpc://localhost:2222")
    with pytest.raises(ValueError, match="protocol"):
        tf.train.Server(cluster, "ps", 0, protocol="http")


# ---- ScipyOptimizerInterface -------------------------------------------------------------------

A = np.array([[3.0, 0.5], [0.5, 1.0]], np.float32)
B = np.array([1.0, -2.0], np.float32)


def _quadratic():
    x = tf.Variable(np.zeros(2, np.float32), name="x")
    loss = 0.5 * tf.reduce_sum(x * tf.linalg.matvec(tf.constant(A), x)) - \
        tf.reduce_sum(tf.constant(B) * x)
    return x, loss


def test_scipy_interface_finds_a_quadratics_minimum():
    x, loss = _quadratic()
    c = tf.Variable(5.0, name="c")          # not optimized
    steps, losses = [], []
    opt = tf.contrib.opt.ScipyOptimizerInterface(loss + 0 * c, var_list=[x],
                                                 options={"maxiter": 100})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        opt.minimize(sess, fetches=[loss], step_callback=steps.append,
                     loss_callback=losses.append)
        assert_close(sess.run(x), np.linalg.solve(A, B), rtol=1e-4, atol=1e-5)
        assert sess.run(c) == 5.0
    assert steps and all(s.shape == (2,) for s in steps)
    assert losses and losses[-1] <= losses[0]
    assert_close(np.float32(losses[-1]), np.float32(-0.5 * B @ np.linalg.solve(A, B)),
                 rtol=1e-4)


def test_scipy_interface_bounds_and_feeds():
    x, loss = _quadratic()
    s = tf.placeholder(tf.float32, [], name="scale")
    y = tf.Variable(np.ones((2, 2), np.float32), name="y")
    loss2 = s * loss + tf.reduce_sum(tf.square(y - 3.0))
    bounds = {x: ([-np.inf, -0.5], [0.2, np.inf]), y: (None, 2.0)}
    opt = tf.contrib.opt.ScipyOptimizerInterface(loss2, var_to_bounds=bounds)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        opt.minimize(sess, feed_dict={s: 2.0})
        got_x, got_y = sess.run([x, y])

    def f(z):
        return 2 * (0.5 * z @ A @ z - B @ z)
    want = scipy.optimize.minimize(f, np.zeros(2), jac=lambda z: 2 * (A @ z - B),
                                   bounds=[(None, 0.2), (-0.5, None)], method="L-BFGS-B").x
    assert_close(got_x, want.astype(np.float32), rtol=1e-4, atol=1e-4)
    assert got_x[0] <= 0.2 + 1e-6 and got_x[1] >= -0.5 - 1e-6
    assert_close(got_y, np.full((2, 2), 2.0, np.float32))


def test_scipy_interface_constrained_slsqp():
    """min (a - 1)^2 + (b - 2.5)^2 subject to a + b = 2 (equality) and a >= 0.5, b <= 1.2
    (inequalities >= 0): the solution is (0.8, 1.2)."""
    v = tf.Variable(np.array([2.0, 0.0], np.float32), name="v")
    a, b = v[0], v[1]
    loss = tf.square(a - 1.0) + tf.square(b - 2.5)
    opt = tf.contrib.opt.ScipyOptimizerInterface(
        loss, equalities=[a + b - 2.0], inequalities=[a - 0.5, 1.2 - b], method="SLSQP")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        opt.minimize(sess)
        assert_close(sess.run(v), np.array([0.8, 1.2], np.float32), rtol=1e-4, atol=1e-4)


def test_scipy_interface_errors():
    x, loss = _quadratic()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(ValueError, match="Bounds must be set using the var_to_bounds"):
            tf.contrib.opt.ScipyOptimizerInterface(loss, bounds=[(0, 1)] * 2).minimize(sess)
        with pytest.raises(ValueError, match="'jac' is set automatically"):
            tf.contrib.opt.ScipyOptimizerInterface(loss, jac=False).minimize(sess)
        assert tf.get_default_session() is sess
        tf.contrib.opt.ScipyOptimizerInterface(loss).minimize()   # the default session
        assert_close(sess.run(x), np.linalg.solve(A, B), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="needs a session"):
        tf.contrib.opt.ScipyOptimizerInterface(loss).minimize()
    with pytest.raises(ValueError, match="must be a scalar"):
        tf.contrib.opt.ScipyOptimizerInterface(x)
    with pytest.raises(ValueError, match="do not broadcast"):
        tf.contrib.opt.ScipyOptimizerInterface(loss, var_to_bounds={x: ([0, 1, 2], 3)})
    with pytest.raises(NotImplementedError):
        tf.contrib.opt.ExternalOptimizerInterface(loss)._minimize(
            np.zeros(2), None, [], [], [], [], None, None, {})
