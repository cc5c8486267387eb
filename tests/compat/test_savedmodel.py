"""Graphs that leave the process and come back: GraphDef bytes (checked against the protobuf
runtime with TF's messages from the tensorboard package), tf.import_graph_def, frozen graphs
(graph_util), MetaGraphDefs (Saver's .meta, import_meta_graph) and SavedModels."""

import os

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import (AlreadyExistsError, InvalidArgumentError, NotFoundError,
                                    UnimplementedError)

from .conftest import jit_config

pb = pytest.importorskip("tensorboard.compat.proto.graph_pb2")
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tensorboard.compat.proto import meta_graph_pb2  # noqa: E402

X = np.random.RandomState(0).randn(6, 8, 8, 1).astype(np.float32)
LABELS = np.array([0, 1, 2, 1, 0, 2], np.int64)


def _cnn(training=False):
    x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="input")
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu,
                         kernel_initializer=tf.glorot_uniform_initializer(seed=1))
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.reshape(h, [-1, 4 * 4 * 4])
    h = tf.layers.dense(h, 16, activation=tf.nn.relu,
                        kernel_initializer=tf.glorot_uniform_initializer(seed=2))
    logits = tf.layers.dense(h, 3, kernel_initializer=tf.glorot_uniform_initializer(seed=3))
    out = tf.nn.softmax(logits, name="output")
    return x, logits, out


def _train_graph():
    x, logits, out = _cnn()
    y = tf.placeholder(tf.int64, [None], name="labels")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits),
                          name="loss")
    gs = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=gs)
    tf.add_to_collection(tf.GraphKeys.TRAIN_OP, train)
    return x, y, loss, train, out


# ---- protobuf bytes ----------------------------------------------------------------------

def test_graph_def_bytes_match_protobuf_runtime():
    x, logits, out = _cnn()
    tf.constant(["a", "bc"], name="strings")
    tf.constant(3, dtype=tf.int64, name="scalar")
    gd = tf.get_default_graph().as_graph_def(add_shapes=True)
    data = gd.SerializeToString()
    oracle = pb.GraphDef.FromString(data)
    _assert_same_bytes(oracle, data)
    assert [n.name for n in oracle.node] == [n.name for n in gd.node]
    nodes = {n.name: n for n in oracle.node}
    assert nodes["input"].attr["dtype"].type == 1  # DT_FLOAT
    assert [d.size for d in nodes["input"].attr["shape"].shape.dim] == [-1, 8, 8, 1]
    conv = nodes["conv2d/Conv2D"]
    assert list(conv.attr["strides"].list.i) == [1, 1, 1, 1]
    assert conv.attr["padding"].s == b"SAME" and conv.attr["T"].type == 1
    assert conv.attr["data_format"].s == b"NHWC"
    assert nodes["dense/MatMul"].attr["transpose_a"].b is False
    assert nodes["strings"].attr["value"].tensor.string_val == [b"a", b"bc"]
    assert nodes["scalar"].attr["value"].tensor.int64_val == [3]
    assert nodes["conv2d/kernel"].op == "VariableV2"
    assert nodes["output"].attr["_output_shapes"].list.shape[0].dim[1].size == 3
    # the oracle's bytes read back into ours, and its text format too
    assert tf.GraphDef.FromString(oracle.SerializeToString()) == gd
    back = text_format.Parse(str(gd), pb.GraphDef())
    assert back == oracle
    from xlapy.compat.v1.proto.message import parse_text
    assert parse_text(text_format.MessageToString(oracle), tf.GraphDef()) == gd


def _assert_same_bytes(oracle, data: bytes):
    """data is the deterministic serialization of oracle. protobuf's upb runtime orders map
    keys that are prefixes of each other longest first (seed2 before seed); TF's C++ runtime
    and xlapy order them bytewise (seed before seed2): compare in upb's order."""
    ref = oracle.SerializeToString(deterministic=True)
    assert len(ref) == len(data) and type(oracle).FromString(ref) == oracle
    if ref != data:  # the same bytes, map entries in another order
        assert sorted(ref) == sorted(data)


def _saved_model_class():
    """SavedModel (saved_model.proto) built on tensorboard's MetaGraphDef descriptor."""
    fd = descriptor_pb2.FileDescriptorProto(name="xlapy_test_saved_model.proto",
                                            package="tensorboard", syntax="proto3")
    fd.dependency.append(meta_graph_pb2.DESCRIPTOR.name)
    m = fd.message_type.add(name="SavedModelForTest")
    m.field.add(name="saved_model_schema_version", number=1, type=3, label=1)
    m.field.add(name="meta_graphs", number=2, type=11, label=3,
                type_name=".tensorboard.MetaGraphDef")
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(fd.name)
    except KeyError:
        pool.Add(fd)
    return message_factory.GetMessageClass(
        pool.FindMessageTypeByName("tensorboard.SavedModelForTest"))


def test_meta_graph_and_saved_model_bytes_match_protobuf_runtime(tmp_path):
    x, y, loss, train, out = _train_graph()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    path = tf.train.Saver().save(sess, str(tmp_path / "m.ckpt"))
    data = open(path + ".meta", "rb").read()
    oracle = meta_graph_pb2.MetaGraphDef.FromString(data)
    _assert_same_bytes(oracle, data)
    assert oracle.saver_def.version == 2 and oracle.meta_info_def.meta_graph_version == "v1.0"
    assert oracle.collection_def["train_op"].node_list.value == [train.name]
    ours = tf.MetaGraphDef.FromString(data)
    assert len(ours.collection_def["trainable_variables"].bytes_list.value) == 6
    from tensorboard.compat.proto import variable_pb2
    vd = variable_pb2.VariableDef.FromString(
        oracle.collection_def["trainable_variables"].bytes_list.value[0])
    assert (vd.variable_name, vd.snapshot_name, vd.initializer_name, vd.trainable) == (
        "conv2d/kernel:0", "conv2d/kernel/read:0", "conv2d/kernel/Assign", True)
    export = str(tmp_path / "export")
    tf.saved_model.simple_save(sess, export, inputs={"x": x}, outputs={"y": out})
    sm = _saved_model_class().FromString(open(os.path.join(export, "saved_model.pb"),
                                              "rb").read())
    assert sm.saved_model_schema_version == 1
    mg = sm.meta_graphs[0]
    assert list(mg.meta_info_def.tags) == ["serve"]
    sig = mg.signature_def["serving_default"]
    assert sig.method_name == "tensorflow/serving/predict"
    assert sig.inputs["x"].name == "input:0" and sig.outputs["y"].name == "output:0"
    assert [d.size for d in sig.inputs["x"].tensor_shape.dim] == [-1, 8, 8, 1]
    _assert_same_bytes(sm, open(os.path.join(export, "saved_model.pb"), "rb").read())


# ---- import_graph_def ----------------------------------------------------------------------

def test_cnn_round_trip_through_bytes():
    g1 = tf.Graph()
    with g1.as_default():
        x, logits, out = _cnn()
        s1 = tf.Session()
        s1.run(tf.global_variables_initializer())
        want = s1.run(out, {x: X})
        frozen = tf.graph_util.convert_variables_to_constants(s1, s1.graph_def, ["output"])
    data = frozen.SerializeToString()
    assert not any(n.op in ("VariableV2", "Assign") for n in frozen.node)
    assert {n.op for n in frozen.node} >= {"Const", "Conv2D", "MaxPool", "MatMul", "Softmax"}
    with tf.Graph().as_default() as g2:
        gd = tf.GraphDef()
        gd.ParseFromString(data)
        tf.import_graph_def(gd, name="")
        with tf.Session() as s2:
            np.testing.assert_allclose(s2.run("output:0", {"input:0": X}), want, rtol=1e-5)
        # prefixed, with input_map and return_elements
        new_x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="new_input")
        y, op = tf.import_graph_def(gd, input_map={"input:0": new_x},
                                    return_elements=["output:0", "output"])
        assert y.name == "import/output:0" and op is y.op
        assert y.shape.as_list() == [None, 3]
        with tf.Session() as s2:
            np.testing.assert_allclose(s2.run(y, {new_x: X}), want, rtol=1e-5)
        assert g2.get_operation_by_name("import/conv2d/Conv2D").get_attr("padding") == "SAME"


@pytest.mark.parametrize("jit", [False, True])
def test_frozen_trained_model_runs_with_and_without_xla(tmp_path, jit):
    g1 = tf.Graph()
    with g1.as_default():
        x, y, loss, train, out = _train_graph()
        s1 = tf.Session()
        s1.run(tf.global_variables_initializer())
        for _ in range(3):
            s1.run(train, {x: X, y: LABELS})
        want = s1.run(out, {x: X})
        frozen = tf.graph_util.convert_variables_to_constants(s1, g1.as_graph_def(),
                                                              ["output"])
    path = tf.train.write_graph(frozen, str(tmp_path), "frozen.pb", as_text=False)
    with tf.Graph().as_default():
        gd = tf.GraphDef.FromString(open(path, "rb").read())
        tf.import_graph_def(gd, name="")
        sess = tf.Session(config=jit_config()) if jit else tf.Session()
        got = sess.run("output:0", {"input:0": X})
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        if jit:
            assert sess._cluster_ids > 0  # the imported graph was clustered and compiled


def test_control_inputs_and_extract_and_remove_training_nodes():
    a = tf.placeholder(tf.float32, [2], name="a")
    b = tf.identity(a * 2.0, name="b")
    with tf.control_dependencies([b]):
        c = tf.add(a, 1.0, name="c")
    tf.add(a, 5.0, name="unused")
    gd = tf.get_default_graph().as_graph_def()
    sub = tf.graph_util.extract_sub_graph(gd, ["c"])
    assert sorted(n.name for n in sub.node) == ["Const", "Const_1", "Mul", "a", "b", "c"]
    assert "^b" in [i for n in sub.node if n.name == "c" for i in n.input]
    pruned = tf.graph_util.remove_training_nodes(sub, protected_nodes=[])
    assert "b" not in [n.name for n in pruned.node]
    assert "^Mul" in [i for n in pruned.node if n.name == "c" for i in n.input]
    with tf.Graph().as_default() as g:
        tf.import_graph_def(sub, name="p")
        c2 = g.get_tensor_by_name("p/c:0")
        assert [o.name for o in c2.op.control_inputs] == ["p/b"]
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(c2, {"p/a:0": [1.0, 2.0]}), [2.0, 3.0])
        assert tf.graph_util.tensor_shape_from_node_def_name(g, "p/c").as_list() == [2]
    with pytest.raises(InvalidArgumentError, match="nope is not in graph"):
        tf.graph_util.extract_sub_graph(gd, ["nope"])
    del c


def test_text_format_write_graph_reads_back(tmp_path):
    x, logits, out = _cnn()
    g = tf.get_default_graph()
    path = tf.train.write_graph(g.as_graph_def(), str(tmp_path), "g.pbtxt")
    text = open(path).read()
    assert 'op: "Conv2D"' in text and "type: DT_FLOAT" in text
    from xlapy.compat.v1.proto.message import parse_text
    gd = parse_text(text, tf.GraphDef())
    assert gd == g.as_graph_def()
    assert text_format.Parse(text, pb.GraphDef()) == pb.GraphDef.FromString(
        gd.SerializeToString())
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    want = sess.run(out, {x: X})
    with tf.Graph().as_default():
        tf.import_graph_def(gd, name="")
        s2 = tf.Session()
        s2.run([op for op in tf.get_default_graph().get_operations() if op.type == "Assign"])
        np.testing.assert_allclose(s2.run("output:0", {"input:0": X}), want, rtol=1e-5)


def test_import_errors_are_clear():
    gd = tf.GraphDef()
    gd.node.add(name="x", op="NoSuchOp")
    with pytest.raises(NotFoundError, match="Op type not registered 'NoSuchOp'.*node 'x'"):
        tf.import_graph_def(gd)
    gd = tf.GraphDef()
    n = gd.node.add(name="y", op="Identity")
    n.input.append("missing:0")
    with pytest.raises(InvalidArgumentError, match="Node 'y': Unknown input node 'missing:0'"):
        tf.import_graph_def(gd)
    a = tf.constant([1.0], name="a")
    gd = tf.get_default_graph().as_graph_def()
    with pytest.raises(InvalidArgumentError, match="not found in graph_def: \\[b:0\\]"):
        tf.import_graph_def(gd, input_map={"b:0": a})
    with pytest.raises(InvalidArgumentError, match="return node 'zz' not found"):
        tf.import_graph_def(gd, return_elements=["zz"])
    gd2 = tf.GraphDef()
    n = gd2.node.add(name="i", op="Identity")
    n.input.append("a:3")
    gd2.node.add().CopyFrom(gd.node[0])
    with pytest.raises(InvalidArgumentError, match="invalid output 3 of source node a"):
        tf.import_graph_def(gd2)
    # a function TensorFlow wrote (no xlapy body), or one missing, and py_func say what
    # they are
    with tf.Graph().as_default() as g:
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)], name="loop")
        loop_gd = g.as_graph_def()
    body = next(f for f in loop_gd.library.function if f.signature.name == "loop/body")
    del body.attr["_xlapy_graph"]
    with tf.Graph().as_default():
        with pytest.raises(UnimplementedError, match=r"\(While\) calls the function "
                           r"'loop/body', which is not in xlapy's form"):
            tf.import_graph_def(loop_gd)
    del loop_gd.library.function[:]
    with tf.Graph().as_default():
        with pytest.raises(UnimplementedError, match="which is not in the GraphDef's library"):
            tf.import_graph_def(loop_gd)
    with tf.Graph().as_default() as g:
        tf.py_func(lambda v: v, [tf.constant(1.0)], tf.float32)
        py_gd = g.as_graph_def()
    with tf.Graph().as_default():
        with pytest.raises(UnimplementedError, match="Python object"):
            tf.import_graph_def(py_gd)


def test_strided_slice_and_xlapy_attrs_round_trip():
    v = tf.placeholder(tf.float32, [4, 5], name="v")
    s = tf.identity(v[1:, ::2, None][..., 0], name="s")
    r = tf.random_uniform([3], name="r")
    gd = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default() as g:
        tf.import_graph_def(tf.GraphDef.FromString(gd.SerializeToString()), name="")
        assert g.get_tensor_by_name("s:0").shape.as_list() == s.shape.as_list()
        assert g.get_operation_by_name("r/RandomUniform").get_attr("seed") is None
        val = np.arange(20, dtype=np.float32).reshape(4, 5)
        np.testing.assert_array_equal(tf.Session().run("s:0", {"v:0": val}), val[1:, ::2])
    del r


# ---- meta graphs ---------------------------------------------------------------------------

def test_import_meta_graph_continues_training(tmp_path):
    feed_steps = 6

    def run(sess, train, loss, x, y, n):
        for _ in range(n):
            sess.run(train, {x: X, y: LABELS})
        return sess.run(loss, {x: X, y: LABELS})

    with tf.Graph().as_default():
        x, y, loss, train, out = _train_graph()
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        want = run(sess, train, loss, x, y, feed_steps)
    with tf.Graph().as_default():
        x, y, loss, train, out = _train_graph()
        saver = tf.train.Saver()
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        run(sess, train, loss, x, y, feed_steps // 2)
        prefix = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=3)
    assert os.path.exists(prefix + ".meta")
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        sess = tf.Session()
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        train = tf.get_collection("train_op")[0]
        assert isinstance(train, tf.Operation)
        assert len(tf.trainable_variables()) == 6 and len(tf.global_variables()) > 6
        assert tf.global_variables()[0] in tf.trainable_variables()
        assert tf.train.get_global_step() is not None
        got = run(sess, train, g.get_tensor_by_name("loss:0"), "input:0", "labels:0",
                  feed_steps // 2)
        assert sess.run(tf.train.get_global_step()) == feed_steps
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_export_meta_graph_text_and_import_scope(tmp_path):
    w = tf.Variable(np.ones((2, 2), np.float32), name="w")
    tf.matmul(tf.placeholder(tf.float32, [None, 2], name="x"), w, name="y")
    path = str(tmp_path / "g.meta")
    meta = tf.train.export_meta_graph(path, as_text=True)
    assert "meta_graph_version" in open(path).read()
    assert isinstance(meta, tf.MetaGraphDef)
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(path, import_scope="scoped")
        assert g.get_operation_by_name("scoped/w").type == "VariableV2"
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run("scoped/y:0", {"scoped/x:0": [[1.0, 2.0]]}),
                                      [[3.0, 3.0]])
        ckpt = saver.save(sess, str(tmp_path / "s"))
        assert tf.train.NewCheckpointReader(ckpt).has_tensor("w")


# ---- SavedModel ---------------------------------------------------------------------------

def test_simple_save_and_load(tmp_path):
    export = str(tmp_path / "export")
    with tf.Graph().as_default():
        x, y, loss, train, out = _train_graph()
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: X, y: LABELS})
        want = sess.run(out, {x: X})
        tf.saved_model.simple_save(sess, export, inputs={"images": x},
                                   outputs={"scores": out})
        with pytest.raises(AlreadyExistsError, match="already exists"):
            tf.saved_model.simple_save(sess, export, inputs={"images": x},
                                       outputs={"scores": out})
    assert sorted(os.listdir(export)) == ["saved_model.pb", "variables"]
    assert sorted(os.listdir(os.path.join(export, "variables"))) == [
        "variables.data-00000-of-00001", "variables.index"]
    assert tf.saved_model.loader.maybe_saved_model_directory(export)
    assert not tf.saved_model.loader.maybe_saved_model_directory(str(tmp_path))
    for jit in (False, True):
        with tf.Graph().as_default():
            sess = tf.Session(config=jit_config()) if jit else tf.Session()
            meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING],
                                              export)
            sig = meta.signature_def[
                tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
            got = sess.run(sig.outputs["scores"].name, {sig.inputs["images"].name: X})
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
            with pytest.raises(NotFoundError, match="no signature 'nope'.*serving_default"):
                meta.signature_def["nope"]
    with tf.Graph().as_default():
        with pytest.raises(NotFoundError, match="tags \\['train'\\] could not be found"):
            tf.saved_model.loader.load(tf.Session(), ["train"], export)
        with pytest.raises(NotFoundError, match="SavedModel file does not exist"):
            tf.saved_model.loader.load(tf.Session(), ["serve"], str(tmp_path))


def test_saved_model_builder_as_text_and_two_meta_graphs(tmp_path):
    export = str(tmp_path / "b")
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable([[1.0], [2.0]], name="w")
    y = tf.matmul(x, w, name="y")
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    sess.run(w.assign([[3.0], [4.0]]))
    b = tf.saved_model.builder.SavedModelBuilder(export)
    info = tf.saved_model.utils.build_tensor_info
    sig = tf.saved_model.signature_def_utils.build_signature_def(
        inputs={"x": info(x)}, outputs={"y": info(y)},
        method_name=tf.saved_model.signature_constants.PREDICT_METHOD_NAME)
    b.add_meta_graph_and_variables(sess, [tf.saved_model.tag_constants.TRAINING],
                                   signature_def_map={"predict": sig})
    b.add_meta_graph([tf.saved_model.tag_constants.SERVING],
                     signature_def_map={"serving_default": sig})
    path = b.save(as_text=True)
    assert path.endswith("saved_model.pbtxt") and "meta_graphs {" in open(path).read()
    bad = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
    bad.outputs["y"].name = "nope:0"
    with pytest.raises(NotFoundError, match="'nope:0', which is not a tensor"):
        tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "c")) \
            .add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"s": bad})
    with tf.Graph().as_default():
        s2 = tf.Session()
        meta = tf.saved_model.loader.load(s2, ["serve"], export)
        sig = meta.signature_def["serving_default"]
        t = tf.saved_model.utils.get_tensor_from_tensor_info(sig.outputs["y"])
        np.testing.assert_allclose(s2.run(t, {sig.inputs["x"].name: [[1.0, 1.0]]}), [[7.0]])


def test_mlp_graph_def_bytes_equal_protobuf_runtime_exactly():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3), name="w")
    b = tf.Variable(tf.zeros([3]), name="b")
    y = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w, transpose_b=False), b), name="y")
    tf.reshape(y, [-1], name="flat")
    tf.constant(np.float16(1.5), name="half")
    tf.constant([True, False], name="flags")
    gd = tf.get_default_graph().as_graph_def()
    data = gd.SerializeToString()
    _assert_same_bytes(pb.GraphDef.FromString(data), data)
    from tensorboard.compat.proto import node_def_pb2
    for n in gd.node:  # byte for byte, but for Reshape's T / Tshape (upb's map order)
        if n.op != "Reshape":
            raw = n.SerializeToString()
            assert node_def_pb2.NodeDef.FromString(raw).SerializeToString(
                deterministic=True) == raw, n.name
    node = {n.name: n for n in pb.GraphDef.FromString(data).node}
    assert node["w"].attr["shape"].shape.dim[0].size == 4 and node["w"].attr["dtype"].type == 1
    init = node[node["w/Assign"].input[1]].attr["value"].tensor
    assert init.tensor_content == np.arange(12, dtype="<f4").tobytes()
    assert node["half"].attr["value"].tensor.half_val == [np.float16(1.5).view(np.uint16)]
    assert node["flat"].attr["Tshape"].type == 3 and node["y"].attr["T"].type == 1
    gd = tf.GraphDef.FromString(data)
    init = [n for n in gd.node if n.name == node["w/Assign"].input[1]][0]
    np.testing.assert_array_equal(tf.make_ndarray(init.attr["value"].tensor),
                                  np.arange(12, dtype=np.float32).reshape(4, 3))


def test_building_after_import_takes_new_scopes():
    x, logits, out = _cnn()
    gd = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default() as g:
        tf.import_graph_def(gd, name="")
        d = tf.layers.dense(g.get_tensor_by_name("output:0"), 2)
        assert d.op.name.startswith("dense_2/")
        assert g.get_operation_by_name("dense/kernel").type == "VariableV2"


def test_import_graph_def_written_with_tf_messages():
    """A GraphDef as TF writes it (TF's attrs, T/Tshape, _output_shapes, nodes out of
    order), built with the protobuf runtime's messages."""
    from tensorboard.compat.proto import attr_value_pb2, tensor_pb2, tensor_shape_pb2
    A, T, S = attr_value_pb2.AttrValue, tensor_pb2.TensorProto, tensor_shape_pb2
    w = np.arange(6, dtype=np.float32).reshape(3, 2)
    gd = pb.GraphDef()

    def node(name, op, inputs=(), **attrs):
        n = gd.node.add(name=name, op=op, input=list(inputs))
        for k, v in attrs.items():
            n.attr[k].CopyFrom(v)
        return n

    def shape(*dims):
        return S.TensorShapeProto(dim=[S.TensorShapeProto.Dim(size=d) for d in dims])

    node("output", "Softmax", ["relu"], T=A(type=1))
    node("relu", "Relu", ["bias"], T=A(type=1))
    node("bias", "BiasAdd", ["mm", "b/read"], T=A(type=1), data_format=A(s=b"NHWC"))
    node("mm", "MatMul", ["input", "w"], T=A(type=1), transpose_a=A(b=False),
         transpose_b=A(b=False), _output_shapes=A(list=A.ListValue(shape=[shape(-1, 2)])))
    node("input", "Placeholder", dtype=A(type=1), shape=A(shape=shape(-1, 3)))
    node("w", "Const", dtype=A(type=1), value=A(tensor=T(dtype=1, tensor_shape=shape(3, 2),
                                                         tensor_content=w.tobytes())))
    node("b", "Const", dtype=A(type=1), value=A(tensor=T(dtype=1, tensor_shape=shape(2),
                                                         float_val=[0.5])))
    node("b/read", "Identity", ["b"], T=A(type=1))
    node("flat", "Reshape", ["output", "flat/shape"], T=A(type=1), Tshape=A(type=3))
    node("flat/shape", "Const", dtype=A(type=3), value=A(tensor=T(dtype=3,
                                                                  tensor_shape=shape(1),
                                                                  int_val=[-1])))
    x = np.array([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]], np.float32)
    logits = np.maximum(x @ w + 0.5, 0)
    want = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    for jit in (False, True):
        with tf.Graph().as_default() as g:
            flat, = tf.import_graph_def(gd, return_elements=["flat:0"], name="tf")
            assert g.get_tensor_by_name("tf/mm:0").shape.as_list() == [None, 2]
            sess = tf.Session(config=jit_config()) if jit else tf.Session()
            np.testing.assert_allclose(sess.run(flat, {"tf/input:0": x}), want.reshape(-1),
                                       rtol=1e-5)


def test_file_writer_takes_sess_graph_def(tmp_path):
    pytest.importorskip("tensorboardX")
    from tensorboard.backend.event_processing import event_accumulator
    x, logits, out = _cnn()
    sess = tf.Session()
    w = tf.summary.FileWriter(str(tmp_path), sess.graph_def)  # TF 1.x scripts do this
    w.close()
    acc = event_accumulator.EventAccumulator(str(tmp_path))
    acc.Reload()
    assert "output" in [n.name for n in acc.Graph().node]
