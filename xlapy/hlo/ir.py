"""HLO objects: Instruction, Computation, Module.

Invariants kept by the mutating methods (and checked by the verifier):
  - an instruction belongs to at most one computation (`parent`);
  - `users` lists, without duplicates, the instructions of the same computation that have
    this instruction as an operand; operands and users change only through
    `set_operand`, `replace_operands`, `replace_all_uses_with` and `Computation` methods;
  - instruction names are unique within a computation (XLA's parser scopes them so);
    `Module.unique_name` makes new names unique within the whole module;
  - a computation's `parameters[i]` is its `parameter(i)`;
  - `Module.computations` lists callees before their callers, the entry last.

Attribute values are described in attributes.py. A constant's value is `literal`: a NumPy
array of the shape's logical (row-major) dims and element dtype, a tuple of literals for a
tuple-shaped constant, or ELIDED when the text had `{...}`.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, Sequence

import numpy as np

from xlapy.errors import XlapyError
from xlapy.hlo.literal import ELIDED
from xlapy.hlo.opcodes import COMPUTATION_ATTRS, OPCODES
from xlapy.hlo.shapes import Shape


_COMPUTATION_ATTR_SET = frozenset(COMPUTATION_ATTRS)
_NUMBER_SUFFIX = re.compile(r"\.\d+$")  # the ".N" that unique names append


class Instruction:
    __slots__ = ("opcode", "shape", "operands", "attrs", "name", "metadata", "literal",
                 "parameter_number", "users", "parent", "loc")

    def __init__(self, opcode: str, shape: Shape, operands: Sequence["Instruction"] = (),
                 attrs: dict | None = None, name: str | None = None,
                 metadata: dict | None = None, literal=None,
                 parameter_number: int | None = None):
        if opcode not in OPCODES:
            raise XlapyError(f"unknown opcode '{opcode}'")
        self.opcode = opcode
        self.shape = shape
        self.operands: list[Instruction] = list(operands)
        self.attrs: dict = dict(attrs or {})
        self.name = name
        self.metadata: dict = dict(metadata or {})
        self.literal = literal
        self.parameter_number = parameter_number
        self.users: list[Instruction] = []
        self.parent: Computation | None = None
        self.loc: tuple[int, int] | None = None  # (line, column) in the parsed text, if any
        for op in self.operands:
            if self not in op.users:
                op.users.append(self)

    # ---- called computations -----------------------------------------------------------
    def called_computations(self) -> list["Computation"]:
        attrs = self.attrs
        if not attrs or attrs.keys().isdisjoint(_COMPUTATION_ATTR_SET):
            return []
        out = []
        for key in COMPUTATION_ATTRS:
            v = attrs.get(key)
            if v is None:
                continue
            if isinstance(v, (list, tuple)):
                out.extend(v)
            elif isinstance(v, Computation):
                out.append(v)
        return out

    @property
    def fused_computation(self) -> "Computation":
        return self.attrs["calls"]

    # ---- operand / user edits ------------------------------------------------------------
    def set_operand(self, index: int, new: "Instruction") -> None:
        old = self.operands[index]
        self.operands[index] = new
        if old not in self.operands and self in old.users:
            old.users.remove(self)
        if self not in new.users:
            new.users.append(self)

    def replace_operands(self, new_operands: Sequence["Instruction"]) -> None:
        for op in self.operands:
            if self in op.users:
                op.users.remove(self)
        self.operands = list(new_operands)
        for op in self.operands:
            if self not in op.users:
                op.users.append(self)

    def replace_operand_with(self, old: "Instruction", new: "Instruction") -> None:
        for i, op in enumerate(self.operands):
            if op is old:
                self.operands[i] = new
        if self in old.users:
            old.users.remove(self)
        if self not in new.users:
            new.users.append(self)

    def replace_all_uses_with(self, new: "Instruction") -> None:
        """Every user of self now uses `new`; if self is its computation's root, so is new."""
        if new is self:
            return
        for user in list(self.users):
            user.replace_operand_with(self, new)
        if self.parent is not None and self.parent.root is self:
            self.parent.root = new

    def drop_operands(self) -> None:
        for op in self.operands:
            if self in op.users:
                op.users.remove(self)
        self.operands = []

    # ---- misc ---------------------------------------------------------------------------
    @property
    def is_root(self) -> bool:
        return self.parent is not None and self.parent.root is self

    @property
    def op_name(self) -> str | None:
        return self.metadata.get("op_name")

    def where(self) -> str:
        """'line L:C: ' when the instruction came from text, else ''."""
        return f"line {self.loc[0]}:{self.loc[1]}: " if self.loc else ""

    def to_string(self, **options) -> str:
        from xlapy.hlo.printer import instruction_to_string  # (the printer imports this module)
        return instruction_to_string(self, **options)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"<Instruction {self.name} = {self.shape} {self.opcode}>"


class Computation:
    def __init__(self, name: str):
        self.name = name
        self.instructions: list[Instruction] = []
        self.parameters: list[Instruction] = []
        self.root: Instruction | None = None
        self.module: Module | None = None
        self.attrs: dict = {}  # computation-level attributes after '}' (execution_thread=...)

    # ---- building -------------------------------------------------------------------------
    def add_instruction(self, instr: Instruction, name: str | None = None) -> Instruction:
        """Append `instr` (its operands must already be in this computation)."""
        if instr.parent is not None:
            raise XlapyError(f"instruction {instr.name} already belongs to {instr.parent.name}")
        if name is not None:
            instr.name = name
        if self.module is not None:
            instr.name = self.module.unique_name(instr.name or instr.opcode)
        elif instr.name is None:
            instr.name = f"{instr.opcode}.{len(self.instructions)}"
        instr.parent = self
        self.instructions.append(instr)
        if instr.opcode == "parameter":
            n = instr.parameter_number
            while len(self.parameters) <= n:
                self.parameters.append(None)
            self.parameters[n] = instr
        return instr

    def remove_instruction(self, instr: Instruction) -> None:
        """Remove an instruction that has no users and is not the root."""
        if instr.users:
            raise XlapyError(f"cannot remove {instr.name}: it still has users "
                             f"{[u.name for u in instr.users]}")
        if instr is self.root:
            raise XlapyError(f"cannot remove {instr.name}: it is the root of {self.name}")
        if instr.opcode == "parameter":
            raise XlapyError(f"cannot remove parameter {instr.name} of {self.name}")
        instr.drop_operands()
        self.instructions.remove(instr)
        instr.parent = None
        if self.module is not None:
            self.module.release_name(instr.name)

    def replace_instruction(self, old: Instruction, new: Instruction) -> Instruction:
        """Add `new` if needed, redirect all uses of `old` to it, and remove `old`."""
        if new.parent is None:
            self.add_instruction(new)
        old.replace_all_uses_with(new)
        self.remove_instruction(old)
        return new

    # ---- queries -------------------------------------------------------------------------
    @property
    def num_parameters(self) -> int:
        return len(self.parameters)

    def parameter_shapes(self) -> list[Shape]:
        return [p.shape for p in self.parameters]

    def root_elements(self) -> list[Instruction]:
        """The root's operands when it is a tuple (a multi-output fusion), else [root]."""
        return list(self.root.operands) if self.root.opcode == "tuple" else [self.root]

    def post_order(self) -> list[Instruction]:
        """All instructions, operands before users; definition order breaks ties."""
        order: list[Instruction] = []
        append = order.append
        visited: set[int] = set()  # ids: on the stack or done
        visit = visited.add
        for start in self.instructions:
            if id(start) in visited:
                continue
            visit(id(start))
            for op in start.operands:
                if id(op) not in visited:
                    break
            else:  # the usual case: every operand was defined before it
                append(start)
                continue
            stack = [(start, iter(start.operands))]
            while stack:
                node, ops = stack[-1]
                for op in ops:
                    if id(op) not in visited:
                        visit(id(op))
                        stack.append((op, iter(op.operands)))
                        break
                else:
                    stack.pop()
                    append(node)
        return order

    def called_computations(self) -> list["Computation"]:
        seen, out = set(), []
        for instr in self.instructions:
            for c in instr.called_computations():
                if id(c) not in seen:
                    seen.add(id(c))
                    out.append(c)
        return out

    def instruction(self, name: str) -> Instruction:
        for i in self.instructions:
            if i.name == name:
                return i
        raise KeyError(name)

    def __iter__(self) -> Iterator[Instruction]:
        return iter(self.instructions)

    def to_string(self, **options) -> str:
        from xlapy.hlo.printer import computation_to_string  # (the printer imports this module)
        return computation_to_string(self, **options)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"<Computation {self.name}: {len(self.instructions)} instructions>"


class Module:
    def __init__(self, name: str):
        self.name = name
        self.computations: list[Computation] = []
        self.entry: Computation | None = None
        # Header attributes after `HloModule name,` other than entry_computation_layout
        # (which the printer derives from the entry computation), kept verbatim.
        self.attrs: dict[str, str] = {}
        self.has_entry_layout = False
        # Header blocks (FileNames, FunctionNames, FileLocations, StackFrames): name -> lines.
        self.header_blocks: dict[str, list[str]] = {}
        self._names: set[str] = set()
        self._counters: dict[str, int] = {}

    # ---- names ---------------------------------------------------------------------------
    def unique_name(self, base: str) -> str:
        """`base` if unused in this module, else `base.N` with the next free N."""
        if base not in self._names:
            self._names.add(base)
            return base
        stem = _NUMBER_SUFFIX.sub("", base)
        n = self._counters.get(stem, 0)
        while True:
            n += 1
            cand = f"{stem}.{n}"
            if cand not in self._names:
                self._counters[stem] = n
                self._names.add(cand)
                return cand

    def release_name(self, name: str) -> None:
        self._names.discard(name)

    # ---- computations ----------------------------------------------------------------------
    def add_computation(self, comp: Computation, entry: bool = False,
                        before: Computation | None = None) -> Computation:
        """Add `comp` (and claim its instructions' names). Callees must come first: pass
        `before=` to insert ahead of an existing caller."""
        comp.module = self
        comp.name = self._unique_computation_name(comp.name)
        for instr in comp.instructions:
            instr.name = self.unique_name(instr.name)
        if before is not None:
            self.computations.insert(self.computations.index(before), comp)
        else:
            self.computations.append(comp)
        if entry:
            self.entry = comp
        return comp

    def _unique_computation_name(self, name: str) -> str:
        taken = {c.name for c in self.computations}
        if name not in taken:
            return name
        stem = _NUMBER_SUFFIX.sub("", name)
        n = 1
        while f"{stem}.{n}" in taken:
            n += 1
        return f"{stem}.{n}"

    def remove_computation(self, comp: Computation) -> None:
        self.computations.remove(comp)
        for instr in comp.instructions:
            self.release_name(instr.name)

    def computation(self, name: str) -> Computation:
        for c in self.computations:
            if c.name == name:
                return c
        raise KeyError(name)

    def computation_post_order(self) -> list[Computation]:
        """Computations reachable from the entry, callees before callers, entry last."""
        order, seen = [], set()

        def visit(c: Computation):
            if id(c) in seen:
                return
            seen.add(id(c))
            for callee in c.called_computations():
                visit(callee)
            order.append(c)

        if self.entry is not None:
            visit(self.entry)
        return order

    def instructions(self) -> Iterable[Instruction]:
        for c in self.computations:
            yield from c.instructions

    def to_string(self, **options) -> str:
        from xlapy.hlo.printer import module_to_string  # (the printer imports this module)
        return module_to_string(self, **options)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"<Module {self.name}: {len(self.computations)} computations>"

    def clone(self) -> "Module":
        """A deep copy: new computations and instructions (attributes that name computations
        point at the copies); shapes and literals, which nothing mutates, are shared. It
        prints exactly as the original (tested on the corpus); copying directly instead of
        printing and parsing the text takes a tenth of the time."""
        new = Module(self.name)
        new.attrs = dict(self.attrs)
        new.has_entry_layout = self.has_entry_layout
        new.header_blocks = {k: list(v) for k, v in self.header_blocks.items()}
        new._names = set(self._names)
        new._counters = dict(self._counters)
        comps = {id(c): Computation(c.name) for c in self.computations}

        def attr(v):
            if isinstance(v, Computation):
                return comps[id(v)]
            if isinstance(v, list):
                return [attr(x) for x in v]
            if isinstance(v, tuple):
                return tuple(attr(x) for x in v)
            if isinstance(v, dict):
                return {k: attr(x) for k, x in v.items()}
            return v

        for c in self.computations:
            nc = comps[id(c)]
            nc.module = new
            nc.attrs = dict(c.attrs)
            copies: dict[int, Instruction] = {}
            for i in c.instructions:
                ni = Instruction.__new__(Instruction)
                ni.opcode, ni.shape, ni.name = i.opcode, i.shape, i.name
                ni.attrs = {k: attr(v) for k, v in i.attrs.items()}
                ni.metadata = dict(i.metadata)
                ni.literal, ni.parameter_number, ni.loc = i.literal, i.parameter_number, i.loc
                ni.users, ni.parent = [], nc
                copies[id(i)] = ni
            for i in c.instructions:
                ni = copies[id(i)]
                ni.operands = [copies[id(o)] for o in i.operands]
                ni.users = [copies[id(u)] for u in i.users if id(u) in copies]
            nc.instructions = [copies[id(i)] for i in c.instructions]
            nc.parameters = [copies[id(p)] if p is not None else None for p in c.parameters]
            nc.root = copies[id(c.root)] if c.root is not None else None
            new.computations.append(nc)
        new.entry = comps[id(self.entry)] if self.entry is not None else None
        return new


# ---- structural equality (used by round-trip tests and "no change" pass checks) -----------

def operand_closure(x: Instruction) -> list[Instruction]:
    """x and every instruction it depends on (its operands, their operands, ...)."""
    return _closure(x, "operands")


def user_closure(x: Instruction) -> list[Instruction]:
    """x and every instruction that depends on it (its users, their users, ...)."""
    return _closure(x, "users")


def _closure(x: Instruction, edges: str) -> list[Instruction]:
    out = []
    for i in (todo := Worklist([x])):
        out.append(i)
        todo.push(*getattr(i, edges))
    return out


class Worklist:
    """Depth-first visits of a graph, each node at most once (by identity):

        for v in (todo := Worklist([start])):
            ... todo.push(*next_nodes) ...
    """

    def __init__(self, items=()):
        self._stack = list(items)
        self._seen: set[int] = set()

    def push(self, *items) -> None:
        self._stack.extend(items)

    def __iter__(self):
        while self._stack:
            x = self._stack.pop()
            if id(x) not in self._seen:
                self._seen.add(id(x))
                yield x


def _literal_equal(a, b) -> bool:
    if a is ELIDED or b is ELIDED:
        return a is b
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(_literal_equal(x, y) for x, y in zip(a, b)))
    if a is None or b is None:
        return a is b
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return a.tobytes() == b.tobytes()  # bitwise: NaN payloads and -0.0 count


def _attr_equal(a, b) -> bool:
    if isinstance(a, Computation) or isinstance(b, Computation):
        return isinstance(a, Computation) and isinstance(b, Computation) and a.name == b.name
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], Computation):
        return (isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_attr_equal(x, y) for x, y in zip(a, b)))
    return type(a) is type(b) and a == b


def instructions_equal(a: Instruction, b: Instruction) -> bool:
    return (a.opcode == b.opcode and a.name == b.name and a.shape == b.shape
            and [o.name for o in a.operands] == [o.name for o in b.operands]
            and a.parameter_number == b.parameter_number
            and list(a.attrs) == list(b.attrs)
            and all(_attr_equal(a.attrs[k], b.attrs[k]) for k in a.attrs)
            and a.metadata == b.metadata and _literal_equal(a.literal, b.literal))


def module_diff(a: Module, b: Module) -> str | None:
    """None if the modules are structurally equal, else a description of the first difference."""
    if a.name != b.name:
        return f"module name {a.name!r} != {b.name!r}"
    if a.attrs != b.attrs:
        return f"module attributes differ: {a.attrs} != {b.attrs}"
    if a.header_blocks != b.header_blocks:
        return "header blocks (FileNames/StackFrames/...) differ"
    ca, cb = {c.name: c for c in a.computations}, {c.name: c for c in b.computations}
    if set(ca) != set(cb):
        return f"computations differ: {sorted(set(ca) ^ set(cb))}"
    if (a.entry and a.entry.name) != (b.entry and b.entry.name):
        return "entry computations differ"
    for name, x in ca.items():
        y = cb[name]
        if len(x.instructions) != len(y.instructions):
            return (f"computation {name}: {len(x.instructions)} vs {len(y.instructions)} "
                    "instructions")
        if (x.root and x.root.name) != (y.root and y.root.name):
            return f"computation {name}: root differs"
        if x.attrs != y.attrs:
            return f"computation {name}: attributes differ"
        iy = {i.name: i for i in y.instructions}
        for i in x.instructions:
            j = iy.get(i.name)
            if j is None or not instructions_equal(i, j):
                return f"computation {name}: instruction differs:\n  {i}\n  {j}"
    return None


def modules_equal(a: Module, b: Module) -> bool:
    return module_diff(a, b) is None
