"""Attribute readers for the lowering rules: each accepts an attribute in the forms MLIR
allows (array<i64: ...>, a list of integers, dense<...>) and raises a ParseError at the op
when it is missing or malformed."""

from __future__ import annotations

from xlapy.hlo.stablehlo.attrs import Dense, DenseArray, Enum, Int, Struct

def ints(cx, name: str, default=None, required: bool = True) -> tuple[int, ...]:
    v = cx.attr(name)
    if v is None:
        if default is not None or not required:
            return default
        raise cx.error(f"missing attribute '{name}'")
    return as_ints(cx, v, name)


def as_ints(cx, v, name: str) -> tuple[int, ...]:
    if isinstance(v, DenseArray) and v.element != "i1":
        return tuple(int(x) for x in v.values)
    if isinstance(v, (list, tuple)) and all(isinstance(x, (int, Int)) and not isinstance(x, bool)
                                            for x in v):
        return tuple(int(x.value if isinstance(x, Int) else x) for x in v)
    if isinstance(v, Dense) and v.array.ndim <= 1 and v.shape.element_type.is_integer:
        return tuple(int(x) for x in v.array.reshape(-1))
    raise cx.error(f"attribute '{name}' must be a list of integers, got {v}")


def int_(cx, name: str, default=None) -> int:
    v = cx.attr(name)
    if v is None:
        if default is None:
            raise cx.error(f"missing attribute '{name}'")
        return default
    if isinstance(v, Int):
        return v.value
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    raise cx.error(f"attribute '{name}' must be an integer, got {v}")


def bool_(cx, name: str, default: bool = False) -> bool:
    v = cx.attr(name)
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    raise cx.error(f"attribute '{name}' must be true or false, got {v}")


def bools(cx, name: str) -> tuple[bool, ...] | None:
    v = cx.attr(name)
    if v is None:
        return None
    if isinstance(v, DenseArray) and v.element == "i1":
        return tuple(bool(x) for x in v.values)
    if isinstance(v, list) and all(isinstance(x, bool) for x in v):
        return tuple(v)
    if isinstance(v, Dense) and v.shape.element_type.is_pred:
        return tuple(bool(x) for x in v.array.reshape(-1))
    raise cx.error(f"attribute '{name}' must be a list of booleans, got {v}")


def enum(cx, name: str, kind: str, default: str | None = None) -> str | None:
    v = cx.attr(name)
    if v is None:
        return default
    if isinstance(v, Enum) and v.kind == kind:
        return v.value
    raise cx.error(f"attribute '{name}' must be #stablehlo<{kind} ...>, got {v}")


def struct(cx, name: str, sname: str) -> dict:
    v = cx.attr(name, required=True)
    if not isinstance(v, Struct) or v.name != sname:
        raise cx.error(f"attribute '{name}' must be #{sname}<...>, got {v}")
    return v.fields


def field_ints(cx, fields: dict, key: str, default=()) -> tuple[int, ...]:
    if key not in fields:
        return tuple(default)
    return as_ints(cx, fields[key], key)


def field_int(cx, fields: dict, key: str, default: int) -> int:
    v = fields.get(key, default)
    v = v.value if isinstance(v, Int) else v
    if not isinstance(v, int) or isinstance(v, bool):
        raise cx.error(f"field '{key}' must be an integer, got {v}")
    return v


def pairs(cx, name: str, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """padding: dense<[[lo, hi], ...]> : tensor<Nx2xi64> (or a splat, or [[lo, hi], ...])."""
    v = cx.attr(name)
    if v is None:
        return (0,) * rank, (0,) * rank
    if isinstance(v, Dense) and v.shape.element_type.is_integer and v.array.shape in (
            (rank, 2), (0,) if rank == 0 else (rank, 2)):
        arr = v.array.reshape(rank, 2)
        return tuple(int(x) for x in arr[:, 0]), tuple(int(x) for x in arr[:, 1])
    if isinstance(v, list) and len(v) == rank and all(isinstance(p, list) and len(p) == 2
                                                      for p in v):
        rows = [as_ints(cx, p, name) for p in v]
        return tuple(r[0] for r in rows), tuple(r[1] for r in rows)
    raise cx.error(f"attribute '{name}' must be {rank} (low, high) pairs, got {v}")


def check_len(cx, what: str, values, n: int):
    if values is not None and len(values) != n:
        raise cx.error(f"{what} has {len(values)} entries, {n} expected")
    return values
