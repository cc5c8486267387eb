"""Array methods and operators of traced values (x + y, x @ w, x.sum(), x.T, x[i], ...)."""

from __future__ import annotations

import numpy as np

from xlapy.frontend.core import Tracer


def _install():
    import xlapy.numpy as xnp

    def binop(fn, reflected=False):
        if reflected:
            return lambda self, other: fn(other, self)
        return lambda self, other: fn(self, other)

    ops = {
        "add": xnp.add, "sub": xnp.subtract, "mul": xnp.multiply, "truediv": xnp.true_divide,
        "floordiv": xnp.floor_divide, "mod": xnp.remainder, "pow": xnp.power,
        "matmul": xnp.matmul, "and": xnp.bitwise_and, "or": xnp.bitwise_or,
        "xor": xnp.bitwise_xor, "lshift": xnp.left_shift, "rshift": xnp.right_shift,
    }
    for name, fn in ops.items():
        setattr(Tracer, f"__{name}__", binop(fn))
        setattr(Tracer, f"__r{name}__", binop(fn, reflected=True))
    for name, fn in {"eq": xnp.equal, "ne": xnp.not_equal, "lt": xnp.less, "le": xnp.less_equal,
                     "gt": xnp.greater, "ge": xnp.greater_equal}.items():
        setattr(Tracer, f"__{name}__", binop(fn))
    Tracer.__neg__ = lambda self: xnp.negative(self)
    Tracer.__pos__ = lambda self: self
    Tracer.__abs__ = lambda self: xnp.abs(self)
    Tracer.__invert__ = lambda self: xnp.invert(self)
    Tracer.__getitem__ = lambda self, key: xnp.getitem(self, key)
    Tracer.T = property(lambda self: xnp.transpose(self))
    Tracer.mT = property(lambda self: xnp.swapaxes(self, -1, -2))
    Tracer.at = property(lambda self: xnp.at(self))

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return xnp.reshape(self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = axes[0]
        return xnp.transpose(self, axes or None)

    Tracer.reshape = reshape
    Tracer.transpose = transpose
    Tracer.astype = lambda self, dtype: xnp.asarray(self, dtype)
    Tracer.ravel = lambda self: xnp.ravel(self)
    Tracer.flatten = lambda self: xnp.ravel(self)
    Tracer.squeeze = lambda self, axis=None: xnp.squeeze(self, axis)
    Tracer.swapaxes = lambda self, a, b: xnp.swapaxes(self, a, b)
    Tracer.dot = lambda self, other: xnp.dot(self, other)
    Tracer.clip = lambda self, a_min=None, a_max=None: xnp.clip(self, a_min, a_max)
    for name in ("sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin", "var",
                 "std", "cumsum"):
        fn = getattr(xnp, name)
        setattr(Tracer, name, (lambda f: lambda self, *a, **k: f(self, *a, **k))(fn))


_install()
