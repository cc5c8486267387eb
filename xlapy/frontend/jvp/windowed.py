"""JVP rules of primitives/windowed.py.

  reduce_window_sum       linear
  reduce_window_max/min   each window's tangent is the tangent of the element the window
                          selects (the first maximum / minimum, XLA's select-and-scatter
                          order): select-and-gather, JAX's rule. Base dilation: the operand
                          is dilated with the identity and the tangent with zeros first;
                          window dilation is refused as in the VJP (and JAX)
  select_and_scatter_add  linear in the source (the selection is piecewise constant)
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.core import bind
from xlapy.frontend.jvp.rules import linear
from xlapy.frontend.primitives import windowed as W
from xlapy.frontend.primitives.basic import aval_of, full
from xlapy.frontend.primitives.shapes import pad

linear(W.reduce_window_sum_p)
linear(W.select_and_scatter_add_p, argnums=(0,))


def _chooser_rule(kind, prim):
    def rule(primals, tangents, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
        (x,), (t,) = primals, tangents
        out = bind(prim, x, window_dimensions=window_dimensions, window_strides=window_strides,
                   padding=padding, base_dilation=base_dilation,
                   window_dilation=window_dilation)
        if any(d != 1 for d in window_dilation):
            raise XlapyError(f"differentiation of reduce_window_{kind} with window dilation "
                             f"{list(window_dilation)} is not implemented (JAX does not "
                             "support it either)")
        a = aval_of(x)
        if any(d != 1 for d in base_dilation):
            interior = tuple((0, 0, d - 1) for d in base_dilation)
            x = pad(x, full((), W._identity(kind, a.dtype), a.dtype), interior)
            t = pad(t, np.zeros((), a.dtype), interior)
        return out, W._select_and_gather_add(t, x, "ge" if kind == "max" else "le",
                                             window_dimensions, window_strides, padding)
    prim.def_jvp(rule)


_chooser_rule("max", W.reduce_window_max_p)
_chooser_rule("min", W.reduce_window_min_p)
