"""BatchMatMulV2: tf.matmul of tensors of rank > 2 (a matrix product over the last two
dimensions, batch dimensions broadcast), with adj_x / adj_y (transposes: the tensors are
real). tf.matmul builds it when either operand has rank > 2, as TF does.

Gradient (TF's): for x @ y, dx = g @ y^T and dy = x^T @ g (with the adjoints swapped in),
each summed over the batch dimensions its operand was broadcast along and reshaped back.
"""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import accumulate_f32, make
from xlapy.compat.v1.tensor_shape import TensorShape, broadcast_shape, unknown_shape


def _infer(op):
    x, y = op.inputs
    if x.dtype != y.dtype:
        raise InvalidTypeError(f"Input 'y' of 'BatchMatMulV2' Op has type {y.dtype.name} that "
                               f"does not match type {x.dtype.name} of argument 'x'.")
    sx, sy = x.shape, y.shape
    for s in (sx, sy):
        if s.ndims is not None and s.ndims < 2:
            raise InvalidArgumentError(f"In[0] and In[1] must have rank >= 2 for "
                                       f"'{op.name}' (op: 'BatchMatMulV2'), got "
                                       f"{sx.tf_str()} and {sy.tf_str()}")
    if sx.ndims is None or sy.ndims is None:
        return [(x.dtype, unknown_shape())]
    ax, ay = op.get_attr("adj_x"), op.get_attr("adj_y")
    m, kx = (sx.dims[-1], sx.dims[-2]) if ax else (sx.dims[-2], sx.dims[-1])
    ky, n = (sy.dims[-1], sy.dims[-2]) if ay else (sy.dims[-2], sy.dims[-1])
    if kx is not None and ky is not None and kx != ky:
        raise InvalidArgumentError(f"Matrix size-incompatible: In[0]: {sx.tf_str()}, In[1]: "
                                   f"{sy.tf_str()} for '{op.name}' (op: 'BatchMatMulV2')")
    batch = broadcast_shape(TensorShape(sx.dims[:-2]), TensorShape(sy.dims[:-2]),
                            f" for '{op.name}' (op: 'BatchMatMulV2')")
    return [(x.dtype, batch.concatenate([m, n]))]


@register_op("BatchMatMulV2", infer=_infer, attrs=("adj_x", "adj_y"))
@accumulate_f32
def _batch_matmul(m, x, y, adj_x=False, adj_y=False):
    if adj_x:
        x = m.swapaxes(x, -1, -2)
    if adj_y:
        y = m.swapaxes(y, -1, -2)
    return m.matmul(x, y)


def batch_matmul(x, y, adj_x=False, adj_y=False, name=None):
    return make("BatchMatMulV2", [x, y], {"adj_x": bool(adj_x), "adj_y": bool(adj_y)},
                name=name)


def _to_shape_of(g, t):
    """Sum g over the batch dimensions t was broadcast along; reshape to t's shape."""
    from xlapy.compat.v1.ops.array_ops import broadcast_gradient_args, reshape, shape
    from xlapy.compat.v1.ops.math_ops import reduce_sum
    ts, gs = t.shape, g.shape
    if ts.is_fully_defined() and gs.is_fully_defined():
        if ts == gs:
            return g
        tb, gb = ts.as_list()[:-2], gs.as_list()[:-2]
        lead = len(gb) - len(tb)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(tb)
                                    if d == 1 and gb[lead + i] != 1]
        return reshape(reduce_sum(g, axes, keepdims=False) if axes else g, ts.as_list())
    st, sg = shape(t), shape(g)
    rt, _ = broadcast_gradient_args(st[:-2], sg[:-2])
    return reshape(make("Sum", [g, rt], {"keep_dims": False}), st)


@register_gradient("BatchMatMulV2")
def _batch_matmul_grad(op, g):
    x, y = op.inputs
    ax, ay = op.get_attr("adj_x"), op.get_attr("adj_y")
    if not ax and not ay:
        gx, gy = batch_matmul(g, y, adj_y=True), batch_matmul(x, g, adj_x=True)
    elif not ax and ay:
        gx, gy = batch_matmul(g, y), batch_matmul(g, x, adj_x=True)
    elif ax and not ay:
        gx, gy = batch_matmul(y, g, adj_y=True), batch_matmul(x, g)
    else:
        gx, gy = batch_matmul(y, g, adj_x=True, adj_y=True), \
            batch_matmul(g, x, adj_x=True, adj_y=True)
    return [_to_shape_of(gx, x), _to_shape_of(gy, y)]
