"""tf.keras functional models with several inputs and outputs (the Keras functional-API
guide): compile's per-output loss / loss_weights / metrics, x and y as lists or dicts,
History and metrics_names keys as Keras 2.2 names them, predict's list, validation, XLA
through set_session, and a layer shared by two inputs."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError

from .conftest import jit_config

R = np.random.default_rng(0)
N = 600
XA = R.standard_normal((N, 6)).astype(np.float32)
XB = R.standard_normal((N, 4)).astype(np.float32)
Y_CLS = (XA[:, 0] + XB[:, 0] > 0).astype(np.int64)                # class head
Y_REG = (0.5 * XA[:, 1] - XB[:, 1])[:, None].astype(np.float32)  # regression head


@pytest.fixture(autouse=True)
def _fresh():
    tf.keras.backend.clear_session()
    yield
    tf.keras.backend.clear_session()


def two_by_two():
    a = tf.keras.Input(shape=(6,), name="a_in")
    b = tf.keras.Input(shape=(4,), name="b_in")
    h = tf.keras.layers.concatenate([a, b])
    h = tf.keras.layers.Dense(32, activation="relu", name="trunk")(h)
    cls = tf.keras.layers.Dense(2, activation="softmax", name="cls")(h)
    reg = tf.keras.layers.Dense(1, name="reg")(h)
    return tf.keras.Model(inputs=[a, b], outputs=[cls, reg])


@pytest.mark.parametrize("xla", [False, True])
def test_two_inputs_two_outputs_dict_form(xla, capsys):
    tf.set_random_seed(1)
    if xla:
        tf.keras.backend.set_session(tf.Session(config=jit_config()))
    m = two_by_two()
    assert m.input_names == ["a_in", "b_in"] and m.output_names == ["cls", "reg"]
    assert isinstance(m.input, list) and len(m.outputs) == 2
    m.compile(tf.keras.optimizers.Adam(lr=0.01),
              loss={"cls": "sparse_categorical_crossentropy", "reg": "mse"},
              loss_weights={"cls": 1.0, "reg": 0.5},
              metrics={"cls": ["accuracy"], "reg": ["mae"]})
    assert m.metrics_names == ["loss", "cls_loss", "reg_loss", "cls_acc",
                               "reg_mean_absolute_error"]
    hist = m.fit({"a_in": XA[:500], "b_in": XB[:500]}, {"cls": Y_CLS[:500], "reg": Y_REG[:500]},
                 batch_size=32, epochs=10, verbose=0, validation_split=0.2)
    assert sorted(hist.history) == sorted(m.metrics_names + ["val_" + n
                                                             for n in m.metrics_names])
    assert all(len(v) == 10 for v in hist.history.values())
    assert hist.history["loss"][-1] < hist.history["loss"][0]
    res = m.evaluate({"a_in": XA[500:], "b_in": XB[500:]},
                     {"cls": Y_CLS[500:], "reg": Y_REG[500:]}, verbose=0)
    total, cls_loss, reg_loss, acc, mae = res
    assert acc > 0.9 and reg_loss < 0.05, res
    np.testing.assert_allclose(total, cls_loss + 0.5 * reg_loss, rtol=1e-4)
    p = m.predict({"a_in": XA[:7], "b_in": XB[:7]})
    assert isinstance(p, list) and p[0].shape == (7, 2) and p[1].shape == (7, 1)
    # the list forms give the same numbers
    np.testing.assert_allclose(m.predict([XA[:7], XB[:7]])[1], p[1], rtol=1e-6)
    np.testing.assert_allclose(
        m.evaluate([XA[500:], XB[500:]], [Y_CLS[500:], Y_REG[500:]], verbose=0), res,
        rtol=1e-5)
    tb = m.test_on_batch([XA[:50], XB[:50]], [Y_CLS[:50], Y_REG[:50]])
    assert len(tb) == 5
    np.testing.assert_allclose(tb[0], tb[1] + 0.5 * tb[2], rtol=1e-4)
    m.summary()
    out = capsys.readouterr().out
    assert "Connected to" in out and "a_in" in out and "trunk" in out


def test_list_forms_loss_weights_and_validation_data():
    tf.set_random_seed(2)
    m = two_by_two()
    m.compile(tf.keras.optimizers.Adam(lr=0.01), loss=["sparse_categorical_crossentropy", "mse"],
              loss_weights=[0.2, 3.0], metrics=["acc"])
    assert m.metrics_names == ["loss", "cls_loss", "reg_loss", "cls_acc", "reg_acc"]
    hist = m.fit([XA[:500], XB[:500]], [Y_CLS[:500], Y_REG[:500]], epochs=8, verbose=0,
                 validation_data=([XA[500:], XB[500:]], [Y_CLS[500:], Y_REG[500:]]))
    assert "val_cls_acc" in hist.history and "val_reg_loss" in hist.history
    for pre in ("", "val_"):
        for t, c, r in zip(hist.history[pre + "loss"], hist.history[pre + "cls_loss"],
                           hist.history[pre + "reg_loss"]):
            np.testing.assert_allclose(t, 0.2 * c + 3.0 * r, rtol=1e-4)
    total, c, r, acc, _ = m.evaluate([XA[500:], XB[500:]], [Y_CLS[500:], Y_REG[500:]],
                                     verbose=0)
    np.testing.assert_allclose(total, 0.2 * c + 3.0 * r, rtol=1e-4)
    assert acc > 0.85 and r < 0.05, (acc, r)
    out = m.train_on_batch([XA[:32], XB[:32]], [Y_CLS[:32], Y_REG[:32]])
    assert len(out) == 5


def test_loss_weights_scale_the_gradient():
    """The same model and data with loss_weights (1, 0) trains only the class head: the
    regression head's weights stay put."""
    tf.set_random_seed(3)
    m = two_by_two()
    m.compile(tf.keras.optimizers.SGD(lr=0.1), ["sparse_categorical_crossentropy", "mse"],
              loss_weights=[1.0, 0.0])
    reg = next(layer for layer in m.layers if layer.name == "reg")
    before = reg.get_weights()
    m.fit([XA[:64], XB[:64]], [Y_CLS[:64], Y_REG[:64]], epochs=1, verbose=0)
    for w0, w1 in zip(before, reg.get_weights()):
        np.testing.assert_array_equal(w0, w1)


def test_one_loss_for_all_outputs_dict_metrics_and_missing_loss():
    a = tf.keras.Input(shape=(6,), name="x")
    o1 = tf.keras.layers.Dense(1, name="o1")(a)
    o2 = tf.keras.layers.Dense(1, name="o2")(a)
    m = tf.keras.Model(a, [o1, o2])
    m.compile("sgd", loss="mse", metrics=[["mae"], []])
    assert m.metrics_names == ["loss", "o1_loss", "o2_loss", "o1_mean_absolute_error"]
    res = m.evaluate(XA[:40], [Y_REG[:40], Y_REG[:40]], verbose=0)
    np.testing.assert_allclose(res[0], res[1] + res[2], rtol=1e-5)
    # an output left out of the loss dict has no loss, and needs no targets
    m.compile("sgd", loss={"o1": "mse"})
    assert m.metrics_names == ["loss", "o1_loss"]
    m.fit(XA[:40], {"o1": Y_REG[:40]}, epochs=1, verbose=0)
    with pytest.raises(InvalidArgumentError, match="Unknown entry in loss"):
        m.compile("sgd", loss={"o3": "mse"})
    with pytest.raises(InvalidArgumentError, match="one entry per model output"):
        m.compile("sgd", loss=["mse"])


def test_data_errors():
    m = two_by_two()
    m.compile("sgd", ["sparse_categorical_crossentropy", "mse"])
    with pytest.raises(InvalidArgumentError, match="No data provided for 'b_in'"):
        m.fit({"a_in": XA[:10]}, [Y_CLS[:10], Y_REG[:10]], verbose=0)
    with pytest.raises(InvalidArgumentError, match="Expected to see 2 array"):
        m.predict(XA[:10])
    with pytest.raises(InvalidArgumentError, match="same number of samples"):
        m.fit([XA[:10], XB[:10]], [Y_CLS[:9], Y_REG[:9]], verbose=0)


def test_shared_layer_one_set_of_weights(tmp_path):
    tf.set_random_seed(4)
    a = tf.keras.Input(shape=(6,), name="left")
    b = tf.keras.Input(shape=(6,), name="right")
    shared = tf.keras.layers.Dense(8, activation="tanh", name="shared")
    h = tf.keras.layers.concatenate([shared(a), shared(b)])
    out = tf.keras.layers.Dense(1, activation="sigmoid", name="same")(h)
    m = tf.keras.Model(inputs=[a, b], outputs=out)
    assert [layer.name for layer in m.layers].count("shared") == 1
    assert len(m.trainable_weights) == 4 and m.count_params() == 6 * 8 + 8 + 16 + 1
    y = (XA[:, 0] > XA[::-1][:, 0]).astype(np.float32)
    m.compile(tf.keras.optimizers.Adam(lr=0.02), "binary_crossentropy", metrics=["acc"])
    assert m.metrics_names == ["loss", "acc"]
    hist = m.fit([XA[:500], XA[::-1][:500]], y[:500], epochs=10, verbose=0)
    assert sorted(hist.history) == ["acc", "loss"]
    loss, acc = m.evaluate([XA[500:], XA[::-1][500:]], y[500:], verbose=0)
    assert acc > 0.85, (loss, acc)
    p = m.predict([XA[:5], XA[::-1][:5]])
    assert p.shape == (5, 1)
    path = str(tmp_path / "w.npz")
    m.save_weights(path)
    m.set_weights([np.zeros_like(w) for w in m.get_weights()])
    m.load_weights(path)
    np.testing.assert_allclose(m.predict([XA[:5], XA[::-1][:5]]), p, rtol=1e-6)
    with pytest.raises(UnimplementedError):
        m.save(str(tmp_path / "m.h5"))


def test_input_aliases():
    assert tf.keras.Input is tf.keras.layers.Input
    assert tf.keras.layers.InputLayer is not None
