"""tf.profiler: FLOPs of an MLP and a conv net (and their gradients) against hand-computed
counts, parameters of the trainable variables, the options (filters, order, depth,
accounting, output to stdout / a file / nowhere / a timeline), the report text, execution
times from traced runs (executor and XLA clusters), tf.profiler.Profiler over several
steps, advise, write_op_log and the error cases."""

import json

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.profiler import display
from xlapy.compat.v1.protos import NodeExecStats

from .conftest import jit_config

POB = tf.profiler.ProfileOptionBuilder
FULL_TRACE = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
R = np.random.default_rng(7)


def _quiet(options):
    return POB(options).with_empty_output().build()


def _flops(graph=None, cmd="op", run_meta=None, **kw):
    return tf.profiler.profile(graph, run_meta=run_meta, cmd=cmd,
                               options=_quiet(POB.float_operation()), **kw)


def _var(shape, name, trainable=True):
    return tf.Variable(tf.constant(R.standard_normal(shape).astype(np.float32)), name=name,
                       trainable=trainable)


def _mlp(batch=4):
    """x[4,20] -> dense 16 (MatMul + Add, Relu) -> dense 3 (MatMul + BiasAdd) -> softmax
    -> times a scalar. FLOPs: MatMul 2*20*4*16 = 2560 and 2*16*4*3 = 384, Add 4*16 = 64,
    BiasAdd 12, Softmax 5*12 = 60, Mul 12: 3092. Parameters 320 + 16 + 48 + 3 + 1 = 388."""
    x = tf.placeholder(tf.float32, [batch, 20], name="x")
    with tf.variable_scope("layer1"):
        w1, b1 = _var([20, 16], "w"), _var([16], "b")
    with tf.variable_scope("layer2"):
        w2, b2 = _var([16, 3], "w"), _var([3], "b")
    scale = _var([], "scale")
    _var([], "step", trainable=False)  # not a trainable parameter
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
    probs = tf.nn.softmax(tf.nn.bias_add(tf.matmul(h, w2), b2))
    return x, probs * scale


MLP_ROWS = {"MatMul": 2944, "Add": 64, "Softmax": 60, "BiasAdd": 12, "Mul": 12}


def _chain(proto):
    """The op view's rows: the root's child, its child, ..."""
    rows = []
    while proto.children:
        proto = proto.children[0]
        rows.append(proto)
    return rows


# ---- FLOPs ---------------------------------------------------------------------------------

def test_mlp_flops_op_view():
    _mlp()
    res = tf.profiler.profile(tf.get_default_graph(), run_meta=tf.RunMetadata(), cmd="op",
                              options=_quiet(POB.float_operation()))
    assert isinstance(res, tf.profiler.MultiGraphNodeProto)
    assert res.name == "_TFProfRoot" and res.total_float_ops == 3092
    rows = _chain(res)
    assert [r.name for r in rows] == ["MatMul", "Add", "Softmax", "BiasAdd", "Mul"]
    assert {r.name: r.float_ops for r in rows} == MLP_ROWS
    # each row's total runs from it to the last row
    assert [r.total_float_ops for r in rows] == [3092, 148, 84, 24, 12]
    matmul = rows[0]
    assert sorted((g.name, g.float_ops) for g in matmul.graph_nodes) == [
        ("MatMul", 2560), ("MatMul_1", 384)]
    assert all(len(r.children) <= 1 for r in rows)


def test_mlp_flops_scope_and_graph_views():
    _mlp()
    scope = _flops(cmd="scope")
    assert isinstance(scope, tf.profiler.GraphNodeProto)
    assert scope.total_float_ops == 3092
    # the ops with FLOPs only (min_float_ops=1), most first, flat: no scope op has FLOPs
    assert [(c.name, c.float_ops, c.total_float_ops) for c in scope.children] == [
        ("MatMul", 2560, 2560), ("MatMul_1", 384, 384), ("Add", 64, 64),
        ("Softmax", 60, 60), ("BiasAdd", 12, 12), ("Mul", 12, 12)]
    graph = _flops(cmd="graph")
    assert graph.total_float_ops == 3092
    # graph view: each op under its consumer; the chain Mul <- Softmax <- ... <- MatMul
    node, names = graph, []
    while node.children:
        node = node.children[0]
        names.append((node.name, node.total_float_ops))
    assert names == [("Mul", 3092), ("Softmax", 3080), ("BiasAdd", 3020),
                     ("MatMul_1", 3008), ("Add", 2624), ("MatMul", 2560)]


def test_conv_net_flops_with_gradients():
    x = tf.placeholder(tf.float32, [2, 8, 8, 3])
    k1, bias = _var([3, 3, 3, 4], "k1"), _var([4], "bias")
    k2, kd = _var([2, 2, 4, 6], "k2"), _var([3, 3, 3, 2], "kd")
    c1 = tf.nn.bias_add(tf.nn.conv2d(x, k1, [1, 1, 1, 1], "SAME"), bias)   # [2,8,8,4]
    p = tf.nn.max_pool(c1, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")             # [2,4,4,4]
    c2 = tf.nn.conv2d(p, k2, [1, 2, 2, 1], "VALID")                         # [2,2,2,6]
    dw = tf.nn.depthwise_conv2d(x, kd, [1, 1, 1, 1], "SAME")                # [2,8,8,6]
    ap = tf.nn.avg_pool(dw, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")            # [2,4,4,6]
    loss = tf.reduce_mean(c2) + tf.reduce_sum(ap)
    forward = {"Conv2D": 512 * 27 * 2 + 48 * 16 * 2,      # out elements * kh*kw*cin * 2
               "DepthwiseConv2dNative": 768 * 9 * 2,       # out elements * kh*kw * 2
               "BiasAdd": 512, "MaxPool": 4 * 128, "AvgPool": 4 * 192,
               "Mean": 48, "Sum": 192 - 1, "Add": 1}
    rows = {r.name: r.float_ops for r in _chain(_flops())}
    assert rows == forward
    assert _flops().total_float_ops == sum(forward.values()) == 45040

    tf.gradients(loss, [x, k1, k2, kd, bias])
    rows = {r.name: r for r in _chain(_flops())}
    # the backprop of each convolution costs what its forward pass does
    assert sorted(g.float_ops for g in rows["Conv2DBackpropInput"].graph_nodes) == [
        1536, 27648]
    assert sorted(g.float_ops for g in rows["Conv2DBackpropFilter"].graph_nodes) == [
        1536, 27648]
    assert rows["MaxPoolGrad"].float_ops == 4 * 128 + 128
    assert rows["AvgPoolGrad"].float_ops == 2 * 4 * 192
    assert rows["BiasAddGrad"].float_ops == 512 - 4
    for t in forward:  # the forward ops are counted as before
        assert forward[t] <= rows[t].float_ops


def test_flop_rules_of_elementwise_reductions_and_matmul_variants():
    a = tf.placeholder(tf.float32, [5, 4])
    b = tf.placeholder(tf.float32, [4])
    tf.matmul(a, tf.ones([5, 3]), transpose_a=True, name="mt")      # k = 5: 2*5*12
    tf.square(a, name="sq")                                           # 20
    tf.math.rsqrt(a, name="rs")                                       # 2 * 20
    tf.squared_difference(a, b, name="sd")                            # 2 * 20 (broadcast)
    tf.nn.l2_loss(a, name="l2")                                       # 3 * 20 - 1
    tf.add_n([a, a, a], name="an")                                    # 20 * 2
    tf.argmax(a, 1, name="am")                                        # 20 - 5
    tf.reduce_mean(a, 0, name="mean")                                 # 20
    tf.greater(a, b, name="gt")                                       # 20
    tf.exp(a, name="ex")                                              # not counted by TF
    tf.matmul(tf.ones([2, 3, 4]), tf.ones([2, 4, 5]), name="bmm")     # not counted by TF
    scope = _flops(cmd="scope")
    got = {c.name: c.float_ops for c in scope.children}
    assert got == {"mt": 120, "sq": 20, "rs": 40, "sd": 40, "l2": 59, "an": 40, "am": 15,
                   "mean": 20, "gt": 20}


def test_unknown_shapes_are_skipped_with_a_note(capsys):
    x = tf.placeholder(tf.float32, [None, 20])
    w = _var([20, 3], "w")
    tf.nn.softmax(tf.matmul(x, w))
    tf.square(w)
    res = _flops(cmd="op")
    assert res.total_float_ops == 60 and [r.name for r in _chain(res)] == ["Square"]
    assert "2 ops no flops stats due to incomplete shapes." in capsys.readouterr().err
    _flops(cmd="op", run_meta=tf.RunMetadata())  # with run_meta: no note, as in TF
    assert "incomplete shapes" not in capsys.readouterr().err


def test_nchw_pooling_is_not_counted(capsys):
    y = tf.placeholder(tf.float32, [2, 3, 8, 8])
    tf.nn.max_pool(y, [1, 1, 2, 2], [1, 1, 2, 2], "VALID", data_format="NCHW")
    assert _flops().total_float_ops == 0
    assert "1 ops no flops stats" in capsys.readouterr().err


# ---- parameters ----------------------------------------------------------------------------

def test_trainable_parameters_and_report(capsys):
    _mlp()
    res = tf.profiler.profile(tf.get_default_graph())  # default: trainable parameters
    assert res.total_parameters == 388
    assert [(c.name, c.total_parameters) for c in res.children] == [
        ("layer1", 336), ("layer2", 51), ("scale", 1)]
    w = res.children[0].children[1]
    assert (w.name, w.parameters, [d.size for d in w.shapes[0].dim]) == ("layer1/w", 320,
                                                                         [20, 16])
    out = capsys.readouterr().out
    report = out[out.index("Profile:\n"):out.index("\n======================End")]
    assert report == (
        "Profile:\n"
        "node name | # parameters\n"
        "_TFProfRoot (--/388 params)\n"
        "  layer1 (--/336 params)\n"
        "    layer1/b (16, 16/16 params)\n"
        "    layer1/w (20x16, 320/320 params)\n"
        "  layer2 (--/51 params)\n"
        "    layer2/b (3, 3/3 params)\n"
        "    layer2/w (16x3, 48/48 params)\n"
        "  scale (1, 1/1 params)\n")
    assert "=========================Options=============================" in out
    assert "-account_type_regexes       _trainable_variables\n" in out
    assert "-select                     params\n" in out
    # the op view of the parameters: one row, the variables
    ops = tf.profiler.profile(cmd="op", options=_quiet(POB.trainable_variables_parameter()))
    assert [(r.name, r.parameters) for r in _chain(ops)] == [("VariableV2", 388)]


def test_op_view_report_text(capsys):
    _mlp()
    tf.profiler.profile(cmd="op", options=POB.float_operation())
    out = capsys.readouterr().out
    report = out[out.index("Profile:\n"):out.index("\n======================End")]
    assert report == (
        "Profile:\n"
        "node name | # float_ops\n"
        "MatMul                   2.94k float_ops (100.00%, 95.21%)\n"
        "Add                         64 float_ops (4.79%, 2.07%)\n"
        "Softmax                     60 float_ops (2.72%, 1.94%)\n"
        "BiasAdd                     12 float_ops (0.78%, 0.39%)\n"
        "Mul                         12 float_ops (0.39%, 0.39%)\n")
    assert "\nDoc:\nop: " in out and "flops: " in out


# ---- options -------------------------------------------------------------------------------

def test_builder_defaults_and_methods():
    assert POB.float_operation()["min_float_ops"] == 1
    assert POB.float_operation()["order_by"] == "float_ops"
    assert POB.trainable_variables_parameter()["account_type_regexes"] == [
        "_trainable_variables"]
    t = POB.time_and_memory(min_micros=5)
    assert (t["min_micros"], t["min_bytes"], t["select"]) == (5, 1, ["micros", "bytes"])
    b = POB()
    assert b.build()["max_depth"] == 100 and b.build()["select"] == ["micros"]
    opts = (POB(POB.float_operation()).with_max_depth(3).with_min_float_operations(10)
            .select(["float_ops", "params"]).order_by("name").with_node_names(
                show_name_regexes=["a.*"], hide_name_regexes=["b"])
            .account_displayed_op_only(False).with_min_memory(min_bytes=2)
            .with_min_execution_time(min_micros=4).with_min_parameters(6)
            .with_min_occurrence(7).with_accounted_types(["X"]).with_step(2)
            .with_file_output("/tmp/f").build())
    assert (opts["max_depth"], opts["min_float_ops"], opts["select"], opts["order_by"],
            opts["show_name_regexes"], opts["hide_name_regexes"],
            opts["account_displayed_op_only"], opts["min_bytes"], opts["min_micros"],
            opts["min_params"], opts["min_occurrence"], opts["account_type_regexes"],
            opts["step"], opts["output"]) == (
        3, 10, ["float_ops", "params"], "name", ["a.*"], ["b"], False, 2, 4, 6, 7, ["X"], 2,
        "file:outfile=/tmp/f")
    assert POB().with_empty_output().build()["output"] == "none"
    assert POB().with_stdout_output().build()["output"] == "stdout"
    assert POB().with_timeline_output("t.json").build()["output"] == "timeline:outfile=t.json"
    assert POB().with_pprof_output("p.gz").build()["output"] == "pprof:outfile=p.gz"
    built = POB().build()
    built["select"].append("x")  # build() returns a copy
    assert POB().build()["select"] == ["micros"]


def test_filters_depth_order_and_accounting():
    _mlp()
    base = POB.float_operation()

    def scope(b):
        return tf.profiler.profile(cmd="scope", options=b.with_empty_output().build())

    big = scope(POB(base).with_min_float_operations(100))
    assert [c.name for c in big.children] == ["MatMul", "MatMul_1"]
    assert big.total_float_ops == 2944  # only the displayed ops are accounted
    hidden = scope(POB(base).with_min_float_operations(100).account_displayed_op_only(False))
    assert hidden.total_float_ops == 3092
    named = scope(POB(base).order_by("name"))
    assert [c.name for c in named.children] == ["Add", "BiasAdd", "MatMul", "MatMul_1", "Mul",
                                                "Softmax"]
    shown = scope(POB(base).with_node_names(show_name_regexes=["MatMul.*", "Add"]))
    assert [c.name for c in shown.children] == ["MatMul", "MatMul_1", "Add"]
    no_mm = scope(POB(base).with_node_names(hide_name_regexes=["MatMul.*"]))
    assert no_mm.total_float_ops == 3092 - 2944
    only = scope(POB(base).with_accounted_types(["Softmax|Mul"]))
    assert only.total_float_ops == 72
    assert scope(POB(base).with_max_depth(1)).children == []  # the root is depth 1
    # the params tree: depth, trimming, start
    params = POB.trainable_variables_parameter()
    top = scope(POB(params).with_max_depth(2))
    assert [c.name for c in top.children] == ["layer1", "layer2", "scale"]
    assert all(not c.children for c in top.children) and top.total_parameters == 1
    trimmed = scope(POB(params).with_node_names(trim_name_regexes=["layer1"]))
    assert trimmed.children[0].name == "layer1" and not trimmed.children[0].children
    started = scope(POB(params).with_node_names(start_name_regexes=["layer2"]))
    assert [c.name for c in started.children] == ["layer2"]
    assert started.total_parameters == 51
    ops = tf.profiler.profile(cmd="op", options=POB(base).with_max_depth(1)
                              .with_empty_output().build())
    assert [r.name for r in _chain(ops)] == ["MatMul", "Add"]  # rows at depth 0 and 1
    assert ops.total_float_ops == 3008


def test_output_file_none_and_timeline(tmp_path, capsys):
    _mlp()
    path = tmp_path / "flops.txt"
    tf.profiler.profile(cmd="scope", options=POB(POB.float_operation())
                        .with_file_output(str(path)).build())
    text = path.read_text()
    assert text.startswith("\nDoc:\nscope: ") and "Profile:\nnode name | # float_ops\n" in text
    assert "_TFProfRoot (--/3.09k flops)\n  MatMul (2.56k/2.56k flops)\n" in text
    assert "End of Report" not in text
    assert capsys.readouterr().out == ""
    tf.profiler.profile(cmd="op", options=_quiet(POB.float_operation()))
    assert capsys.readouterr().out == ""


def test_bad_arguments():
    _mlp()
    with pytest.raises(InvalidArgumentError, match="unknown cmd"):
        tf.profiler.profile(cmd="ops")
    with pytest.raises(InvalidArgumentError, match="select"):
        tf.profiler.profile(options=POB().select(["flops"]).build())
    with pytest.raises(InvalidArgumentError, match="order_by"):
        tf.profiler.profile(options=POB().order_by("speed").build())
    with pytest.raises(InvalidArgumentError, match="outfile"):
        tf.profiler.profile(options=dict(POB().build(), output="file"))
    with pytest.raises(InvalidArgumentError, match="output type"):
        tf.profiler.profile(options=dict(POB().build(), output="screen"))
    with pytest.raises(InvalidArgumentError, match="regular expression"):
        tf.profiler.profile(options=POB().with_node_names(show_name_regexes=["("]).build())
    with pytest.raises(InvalidArgumentError, match="max_depth"):
        tf.profiler.profile(options=POB().with_max_depth(2.5).build())
    with pytest.raises(TypeError, match="dict"):
        tf.profiler.profile(options=["params"])
    with pytest.raises(TypeError, match="tf.Graph"):
        tf.profiler.profile(graph="graph")
    with pytest.raises(TypeError, match="RunMetadata"):
        tf.profiler.profile(run_meta={"step_stats": 1})


def test_number_formats():
    assert [display.format_number(n) for n in (999, 1000, 3092, 1234567, 2 * 10**9)] == [
        "999", "1.00k", "3.09k", "1.23m", "2.00b"]
    assert [display.format_time(t) for t in (999, 1500, 2500000)] == [
        "999us", "1.50ms", "2.50sec"]
    assert [display.format_memory(b) for b in (999, 4096, 1243644)] == [
        "999B", "4.10KB", "1.24MB"]


# ---- time and memory -----------------------------------------------------------------------

def _traced_runs(config=None, steps=2):
    x, y = _mlp()
    loss = tf.reduce_sum(y)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    sess = tf.Session(config=config)
    sess.run(tf.global_variables_initializer())
    feed = {x: R.standard_normal((4, 20)).astype(np.float32)}
    mds = []
    for _ in range(steps):
        md = tf.RunMetadata()
        sess.run(train, feed, options=FULL_TRACE, run_metadata=md)
        mds.append(md)
    return mds


def _micros(md):
    """{node name: its time in the step}, as the profiler counts it (at least 1us)."""
    return {ns.node_name: max(ns.op_end_rel_micros, 1)
            for d in md.step_stats.dev_stats for ns in d.node_stats}


def _all_time():
    """Every node's time, bytes and runs: nothing hidden, nothing left out of the totals."""
    return POB().select(["micros", "bytes", "occurrence"]).with_max_depth(1000)


def test_time_from_a_traced_run():
    md = _traced_runs(steps=1)[0]
    times = _micros(md)
    res = tf.profiler.profile(run_meta=md, cmd="scope",
                              options=_all_time().with_empty_output().build())
    assert res.total_exec_micros == res.total_cpu_exec_micros == sum(times.values())
    assert res.total_accelerator_exec_micros == 0
    assert res.total_run_count == len(times)
    ops = tf.profiler.profile(run_meta=md, cmd="op", options=_quiet(POB.time_and_memory()))
    rows = {r.name: r for r in _chain(ops)}
    matmul = {g.name: g for g in rows["MatMul"].graph_nodes}
    assert matmul["MatMul"].exec_micros == times["MatMul"]
    assert rows["MatMul"].exec_micros == sum(times.get(n, 0) for n in matmul)
    assert matmul["gradients/MatMul_grad/MatMul"].run_count == 0  # dx of x: not run
    # memory: the static size of the outputs: MatMul [4,16] and [4,3] float32
    assert (matmul["MatMul"].requested_bytes, matmul["MatMul_1"].output_bytes) == (256, 48)
    assert matmul["MatMul"].devices == ["/job:localhost/replica:0/task:0/device:cpu:0"]
    # float ops of the nodes that ran count once per run: the same totals
    assert _flops(run_meta=md).total_float_ops == _flops().total_float_ops


def test_time_and_memory_report(capsys):
    md = _traced_runs(steps=1)[0]
    tf.profiler.profile(run_meta=md, cmd="scope", options=POB.time_and_memory())
    out = capsys.readouterr().out
    assert ("node name | requested bytes | total execution time | accelerator execution "
            "time | cpu execution time\n_TFProfRoot (--/") in out
    assert "\n      layer1/w/read (1.28KB/1.28KB, " in out  # 20x16 float32


def test_profiler_over_steps_and_advise(capsys):
    md0, md1 = _traced_runs(steps=2)
    t0, t1 = _micros(md0), _micros(md1)
    prof = tf.profiler.Profiler(tf.get_default_graph())
    prof.add_step(0, md0)
    prof.add_step(1, md1)
    assert 0.0 < prof._coverage < 1.0  # the initializers did not run
    avg = prof.profile_name_scope(_all_time().with_empty_output().build())
    assert avg.total_exec_micros == sum((t0[n] + t1[n]) // 2 for n in t0)
    step1 = _all_time().with_empty_output().with_step(1).build()
    assert prof.profile_name_scope(step1).total_exec_micros == sum(t1.values())
    step0 = _all_time().with_empty_output().with_step(0).build()
    assert prof.profile_graph(step0).total_exec_micros == sum(t0.values())
    ops = prof.profile_operations(_quiet(POB.float_operation()))
    assert ops.total_float_ops > 3092  # the gradients' ops too
    params = prof.profile_name_scope(_quiet(POB.trainable_variables_parameter()))
    assert params.total_parameters == 388
    capsys.readouterr()
    step5 = _all_time().with_empty_output().with_step(5).build()
    assert prof.profile_name_scope(step5) == tf.profiler.GraphNodeProto()
    assert "-step=5 not found" in capsys.readouterr().err
    assert prof.profile_python(_quiet(POB.float_operation())) == \
        tf.profiler.MultiGraphNodeProto()
    assert "No code trace information" in capsys.readouterr().err

    advice = prof.advise()
    assert sorted(advice.checkers) == ["AcceleratorUtilizationChecker",
                                       "ExpensiveOperationChecker", "OperationChecker"]
    report = advice.checkers["ExpensiveOperationChecker"].reports[0]
    assert report.startswith("top 1 operation type: ")
    assert "\nExpensiveOperationChecker:\ntop 1 operation type:" in capsys.readouterr().out
    with pytest.raises(InvalidArgumentError, match="FULL_TRACE"):
        prof.add_step(2, tf.RunMetadata())
    with pytest.raises(TypeError, match="integer"):
        prof.add_step("2", md0)
    with pytest.raises(InvalidArgumentError, match="checker"):
        prof.advise({"SpeedChecker": {}})


def test_time_of_xla_clusters():
    md = _traced_runs(config=jit_config(), steps=2)[1]
    times = _micros(md)
    clusters = [n for n in times if n.startswith("cluster")]
    assert clusters
    ops = tf.profiler.profile(run_meta=md, cmd="op", options=_all_time().with_empty_output()
                              .order_by("name").build())
    rows = {r.name: r for r in _chain(ops)}
    for c in clusters:  # a cluster is a node of its own, its name as op type
        assert rows[c].exec_micros == times[c]
    assert ops.total_exec_micros == sum(times.values())


def test_timeline_output(tmp_path):
    md = _traced_runs(steps=1)[0]
    path = tmp_path / "tl.json"
    tf.profiler.profile(run_meta=md, cmd="scope", options=POB(POB.time_and_memory(
        min_bytes=0)).with_timeline_output(str(path)).build())
    events = json.loads(path.read_text())["traceEvents"]
    bars = [e for e in events if e["ph"] == "X"]
    assert {b["args"]["name"] for b in bars} == set(_micros(md))
    assert all(b["dur"] >= 1 and b["ts"] >= 0 for b in bars)


def test_gpu_step_stats_and_foreign_entries(capsys):
    """Hand-made step statistics: a GPU entry alone is accelerator time (xlapy's GPU
    steps); with a stream:all entry (TF's GPU tracer) the stream is the accelerator time
    and the device entry cpu time. Entries naming no op become nodes of their own, except
    TF's RecvTensor, _SOURCE and MEMCPY entries."""
    x = tf.placeholder(tf.float32, [2, 6, 6, 3], name="x")
    conv = tf.nn.conv2d(x, tf.ones([3, 3, 3, 4]), [1, 1, 1, 1], "SAME", name="conv")
    tf.reduce_sum(conv, name="total")
    gpu = "/job:localhost/replica:0/task:0/device:GPU:0"
    md = tf.RunMetadata()
    stats = md.step_stats
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    for dev, name, start, us in ((gpu, "conv", 1000, 30),
                                 (gpu + "/stream:all", "conv:Conv2D", 1010, 20),
                                 (gpu, "total", 1040, 10), (gpu, "cluster_9", 1050, 50),
                                 (gpu, "RecvTensor", 900, 5), (gpu, "MEMCPYHtoD", 900, 5),
                                 (cpu, "x", 990, 0)):
        stats.device(dev).node_stats.append(NodeExecStats(
            node_name=name, all_start_micros=start, op_end_rel_micros=us,
            all_end_rel_micros=us))
    opts = _all_time().with_empty_output().select(["micros", "device", "op_types"])
    res = tf.profiler.profile(run_meta=md, cmd="scope", options=opts.build())
    nodes = {c.name: c for c in res.children}
    assert {"cluster_9", "conv", "total", "x"} <= set(nodes)
    assert not {"RecvTensor", "MEMCPYHtoD"} & set(nodes)
    conv_, total, x_ = nodes["conv"], nodes["total"], nodes["x"]
    assert (conv_.accelerator_exec_micros, conv_.cpu_exec_micros, conv_.exec_micros) == (
        20, 30, 50)
    assert (total.accelerator_exec_micros, total.cpu_exec_micros) == (10, 0)
    assert (x_.cpu_exec_micros, x_.run_count) == (1, 1)  # 0us counts as 1
    assert nodes["cluster_9"].accelerator_exec_micros == 50
    assert res.total_accelerator_exec_micros == 80 and res.total_cpu_exec_micros == 31
    assert conv_.devices == [gpu.lower()]
    ops = tf.profiler.profile(run_meta=md, cmd="op", options=opts.build())
    assert {r.name for r in _chain(ops)} >= {"Conv2D", "Sum", "cluster_9", "Placeholder"}
    # on the GPU: busy 20 + 10 + 50 of the span 1000..1100
    advice = tf.profiler.advise(run_meta=md)
    assert list(advice.checkers["AcceleratorUtilizationChecker"].reports) == [
        f"device: {gpu.lower()} utilization: 0.80"]
    assert any("NHWC" in r for r in advice.checkers["OperationChecker"].reports)
    capsys.readouterr()


def test_advise_function_without_run_meta(capsys):
    _mlp()
    advice = tf.profiler.advise(tf.get_default_graph())
    assert sorted(advice.checkers) == ["AcceleratorUtilizationChecker",
                                       "ExpensiveOperationChecker", "OperationChecker"]
    assert list(advice.checkers["ExpensiveOperationChecker"].reports) == []
    assert "Missing RunMetadata" in capsys.readouterr().err


# ---- op log --------------------------------------------------------------------------------

def test_write_op_log_and_custom_op_types(tmp_path):
    _mlp()
    tf.profiler.write_op_log(tf.get_default_graph(), str(tmp_path))
    log = tf.profiler.OpLogProto.FromString((tmp_path / "tfprof_log").read_bytes())
    entries = {e.name: e for e in log.log_entries}
    assert entries["MatMul"].float_ops == 2560
    assert list(entries["layer1/w"].types) == ["_trainable_variables"]
    assert "layer1/w" in entries and "step" not in entries
    mine = tf.profiler.OpLogProto()
    mine.log_entries.add(name="MatMul_1", types=["second_layer"])
    mine.log_entries.add(name="Add", float_ops=1000)  # kept: the caller's count wins
    res = tf.profiler.profile(op_log=mine, cmd="scope", options=_quiet(
        POB(POB.float_operation()).with_accounted_types(["second_layer|Add"]).build()))
    assert [(c.name, c.float_ops) for c in res.children] == [("Add", 1000),
                                                             ("MatMul_1", 384)]
    with pytest.raises(TypeError, match="OpLogProto"):
        tf.profiler.profile(op_log={"MatMul": 1})
