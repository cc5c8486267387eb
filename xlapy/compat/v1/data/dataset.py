"""tf.data for TF 1.x graphs, host-side: Dataset.from_tensor_slices / from_tensors / range,
.shuffle / .batch / .repeat / .take / .skip / .prefetch / .cache, and iterators whose
get_next() tensors feed the rest of the graph.

A Dataset is a description of a Python pipeline over NumPy arrays (nested in tuples and
dicts, as TF's element structures); nothing runs until a session runs get_next().
get_next() is an IteratorGetNext op with no XLA lowering: it runs in the executor and
hands the next element to the graph (a compiled cluster consumes it as an input). The
iteration state is per session and per iterator, as TF's: a one-shot iterator starts on
its first get_next in a session; an initializable iterator starts (again) when its
initializer runs. At the end, get_next raises OutOfRangeError("End of sequence").

shuffle is TF's buffered shuffle (a buffer of buffer_size elements, each output drawn
uniformly from it and replaced by the next input), seeded TF-style from the graph and op
seeds; with reshuffle_each_iteration every repetition is shuffled anew.
Dataset.map is not implemented (it needs graph functions run on the host).
"""

from __future__ import annotations

import itertools

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import (FailedPreconditionError, InvalidArgumentError,
                                    OutOfRangeError, UnimplementedError)
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops._common import constant_value, make_op
from xlapy.compat.v1.tensor_shape import TensorShape


# ---- element structures -------------------------------------------------------------------

def _flatten(s):
    if isinstance(s, dict):
        return [x for k in sorted(s) for x in _flatten(s[k])]
    if isinstance(s, tuple):
        return [x for v in s for x in _flatten(v)]
    return [s]


def _pack(structure, flat):
    it = iter(flat)

    def build(s):
        if isinstance(s, dict):
            return {k: build(s[k]) for k in sorted(s)}
        if isinstance(s, tuple):
            vals = [build(v) for v in s]
            return type(s)(*vals) if hasattr(s, "_fields") else tuple(vals)
        return next(it)
    return build(structure)


def _map_structure(fn, s):
    return _pack(s, [fn(x) for x in _flatten(s)])


class _Spec:
    """A leaf of an element structure: its dtype and (partial) shape."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, shape


def _to_array(x):
    if hasattr(x, "op"):  # a Tensor: its value must be known when the graph is built
        v = constant_value(x)
        if v is None:
            raise UnimplementedError(f"tf.data here reads NumPy values (or constant tensors); "
                                     f"{x.name} is computed by the graph. Feed the values as "
                                     "arrays instead")
        return np.asarray(v, dtype=x.dtype.np)
    if isinstance(x, np.ndarray):
        return x
    a = np.asarray(x)
    if a.dtype == np.float64 and not isinstance(x, np.generic):
        return a.astype(np.float32)  # Python floats become float32, as convert_to_tensor
    if a.dtype == np.int64 and not isinstance(x, np.generic):
        return a.astype(np.int32)
    if a.dtype.kind == "U":
        return a.astype(object)
    return a


def _dtype(a: np.ndarray):
    return dtypes.string if a.dtype == object or a.dtype.kind in "SU" else dtypes.as_dtype(
        a.dtype)


# ---- datasets -------------------------------------------------------------------------------

class Dataset:
    """A pipeline: `_elements(seed_rng)` yields the elements; `_structure` holds
    (dtype, TensorShape) leaves in the element's nesting."""

    def __init__(self, elements, structure):
        self._elements = elements
        self._structure = structure

    @property
    def output_types(self):
        return _map_structure(lambda leaf: leaf.dtype, self._structure)

    @property
    def output_shapes(self):
        return _map_structure(lambda leaf: leaf.shape, self._structure)

    @property
    def output_classes(self):
        from xlapy.compat.v1.framework import Tensor
        return _map_structure(lambda leaf: Tensor, self._structure)

    # -- sources
    @staticmethod
    def from_tensor_slices(tensors):
        arrays = _map_structure(_to_array, tensors)
        flat = _flatten(arrays)
        if any(a.ndim == 0 for a in flat):
            raise InvalidArgumentError("from_tensor_slices: every component must have at "
                                       "least one dimension to slice")
        n = flat[0].shape[0]
        if any(a.shape[0] != n for a in flat):
            raise InvalidArgumentError(f"from_tensor_slices: all components must have the same "
                                       f"first dimension, got {[a.shape[0] for a in flat]}")
        structure = _map_structure(lambda a: _Spec(_dtype(a), TensorShape(a.shape[1:])),
                                   arrays)

        def elements(rng_for):
            for i in range(n):
                yield [a[i] for a in flat]
        return Dataset(elements, structure)

    @staticmethod
    def from_tensors(tensors):
        arrays = _map_structure(_to_array, tensors)
        flat = _flatten(arrays)
        structure = _map_structure(lambda a: _Spec(_dtype(a), TensorShape(a.shape)), arrays)
        return Dataset(lambda rng_for: iter([list(flat)]), structure)

    @staticmethod
    def range(*args, output_type=dtypes.int64):
        r = range(*[int(a) for a in args])
        dt = dtypes.as_dtype(output_type)
        return Dataset(lambda rng_for: ([np.asarray(i, dt.np)] for i in r),
                       _Spec(dt, TensorShape([])))

    # -- transformations
    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        from xlapy.compat.v1.ops.random_ops import get_seed
        size = int(buffer_size)
        if size <= 0:
            raise InvalidArgumentError(f"buffer_size must be greater than zero, got {size}")
        s1, s2 = get_seed(seed)
        src = self._elements
        key = object()

        def elements(rng_for):
            rng = rng_for(key, s1, s2, reshuffle_each_iteration)
            buf = []
            for e in src(rng_for):
                buf.append(e)
                if len(buf) == size:
                    i = int(rng.integers(len(buf)))
                    buf[i], buf[-1] = buf[-1], buf[i]
                    yield buf.pop()
            while buf:
                i = int(rng.integers(len(buf)))
                buf[i], buf[-1] = buf[-1], buf[i]
                yield buf.pop()
        return Dataset(elements, self._structure)

    def batch(self, batch_size, drop_remainder=False):
        b = int(batch_size)
        if b <= 0:
            raise InvalidArgumentError(f"batch_size must be greater than zero, got {b}")
        src = self._elements

        def elements(rng_for):
            it = src(rng_for)
            while True:
                chunk = list(itertools.islice(it, b))
                if not chunk or (drop_remainder and len(chunk) < b):
                    return
                yield [np.stack(parts) for parts in zip(*chunk)]
        structure = _map_structure(
            lambda leaf: _Spec(leaf.dtype, TensorShape([b if drop_remainder else None])
                               .concatenate(leaf.shape)), self._structure)
        return Dataset(elements, structure)

    def repeat(self, count=None):
        n = None if count is None or int(count) < 0 else int(count)
        src = self._elements

        def elements(rng_for):
            for _ in (itertools.count() if n is None else range(n)):
                empty = True
                for e in src(rng_for):
                    empty = False
                    yield e
                if empty:
                    return
        return Dataset(elements, self._structure)

    def take(self, count):
        n = int(count)
        src = self._elements
        return Dataset(lambda rng_for: itertools.islice(src(rng_for), None if n < 0 else n),
                       self._structure)

    def skip(self, count):
        n = int(count)
        src = self._elements
        return Dataset(lambda rng_for: itertools.islice(src(rng_for), n if n >= 0 else None,
                                                        None) if n >= 0 else iter(()),
                       self._structure)

    def prefetch(self, buffer_size):
        return self  # elements are produced on demand on the host: the same sequence

    def cache(self, filename=""):
        if filename:
            raise UnimplementedError("Dataset.cache(filename): only the in-memory cache is "
                                     "supported")
        return self  # the sources are in memory already: the same sequence

    def map(self, map_func, num_parallel_calls=None):
        raise UnimplementedError("Dataset.map is not implemented in xlapy.compat.v1: apply the "
                                 "function to get_next()'s tensors in the graph instead")

    # -- iterators
    def make_one_shot_iterator(self):
        return Iterator(self, initializable=False)

    def make_initializable_iterator(self, shared_name=None):
        return Iterator(self, initializable=True)


class Iterator:
    def __init__(self, dataset, initializable):
        self._dataset = dataset
        self._initializable = initializable
        self._initializer = None
        if initializable:
            self._initializer = make_op("MakeIterator", [], {"iterator": self},
                                        name="MakeIterator")

    output_types = property(lambda self: self._dataset.output_types)
    output_shapes = property(lambda self: self._dataset.output_shapes)
    output_classes = property(lambda self: self._dataset.output_classes)

    @property
    def initializer(self):
        if self._initializer is None:
            raise InvalidArgumentError("a one-shot iterator has no initializer; use "
                                       "make_initializable_iterator()")
        return self._initializer

    def get_next(self, name=None):
        leaves = _flatten(self._dataset._structure)
        op = make_op("IteratorGetNext", [], {
            "iterator": self, "output_types": [leaf.dtype for leaf in leaves],
            "output_shapes": [leaf.shape for leaf in leaves]}, name=name or "IteratorGetNext")
        return _pack(self._dataset._structure, list(op.outputs))

    def _start(self, session):
        state = _session_state(session)
        seeds, gens = {}, {}

        def rng_for(key, s1, s2, reshuffle):
            """The shuffle's generator: one per iterator start, continuing across
            repetitions (reshuffle_each_iteration), or restarted from the same seed."""
            if key not in seeds:
                seeds[key] = [s1, s2] if s1 is not None else \
                    list(np.random.SeedSequence().generate_state(2))
                gens[key] = np.random.default_rng(seeds[key])
            return gens[key] if reshuffle else np.random.default_rng(seeds[key])
        state[id(self)] = iter(self._dataset._elements(rng_for))


def _session_state(session) -> dict:
    if not hasattr(session, "_xlapy_iterators"):
        session._xlapy_iterators = {}
    return session._xlapy_iterators


def make_one_shot_iterator(dataset):
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    return dataset.make_initializable_iterator(shared_name)


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


# ---- the ops ------------------------------------------------------------------------------

@register_op("IteratorGetNext", lowering=None, stateful=True,
             infer=lambda op: list(zip(op.get_attr("output_types"),
                                       op.get_attr("output_shapes"))))
def _get_next(m):
    raise AssertionError("IteratorGetNext runs through its executor hook")


@register_op("MakeIterator", lowering=None, stateful=True, infer=lambda op: [])
def _make_iterator(m):
    raise AssertionError("MakeIterator runs through its executor hook")


def _get_next_executor(session, op):
    it = op.get_attr("iterator")
    state = _session_state(session)

    def run():
        if id(it) not in state:
            if it._initializable:
                raise FailedPreconditionError(
                    "GetNext() failed because the iterator has not been initialized. Ensure "
                    "that you have run the initializer operation for this iterator before "
                    f"getting the next element.\n\t [[{op.name}]]", op=op)
            it._start(session)
        try:
            return next(state[id(it)])
        except StopIteration:
            raise OutOfRangeError(f"End of sequence\n\t [[{op.name}]]", op=op) from None
    return run


def _make_iterator_executor(session, op):
    it = op.get_attr("iterator")

    def run():
        it._start(session)
        return []
    return run


get_op_def("IteratorGetNext").extra.update(executor=_get_next_executor)
get_op_def("MakeIterator").extra.update(executor=_make_iterator_executor)
not_differentiable("IteratorGetNext", "MakeIterator")
