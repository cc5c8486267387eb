"""tf.distributions (and tf.contrib.distributions): the probability distributions of TF 1.x
models: variational autoencoders (Normal, MultivariateNormalDiag, a KL term), policy
gradients (Categorical, Bernoulli), and Uniform.

Each distribution is built from graph ops: sample() draws with the random ops (Normal and
MultivariateNormalDiag reparameterized, loc + scale * eps, so gradients reach loc and
scale), log_prob/prob/entropy/mean/stddev/variance/mode are differentiable expressions, and
kl_divergence(p, q) has the closed forms TF registers for pairs of the same family.
batch_shape is the broadcast shape of the parameters; sample(n) has shape
[n] + batch_shape + event_shape.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import tensor

FULLY_REPARAMETERIZED = "FULLY_REPARAMETERIZED"
NOT_REPARAMETERIZED = "NOT_REPARAMETERIZED"


def _ops():
    import xlapy.compat.v1 as tf
    return tf


def _t(v, dtype=None):
    if hasattr(v, "op"):
        return v
    a = np.asarray(v)
    if dtype is None:
        dtype = np.float32 if a.dtype.kind in "fiub" and a.dtype != np.float64 else a.dtype
    return tensor(a.astype(dtype))


def _sample_shape(sample_shape):
    tf = _ops()
    if hasattr(sample_shape, "op"):
        return tf.reshape(tf.cast(sample_shape, tf.int32), [-1]), None
    s = [int(sample_shape)] if np.ndim(sample_shape) == 0 else [int(d) for d in sample_shape]
    return tf.constant(np.asarray(s, np.int32).reshape(-1)), s


class Distribution:
    reparameterization_type = NOT_REPARAMETERIZED

    def __init__(self, dtype, validate_args=False, allow_nan_stats=True, name=None,
                 parameters=None):
        self._dtype = dtype
        self.validate_args = validate_args
        self.allow_nan_stats = allow_nan_stats
        self._name = name or type(self).__name__
        self._parameters = dict(parameters or {})

    dtype = property(lambda self: self._dtype)
    name = property(lambda self: self._name)
    parameters = property(lambda self: dict(self._parameters))

    # ---- shapes ----
    def _batch_tensor(self):
        """A zero tensor of the batch shape (the parameters broadcast)."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_tensor().shape

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        return _ops().shape(self._batch_tensor(), name=name)

    @property
    def event_shape(self):
        from xlapy.compat.v1.tensor_shape import TensorShape
        return TensorShape([])

    def event_shape_tensor(self, name="event_shape_tensor"):
        return _ops().constant(np.zeros([0], np.int32), name=name)

    # ---- the interface ----
    def sample(self, sample_shape=(), seed=None, name="sample"):
        with get_default_graph().name_scope(f"{self._name}/{name}"):
            return self._sample(sample_shape, seed)

    def log_prob(self, value, name="log_prob"):
        with get_default_graph().name_scope(f"{self._name}/{name}"):
            return self._log_prob(_t(value, self._dtype.np) if not hasattr(value, "op")
                                  else value)

    def prob(self, value, name="prob"):
        return _ops().exp(self.log_prob(value), name=name)

    def cdf(self, value, name="cdf"):
        raise UnimplementedError(f"{type(self).__name__}.cdf is not implemented")

    def log_cdf(self, value, name="log_cdf"):
        return _ops().log(self.cdf(value), name=name)

    def survival_function(self, value, name="survival_function"):
        return 1.0 - self.cdf(value)

    def entropy(self, name="entropy"):
        raise UnimplementedError(f"{type(self).__name__}.entropy is not implemented")

    def mean(self, name="mean"):
        raise UnimplementedError(f"{type(self).__name__}.mean is not implemented")

    def mode(self, name="mode"):
        raise UnimplementedError(f"{type(self).__name__}.mode is not implemented")

    def variance(self, name="variance"):
        return _ops().square(self.stddev())

    def stddev(self, name="stddev"):
        return _ops().sqrt(self.variance())

    def kl_divergence(self, other, name="kl_divergence"):
        return kl_divergence(self, other, name=name)

    def cross_entropy(self, other, name="cross_entropy"):
        return self.entropy() + kl_divergence(self, other)

    def _zeros_sample(self, sample_shape):
        """A zero tensor of shape sample_shape + batch_shape (the draw's shape)."""
        tf = _ops()
        s, _ = _sample_shape(sample_shape)
        full = tf.concat([s, tf.shape(self._batch_tensor())], 0)
        return full


class Normal(Distribution):
    reparameterization_type = FULLY_REPARAMETERIZED

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Normal"):
        self.loc = _t(loc)
        self.scale = _t(scale, self.loc.dtype.np)
        if self.loc.dtype != self.scale.dtype:
            raise InvalidArgumentError(f"Normal: loc is {self.loc.dtype.name} and scale "
                                       f"{self.scale.dtype.name}; they must be one float type")
        super().__init__(self.loc.dtype, validate_args, allow_nan_stats, name,
                         {"loc": self.loc, "scale": self.scale})

    def _batch_tensor(self):
        return self.loc * 0 + self.scale * 0

    def _sample(self, sample_shape, seed):
        tf = _ops()
        eps = tf.random_normal(self._zeros_sample(sample_shape), dtype=self._dtype, seed=seed)
        return eps * self.scale + self.loc

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _log_prob(self, x):
        tf = _ops()
        z = self._z(x)
        return -0.5 * tf.square(z) - (0.5 * math.log(2.0 * math.pi) + tf.log(self.scale))

    def cdf(self, value, name="cdf"):
        tf = _ops()
        return 0.5 * tf.erfc(-self._z(_t(value, self._dtype.np)) / math.sqrt(2.0))

    def entropy(self, name="entropy"):
        tf = _ops()
        return 0.5 * math.log(2.0 * math.pi * math.e) + tf.log(self.scale) + \
            self._batch_tensor()

    def mean(self, name="mean"):
        return self.loc + self._batch_tensor()

    mode = mean

    def stddev(self, name="stddev"):
        return self.scale + self._batch_tensor()

    def variance(self, name="variance"):
        return _ops().square(self.stddev())


class MultivariateNormalDiag(Distribution):
    """A normal of independent components: event shape [k] (the last dimension of loc)."""
    reparameterization_type = FULLY_REPARAMETERIZED

    def __init__(self, loc=None, scale_diag=None, scale_identity_multiplier=None,
                 validate_args=False, allow_nan_stats=True, name="MultivariateNormalDiag"):
        tf = _ops()
        if loc is None and scale_diag is None:
            raise InvalidArgumentError("MultivariateNormalDiag: give loc or scale_diag")
        self.loc = _t(loc) if loc is not None else tf.zeros_like(_t(scale_diag))
        sd = _t(scale_diag, self.loc.dtype.np) if scale_diag is not None else \
            tf.ones_like(self.loc)
        if scale_identity_multiplier is not None:
            sd = sd + _t(scale_identity_multiplier, self.loc.dtype.np)
        self.scale_diag = sd
        super().__init__(self.loc.dtype, validate_args, allow_nan_stats, name,
                         {"loc": self.loc, "scale_diag": sd})

    def _full(self):
        return self.loc * 0 + self.scale_diag * 0

    def _batch_tensor(self):
        return _ops().reduce_sum(self._full(), axis=-1)

    @property
    def event_shape(self):
        return self._full().shape[-1:]

    def event_shape_tensor(self, name="event_shape_tensor"):
        return _ops().shape(self._full())[-1:]

    def _sample(self, sample_shape, seed):
        tf = _ops()
        s, _ = _sample_shape(sample_shape)
        shape = tf.concat([s, tf.shape(self._full())], 0)
        eps = tf.random_normal(shape, dtype=self._dtype, seed=seed)
        return eps * self.scale_diag + self.loc

    def _log_prob(self, x):
        tf = _ops()
        z = (x - self.loc) / self.scale_diag
        k = tf.cast(tf.shape(self._full())[-1], self._dtype)
        return -0.5 * tf.reduce_sum(tf.square(z), axis=-1) - 0.5 * k * math.log(2 * math.pi) \
            - tf.reduce_sum(tf.log(tf.abs(self.scale_diag)) + self._full(), axis=-1)

    def entropy(self, name="entropy"):
        tf = _ops()
        k = tf.cast(tf.shape(self._full())[-1], self._dtype)
        return 0.5 * k * math.log(2 * math.pi * math.e) + tf.reduce_sum(
            tf.log(tf.abs(self.scale_diag)) + self._full(), axis=-1)

    def mean(self, name="mean"):
        return self.loc + self._full()

    mode = mean

    def stddev(self, name="stddev"):
        return _ops().abs(self.scale_diag) + self._full()

    def variance(self, name="variance"):
        return _ops().square(self.stddev())


class Bernoulli(Distribution):
    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Bernoulli"):
        tf = _ops()
        if (logits is None) == (probs is None):
            raise InvalidArgumentError("Must pass probs or logits, but not both.")
        if logits is not None:
            self.logits = _t(logits)
            self.probs = tf.sigmoid(self.logits)
        else:
            self.probs = _t(probs)
            self.logits = tf.log(self.probs) - tf.log1p(-self.probs)
        super().__init__(dtypes.as_dtype(dtype), validate_args, allow_nan_stats, name,
                         {"logits": self.logits, "probs": self.probs})

    def _batch_tensor(self):
        return self.logits * 0

    def _sample(self, sample_shape, seed):
        tf = _ops()
        u = tf.random_uniform(self._zeros_sample(sample_shape), dtype=self.probs.dtype,
                              seed=seed)
        return tf.cast(tf.less(u, self.probs), self._dtype)

    def log_prob(self, value, name="log_prob"):
        tf = _ops()
        with get_default_graph().name_scope(f"{self._name}/{name}"):
            x = tf.cast(_t(value) if not hasattr(value, "op") else value, self.logits.dtype)
            # -softplus(-l) for x = 1, -softplus(l) for x = 0 (stable in the logits)
            return -tf.nn.sigmoid_cross_entropy_with_logits(
                labels=x + self._batch_tensor(), logits=self.logits + x * 0)

    def entropy(self, name="entropy"):
        tf = _ops()
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=self.probs, logits=self.logits)

    def mean(self, name="mean"):
        return self.probs + self._batch_tensor()

    def mode(self, name="mode"):
        tf = _ops()
        return tf.cast(tf.greater(self.probs, 0.5), self._dtype)

    def variance(self, name="variance"):
        return self.probs * (1.0 - self.probs)


class Categorical(Distribution):
    """Over {0, ..., K-1}, K the last dimension of logits or probs."""

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Categorical"):
        tf = _ops()
        if (logits is None) == (probs is None):
            raise InvalidArgumentError("Must pass probs or logits, but not both.")
        if logits is not None:
            self.logits = _t(logits)
            self.probs = tf.nn.softmax(self.logits)
        else:
            self.probs = _t(probs)
            self.logits = tf.log(self.probs)
        super().__init__(dtypes.as_dtype(dtype), validate_args, allow_nan_stats, name,
                         {"logits": self.logits, "probs": self.probs})

    @property
    def event_size(self):
        return _ops().shape(self.logits)[-1]

    def _batch_tensor(self):
        return _ops().reduce_sum(self.logits * 0, axis=-1)

    def _sample(self, sample_shape, seed):
        tf = _ops()
        s, _ = _sample_shape(sample_shape)
        n = tf.reduce_prod(s)
        k = tf.shape(self.logits)[-1]
        flat = tf.reshape(self.logits, tf.stack([-1, k]))
        draws = tf.multinomial(flat, n, seed=seed, output_dtype=tf.int64)  # [batch, n]
        draws = tf.transpose(draws)
        out = tf.reshape(draws, tf.concat([s, tf.shape(self._batch_tensor())], 0))
        return tf.cast(out, self._dtype)

    def log_prob(self, value, name="log_prob"):
        tf = _ops()
        with get_default_graph().name_scope(f"{self._name}/{name}"):
            k = tf.cast(_t(value, np.int32) if not hasattr(value, "op") else value,
                        tf.int32)
            k = k + tf.cast(self._batch_tensor(), tf.int32)
            logits = self.logits + tf.expand_dims(tf.cast(k, self.logits.dtype) * 0, -1)
            return -tf.nn.sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def entropy(self, name="entropy"):
        tf = _ops()
        return -tf.reduce_sum(tf.nn.softmax(self.logits) * tf.nn.log_softmax(self.logits),
                              axis=-1)

    def mode(self, name="mode"):
        tf = _ops()
        return tf.cast(tf.argmax(self.logits, axis=-1), self._dtype)

    def mean(self, name="mean"):
        raise UnimplementedError("Categorical has no mean (its values are labels)")


class Uniform(Distribution):
    reparameterization_type = FULLY_REPARAMETERIZED

    def __init__(self, low=0.0, high=1.0, validate_args=False, allow_nan_stats=True,
                 name="Uniform"):
        self.low = _t(low)
        self.high = _t(high, self.low.dtype.np)
        super().__init__(self.low.dtype, validate_args, allow_nan_stats, name,
                         {"low": self.low, "high": self.high})

    def range(self, name="range"):
        return self.high - self.low

    def _batch_tensor(self):
        return self.low * 0 + self.high * 0

    def _sample(self, sample_shape, seed):
        tf = _ops()
        u = tf.random_uniform(self._zeros_sample(sample_shape), dtype=self._dtype, seed=seed)
        return self.low + self.range() * u

    def _log_prob(self, x):
        tf = _ops()
        inside = tf.logical_and(tf.greater_equal(x, self.low), tf.less(x, self.high))
        full = x * 0 + self._batch_tensor()
        neg_inf = tensor(np.asarray(-np.inf, self._dtype.np))
        return tf.where(inside, -tf.log(self.range()) + full, full + neg_inf)

    def cdf(self, value, name="cdf"):
        tf = _ops()
        x = _t(value, self._dtype.np) if not hasattr(value, "op") else value
        return tf.clip_by_value((x - self.low) / self.range(), 0.0, 1.0)

    def entropy(self, name="entropy"):
        return _ops().log(self.range())

    def mean(self, name="mean"):
        return (self.low + self.high) / 2.0

    def variance(self, name="variance"):
        return _ops().square(self.range()) / 12.0


def _kl_normal(p, q):
    tf = _ops()
    ratio = tf.square(p.scale / q.scale)
    return 0.5 * (ratio + tf.square((p.loc - q.loc) / q.scale) - 1.0 - tf.log(ratio))


def _kl_mvn_diag(p, q):
    tf = _ops()
    ratio = tf.square(p.scale_diag / q.scale_diag)
    return tf.reduce_sum(0.5 * (ratio + tf.square((p.loc - q.loc) / q.scale_diag) - 1.0 -
                                tf.log(ratio)), axis=-1)


def _kl_categorical(p, q):
    tf = _ops()
    lp, lq = tf.nn.log_softmax(p.logits), tf.nn.log_softmax(q.logits)
    return tf.reduce_sum(tf.exp(lp) * (lp - lq), axis=-1)


def _kl_bernoulli(p, q):
    tf = _ops()
    return p.probs * (tf.log_sigmoid(p.logits) - tf.log_sigmoid(q.logits)) + \
        (1.0 - p.probs) * (tf.log_sigmoid(-p.logits) - tf.log_sigmoid(-q.logits))


_KL = {(Normal, Normal): _kl_normal,
       (MultivariateNormalDiag, MultivariateNormalDiag): _kl_mvn_diag,
       (Categorical, Categorical): _kl_categorical,
       (Bernoulli, Bernoulli): _kl_bernoulli}


def kl_divergence(distribution_a, distribution_b, allow_nan_stats=True, name=None):
    for (a, b), fn in _KL.items():
        if isinstance(distribution_a, a) and isinstance(distribution_b, b):
            with get_default_graph().name_scope(name or "KullbackLeibler"):
                return fn(distribution_a, distribution_b)
    raise UnimplementedError(
        f"No KL(distribution_a || distribution_b) registered for distribution_a type "
        f"{type(distribution_a).__name__} and distribution_b type "
        f"{type(distribution_b).__name__}")


def RegisterKL(dist_cls_a, dist_cls_b):
    """A decorator registering fn(a, b, name=None) as KL(a || b) for the two classes."""
    def register(fn):
        _KL[(dist_cls_a, dist_cls_b)] = lambda p, q: fn(p, q)
        return fn
    return register


ReparameterizationType = str


# the other families of TF 1.15's tf.distributions, one module each (they build on the
# classes above, so they are imported last)
from xlapy.compat.v1.distributions.beta import Beta  # noqa: E402
from xlapy.compat.v1.distributions.dirichlet import Dirichlet  # noqa: E402
from xlapy.compat.v1.distributions.dirichlet_multinomial import (  # noqa: E402
    DirichletMultinomial)
from xlapy.compat.v1.distributions.gamma import Exponential, Gamma  # noqa: E402
from xlapy.compat.v1.distributions.laplace import Laplace  # noqa: E402
from xlapy.compat.v1.distributions.multinomial import Multinomial  # noqa: E402
from xlapy.compat.v1.distributions.student_t import StudentT  # noqa: E402
