"""tf.data for TF 1.x graphs, host-side: Dataset.from_tensor_slices / from_tensors / range,
.shuffle / .batch / .repeat / .take / .skip / .prefetch / .cache, and iterators whose
get_next() tensors feed the rest of the graph.

A Dataset is a description of a Python pipeline over NumPy arrays (nested in tuples and
dicts, as TF's element structures); nothing runs until a session runs get_next(). Source
tensors computed by the graph (placeholders fed to the initializer, TF's recommended way
to feed large arrays) are read when the iterator starts.
get_next() is an IteratorGetNext op with no XLA lowering: it runs in the executor and
hands the next element to the graph (a compiled cluster consumes it as an input). The
iteration state is per session and per iterator, as TF's: a one-shot iterator starts on
its first get_next in a session; an initializable iterator starts (again) when its
initializer runs. At the end, get_next raises OutOfRangeError("End of sequence").

Tensors of the graph that map functions use are read when the iterator starts (its
initializer runs, or a one-shot iterator's first get_next), as TF evaluates a dataset's
captured inputs at initialization. Iterator.from_structure(types, shapes) with
make_initializer(dataset) switches one iterator between datasets (training, validation).

shuffle is TF's buffered shuffle (a buffer of buffer_size elements, each output drawn
uniformly from it and replaced by the next input), seeded TF-style from the graph and op
seeds; with reshuffle_each_iteration every repetition is shuffled anew.
Dataset.map builds its function's ops in a function graph (as loop bodies are) and runs
them in the executor for each element.
"""

from __future__ import annotations

import itertools

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.data.structure import (_common_shape, _count_arg, _count_value, _dtype,
                                            _flatten, _flatten_datasets, _flatten_shapes,
                                            _function_of, _Graph, _map_structure, _pack,
                                            _source_captures, _source_values, _Spec,
                                            _to_array)
from xlapy.compat.v1.data.sparse_elements import (batch_sparse, collapse, expand,
                                                  is_sparse_spec, outputs, placeholders,
                                                  refuse)
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.tensor_shape import TensorShape


class Dataset:
    """A pipeline: `_elements(seed_rng)` yields the elements; `_structure` holds
    (dtype, TensorShape) leaves in the element's nesting."""

    def __init__(self, elements, structure, captures=()):
        self._elements = elements
        self._structure = structure
        self._captures = list(captures)  # (stage key, outer tensor) its functions read

    @property
    def output_types(self):
        return _map_structure(lambda leaf: leaf.dtype, self._structure)

    @property
    def output_shapes(self):
        return _map_structure(lambda leaf: leaf.shape, self._structure)

    @property
    def output_classes(self):
        from xlapy.compat.v1.framework import Tensor
        from xlapy.compat.v1.sparse_tensor import SparseTensor
        return _map_structure(lambda leaf: SparseTensor if is_sparse_spec(leaf) else Tensor,
                              self._structure)

    # -- sources
    @staticmethod
    def from_tensor_slices(tensors):
        """Slices of `tensors` along their first dimension. Components computed by the graph
        (placeholders, typically) are read when the iterator starts: run its initializer
        with their feed, as in TF."""
        arrays = _map_structure(_to_array, tensors)
        flat = _flatten(arrays)
        shapes = [a.tensor.shape if isinstance(a, _Graph) else TensorShape(a.shape)
                  for a in flat]
        if any(sh.ndims == 0 for sh in shapes):
            raise InvalidArgumentError("from_tensor_slices: every component must have at "
                                       "least one dimension to slice")
        firsts = {sh.dims[0] for sh in shapes if sh.ndims is not None} - {None}
        if len(firsts) > 1:
            raise InvalidArgumentError(f"from_tensor_slices: all components must have the same "
                                       f"first dimension, got {sorted(firsts)}")
        structure = _pack(arrays, [
            _Spec(a.tensor.dtype if isinstance(a, _Graph) else _dtype(a),
                  TensorShape(None) if sh.ndims is None else TensorShape(sh.dims[1:]))
            for a, sh in zip(flat, shapes)])

        def elements(ctx):
            vals = _source_values(flat, ctx)
            n = vals[0].shape[0]
            if any(v.ndim == 0 or v.shape[0] != n for v in vals):
                raise InvalidArgumentError("from_tensor_slices: all components must have the "
                                           "same first dimension, got "
                                           f"{[v.shape[:1] for v in vals]}")
            for i in range(n):
                yield [v[i] for v in vals]
        return Dataset(elements, structure, _source_captures(flat))

    @staticmethod
    def from_tensors(tensors):
        arrays = _map_structure(_to_array, tensors)
        flat = _flatten(arrays)
        structure = _pack(arrays, [
            _Spec(a.tensor.dtype, a.tensor.shape) if isinstance(a, _Graph)
            else _Spec(_dtype(a), TensorShape(a.shape)) for a in flat])
        return Dataset(lambda ctx: iter([_source_values(flat, ctx)]), structure,
                       _source_captures(flat))

    @staticmethod
    def range(*args, output_type=dtypes.int64):
        """start, stop, step as Python's range (tensors are read when the iterator
        starts)."""
        if not 1 <= len(args) <= 3:
            raise InvalidArgumentError(f"range takes 1 to 3 arguments, got {len(args)}")
        dt = dtypes.as_dtype(output_type)
        caps: list = []
        parts = []
        for a in args:
            v, caps = _count_arg(a, caps)
            parts.append(v)

        def elements(ctx):
            r = range(*[_count_value(v, ctx) for v in parts])
            return ([np.asarray(i, dt.np)] for i in r)
        return Dataset(elements, _Spec(dt, TensorShape([])), caps)

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
        sparse = [is_sparse_spec(leaf) for leaf in _flatten(self._structure)]

        def elements(ctx):
            it = src(ctx)
            while True:
                chunk = list(itertools.islice(it, b))
                if not chunk or (drop_remainder and len(chunk) < b):
                    return
                yield [batch_sparse(parts) if sp else np.stack(parts)
                       for parts, sp in zip(zip(*chunk), sparse)]
        structure = _map_structure(
            lambda leaf: type(leaf)(leaf.dtype, TensorShape([b if drop_remainder else None])
                                    .concatenate(leaf.shape)), self._structure)
        return Dataset(elements, structure, self._captures)

    def padded_batch(self, batch_size, padded_shapes, padding_values=None,
                     drop_remainder=False):
        """Batches of elements padded (at the end of each dimension) to padded_shapes;
        an unknown (None / -1) dimension pads to the longest in the batch."""
        b = int(batch_size)
        if b <= 0:
            raise InvalidArgumentError(f"batch_size must be greater than zero, got {b}")
        leaves = _flatten(self._structure)
        refuse(leaves, "padded_batch")
        shapes = [TensorShape(None) if ps is None else TensorShape(
            [None if d is None or (isinstance(d, int) and d < 0) else d for d in ps])
            for ps in _flatten_shapes(padded_shapes, len(leaves))]
        pads = _flatten(padding_values) if padding_values is not None else [None] * len(leaves)
        if len(pads) != len(leaves):
            raise InvalidArgumentError("padded_batch: padding_values must have the element's "
                                       "structure")
        for leaf, ps in zip(leaves, shapes):
            if leaf.shape.ndims is not None and ps.ndims is not None and \
                    leaf.shape.ndims != ps.ndims:
                raise InvalidArgumentError(f"padded_batch: padded shape {ps.tf_str()} does not "
                                           f"have the element's rank {leaf.shape.ndims}")
        src = self._elements

        def pad_value(i):
            if pads[i] is not None:
                return np.asarray(pads[i])
            return np.asarray(b"" if leaves[i].dtype == dtypes.string else 0)

        def elements(ctx):
            it = src(ctx)
            while True:
                chunk = list(itertools.islice(it, b))
                if not chunk or (drop_remainder and len(chunk) < b):
                    return
                out = []
                for i, parts in enumerate(zip(*chunk)):
                    parts = [np.asarray(p) for p in parts]
                    target = [max(p.shape[k] for p in parts) if d is None else d
                              for k, d in enumerate(shapes[i].dims or [None] * parts[0].ndim)]
                    arr = np.full([len(parts)] + target, pad_value(i),
                                  dtype=parts[0].dtype)
                    for j, p in enumerate(parts):
                        if any(sz > t for sz, t in zip(p.shape, target)):
                            raise InvalidArgumentError(
                                f"padded_batch: an element of shape {list(p.shape)} is larger "
                                f"than the padded shape {target}")
                        arr[(j,) + tuple(slice(0, sz) for sz in p.shape)] = p
                    out.append(arr)
                yield out
        structure = _pack(self._structure, [
            _Spec(leaf.dtype, TensorShape([b if drop_remainder else None]).concatenate(ps))
            for leaf, ps in zip(leaves, shapes)])
        return Dataset(elements, structure, self._captures)

    def unbatch(self):
        """The rows of each element (the inverse of batch)."""
        refuse(_flatten(self._structure), "unbatch")
        src = self._elements

        def elements(ctx):
            for e in src(ctx):
                for row in zip(*e):
                    yield list(row)
        structure = _map_structure(lambda leaf: _Spec(
            leaf.dtype, TensorShape(None) if leaf.shape.ndims is None
            else TensorShape(leaf.shape.dims[1:])), self._structure)
        return Dataset(elements, structure, self._captures)

    def repeat(self, count=None):
        count, caps = _count_arg(count, self._captures)
        src = self._elements

        def elements(ctx):
            n = _count_value(count, ctx)
            for _ in (itertools.count() if n is None or n < 0 else range(n)):
                empty = True
                for e in src(ctx):
                    empty = False
                    yield e
                if empty:
                    return
        return Dataset(elements, self._structure, caps)

    def take(self, count):
        count, caps = _count_arg(count, self._captures)
        src = self._elements

        def elements(ctx):
            n = _count_value(count, ctx)
            return itertools.islice(src(ctx), None if n < 0 else n)
        return Dataset(elements, self._structure, caps)

    def skip(self, count):
        count, caps = _count_arg(count, self._captures)
        src = self._elements

        def elements(ctx):
            n = _count_value(count, ctx)
            return itertools.islice(src(ctx), n, None) if n >= 0 else iter(())
        return Dataset(elements, self._structure, caps)

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
        from xlapy.compat.v1.ops.functional import FuncGraph, Function
        fg = FuncGraph("dataset_map", get_default_graph())
        leaves = _flatten(self._structure)
        with fg.as_default():
            phs, leaf_args = placeholders(fg, leaves)
            args = _pack(self._structure, leaf_args)
            out = map_func(*args) if isinstance(args, tuple) and not hasattr(args, "_fields") \
                else map_func(args)
            if isinstance(out, list):
                out = tuple(out)
            flat_out, out_leaves = outputs(fg, _flatten(out))
        fn = Function(fg, phs + [fg.captures[t] for t in fg.captured], flat_out)
        structure = _pack(out, out_leaves)
        src, key = self._elements, object()

        def elements(ctx):
            from xlapy.compat.v1.ops.functional import executor_runner
            run = executor_runner(ctx.session, fn)
            caps = ctx.capture_values(key)
            for e in src(ctx):
                yield collapse(run(*expand(e, leaves), *caps), out_leaves)
        return Dataset(elements, structure,
                       self._captures + [(key, t) for t in fg.captured])

    def _per_element_dataset(self, map_func, name):
        """(inner dataset, Function computing its graph inputs from an element, keyed
        captures of the enclosing graph)."""
        from xlapy.compat.v1.framework import get_default_graph
        from xlapy.compat.v1.ops.functional import FuncGraph, Function
        fg = FuncGraph(name, get_default_graph())
        leaves = _flatten(self._structure)
        with fg.as_default():
            phs, leaf_args = placeholders(fg, leaves)
            args = _pack(self._structure, leaf_args)
            inner = map_func(*args) if isinstance(args, tuple) and \
                not hasattr(args, "_fields") else map_func(args)
            if not isinstance(inner, Dataset):
                raise InvalidArgumentError(f"{name}: map_func must return a Dataset, got "
                                           f"{type(inner).__name__}")
            outs = [t if t.graph is fg else fg.capture(t) for _, t in inner._captures]
        fn = Function(fg, phs + [fg.captures[t] for t in fg.captured], outs)
        key = object()
        return inner, fn, key, [(key, t) for t in fg.captured]

    def flat_map(self, map_func):
        """The elements of map_func(element)'s dataset, for each element in turn."""
        return self.interleave(map_func, cycle_length=1, block_length=1, _name="flat_map")

    def interleave(self, map_func, cycle_length=None, block_length=1,
                   num_parallel_calls=None, _name="interleave"):
        """Elements of the datasets map_func makes from cycle_length input elements at a
        time, block_length from each in turn (TF's deterministic order); a finished one is
        replaced by the dataset of the next input element."""
        c = 1 if cycle_length is None else int(cycle_length)
        k = int(block_length)
        if c < 1 or k < 1:
            raise InvalidArgumentError(f"{_name}: cycle_length and block_length must be >= 1")
        inner, fn, key, caps = self._per_element_dataset(map_func, _name)
        src, leaves = self._elements, _flatten(self._structure)

        def elements(ctx):
            from xlapy.compat.v1.ops.functional import executor_runner
            run = executor_runner(ctx.session, fn)
            outer_caps = ctx.capture_values(key)
            outer = src(ctx)

            def open_next():
                e = next(outer)
                vals = [np.asarray(v) for v in run(*expand(e, leaves), *outer_caps)]
                from xlapy.compat.v1.data.iterator_ops import _SubRun
                return iter(inner._elements(_SubRun(ctx, inner, vals)))
            cycle, end_of_input, i = [None] * c, False, 0
            while True:
                if cycle[i] is None and not end_of_input:
                    try:
                        cycle[i] = open_next()
                    except StopIteration:
                        end_of_input = True
                if cycle[i] is not None:
                    for _ in range(k):
                        try:
                            yield next(cycle[i])
                        except StopIteration:
                            cycle[i] = None
                            break
                if end_of_input and all(it is None for it in cycle):
                    return
                i = (i + 1) % c
        return Dataset(elements, inner._structure, self._captures + caps)

    def filter(self, predicate):
        """The elements for which predicate (graph ops returning a scalar bool) is True."""
        fn, caps, key = _function_of(self._structure, predicate, "dataset_filter")
        pred = fn.outputs[0]
        if pred.dtype != dtypes.bool or pred.shape.ndims not in (None, 0):
            raise InvalidArgumentError(f"filter: the predicate must return a scalar bool "
                                       f"tensor, got {pred.dtype.name} {pred.shape.tf_str()}")
        src, leaves = self._elements, _flatten(self._structure)

        def elements(ctx):
            from xlapy.compat.v1.ops.functional import executor_runner
            run = executor_runner(ctx.session, fn)
            values = ctx.capture_values(key)
            for e in src(ctx):
                if bool(run(*expand(e, leaves), *values)[0]):
                    yield e
        return Dataset(elements, self._structure, self._captures + caps)

    @staticmethod
    def zip(datasets):
        """Elements combining one element of each dataset (a tuple or dict of datasets),
        until the shortest ends."""
        parts = _flatten_datasets(datasets)
        structure = _pack(datasets, [d._structure for d in parts])

        def elements(ctx):
            for items in zip(*[d._elements(ctx) for d in parts]):
                yield [x for item in items for x in item]
        return Dataset(elements, structure, [c for d in parts for c in d._captures])

    def concatenate(self, dataset):
        a, b = _flatten(self._structure), _flatten(dataset._structure)
        if len(a) != len(b) or any(x.dtype != y.dtype or type(x) is not type(y)
                                   for x, y in zip(a, b)):
            raise InvalidArgumentError("concatenate: the datasets' element types differ")
        structure = _pack(self._structure, [type(x)(x.dtype, _common_shape(x.shape, y.shape))
                                            for x, y in zip(a, b)])
        first, second = self._elements, dataset._elements
        return Dataset(lambda ctx: itertools.chain(first(ctx), second(ctx)), structure,
                       self._captures + dataset._captures)

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None):
        """Elements from calling generator(*args) (each iteration calls it anew), converted
        to output_types and checked against output_shapes."""
        if not callable(generator):
            raise InvalidArgumentError("from_generator: `generator` must be callable")
        types = [dtypes.as_dtype(t) for t in _flatten(output_types)]
        shapes = [TensorShape(x) for x in _flatten(output_shapes)] \
            if output_shapes is not None else [TensorShape(None)] * len(types)
        structure = _pack(output_types, [_Spec(t, sh) for t, sh in zip(types, shapes)])
        call_args = tuple(args or ())

        def elements(ctx):
            for item in generator(*call_args):
                flat = _flatten(item if isinstance(item, (tuple, dict)) or len(types) == 1
                                else tuple(item))
                if len(flat) != len(types):
                    raise InvalidArgumentError(
                        f"from_generator: the generator yielded {len(flat)} components, "
                        f"expected {len(types)}")
                out = []
                for v, t, sh in zip(flat, types, shapes):
                    a = np.asarray(v, dtype=object if t == dtypes.string else t.np)
                    if not sh.is_compatible_with(TensorShape(a.shape)):
                        raise InvalidArgumentError(
                            f"from_generator: `generator` yielded an element of shape "
                            f"{list(a.shape)} where an element of shape {sh.tf_str()} was "
                            "expected.")
                    out.append(a)
                yield out
        return Dataset(elements, structure)

    # -- transformations of the whole pipeline
    def apply(self, transformation_func):
        """transformation_func(self): tf.data.experimental's transformations are such
        functions (shuffle_and_repeat, map_and_batch, ...)."""
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise InvalidArgumentError("`transformation_func` must return a Dataset.")
        return out

    def shard(self, num_shards, index):
        """Every num_shards-th element, starting with element `index`."""
        n, caps = _count_arg(num_shards, self._captures)
        i, caps = _count_arg(index, caps)
        src = self._elements

        def elements(ctx):
            k, j = _count_value(n, ctx), _count_value(i, ctx)
            if k <= 0 or not 0 <= j < k:
                raise InvalidArgumentError(f"shard: index {j} must be in [0, num_shards "
                                           f"{k}) and num_shards positive")
            return itertools.islice(src(ctx), j, None, k)
        return Dataset(elements, self._structure, caps)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """The names of the files matching file_pattern (a glob, or a list of them), as
        string scalars; shuffled (the default) once per iteration."""
        import glob as _glob

        from xlapy.compat.v1.ops._common import constant_value
        pats = constant_value(file_pattern) if hasattr(file_pattern, "op") else file_pattern
        if pats is None:
            raise InvalidArgumentError("list_files: file_pattern must be known when the graph "
                                       "is built (a string or a constant)")
        pats = [pats] if isinstance(pats, (str, bytes)) else list(np.ravel(pats))
        pats = [p.decode() if isinstance(p, bytes) else str(p) for p in pats]
        names = sorted({f for p in pats for f in _glob.glob(p)})
        if not names:
            from xlapy.compat.v1.errors import NotFoundError
            raise NotFoundError(f"No files matched pattern: {', '.join(pats)}")
        ds = Dataset.from_tensor_slices(np.asarray([n.encode() for n in names], object))
        return ds.shuffle(len(names), seed=seed) if shuffle is None or shuffle else ds

    def with_options(self, options):
        """Options (threading, optimizations) change nothing in a host pipeline."""
        return self

    def options(self):
        from xlapy.compat.v1.data.experimental import Options
        return Options()

    # -- iterators
    def make_one_shot_iterator(self):
        from xlapy.compat.v1.data.iterator_ops import Iterator
        return Iterator(self, initializable=False)

    def make_initializable_iterator(self, shared_name=None):
        from xlapy.compat.v1.data.iterator_ops import Iterator
        return Iterator(self, initializable=True)
