"""tf.quantize / tf.quantization.quantize (QuantizeV2), tf.quantize_v2 and tf.dequantize /
tf.quantization.dequantize (Dequantize), TF 1.15's float <-> quantized conversions.

xlapy has no quantized dtypes: the quantized types are carried by the plain integer dtype
of the same width and signedness (quint8 -> uint8, qint8 -> int8, quint16 -> uint16,
qint16 -> int16, qint32 -> int32). tf.quint8 / qint8 / quint16 / qint16 / qint32 name
those dtypes, and T also takes the strings 'quint8', ...

QuantizeV2 first widens the requested range as TF does: min_range = min(0, min), max_range
= max(0, max(max, min_range + max(1, |min|, |max|) / 100)); the outputs output_min /
output_max report the range the values were quantized with. Per mode, with [lo, hi] that
range and qmin / qmax the type's limits:

  MIN_COMBINED  q = (clip(x, lo, hi) - lo) * (qmax - qmin) / (hi - lo), then for a signed
                type minus (qmax - qmin + 1) / 2 and rounded half away from zero; for an
                unsigned one floor(q + 0.5)
  MIN_FIRST     s = (2^bits - 1) / (hi - lo); q = round(x * s) - (round(lo * s) - qmin),
                clamped to [qmin, qmax]
  SCALED        the largest scale s with qmin / s >= lo and qmax / s <= hi (an unsigned
                type keeps lo = 0); the range becomes [qmin / s, qmax / s] and
                q = round(clip(x, range) * s), rounded as round_mode says (HALF_TO_EVEN is
                accepted in SCALED mode only, as TF's)

Dequantize inverts them without widening the range: MIN_COMBINED (q + half) * (hi - lo) /
(qmax - qmin) + lo, MIN_FIRST round(lo / s') * s' + (q - qmin) * s' with s' = (hi - lo) /
(2^bits - 1), SCALED q * (hi / qmax for unsigned types, max(lo / qmin, hi / qmax) for
signed ones). Arithmetic is float32, as TF's kernels.

Both ops compile (their kernels are written once for NumPy and xlapy.numpy); a range with
max < min raises InvalidArgumentError in the executor (compiled, it is not checked). Neither
is differentiable (TF registers no gradient; the quantized values are integers).
"""

from __future__ import annotations

import collections

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make, make_op, tensor
from xlapy.compat.v1.tensor_shape import TensorShape

# the quantized dtypes, carried by the integer dtype of the same width
quint8, qint8, quint16, qint16, qint32 = (dtypes.uint8, dtypes.int8, dtypes.uint16,
                                          dtypes.int16, dtypes.int32)
_QUANTIZED = {"quint8": quint8, "qint8": qint8, "quint16": quint16, "qint16": qint16,
              "qint32": qint32}
_MODES = ("MIN_COMBINED", "MIN_FIRST", "SCALED")
_ROUND_MODES = ("HALF_AWAY_FROM_ZERO", "HALF_TO_EVEN")
_F32 = np.float32


def _quantized_dtype(T, what):
    if isinstance(T, str) and T in _QUANTIZED:
        return _QUANTIZED[T]
    try:
        d = dtypes.as_dtype(T)
    except (InvalidArgumentError, TypeError):
        d = None
    if d is None or d not in _QUANTIZED.values():
        raise InvalidTypeError(f"{what}: T must be one of quint8, qint8, quint16, qint16, "
                               f"qint32 (here uint8, int8, uint16, int16, int32), got {T!r}")
    return d


def _check_range_inputs(op, names):
    for t, nm in zip(op.inputs[1:], names):
        if t.dtype != dtypes.float32:
            raise InvalidTypeError(f"'{op.name}' ({op.type}): {nm} must be float32, got "
                                   f"{t.dtype.name}")
        if t.shape.num_elements() not in (None, 1):
            raise InvalidArgumentError(f"'{op.name}' ({op.type}): {nm} must be a scalar, got "
                                       f"shape {t.shape.tf_str()}")


def _round_away(m, v):
    """Round half away from zero (C's round), exactly: the integer part plus a carry."""
    r = m.trunc(v)
    frac = v - r
    return r + m.where(m.abs(frac) >= _F32(0.5), m.sign(v), m.zeros_like(v))


def _scalar(m, v):
    if m is np and np.size(v) != 1:
        raise InvalidArgumentError(f"min_range and max_range must be scalars, got shape "
                                   f"{list(np.shape(v))}")
    return m.reshape(m.astype(v, _F32), ())


# ---- QuantizeV2 --------------------------------------------------------------------------

def _quantize_infer(op):
    x = op.inputs[0]
    if x.dtype != dtypes.float32:
        raise InvalidTypeError(f"'{op.name}' (QuantizeV2): input must be float32, got "
                               f"{x.dtype.name}")
    _check_range_inputs(op, ("min_range", "max_range"))
    scalar = TensorShape([])
    return [(op.get_attr("T"), x.shape), (dtypes.float32, scalar), (dtypes.float32, scalar)]


@register_op("QuantizeV2", infer=_quantize_infer, attrs=("T", "mode", "round_mode"))
def _quantize_v2(m, x, min_range, max_range, T=None, mode="MIN_COMBINED",
                 round_mode="HALF_AWAY_FROM_ZERO"):
    mn, mx = _scalar(m, min_range), _scalar(m, max_range)
    if m is np and mx < mn:
        raise InvalidArgumentError("input_max_range must be larger than input_min_range.")
    info = np.iinfo(T.np)
    qmin, qmax = _F32(info.min), _F32(info.max)
    signed = info.min < 0
    lo = m.minimum(mn, _F32(0))
    eps = m.maximum(_F32(1), m.maximum(m.abs(mn), m.abs(mx))) / _F32(100)
    hi = m.maximum(_F32(0), m.maximum(mx, lo + eps))
    if mode == "MIN_COMBINED":
        scale = _F32(float(info.max) - float(info.min)) / (hi - lo)
        v = (m.clip(x, lo, hi) - lo) * scale
        if signed:
            v = _round_away(m, v - _F32((float(info.max) - float(info.min) + 1) / 2))
        else:
            v = m.floor(v + _F32(0.5))
    elif mode == "MIN_FIRST":
        steps = float(1 << (8 * T.np.itemsize))
        scale = _F32(steps - 1) / (hi - lo)
        v = _round_away(m, x * scale) - (_round_away(m, lo * scale) - qmin)
        v = m.clip(v, max(qmin, _F32(-2.147483648e9)), min(qmax, _F32(2.14748352e9)))
    else:  # SCALED
        big = _F32(np.finfo(np.float32).max)
        from_min = m.where(qmin * lo > 0, qmin / m.where(lo == 0, _F32(1), lo), big)
        from_max = m.where(qmax * hi > 0, qmax / m.where(hi == 0, _F32(1), hi), big)
        scale = m.minimum(from_min, from_max)
        lo, hi = qmin / scale, qmax / scale
        v = m.clip(x, lo, hi) * scale
        v = m.round(v) if round_mode == "HALF_TO_EVEN" else _round_away(m, v)
    return m.astype(v, T.np), m.astype(lo, _F32), m.astype(hi, _F32)


# ---- Dequantize --------------------------------------------------------------------------

def _dequantize_infer(op):
    x = op.inputs[0]
    if x.dtype not in _QUANTIZED.values():
        raise InvalidTypeError(f"'{op.name}' (Dequantize): input must be quantized (quint8, "
                               f"qint8, quint16, qint16, qint32: here uint8, int8, uint16, "
                               f"int16, int32), got {x.dtype.name}")
    _check_range_inputs(op, ("min_range", "max_range"))
    return [(dtypes.float32, x.shape)]


@register_op("Dequantize", infer=_dequantize_infer, attrs=("mode",))
def _dequantize(m, q, min_range, max_range, mode="MIN_COMBINED"):
    lo, hi = _scalar(m, min_range), _scalar(m, max_range)
    info = np.iinfo(np.dtype(q.dtype))
    qmin, qmax = _F32(info.min), _F32(info.max)
    v = m.astype(q, _F32)
    if mode == "MIN_COMBINED":
        half = _F32(0) if info.min == 0 else _F32((float(info.max) - float(info.min) + 1) / 2)
        return (v + half) * ((hi - lo) / (qmax - qmin)) + lo
    if mode == "MIN_FIRST":
        steps = float(1 << (8 * np.dtype(q.dtype).itemsize))
        s = (hi - lo) / _F32(steps - 1)
        lo_rounded = m.where(hi == lo, lo, _round_away(m, lo / m.where(s == 0, _F32(1), s)) * s)
        return (lo_rounded - qmin * s) + v * s
    if info.min == 0:
        return v * (hi / qmax)
    return v * m.maximum(lo / qmin, hi / qmax)


not_differentiable("QuantizeV2", "Dequantize")


# ---- the functions -----------------------------------------------------------------------

QuantizeV2 = collections.namedtuple("QuantizeV2", ["output", "output_min", "output_max"])


def _mode(mode, what):
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode not in _MODES:
        raise InvalidArgumentError(f"{what}: mode must be one of {', '.join(_MODES)}, got "
                                   f"{mode!r}")
    return mode


def quantize_v2(input, min_range, max_range, T, mode="MIN_COMBINED", name=None,
                round_mode="HALF_AWAY_FROM_ZERO"):
    """(output, output_min, output_max): float32 `input` quantized to T over [min_range,
    max_range] (widened as the module doc says)."""
    T = _quantized_dtype(T, "quantize")
    mode = _mode(mode, "quantize")
    round_mode = round_mode.decode() if isinstance(round_mode, bytes) else round_mode
    if round_mode not in _ROUND_MODES:
        raise InvalidArgumentError(f"quantize: round_mode must be HALF_AWAY_FROM_ZERO or "
                                   f"HALF_TO_EVEN, got {round_mode!r}")
    if round_mode == "HALF_TO_EVEN" and mode != "SCALED":
        raise InvalidArgumentError(f"Round mode 'HALF_TO_EVEN' only supported for mode "
                                   f"'SCALED', but mode is '{mode}'.")
    op = make_op("QuantizeV2", [tensor(input), tensor(min_range, dtypes.float32),
                                tensor(max_range, dtypes.float32)],
                 {"T": T, "mode": mode, "round_mode": round_mode}, name=name or "QuantizeV2")
    return QuantizeV2(*op.outputs)


def quantize(input, min_range, max_range, T, mode="MIN_COMBINED",
             round_mode="HALF_AWAY_FROM_ZERO", name=None):
    """tf.quantization.quantize: quantize_v2 with TF 1.15's argument order."""
    return quantize_v2(input, min_range, max_range, T, mode=mode, name=name or "Quantize",
                       round_mode=round_mode)


def dequantize(input, min_range, max_range, mode="MIN_COMBINED", name=None):
    """The float32 values of the quantized `input` over [min_range, max_range]."""
    return make("Dequantize", [tensor(input), tensor(min_range, dtypes.float32),
                               tensor(max_range, dtypes.float32)],
                {"mode": _mode(mode, "dequantize")}, name=name or "Dequantize")
