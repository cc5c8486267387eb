"""tf.data iterators: one-shot, initializable, reinitializable (from_structure +
make_initializer) and feedable (from_string_handle: which iterator get_next reads is fed as
the string an iterator's string_handle() gives), and the executor ops behind them.
IteratorGetNext hands the next element of the host-side pipeline to the graph;
MakeIterator (re)starts it. The state of an iterator is per session: a _Run holds the
pipeline's generator, its shuffle generators and the values of the graph tensors it reads,
evaluated when it starts."""

from __future__ import annotations

import weakref

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.data.sparse_elements import component_specs, expand, is_sparse_spec
from xlapy.compat.v1.data.structure import _flatten, _map_structure, _pack, _Spec
from xlapy.compat.v1.errors import (FailedPreconditionError, InvalidArgumentError,
                                    OutOfRangeError)
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops._common import make_op
from xlapy.compat.v1.tensor_shape import TensorShape


class Iterator:
    """An iterator over a dataset (one-shot, initializable) or over any dataset of one
    structure (Iterator.from_structure, started by make_initializer(dataset))."""

    def __init__(self, dataset, initializable, structure=None):
        self._dataset = dataset
        self._structure = dataset._structure if dataset is not None else structure
        self._initializable = initializable
        self._initializer = None
        if initializable and dataset is not None:
            self._initializer = self.make_initializer(dataset, name="MakeIterator")

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None,
                       output_classes=None):
        types = _flatten(output_types)
        shapes = _flatten(output_shapes) if output_shapes is not None else [None] * len(types)
        if len(shapes) != len(types):
            raise InvalidArgumentError("output_types and output_shapes must have the same "
                                       "structure")
        leaves = [_Spec(dtypes.as_dtype(t), TensorShape(s)) for t, s in zip(types, shapes)]
        return Iterator(None, True, _pack(output_types, leaves))

    output_types = property(lambda self: _map_structure(lambda x: x.dtype, self._structure))
    output_shapes = property(lambda self: _map_structure(lambda x: x.shape, self._structure))

    @property
    def output_classes(self):
        from xlapy.compat.v1.framework import Tensor
        from xlapy.compat.v1.sparse_tensor import SparseTensor
        return _map_structure(lambda leaf: SparseTensor if is_sparse_spec(leaf) else Tensor,
                              self._structure)

    @property
    def initializer(self):
        if self._initializer is None:
            raise InvalidArgumentError("this iterator has no initializer: a one-shot iterator "
                                       "starts by itself; one made by from_structure starts "
                                       "with make_initializer(dataset)")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        """An op (re)starting this iterator on `dataset`; the tensors its map functions read
        are evaluated when it runs, as TF's."""
        mine, theirs = _flatten(self._structure), _flatten(dataset._structure)
        if len(mine) != len(theirs) or any(
                a.dtype != b.dtype or not a.shape.is_compatible_with(b.shape) or
                is_sparse_spec(a) != is_sparse_spec(b) for a, b in zip(mine, theirs)):
            raise InvalidArgumentError("make_initializer: the dataset's element types and "
                                       "shapes are not compatible with the iterator's")
        return make_op("MakeIterator", [t for _, t in dataset._captures],
                       {"iterator": self, "dataset": dataset}, name=name or "MakeIterator")

    def get_next(self, name=None):
        leaves = _flatten(self._structure)
        # a one-shot iterator reads the tensors its map functions use when it starts
        caps = [t for _, t in self._dataset._captures] if not self._initializable else []
        if getattr(self, "_handle", None) is not None:   # feedable: the handle is read
            caps = [self._handle]
        specs = component_specs(leaves)
        op = make_op("IteratorGetNext", caps, {
            "iterator": self, "output_types": [dt for dt, _ in specs],
            "output_shapes": [sh for _, sh in specs]}, name=name or "IteratorGetNext")
        outs, vals = list(op.outputs), []
        for leaf in leaves:
            if is_sparse_spec(leaf):
                from xlapy.compat.v1.sparse_tensor import SparseTensor
                vals.append(SparseTensor(*outs[:3]))
                outs = outs[3:]
            else:
                vals.append(outs.pop(0))
        return _pack(self._structure, vals)

    def _start(self, session, dataset, captures):
        _session_state(session)[id(self)] = _Run(dataset, session, captures)

    def string_handle(self, name=None):
        """A string tensor naming this iterator, to feed a feedable iterator's handle
        (Iterator.from_string_handle). A one-shot iterator starts when it is evaluated."""
        key = f"xlapy-iterator-{id(self)}"
        _HANDLES[key] = self
        caps = [t for _, t in self._dataset._captures] if not self._initializable else []
        op = make_op("IteratorToStringHandle", caps, {"iterator": self, "handle": key},
                     name=name or "IteratorToStringHandle")
        return op.outputs[0]

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None,
                           output_classes=None):
        """An iterator whose get_next reads the iterator named by the fed string_handle
        (one of the same structure's string_handle())."""
        from xlapy.compat.v1.ops._common import tensor
        handle = tensor(string_handle)
        if handle.dtype != dtypes.string:
            raise InvalidArgumentError(f"from_string_handle: string_handle must be a string "
                                       f"tensor, got {handle.dtype.name}")
        it = Iterator.from_structure(output_types, output_shapes)
        it._handle = handle
        return it


# string_handle() value -> iterator (the iterators a graph made; a handle of a collected
# iterator no longer resolves)
_HANDLES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class _SubRun:
    """The context of a dataset made per element (flat_map, interleave): its graph inputs
    computed from the element, everything else from the enclosing pass."""

    def __init__(self, parent, dataset, values):
        self.session = parent.session
        self._parent = parent
        self._caps: dict = {}
        for (key, _), v in zip(dataset._captures, values):
            self._caps.setdefault(key, []).append(v)

    def rng(self, *args):
        return self._parent.rng(*args)

    def capture_values(self, key) -> list:
        return self._caps[key] if key in self._caps else self._parent.capture_values(key)


class _Run:
    """One pass of an iterator in one session: the pipeline's generator and what its
    stages need (the session, the shuffle generators, the captured tensors' values)."""

    def __init__(self, dataset, session, captures):
        self.session = session
        self._caps: dict = {}
        for (key, _), v in zip(dataset._captures, captures):
            self._caps.setdefault(key, []).append(v)
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

    def capture_values(self, key) -> list:
        return self._caps.get(key, [])

    def next(self):
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


def _resolve(handle_value, feedable, op):
    """The iterator a fed string handle names, checked against the feedable iterator's
    structure."""
    v = handle_value.item() if isinstance(handle_value, np.ndarray) else handle_value
    key = v.decode() if isinstance(v, bytes) else str(v)
    target = _HANDLES.get(key)
    if target is None:
        raise InvalidArgumentError(f"{key!r} is not the string handle of an iterator (feed "
                                   f"the value of an iterator's string_handle())\n\t "
                                   f"[[{op.name}]]", op=op)
    mine, theirs = _flatten(feedable._structure), _flatten(target._structure)
    if len(mine) != len(theirs) or any(a.dtype != b.dtype or not a.shape.is_compatible_with(
            b.shape) for a, b in zip(mine, theirs)):
        raise InvalidArgumentError(f"the iterator of the fed handle has element types and "
                                   f"shapes incompatible with the feedable iterator's\n\t "
                                   f"[[{op.name}]]", op=op)
    return target


def _get_next_executor(session, op):
    feedable = op.get_attr("iterator")
    state = _session_state(session)
    leaves = _flatten(feedable._structure)

    def run(*captures):
        it = feedable
        if getattr(feedable, "_handle", None) is not None:
            it, captures = _resolve(captures[0], feedable, op), ()
            if id(it) not in state and not it._initializable:
                raise FailedPreconditionError(
                    "GetNext() failed: the one-shot iterator of the fed handle has not "
                    f"started in this session (evaluate its string_handle() here first)"
                    f"\n\t [[{op.name}]]", op=op)
        if id(it) not in state:
            if it._initializable:
                raise FailedPreconditionError(
                    "GetNext() failed because the iterator has not been initialized. Ensure "
                    "that you have run the initializer operation for this iterator before "
                    f"getting the next element.\n\t [[{op.name}]]", op=op)
            it._start(session, it._dataset, captures)
        try:
            return expand(state[id(it)].next(), leaves)
        except StopIteration:
            raise OutOfRangeError(f"End of sequence\n\t [[{op.name}]]", op=op) from None
    return run


def _make_iterator_executor(session, op):
    it, dataset = op.get_attr("iterator"), op.get_attr("dataset")

    def run(*captures):
        it._start(session, dataset, captures)
        return []
    return run


@register_op("IteratorToStringHandle", lowering=None, stateful=True,
             infer=lambda op: [(dtypes.string, TensorShape([]))])
def _to_string_handle(m):
    raise AssertionError("IteratorToStringHandle runs through its executor hook")


def _to_string_handle_executor(session, op):
    it, key = op.get_attr("iterator"), op.get_attr("handle")
    state = _session_state(session)

    def run(*captures):
        if not it._initializable and id(it) not in state:
            it._start(session, it._dataset, captures)
        return [np.asarray(key.encode(), dtype=object)]
    return run


get_op_def("IteratorToStringHandle").extra.update(executor=_to_string_handle_executor)
get_op_def("IteratorGetNext").extra.update(executor=_get_next_executor)
get_op_def("MakeIterator").extra.update(executor=_make_iterator_executor)
not_differentiable("IteratorGetNext", "MakeIterator", "IteratorToStringHandle")
