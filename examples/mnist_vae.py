"""A variational autoencoder on MNIST in the JAX style: stax encoder and decoder, random
sampling inside jit (the reparameterization trick and the binarization of each batch),
an optimizers.momentum loop whose epoch is one jitted lax.fori_loop.

    .venv/bin/python examples/mnist_vae.py [--epochs 50] [--hidden 512] [--latent 10]

As JAX's example (jax/examples/mnist_vae.py): the encoder maps an image to the mean and
log-variance of a diagonal Gaussian, a latent sample z = mu + sigma * eps with
eps ~ random.normal, the decoder gives Bernoulli logits; the loss is the negative ELBO
(Bernoulli log-likelihood of the binarized image minus the KL divergence to N(0, I)).
Each epoch's batches, noise and binarization come from random.fold_in(key, i) inside the
compiled loop. Prints the test ELBO after every epoch.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import xlapy.numpy as jnp
from xlapy import grad, jit, lax, random
from xlapy.example_libraries import optimizers, stax
from xlapy.example_libraries.stax import Dense, FanOut, Relu, Softplus

try:
    import datasets
except ImportError:
    from examples import datasets


def gaussian_kl(mu, sigmasq):
    """KL divergence from a diagonal Gaussian to the standard Gaussian."""
    return -0.5 * jnp.sum(1. + jnp.log(sigmasq) - mu ** 2. - sigmasq)


def gaussian_sample(rng, mu, sigmasq):
    """Sample a diagonal Gaussian."""
    return mu + jnp.sqrt(sigmasq) * random.normal(rng, mu.shape)


def bernoulli_logpdf(logits, x):
    """Bernoulli log pdf of data x given logits."""
    return -jnp.sum(jnp.logaddexp(0., jnp.where(x, -1., 1.) * logits))


def image_sample(rng, params, nrow, ncol, decode, latent):
    """Sample images from the generative model."""
    code_rng, img_rng = random.split(rng)
    logits = decode(params, random.normal(code_rng, (nrow * ncol, latent)))
    sampled_images = random.bernoulli(img_rng, jnp.logaddexp(0., logits))
    return sampled_images.reshape(nrow, ncol, 28, 28)


def main(epochs=50, hidden=512, latent=10, batch_size=32, nrow=10, ncol=10,
         step_size=0.001, seed=0, data=None, log=print):
    encoder_init, encode = stax.serial(
        Dense(hidden), Relu, Dense(hidden), Relu,
        FanOut(2), stax.parallel(Dense(latent), stax.serial(Dense(latent), Softplus)))
    decoder_init, decode = stax.serial(
        Dense(hidden), Relu, Dense(hidden), Relu, Dense(28 * 28))

    def elbo(rng, params, images):
        """Monte Carlo estimate of the negative evidence lower bound."""
        enc_params, dec_params = params
        mu_z, sigmasq_z = encode(enc_params, images)
        logits_x = decode(dec_params, gaussian_sample(rng, mu_z, sigmasq_z))
        return bernoulli_logpdf(logits_x, images) - gaussian_kl(mu_z, sigmasq_z)

    train_images, _, test_images, _ = data or datasets.mnist()
    num_complete_batches, leftover = divmod(train_images.shape[0], batch_size)
    num_batches = num_complete_batches + bool(leftover)

    enc_init_rng, dec_init_rng = random.split(random.PRNGKey(seed + 2))
    _, init_encoder_params = encoder_init(enc_init_rng, (batch_size, 28 * 28))
    _, init_decoder_params = decoder_init(dec_init_rng, (batch_size, latent))
    init_params = init_encoder_params, init_decoder_params

    opt_init, opt_update, get_params = optimizers.momentum(step_size, mass=0.9)
    train_images = np.asarray(train_images)
    test_images = np.asarray(test_images)

    def binarize_batch(rng, i, images):
        i = i % num_batches
        batch = lax.dynamic_slice_in_dim(images, i * batch_size, batch_size)
        return random.bernoulli(rng, batch)

    @jit
    def run_epoch(rng, opt_state, images):
        def body_fun(i, opt_state):
            elbo_rng, data_rng = random.split(random.fold_in(rng, i))
            batch = binarize_batch(data_rng, i, images)
            loss = lambda params: -elbo(elbo_rng, params, batch) / batch_size
            g = grad(loss)(get_params(opt_state))
            return opt_update(i, g, opt_state)
        return lax.fori_loop(0, num_batches, body_fun, opt_state)

    @jit
    def evaluate(opt_state, images):
        params = get_params(opt_state)
        elbo_rng, data_rng, image_rng = random.split(test_rng, 3)
        binarized_test = random.bernoulli(data_rng, images)
        test_elbo = elbo(elbo_rng, params, binarized_test) / images.shape[0]
        sampled_images = image_sample(image_rng, params[1], nrow, ncol, decode, latent)
        return test_elbo, sampled_images

    test_rng = random.PRNGKey(seed + 1)
    opt_state = opt_init(init_params)
    history = []
    for epoch in range(epochs):
        start = time.time()
        opt_state = run_epoch(random.PRNGKey(seed + 3 + epoch), opt_state, train_images)
        test_elbo, sampled = evaluate(opt_state, test_images)
        history.append(float(test_elbo))
        log(f"{epoch: 3d} {float(test_elbo):.3f} ({time.time() - start:.3f} sec)")
    return history, np.asarray(sampled)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--latent", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    main(a.epochs, a.hidden, a.latent, seed=a.seed)
