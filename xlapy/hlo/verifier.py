"""The HLO verifier: checks that a Module is structurally valid (XLA's HloVerifier).

    verify(module) -> None      raises VerificationError (ShapeError for shape problems)

Checks, in order (the first violation is reported, quoting the instruction with its
'line L:C: ' position when it came from text, and naming its computation):

  module       an entry computation exists and belongs to the module; computation names
               are unique; every computation has `module` set to this module; a called
               computation is in the module and is listed before its caller (which also
               rules out recursion).
  computation  a root that is one of its instructions; parameters numbered 0..n-1, with
               `parameters[i]` the parameter(i) instruction; instruction names unique in
               the computation (XLA scopes names per computation); each instruction listed
               once, with `parent` set to it.
  graph        operands are instructions of the same computation; each operand lists the
               instruction among its users; each user is in the computation and has the
               instruction as an operand (no duplicate users); no cycles.
  instruction  a known opcode; the opcode table's operand count; well-formed shapes
               (non-negative dims, layouts that are permutations of the dimensions);
               required attributes present and well typed; the declared shape compatible
               (layouts ignored) with the shape inferred by shape_inference.infer_shape,
               which also checks called computations' signatures against the call site
               (reducers take and return scalars, while's condition returns pred[],
               branches take their operands, ...); a collective's replica groups name
               ids below the module's replica_count / num_partitions when it states them.

The verifier never lets a non-xlapy exception escape: anything unexpected while checking an
instruction is reported as a VerificationError about that instruction.
"""

from __future__ import annotations

from xlapy.errors import ShapeError, VerificationError, XlapyError
from xlapy.hlo.ir import Computation, Instruction, Module
from xlapy.hlo.opcodes import COLLECTIVES, OPCODES
from xlapy.hlo.shape_inference import fmt, infer_instruction_shape
from xlapy.hlo.shapes import PrimitiveType, Shape
from xlapy.hlo.aliasing import check_aliases


def verify(module: Module) -> None:
    """Raise VerificationError (or its subclass ShapeError) if `module` is invalid."""
    if not isinstance(module, Module):
        raise VerificationError(f"verify() takes a Module, got {type(module).__name__}")
    try:
        _Verifier(module).run()
    except XlapyError:
        raise
    except Exception as e:
        raise VerificationError(f"module {getattr(module, 'name', '?')} is malformed "
                                f"({type(e).__name__}: {e})") from None


def _describe(instr) -> str:
    """The instruction's text, or a fallback when it is too broken to print."""
    try:
        return str(instr)
    except Exception:
        return f"<{getattr(instr, 'opcode', '?')} instruction {getattr(instr, 'name', '?')}>"


class _Verifier:
    def __init__(self, module: Module):
        self.module = module

    # ---- errors --------------------------------------------------------------------------
    def error(self, comp: Computation | None, instr: Instruction | None, message: str,
              cls=VerificationError) -> VerificationError:
        where = ""
        if instr is not None:
            try:
                where = instr.where()
            except Exception:
                where = ""
        text = where
        if comp is not None:
            text += f"in computation {comp.name}: "
        text += message
        if instr is not None:
            text += f"\n  {_describe(instr)}"
        return cls(text)

    # ---- module --------------------------------------------------------------------------
    def run(self) -> None:
        m = self.module
        comps = m.computations
        if not isinstance(comps, list) or not all(isinstance(c, Computation) for c in comps):
            raise VerificationError(f"module {m.name}: computations must be a list of "
                                    "Computation objects")
        if m.entry is None:
            raise VerificationError(f"module {m.name} has no entry computation")
        if not any(c is m.entry for c in comps):
            raise VerificationError(f"module {m.name}: the entry computation {m.entry.name} is "
                                    "not among the module's computations")
        names: set[str] = set()
        position: dict[int, int] = {}
        for k, c in enumerate(comps):
            if c.name in names:
                raise VerificationError(f"module {m.name}: computation name {c.name} is used "
                                        "twice")
            if id(c) in position:
                raise VerificationError(f"module {m.name}: computation {c.name} is listed twice")
            names.add(c.name)
            position[id(c)] = k
            if c.module is not m:
                raise VerificationError(f"module {m.name}: computation {c.name} does not belong "
                                        "to it (its `module` is not set; use "
                                        "Module.add_computation)")
        for k, c in enumerate(comps):
            self.computation(c, position, k)
        check_aliases(m)

    # ---- one computation ---------------------------------------------------------------------
    def computation(self, comp: Computation, position: dict[int, int], k: int) -> None:
        instrs = comp.instructions
        if not instrs:
            raise self.error(comp, None, "the computation has no instructions")
        members: set[int] = set()
        names: dict[str, Instruction] = {}
        for instr in instrs:
            if not isinstance(instr, Instruction):
                raise self.error(comp, None, f"{instr!r} is not an Instruction")
            if id(instr) in members:
                raise self.error(comp, instr, "the instruction is listed twice")
            members.add(id(instr))
            if instr.parent is not comp:
                owner = getattr(instr.parent, "name", None)
                raise self.error(comp, instr, f"the instruction's parent is {owner}, not this "
                                 "computation")
            if instr.name in names:
                raise self.error(comp, instr, f"instruction name {instr.name} is used twice in "
                                 "the computation")
            names[instr.name] = instr
        if comp.root is None or id(comp.root) not in members:
            raise self.error(comp, None, "the root is missing or is not one of the "
                             "computation's instructions")
        self.parameters(comp, members)
        for instr in instrs:
            self.edges(comp, instr, members)
        self.acyclic(comp)
        for instr in instrs:
            for callee in instr.called_computations():
                p = position.get(id(callee))
                if p is None:
                    raise self.error(comp, instr, f"calls computation "
                                     f"{getattr(callee, 'name', callee)!r}, which is not in "
                                     "the module")
                if p >= k:
                    raise self.error(comp, instr, f"calls computation {callee.name}, which "
                                     "must be listed before its caller (recursion is not "
                                     "allowed)")
            self.instruction(comp, instr)

    def parameters(self, comp: Computation, members: set[int]) -> None:
        params = comp.parameters
        for i, p in enumerate(params):
            if p is None:
                raise self.error(comp, None, f"parameter({i}) is missing; parameters must be "
                                 "numbered 0..n-1")
            if not isinstance(p, Instruction) or p.opcode != "parameter":
                raise self.error(comp, p if isinstance(p, Instruction) else None,
                                 f"parameters[{i}] is not a parameter instruction")
            if id(p) not in members:
                raise self.error(comp, p, f"parameters[{i}] is not one of the computation's "
                                 "instructions")
            if p.parameter_number != i:
                raise self.error(comp, p, f"parameters[{i}] has parameter number "
                                 f"{p.parameter_number}; parameters must be numbered 0..n-1")
        listed = {id(p) for p in params}
        for instr in comp.instructions:
            if instr.opcode == "parameter" and id(instr) not in listed:
                raise self.error(comp, instr, "this parameter is not in the computation's "
                                 "parameter list (duplicate or out-of-range number)")

    def edges(self, comp: Computation, instr: Instruction, members: set[int]) -> None:
        if not isinstance(instr.operands, list) or not isinstance(instr.users, list):
            raise self.error(comp, instr, "operands and users must be lists")
        for i, op in enumerate(instr.operands):
            if not isinstance(op, Instruction):
                raise self.error(comp, instr, f"operand {i} is not an instruction: {op!r}")
            if id(op) not in members:
                raise self.error(comp, instr, f"operand {i} ({op.name}) is not an instruction of "
                                 "this computation")
            if not any(u is instr for u in op.users):
                raise self.error(comp, instr, f"operand {i} ({op.name}) does not list this "
                                 "instruction among its users")
        seen: set[int] = set()
        for u in instr.users:
            if not isinstance(u, Instruction) or id(u) not in members:
                raise self.error(comp, instr, f"user {getattr(u, 'name', u)!r} is not an "
                                 "instruction of this computation")
            if id(u) in seen:
                raise self.error(comp, instr, f"user {u.name} is listed twice")
            seen.add(id(u))
            if not any(o is instr for o in u.operands):
                raise self.error(comp, instr, f"lists {u.name} as a user, but it is not one of "
                                 f"{u.name}'s operands")

    def acyclic(self, comp: Computation) -> None:
        state: dict[int, int] = {}  # 1 on the stack, 2 done
        for start in comp.instructions:
            if id(start) in state:
                continue
            stack = [(start, 0)]
            state[id(start)] = 1
            while stack:
                node, i = stack[-1]
                if i < len(node.operands):
                    stack[-1] = (node, i + 1)
                    op = node.operands[i]
                    s = state.get(id(op))
                    if s == 1:
                        raise self.error(comp, op, "the instruction depends on itself (a cycle "
                                         "through " + " -> ".join(n.name for n, _ in stack) +
                                         ")")
                    if s is None:
                        state[id(op)] = 1
                        stack.append((op, 0))
                    continue
                stack.pop()
                state[id(node)] = 2

    # ---- one instruction -------------------------------------------------------------------
    def instruction(self, comp: Computation, instr: Instruction) -> None:
        if instr.opcode not in OPCODES:
            raise self.error(comp, instr, f"unknown opcode {instr.opcode!r}")
        if not isinstance(instr.shape, Shape):
            raise self.error(comp, instr, f"the shape {instr.shape!r} is not a Shape")
        if instr.opcode == "parameter" and not isinstance(instr.parameter_number, int):
            raise self.error(comp, instr, "a parameter needs an integer parameter number")
        self.shape_ok(comp, instr, instr.shape)
        try:
            inferred = infer_instruction_shape(instr)
        except ShapeError as e:
            raise self.error(comp, instr, str(e), ShapeError) from None
        except XlapyError as e:
            raise self.error(comp, instr, str(e)) from None
        except Exception as e:
            raise self.error(comp, instr, f"malformed instruction ({type(e).__name__}: {e})") \
                from None
        if not inferred.compatible(instr.shape):
            raise self.error(comp, instr, f"the declared shape {fmt(instr.shape)} does not match "
                             f"the inferred shape {fmt(inferred)}", ShapeError)
        if instr.opcode in COLLECTIVES:
            self.device_ids(comp, instr)

    def device_ids(self, comp: Computation, instr: Instruction) -> None:
        """A collective's ids are below the module's replica_count x num_partitions (when
        its header states them; else they are known only when it runs)."""
        counts = {}
        for key in ("replica_count", "num_partitions"):
            text = str(self.module.attrs.get(key, "1"))
            if not text.isdigit() or int(text) < 1:
                raise self.error(comp, instr, f"module attribute {key}={text} is not a "
                                 "positive integer")
            counts[key] = int(text)
        if not any(k in self.module.attrs for k in counts):
            return
        R, P = counts["replica_count"], counts["num_partitions"]
        attrs = instr.attrs
        if attrs.get("use_global_device_ids"):
            n, what = R * P, "devices"
        elif "channel_id" in attrs and instr.opcode in ("all-to-all", "collective-permute"):
            n, what = P, "partitions"
        else:
            n, what = R, "replicas"
        for key in ("replica_groups", "source_target_pairs"):
            groups = getattr(attrs.get(key), "groups", ())
            bad = sorted({i for g in groups for i in g if i >= n})
            if bad:
                raise self.error(comp, instr, f"{key} names id(s) {bad}, but the module has "
                                 f"{n} {what} (replica_count={R}, num_partitions={P})")

    def shape_ok(self, comp: Computation, instr: Instruction, shape: Shape) -> None:
        """Element type, non-negative dims, and a layout that permutes the dimensions."""
        if shape.is_tuple:
            for s in shape.tuple_shapes:
                if not isinstance(s, Shape):
                    raise self.error(comp, instr, f"tuple shape element {s!r} is not a Shape")
                self.shape_ok(comp, instr, s)
            return
        if not isinstance(shape.element_type, PrimitiveType):
            raise self.error(comp, instr, f"shape {shape!r} has no element type")
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                   for d in shape.dims):
            raise self.error(comp, instr, f"shape {shape} has a negative or non-integer "
                             "dimension size")
        if shape.layout is None or shape.is_token:
            return
        m2m = shape.layout.minor_to_major
        if sorted(m2m) != list(range(shape.rank)):
            raise self.error(comp, instr, f"layout {shape.layout} of {shape} is not a "
                             f"permutation of its {shape.rank} dimensions")
