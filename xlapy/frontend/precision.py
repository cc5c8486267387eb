"""lax.Precision: how precisely a dot or convolution computes (jax.lax.Precision).

XLA's operand_precision per operand: DEFAULT (fastest), HIGH, HIGHEST. JAX also takes
the strings of its dot-algorithm presets and maps them to these: 'default', 'fastest',
'bfloat16' -> DEFAULT; 'high', 'bfloat16_3x', 'tensorfloat32' -> HIGH; 'highest',
'float32' -> HIGHEST. A `precision=` argument is None, one of those (for both operands)
or a pair of them; canonicalize() makes it None or a pair of lowercase names, the form
the dot_general and conv_general_dilated primitives carry and the HLO prints
(operand_precision={highest,highest}, left out when both are default, as XLA prints it).

On the host CPU every precision computes in the operands' own type (float32 stays
float32): the setting changes the HLO text, never the numbers.
"""

from __future__ import annotations

import enum

from xlapy.errors import XlapyError

_STRINGS = {"default": "DEFAULT", "fastest": "DEFAULT", "bfloat16": "DEFAULT",
            "high": "HIGH", "bfloat16_3x": "HIGH", "tensorfloat32": "HIGH",
            "highest": "HIGHEST", "float32": "HIGHEST"}


class Precision(enum.Enum):
    """Per-operand precision of a dot or convolution (jax.lax.Precision)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        if isinstance(value, str) and value in _STRINGS:
            return cls[_STRINGS[value]]
        return None

    def __str__(self) -> str:
        return self.name


class RoundingMethod(enum.IntEnum):
    """lax.round's rounding of halves (jax.lax.RoundingMethod)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def _one(p, where: str) -> str:
    if isinstance(p, Precision):
        return p.name.lower()
    if isinstance(p, str) and p in _STRINGS:  # (lowercase only, as JAX)
        return _STRINGS[p].lower()
    raise XlapyError(
        f"{where}: precision must be None, a lax.Precision, one of the strings "
        f"{sorted(_STRINGS)}, or a pair of those; got {p!r}")


def canonicalize(precision, where: str = "precision"):
    """None, or the pair of lowercase names ("default"/"high"/"highest") for the two
    operands."""
    if precision is None:
        return None
    if isinstance(precision, (tuple, list)):
        if len(precision) != 2:
            raise XlapyError(f"{where}: a precision pair needs 2 entries (one per operand), "
                             f"got {precision!r}")
        return tuple(_one(p, where) for p in precision)
    p = _one(precision, where)
    return (p, p)
