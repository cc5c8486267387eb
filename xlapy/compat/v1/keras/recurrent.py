"""tf.keras recurrent and embedding layers (TF 1.x graph mode): Embedding, SimpleRNN, LSTM,
GRU, and the Bidirectional and TimeDistributed wrappers.

The weights are Keras' (kernel [input_dim, gates*units], recurrent_kernel [units,
gates*units], bias [gates*units]; LSTM gates i, f, c, o; GRU gates z, r, h, and with
reset_after=True a [2, 3*units] bias: input bias then recurrent bias), so get_weights /
set_weights exchange weights with real Keras. The defaults are TF 1.x Keras' (the v1
tf.keras.layers.LSTM/GRU): recurrent_activation='hard_sigmoid', GRU reset_after=False,
unit_forget_bias=True.

The input projection x . kernel (+ bias) is one matmul over all time steps before the
loop; the time loop is one graph while loop (control_flow_ops.build_while, as dynamic_rnn)
carrying the states, so with XLA on the whole training step (forward loop, backward loop,
optimizer) compiles into one cluster. dropout / recurrent_dropout draw one mask per gate,
the same at every step (as Keras' implementation=1), only while the learning phase is True.
Embedding(mask_zero=True) puts a mask on its output: the RNN layers carry the state (and
output) through masked steps as Keras does; a layer that does not support masking raises.
stateful=True is not supported (an error); unroll=True is accepted and still loops.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import layers as _tl
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.keras import activations
from xlapy.compat.v1.keras.layers import _initializer, _Keras
from xlapy.compat.v1.tensor_shape import TensorShape
from xlapy.compat.v1.variables import Initializer


class _UnitForgetBias(Initializer):
    """bias_initializer for the i gate, ones for f, bias_initializer for c and o."""

    def __init__(self, base, units):
        super().__init__()
        self.base, self.units = base, units

    def __call__(self, shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.ops.array_ops import concat, ones
        n = self.units
        dt = dtype or self.dtype
        return concat([self.base([n], dt), ones([n], dt), self.base([2 * n], dt)], 0)


def _keras_mask(x):
    return getattr(x, "_keras_mask", None)


class Embedding(_Keras, _tl.Layer):
    """Rows of an [input_dim, output_dim] embeddings matrix for integer ids (given as any
    numeric dtype: Sequential models feed float placeholders, cast to int32)."""

    supports_masking = True

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, activity_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, input_length=None, **kwargs):
        if "input_shape" not in kwargs and "batch_input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,)
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        if int(input_dim) <= 0 or int(output_dim) <= 0:
            raise InvalidArgumentError(f"Both input_dim and output_dim should be positive, "
                                       f"found input_dim {input_dim} and output_dim "
                                       f"{output_dim}")
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = _initializer(embeddings_initializer)
        self.embeddings_regularizer = embeddings_regularizer
        self.mask_zero = bool(mask_zero)
        self.input_length = input_length

    def build(self, input_shape):
        from xlapy.compat.v1 import dtypes
        self.embeddings = self.add_weight("embeddings", [self.input_dim, self.output_dim],
                                          dtype=dtypes.float32,
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer)

    def call(self, inputs):
        from xlapy.compat.v1 import dtypes
        from xlapy.compat.v1.ops.embedding_ops import embedding_lookup
        from xlapy.compat.v1.ops.math_ops import cast, not_equal
        ids = inputs if inputs.dtype in (dtypes.int32, dtypes.int64) else \
            cast(inputs, dtypes.int32)
        out = embedding_lookup(self.embeddings, ids)
        if inputs.shape.ndims is not None:
            out.set_shape(inputs.shape.concatenate(TensorShape([self.output_dim])))
        if self.mask_zero:
            out._keras_mask = not_equal(ids, 0)
        return out

    def _keras_propagate_mask(self, inputs, out, mask):
        pass   # (call made the mask)


def _act(name_or_fn, what):
    f = activations.get(name_or_fn)
    return (lambda x: x) if f is None else f


class _RNN(_Keras, _tl.Layer):
    """The shared recurrent layer: subclasses give the gate count, the state count and the
    step (inputs already projected by the kernel)."""

    GATES = 1
    supports_masking = True

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, dropout=0.0, recurrent_dropout=0.0,
                 return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, reset_after=False, implementation=1,
                 **kwargs):
        self._config = dict(units=units, activation=activation,
                            recurrent_activation=recurrent_activation, use_bias=use_bias,
                            kernel_initializer=kernel_initializer,
                            recurrent_initializer=recurrent_initializer,
                            bias_initializer=bias_initializer,
                            unit_forget_bias=unit_forget_bias,
                            kernel_regularizer=kernel_regularizer,
                            recurrent_regularizer=recurrent_regularizer,
                            bias_regularizer=bias_regularizer, dropout=dropout,
                            recurrent_dropout=recurrent_dropout,
                            return_sequences=return_sequences, return_state=return_state,
                            go_backwards=go_backwards, reset_after=reset_after)
        kwargs = self._keras_input(kwargs)
        for k in ("recurrent_constraint",):
            kwargs.pop(k, None)
        super().__init__(**kwargs)
        if stateful:
            raise UnimplementedError(f"{type(self).__name__}(stateful=True) is not supported "
                                     "by xlapy's Keras")
        if int(units) <= 0:
            raise InvalidArgumentError(f"units of {type(self).__name__} must be a positive "
                                       f"integer, got {units!r}")
        for name, rate in (("dropout", dropout), ("recurrent_dropout", recurrent_dropout)):
            if not 0.0 <= float(rate) < 1.0:
                raise InvalidArgumentError(f"{name} must be in [0, 1), got {rate!r}")
        self.units = int(units)
        self.activation = _act(activation, "activation")
        self.recurrent_activation = _act(recurrent_activation, "recurrent_activation")
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _initializer(kernel_initializer)
        self.recurrent_initializer = _initializer(recurrent_initializer)
        self.bias_initializer = _initializer(bias_initializer)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.kernel_regularizer = kernel_regularizer
        self.recurrent_regularizer = recurrent_regularizer
        self.bias_regularizer = bias_regularizer
        self.dropout = float(dropout)
        self.recurrent_dropout = float(recurrent_dropout)
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.reset_after = bool(reset_after)

    n_states = 1

    @property
    def state_size(self):
        return [self.units] * self.n_states

    def _bias_shape(self):
        return [self.GATES * self.units]

    def _bias_init(self):
        return self.bias_initializer

    def build(self, input_shape):
        if input_shape.ndims != 3:
            raise InvalidArgumentError(
                f"Input 0 of layer {self.name} is incompatible with the layer: expected "
                f"ndim=3, found ndim={input_shape.ndims}. Full shape received: "
                f"{input_shape}")
        d = _tl.base.last_dim(input_shape, type(self).__name__)
        n = self.GATES * self.units
        self.kernel = self.add_weight("kernel", [d, n], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", [self.units, n],
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer)
        self.bias = self.add_weight("bias", self._bias_shape(), initializer=self._bias_init(),
                                    regularizer=self.bias_regularizer) \
            if self.use_bias else None

    # ---- pieces --------------------------------------------------------------------------------
    def _dropout_masks(self, like, rate, count):
        """`count` [batch, depth] masks of 0 or 1/(1-rate) while training (the call's
        training argument, else the learning phase), ones otherwise."""
        from xlapy.compat.v1 import dtypes
        from xlapy.compat.v1.framework import convert_to_tensor
        from xlapy.compat.v1.keras.backend import learning_phase
        from xlapy.compat.v1.ops.array_ops import ones_like
        from xlapy.compat.v1.ops.math_ops import cast
        from xlapy.compat.v1.ops.nn_ops import dropout
        ones = ones_like(like)
        training = learning_phase() if self._training is None else \
            convert_to_tensor(self._training)
        keep = 1.0 - rate * cast(training, dtypes.float32)
        return [dropout(ones, keep_prob=keep) for _ in range(count)]

    def _input_projection(self, x):
        """x [batch, time, depth] . kernel (+ the input bias): [batch, time, gates*units]."""
        from xlapy.compat.v1.ops.array_ops import concat, expand_dims
        from xlapy.compat.v1.ops.manip_ops import split, tensordot
        from xlapy.compat.v1.ops.math_ops import multiply
        from xlapy.compat.v1.ops.nn_ops import bias_add
        if self.dropout > 0:
            masks = self._dropout_masks(x[:, 0, :], self.dropout, self.GATES)
            kernels = split(self.kernel, self.GATES, axis=1) if self.GATES > 1 else \
                [self.kernel]
            xw = concat([tensordot(multiply(x, expand_dims(m, 1)), k, [[2], [0]])
                         for m, k in zip(masks, kernels)], 2)
        else:
            xw = tensordot(x, self.kernel, [[2], [0]])
        if self.bias is not None:
            b = self.bias[0] if self.reset_after else self.bias
            xw = bias_add(xw, b)
        return xw

    def _zeros_state(self, x):
        from xlapy.compat.v1.ops.array_ops import fill, shape, stack
        return fill(stack([shape(x)[0], self.units]), np.float32(0))

    # ---- the layer -----------------------------------------------------------------------------
    def call(self, inputs, mask=None, training=None, initial_state=None):
        from xlapy.compat.v1.framework import convert_to_tensor
        from xlapy.compat.v1.ops.array_ops import expand_dims, transpose
        from xlapy.compat.v1.ops.control_flow_ops import build_while
        from xlapy.compat.v1.ops.index_ops import where
        from xlapy.compat.v1.ops.manip_ops import reverse
        x = inputs
        self._training = training
        mask = mask if mask is not None else _keras_mask(inputs)
        steps = x.shape.dims[1]
        batch = x.shape.dims[0]
        xw = transpose(self._input_projection(x), [1, 0, 2])       # time-major
        xs = [xw]
        if mask is not None:
            xs.append(transpose(convert_to_tensor(mask), [1, 0]))
        if self.go_backwards:
            xs = [reverse(t, [0]) for t in xs]
        if initial_state is not None:
            states = [convert_to_tensor(s) for s in (
                initial_state if isinstance(initial_state, (list, tuple)) else [initial_state])]
            if len(states) != self.n_states:
                raise InvalidArgumentError(f"Layer {self.name} expects {self.n_states} "
                                           f"initial state(s), but it received "
                                           f"{len(states)} initial state(s).")
        else:
            states = [self._zeros_state(x) for _ in range(self.n_states)]
        rec_masks = self._dropout_masks(states[0], self.recurrent_dropout, self.GATES) \
            if self.recurrent_dropout > 0 else None
        extra = self._loop_constants()

        def body(t, carry, rows):
            new = self._step(rows[0], list(carry), rec_masks, extra)
            if mask is not None:
                keep = expand_dims(rows[1], 1)
                new = [where(keep, n, c) for n, c in zip(new, carry)]
            return new, [new[0]]

        n_steps = steps if steps is not None else None
        if n_steps is None:
            from xlapy.compat.v1.ops.array_ops import shape
            n_steps = shape(xw)[0]
        _, final, ys = build_while(states, xs, n_steps, body, name="while")
        seq = transpose(ys[0], [1, 0, 2])
        seq.set_shape(TensorShape([batch, steps, self.units]))
        for s in final:
            s.set_shape(TensorShape([batch, self.units]))
        out = seq if self.return_sequences else final[0]
        if self.return_sequences and mask is not None:
            out._keras_mask = mask
        if self.return_state:
            return [out] + list(final)
        return out

    def _keras_propagate_mask(self, inputs, out, mask):
        pass   # (call decides)

    def _loop_constants(self):
        return None

    def _step(self, xw_t, states, rec_masks, extra):
        raise NotImplementedError


def _mul(a, b):
    from xlapy.compat.v1.ops.math_ops import multiply
    return a if b is None else multiply(a, b)


class SimpleRNN(_RNN):
    """h_t = activation(x_t . kernel + bias + h_{t-1} . recurrent_kernel)."""

    GATES = 1

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", **kwargs):
        kwargs.pop("unit_forget_bias", None)
        kwargs.pop("recurrent_activation", None)
        super().__init__(units, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer,
                         bias_initializer=bias_initializer, **kwargs)

    def _step(self, xw_t, states, rec_masks, extra):
        from xlapy.compat.v1.ops.math_ops import add, matmul
        h = _mul(states[0], rec_masks[0] if rec_masks else None)
        return [self.activation(add(xw_t, matmul(h, self.recurrent_kernel)))]


class LSTM(_RNN):
    """Keras' LSTM: z = x . kernel + h . recurrent_kernel + bias, split i, f, c, o;
    c = f * c + i * activation(z_c), h = o * activation(c), the gates through
    recurrent_activation. States [h, c]."""

    GATES = 4
    n_states = 2

    def _bias_init(self):
        if self.unit_forget_bias:
            return _UnitForgetBias(self.bias_initializer, self.units)
        return self.bias_initializer

    def _loop_constants(self):
        from xlapy.compat.v1.ops.manip_ops import split
        return split(self.recurrent_kernel, 4, axis=1) if self.recurrent_dropout > 0 else None

    def _step(self, xw_t, states, rec_masks, extra):
        from xlapy.compat.v1.ops.array_ops import concat
        from xlapy.compat.v1.ops.manip_ops import split
        from xlapy.compat.v1.ops.math_ops import add, matmul, multiply
        h, c = states
        if rec_masks:
            hu = concat([matmul(multiply(h, m), u) for m, u in zip(rec_masks, extra)], 1)
        else:
            hu = matmul(h, self.recurrent_kernel)
        zi, zf, zc, zo = split(add(xw_t, hu), 4, axis=1)
        ra, act = self.recurrent_activation, self.activation
        new_c = add(multiply(ra(zf), c), multiply(ra(zi), act(zc)))
        new_h = multiply(ra(zo), act(new_c))
        return [new_h, new_c]


class GRU(_RNN):
    """Keras' GRU, gates z, r, h: z = ra(x_z + h . U_z), r = ra(x_r + h . U_r),
    hh = activation(x_h + (r * h) . U_h) (reset_after: x_h + r * (h . U_h + b_rh)),
    h = z * h + (1 - z) * hh."""

    GATES = 3

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 reset_after=False, **kwargs):
        kwargs.pop("unit_forget_bias", None)
        super().__init__(units, activation=activation,
                         recurrent_activation=recurrent_activation, reset_after=reset_after,
                         **kwargs)

    def _bias_shape(self):
        return [2, 3 * self.units] if self.reset_after else [3 * self.units]

    def _loop_constants(self):
        from xlapy.compat.v1.ops.manip_ops import split
        u = self.units
        ks = split(self.recurrent_kernel, 3, axis=1)
        rb = split(self.bias[1], 3, axis=0) if self.reset_after and self.bias is not None \
            else [None] * 3
        return ks, rb, split(self.recurrent_kernel, [2 * u, u], axis=1)

    def _step(self, xw_t, states, rec_masks, extra):
        from xlapy.compat.v1.ops.manip_ops import split
        from xlapy.compat.v1.ops.math_ops import add, matmul, multiply, subtract
        from xlapy.compat.v1.ops.nn_ops import bias_add
        (h,) = states
        ks, rb, (u_zr, u_h) = extra
        xz, xr, xh = split(xw_t, 3, axis=1)
        ra, act = self.recurrent_activation, self.activation
        m = rec_masks or [None] * 3

        def rec(k, hh):
            y = matmul(_mul(h, m[k]) if hh is None else hh, ks[k])
            return y if rb[k] is None else bias_add(y, rb[k])
        if rec_masks or self.reset_after:
            rz, rr = rec(0, None), rec(1, None)
        else:
            rz, rr = split(matmul(h, u_zr), 2, axis=1)
        z = ra(add(xz, rz))
        r = ra(add(xr, rr))
        if self.reset_after:
            hh = act(add(xh, multiply(r, rec(2, None))))
        else:
            hh = act(add(xh, matmul(multiply(r, _mul(h, m[2])), ks[2])))
        one = np.float32(1)
        return [add(multiply(z, h), multiply(subtract(one, z), hh))]


class Bidirectional(_Keras, _tl.Layer):
    """A forward copy and a backward copy (go_backwards flipped) of an RNN layer; the
    backward sequence is reversed back in time, then merged ('concat', 'sum', 'mul', 'ave'
    or None for the list [forward, backward]). Weights: forward's, then backward's."""

    supports_masking = True

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None,
                 **kwargs):
        if not isinstance(layer, _RNN):
            raise InvalidArgumentError(f"Please initialize `Bidirectional` layer with a "
                                       f"recurrent layer instance (SimpleRNN, LSTM, GRU). "
                                       f"Received: {layer!r}")
        if merge_mode not in ("concat", "sum", "mul", "ave", None):
            raise InvalidArgumentError(f"Invalid merge mode. Merge mode should be one of "
                                       f"{{'sum', 'mul', 'ave', 'concat', None}}, got "
                                       f"{merge_mode!r}")
        kwargs = self._keras_input(kwargs)
        if layer._batch_input_shape is not None and self._batch_input_shape is None:
            self._batch_input_shape = layer._batch_input_shape
        super().__init__(**kwargs)
        from xlapy.compat.v1.ops._common import snake_case
        base = layer._name or snake_case(type(layer).__name__)
        cfg = dict(layer._config)
        self.forward_layer = type(layer)(**{**cfg, "name": "forward_" + base})
        cfg["go_backwards"] = not cfg["go_backwards"]
        self.backward_layer = backward_layer or type(layer)(**{**cfg,
                                                               "name": "backward_" + base})
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        if weights is not None:
            self._initial_weights = weights

    weights = property(lambda self: self.forward_layer.weights + self.backward_layer.weights)
    trainable_weights = property(lambda self: self.forward_layer.trainable_weights +
                                 self.backward_layer.trainable_weights)
    non_trainable_weights = property(lambda self: self.forward_layer.non_trainable_weights +
                                     self.backward_layer.non_trainable_weights)

    def call(self, inputs, initial_state=None):
        from xlapy.compat.v1.ops.array_ops import concat
        from xlapy.compat.v1.ops.manip_ops import reverse
        from xlapy.compat.v1.ops.math_ops import add, multiply
        fw_init = bw_init = None
        if initial_state is not None:
            k = len(initial_state) // 2
            fw_init, bw_init = initial_state[:k], initial_state[k:]
        y = self.forward_layer(inputs, initial_state=fw_init)
        y_rev = self.backward_layer(inputs, initial_state=bw_init)
        states = []
        if self.return_state:
            states = y[1:] + y_rev[1:]
            y, y_rev = y[0], y_rev[0]
        mask = _keras_mask(y)
        if self.return_sequences:
            y_rev = reverse(y_rev, [1])
        if self.merge_mode == "concat":
            out = concat([y, y_rev], -1)
        elif self.merge_mode == "sum":
            out = add(y, y_rev)
        elif self.merge_mode == "ave":
            out = multiply(add(y, y_rev), np.float32(0.5))
        elif self.merge_mode == "mul":
            out = multiply(y, y_rev)
        else:
            out = [y, y_rev]
        if mask is not None and self.merge_mode is not None:
            out._keras_mask = mask
        if self.return_state:
            return (out if isinstance(out, list) else [out]) + states
        return out

    def _keras_propagate_mask(self, inputs, out, mask):
        pass


class TimeDistributed(_Keras, _tl.Layer):
    """The layer applied to every time step: [batch, time, ...] is folded into
    [batch * time, ...], the layer applied once, and unfolded."""

    supports_masking = True

    def __init__(self, layer, **kwargs):
        if not hasattr(layer, "weights") or not callable(layer):
            raise InvalidArgumentError(f"Please initialize `TimeDistributed` layer with a "
                                       f"`Layer` instance. You passed: {layer!r}")
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        self.layer = layer

    weights = property(lambda self: self.layer.weights)
    trainable_weights = property(lambda self: self.layer.trainable_weights)
    non_trainable_weights = property(lambda self: self.layer.non_trainable_weights)

    def call(self, inputs):
        from xlapy.compat.v1.ops.array_ops import concat, reshape, shape
        dims = inputs.shape.dims
        if dims is None or len(dims) < 3:
            raise InvalidArgumentError(f"`TimeDistributed` Layer should be passed an "
                                       f"`input_shape` with at least 3 dimensions, received: "
                                       f"{inputs.shape}")
        inner = dims[2:]
        if any(d is None for d in inner):
            raise InvalidArgumentError(f"TimeDistributed needs the per-step shape of its "
                                       f"inputs, got {inputs.shape}")
        flat = reshape(inputs, [-1] + [int(d) for d in inner])
        y = self.layer(flat)
        out_inner = y.shape.dims[1:]
        if dims[1] is not None and all(d is not None for d in out_inner):
            out = reshape(y, [-1, int(dims[1])] + [int(d) for d in out_inner])
        else:
            out = reshape(y, concat([shape(inputs)[:2], shape(y)[1:]], 0))
        out.set_shape(TensorShape([dims[0], dims[1]]).concatenate(y.shape[1:]))
        return out
