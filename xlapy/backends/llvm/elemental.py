"""The elemental emitter: for each opcode, a rule producing the LLVM value of ONE output
element, given generators for its operands' elements.

A generator is a callable `gen(index) -> value` where `index` is a list of i64 LLVM values
(one per logical dimension of the instruction's shape) and the value is in the "value form"
of types.py (a Python tuple of values for tuple-shaped instructions). Composing the
generators of a fused computation's instructions yields the generator of the whole fusion:
one loop nest, no intermediate arrays. Nothing here is CPU specific; the CPU backend
(and later the GPU backend) supplies the loops around it and the generators of kernel
inputs (ArrayInput, reading a buffer).

Rules live in elemental_ops.py (arithmetic, comparisons, conversions), elemental_data.py
(data movement and indexing) and elemental_reduce.py (reductions, dot, convolution),
each registered with @elemental_rule(opcode, ...) where it is defined. Signature:
    rule(em: ElementalEmitter, instr, operand_gens: list[Gen], index: list) -> value

Generated values are cached per (instruction, index) so an operand used twice is computed
once. Rules that open loops (reduce, dot, ...) must wrap the loop in `em.scope()`: values
created inside a loop do not dominate the code after it, so the cache entries made inside
are dropped when the loop ends.
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import Callable

import numpy as np
from llvmlite import ir

from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import entry_alloca, linear_of
from xlapy.errors import LoweringError
from xlapy.hlo.ir import ELIDED, Computation, Instruction
from xlapy.hlo.opcodes import registrar
from xlapy.hlo.shapes import Shape

ELEMENTAL_RULES: dict[str, Callable] = {}
# rules for the instructions whose result or first operand is complex (elemental_complex.py);
# they take precedence over ELEMENTAL_RULES there
COMPLEX_RULES: dict[str, Callable] = {}


elemental_rule = registrar(ELEMENTAL_RULES, "elemental rule")
complex_rule = registrar(COMPLEX_RULES, "complex elemental rule")


def _involves_complex(instr: Instruction) -> bool:
    if instr.shape.is_array and instr.shape.element_type.is_complex:
        return True
    return bool(instr.operands) and instr.operands[0].shape.is_array and \
        instr.operands[0].shape.element_type.is_complex


class Gen:
    """Generator of an array's elements. `elemental`: made by make_gen, computing each value
    from the operands' (not an override or an input); `tee`: (row buffer, dimension, phase)
    when a row kernel keeps the values in a row buffer (row_kernel._tee)."""
    elemental = False
    tee = None

    def __init__(self, fn: Callable, shape: Shape):
        self.fn = fn
        self.shape = shape

    def __call__(self, index):
        return self.fn(index)


class TupleGen(Gen):
    """Generator of a tuple: get-tuple-element selects an element generator without
    computing the others."""

    def __init__(self, elements: list[Gen], shape: Shape):
        super().__init__(lambda index: tuple(g(index) for g in elements), shape)
        self.elements = elements


class ArrayInput(Gen):
    """Elements of an array in memory: `ptr` points at the first element."""

    def __init__(self, em: "ElementalEmitter", ptr, shape: Shape):
        self.ptr = ptr
        t = shape.element_type

        def load(index):
            b = em.b
            addr = b.gep(ptr, [linear_of(b, shape, index)], inbounds=True,
                         source_etype=T.storage_type(t))
            return T.load(b, addr, t)

        super().__init__(load, shape)


def lowering_error(instr: Instruction, what: str) -> LoweringError:
    return LoweringError(f"{instr.where()}{what}: {instr}\n  To see the HLO and LLVM IR, rerun "
                         "with XLAPY_FLAGS=--xla_dump_to=DIR")


class ElementalEmitter:
    def __init__(self, builder: ir.IRBuilder, module: ir.Module, math=None):
        self.b = builder
        self.module = module
        # (module, name, type) -> ir.Function for the math library's scalar functions; None:
        # xlapy's own (math.py). A target's choice (kernel_target.py: the gpu's libdevice)
        self.math = math
        self._scopes: list[dict] = [{}]
        self._globals: dict[int, ir.GlobalVariable] = {}
        # id(instruction) -> its generator, for every computation generators() has bound
        # (elemental_vector builds vector code from the trees under a reduction)
        self.gen_of: dict[int, Gen] = {}
        # (id(gen), dim, lanes) -> (gen, its vector generator or None): elemental_vector
        self.vector_gens: dict[tuple, tuple] = {}

    # ---- caching ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def scope(self):
        self._scopes.append({})
        try:
            yield
        finally:
            self._scopes.pop()

    def _lookup(self, key):
        for s in reversed(self._scopes):
            if key in s:
                return s[key]
        return None

    @staticmethod
    def _index_key(index):
        return tuple(v.constant if isinstance(v, ir.Constant) else id(v) for v in index)

    def cached(self, key, fn: Callable) -> Callable:
        """fn(index), its values cached per index under `key` in the current scopes."""
        def gen(index):
            k = (key, self._index_key(index))
            value = self._lookup(k)
            if value is None:
                value = fn(index)
                self._scopes[-1][k] = value
            return value
        return gen

    # ---- generators ------------------------------------------------------------------------
    def generators(self, comp: Computation, param_gens: list[Gen],
                   overrides: dict[int, Gen] | None = None) -> dict[int, Gen]:
        """Generators for every instruction of `comp`, its parameters bound to param_gens;
        `overrides` (id(instr) -> Gen) replaces chosen instructions' generators (e.g. a
        reduction whose values a kernel has already computed into a buffer)."""
        gens: dict[int, Gen] = {}
        for instr in comp.post_order():
            if overrides and id(instr) in overrides:
                gens[id(instr)] = overrides[id(instr)]
            elif instr.opcode == "parameter":
                gens[id(instr)] = param_gens[instr.parameter_number]
            else:
                gens[id(instr)] = self.make_gen(instr, [gens[id(o)] for o in instr.operands])
        self.gen_of.update(gens)
        return gens

    def make_gen(self, instr: Instruction, operand_gens: list[Gen]) -> Gen:
        if instr.opcode == "tuple":
            return TupleGen(operand_gens, instr.shape)
        rule = ELEMENTAL_RULES.get(instr.opcode)
        if instr.opcode in COMPLEX_RULES and _involves_complex(instr):
            rule = COMPLEX_RULES[instr.opcode]
        if rule is None:
            raise lowering_error(instr, f"opcode {instr.opcode} has no elemental lowering")

        def gen(index):
            key = (id(instr), self._index_key(index))
            cached = self._lookup(key)
            if cached is not None:
                return cached
            value = rule(self, instr, operand_gens, index)
            self._scopes[-1][key] = value
            return value

        g = Gen(gen, instr.shape)
        g.elemental = True
        return g

    def call_scalar(self, comp: Computation, args: list):
        """Inline a computation on scalar values (reducers, comparators, map functions).
        Returns a value, or a tuple for a tuple-shaped root."""
        gens = self.generators(comp, [Gen(lambda index, v=v: v, p.shape)
                                      for v, p in zip(args, comp.parameters)])
        root = gens[id(comp.root)]
        self.scalar_calls = getattr(self, "scalar_calls", 0) + 1
        try:
            with self.scope():
                out = root([])
        finally:
            self.scalar_calls -= 1
        return out

    def alloca(self, ty: ir.Type, name: str = ""):
        """A stack slot in the function's entry block (so mem2reg turns it into registers)."""
        return entry_alloca(self.b, ty, name=name)

    # ---- constants -------------------------------------------------------------------------
    def constant_global(self, instr: Instruction) -> ir.GlobalVariable:
        """A module-level constant array holding the literal in storage form."""
        g = self._globals.get(id(instr))
        if g is not None:
            return g
        if instr.literal is ELIDED:
            raise lowering_error(instr, "constant was printed as {...}; its value is unknown")
        g = literal_global(self.module, instr.literal, instr.shape, f"const.{instr.name}")
        self._globals[id(instr)] = g
        return g


# A constant of at least this many bytes stays out of the LLVM module when the module has an
# `external_constants` dict (the cpu compiler's): it is declared as an external symbol named
# for a hash of its bytes and its data goes into that dict (symbol -> array), which the
# executable keeps and points the symbol at. LLVM then neither parses nor copies the bytes
# (a model's weights are tens of MB: as an IR initializer they cost more than the code).
EXTERNAL_CONSTANT_BYTES = 1 << 16
EXTERNAL_CONSTANT_PREFIX = "xlapy_const_"


def external_constant_symbol(data: np.ndarray) -> str:
    """The symbol of an external constant with these bytes (contiguous data)."""
    raw = data.reshape(-1).view(np.uint8)   # (bf16 and other NumPy extension types have
    digest = hashlib.blake2b(raw, digest_size=16).hexdigest()   # no buffer format)
    return EXTERNAL_CONSTANT_PREFIX + digest


def literal_global(module: ir.Module, literal, shape: Shape, name: str) -> ir.GlobalVariable:
    """A private constant global with the literal's bytes in storage form, physical order
    (or, for a large one in a module with external_constants, an external declaration)."""
    arr = np.asarray(literal)
    # physical order: transpose logical dims to major-to-minor order
    order = list(reversed(shape.minor_to_major))
    phys = np.ascontiguousarray(np.transpose(arr, order) if arr.ndim else arr)
    data = phys.astype(np.uint8) if shape.element_type.is_pred else phys
    external = getattr(module, "external_constants", None)
    if external is not None and data.nbytes >= EXTERNAL_CONSTANT_BYTES:
        symbol = external_constant_symbol(data)
        g = module.globals.get(symbol)
        if g is None:
            g = ir.GlobalVariable(module, ir.ArrayType(T.I8, data.nbytes), symbol)
            g.global_constant = True
            g.align = 64
            external[symbol] = data
        return g
    raw = bytearray(data.tobytes())
    ty = ir.ArrayType(T.I8, len(raw))
    name = module.get_unique_name(name)
    g = ir.GlobalVariable(module, ty, name)
    g.global_constant = True
    g.linkage = "private"
    g.unnamed_addr = True
    g.align = 64
    g.initializer = ir.FormattedConstant(ty, _byte_string(data.tobytes())) \
        if len(raw) >= 4096 else ir.Constant(ty, raw)
    return g


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def _byte_string(raw: bytes) -> str:
    """c"\\xx..." for LLVM, every byte escaped, built by NumPy (llvmlite escapes a byte at
    a time in Python: 0.4 s for a 4 MB constant, printed at least twice per compile)."""
    data = np.frombuffer(raw, dtype=np.uint8)
    out = np.empty((data.size, 3), dtype=np.uint8)
    out[:, 0] = ord("\\")
    out[:, 1] = _HEX[data >> 4]
    out[:, 2] = _HEX[data & 15]
    return 'c"' + out.tobytes().decode("ascii") + '"'
