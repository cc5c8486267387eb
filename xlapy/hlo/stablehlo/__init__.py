"""StableHLO (MLIR text) <-> xlapy HLO, without an MLIR dependency.

    parse_stablehlo(text)       StableHLO text (what `jax.jit(f).lower(x).as_text()` gives,
                                short or generic op forms, with or without locations) -> Module
    parse_stablehlo_file(path)
    to_stablehlo(module)        Module -> StableHLO text that jaxlib and parse_stablehlo read
    is_stablehlo_text(text)     does the text look like MLIR rather than HLO?

The reader runs in two phases: syntax.py (MLIR text -> a tree of operations, the short forms
read by pretty.py) and convert.py (the tree -> HLO, each op lowered by its row of the op
table, ops.py, with rules_data.py, rules_control.py and chlo.py). The writer is
printer.py with print_rules.py.
Errors are ParseError with file:line:column, the line and a caret, like the HLO parser's.
"""

from __future__ import annotations

import re

from xlapy.hlo.ir import Module

_MLIR_START = re.compile(r"\s*(?:(?://[^\n]*\n\s*)*)(?:#|module\b|func\.func\b|\"builtin\.module\"|"
                         r"\"func\.func\"|\{-#)")


def parse_stablehlo(text: str, filename: str = "<stablehlo>") -> Module:
    """Parse StableHLO/MLIR text into an HLO Module (ParseError on bad input)."""
    if not isinstance(text, str):
        raise TypeError(f"parse_stablehlo() takes MLIR text (str), not {type(text).__name__}")
    from xlapy.hlo.stablehlo.convert import Converter  # (on first use: `import xlapy` stays
    from xlapy.hlo.stablehlo.syntax import MlirParser  # light; the op table loads every rule)
    parser = MlirParser(text, filename)
    try:
        module_op = parser.parse_file()
        return Converter(module_op, parser.aliases, parser).run()
    except RecursionError:
        raise parser.error("the input is nested too deeply") from None


def parse_stablehlo_file(path) -> Module:
    with open(path, encoding="utf-8") as f:
        return parse_stablehlo(f.read(), str(path))


def is_stablehlo_text(text: str) -> bool:
    """True when `text` starts like MLIR (module, func.func, #alias) rather than HloModule."""
    return bool(_MLIR_START.match(text))


def to_stablehlo(module: Module, print_locations: bool = True) -> str:
    from xlapy.hlo.stablehlo.printer import to_stablehlo as _print  # (on first use, as above)
    return _print(module, print_locations)


__all__ = ["parse_stablehlo", "parse_stablehlo_file", "is_stablehlo_text", "to_stablehlo"]
