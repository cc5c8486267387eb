"""Dense elements: the values of `dense<...> : tensor<...>` and their text.

Reading accepts what MLIR prints: splats (`dense<1.0>`), nested lists, booleans, hex
integers read as bit patterns for floats (`0x7FC00000`), and the hex blob `dense<"0x...">`
MLIR uses for large constants (little-endian element bytes). Printing gives splats,
nested lists, floats as the shortest decimal that reads back exactly (hex bit patterns for
inf and NaN, so payloads survive) and the hex blob for more than 64 elements.
"""

from __future__ import annotations

import re

import numpy as np

from xlapy.hlo.literal import format_float
from xlapy.hlo.shapes import Shape
from xlapy.hlo.stablehlo.types import ELEMENT_TYPES, element_to_mlir

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_MAX_CONSTANT_BYTES = 4 << 30
_DENSE_TOKEN = re.compile(r"\s*(?:(\[)|(\])|(,)|(true|false)"
                          r"|(-?0x[0-9a-fA-F]+)|([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan))"
                          r"|(\())")


def dense_values(body: str, shape: Shape) -> np.ndarray:
    """The array that dense<body> : shape denotes (raises ValueError when malformed)."""
    t = shape.element_type
    dtype = t.np_dtype
    if shape.size * dtype.itemsize > _MAX_CONSTANT_BYTES:
        raise ValueError(f"a constant of {shape.size} elements is too large (more than "
                         f"{_MAX_CONSTANT_BYTES >> 30} GiB)")
    body = body.strip()
    if body.startswith('"'):
        m = re.fullmatch(r'"0x([0-9a-fA-F]*)"', body)
        if not m or len(m.group(1)) % 2:
            raise ValueError("expected a hex string such as \"0x0000803F\"")
        raw = bytes.fromhex(m.group(1))
        size = shape.size
        if len(raw) == dtype.itemsize and size != 1:  # a splat
            return np.broadcast_to(np.frombuffer(raw, dtype).reshape(()), shape.dims).copy()
        if len(raw) != size * dtype.itemsize:
            raise ValueError(f"the hex data has {len(raw)} bytes, {size} elements of "
                             f"{element_to_mlir(t)} need {size * dtype.itemsize}")
        return np.frombuffer(raw, dtype).reshape(shape.dims).copy()
    tokens = _dense_tokens(body)
    if not tokens:
        if shape.size != 0:
            raise ValueError(f"no values for {shape.size} elements")
        return np.zeros(shape.dims, dtype)
    flat, dims = _nest(tokens)
    if dims == ():  # a splat
        return np.broadcast_to(_convert([flat[0]], t).reshape(()), shape.dims).copy()
    if tuple(dims) != shape.dims and not (shape.size == 0 and 0 in dims):
        raise ValueError(f"the values have shape {list(dims)}, the type says {list(shape.dims)}")
    return _convert(flat, t).reshape(shape.dims) if flat else np.zeros(shape.dims, dtype)


def _dense_tokens(body: str) -> list:
    out, pos = [], 0
    while pos < len(body):
        m = _DENSE_TOKEN.match(body, pos)
        if not m:
            if body[pos:].strip() == "":
                break
            raise ValueError(f"unexpected '{body[pos:pos + 12].strip()}'")
        if m.group(7):
            raise ValueError("complex values are not supported: xlapy has no complex types yet")
        pos = m.end()
        out.append(m.group(0).strip())
    return out


def _nest(tokens: list) -> tuple[list, tuple]:
    """Flat values and the dims of a nested list of tokens ([, ], ',' and values)."""
    flat: list = []
    it = 0

    def value_or_list(depth):
        nonlocal it
        if it >= len(tokens):
            raise ValueError("unexpected end of the values")
        tok = tokens[it]
        if tok == "[":
            it += 1
            sub_dims = None
            n = 0
            if it < len(tokens) and tokens[it] == "]":
                it += 1
                return (0,)
            while True:
                d = value_or_list(depth + 1)
                if sub_dims is None:
                    sub_dims = d
                elif d != sub_dims:
                    raise ValueError("rows of different lengths")
                n += 1
                if it >= len(tokens):
                    raise ValueError("missing ']'")
                if tokens[it] == "]":
                    it += 1
                    return (n,) + sub_dims
                if tokens[it] != ",":
                    raise ValueError(f"expected ',' or ']', found '{tokens[it]}'")
                it += 1
        if tok in ("]", ","):
            raise ValueError(f"unexpected '{tok}'")
        flat.append(tok)
        it += 1
        return ()

    dims = value_or_list(0)
    if it != len(tokens):
        raise ValueError(f"unexpected '{tokens[it]}' after the values")
    return flat, dims


def _convert(values: list, t) -> np.ndarray:
    dtype = t.np_dtype
    if t.is_pred:
        out = []
        for v in values:
            if v in ("true", "1"):
                out.append(True)
            elif v in ("false", "0"):
                out.append(False)
            else:
                raise ValueError(f"'{v}' is not a boolean")
        return np.array(out, dtype=np.bool_)
    if t.is_float:
        if any(v.lstrip("-").startswith("0x") for v in values):
            bits = np.empty(len(values), UINT[dtype.itemsize])
            floats = np.empty(len(values), dtype)
            for i, v in enumerate(values):
                if v.lstrip("-").startswith("0x"):
                    b = int(v.lstrip("-"), 16)
                    if b >> (8 * dtype.itemsize):
                        raise ValueError(f"{v} does not fit in {element_to_mlir(t)}")
                    bits[i] = b
                    floats[i] = bits[i:i + 1].view(dtype)[0]
                else:
                    floats[i] = _float(v)
            return floats
        if any(v in ("true", "false") for v in values):
            raise ValueError("booleans in a float constant")
        arr = np.array([_float(v) for v in values], dtype=np.float64)
        with np.errstate(over="ignore"):
            return arr.astype(dtype)
    out = []
    info = np.iinfo(dtype)
    for v in values:
        if v in ("true", "false"):
            raise ValueError(f"'{v}' in an integer constant")
        neg = v.startswith("-")
        body = v.lstrip("-")
        if body.startswith("0x"):
            x = int(body, 16) * (-1 if neg else 1)
        elif re.fullmatch(r"\d+", body):
            x = int(v)
        else:
            raise ValueError(f"'{v}' is not an integer")
        if x > info.max and x < (1 << (8 * dtype.itemsize)):
            x -= 1 << (8 * dtype.itemsize)  # MLIR prints some wide values as unsigned
        if not info.min <= x <= info.max:
            raise ValueError(f"{v} is out of range for {element_to_mlir(t)}")
        out.append(x)
    return np.array(out, dtype=dtype)


def _float(v: str) -> float:
    if v in ("inf", "+inf"):
        return float("inf")
    if v == "-inf":
        return float("-inf")
    if v.lstrip("+-") == "nan":
        return float("nan")
    return float(v)


def dense_text(array: np.ndarray, shape: Shape) -> str:
    """dense<...> for an array (hex bit patterns for floats, so values round-trip exactly)."""
    t = shape.element_type
    flat = np.asarray(array).reshape(-1)
    if flat.size == 0:
        return "dense<>"
    if flat.size and (flat == flat[0]).all() and (not t.is_float or _same_bits(flat)):
        return f"dense<{_scalar_text(flat[0], t)}>"
    if flat.size > 64 and not t.is_pred:
        raw = np.ascontiguousarray(np.asarray(array, t.np_dtype)).tobytes()
        return 'dense<"0x' + raw.hex().upper() + '">'
    items = [_scalar_text(x, t) for x in flat]
    if shape.rank == 0:
        return f"dense<{items[0]}>"

    def nest(dims, offset):
        if not dims:
            return items[offset], offset + 1
        parts = []
        for _ in range(dims[0]):
            s, offset = nest(dims[1:], offset)
            parts.append(s)
        return "[" + ", ".join(parts) + "]", offset
    return "dense<" + nest(shape.dims, 0)[0] + ">"


def _same_bits(flat: np.ndarray) -> bool:
    bits = flat.view(UINT[flat.dtype.itemsize])
    return bool((bits == bits[0]).all())


def float_literal(v: float, type_name: str | None = None) -> str:
    """A value as an MLIR float literal of type_name (default f64): with its point, and as
    the type's hex bits for inf and NaN."""
    v = float(v)
    if not np.isfinite(v):
        dtype = ELEMENT_TYPES.get(type_name or "f64", ELEMENT_TYPES["f64"]).np_dtype
        bits = int(np.asarray(v, dtype).view(UINT[dtype.itemsize]))
        return f"0x{bits:0{2 * dtype.itemsize}X}"
    mantissa, e, exponent = repr(v).partition("e")
    return mantissa + ("" if "." in mantissa else ".0") + e + exponent


def _scalar_text(x, t) -> str:
    if t.is_pred:
        return "true" if x else "false"
    if t.is_float:
        v = float(x)
        if np.isfinite(v):
            s = format_float(x, t.name)
            mantissa, e, exponent = s.partition("e")
            if "." not in mantissa:  # MLIR's float literals need the point: 1.0e+06
                mantissa += ".0"
            return mantissa + e + exponent
        bits = int(np.asarray(x, t.np_dtype).view(UINT[t.np_dtype.itemsize]))
        return f"0x{bits:0{2 * t.np_dtype.itemsize}X}"
    return str(int(x))
