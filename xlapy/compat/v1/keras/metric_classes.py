"""tf.keras.metrics' classes (TF 1.15, graph mode): stateful metrics whose state lives in
variables, re-exported by keras/metrics.py.

    m = tf.keras.metrics.AUC()
    update = m.update_state(labels, probabilities)      # an op: one batch into the state
    value = m.result()                                  # reads the state
    sess.run(tf.local_variables_initializer())          # (or m.variables' initializers)
    sess.run(update, feed); sess.run(value)
    m.reset_states()                                    # zeros (in the default or Keras session)
    both = m(labels, probabilities)                     # the result, with the update run first

A metric's variables are made when it is constructed, in the default graph, under a
scope named after it (auc/true_positives, auc_1/...); they are local variables
(LOCAL_VARIABLES and METRIC_VARIABLES, never trainable), so tf.local_variables_initializer()
and tf.variables_initializer(m.variables) both set them to zero. Reading one (in result(),
or as a tensor anywhere) makes a fresh read, so reads made under a control dependency on
the update see the updated value (what __call__ relies on).

update_state returns the update op. A subclass's update_state (Metric is subclassed as in
TF: add_weight in __init__, update_state, result) may also just make assign ops without
returning them: the ops it made that write variables (and its asserts) are run by the op
update_state returns, as TF 1.15 runs them by tracing update_state into a function.

sample_weight: rank 0, or the rank of the values (one less is expanded, one more with a
last dimension 1 squeezed), broadcastable to them; Mean / Sum with weights of lower rank
first reduce the values to the weights' rank. Predictions for the threshold metrics (AUC,
Precision, Recall, TruePositives, ...) must lie in [0, 1]: an InvalidArgumentError when the
update runs otherwise.
"""

from __future__ import annotations

import functools

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError
from xlapy.compat.v1.framework import (GraphKeys, control_dependencies, convert_to_tensor,
                                       get_default_graph)
from xlapy.compat.v1.keras import backend as _backend
from xlapy.compat.v1.keras import backend_ops as _K
from xlapy.compat.v1.keras import initializers as _initializers
from xlapy.compat.v1.keras import losses as _L
from xlapy.compat.v1.keras.metrics import (binary_accuracy, categorical_accuracy,
                                           sparse_categorical_accuracy,
                                           sparse_top_k_categorical_accuracy,
                                           top_k_categorical_accuracy)
from xlapy.compat.v1.op_registry import get_op_def
from xlapy.compat.v1.ops import array_ops as A
from xlapy.compat.v1.ops import math_ops as M
from xlapy.compat.v1.ops._common import snake_case
from xlapy.compat.v1.ops.activation_ops import l2_normalize
from xlapy.compat.v1.ops.special_math_ops import div_no_nan
from xlapy.compat.v1.session import get_default_session
from xlapy.compat.v1.variables import Variable, variable_scope

_F32 = dtypes.float32
_EXTRA_EFFECTS = ("Assert", "Print", "PrintV2")


class _MetricVariable(Variable):
    """A metric's state: every read is a new read (as a resource variable's), so one made
    under control_dependencies([update]) sees the update."""

    def value(self):
        return self.read_value()

    def _to_tensor(self):
        return self.read_value()


def _fresh_read(name):
    def f(self, *args):
        return getattr(self.read_value(), name)(*args)
    return f


for _n in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "pow", "neg",
           "abs", "lt", "le", "gt", "ge", "getitem"):
    setattr(_MetricVariable, f"__{_n}__", _fresh_read(f"__{_n}__"))


def _writes_state(op) -> bool:
    if op.type in _EXTRA_EFFECTS:
        return True
    try:
        return bool(get_op_def(op.type).ref_inputs)
    except NotFoundError:       # (an op type with no registered definition)
        return False


def _op_of(x):
    return x if not hasattr(x, "op") or not hasattr(x, "dtype") else x.op


def _ancestors(out, among: set) -> set:
    """ids of the ops of `among` (ids) that `out` depends on, itself included."""
    reached: set = set()
    todo = [_op_of(out)]
    while todo:
        op = todo.pop()
        if id(op) in reached or id(op) not in among:
            continue
        reached.add(id(op))
        todo += [t.op for t in op.inputs] + list(op.control_inputs)
    return reached


def _wrap_update(fn):
    """update_state's wrapper: the returned op also runs the variable writes (and asserts)
    the call made that it does not already depend on."""
    @functools.wraps(fn)
    def update_state(self, *args, **kwargs):
        if self.__dict__.get("_in_update"):       # (a subclass calling super().update_state)
            return fn(self, *args, **kwargs)
        g = get_default_graph()
        self._check_graph(g)
        first = len(g.get_operations())
        with g.name_scope(self._scope + "update_state"):
            self._in_update = True
            try:
                out = fn(self, *args, **kwargs)
            finally:
                self._in_update = False
            if isinstance(out, (list, tuple)):
                out = A.group(*out) if out else None
            new = g.get_operations()[first:]
            inits = {id(v.initializer) for v in self._weights}
            reached = set() if out is None else _ancestors(out, {id(op) for op in new})
            missing = [op for op in new if _writes_state(op) and id(op) not in inits
                       and id(op) not in reached]
            if not missing:
                return A.no_op() if out is None else out
            return A.group(*([out] if out is not None else []), *missing)
    update_state._keras_wrapped = True
    return update_state


class Metric:
    """tf.keras.metrics.Metric: the base class. Subclasses make their state with add_weight
    in __init__ and define update_state(...) and result()."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        fn = cls.__dict__.get("update_state")
        if fn is not None and not getattr(fn, "_keras_wrapped", False):
            cls.update_state = _wrap_update(fn)

    def __init__(self, name=None, dtype=None, **kwargs):
        unknown = set(kwargs) - {"trainable"}
        if unknown:
            raise TypeError(f"Keyword argument not understood: {sorted(unknown)[0]!r}")
        self._name = name or snake_case(type(self).__name__)
        self._dtype = dtypes.as_dtype(dtype or _K.floatx())
        self._graph = get_default_graph()
        with variable_scope(None, default_name=self._name) as vs:
            self._scope = vs.original_name_scope        # ("auc/", "auc_1/", ...)
        self._weights: list = []
        self._in_update = False
        self.stateful = True
        self.built = True
        self.trainable = False

    # ---- what Keras' Layer gives a metric ---------------------------------------------------
    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype.name)
    weights = variables = property(lambda self: list(self._weights))
    non_trainable_weights = non_trainable_variables = weights
    trainable_weights = trainable_variables = property(lambda self: [])

    def _check_graph(self, g):
        if g is not self._graph:
            raise InvalidArgumentError(
                f"Metric {self.name} was created in another graph than the default one: its "
                f"variables live there (make the metric in the graph it is used in)")

    def add_weight(self, name, shape=(), aggregation=None, synchronization=None,
                   initializer=None, dtype=None):
        """A state variable (zeros unless `initializer` says otherwise), in the metric's
        scope and in LOCAL_VARIABLES / METRIC_VARIABLES."""
        dt = dtypes.as_dtype(dtype) if dtype is not None else self._dtype
        shape = [int(d) for d in (shape if isinstance(shape, (list, tuple)) else
                                  getattr(shape, "as_list", lambda: shape)())]
        if initializer is None:
            def init():
                return A.zeros(shape, dt)
        else:
            ini = _initializers.get(initializer)
            if isinstance(ini, type):
                ini = ini()

            def init():
                return ini(shape, dt)
        with self._graph.as_default(), self._graph.name_scope(self._scope):
            v = _MetricVariable(init, trainable=False, name=name, dtype=dt,
                                collections=[GraphKeys.LOCAL_VARIABLES,
                                             GraphKeys.METRIC_VARIABLES])
        self._weights.append(v)
        return v

    def update_state(self, *args, **kwargs):
        raise NotImplementedError("Must be implemented in subclasses.")

    def result(self):
        raise NotImplementedError("Must be implemented in subclasses.")

    def __call__(self, *args, **kwargs):
        """Accumulate one batch and return the result tensor, computed after the update
        (the update runs whenever the result is fetched)."""
        update = self.update_state(*args, **kwargs)
        g = get_default_graph()
        with control_dependencies([update]), g.name_scope(self._scope + "result"):
            out = self.result()
            out = [A.identity(o) for o in out] if isinstance(out, (list, tuple)) else \
                A.identity(out)
        if not isinstance(out, list):
            out._metric_obj = self
        return out

    def reset_states(self):
        """Zero every state variable: in the default session if one is open on the metric's
        graph, else in the Keras session (tf.keras.backend.get_session)."""
        values = [(v, np.zeros(v.shape.as_list(), v.dtype.as_numpy_dtype))
                  for v in self._weights]
        sess = get_default_session()
        if sess is not None and sess.graph is self._graph:
            for v, z in values:
                v.load(z, sess)
            return
        with self._graph.as_default():
            _backend.batch_set_value(values)

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<tf.keras.metrics.{type(self).__name__} {self.name!r}>"


# ---- shapes and weights ------------------------------------------------------------------------
def _t(x, dtype=None):
    x = convert_to_tensor(x)
    return x if dtype is None or x.dtype == dtype else M.cast(x, dtype)


def _squeeze_or_expand(y_pred, y_true=None, sample_weight=None):
    """Keras' squeeze_or_expand_dimensions: a trailing dimension of 1 dropped where one of
    y_pred / y_true has rank one more than the other; weights of rank one less expanded,
    one more squeezed."""
    if y_true is not None:
        rp, rt = y_pred.shape.ndims, y_true.shape.ndims
        if rp is not None and rt is not None:
            if rp - rt == 1 and y_pred.shape.as_list()[-1] == 1:
                y_pred = A.squeeze(y_pred, [-1])
            elif rt - rp == 1 and y_true.shape.as_list()[-1] == 1:
                y_true = A.squeeze(y_true, [-1])
    if sample_weight is None:
        return y_pred, y_true, None
    rw, rp = sample_weight.shape.ndims, y_pred.shape.ndims
    if rw is not None and rp is not None and rw != 0:
        if rw - rp == 1:
            if sample_weight.shape.as_list()[-1] not in (1, None):
                raise InvalidArgumentError(f"sample_weight of shape {sample_weight.shape} "
                                           f"does not fit values of shape {y_pred.shape}")
            sample_weight = A.squeeze(sample_weight, [-1])
        elif rp - rw == 1:
            sample_weight = A.expand_dims(sample_weight, -1)
    return y_pred, y_true, sample_weight


class _NotBroadcastable(InvalidArgumentError):
    pass


def _broadcast_weights(weights, values):
    """weights * ones_like(values), where weights' shape broadcasts to values' (rank 0, or
    the same rank with each dimension 1 or equal)."""
    ws, vs = weights.shape, values.shape
    if ws.ndims == 0:
        return M.multiply(weights, A.ones_like(values))
    if ws.ndims is not None and vs.ndims is not None:
        if ws.ndims != vs.ndims:
            raise _NotBroadcastable(f"weights can not be broadcast to values. values.rank="
                                    f"{vs.ndims}. weights.rank={ws.ndims}.")
        for w, v in zip(ws.as_list(), vs.as_list()):
            if w not in (1, None) and v is not None and w != v:
                raise _NotBroadcastable(f"weights can not be broadcast to values: shapes "
                                        f"{ws} and {vs}")
        if ws.is_fully_defined() and ws.as_list() == vs.as_list():
            return weights
    return M.multiply(weights, A.ones_like(values))


# ---- Reduce: Sum, Mean ------------------------------------------------------------------------
class Reduce(Metric):
    """The (weighted) sum, or mean, of the values seen ('sum', 'weighted_mean' or
    'sum_over_batch_size')."""

    def __init__(self, reduction, name, dtype=None):
        if reduction not in ("sum", "weighted_mean", "sum_over_batch_size"):
            raise InvalidArgumentError(f"reduction [{reduction}] not implemented")
        super().__init__(name=name, dtype=dtype)
        self.reduction = reduction
        self.total = self.add_weight("total")
        if reduction != "sum":
            self.count = self.add_weight("count")

    def update_state(self, values, sample_weight=None):
        values = _t(values, self._dtype)
        if sample_weight is not None:
            sample_weight = _t(sample_weight, self._dtype)
            values, _, sample_weight = _squeeze_or_expand(values, sample_weight=sample_weight)
            try:
                sample_weight = _broadcast_weights(sample_weight, values)
            except _NotBroadcastable:
                nv, nw = values.shape.ndims, sample_weight.shape.ndims
                red = M.reduce_sum if self.reduction == "sum" else M.reduce_mean
                values = red(values, axis=list(range(nw, nv)))
            values = M.multiply(values, sample_weight)
        value_sum = M.reduce_sum(values)
        with control_dependencies([value_sum]):
            update_total = self.total.assign_add(value_sum)
        if self.reduction == "sum":
            return update_total
        if self.reduction == "sum_over_batch_size" or sample_weight is None:
            num = M.cast(A.size(values), self._dtype)
        else:
            num = M.reduce_sum(sample_weight)
        with control_dependencies([update_total]):
            return self.count.assign_add(num)

    def result(self):
        if self.reduction == "sum":
            return A.identity(self.total)
        return div_no_nan(self.total.read_value(), self.count.read_value())


class Sum(Reduce):
    """The (weighted) sum of the values: [1, 3, 5, 7] -> 16; weights [1, 1, 0, 0] -> 4."""

    def __init__(self, name="sum", dtype=None):
        super().__init__("sum", name=name, dtype=dtype)


class Mean(Reduce):
    """The (weighted) mean of the values: [1, 3, 5, 7] -> 4; weights [1, 1, 0, 0] -> 2."""

    def __init__(self, name="mean", dtype=None):
        super().__init__("weighted_mean", name=name, dtype=dtype)


class MeanMetricWrapper(Mean):
    """The mean of fn(y_true, y_pred, **kwargs) (a per-example metric function)."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = _t(y_true, self._dtype)
        y_pred = _t(y_pred, self._dtype)
        y_pred, y_true, _ = _squeeze_or_expand(y_pred, y_true)
        matches = self._fn(y_true, y_pred, **self._fn_kwargs)
        return super().update_state(matches, sample_weight=sample_weight)

    def get_config(self) -> dict:
        return {**super().get_config(), **self._fn_kwargs}

    @classmethod
    def from_config(cls, config):
        if cls is MeanMetricWrapper:
            raise InvalidArgumentError("MeanMetricWrapper has no config for its function")
        return cls(**config)


class MeanRelativeError(Mean):
    """mean(|y_pred - y_true| / normalizer)."""

    def __init__(self, normalizer, name=None, dtype=None):
        super().__init__(name=name or "mean_relative_error", dtype=dtype)
        self._normalizer_value = normalizer
        with self._graph.as_default():
            self.normalizer = _t(normalizer, self._dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = _t(y_true, self._dtype)
        y_pred = _t(y_pred, self._dtype)
        y_pred, y_true, _ = _squeeze_or_expand(y_pred, y_true)
        y_pred, norm, _ = _squeeze_or_expand(y_pred, self.normalizer)
        if not y_pred.shape.is_compatible_with(y_true.shape):
            raise InvalidArgumentError(f"Shapes {y_pred.shape} and {y_true.shape} are "
                                       f"incompatible")
        rel = div_no_nan(M.abs(M.subtract(y_true, y_pred)), norm)
        return super().update_state(rel, sample_weight=sample_weight)

    def get_config(self) -> dict:
        n = self._normalizer_value
        return {**super().get_config(), "normalizer": np.asarray(n).tolist()
                if not hasattr(n, "op") else n}


class MeanTensor(Metric):
    """The elementwise (weighted) mean of same-shaped tensors; the state is made on the first
    update, with that shape."""

    def __init__(self, name="mean_tensor", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._shape = None
        self._total = self._count = None

    total = property(lambda self: self._total)
    count = property(lambda self: self._count)

    def update_state(self, values, sample_weight=None):
        values = _t(values, self._dtype)
        if self._shape is None:
            if not values.shape.is_fully_defined():
                raise InvalidArgumentError(f"MeanTensor needs values of a known shape, got "
                                           f"{values.shape}")
            self._shape = values.shape
            self._total = self.add_weight("total", shape=values.shape.as_list())
            self._count = self.add_weight("count", shape=values.shape.as_list())
        elif values.shape.as_list() != self._shape.as_list():
            raise InvalidArgumentError(f"MeanTensor input values must always have the same "
                                       f"shape. Expected shape (set during the first call): "
                                       f"{self._shape}. Got: {values.shape}")
        num = A.ones_like(values)
        if sample_weight is not None:
            sample_weight = _t(sample_weight, self._dtype)
            values, _, sample_weight = _squeeze_or_expand(values, sample_weight=sample_weight)
            try:
                sample_weight = _broadcast_weights(sample_weight, values)
            except _NotBroadcastable:
                nv, nw = values.shape.ndims, sample_weight.shape.ndims
                values = M.reduce_mean(values, axis=list(range(nw, nv)))
            num = M.multiply(num, sample_weight)
            values = M.multiply(values, sample_weight)
        update_total = self._total.assign_add(values)
        with control_dependencies([update_total]):
            return self._count.assign_add(num)

    def result(self):
        if self._shape is None:
            raise InvalidArgumentError("MeanTensor does not have any result yet. Please call "
                                       "the MeanTensor instance or use `.update_state(value)` "
                                       "before retrieving the result.")
        return div_no_nan(self._total.read_value(), self._count.read_value())


# ---- the per-example metric functions the wrappers average ------------------------------------
def _accuracy(y_true, y_pred):
    if not y_pred.shape.is_compatible_with(y_true.shape):
        raise InvalidArgumentError(f"Shapes {y_pred.shape} and {y_true.shape} are "
                                   f"incompatible")
    if y_pred.dtype != y_true.dtype:
        y_pred = M.cast(y_pred, y_true.dtype)
    return M.cast(M.equal(y_true, y_pred), _F32)


def _binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0):
    if label_smoothing:
        ls = y_true.dtype.as_numpy_dtype(label_smoothing)
        y_true = y_true * (1 - ls) + 0.5 * ls
    return M.reduce_mean(_K.binary_crossentropy(y_true, y_pred, from_logits), axis=-1)


def _categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0):
    if label_smoothing:
        ls = y_true.dtype.as_numpy_dtype(label_smoothing)
        n = M.cast(A.shape(y_true)[-1], y_true.dtype)
        y_true = y_true * (1 - ls) + ls / n
    return _K.categorical_crossentropy(y_true, y_pred, from_logits)


def _sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    return _K.sparse_categorical_crossentropy(y_true, y_pred, from_logits, axis)


def _hinge_labels(y_true):
    """Labels in {0, 1} become {-1, 1} (as Keras' hinge losses); others stay."""
    binary = M.reduce_all(M.logical_or(M.equal(y_true, 0), M.equal(y_true, 1)))
    flag = M.cast(binary, y_true.dtype)
    return y_true + flag * (y_true - 1)


def _hinge(y_true, y_pred):
    return _L.hinge(_hinge_labels(y_true), y_pred)


def _squared_hinge(y_true, y_pred):
    return _L.squared_hinge(_hinge_labels(y_true), y_pred)


def _categorical_hinge(y_true, y_pred):
    pos = M.reduce_sum(y_true * y_pred, axis=-1)
    neg = M.reduce_max((1 - y_true) * y_pred, axis=-1)
    return M.maximum(neg - pos + 1, 0)


def _cosine_similarity(y_true, y_pred, axis=-1):
    return M.reduce_sum(l2_normalize(y_true, axis) * l2_normalize(y_pred, axis), axis=axis)


def _wrapper(cls_name, fn, default_name, doc, **defaults):
    """A MeanMetricWrapper class: __init__(name=default_name, dtype=None, **defaults)."""
    def __init__(self, name=default_name, dtype=None, **kwargs):
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{cls_name}() got an unexpected keyword argument "
                            f"{sorted(unknown)[0]!r}")
        MeanMetricWrapper.__init__(self, fn, name, dtype=dtype, **{**defaults, **kwargs})
    return type(cls_name, (MeanMetricWrapper,), {"__init__": __init__, "__doc__": doc,
                                                  "__module__": __name__})


Accuracy = _wrapper("Accuracy", _accuracy, "accuracy",
                    "How often y_pred equals y_true: [1, 2, 3, 4] vs [0, 2, 3, 4] -> 0.75.")
BinaryAccuracy = _wrapper("BinaryAccuracy", binary_accuracy, "binary_accuracy",
                          "How often y_true equals y_pred > threshold.", threshold=0.5)
CategoricalAccuracy = _wrapper("CategoricalAccuracy", categorical_accuracy,
                               "categorical_accuracy",
                               "How often argmax(y_pred) is argmax(y_true) (one-hot labels).")
SparseCategoricalAccuracy = _wrapper("SparseCategoricalAccuracy", sparse_categorical_accuracy,
                                     "sparse_categorical_accuracy",
                                     "How often argmax(y_pred) is the integer label.")
TopKCategoricalAccuracy = _wrapper("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                   "top_k_categorical_accuracy",
                                   "How often argmax(y_true) is among y_pred's k largest.", k=5)
SparseTopKCategoricalAccuracy = _wrapper(
    "SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy", "How often the integer label is among y_pred's k "
    "largest.", k=5)
MeanSquaredError = _wrapper("MeanSquaredError", _L.mean_squared_error, "mean_squared_error",
                            "mean((y_pred - y_true) ** 2).")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", _L.mean_absolute_error,
                             "mean_absolute_error", "mean(|y_pred - y_true|).")
MeanAbsolutePercentageError = _wrapper(
    "MeanAbsolutePercentageError", _L.mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "100 * mean(|y_true - y_pred| / max(|y_true|, eps)).")
MeanSquaredLogarithmicError = _wrapper(
    "MeanSquaredLogarithmicError", _L.mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "mean((log(y_pred + 1) - log(y_true + 1)) ** 2).")
Hinge = _wrapper("Hinge", _hinge, "hinge", "mean(max(1 - y_true * y_pred, 0)); labels in "
                 "{0, 1} are taken as {-1, 1}.")
SquaredHinge = _wrapper("SquaredHinge", _squared_hinge, "squared_hinge",
                        "mean(max(1 - y_true * y_pred, 0) ** 2); labels in {0, 1} are "
                        "taken as {-1, 1}.")
CategoricalHinge = _wrapper("CategoricalHinge", _categorical_hinge, "categorical_hinge",
                            "max(0, max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1).")
KLDivergence = _wrapper("KLDivergence", _L.kullback_leibler_divergence,
                        "kullback_leibler_divergence", "sum(y_true * log(y_true / y_pred)).")
LogCoshError = _wrapper("LogCoshError", _L.logcosh, "logcosh",
                        "mean(log(cosh(y_pred - y_true))).")
Poisson = _wrapper("Poisson", _L.poisson, "poisson", "mean(y_pred - y_true * log(y_pred)).")
CosineSimilarity = _wrapper("CosineSimilarity", _cosine_similarity, "cosine_similarity",
                            "sum(l2_normalize(y_true) * l2_normalize(y_pred), axis).",
                            axis=-1)
BinaryCrossentropy = _wrapper("BinaryCrossentropy", _binary_crossentropy,
                              "binary_crossentropy", "Keras' binary crossentropy (mean over "
                              "the last axis).", from_logits=False, label_smoothing=0)
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", _categorical_crossentropy,
                                   "categorical_crossentropy", "Keras' categorical "
                                   "crossentropy of one-hot labels.", from_logits=False,
                                   label_smoothing=0)
SparseCategoricalCrossentropy = _wrapper(
    "SparseCategoricalCrossentropy", _sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy", "Keras' crossentropy of integer labels.",
    from_logits=False, axis=-1)


class RootMeanSquaredError(Mean):
    """sqrt(mean((y_pred - y_true) ** 2))."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = _t(y_true, self._dtype)
        y_pred = _t(y_pred, self._dtype)
        y_pred, y_true, _ = _squeeze_or_expand(y_pred, y_true)
        return super().update_state(M.squared_difference(y_pred, y_true),
                                    sample_weight=sample_weight)

    def result(self):
        return M.sqrt(div_no_nan(self.total.read_value(), self.count.read_value()))
