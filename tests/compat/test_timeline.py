"""RunOptions(FULL_TRACE) -> RunMetadata.step_stats -> Chrome trace JSON."""

import json

import numpy as np

import xlapy.compat.v1 as tf
from xlapy.compat.v1.python.client import timeline

from .conftest import jit_config


def _graph():
    x = tf.placeholder(tf.float32, [None, 5])
    w = tf.Variable(tf.ones([5, 3]))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return x, train


def _trace(config):
    x, train = _graph()
    sess = tf.Session(config=config)
    sess.run(tf.global_variables_initializer())
    feed = {x: np.ones((4, 5), np.float32)}
    traces = []
    for _ in range(2):  # the first run compiles (with XLA), the second is cached
        md = tf.RunMetadata()
        sess.run(train, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=md)
        traces.append(md)
    return traces


def _check_chrome_trace(text):
    doc = json.loads(text)
    events = doc["traceEvents"]
    meta = [e for e in events if e["ph"] == "M"]
    bars = [e for e in events if e["ph"] == "X"]
    assert {e["name"] for e in meta} >= {"process_name", "thread_name"}
    pids = {e["pid"] for e in meta if e["name"] == "process_name"}
    for e in bars:
        assert set(e) >= {"name", "ph", "ts", "dur", "pid", "tid", "args"}
        assert e["pid"] in pids and e["dur"] >= 1 and e["ts"] >= 0
        assert isinstance(e["ts"], int) and e["args"]["name"] and e["args"]["op"] == e["name"]
    return bars


def test_executor_timeline_has_one_bar_per_op():
    md = _trace(None)[1]
    stats = md.step_stats.dev_stats
    assert [d.device for d in stats] == ["/job:localhost/replica:0/task:0/device:CPU:0"]
    nodes = stats[0].node_stats
    assert len(nodes) > 10
    for n in nodes:
        assert n.all_end_rel_micros >= 1 and n.timeline_label.startswith(n.node_name + " = ")
    bars = _check_chrome_trace(timeline.Timeline(md.step_stats).generate_chrome_trace_format())
    assert len(bars) == len(nodes)
    assert {"MatMul", "ApplyGradientDescent"} <= {b["name"] for b in bars}
    starts = [n.all_start_micros for n in nodes]
    assert starts == sorted(starts)


def test_xla_timeline_has_one_cluster_bar():
    first, second = _trace(jit_config())
    bars = _check_chrome_trace(timeline.Timeline(second.step_stats).generate_chrome_trace_format())
    assert [b["name"] for b in bars] == ["_XlaLaunch"]
    assert bars[0]["args"]["name"] == "cluster_0"
    compiled = _check_chrome_trace(timeline.Timeline(first.step_stats)
                                   .generate_chrome_trace_format())
    assert [b["name"] for b in compiled] == ["_XlaCompile", "_XlaLaunch"]
    assert compiled[0]["ts"] + compiled[0]["dur"] <= compiled[1]["ts"] + 1
