"""HLO: the IR. Text format (parse / print), objects, shapes, opcode table."""

from xlapy.hlo.ir import ELIDED, Computation, Instruction, Module, module_diff, modules_equal
from xlapy.hlo.opcodes import OPCODES, OpInfo
from xlapy.hlo.parser import parse, parse_file, parse_shape
from xlapy.hlo.shapes import (BF16, F16, F32, F64, PRED, PRIMITIVE_TYPES, S8, S16, S32, S64,
                              TOKEN, U8, U16, U32, U64, Layout, PrimitiveType, Shape,
                              primitive_type, scalar)

from xlapy.hlo.shape_inference import infer_shape
from xlapy.hlo.verifier import verify
from xlapy.hlo.builder import Builder

__all__ = [
    "Builder", "infer_shape", "verify",
    "ELIDED", "Computation", "Instruction", "Module", "module_diff", "modules_equal",
    "OPCODES", "OpInfo", "parse", "parse_file", "parse_shape",
    "BF16", "F16", "F32", "F64", "PRED", "PRIMITIVE_TYPES", "S8", "S16", "S32", "S64", "TOKEN",
    "U8", "U16", "U32", "U64", "Layout", "PrimitiveType", "Shape", "primitive_type", "scalar",
]
