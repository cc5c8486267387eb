"""MLIR attribute values: parsing them into Python values and printing them back.

    1 : i64  -> Int(1, 'i64')        1.5 : f32 -> Float(1.5, 'f32')     true -> True
    "s"      -> str                  [a, b]    -> list                  {k = v} -> dict
    @f       -> Symbol('f')          unit      -> UNIT                  tensor<2xf32> -> Shape
    array<i64: 1, 2>                  -> DenseArray('i64', (1, 2))
    dense<[1.0, 2.0]> : tensor<2xf32> -> Dense(ndarray, Shape)
    #stablehlo<comparison_direction LT> -> Enum('comparison_direction', 'LT')
    #stablehlo.gather<offset_dims = [0], ...> -> Struct('stablehlo.gather', {...})
    #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]> -> Struct('stablehlo.conv',
                                                               {'labels': ...})
    anything else (#sdy..., #mhlo.sharding<...>, affine_map<...>) -> Opaque(text), kept verbatim

Dense elements accept what MLIR prints: splats (`dense<1.0>`), nested lists, booleans, hex
integers read as bit patterns for floats (`0x7FC00000`), and the hex blob
`dense<"0x...">` MLIR uses for large constants (little-endian element bytes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from xlapy.hlo.literal import format_float
from xlapy.hlo.shapes import Shape
from xlapy.hlo.stablehlo.reader import _FLOAT, _INT, Reader, mlir_quote
from xlapy.hlo.stablehlo.types import (ELEMENT_TYPES, FunctionType, ScalarType, element_to_mlir,
                                       parse_type, type_to_mlir)

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_MAX_CONSTANT_BYTES = 4 << 30
_KEY = re.compile(r'[A-Za-z_][\w$.\-]*|"(?:[^"\\\n]|\\.)*"')
_DENSE_TOKEN = re.compile(r"\s*(?:(\[)|(\])|(,)|(true|false)"
                          r"|(-?0x[0-9a-fA-F]+)|([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan))"
                          r"|(\())")


@dataclass(frozen=True)
class Int:
    value: int
    type: str | None = None

    def __str__(self):
        return f"{self.value}" + (f" : {self.type}" if self.type else "")


@dataclass(frozen=True)
class Float:
    value: float
    type: str | None = None

    def __str__(self):
        v = repr(float(self.value)) if self.type is None else format_float(self.value, "f64")
        return v + (f" : {self.type}" if self.type else "")


@dataclass(frozen=True)
class Symbol:
    name: str

    def __str__(self):
        return "@" + symbol_text(self.name)


class _Unit:
    def __repr__(self):
        return "UNIT"

    def __str__(self):
        return "unit"


UNIT = _Unit()


@dataclass(frozen=True)
class DenseArray:
    element: str
    values: tuple

    def __str__(self):
        if not self.values:
            return f"array<{self.element}>"
        vals = ", ".join(("true" if v else "false") if self.element == "i1" else str(v)
                         for v in self.values)
        return f"array<{self.element}: {vals}>"


@dataclass(frozen=True, eq=False)
class Dense:
    array: np.ndarray
    shape: Shape

    def __str__(self):
        return dense_text(self.array, self.shape) + " : " + type_to_mlir(self.shape)


@dataclass(frozen=True)
class Enum:
    kind: str
    value: str

    def __str__(self):
        return f"#stablehlo<{self.kind} {self.value}>"


@dataclass(frozen=True)
class Struct:
    name: str
    fields: dict = field(default_factory=dict)

    def __str__(self):
        if self.name == "stablehlo.conv":
            return f"#stablehlo.conv<{self.fields['labels']}>"
        return f"#{self.name}<" + ", ".join(f"{k} = {attr_text(v)}"
                                             for k, v in self.fields.items()) + ">"


@dataclass(frozen=True)
class Opaque:
    text: str

    def __str__(self):
        return self.text


def symbol_text(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][\w$.]*", name) else mlir_quote(name)


# ---- parsing ---------------------------------------------------------------------------------

def parse_attr(r: Reader, aliases: dict | None = None):
    """One attribute value at the reader's position (with its `: type` where MLIR allows)."""
    r.skip_ws()
    pos, text = r.pos, r.text
    c = text[pos:pos + 1]
    if c == "[":
        r.pos += 1
        return r.items(lambda: parse_attr(r, aliases), "]", "a list attribute")
    if c == "{":
        r.pos += 1
        return parse_dict_body(r, aliases)
    if c == '"':
        s = r.string()
        if r.accept(":"):
            parse_type(r, aliases)
        return s
    if c == "@":
        return Symbol(r.symbol())
    if c == "#":
        return _hash_attr(r, aliases)
    if r.keyword("true"):
        return True
    if r.keyword("false"):
        return False
    if r.keyword("unit"):
        return UNIT
    if r.keyword("dense"):
        return parse_dense(r, pos, aliases)
    if r.keyword("dense_resource"):
        raise r.error("dense_resource constants are not supported: print the module with its "
                      "constants inline", pos)
    if r.keyword("array"):
        return _dense_array(r)
    if r.keyword("loc"):
        r.expect("(")
        return Opaque("loc(" + r.balanced("(", ")") + ")")
    for word in ("affine_map", "affine_set", "strided", "distinct", "sparse"):
        if r.keyword(word):
            r.expect("<")
            return Opaque(f"{word}<" + r.balanced("<", ">") + ">")
    m = _FLOAT.match(text, pos)
    if m:
        r.pos = m.end()
        return Float(float(m.group(0)), _opt_type(r, aliases))
    m = _INT.match(text, pos)
    if m:
        v = r.integer()
        t = _opt_type(r, aliases)
        if t is not None and t.startswith("f"):  # 0x7FC00000 : f32 is a bit pattern
            return Float(float(np.array(v, _UINT[ELEMENT_TYPES[t].itemsize]).view(
                ELEMENT_TYPES[t].np_dtype)), t)
        return Int(v, t)
    return parse_type(r, aliases)  # a type used as an attribute (function_type = ...)


def _opt_type(r: Reader, aliases) -> str | None:
    if not r.accept(":"):
        return None
    r.skip_ws()
    pos = r.pos
    t = parse_type(r, aliases)
    if not isinstance(t, ScalarType):
        raise r.error(f"expected a scalar type such as i64 after ':', found {type_to_mlir(t)}", pos)
    return t.name


def parse_dict_body(r: Reader, aliases=None) -> dict:
    """`k = v, k2, ...}` after the '{' (a key without a value is a unit attribute)."""
    out = {}

    def entry():
        r.skip_ws()
        kpos = r.pos
        m = r.match(_KEY, "an attribute name")
        key = m.group(0)
        if key.startswith('"'):
            key = key[1:-1]
        if key in out:
            raise r.error(f"attribute '{key}' given twice", kpos)
        out[key] = parse_attr(r, aliases) if r.accept("=") else UNIT
    r.items(entry, "}", "an attribute dictionary")
    return out


def _hash_attr(r: Reader, aliases):
    pos = r.pos
    m = r.match(re.compile(r"#([\w$.\-]+)"), "an attribute")
    name = m.group(1)
    if not r.text.startswith("<", r.pos):  # an alias such as #loc3 or #map
        if aliases is not None and "#" + name in aliases:
            return aliases["#" + name]
        return Opaque("#" + name)  # resolved later (aliases may be defined after their use)
    r.pos += 1
    body_pos = r.pos
    body = r.balanced("<", ">")
    if name == "stablehlo" or name == "mhlo" or name == "chlo":
        parts = body.split(None, 1)
        if len(parts) != 2:
            raise r.error(f"expected '#{name}<kind VALUE>', found '#{name}<{body}>'", pos)
        return Enum(parts[0], parts[1].strip())
    if name in ("stablehlo.conv", "mhlo.conv"):
        return Struct("stablehlo.conv", {"labels": body.strip()})
    if name.startswith(("stablehlo.", "mhlo.", "chlo.")) and name not in (
            "stablehlo.type_extensions", "stablehlo.bounds", "mhlo.sharding"):
        sub = Reader(r.text[:body_pos + len(body)], r.filename)
        sub.pos = body_pos
        fields = parse_struct_body(sub, aliases, end=body_pos + len(body))
        return Struct(name.replace("mhlo.", "stablehlo.", 1), fields)
    return Opaque(f"#{name}<{body}>")


def parse_struct_body(r: Reader, aliases=None, end: int | None = None) -> dict:
    """`key = value, ...` up to `end` (or a closing '>'): the body of #stablehlo.gather<...>
    and friends, and of dot_general's `algorithm = <...>`."""
    fields = {}
    while True:
        r.skip_ws()
        if (end is not None and r.pos >= end) or r.text.startswith(">", r.pos):
            break
        kpos = r.pos
        key = r.bare_id("a field name")
        if key in fields:
            raise r.error(f"field '{key}' given twice", kpos)
        r.expect("=", f"after field name {key}")
        fields[key] = parse_attr(r, aliases)
        if not r.accept(","):
            break
    r.skip_ws()
    if end is not None and r.pos < end:
        raise r.error(f"expected ',' or the end of the attribute, found {r.describe_next()}")
    return fields


def _dense_array(r: Reader) -> DenseArray:
    r.expect("<", "after array")
    r.skip_ws()
    pos = r.pos
    t = parse_type(r)
    if not isinstance(t, ScalarType):
        raise r.error("expected an element type such as i64 in array<...>", pos)
    values = []
    if r.accept(":"):
        def value():
            if t.name == "i1":
                if r.keyword("true"):
                    return True
                if r.keyword("false"):
                    return False
                raise r.error(f"expected true or false, found {r.describe_next()}")
            if t.name.startswith(("f", "bf")):
                m = r.match(_FLOAT if r.peek_re(_FLOAT) else _INT, "a number")
                return float(m.group(0))
            return r.integer()
        values = r.items(value, ">", "an array<...> attribute")
    else:
        r.expect(">", "to close array<...>")
    return DenseArray(t.name, tuple(values))


def parse_dense(r: Reader, pos: int, aliases=None) -> Dense:
    """`dense<...> : tensor<...>` (the keyword already read)."""
    r.expect("<", "after dense")
    body_pos = r.pos
    body = r.balanced("<", ">")
    r.expect(":", "and the type of the dense elements (dense<...> : tensor<...>)")
    r.skip_ws()
    tpos = r.pos
    shape = parse_type(r, aliases, allow_index=True)
    if not isinstance(shape, Shape) or not shape.is_array:
        raise r.error("dense elements need a tensor type", tpos)
    try:
        array = dense_values(body, shape)
    except ValueError as e:
        raise r.error(f"malformed dense elements for {type_to_mlir(shape)}: {e}",
                      body_pos) from None
    return Dense(array, shape)


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
            bits = np.empty(len(values), _UINT[dtype.itemsize])
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


# ---- printing --------------------------------------------------------------------------------

def attr_text(v) -> str:
    """MLIR text of a parsed (or constructed) attribute value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return mlir_quote(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(attr_text(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "[" + ", ".join(attr_text(x) for x in v) + "]"
    if isinstance(v, dict):
        return dict_text(v)
    if isinstance(v, (Shape, FunctionType, ScalarType)):
        return type_to_mlir(v)
    return str(v)


def dict_text(d: dict) -> str:
    parts = []
    for k, v in d.items():
        key = k if re.fullmatch(r"[A-Za-z_][\w$.\-]*", k) else mlir_quote(k)
        parts.append(key if v is UNIT else f"{key} = {attr_text(v)}")
    return "{" + ", ".join(parts) + "}"


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
    bits = flat.view(_UINT[flat.dtype.itemsize])
    return bool((bits == bits[0]).all())


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
        bits = int(np.asarray(x, t.np_dtype).view(_UINT[t.np_dtype.itemsize]))
        return f"0x{bits:0{2 * t.np_dtype.itemsize}X}"
    return str(int(x))
