"""The syntax tree the StableHLO reader builds (syntax.py) and lowers (convert.py): MLIR's
own structure, nothing StableHLO-specific. An Op has a name, result groups (`%0:2 =` or
`%a, %b =`), operand uses (`%0#1`), attributes under their generic names, regions of blocks
with typed arguments, and types."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Use:
    """A use of a value: %name or %name#index."""

    name: str
    index: int
    pos: int
    explicit_index: bool = False

    def __str__(self) -> str:
        return f"%{self.name}" + (f"#{self.index}" if self.explicit_index else "")


@dataclass
class Block:
    args: list  # [(name, Shape, pos)]
    ops: list
    pos: int


@dataclass
class Op:
    name: str
    pos: int
    results: list = field(default_factory=list)  # [(name, count)]
    operands: list = field(default_factory=list)  # [Use]
    attrs: dict = field(default_factory=dict)
    regions: list = field(default_factory=list)  # [[Block]]
    operand_types: list | None = None
    result_types: list = field(default_factory=list)
    loc: object = None  # the loc attribute (Opaque text), if any

    @property
    def num_results(self) -> int:
        return sum(n for _, n in self.results)
