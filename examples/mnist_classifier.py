"""An MNIST classifier in the JAX style: stax layers, an optimizers.momentum training loop
under jit, xlapy.random for the initial parameters and the batches.

    .venv/bin/python examples/mnist_classifier.py [--epochs 10] [--hidden 1024]

The program is JAX's example (jax/examples/mnist_classifier.py) as a JAX user writes it,
with `jax` spelled `xlapy`: a 784-1024-1024-10 network with ReLUs and log-softmax,
cross-entropy loss, momentum 0.9, batches of 128 drawn by random.permutation each epoch.
Prints the train and test accuracy after every epoch.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

import xlapy
import xlapy.numpy as jnp
from xlapy import grad, jit, random
from xlapy.example_libraries import optimizers, stax
from xlapy.example_libraries.stax import Dense, LogSoftmax, Relu

try:
    import datasets
except ImportError:  # run from elsewhere (the tests import this file as a module)
    from examples import datasets


def loss(predict, params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(predict, params, batch):
    inputs, targets = batch
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(predict(params, inputs), axis=1)
    return float(jnp.mean(predicted_class == target_class))


def main(epochs=10, hidden=1024, batch_size=128, step_size=0.001, momentum_mass=0.9,
         seed=0, data=None, log=print):
    init_random_params, predict = stax.serial(
        Dense(hidden), Relu, Dense(hidden), Relu, Dense(10), LogSoftmax)
    train_images, train_labels, test_images, test_labels = data or datasets.mnist()
    num_train = train_images.shape[0]
    num_complete_batches, leftover = divmod(num_train, batch_size)
    num_batches = num_complete_batches + bool(leftover)

    key = random.PRNGKey(seed)
    key, init_key = random.split(key)

    def data_stream(key):
        while True:
            key, perm_key = random.split(key)
            perm = np.asarray(random.permutation(perm_key, num_train))
            for i in range(num_batches):
                batch_idx = perm[i * batch_size:(i + 1) * batch_size]
                yield train_images[batch_idx], train_labels[batch_idx]

    batches = data_stream(key)
    opt_init, opt_update, get_params = optimizers.momentum(step_size, mass=momentum_mass)

    @jit
    def update(i, opt_state, batch):
        params = get_params(opt_state)
        return opt_update(i, grad(lambda p, b: loss(predict, p, b))(params, batch), opt_state)

    _, init_params = init_random_params(init_key, (-1, 28 * 28))
    opt_state = opt_init(init_params)
    itercount = itertools.count()
    history = []
    log("Starting training...")
    for epoch in range(epochs):
        start = time.time()
        for _ in range(num_batches):
            opt_state = update(np.int32(next(itercount)), opt_state, next(batches))
        epoch_time = time.time() - start
        params = get_params(opt_state)
        train_acc = accuracy(predict, params, (train_images, train_labels))
        test_acc = accuracy(predict, params, (test_images, test_labels))
        history.append((train_acc, test_acc))
        log(f"Epoch {epoch} in {epoch_time:0.2f} sec")
        log(f"Training set accuracy {train_acc}")
        log(f"Test set accuracy {test_acc}")
    return history


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(f"xlapy {xlapy.__version__}")
    main(a.epochs, a.hidden, a.batch_size, seed=a.seed)
