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

Dense elements are read and printed by dense.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from xlapy.hlo.shapes import Shape
from xlapy.hlo.stablehlo.dense import UINT, dense_text, dense_values, float_literal
from xlapy.hlo.stablehlo.reader import _FLOAT, _INT, Reader, mlir_quote
from xlapy.hlo.stablehlo.types import (ELEMENT_TYPES, FunctionType, ScalarType, parse_type,
                                       type_to_mlir)

_KEY = re.compile(r'[A-Za-z_][\w$.\-]*|"(?:[^"\\\n]|\\.)*"')

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
        return float_literal(self.value, self.type) + (f" : {self.type}" if self.type else "")


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
            return Float(float(np.array(v, UINT[ELEMENT_TYPES[t].itemsize]).view(
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
