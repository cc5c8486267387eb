"""tf.gfile, tf.logging, tf.compat, tf.flags, tf.test helpers and TF's import paths."""

import importlib
import logging

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import AlreadyExistsError, NotFoundError


def test_gfile(tmp_path):
    d = str(tmp_path / "a" / "b")
    tf.gfile.MakeDirs(d)
    tf.gfile.MakeDirs(d)  # exists: fine
    assert tf.gfile.IsDirectory(d) and tf.gfile.Exists(d)
    with pytest.raises(AlreadyExistsError):
        tf.gfile.MkDir(d)
    f = d + "/x.txt"
    with tf.gfile.GFile(f, "w") as out:
        out.write("line1\nline2\n")
    with tf.gfile.GFile(f) as inp:
        assert inp.size() == 12 and list(inp) == ["line1\n", "line2\n"]
    with tf.gfile.GFile(f, "rb") as inp:
        assert inp.read() == b"line1\nline2\n"
    assert tf.gfile.Glob(d + "/*.txt") == [f] and tf.gfile.ListDirectory(d) == ["x.txt"]
    assert tf.gfile.Stat(f).length == 12 and not tf.gfile.Stat(f).is_directory
    tf.gfile.Copy(f, d + "/y.txt")
    with pytest.raises(AlreadyExistsError, match="already exists"):
        tf.gfile.Copy(f, d + "/y.txt")
    tf.gfile.Rename(d + "/y.txt", d + "/z.txt")
    assert sorted(tf.gfile.ListDirectory(d)) == ["x.txt", "z.txt"]
    assert [w[0] for w in tf.gfile.Walk(str(tmp_path))] == [str(tmp_path), str(tmp_path / "a"),
                                                            d]
    tf.gfile.Remove(d + "/z.txt")
    with pytest.raises(NotFoundError, match="No such file"):
        tf.gfile.GFile(d + "/z.txt")
    with pytest.raises(NotFoundError):
        tf.gfile.Remove(d + "/z.txt")
    tf.gfile.DeleteRecursively(str(tmp_path / "a"))
    assert not tf.gfile.Exists(d)


def test_logging(capsys):
    old = tf.logging.get_verbosity()
    try:
        tf.logging.set_verbosity(tf.logging.INFO)
        tf.logging.info("step %d", 3)
        tf.logging.debug("hidden")
        for i in range(5):
            tf.logging.log_every_n(tf.logging.INFO, "every %d", 2, i)
            tf.logging.log_first_n(tf.logging.WARN, "first %d", 1, i)
        err = capsys.readouterr().err
        assert "INFO:tensorflow:step 3" in err and "hidden" not in err
        assert [line for line in err.splitlines() if "every" in line] == [
            "INFO:tensorflow:every 0", "INFO:tensorflow:every 2", "INFO:tensorflow:every 4"]
        assert err.count("first") == 1
        tf.logging.set_verbosity(tf.logging.ERROR)
        tf.logging.warn("quiet")
        assert "quiet" not in capsys.readouterr().err
        assert tf.logging.get_verbosity() == logging.ERROR
    finally:
        tf.logging.set_verbosity(old)


def test_compat_and_flags():
    assert tf.compat.as_bytes("é") == "é".encode() and tf.compat.as_text(b"ab") == "ab"
    assert tf.compat.as_str_any(3) == "3"
    with pytest.raises(TypeError):
        tf.compat.as_bytes(3)
    assert tf.flags is tf.app.flags and tf.flags.FLAGS is tf.app.flags.FLAGS
    assert tf.string.name == "string" and tf.constant("hi").dtype == tf.string


def test_testcase_assertions():
    case = tf.test.TestCase()
    case.setUp()
    case.assertAllClose({"a": [1.0, 2.0]}, {"a": np.array([1.0, 2.0 + 1e-8])})
    with pytest.raises(AssertionError):
        case.assertAllClose([1.0], [1.1])
    with pytest.raises(AssertionError):
        case.assertAllEqual([[1, 2]], [1, 2])
    with case.test_session() as sess:
        case.assertAllEqual(sess.run(tf.constant([1, 2]) * 2), [2, 4])
        case.assertAllClose(tf.constant(3.0), 3.0)  # tensors are evaluated
    with case.assertRaisesOpError("uninitialized"):
        with case.session() as sess:
            sess.run(tf.Variable(1.0))
    assert not tf.test.is_gpu_available() and callable(tf.test.main)
    assert not callable(tf.test.TestCase.test_session)  # not collected as a test


@pytest.mark.parametrize("path,name", [
    ("framework.ops", "Graph"), ("framework.dtypes", "float32"),
    ("framework.constant_op", "constant"), ("framework.tensor_shape", "TensorShape"),
    ("framework.errors", "NotFoundError"), ("framework.random_seed", "set_random_seed"),
    ("framework.function", "Defun"), ("ops.array_ops", "placeholder"),
    ("ops.math_ops", "matmul"), ("ops.nn_ops", "relu"), ("ops.init_ops", "zeros_initializer"),
    ("ops.variable_scope", "get_variable"), ("ops.variables", "Variable"),
    ("ops.state_ops", "assign") if hasattr(tf, "assign") else ("ops.state_ops", "Variable"),
    ("ops.gradients", "gradients"), ("platform.test", "main"), ("platform.gfile", "GFile"),
    ("platform.tf_logging", "info"), ("util.compat", "as_bytes"),
    ("training.saver", "Saver"), ("training.adam", "AdamOptimizer"),
    ("summary.summary", "FileWriter"), ("client.session", "Session"),
])
def test_tensorflow_python_import_paths(path, name):
    mod = importlib.import_module(f"xlapy.compat.v1.python.{path}")
    assert getattr(mod, name) is not None
    with pytest.raises(AttributeError, match="does not provide it"):
        mod.__getattr__("no_such_symbol_here")
