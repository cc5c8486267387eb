"""xlapy.compat.v1.distributed (Horovod's API): allreduce / broadcast / DistributedOptimizer
in one process, the XLA lowering to an HLO all-reduce run as 2 replicas on the interpreter,
and a real 2-process MPI job whose averaged gradients equal the full-batch ones."""

from __future__ import annotations


import numpy as np
import pytest

import xlapy.compat.v1 as tf
import xlapy.numpy as xnp
from xlapy.compat.v1 import distributed as hvd
from xlapy.compat.v1.distributed import ops as hops
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.frontend.core import ShapedArray
from xlapy.frontend.graph import make_graph
from xlapy.frontend.lowering import lower_to_module
from xlapy.hlo.evaluator import run_replicated

from tests.compat.conftest import jit_config


MODEL = """
import numpy as np
import xlapy.compat.v1 as tf
from xlapy.compat.v1 import distributed as hvd

def model(batch):
    rng = np.random.default_rng(0)
    x = tf.placeholder(tf.float32, [None, 5], name="x")
    y = tf.placeholder(tf.float32, [None, 2], name="y")
    w = tf.Variable(rng.standard_normal((5, 2)).astype(np.float32), name="w")
    b = tf.Variable(np.zeros(2, np.float32), name="b")
    h = tf.tanh(tf.matmul(x, w) + b)
    loss = tf.reduce_mean(tf.square(h - y))
    xs = rng.standard_normal((batch, 5)).astype(np.float32)
    ys = rng.standard_normal((batch, 2)).astype(np.float32)
    return x, y, w, b, loss, xs, ys
"""

JOB = MODEL + """
import sys
from tests.compat.conftest import jit_config
from xlapy.compat.v1.jit import flags
flags.LAZY_DEFAULT = False  # the one step run compiles (lazy compilation would run it eagerly)
hvd.init()
r, n = hvd.rank(), hvd.size()
x, y, w, b, loss, xs, ys = model(8)
sl = slice(r * 8 // n, (r + 1) * 8 // n)
opt = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.5))
gv = opt.compute_gradients(loss, [w, b])
step = opt.apply_gradients(gv)
full = tf.gradients(loss, [w, b])
if r == 1:  # a different start, which broadcast_global_variables(0) overwrites
    init_w = tf.assign(w, tf.zeros_like(w))
sess = tf.Session(config=jit_config() if sys.argv[1] == "xla" else None)
sess.run(tf.global_variables_initializer())
if r == 1:
    sess.run(init_w)
sess.run(hvd.broadcast_global_variables(0))
start = sess.run([w, b])
grads = sess.run([g for g, _ in gv], {x: xs[sl], y: ys[sl]})
want = sess.run(full, {x: xs, y: ys})
sess.run(step, {x: xs[sl], y: ys[sl]})
after = sess.run([w, b])
hlo = "".join(m for c in list(sess._plans.values())[-1].clusters for m in c.modules)
np.savez(f"out{r}.npz", gw=grads[0], gb=grads[1], fw=want[0], fb=want[1], w=after[0],
         b=after[1], w0=start[0], b0=start[1], n=n, allreduce_in_hlo=" all-reduce(" in hlo)
"""


def _mpirun(n, argv, tmp):
    from tests.frontend.test_distributed_mpi import _mpirun as run
    return run(n, argv, tmp)


@pytest.mark.parametrize("mode", ["executor", "xla"])
def test_two_processes_average_to_the_full_batch_gradient(tmp_path, mode):
    (tmp_path / "job.py").write_text(JOB)
    r = _mpirun(2, ["job.py", mode], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    o0, o1 = np.load(tmp_path / "out0.npz"), np.load(tmp_path / "out1.npz")
    assert int(o0["n"]) == 2
    for o in (o0, o1):
        np.testing.assert_allclose(o["gw"], o["fw"], rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(o["gb"], o["fb"], rtol=1e-5, atol=1e-7)
    for k in ("w", "b"):  # the same step on both processes, from rank 0's start
        np.testing.assert_array_equal(o1[k + "0"], o0[k + "0"])
        np.testing.assert_array_equal(o0[k], o1[k])
        np.testing.assert_allclose(o0[k], o0[k + "0"] - 0.5 * o0["f" + k], rtol=1e-5,
                                   atol=1e-6)
    if mode == "xla" and _cpu_runs_collectives():  # the step compiled with its all-reduce
        assert bool(o0["allreduce_in_hlo"]) and bool(o1["allreduce_in_hlo"])


def test_one_process_is_a_job_of_one():
    hvd.init()
    assert (hvd.size(), hvd.rank(), hvd.local_size(), hvd.local_rank()) == (1, 0, 1, 0)
    g = tf.Graph()
    with g.as_default():
        x = tf.constant([1.0, -2.0, 3.0])
        outs = [hvd.allreduce(x * 2.0), hvd.allreduce(x, average=False),
                hvd.allreduce(x, op=hvd.Max), hvd.broadcast(x, 0),
                tf.gradients(tf.reduce_sum(hvd.allreduce(x * x)), x)[0]]
        with tf.Session() as s:
            got = s.run(outs)
    for v, want in zip(got, ([2, -4, 6], [1, -2, 3], [1, -2, 3], [1, -2, 3], [2, -4, 6])):
        np.testing.assert_array_equal(v, np.float32(want))
    with pytest.raises(InvalidArgumentError, match="op must be one of"):
        hvd.allreduce(tf.constant(1.0), op="median")
    with pytest.raises(InvalidArgumentError, match="either average or op"):
        hvd.allreduce(tf.constant(1.0), average=True, op=hvd.Sum)


def test_distributed_optimizer_in_one_process_is_the_optimizer():
    ns: dict = {}
    exec(MODEL, ns)
    vals = []
    for wrap in (False, True):
        g = tf.Graph()
        with g.as_default():
            x, y, w, b, loss, xs, ys = ns["model"](6)
            opt = tf.train.MomentumOptimizer(0.1, 0.9)
            if wrap:
                opt = hvd.DistributedOptimizer(opt)
            step = opt.minimize(loss)
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                for _ in range(3):
                    s.run(step, {x: xs, y: ys})
                vals.append(s.run([w, b]))
                if wrap:
                    assert opt.get_slot(w, "momentum") is not None
                    kinds = {op.type for op in g.get_operations()}
                    assert "XlapyAllreduce" in kinds
    for a, b_ in zip(*vals):
        np.testing.assert_array_equal(a, b_)


def _lowered(reduce_op):
    def fn(x):
        return hops._allreduce_lowering(xnp, x, reduce_op)
    graph, consts, _ = make_graph(fn, [ShapedArray((3,), np.float32)])
    module, extra = lower_to_module(graph, consts, "allreduce")
    assert not extra
    return module


@pytest.mark.parametrize("reduce_op,fold", [("sum", np.add), ("average", np.add),
                                            ("max", np.maximum), ("min", np.minimum)])
def test_xla_lowering_is_an_all_reduce(monkeypatch, reduce_op, fold):
    monkeypatch.setattr(hops, "job_size", lambda: 2)  # as traced in a job of 2
    module = _lowered(reduce_op)
    assert "all-reduce(" in module.to_string()
    xs = [np.array([1.0, -2.0, np.nan if reduce_op == "max" else 3.0], np.float32),
          np.array([4.0, 0.5, 2.0], np.float32)]
    outs = run_replicated(module, [[v] for v in xs], 2)
    want = fold(xs[0], xs[1]) / (2 if reduce_op == "average" else 1)
    for o in outs:
        np.testing.assert_array_equal(np.asarray(o), want)


def _cpu_runs_collectives() -> bool:
    from xlapy.backends.base import get_platform
    try:
        get_platform("cpu").compiler.compile(_lowered("sum"))
    except Exception:
        return False
    return True


def test_a_training_step_stays_one_cluster():
    if not _cpu_runs_collectives():
        pytest.xfail("the cpu backend on this branch does not compile all-reduce yet (the "
                     "mpicpu branch lowers collectives to MPI calls); the step falls back")
    ns: dict = {}
    exec(MODEL, ns)
    g = tf.Graph()
    with g.as_default():
        x, y, w, b, loss, xs, ys = ns["model"](4)
        step = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.1)).minimize(loss)
        sess = tf.Session(config=jit_config())
        sess.run(tf.global_variables_initializer())
        sess.run(step, {x: xs, y: ys})
        summary = sess.cluster_summary(step, {x: xs, y: ys})
        assert summary.startswith("XLA clustering: 1 cluster(s)"), summary
        hlo = list(sess._plans.values())[-1].clusters[0].modules[0]
        assert " all-reduce(" in hlo
