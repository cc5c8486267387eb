"""More of jax's top-level API: custom_gradient, linear_transpose, typeof, float0 and
default_matmul_precision.

custom_gradient(f): f returns (output, vjp) where vjp maps the output's cotangent to a
tuple with one cotangent per argument; the result is a custom_vjp function (the output is
computed by f, the backward pass calls vjp).

linear_transpose(f, *primals): the transpose of a linear f, as a function of the output's
cotangent returning a tuple with one cotangent per primal (the primals give the input
shapes and dtypes: arrays or ShapeDtypeStructs, floating or complex). It is f's VJP taken
at zero; xlapy does not check that f is linear (JAX does): for an affine f it is the
transpose of its linear part.

default_matmul_precision(p): a context manager that is accepted and ignored: xlapy
computes matrix products and convolutions in full precision whatever the setting.
"""

from __future__ import annotations

import contextlib

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend import pytree
from xlapy.frontend.autodiff import vjp
from xlapy.frontend.core import ShapedArray, Tracer
from xlapy.frontend.custom_derivatives import custom_vjp
from xlapy.frontend.dtypes import canonicalize_dtype, canonicalize_value
from xlapy.frontend.forward import float0

__all__ = ["custom_gradient", "linear_transpose", "typeof", "float0",
           "default_matmul_precision"]


def custom_gradient(fun):
    """fun with the gradient its own second output defines (as jax.custom_gradient)."""
    name = getattr(fun, "__name__", "function")

    def primal(*args):
        return _split(fun(*args), name)[0]

    primal.__name__ = name
    wrapped = custom_vjp(primal)

    def fwd(*args):
        return _split(fun(*args), name)

    def bwd(rule, ct):
        cts = rule(ct)
        if not isinstance(cts, (tuple, list)):
            cts = (cts,)
        return tuple(cts)

    wrapped.defvjp(fwd, bwd)
    return wrapped


def _split(result, name):
    if not (isinstance(result, (tuple, list)) and len(result) == 2 and callable(result[1])):
        raise XlapyError(f"custom_gradient: {name} must return a pair (output, vjp) with vjp "
                         "a function of the output's cotangent")
    return result[0], result[1]


def _example_aval(x) -> ShapedArray:
    if isinstance(x, Tracer):
        return x.aval
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, np.ndarray):
        return ShapedArray(tuple(x.shape), canonicalize_dtype(np.dtype(x.dtype)))
    a = canonicalize_value(np.asarray(x))
    return ShapedArray(a.shape, a.dtype)


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function fun at inputs shaped like primals."""
    if reduce_axes:
        raise XlapyError("linear_transpose: reduce_axes is not supported (JAX removed it too)")
    flat, in_tree = pytree.flatten(primals)
    avals = [_example_aval(x) for x in flat]
    for k, a in enumerate(avals):
        if np.dtype(a.dtype).kind not in "fc" and np.dtype(a.dtype).name != "bfloat16":
            raise XlapyError(f"linear_transpose: input {k} has dtype {a.dtype}; only floating "
                             "and complex inputs can be transposed (as in JAX)")
    zeros = pytree.unflatten(in_tree, [np.zeros(a.shape, a.dtype) for a in avals])
    out, vjp_fn = vjp(fun, *zeros)
    out_leaves, out_tree = pytree.flatten(out)
    out_avals = [_example_aval(o) for o in out_leaves]

    def transposed(out_cotangent):
        leaves, tree = pytree.flatten(out_cotangent)
        if tree != out_tree:
            raise XlapyError(f"linear_transpose: the cotangent's structure {tree} does not "
                             f"match the function's output {out_tree}")
        for k, (c, a) in enumerate(zip(leaves, out_avals)):
            ca = _example_aval(c)
            if ca.shape != a.shape:
                raise XlapyError(f"linear_transpose: cotangent {k} has shape {ca.shape}, the "
                                 f"output has shape {a.shape}")
        return tuple(vjp_fn(out_cotangent))

    return transposed


def typeof(x) -> ShapedArray:
    """The abstract value of x: its shape and dtype (weak for Python scalars), as
    jax.typeof."""
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        a = canonicalize_value(np.asarray(x))
        return ShapedArray((), a.dtype, weak_type=not isinstance(x, bool))
    try:
        a = np.asarray(x)
    except Exception:
        raise XlapyError(f"typeof: {type(x).__name__} is not an array type") from None
    if a.dtype == object:
        raise XlapyError(f"typeof: {type(x).__name__} is not an array type")
    return ShapedArray(a.shape, canonicalize_dtype(a.dtype))


@contextlib.contextmanager
def default_matmul_precision(new_val=None):
    """Accepted and ignored (xlapy computes in full precision); values as JAX's: None or
    a precision name."""
    if new_val is not None and not isinstance(new_val, str):
        raise XlapyError(f"default_matmul_precision: a precision name or None is needed, got "
                         f"{new_val!r}")
    yield
