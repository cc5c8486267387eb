"""tf.keras.layers.Attention and AdditiveAttention (TF 1.15's dense attention layers).

Called on [query, value] or [query, value, key] (key defaults to value), query of shape
[batch, Tq, dim], value and key [batch, Tv, dim]:

    scores = query . key^T                       (Attention; times a scalar `scale` weight
                                                  with use_scale=True, initially 1)
    scores = sum(scale * tanh(query_i + key_j))  (AdditiveAttention; `scale` a [dim] weight
                                                  (glorot uniform) with use_scale=True, the
                                                  default; 1 otherwise)
    output = softmax(scores over Tv) . value     [batch, Tq, dim]

mask=[query_mask, value_mask] (booleans [batch, Tq] and [batch, Tv]; taken from the inputs'
Keras masks when not given): value positions where the mask is False get no attention
(their scores lowered by 1e9), output rows where the query mask is False are zero, and the
output carries the query mask. causal=True: query position i attends only to value
positions j <= i (decoder self-attention). TF 1.15's layers have no dropout argument.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1 import layers as _tl
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import convert_to_tensor
from xlapy.compat.v1.keras.layers import _Keras
from xlapy.compat.v1.ops import array_ops as A
from xlapy.compat.v1.ops import math_ops as M
from xlapy.compat.v1.ops.manip_ops import range_
from xlapy.compat.v1.ops.nn_ops import softmax, tanh
from xlapy.compat.v1.tensor_shape import TensorShape
from xlapy.compat.v1.variables import glorot_uniform_initializer, ones_initializer


def _causal_mask(scores):
    """[Tq, Tv] booleans: row i >= column j (static when Tq and Tv are known)."""
    dims = scores.shape.as_list()[-2:] if scores.shape.ndims is not None else [None, None]
    if None not in dims:
        tq, tv = dims
        return convert_to_tensor(np.arange(tq)[:, None] >= np.arange(tv)[None, :])
    s = A.shape(scores)
    rows = A.expand_dims(range_(s[-2]), -1)
    cols = A.expand_dims(range_(s[-1]), 0)
    return M.greater_equal(rows, cols)


class _DenseAttention(_Keras, _tl.Layer):
    """The shared part: input and mask checks, the masks, softmax and the weighted sum."""

    supports_masking = True

    def __init__(self, causal=False, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        self.causal = bool(causal)

    def _validate_call_args(self, inputs, mask):
        name = type(self).__name__
        if not isinstance(inputs, (list, tuple)):
            raise InvalidArgumentError(f"{name} layer must be called on a list of inputs, "
                                       f"namely [query, value] or [query, value, key].")
        if len(inputs) < 2 or len(inputs) > 3:
            raise InvalidArgumentError(f"{name} layer accepts inputs list of length 2 or 3, "
                                       f"namely [query, value] or [query, value, key]. Given "
                                       f"length: {len(inputs)}")
        if mask is not None:
            if not isinstance(mask, (list, tuple)):
                raise InvalidArgumentError(f"{name} layer mask must be a list, namely "
                                           f"[query_mask, value_mask].")
            if len(mask) != 2:
                raise InvalidArgumentError(f"{name} layer mask must be a list of length 2, "
                                           f"namely [query_mask, value_mask]. Given length: "
                                           f"{len(mask)}")

    def __call__(self, inputs, mask=None, **kwargs):
        self._validate_call_args(inputs, mask)
        inputs = [convert_to_tensor(x) for x in inputs]
        for x in inputs:
            if x.shape.ndims is not None and x.shape.ndims < 2:
                raise InvalidArgumentError(f"{type(self).__name__}: inputs must be of rank "
                                           f"3 ([batch, T, dim]), got shape {x.shape}")
        if mask is None:
            auto = [getattr(x, "_keras_mask", None) for x in inputs[:2]]
            mask = auto if any(m is not None for m in auto) else None
        if self._dtype is None:
            self._dtype = inputs[0].dtype
        return super().__call__(inputs, mask=mask, **kwargs)

    def _keras_propagate_mask(self, inputs, out, mask):
        pass      # (call gave the output the query's mask)

    def call(self, inputs, mask=None):
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) > 2 else v
        q_mask = v_mask = None
        if mask is not None:
            q_mask, v_mask = (None if m is None else M.cast(convert_to_tensor(m), dtypes.bool)
                              for m in mask)
        scores = self._calculate_scores(q, k)                         # [batch, Tq, Tv]
        allowed = None if v_mask is None else A.expand_dims(v_mask, -2)   # [batch, 1, Tv]
        if self.causal:
            c = _causal_mask(scores)
            allowed = c if allowed is None else M.logical_and(allowed, c)
        if allowed is not None:
            pad = M.cast(M.logical_not(allowed), scores.dtype)
            scores = scores - scores.dtype.as_numpy_dtype(1e9) * pad
        out = M.matmul(softmax(scores), v)
        if q_mask is not None:
            out = out * M.cast(A.expand_dims(q_mask, -1), out.dtype)
            out._keras_mask = q_mask
        return out

    def compute_mask(self, inputs, mask=None):
        """The query's mask (or None)."""
        self._validate_call_args(inputs, mask)
        if mask and mask[0] is not None:
            return convert_to_tensor(mask[0])
        return None

    def compute_output_shape(self, input_shape):
        q, v = TensorShape(input_shape[0]).as_list(), TensorShape(input_shape[1]).as_list()
        return TensorShape(q[:-1] + v[-1:])


class Attention(_DenseAttention):
    """Dot-product (Luong-style) attention: scores = query . key^T, times a learned scalar
    with use_scale=True."""

    def __init__(self, use_scale=False, causal=False, **kwargs):
        super().__init__(causal=causal, **kwargs)
        self.use_scale = bool(use_scale)
        self.scale = None

    def build(self, input_shape):
        if self.use_scale:
            self.scale = self.add_weight("scale", [], initializer=ones_initializer(),
                                         trainable=True)

    def _calculate_scores(self, query, key):
        scores = M.matmul(query, key, transpose_b=True)
        return scores if self.scale is None else scores * self.scale


class AdditiveAttention(_DenseAttention):
    """Additive (Bahdanau-style) attention: scores = sum over dim of
    scale * tanh(query_i + key_j), scale a learned [dim] vector with use_scale=True."""

    def __init__(self, use_scale=True, causal=False, **kwargs):
        super().__init__(causal=causal, **kwargs)
        self.use_scale = bool(use_scale)
        self.scale = None

    def build(self, input_shape):
        v = input_shape[1]
        dim = v.as_list()[-1] if v.ndims is not None else None
        if self.use_scale:
            if dim is None:
                raise InvalidArgumentError("AdditiveAttention: the last dimension of value "
                                           "must be known to make the scale weight")
            self.scale = self.add_weight("scale", [dim],
                                         initializer=glorot_uniform_initializer(),
                                         trainable=True)

    def _calculate_scores(self, query, key):
        s = tanh(A.expand_dims(query, -2) + A.expand_dims(key, -3))   # [batch, Tq, Tv, dim]
        if self.scale is not None:
            s = s * self.scale
        return M.reduce_sum(s, axis=-1)
