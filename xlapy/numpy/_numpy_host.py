"""Host-side parts of jax.numpy: printing options, reading arrays from buffers, strings,
iterables and files, saving and loading, and the NumPy classes and ml_dtypes types that
jax.numpy re-exports.

Printing (printoptions, get_printoptions, set_printoptions, array_repr, array_str), saving
(save, savez), iterable and einsum_path are NumPy's own: xlapy's arrays outside jit are
NumPy arrays. The readers (frombuffer, fromstring, fromiter, fromfile, load) run NumPy's
on the host and return xlapy arrays, canonicalized as every input is (64-bit values become
32-bit unless jax_enable_x64). Under jit they run at trace time: the data becomes a
constant of the program. (JAX refuses fromiter and fromfile for that reason; xlapy reads
them as it reads frombuffer.)

The narrow types (int4, uint4, int2, uint2, int1, uint1, float8_*, float6_*, float4_*)
are ml_dtypes' classes, for describing data (np.zeros(3, xnp.int4) works); xlapy computes
on none of them, and converting an xlapy array to one raises an XlapyError.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from xlapy.errors import XlapyError
from xlapy.numpy._core import asarray

printoptions = np.printoptions
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
array_repr = np.array_repr
array_str = np.array_str
save = np.save
savez = np.savez
iterable = np.iterable
einsum_path = np.einsum_path

ComplexWarning = np.exceptions.ComplexWarning
object_ = np.object_
character = np.character
flexible = np.flexible


def _host(name, fn, *args, **kwargs):
    try:
        out = fn(*args, **kwargs)
    except (ValueError, TypeError, OSError) as e:
        raise XlapyError(f"{name}: {e}") from None
    return asarray(out)


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """A 1-d array of the buffer's bytes read as dtype (NumPy's, then an xlapy array)."""
    return _host("frombuffer", np.frombuffer, buffer, dtype=dtype, count=count, offset=offset)


def fromstring(string, dtype=float, count=-1, *, sep):
    """A 1-d array of the numbers in a text string separated by sep."""
    return _host("fromstring", np.fromstring, string, dtype=dtype, count=count, sep=sep)


def fromiter(iter, dtype, count=-1):  # (NumPy's argument names)
    """A 1-d array of the values an iterable yields."""
    return _host("fromiter", np.fromiter, iter, dtype=dtype, count=count)


def fromfile(file, dtype=float, count=-1, sep="", offset=0):
    """A 1-d array read from a binary or text file (NumPy's fromfile)."""
    return _host("fromfile", np.fromfile, file, dtype=dtype, count=count, sep=sep,
                 offset=offset)


def load(file, *args, **kwargs):
    """NumPy's load; a single array (.npy) comes back as an xlapy array, an archive (.npz)
    as NumPy's NpzFile."""
    try:
        out = np.load(file, *args, **kwargs)
    except (ValueError, OSError) as e:
        raise XlapyError(f"load: {e}") from None
    if isinstance(out, np.ndarray) and out.dtype.kind in "biufc":
        return asarray(out)
    if isinstance(out, np.ndarray) and out.dtype == np.dtype(ml_dtypes.bfloat16):
        return asarray(out)
    return out


_NARROW = ("int4", "uint4", "int2", "uint2", "int1", "uint1", "float8_e4m3fn", "float8_e5m2",
           "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e3m4",
           "float8_e4m3", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
           "float4_e2m1fn")
NARROW_TYPES = {n: getattr(ml_dtypes, n) for n in _NARROW if hasattr(ml_dtypes, n)}
globals().update(NARROW_TYPES)

__all__ = ["printoptions", "get_printoptions", "set_printoptions", "array_repr", "array_str",
           "save", "savez", "iterable", "einsum_path", "ComplexWarning", "object_",
           "character", "flexible", "frombuffer", "fromstring", "fromiter", "fromfile",
           "load"]
__all__ += list(NARROW_TYPES)
