"""Primitive types, layouts and shapes, and their HLO text forms.

A Shape is either an array shape (element type, dimensions, optional layout) or a tuple of
shapes. Shapes are immutable and hashable. The layout is XLA's minor_to_major permutation;
`None` means "not specified", which every consumer treats as the default row-major layout
{rank-1, ..., 0}. Keeping "unspecified" distinct from "explicitly row-major" lets the
printer reproduce its input exactly.

Text forms (as XLA prints them):  f32[4,5]{1,0}   s32[]   pred[0]   (f32[4]{0}, s32[])
token[]   f32[4,5]{1,0:T(8,128)}  (layout details after ':' are kept verbatim).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import ml_dtypes
import numpy as np
from xlapy.errors import XlapyError


@dataclass(frozen=True)
class PrimitiveType:
    """One HLO element type. `kind` is 'pred', 's' (signed int), 'u' (unsigned int),
    'f' (floating point), 'c' (complex: a pair of floats, stored real part first) or
    'token'. As in XLA, a complex type is not a floating-point type (`is_float` is False)."""

    name: str
    kind: str
    bits: int
    np_dtype: np.dtype | None

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def component_type(self) -> "PrimitiveType":
        """The float type of a complex type's real and imaginary parts (itself otherwise)."""
        return _COMPONENT.get(self.name, self)

    @property
    def is_integer(self) -> bool:
        return self.kind in ("s", "u")

    @property
    def is_signed(self) -> bool:
        return self.kind in ("s", "f")

    @property
    def is_pred(self) -> bool:
        return self.kind == "pred"

    @property
    def itemsize(self) -> int:
        return max(self.bits // 8, 1)

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


def _t(name, kind, bits, dtype):
    return PrimitiveType(name, kind, bits, None if dtype is None else np.dtype(dtype))


PRED = _t("pred", "pred", 8, np.bool_)
S8 = _t("s8", "s", 8, np.int8)
S16 = _t("s16", "s", 16, np.int16)
S32 = _t("s32", "s", 32, np.int32)
S64 = _t("s64", "s", 64, np.int64)
U8 = _t("u8", "u", 8, np.uint8)
U16 = _t("u16", "u", 16, np.uint16)
U32 = _t("u32", "u", 32, np.uint32)
U64 = _t("u64", "u", 64, np.uint64)
F16 = _t("f16", "f", 16, np.float16)
BF16 = _t("bf16", "f", 16, ml_dtypes.bfloat16)
F32 = _t("f32", "f", 32, np.float32)
F64 = _t("f64", "f", 64, np.float64)
C64 = _t("c64", "c", 64, np.complex64)
C128 = _t("c128", "c", 128, np.complex128)
TOKEN = _t("token", "token", 0, None)
_COMPONENT = {"c64": F32, "c128": F64}

PRIMITIVE_TYPES: dict[str, PrimitiveType] = {
    t.name: t for t in (PRED, S8, S16, S32, S64, U8, U16, U32, U64, F16, BF16, F32, F64, C64,
                        C128, TOKEN)
}
_BY_DTYPE = {t.np_dtype: t for t in PRIMITIVE_TYPES.values() if t.np_dtype is not None}


def primitive_type(x) -> PrimitiveType:
    """The PrimitiveType for a name ('f32'), a NumPy dtype or dtype-like, or a PrimitiveType."""
    if isinstance(x, PrimitiveType):
        return x
    if isinstance(x, str) and x in PRIMITIVE_TYPES:
        return PRIMITIVE_TYPES[x]
    try:
        dt = np.dtype(x)
    except TypeError:
        dt = None
    if dt is not None and dt in _BY_DTYPE:
        return _BY_DTYPE[dt]
    raise XlapyError(f"unsupported element type {x!r}; supported: {', '.join(PRIMITIVE_TYPES)}")


@dataclass(frozen=True)
class Layout:
    """minor_to_major permutation; `extra` keeps any text after ':' (tiling, memory space)."""

    minor_to_major: tuple[int, ...]
    extra: str = ""

    def __str__(self) -> str:
        s = ",".join(map(str, self.minor_to_major))
        return "{" + s + (":" + self.extra if self.extra else "") + "}"

    @staticmethod
    def default(rank: int) -> "Layout":
        return Layout(tuple(range(rank - 1, -1, -1)))


@dataclass(frozen=True)
class Shape:
    """An array shape (element_type, dims, layout) or a tuple shape (tuple_shapes)."""

    element_type: PrimitiveType | None
    dims: tuple[int, ...] = ()
    layout: Layout | None = None
    tuple_shapes: tuple["Shape", ...] | None = None

    # ---- constructors -------------------------------------------------------------------
    @staticmethod
    def array(element_type, dims: Iterable[int] = (), layout=None) -> "Shape":
        if layout is not None and not isinstance(layout, Layout):
            layout = Layout(tuple(layout))
        return Shape(primitive_type(element_type), tuple(int(d) for d in dims), layout)

    @staticmethod
    def tuple(shapes: Sequence["Shape"]) -> "Shape":
        return Shape(None, (), None, tuple(shapes))

    # ---- queries -------------------------------------------------------------------------
    @property
    def is_tuple(self) -> bool:
        return self.tuple_shapes is not None

    @property
    def is_array(self) -> bool:
        return self.tuple_shapes is None and self.element_type is not TOKEN

    @property
    def is_token(self) -> bool:
        return self.element_type is TOKEN

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def dtype(self) -> np.dtype:
        return self.element_type.np_dtype

    @property
    def size(self) -> int:
        return math.prod(self.dims)

    @property
    def byte_size(self) -> int:
        if self.is_tuple:
            return sum(s.byte_size for s in self.tuple_shapes)
        if self.is_token:
            return 0
        return self.size * self.element_type.itemsize

    @property
    def minor_to_major(self) -> tuple[int, ...]:
        """The effective layout: the explicit one, or row-major."""
        if self.layout is not None:
            return self.layout.minor_to_major
        return tuple(range(self.rank - 1, -1, -1))

    @property
    def has_default_layout(self) -> bool:
        return self.minor_to_major == tuple(range(self.rank - 1, -1, -1))

    def leaves(self) -> list["Shape"]:
        """Array leaves in order (a tuple shape flattened depth-first)."""
        if self.is_tuple:
            return [leaf for s in self.tuple_shapes for leaf in s.leaves()]
        return [self]

    def with_layout(self, layout) -> "Shape":
        if layout is not None and not isinstance(layout, Layout):
            layout = Layout(tuple(layout))
        return Shape(self.element_type, self.dims, layout, self.tuple_shapes)

    def with_default_layouts(self) -> "Shape":
        """The same shape with every array's layout made explicit row-major."""
        if self.is_tuple:
            return Shape.tuple([s.with_default_layouts() for s in self.tuple_shapes])
        if self.is_token:
            return self
        return self.with_layout(Layout.default(self.rank) if self.layout is None else self.layout)

    def without_layout(self) -> "Shape":
        if self.is_tuple:
            return Shape.tuple([s.without_layout() for s in self.tuple_shapes])
        return Shape(self.element_type, self.dims, None)

    def with_element_type(self, element_type) -> "Shape":
        return Shape(primitive_type(element_type), self.dims, self.layout)

    def with_dims(self, dims) -> "Shape":
        return Shape(self.element_type, tuple(dims), None)

    def compatible(self, other: "Shape") -> bool:
        """Equal ignoring layouts (what shape inference can promise)."""
        if self.tuple_shapes is None and isinstance(other, Shape) and other.tuple_shapes is None:
            return self.element_type == other.element_type and self.dims == other.dims  # arrays
        return self.without_layout() == other.without_layout()

    def equal_with_layout(self, other: "Shape") -> bool:
        """Equal, with unspecified layouts taken as row-major."""
        if self.is_tuple or other.is_tuple:
            return (self.is_tuple and other.is_tuple
                    and len(self.tuple_shapes) == len(other.tuple_shapes)
                    and all(a.equal_with_layout(b)
                            for a, b in zip(self.tuple_shapes, other.tuple_shapes)))
        return (self.element_type == other.element_type and self.dims == other.dims
                and self.minor_to_major == other.minor_to_major)

    # ---- text ---------------------------------------------------------------------------
    def to_string(self, print_layout: bool = True) -> str:
        if self.is_tuple:
            return "(" + ", ".join(s.to_string(print_layout) for s in self.tuple_shapes) + ")"
        s = f"{self.element_type.name}[{','.join(map(str, self.dims))}]"
        if print_layout and self.layout is not None and not self.is_token:
            if self.rank or self.layout.extra:
                s += str(self.layout)
        return s

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"Shape({self.to_string()})"


def scalar(element_type) -> Shape:
    return Shape.array(element_type, ())


def same_buffer_shape(a: Shape, b: Shape) -> bool:
    """Whether arrays of shapes a and b occupy buffers of the same size and element order
    (one can be written where the other lies, element for element)."""
    return (not a.is_tuple and not b.is_tuple and a.dims == b.dims
            and a.minor_to_major == b.minor_to_major
            and a.element_type.itemsize == b.element_type.itemsize)


# ---- limits ------------------------------------------------------------------------------
# The most dimensions an array may have: NumPy's limit, so every array of a program can
# cross into and out of it.
MAX_RANK = 64
# The most bytes an array may take: 2^48, 256 TiB, beyond the address space a 64-bit CPU
# gives a process (and so beyond any buffer, or any loop a program could finish: a fused
# array is never allocated, but its elements are still computed one by one).
MAX_ARRAY_BYTES = 1 << 48
# How deep tuple shapes may nest (the code that walks shapes recurses).
MAX_TUPLE_DEPTH = 64


def size_problem(shape: Shape, depth: int = 0) -> str | None:
    """Why no program can have an array of this shape (too many dimensions, too many bytes,
    tuples nested too deep), or None when it is fine."""
    if shape.is_tuple:
        if depth >= MAX_TUPLE_DEPTH:
            return f"tuple shapes are nested more than {MAX_TUPLE_DEPTH} deep"
        for s in shape.tuple_shapes:
            problem = size_problem(s, depth + 1)
            if problem:
                return problem
        return None
    if shape.rank > MAX_RANK:
        return (f"an array of rank {shape.rank} ({shape.element_type}[...]): at most "
                f"{MAX_RANK} dimensions are supported")
    if shape.is_token:
        return None
    n = shape.element_type.itemsize
    for d in shape.dims:
        n *= d
    if n > MAX_ARRAY_BYTES or any(d > MAX_ARRAY_BYTES for d in shape.dims):
        return (f"{shape.to_string(print_layout=False)} would take {n} bytes, more than an "
                f"array can (2^48 bytes, 256 TiB)")
    return None
