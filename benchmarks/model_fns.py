"""The model-class workloads of issue 17, written once over a (numpy, lax, grad) triple so
that the same code runs under xlapy (xlapy.numpy, xlapy.lax, xlapy.grad) and JAX.

Each model has a parameter builder, an input builder, a loss (for the training step: the
gradient of the loss with respect to every parameter and an SGD update) and an inference
function (the forward pass alone):

  cnn        the TF "deep MNIST" CNN: conv 5x5x32, max-pool, conv 5x5x64, max-pool,
             dense 3136x1024, dense 1024x10, batch 50 (NHWC / HWIO)
  resnet     a ResNet basic block: two 3x3x64 convs with batch norm and relu, residual add,
             16x32x32x64 (training: batch statistics; inference: folded running statistics)
  attention  an attention block: layernorm, 4 heads, sequence 256, width 256, batch 4,
             Q/K/V/output projections, residual add
  mobilenet  a MobileNet depthwise-separable block: depthwise 3x3 over 64 channels, batch
             norm, relu6, pointwise 1x1 to 128, batch norm, relu6, 8x56x56
  lstm       a 3-deep, 60-wide stacked LSTM over 50 steps (lax.scan), batch 8
"""

from __future__ import annotations

import numpy as np

f32 = np.float32
DN = ("NHWC", "HWIO", "NHWC")


def _normal(rng, shape, scale):
    return (rng.standard_normal(shape) * scale).astype(f32)


# ---- parameters and inputs -------------------------------------------------------------

def cnn_params(rng):
    return [_normal(rng, (5, 5, 1, 32), 0.1), np.full(32, 0.1, f32),
            _normal(rng, (5, 5, 32, 64), 0.05), np.full(64, 0.1, f32),
            _normal(rng, (3136, 1024), 0.02), np.full(1024, 0.1, f32),
            _normal(rng, (1024, 10), 0.03), np.zeros(10, f32)]


def cnn_inputs(rng):
    x = rng.random((50, 28, 28, 1)).astype(f32)
    y = np.zeros((50, 10), f32)
    y[np.arange(50), rng.integers(0, 10, 50)] = 1
    return [x, y]


def resnet_params(rng):
    return [_normal(rng, (3, 3, 64, 64), 0.06), np.ones(64, f32), np.zeros(64, f32),
            _normal(rng, (3, 3, 64, 64), 0.06), np.ones(64, f32), np.zeros(64, f32)]


def resnet_inputs(rng):
    return [rng.standard_normal((16, 32, 32, 64)).astype(f32),
            rng.standard_normal((16, 32, 32, 64)).astype(f32)]


def attention_params(rng, width=256):
    s = 1 / np.sqrt(width)
    return [np.ones(width, f32), np.zeros(width, f32)] + \
        [_normal(rng, (width, width), s) for _ in range(4)]


def attention_inputs(rng):
    return [rng.standard_normal((4, 256, 256)).astype(f32),
            rng.standard_normal((4, 256, 256)).astype(f32)]


def mobilenet_params(rng):
    return [_normal(rng, (3, 3, 1, 64), 0.3), np.ones(64, f32), np.zeros(64, f32),
            _normal(rng, (1, 1, 64, 128), 0.1), np.ones(128, f32), np.zeros(128, f32)]


def mobilenet_inputs(rng):
    return [rng.standard_normal((8, 56, 56, 64)).astype(f32),
            rng.standard_normal((8, 56, 56, 128)).astype(f32)]


LSTM_WIDTH, LSTM_DEPTH, LSTM_STEPS, LSTM_BATCH = 60, 3, 50, 8


def lstm_params(rng):
    h = LSTM_WIDTH
    out = []
    for _ in range(LSTM_DEPTH):
        out += [_normal(rng, (h, 4 * h), 1 / np.sqrt(h)), _normal(rng, (h, 4 * h), 1 / np.sqrt(h)),
                np.zeros(4 * h, f32)]
    return out


def lstm_inputs(rng):
    return [rng.standard_normal((LSTM_STEPS, LSTM_BATCH, LSTM_WIDTH)).astype(f32),
            rng.standard_normal((LSTM_BATCH, LSTM_WIDTH)).astype(f32)]


# ---- the models over a numpy-like module -------------------------------------------------

def models(xnp, lax):
    """{name: (loss(params, inputs), infer(params, inputs))} over xnp / lax."""

    def conv(x, w, stride=1, groups=1):
        return lax.conv_general_dilated(x, w, (stride, stride), "SAME", dimension_numbers=DN,
                                        feature_group_count=groups)

    def max_pool(x):
        return lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")

    def xent(logits, labels):
        m = xnp.max(logits, -1, keepdims=True)
        shifted = logits - m
        lse = xnp.log(xnp.sum(xnp.exp(shifted), -1, keepdims=True))
        return -xnp.mean(xnp.sum(labels * (shifted - lse), -1))

    def batch_norm(x, g, b):
        mu = xnp.mean(x, (0, 1, 2))
        var = xnp.mean(xnp.square(x - mu), (0, 1, 2))
        return (x - mu) * (g / xnp.sqrt(var + 1e-5)) + b

    def relu(x):
        return xnp.maximum(x, 0.0)

    def relu6(x):
        return xnp.minimum(xnp.maximum(x, 0.0), 6.0)

    # deep MNIST
    def cnn_logits(p, x):
        w1, b1, w2, b2, w3, b3, w4, b4 = p
        h = max_pool(relu(conv(x, w1) + b1))
        h = max_pool(relu(conv(h, w2) + b2))
        h = relu(xnp.reshape(h, (h.shape[0], 3136)) @ w3 + b3)
        return h @ w4 + b4

    def cnn_loss(p, inp):
        return xent(cnn_logits(p, inp[0]), inp[1])

    def cnn_infer(p, inp):
        return cnn_logits(p, inp[0])

    # ResNet basic block
    def resnet_block(p, x, norm):
        w1, g1, b1, w2, g2, b2 = p
        h = relu(norm(conv(x, w1), g1, b1))
        return relu(norm(conv(h, w2), g2, b2) + x)

    def resnet_loss(p, inp):
        return xnp.mean(xnp.square(resnet_block(p, inp[0], batch_norm) - inp[1]))

    def folded(x, g, b):  # inference: running statistics folded into scale and shift
        return x * g + b

    def resnet_infer(p, inp):
        return resnet_block(p, inp[0], folded)

    # attention block
    def layernorm(x, g, b):
        mu = xnp.mean(x, -1, keepdims=True)
        var = xnp.mean(xnp.square(x - mu), -1, keepdims=True)
        return (x - mu) / xnp.sqrt(var + 1e-5) * g + b

    def attention(p, x, heads=4):
        g, b, wq, wk, wv, wo = p
        bsz, seq, width = x.shape
        dh = width // heads
        h = layernorm(x, g, b)

        def split(t):
            return xnp.transpose(xnp.reshape(t, (bsz, seq, heads, dh)), (0, 2, 1, 3))
        q, k, v = split(h @ wq), split(h @ wk), split(h @ wv)
        s = xnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(dh).astype(f32)
        s = s - xnp.max(s, -1, keepdims=True)
        e = xnp.exp(s)
        a = e / xnp.sum(e, -1, keepdims=True)
        o = xnp.einsum("bhqk,bhkd->bhqd", a, v)
        o = xnp.reshape(xnp.transpose(o, (0, 2, 1, 3)), (bsz, seq, width))
        return x + o @ wo

    def attention_loss(p, inp):
        return xnp.mean(xnp.square(attention(p, inp[0]) - inp[1]))

    def attention_infer(p, inp):
        return attention(p, inp[0])

    # MobileNet depthwise-separable block
    def mobilenet_block(p, x, norm):
        wd, g1, b1, wp, g2, b2 = p
        h = relu6(norm(conv(x, wd, groups=x.shape[-1]), g1, b1))
        return relu6(norm(conv(h, wp), g2, b2))

    def mobilenet_loss(p, inp):
        return xnp.mean(xnp.square(mobilenet_block(p, inp[0], batch_norm) - inp[1]))

    def mobilenet_infer(p, inp):
        return mobilenet_block(p, inp[0], folded)

    # stacked LSTM
    def sigmoid(x):
        return 1.0 / (1.0 + xnp.exp(-x))

    def lstm_cell(p, h, c, x):
        wx, wh, bias = p
        z = x @ wx + h @ wh + bias
        i, f, g, o = (z[:, k * LSTM_WIDTH:(k + 1) * LSTM_WIDTH] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * xnp.tanh(g)
        return sigmoid(o) * xnp.tanh(c), c

    def lstm(p, xs, h0):
        return stacked_scan(lax, lstm_cell, p, LSTM_DEPTH, xs, h0)

    def lstm_loss(p, inp):
        h, ys = lstm(p, inp[0], inp[1])
        return xnp.mean(xnp.square(h)) + xnp.mean(ys)

    def lstm_infer(p, inp):
        return lstm(p, inp[0], inp[1])[0]

    return {"cnn": (cnn_loss, cnn_infer), "resnet": (resnet_loss, resnet_infer),
            "attention": (attention_loss, attention_infer),
            "mobilenet": (mobilenet_loss, mobilenet_infer), "lstm": (lstm_loss, lstm_infer)}


BUILDERS = {"cnn": (cnn_params, cnn_inputs), "resnet": (resnet_params, resnet_inputs),
            "attention": (attention_params, attention_inputs),
            "mobilenet": (mobilenet_params, mobilenet_inputs), "lstm": (lstm_params, lstm_inputs)}

TITLES = {
    "cnn": "CNN deep-MNIST b50",
    "resnet": "ResNet basic block 16x32x32x64",
    "attention": "attention 4 heads 4x256x256",
    "mobilenet": "MobileNet dw-separable 8x56x56x64",
    "lstm": "LSTM 3x60 50 steps b8",
}


def stacked_scan(lax, cell, params, layers: int, xs, h0):
    """`layers` recurrent cells stacked, run over the sequence xs by one lax.scan.
    cell(p, h, c, x) -> (h, c) with p a layer's (wx, wh, bias) taken in turn from the flat
    list params; every layer starts at h0 (its c at zero) and feeds its h to the next.
    Returns (the last layer's final h, its h at every step)."""
    ps = [tuple(params[3 * k:3 * k + 3]) for k in range(layers)]

    def body(carry, x):
        hs, cs = carry
        new_h, new_c = [], []
        inp = x
        for pk, h, c in zip(ps, hs, cs):
            h, c = cell(pk, h, c, inp)
            new_h.append(h)
            new_c.append(c)
            inp = h
        return (tuple(new_h), tuple(new_c)), inp

    init = (tuple(h0 for _ in range(layers)), tuple(h0 * 0.0 for _ in range(layers)))
    (hs, _), ys = lax.scan(body, init, xs)
    return hs[-1], ys


def train_step(grad, loss, lr=0.01):
    """params, inputs -> new params (one SGD step)."""
    def step(params, inputs):
        gs = grad(loss)(params, inputs)
        return [p - lr * g for p, g in zip(params, gs)]
    return step


def data(name, seed=0):
    rng = np.random.default_rng(seed)
    make_p, make_x = BUILDERS[name]
    return make_p(rng), make_x(rng)
