"""tf.keras in graph mode: the "Get started" Sequential model trained with fit, a functional
conv model, exact losses and one SGD step against JAX, XLA through set_session, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .conftest import jit_config

R = np.random.default_rng(0)
X = R.standard_normal((600, 8, 8)).astype(np.float32)
Y = (X[:, :4].sum((1, 2)) > 0).astype(np.int64)


@pytest.fixture(autouse=True)
def _fresh():
    tf.keras.backend.clear_session()
    yield
    tf.keras.backend.clear_session()


@pytest.mark.parametrize("xla", [False, True])
def test_get_started_sequential(xla, capsys):
    tf.set_random_seed(1)
    if xla:
        tf.keras.backend.set_session(tf.Session(config=jit_config()))
    model = tf.keras.models.Sequential([
        tf.keras.layers.Flatten(input_shape=(8, 8)),
        tf.keras.layers.Dense(64, activation=tf.nn.relu),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(2, activation=tf.nn.softmax)])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    hist = model.fit(X[:500], Y[:500], epochs=8, verbose=1)
    assert sorted(hist.history) == ["acc", "loss"] and len(hist.history["loss"]) == 8
    assert hist.history["loss"][-1] < hist.history["loss"][0]
    loss, acc = model.evaluate(X[500:], Y[500:], verbose=0)
    assert acc > 0.75 and loss < 0.6, (loss, acc)
    p = model.predict(X[:5])
    assert p.shape == (5, 2)
    np.testing.assert_allclose(p.sum(1), 1.0, rtol=1e-5)
    model.summary()
    out = capsys.readouterr().out
    assert "Epoch 8/8" in out and "Total params: 4,290" in out


def test_functional_conv_model_and_weights_roundtrip(tmp_path):
    tf.set_random_seed(2)
    inp = tf.keras.layers.Input(shape=(8, 8, 1))
    h = tf.keras.layers.Conv2D(4, 3, activation="relu", padding="same")(inp)
    h = tf.keras.layers.MaxPooling2D()(h)
    h = tf.keras.layers.BatchNormalization()(h)
    h = tf.keras.layers.Flatten()(h)
    out = tf.keras.layers.Dense(2, activation="softmax")(h)
    m = tf.keras.Model(inputs=inp, outputs=out)
    m.compile(tf.keras.optimizers.SGD(lr=0.1), "categorical_crossentropy", metrics=["acc"])
    m.fit(X[:500, :, :, None], np.eye(2)[Y[:500]], batch_size=50, epochs=8, verbose=0)
    loss, acc = m.evaluate(X[500:, :, :, None], np.eye(2)[Y[500:]], verbose=0)
    assert acc > 0.7, (loss, acc)
    before = m.predict(X[500:510, :, :, None])
    path = str(tmp_path / "w.npz")
    m.save_weights(path)
    m.set_weights([np.zeros_like(w) for w in m.get_weights()])
    assert not np.allclose(m.predict(X[500:510, :, :, None]), before)
    m.load_weights(path)
    np.testing.assert_allclose(m.predict(X[500:510, :, :, None]), before, rtol=1e-6)


def test_loss_and_one_sgd_step_match_jax():
    x = R.standard_normal((6, 3)).astype(np.float32)
    y = np.array([0, 1, 2, 1, 0, 2])
    w0 = R.standard_normal((3, 3)).astype(np.float32) * 0.5
    b0 = np.array([0.1, -0.2, 0.0], np.float32)
    m = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="softmax", input_dim=3)])
    m.compile(tf.keras.optimizers.SGD(lr=0.5), "sparse_categorical_crossentropy")
    m.set_weights([w0, b0])

    def loss(w, b):
        p = jax.nn.softmax(x @ w + b)
        p = jnp.clip(p, 1e-7, 1 - 1e-7)
        return -jnp.mean(jnp.log(p[jnp.arange(6), y]))
    np.testing.assert_allclose(m.evaluate(x, y, verbose=0), loss(w0, b0), rtol=1e-5)
    gw, gb = jax.grad(loss, argnums=(0, 1))(w0, b0)
    m.train_on_batch(x, y)
    w1, b1 = m.get_weights()
    np.testing.assert_allclose(w1, w0 - 0.5 * gw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b1, b0 - 0.5 * gb, rtol=1e-5, atol=1e-6)


def test_errors():
    m = tf.keras.Sequential([tf.keras.layers.Dense(2, input_dim=3)])
    with pytest.raises(InvalidArgumentError, match="compile"):
        m.fit(np.zeros((2, 3)), np.zeros((2, 2)))
    with pytest.raises(InvalidArgumentError, match="Unknown loss"):
        m.compile("sgd", "hinge_of_nothing")
    with pytest.raises(InvalidArgumentError, match="Unknown optimizer"):
        m.compile("lbfgs", "mse")
    with pytest.raises(InvalidArgumentError, match="Unknown activation"):
        tf.keras.layers.Dense(2, activation="swishy")
    m.compile("sgd", "mse")
    with pytest.raises(InvalidArgumentError, match="same number of samples"):
        m.fit(np.zeros((2, 3)), np.zeros((3, 2)), verbose=0)


def test_mnist_load_data_without_downloading(tmp_path):
    (xt, yt), (xs, ys) = tf.keras.datasets.mnist.load_data(path=str(tmp_path / "none.npz"))
    assert xt.shape == (4000, 28, 28) and xs.shape == (1000, 28, 28)
    assert xt.dtype == np.uint8 and yt.dtype == np.uint8 and set(ys) == set(range(10))
    own = tmp_path / "mnist.npz"
    np.savez(own, x_train=xt[:10], y_train=yt[:10], x_test=xs[:5], y_test=ys[:5])
    (a, b), (c, d) = tf.keras.datasets.mnist.load_data(path=str(own))
    assert a.shape == (10, 28, 28) and d.shape == (5,)
    bad = tmp_path / "bad.npz"
    np.savez(bad, x=np.zeros(2))
    with pytest.raises(InvalidArgumentError, match="mnist.npz"):
        tf.keras.datasets.mnist.load_data(path=str(bad))
