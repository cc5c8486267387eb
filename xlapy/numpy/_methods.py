"""Array methods and operators of traced values (x + y, x @ w, x.sum(), x.T, x[i], ...)."""

from __future__ import annotations

import numpy as np

from xlapy.frontend.array import ArrayImpl
from xlapy.frontend.core import Tracer


def _forward(name):
    def method(self, *args, **kwargs):
        import xlapy.numpy as xnp
        return getattr(xnp, name)(self, *args, **kwargs)
    method.__name__ = name
    return method


def _needs_concrete(what):
    def method(self, *args, **kwargs):
        raise self._concrete_error(what)
    return method


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
    ArrayImpl.at = property(lambda self: xnp.at(self))

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
    Tracer.astype = lambda self, dtype, copy=True: xnp.asarray(self, dtype)
    Tracer.__divmod__ = lambda self, other: xnp.divmod(self, other)
    Tracer.__rdivmod__ = lambda self, other: xnp.divmod(other, self)
    Tracer.round = lambda self, decimals=0: xnp.round(self, decimals)
    Tracer.__round__ = lambda self, ndigits=None: xnp.round(self, ndigits or 0)
    Tracer.conj = Tracer.conjugate = lambda self: xnp.conj(self)
    Tracer.real = property(lambda self: xnp.real(self))
    Tracer.imag = property(lambda self: xnp.imag(self))
    Tracer.copy = lambda self: self
    Tracer.repeat = lambda self, repeats, axis=None: xnp.repeat(self, repeats, axis)
    Tracer.trace = lambda self, *a, **k: xnp.trace(self, *a, **k)
    Tracer.diagonal = lambda self, *a, **k: xnp.diagonal(self, *a, **k)
    Tracer.ptp = lambda self, *a, **k: xnp.ptp(self, *a, **k)
    Tracer.nonzero = _needs_concrete("nonzero: the result's shape depends on the values; use "
                                     "where(cond, x, y) or a mask instead")
    # under grad/jvp outside jit the value is concrete (as JAX allows)
    Tracer.item = lambda self, *a: self._concrete(
        "converted to a Python scalar with .item()").item(*a)
    Tracer.tolist = lambda self: self._concrete(
        "converted to a Python list with .tolist()").tolist()
    Tracer.ravel = lambda self: xnp.ravel(self)
    Tracer.flatten = lambda self: xnp.ravel(self)
    Tracer.squeeze = lambda self, axis=None: xnp.squeeze(self, axis)
    Tracer.swapaxes = lambda self, a, b: xnp.swapaxes(self, a, b)
    Tracer.dot = lambda self, other: xnp.dot(self, other)
    Tracer.clip = lambda self, a_min=None, a_max=None: xnp.clip(self, a_min, a_max)
    for name in ("sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin", "var",
                 "std", "cumsum", "cumprod", "sort", "argsort", "take"):
        # looked up at call time: some live in modules written separately (_advanced)
        setattr(Tracer, name, _forward(name))


_install()
