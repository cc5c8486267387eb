"""bitcast_convert_type: reinterpret each element's bits as another type of the same width
(XLA's bitcast-convert, jax.lax.bitcast_convert_type), e.g. f32 <-> u32.

xlapy.random builds floats from random bits this way, as JAX does. Only same-width
conversions are supported (XLA's wider/narrower forms add or drop a dimension). The VJP is
zero (and so is the JVP, as JAX's): the result is not a differentiable function of the
operand.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError
from xlapy.frontend.core import ShapedArray, bind, dtype_name, primitive
from xlapy.frontend.primitives.basic import aval_of

bitcast_convert_p = primitive("bitcast_convert")


@bitcast_convert_p.def_impl
def _bitcast_impl(x, dtype):
    return np.array(x, order="C").view(np.dtype(dtype))  # (ascontiguousarray makes 0-d 1-d)


@bitcast_convert_p.def_abstract_eval
def _bitcast_aval(a, dtype):
    dtype = np.dtype(dtype)
    if dtype.itemsize != a.dtype.itemsize or a.dtype == np.bool_ or dtype == np.bool_:
        raise ShapeError(f"bitcast_convert_type: {a} to {dtype_name(dtype)} changes the "
                         "element width (or involves pred); only same-width numeric types "
                         "are supported")
    return ShapedArray(a.shape, dtype)


bitcast_convert_p.def_lowering(lambda ctx, x, dtype: ctx.b.bitcast_convert(x, np.dtype(dtype)))
bitcast_convert_p.def_vjp(lambda ct, x, out, dtype: (None,))                  # not smooth
bitcast_convert_p.def_jvp(lambda primals, tangents, dtype:                     # zero, as JAX
                          (bind(bitcast_convert_p, *primals, dtype=dtype), None))


def bitcast_convert_type(x, new_dtype):
    """x's bits reinterpreted as new_dtype (same element width)."""
    new_dtype = np.dtype(new_dtype)
    if aval_of(x).dtype == new_dtype:
        return x
    return bind(bitcast_convert_p, x, dtype=new_dtype)


__all__ = ["bitcast_convert_type", "bitcast_convert_p"]
