"""More of TF 1.15's top-level framework API:

  tf.register_tensor_conversion_function  conversions of user classes, tried by
                                          tf.convert_to_tensor (so by every op)
  tf.convert_to_tensor_or_indexed_slices
  tf.variable_creator_scope               creator(next_creator, **kwargs) around tf.Variable
  tf.op_scope, tf.variable_op_scope       the deprecated spellings (values first) of
                                          name_scope and variable_scope
  partitioners                            fixed_size_partitioner, min_max_variable_partitioner,
                                          variable_axis_size_partitioner,
                                          create_partitioned_variables
                                          (partitioned_variables.py)
  tf.GradientTape                         in graph mode (gradient_tape.py)
  tf.nondifferentiable_batch_function     batching is a serving optimization: here each call
                                          runs the function on its own inputs; the outputs
                                          pass no gradient
  tf.LogMessage, tf.SummaryMetadata       the protobuf classes (tensorboardX's, as tf.Summary)

Graph.gradient_override_map (framework.py) and tf.RegisterGradient (custom_gradients.py)
already exist; tf.train.Checkpoint is train/checkpoint_object.py.
"""

from __future__ import annotations

import contextlib

import numpy as np

from xlapy.compat.v1 import dtypes, framework, nest
from xlapy.compat.v1.errors import InvalidTypeError
from xlapy.compat.v1.framework import Tensor, convert_to_tensor, get_default_graph, name_scope
from xlapy.compat.v1.gradient_tape import GradientTape
from xlapy.compat.v1.partitioned_variables import (create_partitioned_variables,
                                                   fixed_size_partitioner,
                                                   min_max_variable_partitioner,
                                                   variable_axis_size_partitioner)
from xlapy.compat.v1.variables import _variable_creators, variable_scope

__all__ = ["GradientTape", "LogMessage", "SummaryMetadata", "convert_to_tensor_or_indexed_slices",
           "create_partitioned_variables", "fixed_size_partitioner",
           "min_max_variable_partitioner", "nondifferentiable_batch_function", "op_scope",
           "register_tensor_conversion_function", "variable_axis_size_partitioner",
           "variable_creator_scope", "variable_op_scope"]


# ---- tensor conversion -------------------------------------------------------------------------

# [(priority, order of registration, base types, function)], tried in this order
_CONVERSIONS: list = []
# values that always become constants (TF refuses conversions for them)
_CONSTANT_TYPES = (int, float, complex, np.generic, np.ndarray)


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """tf.convert_to_tensor(value) of an instance of base_type (a type or a tuple of types)
    calls conversion_func(value, dtype=None, name=None, as_ref=False), which returns a
    Tensor (of `dtype` when one is asked for) or NotImplemented to let the next function
    try. Functions of lower priority numbers are tried first."""
    types = base_type if isinstance(base_type, tuple) else (base_type,)
    if not types or not all(isinstance(t, type) for t in types):
        raise TypeError("base_type must be a type or a tuple of types.")
    if any(issubclass(t, _CONSTANT_TYPES) for t in types):
        raise TypeError("Cannot register conversions for Python numeric types and NumPy "
                        "scalars and arrays.")
    if not callable(conversion_func):
        raise TypeError("conversion_func must be callable.")
    _CONVERSIONS.append((int(priority), len(_CONVERSIONS), types, conversion_func))
    _CONVERSIONS.sort(key=lambda e: (e[0], e[1]))
    framework._registered_conversion[:] = [_convert_registered]


def _call_conversion(fn, value, dtype, name):
    """fn's Tensor for value, NotImplemented, or a RuntimeError for a wrong answer."""
    ret = fn(value, dtype=dtype, name=name, as_ref=False)
    if ret is NotImplemented:
        return ret
    if not isinstance(ret, Tensor):
        raise RuntimeError(f"Conversion function {fn!r} for type {type(value)} returned "
                           f"non-Tensor: {ret!r}")
    if dtype is not None and ret.dtype.base_dtype != dtype.base_dtype:
        raise RuntimeError(f"Conversion function {fn!r} for type {type(value)} returned "
                           f"incompatible dtype: requested = {dtype.name}, actual = "
                           f"{ret.dtype.name}")
    return ret


def _convert_registered(value, dtype, name, preferred_dtype):
    """The Tensor a registered conversion makes of value, or None when none applies."""
    matching = [fn for _, _, types, fn in _CONVERSIONS if isinstance(value, types)]
    if not matching:
        return None
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    for fn in matching:
        if dtype is None and preferred_dtype is not None:
            # the preferred dtype first; a conversion that cannot make it is asked again
            # without one
            try:
                ret = fn(value, dtype=dtypes.as_dtype(preferred_dtype), name=name,
                         as_ref=False)
            except (TypeError, ValueError):
                ret = NotImplemented
            if isinstance(ret, Tensor) and ret.dtype == dtypes.as_dtype(preferred_dtype):
                return ret
        ret = _call_conversion(fn, value, dtype, name)
        if ret is not NotImplemented:
            return ret
    raise InvalidTypeError(f"Failed to convert object of type {type(value)} to Tensor: "
                           "every registered conversion function returned NotImplemented")


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """An IndexedSlices or SparseTensor unchanged (its dtype checked), else
    tf.convert_to_tensor(value)."""
    if getattr(value, "_is_indexed_slices", False) or getattr(value, "_is_sparse_tensor",
                                                               False):
        if dtype is not None and dtypes.as_dtype(dtype).base_dtype != value.dtype.base_dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                             f"for Tensor with dtype {value.dtype.name}: {value!r}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


# ---- scopes ------------------------------------------------------------------------------------

@contextlib.contextmanager
def variable_creator_scope(variable_creator):
    """Inside, tf.Variable(...) (and so tf.get_variable) calls
    variable_creator(next_creator, **kwargs); it may change the keyword arguments
    (initial_value, trainable, collections, validate_shape, caching_device, name, dtype,
    constraint, ...), call next_creator(**kwargs) and return its variable, or return
    another. The innermost scope's creator is called first."""
    if not callable(variable_creator):
        raise TypeError(f"variable_creator must be callable, got {variable_creator!r}")
    stack = _variable_creators(get_default_graph())
    stack.append(variable_creator)
    try:
        yield
    finally:
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is variable_creator:
                del stack[i]
                break


@contextlib.contextmanager
def op_scope(values, name, default_name=None):
    """Deprecated: tf.name_scope(name, default_name, values)."""
    with name_scope(name, default_name=default_name, values=values) as scope:
        yield scope


@contextlib.contextmanager
def variable_op_scope(values, name_or_scope, default_name=None, initializer=None,
                      regularizer=None, caching_device=None, partitioner=None,
                      custom_getter=None, reuse=None, dtype=None, use_resource=None,
                      constraint=None):
    """Deprecated: tf.variable_scope(name_or_scope, default_name, values, ...)."""
    with variable_scope(name_or_scope, default_name=default_name, values=values,
                        initializer=initializer, regularizer=regularizer,
                        caching_device=caching_device, partitioner=partitioner,
                        custom_getter=custom_getter, reuse=reuse, dtype=dtype,
                        use_resource=use_resource, constraint=constraint) as scope:
        yield scope


# ---- nondifferentiable_batch_function ----------------------------------------------------------

def nondifferentiable_batch_function(num_batch_threads, max_batch_size, batch_timeout_micros,
                                     allowed_batch_sizes=None, max_enqueued_batches=10,
                                     autograph=True):
    """A decorator of fn(*tensors): TF batches concurrent calls (a serving optimization);
    here each call runs fn on its own inputs, which gives the same values. The outputs
    pass no gradient back."""
    for what, v in (("num_batch_threads", num_batch_threads),
                    ("max_batch_size", max_batch_size)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{what} must be a positive integer, got {v!r}")
    if allowed_batch_sizes is not None:
        sizes = list(allowed_batch_sizes)
        if sizes != sorted(sizes) or (sizes and sizes[-1] != max_batch_size):
            raise ValueError("allowed_batch_sizes must be increasing and end with "
                             f"max_batch_size ({max_batch_size}), got {sizes}")

    def decorator(fn):
        def batched(*args):
            for a in args:
                if not isinstance(a, Tensor):
                    raise ValueError("All arguments to functions decorated with "
                                     "`batch_function` are supposed to be Tensors; found "
                                     f"{a!r}.")
            from xlapy.compat.v1.ops.array_ops import stop_gradient  # (ops import framework)
            with get_default_graph().name_scope("batch"):
                out = fn(*args)
                return nest.map_structure(
                    lambda t: stop_gradient(t) if isinstance(t, Tensor) else t, out)
        batched.__name__ = getattr(fn, "__name__", "batched")
        batched.__doc__ = fn.__doc__
        return batched
    return decorator


# ---- protobuf classes --------------------------------------------------------------------------

class _TensorboardProto(type):
    """A stand-in for one of tensorboardX's protobuf classes, loaded on first use (the
    optional tensorboardX is imported only then): calling it makes the real message, its
    attributes are the real class's, and isinstance checks against the real class."""

    def _real(cls):
        from xlapy.compat.v1.summary._tb import tb  # (tensorboardX loads on first use)
        return getattr(getattr(tb(), cls._module), cls.__name__)

    def __call__(cls, *args, **kwargs):
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(cls._real(), name)

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls._real())


class LogMessage(metaclass=_TensorboardProto):
    """tf.LogMessage: the protobuf of a log line in an event file (level, message)."""
    _module = "event_pb2"


class SummaryMetadata(metaclass=_TensorboardProto):
    """tf.SummaryMetadata: a summary value's metadata (plugin_data, display_name,
    summary_description)."""
    _module = "summary_pb2"
