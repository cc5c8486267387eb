"""Complex tensors and FFTs: tf.complex / real / imag / conj / angle, tf.abs of complex
tensors (ComplexAbs), and tf.spectral / tf.signal fft, ifft, rfft, irfft and their 2-D
forms (FFT, IFFT, RFFT, IRFFT, FFT2D, IFFT2D, RFFT2D, IRFFT2D).

complex64 and complex128 are compat.v1 dtypes: the executor computes with NumPy's complex
arrays, the lowerings with xlapy.numpy's (XLA's complex types and fft opcode). As in TF,
FFT / IFFT take complex64 (or complex128) and transform the innermost axis (2-D: the two
innermost); RFFT takes float32 and fft_length (a constant under XLA), zero-padding or
cropping the input to it, and returns fft_length // 2 + 1 bins; IRFFT takes that many bins
(padded or cropped) and returns fft_length real samples (the imaginary parts of the DC and
Nyquist bins ignored). Gradients are TF's conventions (d real loss / d re + i d / d im):
FFT's is n ifft(g), IFFT's fft(g) / n, RFFT's the real part of n ifft of the bins
zero-padded to n, IRFFT's rfft(g) / n with the bins other than DC and Nyquist doubled.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import constant_value, ints, make, tensor
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape


def _complex_of(dt):
    return dtypes.complex128 if dt == dtypes.float64 else dtypes.complex64


def _cast_np(m, v, dt):
    return m.astype(v, np.dtype(dt))


# ---- complex numbers -----------------------------------------------------------------------

def _complex_infer(op):
    a, b = op.inputs
    if a.dtype != b.dtype or a.dtype not in (dtypes.float32, dtypes.float64):
        raise InvalidArgumentError(f"complex: real and imag must both be float32 or float64, "
                                   f"got {a.dtype.name} and {b.dtype.name}")
    from xlapy.compat.v1.tensor_shape import broadcast_shape
    return [(_complex_of(a.dtype), broadcast_shape(a.shape, b.shape, " for 'Complex'"))]


@register_op("Complex", infer=_complex_infer)
def _complex(m, re, im):
    dt = np.complex128 if np.dtype(re.dtype) == np.float64 else np.complex64
    return m.add(_cast_np(m, re, dt), m.multiply(_cast_np(m, im, dt), np.asarray(1j, dt)))


def _part_infer(op):
    x = op.inputs[0]
    return [(x.dtype.real_dtype, x.shape)]


@register_op("Real", infer=_part_infer)
def _real(m, x):
    return m.real(x)


@register_op("Imag", infer=_part_infer)
def _imag(m, x):
    return m.imag(x)


@register_op("ComplexAbs", infer=_part_infer)
def _complex_abs(m, x):
    return m.abs(x)


@register_op("Conj", infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])
def _conj(m, x):
    return m.conj(x)


@register_op("Angle", infer=_part_infer)
def _angle(m, x):
    return m.arctan2(m.imag(x), m.real(x))


def _zeros_like(t):
    from xlapy.compat.v1.ops.array_ops import zeros_like
    return zeros_like(t)


@register_gradient("Complex")
def _complex_grad(op, g):
    return [real(g), imag(g)]


@register_gradient("Real")
def _real_grad(op, g):
    return [complex(g, _zeros_like(g))]


@register_gradient("Imag")
def _imag_grad(op, g):
    return [complex(_zeros_like(g), g)]


@register_gradient("Conj")
def _conj_grad(op, g):
    return [conj(g)]


@register_gradient("ComplexAbs")
def _complex_abs_grad(op, g):
    from xlapy.compat.v1.ops.math_ops import multiply
    from xlapy.compat.v1.ops.special_math_ops import div_no_nan
    z, a = op.inputs[0], op.outputs[0]
    scale = div_no_nan(g, a)  # g z / |z|, 0 at z = 0
    return [multiply(complex(scale, _zeros_like(scale)), z)]


@register_gradient("Angle")
def _angle_grad(op, g):  # TF's: -g / conj(z)... as (re, im) partials: (-im, re) / |z|^2
    from xlapy.compat.v1.ops.math_ops import add, multiply, negative
    from xlapy.compat.v1.ops.special_math_ops import div_no_nan
    z = op.inputs[0]
    re, im = real(z), imag(z)
    r2 = add(multiply(re, re), multiply(im, im))
    return [complex(div_no_nan(multiply(negative(im), g), r2), div_no_nan(multiply(re, g), r2))]


def complex(real, imag, name=None):
    re, im = tensor(real), tensor(imag)
    if not isinstance(imag, Tensor):
        im = tensor(imag, dtype=re.dtype)
    if not isinstance(real, Tensor) and isinstance(imag, Tensor):
        re = tensor(real, dtype=im.dtype)
    return make("Complex", [re, im], name=name or "Complex")


def real(input, name=None):
    x = tensor(input)
    return make("Real", [x], name=name or "Real") if x.dtype.is_complex else x


def imag(input, name=None):
    x = tensor(input)
    if not x.dtype.is_complex:
        return _zeros_like(x)
    return make("Imag", [x], name=name or "Imag")


def conj(x, name=None):
    x = tensor(x)
    return make("Conj", [x], name=name or "Conj") if x.dtype.is_complex else x


def angle(input, name=None):
    x = tensor(input)
    if not x.dtype.is_complex:
        raise InvalidArgumentError("angle: the input must be complex here")
    return make("Angle", [x], name=name or "Angle")


def complex_abs(x, name=None):
    return make("ComplexAbs", [tensor(x)], name=name or "ComplexAbs")


# ---- FFTs ----------------------------------------------------------------------------------

def _fft_infer(rank):
    def infer(op):
        x = op.inputs[0]
        if not x.dtype.is_complex:
            raise InvalidArgumentError(f"{op.type}: input must be complex64 or complex128, got "
                                       f"{x.dtype.name}")
        if x.shape.ndims is not None and x.shape.ndims < rank:
            raise InvalidArgumentError(f"{op.type}: input must be at least rank {rank}, got "
                                       f"{x.shape.tf_str()}")
        return [(x.dtype, x.shape)]
    return infer


def _axes(rank):
    return tuple(range(-rank, 0))


def _c(m, out, like):
    return m.astype(out, np.dtype(like.dtype))


register_op("FFT", infer=_fft_infer(1))(lambda m, x: _c(m, m.fft.fft(x, axis=-1), x))
register_op("IFFT", infer=_fft_infer(1))(lambda m, x: _c(m, m.fft.ifft(x, axis=-1), x))
register_op("FFT2D", infer=_fft_infer(2))(lambda m, x: _c(m, m.fft.fft2(x, axes=(-2, -1)), x))
register_op("IFFT2D", infer=_fft_infer(2))(
    lambda m, x: _c(m, m.fft.ifft2(x, axes=(-2, -1)), x))


def _rfft_infer(rank, inverse):
    def infer(op):
        x, n = op.inputs
        if inverse != x.dtype.is_complex:
            raise InvalidArgumentError(f"{op.type}: input must be "
                                       f"{'complex' if inverse else 'float'}, got "
                                       f"{x.dtype.name}")
        out_dt = x.dtype.real_dtype if inverse else _complex_of(x.dtype)
        nv = constant_value(n)
        if x.shape.dims is None:
            return [(out_dt, unknown_shape())]
        dims = list(x.shape.dims)
        if len(dims) < rank:
            raise InvalidArgumentError(f"{op.type}: input must be at least rank {rank}, got "
                                       f"{x.shape.tf_str()}")
        if nv is None:
            dims[-rank:] = [None] * rank
        else:
            nv = ints(nv)
            if len(nv) != rank:
                raise InvalidArgumentError(f"{op.type}: fft_length must have {rank} elements")
            dims[-rank:] = list(nv)
            if not inverse:
                dims[-1] = nv[-1] // 2 + 1
        return [(out_dt, TensorShape(dims))]
    return infer


def _rfft(m, x, fft_length):
    n = ints(fft_length)
    dt = np.complex128 if np.dtype(x.dtype) == np.float64 else np.complex64
    return m.astype(m.fft.rfftn(x, s=n, axes=_axes(len(n))), dt)


def _irfft(m, x, fft_length):
    n = ints(fft_length)
    dt = np.float64 if np.dtype(x.dtype) == np.complex128 else np.float32
    return m.astype(m.fft.irfftn(x, s=n, axes=_axes(len(n))), dt)


register_op("RFFT", infer=_rfft_infer(1, False), const_inputs=(1,))(_rfft)
register_op("RFFT2D", infer=_rfft_infer(2, False), const_inputs=(1,))(_rfft)
register_op("IRFFT", infer=_rfft_infer(1, True), const_inputs=(1,))(_irfft)
register_op("IRFFT2D", infer=_rfft_infer(2, True), const_inputs=(1,))(_irfft)


def _scale(x, s):
    from xlapy.compat.v1.ops.math_ops import multiply
    return multiply(x, tensor(np.asarray(s, x.dtype.np)))


def _static_dims(t, rank, what):
    dims = t.shape.dims
    if dims is None or any(d is None for d in dims[-rank:]):
        raise InvalidArgumentError(f"the gradient of {what} needs the transformed dimensions "
                                   f"to be known, got {t.shape.tf_str()}")
    return list(dims[-rank:])


@register_gradient("FFT")
def _fft_grad(op, g):
    return [_scale(make("IFFT", [g]), _static_dims(g, 1, "fft")[0])]


@register_gradient("IFFT")
def _ifft_grad(op, g):
    return [_scale(make("FFT", [g]), 1.0 / _static_dims(g, 1, "ifft")[0])]


@register_gradient("FFT2D")
def _fft2d_grad(op, g):
    return [_scale(make("IFFT2D", [g]), float(np.prod(_static_dims(g, 2, "fft2d"))))]


@register_gradient("IFFT2D")
def _ifft2d_grad(op, g):
    return [_scale(make("FFT2D", [g]), 1.0 / float(np.prod(_static_dims(g, 2, "ifft2d"))))]


def _fit_last(t, rank, sizes):
    """t padded with zeros or cropped so its last `rank` dims are `sizes`."""
    from xlapy.compat.v1.ops.manip_ops import pad
    have = _static_dims(t, rank, "an rfft")
    r = t.shape.ndims
    if any(h > s for h, s in zip(have, sizes)):
        t = t[(Ellipsis,) + tuple(slice(0, min(h, s)) for h, s in zip(have, sizes))]
        have = [min(h, s) for h, s in zip(have, sizes)]
    if any(h < s for h, s in zip(have, sizes)):
        t = pad(t, [[0, 0]] * (r - rank) + [[0, s - h] for h, s in zip(have, sizes)])
    return t


def _fft_lengths(op, rank):
    n = constant_value(op.inputs[1])
    if n is None:
        raise InvalidArgumentError(f"the gradient of {op.type} needs fft_length known when the "
                                   "graph is built")
    return list(ints(n))


def _grad_rfft(rank):
    def grad(op, g):
        x = op.inputs[0]
        n = _fft_lengths(op, rank)
        full = _fit_last(g, rank, n)  # the bins zero-padded to n: F^H g = n ifft(padded g)
        inv = make("IFFT" if rank == 1 else "IFFT2D", [full])
        dx = _scale(real(inv), float(np.prod(n)))
        return [_fit_last(dx, rank, _static_dims(x, rank, op.type)), None]
    return grad


def _grad_irfft(rank):
    def grad(op, g):
        x = op.inputs[0]
        n = _fft_lengths(op, rank)
        from xlapy.compat.v1.ops.math_ops import multiply
        bins = make("RFFT" if rank == 1 else "RFFT2D",
                    [g, tensor(np.asarray(n, np.int32))])
        k = n[-1] // 2 + 1
        w = np.full(k, 2.0)
        w[0] = 1.0
        if n[-1] % 2 == 0:
            w[-1] = 1.0
        w = (w / np.prod(n)).astype(bins.dtype.np)
        dx = multiply(bins, tensor(w))
        return [_fit_last(dx, rank, _static_dims(x, rank, op.type)), None]
    return grad


register_gradient("RFFT")(_grad_rfft(1))
register_gradient("RFFT2D")(_grad_rfft(2))
register_gradient("IRFFT")(_grad_irfft(1))
register_gradient("IRFFT2D")(_grad_irfft(2))


def _fft_fn(op_type):
    def f(input, name=None):
        return make(op_type, [tensor(input)], name=name or op_type)
    f.__name__ = op_type.lower()
    return f


fft, ifft = _fft_fn("FFT"), _fft_fn("IFFT")
fft2d, ifft2d = _fft_fn("FFT2D"), _fft_fn("IFFT2D")


def _real_fft_fn(op_type, rank, inverse):
    def f(input_tensor, fft_length=None, name=None):
        x = tensor(input_tensor)
        if not inverse and not x.dtype.is_floating:
            raise InvalidArgumentError(f"{op_type.lower()}: input must be float32 or float64, "
                                       f"got {x.dtype.name}")
        if fft_length is None:
            dims = _static_dims(x, rank, op_type.lower())
            fft_length = dims if not inverse else dims[:-1] + [2 * (dims[-1] - 1)]
        n = fft_length if isinstance(fft_length, Tensor) else \
            tensor(np.asarray(np.reshape(fft_length, [-1]), np.int32))
        return make(op_type, [x, n], name=name or op_type)
    f.__name__ = op_type.lower()
    return f


rfft, irfft = _real_fft_fn("RFFT", 1, False), _real_fft_fn("IRFFT", 1, True)
rfft2d, irfft2d = _real_fft_fn("RFFT2D", 2, False), _real_fft_fn("IRFFT2D", 2, True)
