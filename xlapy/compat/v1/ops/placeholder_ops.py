"""tf.placeholder_with_default: a tensor with a value unless one is fed.

PlaceholderWithDefault passes its input through (its kernel and lowering are the identity,
its gradient passes through as TF's does); feeding its output replaces the value, which the
session allows for any tensor. Its declared shape may be less specific than the default's
(a [None, 3] placeholder with a [2, 3] default), so a fed value of another batch size fits.
"""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import make, tensor
from xlapy.compat.v1.tensor_shape import TensorShape


def _infer(op):
    x = op.inputs[0]
    shape = op.get_attr("shape")
    if not shape.is_compatible_with(x.shape):
        raise InvalidArgumentError(f"placeholder_with_default '{op.name}': the default value "
                                   f"of shape {x.shape.tf_str()} is not compatible with the "
                                   f"shape {shape.tf_str()}")
    return [(x.dtype, shape)]


@register_op("PlaceholderWithDefault", infer=_infer, attrs=())
def _pwd(m, x):
    return x


@register_gradient("PlaceholderWithDefault")
def _pwd_grad(op, g):
    return [g]


def placeholder_with_default(input, shape, name=None):
    x = tensor(input)
    return make("PlaceholderWithDefault", [x], {"dtype": x.dtype, "shape": TensorShape(shape)},
                name=name or "PlaceholderWithDefault")
