"""HLO: the IR. Text format (parse / print; StableHLO too), objects, shapes, opcode table."""

import pathlib as _pathlib

from xlapy.hlo.ir import ELIDED, Computation, Instruction, Module, module_diff, modules_equal
from xlapy.hlo.opcodes import OPCODES, OpInfo
from xlapy.hlo.parser import parse, parse_file, parse_shape, read_text
from xlapy.hlo.shapes import (BF16, F16, F32, F64, PRED, PRIMITIVE_TYPES, S8, S16, S32, S64,
                              TOKEN, U8, U16, U32, U64, Layout, PrimitiveType, Shape,
                              primitive_type, scalar)

from xlapy.hlo.shape_inference import infer_shape
from xlapy.hlo.verifier import verify
from xlapy.hlo.builder import Builder
from xlapy.hlo.stablehlo import is_stablehlo_text, parse_stablehlo, to_stablehlo


def parse_module(text: str, filename: str = "<hlo>") -> Module:
    """HLO text or StableHLO (MLIR) text, told apart by how the text starts."""
    if isinstance(text, str) and is_stablehlo_text(text):
        return parse_stablehlo(text, filename)
    return parse(text, filename)


def parse_module_file(path) -> Module:
    """A .mlir file as StableHLO, a .hlo file as HLO, anything else by its content."""
    path = _pathlib.Path(path)
    text = read_text(path)
    if path.suffix == ".mlir":
        return parse_stablehlo(text, str(path))
    if path.suffix == ".hlo":
        return parse(text, str(path))
    return parse_module(text, str(path))


__all__ = [
    "Builder", "infer_shape", "verify",
    "ELIDED", "Computation", "Instruction", "Module", "module_diff", "modules_equal",
    "OPCODES", "OpInfo", "parse", "parse_file", "parse_shape", "parse_module",
    "parse_module_file", "parse_stablehlo", "to_stablehlo", "is_stablehlo_text",
    "BF16", "F16", "F32", "F64", "PRED", "PRIMITIVE_TYPES", "S8", "S16", "S32", "S64", "TOKEN",
    "U8", "U16", "U32", "U64", "Layout", "PrimitiveType", "Shape", "primitive_type", "scalar",
]
