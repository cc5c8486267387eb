"""Partial shapes: TensorShape with unknown (None) dimensions, as in TensorFlow 1.x.

    TensorShape([None, 784])        # rank 2, first dimension unknown
    TensorShape(None)               # unknown rank
    s.as_list() -> [None, 784]; s[1] -> Dimension(784); s[1].value -> 784
    s.merge_with(t)                 # the most specific shape compatible with both, or error
"""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError


class Dimension:
    __slots__ = ("value",)

    def __init__(self, value):
        if isinstance(value, Dimension):
            value = value.value
        if value is not None:
            value = int(value)
            if value < 0:
                raise InvalidArgumentError(f"dimension {value} must be >= 0")
        self.value = value

    def __int__(self):
        if self.value is None:
            raise InvalidArgumentError("cannot convert an unknown Dimension to int")
        return self.value

    __index__ = __int__

    def __eq__(self, other):
        other = other.value if isinstance(other, Dimension) else other
        if self.value is None or other is None:
            return None
        return self.value == other

    def __ne__(self, other):
        eq = self.__eq__(other)
        return None if eq is None else not eq

    def __hash__(self):
        return hash(self.value)

    def is_compatible_with(self, other) -> bool:
        other = Dimension(other).value
        return self.value is None or other is None or self.value == other

    def __repr__(self):
        return f"Dimension({self.value})"

    def __str__(self):
        return "?" if self.value is None else str(self.value)


class TensorShape:
    __slots__ = ("dims",)

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            dims = dims.dims
        if dims is None:
            self.dims = None
        elif isinstance(dims, (int, Dimension)):
            self.dims = (Dimension(dims).value,)
        else:
            self.dims = tuple(Dimension(d).value for d in dims)

    # ---- queries ---------------------------------------------------------------------------
    @property
    def ndims(self):
        return None if self.dims is None else len(self.dims)

    rank = ndims

    def as_list(self) -> list:
        if self.dims is None:
            raise InvalidArgumentError("as_list() is not defined on an unknown TensorShape")
        return list(self.dims)

    def is_fully_defined(self) -> bool:
        return self.dims is not None and all(d is not None for d in self.dims)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self.dims:
            n *= d
        return n

    def __len__(self):
        if self.dims is None:
            raise InvalidArgumentError("cannot take the length of a shape with unknown rank")
        return len(self.dims)

    def __iter__(self):
        if self.dims is None:
            raise InvalidArgumentError("cannot iterate over a shape with unknown rank")
        return (Dimension(d) for d in self.dims)

    def __getitem__(self, key):
        if self.dims is None:
            return Dimension(None) if isinstance(key, int) else TensorShape(None)
        if isinstance(key, slice):
            return TensorShape(self.dims[key])
        return Dimension(self.dims[key])

    # ---- compatibility ---------------------------------------------------------------------
    def is_compatible_with(self, other) -> bool:
        other = as_shape(other)
        if self.dims is None or other.dims is None:
            return True
        return len(self.dims) == len(other.dims) and all(
            a is None or b is None or a == b for a, b in zip(self.dims, other.dims))

    def merge_with(self, other) -> "TensorShape":
        other = as_shape(other)
        if self.dims is None:
            return other
        if other.dims is None:
            return self
        if not self.is_compatible_with(other):
            raise InvalidArgumentError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self.dims, other.dims)])

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise InvalidArgumentError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def with_rank(self, rank: int) -> "TensorShape":
        return self.merge_with(unknown_shape(rank))

    def concatenate(self, other) -> "TensorShape":
        other = as_shape(other)
        if self.dims is None or other.dims is None:
            return TensorShape(None)
        return TensorShape(self.dims + other.dims)

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (InvalidArgumentError, TypeError):
            return NotImplemented
        return self.dims == other.dims

    def __hash__(self):
        return hash(self.dims)

    def __repr__(self):
        return f"TensorShape({None if self.dims is None else list(self.dims)})"

    def __str__(self):
        if self.dims is None:
            return "<unknown>"
        inner = ", ".join("?" if d is None else str(d) for d in self.dims)
        return f"({inner},)" if len(self.dims) == 1 else f"({inner})"

    def tf_str(self) -> str:
        """The bracketed form TF's error messages use: [?,784]."""
        if self.dims is None:
            return "<unknown>"
        return "[" + ",".join("?" if d is None else str(d) for d in self.dims) + "]"


def as_shape(shape) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None) -> TensorShape:
    return TensorShape(None if rank is None else [None] * rank)


def scalar() -> TensorShape:
    return TensorShape([])


def broadcast_shape(a: TensorShape, b: TensorShape, what: str = "") -> TensorShape:
    """NumPy broadcasting on partial shapes. Unknown dims broadcast to unknown unless the
    other side fixes them (a known dim > 1 wins over an unknown one)."""
    if a.dims is None or b.dims is None:
        return TensorShape(None)
    n = max(len(a.dims), len(b.dims))
    da = (1,) * (n - len(a.dims)) + a.dims
    db = (1,) * (n - len(b.dims)) + b.dims
    out = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)
        elif y is None or x == y:
            out.append(x)
        else:
            raise InvalidArgumentError(
                f"Dimensions must be equal, but are {x} and {y}{what} with input shapes: "
                f"{a.tf_str()}, {b.tf_str()}.")
    return TensorShape(out)
