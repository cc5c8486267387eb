"""GraphDefs and MetaGraphs with functional control flow (While, If and their gradients)
read back with import_graph_def / import_meta_graph: the bodies travel as FunctionDefs
in xlapy's form (graph_def.py) and come back as functions of the importing graph."""

import numpy as np

import xlapy.compat.v1 as tf


def _serialized(gd):
    return tf.GraphDef.FromString(gd.SerializeToString())


def _loop_and_cond_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")

        def body(i, acc):
            return i + 1, acc * 1.5 + tf.reduce_sum(x, axis=0)

        _, out = tf.while_loop(lambda i, acc: i < 4, body, [tf.constant(0), tf.zeros([3])])
        y = tf.cond(tf.reduce_sum(out) > 0, lambda: out * 2.0, lambda: out - 1.0)
        tf.identity(y, name="y")
    return g


def test_while_and_cond_round_trip_with_gradients():
    g = _loop_and_cond_graph()
    feed = np.arange(6, dtype=np.float32).reshape(2, 3)
    with g.as_default():
        gx = tf.gradients(g.get_tensor_by_name("y:0"), g.get_tensor_by_name("x:0"))[0]
        with tf.Session() as s:
            want, want_g = s.run(["y:0", gx], {"x:0": feed})
    gd = _serialized(g.as_graph_def())
    names = sorted(f.signature.name for f in gd.library.function)
    assert "while/body" in names and "cond/true" in names
    # the loop body and the gradient function built on its graph get distinct names
    assert len(names) == len(set(names)) and len(names) > 4
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="")
        with tf.Session() as s:
            got = s.run("y:0", {"x:0": feed})
        # a gradient taken on the imported graph differentiates the imported bodies
        gx2 = tf.gradients(g2.get_tensor_by_name("y:0"), g2.get_tensor_by_name("x:0"))[0]
        with tf.Session() as s:
            got_g = s.run(gx2, {"x:0": feed})
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-6)
    assert np.all(got_g != 0)


def test_nested_loops_and_a_prefix():
    with tf.Graph().as_default() as g:
        n = tf.placeholder(tf.int32, [], name="n")

        def outer(i, total):
            inner = tf.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + j),
                                  [tf.constant(0), tf.constant(0)])[1]
            return i + 1, total + inner

        tf.identity(tf.while_loop(lambda i, t: i < n, outer, [0, 0])[1], name="out")
        gd = _serialized(g.as_graph_def())
    with tf.Graph().as_default():
        out, = tf.import_graph_def(gd, return_elements=["out:0"], name="imp")
        with tf.Session() as s:
            got = s.run(out, {"imp/n:0": 6})
    assert got == sum(j for i in range(6) for j in range(i))


def test_meta_graph_of_an_rnn_resumes_training(tmp_path):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((16, 5, 4)).astype(np.float32)
    ys = rng.standard_normal((16, 3)).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = tf.placeholder(tf.float32, [None, 5, 4], name="x")
        y = tf.placeholder(tf.float32, [None, 3], name="y")
        outs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(8), x, dtype=tf.float32)
        pred = tf.layers.dense(outs[:, -1], 3)
        pred = tf.cond(tf.reduce_mean(pred) > -100.0, lambda: pred, lambda: pred * 0.0)
        loss = tf.reduce_mean(tf.square(pred - y), name="loss")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(3):
                s.run(train, {x: xs, y: ys})
            path = saver.save(s, str(tmp_path / "model"))
            want = [s.run([train, loss], {x: xs, y: ys})[1] for _ in range(3)]
    assert want[2] < want[0]
    for xla in (False, True):
        with tf.Graph().as_default() as g:
            restorer = tf.train.import_meta_graph(path + ".meta")
            config = tf.ConfigProto()
            if xla:
                config.graph_options.optimizer_options.global_jit_level = \
                    tf.OptimizerOptions.ON_1
            with tf.Session(config=config) as s:
                restorer.restore(s, path)
                step = g.get_operation_by_name("train")
                feed = {"x:0": xs, "y:0": ys}
                got = [s.run([step, "loss:0"], feed)[1] for _ in range(3)]
                summary = s.cluster_summary(step, feed) if xla else ""
        np.testing.assert_allclose(got, want, rtol=1e-5)
        if xla:  # the imported training step, loop and gradients included, is one cluster
            assert "1 cluster(s)" in summary and "WhileGrad" in summary, summary
