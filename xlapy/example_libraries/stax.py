"""stax: layers as (init_fun, apply_fun) pairs, as jax.example_libraries.stax.

  init_fun(rng, input_shape) -> (output_shape, params)
  apply_fun(params, inputs, **kwargs) -> outputs        (kwargs: rng for Dropout)

Layers: Dense, GeneralConv / Conv / Conv1DTranspose / ConvTranspose / GeneralConvTranspose,
BatchNorm, elementwise (Tanh, Relu, Exp, LogSoftmax, Softmax, Softplus, Sigmoid, Elu,
LeakyRelu, Selu, Gelu), MaxPool, SumPool, AvgPool, Flatten, Identity, FanOut, FanInSum,
FanInConcat, Dropout; combinators serial, parallel, shape_dependent. Parameters are drawn
as JAX draws them (the same keys, split in the same order, and JAX's initializers), so a
model initialized with the same key starts from the same numbers.
"""

from __future__ import annotations

import functools
import math

import numpy as np

import xlapy.numpy as xnp
import xlapy.random as random
from xlapy import lax
from xlapy.lax import ops as _lax_ops
from xlapy.nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                      softplus, standardize)
from xlapy.nn.initializers import glorot_normal, normal, ones, zeros

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

# default initializers (module-level, as JAX's call-in-the-default-argument)
_GLOROT_NORMAL, _NORMAL, _NORMAL_1E_6 = glorot_normal(), normal(), normal(1e-6)


def Dense(out_dim, W_init=_GLOROT_NORMAL, b_init=_NORMAL):
    """A fully connected layer: inputs @ W + b."""
    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return xnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _conv_out_shape(input_shape, kernel_shape, strides, padding, dimension_numbers,
                    transpose=False):
    """The output shape of a (transposed) convolution: spatial dimensions are matched by
    their letter in the three specs and taken in the kernel spec's order (as strides and
    padding pairs are)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    letters = [c for c in rhs_spec if c not in "IO"]
    in_sizes = [input_shape[lhs_spec.index(c)] for c in letters]
    k_sizes = [kernel_shape[rhs_spec.index(c)] for c in letters]
    if transpose:
        pads = ([_lax_ops._conv_transpose_padding(k, s, padding.upper())
                 for k, s in zip(k_sizes, strides)] if isinstance(padding, str) else padding)
        sizes = [(n - 1) * s + 1 + lo + hi - k + 1
                 for n, k, s, (lo, hi) in zip(in_sizes, k_sizes, strides, pads)]
    else:
        pads = (lax.padtype_to_pads(in_sizes, k_sizes, strides, padding)
                if isinstance(padding, str) else padding)
        sizes = [(n + lo + hi - k) // s + 1
                 for n, k, s, (lo, hi) in zip(in_sizes, k_sizes, strides, pads)]
    out = dict(zip(letters, sizes))
    out["N"] = input_shape[lhs_spec.index("N")]
    out["C"] = kernel_shape[rhs_spec.index("O")]
    return tuple(out[c] for c in out_spec)


def _general_conv(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                  b_init, transpose: bool):
    """(init_fun, apply_fun) of a convolution layer, transposed or not."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        it = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                        if c == "I" else next(it) for c in rhs_spec]
        output_shape = _conv_out_shape(input_shape, kernel_shape, strides, padding,
                                       dimension_numbers, transpose=transpose)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        if transpose:
            out = lax.conv_transpose(inputs, W, strides, padding,
                                     dimension_numbers=dimension_numbers)
        else:
            out = lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                           dimension_numbers=dimension_numbers)
        return out + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=_NORMAL_1E_6):
    """A convolution with the given dimension numbers (lhs, rhs, out specs)."""
    return _general_conv(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                         b_init, transpose=False)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=_NORMAL_1E_6):
    """A transposed convolution with the given dimension numbers."""
    return _general_conv(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                         b_init, transpose=True)


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Normalization over `axis` with the batch's statistics, then gamma * z + beta."""
    axis = (axis,) if xnp.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(xnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A layer applying fun to its input (no parameters)."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(xnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(xnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        window_shape = tuple(window_shape)
        strides = tuple(strides or (1,) * len(window_shape))
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial = (0, len(window_shape) + 1) if spec is None else \
            (spec.index("N"), spec.index("C"))
        dims, full_strides = window_shape, strides
        for i in sorted(non_spatial):
            dims = dims[:i] + (1,) + dims[i:]
            full_strides = full_strides[:i] + (1,) + full_strides[i:]

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, dims, full_strides, padding)
            out = tuple((n + lo + hi - k) // s + 1
                        for n, k, s, (lo, hi) in zip(input_shape, dims, full_strides, pads))
            return out, ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, dims, full_strides, padding)
            return rescale(out, inputs, spec) if rescale else out
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -np.inf)
SumPool = _pooling_layer(lax.add, 0.0)


def _normalize_by_window_size(dims, strides, padding):
    def rescale(outputs, inputs, spec):
        nd = xnp.ndim(inputs)
        non_spatial = (0, nd - 1) if spec is None else (spec.index("N"), spec.index("C"))
        spatial = tuple(xnp.shape(inputs)[i] for i in range(nd) if i not in non_spatial)
        one = xnp.ones(spatial, dtype=inputs.dtype)
        sizes = lax.reduce_window(one, 0.0, lax.add, dims, strides, padding)
        for i in sorted(non_spatial):
            sizes = xnp.expand_dims(sizes, i)
        return outputs / sizes
    return rescale


AvgPool = _pooling_layer(lax.add, 0.0, _normalize_by_window_size)


def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return xnp.reshape(inputs, (xnp.shape(inputs)[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()


def _identity():
    return (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: inputs)


Identity = _identity()


def FanOut(num):
    """num copies of the input (a list)."""
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


def _fan_in_sum():
    return (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: sum(inputs[1:], inputs[0]))


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):
    """The inputs concatenated along axis."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(s[ax] for s in input_shape)
        return tuple(input_shape[0][:ax]) + (size,) + tuple(input_shape[0][ax + 1:]), ()

    def apply_fun(params, inputs, **kwargs):
        return xnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Keeps each input with probability `rate` (scaled by 1/rate) in 'train' mode; needs
    apply_fun(params, inputs, rng=key)."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                             "argument: apply_fun(params, inputs, rng=key)")
        if mode == "train":
            keep = random.bernoulli(rng, rate, xnp.shape(inputs))
            return xnp.where(keep, inputs / rate, 0)
        return inputs
    return init_fun, apply_fun


def _layer_rngs(kwargs: dict, n: int):
    """n keys split from the `rng` keyword (taken out of kwargs), or n Nones without one."""
    rng = kwargs.pop("rng", None)
    return random.split(rng, n) if rng is not None else (None,) * n


def serial(*layers):
    """Layers applied one after another."""
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_rngs(kwargs, len(layers))
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Layers applied to the corresponding inputs of a sequence."""
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(layers))
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_rngs(kwargs, len(layers))
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built from the input's shape."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(xnp.shape(inputs))[1](params, inputs, **kwargs)
    return init_fun, apply_fun
