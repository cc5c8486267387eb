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
Dataset.map builds its function's ops in a function graph (as loop bodies are) and runs
them in the executor for each element; tensors of the enclosing graph it reads become
inputs of get_next.
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


def _as_graph_tensor(x):
    from xlapy.compat.v1.framework import convert_to_tensor
    return convert_to_tensor(x)


def _dtype(a: np.ndarray):
    return dtypes.string if a.dtype == object or a.dtype.kind in "SU" else dtypes.as_dtype(
        a.dtype)


# ---- datasets -------------------------------------------------------------------------------

class Dataset:
    """A pipeline: `_elements(seed_rng)` yields the elements; `_structure` holds
    (dtype, TensorShape) leaves in the element's nesting."""

    def __init__(self, elements, structure, captures=()):
        self._elements = elements
        self._structure = structure
        self._captures = list(captures)  # outer tensors map functions read

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

        def elements(ctx):
            for i in range(n):
                yield [a[i] for a in flat]
        return Dataset(elements, structure)

    @staticmethod
    def from_tensors(tensors):
        arrays = _map_structure(_to_array, tensors)
        flat = _flatten(arrays)
        structure = _map_structure(lambda a: _Spec(_dtype(a), TensorShape(a.shape)), arrays)
        return Dataset(lambda ctx: iter([list(flat)]), structure)

    @staticmethod
    def range(*args, output_type=dtypes.int64):
        r = range(*[int(a) for a in args])
        dt = dtypes.as_dtype(output_type)
        return Dataset(lambda ctx: ([np.asarray(i, dt.np)] for i in r),
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

        def elements(ctx):
            rng = ctx.rng(key, s1, s2, reshuffle_each_iteration)
            buf = []
            for e in src(ctx):
                buf.append(e)
                if len(buf) == size:
                    i = int(rng.integers(len(buf)))
                    buf[i], buf[-1] = buf[-1], buf[i]
                    yield buf.pop()
            while buf:
                i = int(rng.integers(len(buf)))
                buf[i], buf[-1] = buf[-1], buf[i]
                yield buf.pop()
        return Dataset(elements, self._structure, self._captures)

    def batch(self, batch_size, drop_remainder=False):
        b = int(batch_size)
        if b <= 0:
            raise InvalidArgumentError(f"batch_size must be greater than zero, got {b}")
        src = self._elements

        def elements(ctx):
            it = src(ctx)
            while True:
                chunk = list(itertools.islice(it, b))
                if not chunk or (drop_remainder and len(chunk) < b):
                    return
                yield [np.stack(parts) for parts in zip(*chunk)]
        structure = _map_structure(
            lambda leaf: _Spec(leaf.dtype, TensorShape([b if drop_remainder else None])
                               .concatenate(leaf.shape)), self._structure)
        return Dataset(elements, structure, self._captures)

    def repeat(self, count=None):
        n = None if count is None or int(count) < 0 else int(count)
        src = self._elements

        def elements(ctx):
            for _ in (itertools.count() if n is None else range(n)):
                empty = True
                for e in src(ctx):
                    empty = False
                    yield e
                if empty:
                    return
        return Dataset(elements, self._structure, self._captures)

    def take(self, count):
        n = int(count)
        src = self._elements
        return Dataset(lambda ctx: itertools.islice(src(ctx), None if n < 0 else n),
                       self._structure, self._captures)

    def skip(self, count):
        n = int(count)
        src = self._elements
        return Dataset(lambda ctx: itertools.islice(src(ctx), n if n >= 0 else None,
                                                        None) if n >= 0 else iter(()),
                       self._structure, self._captures)

    def prefetch(self, buffer_size):
        return self  # elements are produced on demand on the host: the same sequence

    def cache(self, filename=""):
        if filename:
            raise UnimplementedError("Dataset.cache(filename): only the in-memory cache is "
                                     "supported")
        return self  # the sources are in memory already: the same sequence

    def map(self, map_func, num_parallel_calls=None):
        """map_func builds graph ops on the element's tensors (a tuple element is passed as
        positional arguments); they run in the executor for each element, inside
        get_next. Tensors of the enclosing graph it uses are read at each get_next."""
        from xlapy.compat.v1.framework import get_default_graph
        from xlapy.compat.v1.ops.functional import FuncGraph, Function, placeholder_in
        fg = FuncGraph("dataset_map", get_default_graph())
        leaves = _flatten(self._structure)
        with fg.as_default():
            phs = [placeholder_in(fg, leaf.dtype, leaf.shape, f"arg{i}")
                   for i, leaf in enumerate(leaves)]
            args = _pack(self._structure, phs)
            out = map_func(*args) if isinstance(args, tuple) and not hasattr(args, "_fields") \
                else map_func(args)
            if isinstance(out, list):
                out = tuple(out)
            out = _map_structure(lambda t: fg.capture(t) if hasattr(t, "graph") and
                                 t.graph is not fg else _as_graph_tensor(t), out)
        flat_out = _flatten(out)
        n_caps = len(fg.captured)
        fn = Function(fg, phs + [fg.captures[t] for t in fg.captured], flat_out)
        structure = _map_structure(lambda t: _Spec(t.dtype, t.shape), out)
        src, first = self._elements, len(self._captures)

        def elements(ctx):
            from xlapy.compat.v1.ops.functional import executor_runner
            run = executor_runner(ctx.session, fn)
            for e in src(ctx):
                caps = ctx.captures[first:first + n_caps]
                yield [np.asarray(v) for v in run(*e, *caps)]
        return Dataset(elements, structure, self._captures + list(fg.captured))

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
        op = make_op("IteratorGetNext", list(self._dataset._captures), {
            "iterator": self, "output_types": [leaf.dtype for leaf in leaves],
            "output_shapes": [leaf.shape for leaf in leaves]}, name=name or "IteratorGetNext")
        return _pack(self._dataset._structure, list(op.outputs))

    def _start(self, session):
        _session_state(session)[id(self)] = _Run(self._dataset, session)


class _Run:
    """One pass of an iterator in one session: the pipeline's generator and what its
    stages need (the session, the shuffle generators, the captured tensors' values)."""

    def __init__(self, dataset, session):
        self.session = session
        self.captures: list = []
        self._seeds: dict = {}
        self._gens: dict = {}
        self._it = iter(dataset._elements(self))

    def rng(self, key, s1, s2, reshuffle):
        """The shuffle's generator: one per iterator start, continuing across repetitions
        (reshuffle_each_iteration), or restarted from the same seed."""
        if key not in self._seeds:
            self._seeds[key] = [s1, s2] if s1 is not None else \
                list(np.random.SeedSequence().generate_state(2))
            self._gens[key] = np.random.default_rng(self._seeds[key])
        return self._gens[key] if reshuffle else np.random.default_rng(self._seeds[key])

    def next(self, captures):
        self.captures = list(captures)
        return next(self._it)


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

    def run(*captures):
        if id(it) not in state:
            if it._initializable:
                raise FailedPreconditionError(
                    "GetNext() failed because the iterator has not been initialized. Ensure "
                    "that you have run the initializer operation for this iterator before "
                    f"getting the next element.\n\t [[{op.name}]]", op=op)
            it._start(session)
        try:
            return state[id(it)].next(captures)
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
