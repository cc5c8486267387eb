"""The Dataset.apply transformations of tf.contrib.data that tf.data.experimental (data/
experimental.py) lacks: sliding_window_batch, group_by_window, bucket_by_sequence_length,
scan, rejection_resample, enumerate_dataset, unique, Counter, assert_element_shape, and the
deprecated batch_and_drop_remainder / padded_batch_and_drop_remainder.

They run on the host like every stage of xlapy's tf.data (data/dataset.py): functions of
elements (key_func, scan_func, ...) are built once into function graphs and run in the
executor per element. group_by_window keeps one window per key and, when a key's window
is full, yields the elements of reduce_func(key, window dataset); at the end of the input
the partial windows are reduced in increasing key order, as TF's (a std::map of keys).
rejection_resample keeps an element of class c with probability
(target[c] / p[c]) / max_i(target[i] / p[i]), p the initial distribution or, without one,
the running class frequencies: the output classes follow target_dist, as TF's; TF also
mixes unfiltered elements in to waste fewer, so which elements are kept differs.
"""

from __future__ import annotations

import bisect
import itertools

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.data.dataset import Dataset
from xlapy.compat.v1.data.iterator_ops import _SubRun
from xlapy.compat.v1.data.sparse_elements import (collapse, expand, outputs, placeholders,
                                                  refuse)
from xlapy.compat.v1.data.structure import (_common_shape, _dtype, _flatten, _flatten_shapes,
                                            _function_of, _Graph, _map_structure, _pack,
                                            _source_captures, _source_values, _Spec,
                                            _to_array)
from xlapy.compat.v1.errors import InternalError, InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.tensor_shape import TensorShape


def _check_positive(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidArgumentError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def batch_and_drop_remainder(batch_size):
    """Batches of batch_size, the last partial one dropped (Dataset.batch(drop_remainder=
    True))."""
    return lambda ds: ds.batch(batch_size, drop_remainder=True)


def padded_batch_and_drop_remainder(batch_size, padded_shapes, padding_values=None):
    """Dataset.padded_batch(..., drop_remainder=True)."""
    return lambda ds: ds.padded_batch(batch_size, padded_shapes, padding_values,
                                      drop_remainder=True)


# ---- sliding windows ------------------------------------------------------------------------

def sliding_window_batch(window_size, stride=None, window_shift=None, window_stride=1):
    """Windows of window_size consecutive elements (every window_stride-th), one starting
    every window_shift (or, deprecated, stride) elements, each stacked along a new first
    dimension; a last window without enough elements is dropped."""
    if stride is not None and window_shift is not None:
        raise InvalidArgumentError("Cannot specify both `stride` and `window_shift`")
    shift = window_shift if window_shift is not None else (1 if stride is None else stride)
    size = _check_positive(window_size, "window_size")
    shift = _check_positive(shift, "window_shift")
    step = _check_positive(window_stride, "window_stride")
    span = (size - 1) * step + 1

    def apply(ds):
        refuse(_flatten(ds._structure), "sliding_window_batch")
        src = ds._elements

        def elements(ctx):
            it, buf, skip = src(ctx), [], 0
            while True:
                try:
                    for _ in range(skip):
                        next(it)
                    while len(buf) < span:
                        buf.append(next(it))
                except StopIteration:
                    return
                yield [np.stack(parts) for parts in zip(*buf[0:span:step])]
                skip = max(shift - len(buf), 0)
                buf = buf[shift:]
        structure = _map_structure(lambda leaf: _Spec(
            leaf.dtype, TensorShape([None]).concatenate(leaf.shape)), ds._structure)
        return Dataset(elements, structure, ds._captures)
    return apply


# ---- windows of a dataset (group_by_window, bucket_by_sequence_length) ------------------------

class _WindowRun(_SubRun):
    """The pass of a reduce_func's dataset: its graph inputs, and the window its window
    dataset yields."""

    def __init__(self, parent, dataset, values, token, window):
        super().__init__(parent, dataset, values)
        self._window = (token, window)


def _window_dataset(structure):
    """(a Dataset yielding the current window's elements, its token)."""
    token = object()

    def elements(ctx):
        c = ctx
        while c is not None:
            w = getattr(c, "_window", None)
            if w is not None and w[0] is token:
                return iter(w[1])
            c = getattr(c, "_parent", None)
        raise InternalError("a window dataset of group_by_window was iterated outside its "
                            "reduce_func's dataset")
    return Dataset(elements, structure), token


def _scalar_int_function(structure, fn, name, what):
    f, caps, key = _function_of(structure, fn, name)
    out = f.outputs[0]
    if not out.dtype.is_integer or out.shape.ndims not in (None, 0):
        raise InvalidTypeError(f"`{what}` must return a single integer scalar tensor, got "
                               f"{out.dtype.name} {out.shape.tf_str()}")
    return f, caps, key


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """Groups the elements by key_func(element) (a scalar tf.int64) into windows of
    window_size (or window_size_func(key)) elements and yields the elements of
    reduce_func(key, window_dataset) for each window."""
    if (window_size is None) == (window_size_func is None):
        raise InvalidArgumentError("Must pass either window_size or window_size_func.")
    if window_size is not None:
        if hasattr(window_size, "op"):
            from xlapy.compat.v1.ops._common import constant_value  # (ops load after data)
            v = constant_value(window_size)
            if v is None:
                raise InvalidArgumentError("group_by_window: window_size must be known when "
                                           "the graph is built")
            window_size = int(v)
        window_size = _check_positive(window_size, "window_size")

    def apply(ds):
        from xlapy.compat.v1.ops.functional import executor_runner  # (ops load after data)
        leaves = _flatten(ds._structure)
        key_fn, key_caps, key_key = _scalar_int_function(ds._structure, key_func,
                                                         "group_by_window_key", "key_func")
        if key_fn.outputs[0].dtype != dtypes.int64:
            raise InvalidTypeError(f"`key_func` must return a single tf.int64 tensor, got "
                                   f"{key_fn.outputs[0].dtype.name}")
        key_spec = _Spec(dtypes.int64, TensorShape([]))
        size_parts = None
        if window_size_func is not None:
            size_parts = _scalar_int_function(key_spec, window_size_func,
                                              "group_by_window_size", "window_size_func")
        window_ds, token = _window_dataset(ds._structure)
        keys = Dataset(lambda ctx: iter(()), key_spec)
        inner, red_fn, red_key, red_caps = keys._per_element_dataset(
            lambda k: reduce_func(k, window_ds), "group_by_window_reduce")
        src = ds._elements

        def elements(ctx):
            run_key = executor_runner(ctx.session, key_fn)
            key_vals = ctx.capture_values(key_key)
            run_reduce = executor_runner(ctx.session, red_fn)
            red_vals = ctx.capture_values(red_key)
            sizes: dict = {}
            groups: dict = {}

            def size_of(k):
                if window_size is not None:
                    return window_size
                if k not in sizes:
                    f, _, skey = size_parts
                    n = int(executor_runner(ctx.session, f)(np.int64(k),
                                                           *ctx.capture_values(skey))[0])
                    if n <= 0:
                        raise InvalidArgumentError(f"Window size must be greater than zero, "
                                                   f"but got {n}.")
                    sizes[k] = n
                return sizes[k]

            def reduce(k, window):
                vals = [np.asarray(v) for v in run_reduce(np.int64(k), *red_vals)]
                yield from inner._elements(_WindowRun(ctx, inner, vals, token, window))

            for e in src(ctx):
                k = int(run_key(*expand(e, leaves), *key_vals)[0])
                group = groups.setdefault(k, [])
                group.append(e)
                if len(group) >= size_of(k):
                    yield from reduce(k, groups.pop(k))
            for k in sorted(groups):
                yield from reduce(k, groups[k])
        caps = ds._captures + key_caps + red_caps + (size_parts[1] if size_parts else [])
        return Dataset(elements, inner._structure, caps)
    return apply


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
                              padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    """Batches of elements of similar length: element_length_func(element) (a scalar int)
    picks bucket i with bucket_boundaries[i-1] <= length < bucket_boundaries[i]; each
    bucket batches bucket_batch_sizes[i] elements, padded (padded_shapes, else each
    component's longest; with pad_to_bucket_boundary to the bucket's boundary - 1) unless
    no_padding."""
    bounds = [int(b) for b in bucket_boundaries]
    sizes = [_check_positive(b, "bucket_batch_sizes entries") for b in bucket_batch_sizes]
    if len(sizes) != len(bounds) + 1:
        raise InvalidArgumentError("len(bucket_batch_sizes) must equal "
                                   "len(bucket_boundaries) + 1")
    if any(a >= b for a, b in zip(bounds, bounds[1:])):
        raise InvalidArgumentError(f"bucket_boundaries must be strictly increasing, got "
                                   f"{bounds}")

    def apply(ds):
        from xlapy.compat.v1.ops.functional import executor_runner  # (ops load after data)
        leaves = _flatten(ds._structure)
        len_fn, len_caps, len_key = _scalar_int_function(
            ds._structure, element_length_func, "bucket_by_sequence_length",
            "element_length_func")
        buckets = []
        for i, n in enumerate(sizes):
            window_ds, token = _window_dataset(ds._structure)
            if no_padding:
                out = window_ds.batch(n, drop_remainder=drop_remainder)
            else:
                shapes = padded_shapes if padded_shapes is not None else ds.output_shapes
                if pad_to_bucket_boundary and i < len(bounds):
                    fill = bounds[i] - 1
                    shapes = _map_structure(lambda s, fill=fill: TensorShape(
                        None if TensorShape(s).ndims is None else
                        [fill if d is None else d for d in TensorShape(s).dims]), shapes)
                out = window_ds.padded_batch(n, shapes, padding_values,
                                             drop_remainder=drop_remainder)
            buckets.append((out, token))
        structure = buckets[0][0]._structure
        for out, _ in buckets[1:]:
            structure = _pack(structure, [_Spec(a.dtype, _common_shape(a.shape, b.shape))
                                          for a, b in zip(_flatten(structure),
                                                          _flatten(out._structure))])
        src = ds._elements

        def elements(ctx):
            run_len = executor_runner(ctx.session, len_fn)
            len_vals = ctx.capture_values(len_key)
            groups: dict = {}

            def flush(b, window):
                out, token = buckets[b]
                yield from out._elements(_WindowRun(ctx, out, [], token, window))

            for e in src(ctx):
                n = int(run_len(*expand(e, leaves), *len_vals)[0])
                b = bisect.bisect_right(bounds, n)
                if pad_to_bucket_boundary and not no_padding and b == len(bounds):
                    raise InvalidArgumentError(
                        f"When pad_to_bucket_boundary=True, elements must have length < "
                        f"max(bucket_boundaries) = {bounds[-1]}, got {n}.")
                group = groups.setdefault(b, [])
                group.append(e)
                if len(group) == sizes[b]:
                    yield from flush(b, groups.pop(b))
            for b in sorted(groups):
                yield from flush(b, groups[b])
        return Dataset(elements, structure, ds._captures + len_caps)
    return apply


# ---- scan -----------------------------------------------------------------------------------

def _state_arrays(initial_state):
    return _map_structure(_to_array, initial_state)


def _same_shape(a: TensorShape, b: TensorShape) -> bool:
    return a.ndims == b.ndims and (a.ndims is None or list(a.dims) == list(b.dims))


def scan(initial_state, scan_func):
    """Elements scan_func(state, element)[1], the state carried from initial_state through
    each scan_func(state, element)[0] (a structure of the initial state's types)."""
    init = _state_arrays(initial_state)
    init_flat = _flatten(init)

    def apply(ds):
        from xlapy.compat.v1.framework import get_default_graph  # (ops load after data)
        from xlapy.compat.v1.ops.functional import FuncGraph, Function, executor_runner
        elem_leaves = _flatten(ds._structure)
        state_leaves = [_Spec(a.tensor.dtype, a.tensor.shape) if isinstance(a, _Graph)
                        else _Spec(_dtype(a), TensorShape(a.shape)) for a in init_flat]
        while True:   # (each pass relaxes some dimension, so it ends)
            fg = FuncGraph("dataset_scan", get_default_graph())
            with fg.as_default():
                phs, args = placeholders(fg, state_leaves + elem_leaves)
                state = _pack(init, args[:len(state_leaves)])
                element = _pack(ds._structure, args[len(state_leaves):])
                res = scan_func(state, element)
                if not isinstance(res, (tuple, list)) or len(res) != 2:
                    raise InvalidTypeError("scan_func must return a pair (new_state, "
                                           "output_element)")
                new_state, out = res
                if isinstance(out, list):
                    out = tuple(out)
                new_flat = _flatten(new_state)
                if len(new_flat) != len(state_leaves):
                    raise InvalidTypeError(f"The new state of scan_func has {len(new_flat)} "
                                           f"components, the initial state "
                                           f"{len(state_leaves)}")
                state_out, new_specs = outputs(fg, new_flat)
                flat_out, out_leaves = outputs(fg, _flatten(out))
            for a, b in zip(state_leaves, new_specs):
                if a.dtype != b.dtype:
                    raise InvalidTypeError(f"The element types for the new state must match "
                                           f"the initial state. Expected {a.dtype.name}; got "
                                           f"{b.dtype.name}.")
            relaxed = [_Spec(a.dtype, _common_shape(a.shape, b.shape)) for a, b in
                       zip(state_leaves, new_specs)]
            if all(_same_shape(r.shape, a.shape) for r, a in zip(relaxed, state_leaves)):
                break
            state_leaves = relaxed   # (TF traces again with the shapes both fit)
        fn = Function(fg, phs + [fg.captures[t] for t in fg.captured], state_out + flat_out)
        structure = _pack(out, out_leaves)
        key, src, n = object(), ds._elements, len(state_leaves)

        def elements(ctx):
            run = executor_runner(ctx.session, fn)
            caps = ctx.capture_values(key)
            state_vals = [np.asarray(v) for v in _source_values(init_flat, ctx)]
            for e in src(ctx):
                res = run(*state_vals, *expand(e, elem_leaves), *caps)
                state_vals = [np.asarray(v) for v in res[:n]]
                yield collapse(res[n:], out_leaves)
        return Dataset(elements, structure, ds._captures + _source_captures(init_flat) +
                       [(key, t) for t in fg.captured])
    return apply


# ---- rejection_resample ---------------------------------------------------------------------

def _distribution(dist, what):
    if dist is None:
        return None
    if hasattr(dist, "op"):
        from xlapy.compat.v1.ops._common import constant_value  # (ops load after data)
        v = constant_value(dist)
        if v is None:
            raise InvalidArgumentError(f"rejection_resample: {what} must be known when the "
                                       "graph is built")
        dist = v
    p = np.asarray(dist, np.float64)
    if p.ndim != 1 or p.size == 0 or np.any(p < 0) or not np.isclose(p.sum(), 1.0, atol=1e-4):
        raise InvalidArgumentError(f"rejection_resample: {what} must be a probability vector "
                                   f"(non-negative, summing to 1), got {p.tolist()}")
    return p


def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    """(class, element) pairs of a subset of the elements whose classes (class_func(element),
    a scalar int in [0, len(target_dist))) follow target_dist."""
    target = _distribution(target_dist, "target_dist")
    initial = _distribution(initial_dist, "initial_dist")
    if initial is not None and initial.shape != target.shape:
        raise InvalidArgumentError("rejection_resample: initial_dist and target_dist must "
                                   "have the same length")

    def apply(ds):
        from xlapy.compat.v1.ops.functional import executor_runner  # (ops load after data)
        from xlapy.compat.v1.ops.random_ops import get_seed
        leaves = _flatten(ds._structure)
        cls_fn, cls_caps, cls_key = _scalar_int_function(ds._structure, class_func,
                                                         "rejection_resample_class",
                                                         "class_func")
        cls_dt = cls_fn.outputs[0].dtype
        s1, s2 = get_seed(seed)
        rng_key, src, k = object(), ds._elements, target.size

        def accept_probs(p):
            ratio = np.where(p > 0, target / np.where(p > 0, p, 1.0), 0.0)
            top = ratio.max()
            return ratio / top if top > 0 else ratio

        def elements(ctx):
            run = executor_runner(ctx.session, cls_fn)
            vals = ctx.capture_values(cls_key)
            rng = ctx.rng(rng_key, s1, s2, True)
            counts = np.zeros(k)
            fixed = None if initial is None else accept_probs(initial)
            for e in src(ctx):
                c = int(run(*expand(e, leaves), *vals)[0])
                if not 0 <= c < k:
                    raise InvalidArgumentError(f"rejection_resample: class {c} out of range "
                                               f"[0, {k})")
                if fixed is None:
                    counts[c] += 1
                    probs = accept_probs(counts / counts.sum())
                else:
                    probs = fixed
                if rng.random() < probs[c]:
                    yield [np.asarray(c, cls_dt.np)] + list(e)
        structure = (_Spec(cls_dt, TensorShape([])), ds._structure)
        return Dataset(elements, structure, ds._captures + cls_caps)
    return apply


# ---- small ones -----------------------------------------------------------------------------

def enumerate_dataset(start=0):
    """(index, element) pairs, the index an int64 counting from start."""
    def apply(ds):
        first = int(start)
        src = ds._elements

        def elements(ctx):
            for i, e in enumerate(src(ctx)):
                yield [np.asarray(first + i, np.int64)] + list(e)
        return Dataset(elements, (_Spec(dtypes.int64, TensorShape([])), ds._structure),
                       ds._captures)
    return apply


def unique():
    """The elements without repeats (elements of one int32, int64 or string component)."""
    def apply(ds):
        leaves = _flatten(ds._structure)
        if len(leaves) != 1 or not isinstance(leaves[0], _Spec) or leaves[0].dtype not in (
                dtypes.int32, dtypes.int64, dtypes.string):
            raise InvalidTypeError("`tf.data.experimental.unique()` only supports inputs with "
                                   "a single `tf.int32`, `tf.int64`, or `tf.string` "
                                   "component.")
        src = ds._elements

        def elements(ctx):
            seen = set()
            for e in src(ctx):
                v = np.asarray(e[0])
                key = (v.shape, tuple(v.reshape(-1).tolist()))
                if key not in seen:
                    seen.add(key)
                    yield e
        return Dataset(elements, ds._structure, ds._captures)
    return apply


def Counter(start=0, step=1, dtype=dtypes.int64):
    """The endless dataset start, start + step, start + 2 step, ..."""
    dt = dtypes.as_dtype(dtype)
    if not (dt.is_integer or dt.is_floating):
        raise InvalidTypeError(f"Counter: dtype must be numeric, got {dt.name}")

    def elements(ctx):
        return ([np.asarray(start + i * step, dt.np)] for i in itertools.count())
    return Dataset(elements, _Spec(dt, TensorShape([])))


def assert_element_shape(expected_shapes):
    """The elements, checked (when built and when run) to have expected_shapes, which also
    become the dataset's static shapes."""
    def apply(ds):
        leaves = _flatten(ds._structure)
        refuse(leaves, "assert_element_shape")
        expected = [TensorShape(s) for s in _flatten_shapes(expected_shapes, len(leaves))]
        if len(expected) != len(leaves):
            raise InvalidArgumentError(f"assert_element_shape: {len(expected)} shapes for "
                                       f"elements of {len(leaves)} components")
        for leaf, s in zip(leaves, expected):
            if not leaf.shape.is_compatible_with(s):
                raise InvalidArgumentError(f"The element shape {leaf.shape.tf_str()} is not "
                                           f"compatible with the expected shape "
                                           f"{s.tf_str()}")
        src = ds._elements

        def elements(ctx):
            for e in src(ctx):
                for v, s in zip(e, expected):
                    if not s.is_compatible_with(TensorShape(np.shape(v))):
                        raise InvalidArgumentError(f"assert_element_shape: an element of "
                                                   f"shape {list(np.shape(v))} does not have "
                                                   f"the expected shape {s.tf_str()}")
                yield e
        structure = _pack(ds._structure, [_Spec(leaf.dtype, leaf.shape.merge_with(s))
                                          for leaf, s in zip(leaves, expected)])
        return Dataset(elements, structure, ds._captures)
    return apply


def prefetch_to_device(device, buffer_size=None):
    """The same elements (xlapy's pipeline runs on the host and hands each element to the
    graph)."""
    return lambda ds: ds


__all__ = ["Counter", "assert_element_shape", "batch_and_drop_remainder",
           "bucket_by_sequence_length", "enumerate_dataset", "group_by_window",
           "padded_batch_and_drop_remainder", "prefetch_to_device", "rejection_resample",
           "scan", "sliding_window_batch", "unique"]
