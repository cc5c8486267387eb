"""tf.contrib.layers' layer_norm, embed_sequence and optimize_loss.

- layer_norm: normalizes over dimensions begin_norm_axis.. (moments of each example), then
  scales and shifts with variables LayerNorm/gamma and LayerNorm/beta shaped like the
  dimensions begin_params_axis..; TF 1.x's variance epsilon is 1e-12.
- embed_sequence: ids [batch, time] -> embeddings [batch, time, embed_dim] through a variable
  EmbedSequence/embeddings [vocab_size, embed_dim] (uniform initializer by default, as TF's
  get_variable default).
- optimize_loss: the training op of tf.contrib.layers: an optimizer (by name "SGD", "Adam",
  "Adagrad", "RMSProp", "Ftrl", "Momentum" needs a class or instance for its momentum; an
  Optimizer class, an instance, or a function of the learning rate), an optional learning-
  rate decay function of (learning_rate, global_step), gradient clipping (a norm for
  clip_by_global_norm or a function of the gradient list), gradient multipliers, the
  UPDATE_OPS run first, summaries of the loss and learning rate; returns the loss tensor
  that runs the update (TF's train_op).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import tensor


def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    from xlapy.compat.v1.ops.math_ops import add, multiply, rsqrt
    from xlapy.compat.v1.ops.nn_ops import moments
    from xlapy.compat.v1.variables import (get_variable, ones_initializer, variable_scope,
                                           zeros_initializer)
    x = tensor(inputs)
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    if dims is None:
        raise InvalidArgumentError(f"Inputs {x.name} has undefined rank.")
    rank = len(dims)
    norm_axis = begin_norm_axis + rank if begin_norm_axis < 0 else begin_norm_axis
    params_axis = begin_params_axis + rank if begin_params_axis < 0 else begin_params_axis
    if not 0 <= params_axis < rank or not 0 <= norm_axis < rank:
        raise InvalidArgumentError(
            f"begin_params_axis ({begin_params_axis}) and begin_norm_axis ({begin_norm_axis})"
            f" must be < rank(inputs) ({rank})")
    params_shape = dims[params_axis:]
    if any(d is None for d in params_shape):
        raise InvalidArgumentError(f"Inputs {x.name}: parameter shape {params_shape} is not "
                                   "fully defined")
    graph = get_default_graph()
    with variable_scope(scope, default_name="LayerNorm", values=[x], reuse=reuse):
        beta = gamma = None
        if center:
            beta = get_variable("beta", params_shape, dtype=x.dtype,
                                initializer=zeros_initializer(), trainable=trainable,
                                collections=_collections(variables_collections, "beta"))
        if scale:
            gamma = get_variable("gamma", params_shape, dtype=x.dtype,
                                 initializer=ones_initializer(), trainable=trainable,
                                 collections=_collections(variables_collections, "gamma"))
        mean, variance = moments(x, list(range(norm_axis, rank)), keep_dims=True)
        eps = tensor(np.asarray(1e-12, x.dtype.np))
        inv = rsqrt(add(variance, eps))
        if gamma is not None:
            inv = multiply(inv, gamma)
        out = multiply(x, inv)
        shift = multiply(mean, inv)
        out = out - shift if beta is None else add(out, beta - shift)
        if activation_fn is not None:
            out = activation_fn(out)
    for c in outputs_collections or ():
        graph.add_to_collection(c, out)
    return out


def _collections(variables_collections, name):
    from xlapy.compat.v1.framework import GraphKeys
    base = [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    if variables_collections is None:
        return base
    extra = variables_collections.get(name, []) if isinstance(variables_collections, dict) \
        else list(variables_collections)
    return base + [c for c in extra if c not in base]


def embed_sequence(ids, vocab_size=None, embed_dim=None, unique=False, initializer=None,
                   regularizer=None, trainable=True, scope=None, reuse=None):
    from xlapy.compat.v1.ops.embedding_ops import embedding_lookup
    from xlapy.compat.v1.variables import get_variable, variable_scope
    if vocab_size is None or embed_dim is None:
        raise InvalidArgumentError("Must specify vocab size and embedding dimension")
    ids = tensor(ids)
    with variable_scope(scope, default_name="EmbedSequence", values=[ids], reuse=reuse):
        embeddings = get_variable("embeddings", [int(vocab_size), int(embed_dim)],
                                  initializer=initializer, regularizer=regularizer,
                                  trainable=trainable)
        return embedding_lookup(embeddings, ids)


OPTIMIZER_CLS_NAMES = ("Adagrad", "Adam", "Ftrl", "Momentum", "RMSProp", "SGD")


def _optimizer(optimizer, lr):
    from xlapy.compat.v1.train import optimizers as O
    from xlapy.compat.v1.train.ftrl import FtrlOptimizer
    from xlapy.compat.v1.train.optimizer import Optimizer
    if isinstance(optimizer, str):
        table = {"Adagrad": O.AdagradOptimizer, "Adam": O.AdamOptimizer,
                 "Ftrl": FtrlOptimizer, "RMSProp": O.RMSPropOptimizer,
                 "SGD": O.GradientDescentOptimizer}
        if optimizer == "Momentum":
            raise InvalidArgumentError("optimizer 'Momentum' needs a momentum: pass "
                                       "tf.train.MomentumOptimizer(lr, momentum) or a class")
        if optimizer not in table:
            raise InvalidArgumentError(
                f"Optimizer name should be one of [{', '.join(OPTIMIZER_CLS_NAMES)}], you "
                f"provided {optimizer}.")
        if lr is None:
            raise InvalidArgumentError(f"Learning rate is None, but should be specified if "
                                       f"optimizer is string ({optimizer}).")
        return table[optimizer](learning_rate=lr)
    if isinstance(optimizer, type) and issubclass(optimizer, Optimizer):
        if lr is None:
            raise InvalidArgumentError(f"Learning rate is None, but should be specified if "
                                       f"optimizer is class ({optimizer}).")
        return optimizer(learning_rate=lr)
    if isinstance(optimizer, Optimizer):
        return optimizer
    if callable(optimizer):
        if lr is None:
            raise InvalidArgumentError("Learning rate is None, but should be specified if "
                                       "optimizer is function.")
        opt = optimizer(lr)
        if not isinstance(opt, Optimizer):
            raise InvalidArgumentError(f"Unrecognized optimizer: function should return "
                                       f"subclass of Optimizer. Got {opt}.")
        return opt
    raise InvalidArgumentError(f"Unrecognized optimizer: should be string, subclass of "
                               f"Optimizer, instance of subclass of Optimizer or function "
                               f"with one argument. Got {optimizer}.")


def optimize_loss(loss, global_step, learning_rate, optimizer, gradient_noise_scale=None,
                  gradient_multipliers=None, clip_gradients=None,
                  learning_rate_decay_fn=None, update_ops=None, variables=None, name=None,
                  summaries=None, colocate_gradients_with_ops=False,
                  increment_global_step=True):
    from xlapy.compat.v1.framework import GraphKeys, control_dependencies
    from xlapy.compat.v1.ops.array_ops import identity
    from xlapy.compat.v1.ops.clip_ops import clip_by_global_norm
    from xlapy.compat.v1.ops.math_ops import multiply
    from xlapy.compat.v1.train.training_util import get_global_step
    from xlapy.compat.v1.variables import trainable_variables, variable_scope
    if gradient_noise_scale is not None:
        raise InvalidArgumentError("optimize_loss: gradient_noise_scale is not supported by "
                                   "xlapy")
    graph = get_default_graph()
    loss = tensor(loss)
    if global_step is None:
        global_step = get_global_step()
    if global_step is None and (learning_rate_decay_fn is not None or increment_global_step):
        if learning_rate_decay_fn is not None:
            raise InvalidArgumentError("global_step is required for learning_rate_decay_fn.")
    with variable_scope(name, "OptimizeLoss", [loss, global_step]):
        if update_ops is None:
            update_ops = list(graph.get_collection(GraphKeys.UPDATE_OPS))
        if update_ops:
            with control_dependencies(update_ops):
                loss = identity(loss)
        lr = None
        if learning_rate is not None:
            from xlapy.compat.v1.variables import constant_initializer, get_variable
            if hasattr(learning_rate, "op"):
                lr = learning_rate
            else:
                lr = get_variable("learning_rate", [], trainable=False,
                                  initializer=constant_initializer(float(learning_rate)))
        if learning_rate_decay_fn is not None:
            lr = learning_rate_decay_fn(lr, global_step)
        summaries = ["loss", "learning_rate", "global_gradient_norm"] if summaries is None \
            else list(summaries)
        _summaries(summaries, loss=loss, lr=lr)
        opt = _optimizer(optimizer, lr)
        if variables is None:
            variables = trainable_variables()
        grads = opt.compute_gradients(loss, variables,
                                      colocate_gradients_with_ops=colocate_gradients_with_ops)
        grads = [(g, v) for g, v in grads]
        if gradient_multipliers:
            by_name = {getattr(k, "name", k): m for k, m in gradient_multipliers.items()}
            grads = [(multiply(g, tensor(np.asarray(by_name[v.name], g.dtype.np)))
                      if g is not None and v.name in by_name else g, v) for g, v in grads]
        if clip_gradients is not None:
            if callable(clip_gradients):
                grads = clip_gradients(grads)
            else:
                kept = [(g, v) for g, v in grads if g is not None]
                clipped, _ = clip_by_global_norm([g for g, _ in kept], float(clip_gradients))
                grads = list(zip(clipped, [v for _, v in kept]))
        train = opt.apply_gradients(grads, global_step=global_step
                                    if increment_global_step else None, name="train")
        with control_dependencies([train]):
            return identity(loss, name="train_op")


def _summaries(which, loss, lr):
    from xlapy.compat.v1 import summary
    valid = ("learning_rate", "loss", "gradients", "gradient_norm", "global_gradient_norm")
    for s in which:
        if s not in valid:
            raise InvalidArgumentError(f"Summaries should be one of [{', '.join(valid)}], "
                                       f"you provided {s}.")
    if "loss" in which:
        summary.scalar("loss", loss)
    if "learning_rate" in which and lr is not None:
        summary.scalar("learning_rate", lr)


def one_hot_encoding(labels, num_classes, on_value=1.0, off_value=0.0,
                     outputs_collections=None, scope=None):
    """tf.one_hot(labels, num_classes) of float on_value / off_value, in name scope
    "OneHotEncoding"."""
    from xlapy.compat.v1.framework import get_default_graph
    from xlapy.compat.v1.ops.index_ops import one_hot
    from xlapy.compat.v1.ops._common import tensor
    graph = get_default_graph()
    with graph.name_scope(scope or "OneHotEncoding"):
        out = one_hot(tensor(labels), num_classes, on_value=on_value, off_value=off_value)
    for c in outputs_collections or ():
        graph.add_to_collection(c, out)
    return out
