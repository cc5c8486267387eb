"""tf.train.Saver: round trips, var_list forms, the `checkpoint` state file, max_to_keep,
readers, and the errors TF gave for bad paths, missing keys, shape mismatches and
uninitialized variables."""

import json
import os

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import (DataLossError, FailedPreconditionError,
                                    InvalidArgumentError, NotFoundError)

from .conftest import jit_config

W = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.array([1, -2], np.int64)


def _model():
    w = tf.Variable(W, name="w")
    b = tf.Variable(B, name="layer/b")
    return w, b


def test_save_restore_round_trip(tmp_path):
    w, b = _model()
    gs = tf.train.get_or_create_global_step()
    saver = tf.train.Saver()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    sess.run([w.assign(W * 3), gs.assign(7)])
    prefix = str(tmp_path / "model.ckpt")
    path = saver.save(sess, prefix, global_step=gs)
    assert path == prefix + "-7"
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-7.data-00000-of-00001",
                                            "model.ckpt-7.index", "model.ckpt-7.meta"]
    assert tf.train.latest_checkpoint(str(tmp_path)) == path
    # a fresh session: restore instead of initializing
    sess2 = tf.Session()
    saver.restore(sess2, path)
    np.testing.assert_array_equal(sess2.run(w), W * 3)
    np.testing.assert_array_equal(sess2.run(b), B)
    assert sess2.run(gs) == 7 and sess2.run(b).dtype == np.int64
    reader = tf.train.NewCheckpointReader(path)
    assert reader.get_variable_to_shape_map() == {"w": [2, 3], "layer/b": [2],
                                                  "global_step": []}
    assert reader.get_variable_to_dtype_map()["layer/b"] == tf.int64
    assert reader.has_tensor("w") and not reader.has_tensor("nope")
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path), "w"), W * 3)
    assert tf.train.list_variables(str(tmp_path)) == [("global_step", []), ("layer/b", [2]),
                                                      ("w", [2, 3])]


def test_restore_under_xla_and_keep_training(tmp_path):
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable(np.ones((3, 1), np.float32), name="w")
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
    train = tf.train.MomentumOptimizer(0.01, 0.9).minimize(loss)
    saver = tf.train.Saver()
    feed = {x: W}
    a = tf.Session(config=jit_config())
    a.run(tf.global_variables_initializer())
    a.run(train, feed)
    path = saver.save(a, str(tmp_path / "m"))
    a.run(train, feed)
    b = tf.Session(config=jit_config())
    saver.restore(b, path)  # weights and the momentum slot
    b.run(train, feed)
    np.testing.assert_allclose(b.run(w), a.run(w), rtol=1e-6)


def test_var_list_dict_and_list(tmp_path):
    w, b = _model()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    path = tf.train.Saver({"weights": w}).save(sess, str(tmp_path / "d"))
    assert tf.train.NewCheckpointReader(path).get_variable_to_shape_map() == {"weights": [2, 3]}
    path2 = tf.train.Saver([b]).save(sess, str(tmp_path / "l"))
    assert list(tf.train.NewCheckpointReader(path2).get_variable_to_shape_map()) == ["layer/b"]
    # restore a renamed entry into another variable of the same shape
    tf.reset_default_graph()
    other = tf.Variable(np.zeros((2, 3), np.float32), name="other")
    s = tf.Session()
    tf.train.Saver({"weights": other}).restore(s, path)
    np.testing.assert_array_equal(s.run(other), W)
    with pytest.raises(InvalidArgumentError, match="At least two variables have the same "
                                                   "name: other"):
        tf.train.Saver([other, other])
    with pytest.raises(InvalidArgumentError, match="not a Variable"):
        tf.train.Saver([tf.constant(1.0)])
    with pytest.raises(InvalidArgumentError, match="No variables to save"):
        tf.reset_default_graph()
        tf.train.Saver()
    assert tf.train.Saver(allow_empty=True).save(tf.Session(), str(tmp_path / "e")) is None


def test_max_to_keep_and_state_file(tmp_path, monkeypatch):
    _model()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    saver = tf.train.Saver(max_to_keep=2)
    monkeypatch.chdir(tmp_path)
    os.mkdir("logs")
    paths = [saver.save(sess, "logs/model.ckpt", global_step=i) for i in range(4)]
    assert paths[-1] == "logs/model.ckpt-3"
    assert saver.last_checkpoints == paths[2:]
    files = sorted(os.listdir("logs"))
    assert files == ["checkpoint", "model.ckpt-2.data-00000-of-00001", "model.ckpt-2.index",
                     "model.ckpt-2.meta", "model.ckpt-3.data-00000-of-00001",
                     "model.ckpt-3.index", "model.ckpt-3.meta"]
    # TF's text format, paths relative to the directory (as given relative)
    assert open("logs/checkpoint").read() == (
        'model_checkpoint_path: "model.ckpt-3"\n'
        'all_model_checkpoint_paths: "model.ckpt-2"\n'
        'all_model_checkpoint_paths: "model.ckpt-3"\n')
    st = tf.train.get_checkpoint_state("logs")
    assert st.model_checkpoint_path == os.path.join("logs", "model.ckpt-3")
    assert st.all_model_checkpoint_paths == [os.path.join("logs", "model.ckpt-2"),
                                             os.path.join("logs", "model.ckpt-3")]
    # absolute paths stay absolute; max_to_keep=None keeps every file, lists the newest
    keep_all = tf.train.Saver(max_to_keep=None)
    absdir = str(tmp_path / "abs")
    os.mkdir(absdir)
    for i in range(3):
        keep_all.save(sess, os.path.join(absdir, "m"), global_step=i, latest_filename="ck")
    assert len([f for f in os.listdir(absdir) if f.endswith(".index")]) == 3
    text = open(os.path.join(absdir, "ck")).read()
    assert text == (f'model_checkpoint_path: "{absdir}/m-2"\n'
                    f'all_model_checkpoint_paths: "{absdir}/m-2"\n')
    assert tf.train.latest_checkpoint(absdir, "ck") == f"{absdir}/m-2"
    assert tf.train.latest_checkpoint(str(tmp_path)) is None  # no state file there
    padded = tf.train.Saver(pad_step_number=True).save(sess, "logs/p", global_step=5)
    assert padded == "logs/p-00000005"


def test_errors(tmp_path):
    w, b = _model()
    saver = tf.train.Saver()
    sess = tf.Session()
    with pytest.raises(FailedPreconditionError, match="uninitialized value"):
        saver.save(sess, str(tmp_path / "m"))
    sess.run(tf.global_variables_initializer())
    with pytest.raises(InvalidArgumentError, match="Parent directory of .* doesn't exist"):
        saver.save(sess, str(tmp_path / "missing" / "m"))
    with pytest.raises(InvalidArgumentError, match="save_path when it is None"):
        saver.restore(sess, None)
    with pytest.raises(InvalidArgumentError, match="not a valid checkpoint"):
        saver.restore(sess, str(tmp_path / "nothing"))
    path = tf.train.Saver([w]).save(sess, str(tmp_path / "only_w"))
    with pytest.raises(NotFoundError, match="Key layer/b not found in checkpoint"):
        saver.restore(sess, path)
    tf.reset_default_graph()
    wide = tf.Variable(np.zeros((3, 3), np.float32), name="w")
    with pytest.raises(InvalidArgumentError, match=r"lhs shape= \[3, 3\] rhs shape= \[2, 3\]"):
        tf.train.Saver().restore(tf.Session(), path)
    assert wide.op.name == "w"
    # corrupted data and foreign index files are reported, not misread
    data = path + ".data-00000-of-00001"
    raw = bytearray(open(data, "rb").read())
    raw[3] ^= 0xFF
    open(data, "wb").write(bytes(raw))
    with pytest.raises(DataLossError, match="CRC-32 mismatch"):
        tf.train.NewCheckpointReader(path).get_tensor("w")
    open(path + ".index", "wb").write(b"\x00\x01binary leveldb table")
    with pytest.raises(DataLossError, match="not an xlapy checkpoint"):
        tf.train.NewCheckpointReader(path)
    with pytest.raises(NotFoundError, match="Failed to find"):
        tf.train.NewCheckpointReader(str(tmp_path / "none"))


def test_index_is_documented_json(tmp_path):
    w, _ = _model()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    path = tf.train.Saver([w]).save(sess, str(tmp_path / "m"))
    index = json.load(open(path + ".index"))
    assert index["format"] == "xlapy-checkpoint" and index["version"] == 1
    e = index["tensors"]["w"]
    assert (e["dtype"], e["shape"], e["offset"], e["nbytes"]) == ("float32", [2, 3], 0, 24)
    raw = open(path + ".data-00000-of-00001", "rb").read()
    np.testing.assert_array_equal(np.frombuffer(raw[:24], "<f4").reshape(2, 3), W)
