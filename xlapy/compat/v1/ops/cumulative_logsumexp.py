"""tf.math.cumulative_logsumexp: TF's CumulativeLogsumexp, log(cumsum(exp(x))) along an
axis computed as a scan of pairwise log-add-exp (no overflow for large x).

exclusive=True shifts the scan by one: its first element is the identity of log-add-exp,
which TF writes as the lowest finite value of the dtype (not -inf), as here. reverse=True
scans from the end. The executor uses NumPy's logaddexp.accumulate; compiled, the scan is
xlapy.lax.cumlogsumexp.

Gradient (TF's): dx_j = sum over the outputs i that include x_j of g_i exp(x_j - y_i),
computed in log space with the positive and negative parts of g apart, each a cumulative
log-sum-exp in the opposite direction.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import constant_value, make, tensor
from xlapy.compat.v1.ops.array_ops import ones_like, zeros_like
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.math_ops import add, exp, greater, less, log, negative, subtract


def _axis_of(axis, rank):
    a = int(np.reshape(np.asarray(axis), [-1])[0])
    if not -rank <= a < rank:
        raise InvalidArgumentError(f"axis {a} is out of range for a tensor of rank {rank}: "
                                   f"expected in [{-rank}, {rank})")
    return a % rank


def _infer(op):
    x, axis = op.inputs
    if not x.dtype.is_floating:
        raise InvalidTypeError(f"Value passed to parameter 'x' of 'CumulativeLogsumexp' Op "
                               f"has DataType {x.dtype.name} not in list of allowed values: "
                               "float16, float32, float64")
    if axis.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidTypeError(f"axis must be int32 or int64, got {axis.dtype.name}")
    if axis.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"axis must be a scalar, got shape {axis.shape.tf_str()}")
    v = constant_value(axis)
    if v is not None and x.shape.ndims is not None:
        if x.shape.ndims == 0:
            raise InvalidArgumentError("cumulative_logsumexp: x must have rank >= 1")
        _axis_of(v, x.shape.ndims)
    return [(x.dtype, x.shape)]


@register_op("CumulativeLogsumexp", infer=_infer, attrs=("exclusive", "reverse"),
             const_inputs=(1,))
def _cumulative_logsumexp(m, x, axis, exclusive=False, reverse=False):
    if x.ndim == 0:
        raise InvalidArgumentError("cumulative_logsumexp: x must have rank >= 1")
    ax = _axis_of(axis, x.ndim)
    lowest = np.asarray(np.finfo(np.dtype(x.dtype)).min, np.dtype(x.dtype))
    if m is np:
        v = np.flip(x, ax) if reverse else x
        out = np.logaddexp.accumulate(v, axis=ax) if v.shape[ax] else np.array(v)
        if reverse:
            out = np.flip(out, ax)
    else:
        import xlapy.lax  # the compiled scan, reached when a cluster is traced
        out = xlapy.lax.cumlogsumexp(x, axis=ax, reverse=reverse)
    if exclusive and x.shape[ax]:
        n = x.shape[ax]
        pad_shape = tuple(1 if i == ax else d for i, d in enumerate(x.shape))
        first = m.full(pad_shape, lowest, dtype=np.dtype(x.dtype))
        idx = [slice(None)] * x.ndim
        if reverse:
            idx[ax] = slice(1, n)
            out = m.concatenate([out[tuple(idx)], first], axis=ax)
        else:
            idx[ax] = slice(0, n - 1)
            out = m.concatenate([first, out[tuple(idx)]], axis=ax)
    return m.astype(out, np.dtype(x.dtype))


@register_gradient("CumulativeLogsumexp")
def _cumulative_logsumexp_grad(op, g):
    x, axis = op.inputs
    y = op.outputs[0]
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    zero = zeros_like(g)
    floor = add(zero, tensor(np.asarray(np.finfo(g.dtype.np).min, g.dtype.np)))

    def part(positive):
        keep = greater(g, zero) if positive else less(g, zero)
        mag = where(keep, g if positive else negative(g), ones_like(g))
        log_g = where(keep, log(mag), floor)  # the lowest value where this part is empty
        s = cumulative_logsumexp(subtract(log_g, y), axis, exclusive=exclusive,
                                 reverse=not reverse)
        return exp(add(s, x))

    return [subtract(part(True), part(False)), None]


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x), axis)), stably; see the module doc for exclusive and reverse."""
    return make("CumulativeLogsumexp", [tensor(x), tensor(axis, dtypes.int32)
                                        if not hasattr(axis, "dtype") else tensor(axis)],
                {"exclusive": bool(exclusive), "reverse": bool(reverse)},
                name=name or "CumulativeLogsumexp")
