"""MLIR types <-> xlapy shapes.

    tensor<2x3xf32> <-> f32[2,3]      tensor<i1> <-> pred[]      tensor<4xui8> <-> u8[4]
    tuple<tensor<f32>, tensor<2xi32>> <-> (f32[], s32[2])        !stablehlo.token <-> token[]

Element types: i1 (pred), i8..i64 and si8..si64 (signed), ui8..ui64 (unsigned), f16, bf16,
f32, f64. What xlapy cannot represent gets a clear ParseError at the type: dynamic (`?`) or
unranked (`*`) dimensions, complex<...>, fp8/int4 types, quantized types, encodings.

Scalar types outside tensors (`i64` in `1 : i64`, `index`, `f32` in a dot algorithm) parse
to ScalarType; function types (`(tensor<f32>) -> tensor<f32>`) to FunctionType.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xlapy.hlo.shapes import (BF16, F16, F32, F64, PRED, S8, S16, S32, S64, TOKEN, U8, U16, U32,
                              U64, PrimitiveType, Shape)

ELEMENT_TYPES: dict[str, PrimitiveType] = {
    "i1": PRED, "i8": S8, "i16": S16, "i32": S32, "i64": S64,
    "si8": S8, "si16": S16, "si32": S32, "si64": S64,
    "ui8": U8, "ui16": U16, "ui32": U32, "ui64": U64,
    "f16": F16, "bf16": BF16, "f32": F32, "f64": F64,
}
MLIR_NAMES: dict[str, str] = {
    "pred": "i1", "s8": "i8", "s16": "i16", "s32": "i32", "s64": "i64",
    "u8": "ui8", "u16": "ui16", "u32": "ui32", "u64": "ui64",
    "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64",
}

# Element types MLIR has and xlapy does not (recognised to give a clear error).
_OTHER_SCALARS = re.compile(r"(?:f8E[0-9A-Za-z]+|f6E[0-9A-Za-z]+|f4E[0-9A-Za-z]+|tf32|f80|f128"
                            r"|[su]?i\d+|index|none)(?![\w$.])")
_ELEMENT = re.compile(r"(" + "|".join(sorted(ELEMENT_TYPES, key=len, reverse=True))
                      + r")(?![\w$.])")
_DIM = re.compile(r"(\d+|\?|\*)x")


@dataclass(frozen=True)
class ScalarType:
    """A builtin type outside a tensor: i32, f32, index, ..."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class FunctionType:
    inputs: tuple
    results: tuple

    def __str__(self) -> str:
        ins = ", ".join(type_to_mlir(t) for t in self.inputs)
        outs = ", ".join(type_to_mlir(t) for t in self.results)
        return f"({ins}) -> " + (outs if len(self.results) == 1 and not
                                 isinstance(self.results[0], FunctionType) else f"({outs})")


def parse_type(r, aliases: dict | None = None, allow_index: bool = False):
    """A type at the reader's position: Shape, ScalarType or FunctionType (`index` elements,
    as in layout attributes, read as s64 where allow_index)."""
    r.skip_ws()
    pos = r.pos
    text = r.text
    if r.accept("("):
        inputs = tuple(r.items(lambda: parse_type(r, aliases), ")", "a function type's inputs"))
        r.expect("->", "in a function type")
        return FunctionType(inputs, tuple(parse_results(r, aliases)))
    if r.keyword("tensor"):
        return _tensor(r, pos, allow_index)
    if r.keyword("tuple"):
        r.expect("<", "after tuple")
        return Shape.tuple(r.items(lambda: _value_type(r, aliases), ">", "a tuple type"))
    if r.keyword("complex"):
        raise r.error("complex types are not supported: xlapy has no complex element types yet",
                      pos)
    if text.startswith("!", pos):
        if r.keyword("!stablehlo.token") or r.keyword("!mhlo.token"):
            return Shape(TOKEN, ())
        m = re.compile(r"![\w$.]+").match(text, pos)
        name = m.group(0) if m else "!"
        if aliases is not None and name in aliases:
            r.pos = m.end()
            return aliases[name]
        raise r.error(f"unsupported type '{name}' (xlapy reads tensor, tuple and "
                      "!stablehlo.token types)", pos)
    m = _ELEMENT.match(text, pos)
    if m:
        r.pos = m.end()
        return ScalarType(m.group(1))
    m = _OTHER_SCALARS.match(text, pos)
    if m:
        r.pos = m.end()
        return ScalarType(m.group(0))
    raise r.error(f"expected a type such as tensor<2x3xf32>, found {r.describe_next()}")


def parse_results(r, aliases=None) -> list:
    """A function type's results: one type, or a parenthesised list (possibly empty)."""
    r.skip_ws()
    if r.accept("("):
        return r.items(lambda: parse_type(r, aliases), ")", "the result types")
    return [parse_type(r, aliases)]


def _value_type(r, aliases) -> Shape:
    r.skip_ws()
    pos = r.pos
    t = parse_type(r, aliases)
    if not isinstance(t, Shape):
        raise r.error(f"expected a tensor, tuple or token type, found '{t}' (a bare scalar type "
                      "is not a value type in StableHLO: write tensor<...>)", pos)
    return t


def _tensor(r, start: int, allow_index: bool = False) -> Shape:
    r.expect("<", "after tensor")
    r.skip_ws()
    dims = []
    while True:
        m = _DIM.match(r.text, r.pos)
        if not m:
            break
        if m.group(1) == "?":
            raise r.error("dynamic dimensions ('?') are not supported: xlapy compiles static "
                          "shapes only", r.pos)
        if m.group(1) == "*":
            raise r.error("unranked tensors ('*') are not supported: xlapy compiles static "
                          "shapes only", r.pos)
        dims.append(int(m.group(1)))
        r.pos = m.end()
    pos = r.pos
    if r.text.startswith("complex", pos):
        raise r.error("complex element types are not supported: xlapy has no complex types "
                      "yet", pos)
    m = _ELEMENT.match(r.text, pos)
    if not m and allow_index and re.match(r"index(?![\w$.])", r.text[pos:pos + 6]):
        r.pos = pos + 5
        r.expect(">", "to close tensor<...>")
        return Shape(S64, tuple(dims))
    if not m:
        m2 = _OTHER_SCALARS.match(r.text, pos)
        if m2:
            raise r.error(f"element type {m2.group(0)} is not supported (xlapy has "
                          f"{', '.join(ELEMENT_TYPES)})", pos)
        if r.text.startswith("!", pos):
            raise r.error("quantized and other dialect element types are not supported", pos)
        raise r.error(f"expected dimensions and an element type such as 2x3xf32, found "
                      f"{r.describe_next()}", pos)
    r.pos = m.end()
    r.skip_ws()
    if r.text.startswith(",", r.pos):
        raise r.error("tensor encodings (bounds, sparsity, layouts) are not supported", r.pos)
    r.expect(">", "to close tensor<...>")
    return Shape(ELEMENT_TYPES[m.group(1)], tuple(dims))


def type_to_mlir(t) -> str:
    """The MLIR spelling of a Shape (tensor/tuple/token), ScalarType or FunctionType."""
    if isinstance(t, Shape):
        if t.is_tuple:
            return "tuple<" + ", ".join(type_to_mlir(s) for s in t.tuple_shapes) + ">"
        if t.is_token:
            return "!stablehlo.token"
        return "tensor<" + "".join(f"{d}x" for d in t.dims) + element_to_mlir(t.element_type) + ">"
    return str(t)


def element_to_mlir(t: PrimitiveType) -> str:
    return MLIR_NAMES[t.name]
