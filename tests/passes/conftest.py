"""Helpers for pass tests: HLO text in, HLO text out (compared ignoring instruction names),
or "must not change" (run returns False and the module is identical).

Tests run with --import-mode=importlib, so they reach the helpers through the `hlo`
fixture: hlo.module(text), hlo.canonical(mod), hlo.run(pass, mod),
hlo.rewrites(pass, before, after), hlo.unchanged(pass, text).
"""

from __future__ import annotations

import pytest

from xlapy.hlo import module_diff, parse
from xlapy.hlo.attributes import Raw, quote
from xlapy.hlo.printer import format_attr_value
from xlapy.hlo.ir import Computation, Instruction, Module
from xlapy.hlo.literal import format_literal
from xlapy.passes.pipeline import Pipeline


def module(text: str) -> Module:
    """Parse a test module; a bare computation body gets a module header."""
    text = text.strip()
    if not text.startswith("HloModule"):
        text = "HloModule test\n\n" + text
    return parse(text)


def _order(comp: Computation) -> list[Instruction]:
    """Instructions reachable from the root (operands first, in operand order), then the
    rest (dead code) in the same way from the instruction list."""
    out: list[Instruction] = []
    seen: set[int] = set()

    def visit(start: Instruction) -> None:
        stack = [(start, 0)]
        if id(start) in seen:
            return
        seen.add(id(start))
        while stack:
            node, k = stack[-1]
            if k < len(node.operands):
                stack[-1] = (node, k + 1)
                op = node.operands[k]
                if id(op) not in seen:
                    seen.add(id(op))
                    stack.append((op, 0))
                continue
            stack.pop()
            out.append(node)

    for p in comp.parameters:
        visit(p)
    if comp.root is not None:
        visit(comp.root)
    for i in comp.instructions:
        visit(i)
    return out


def canonical(mod: Module, metadata: bool = False) -> str:
    """The module as text with instructions renamed by position (parameters p<n>, others
    v<k>) and listed in a canonical order, so that two modules that differ only in
    instruction names and order print the same."""
    lines = []
    for comp in mod.computations:
        order = _order(comp)
        names: dict[int, str] = {}
        k = 0
        for i in order:
            if i.opcode == "parameter":
                names[id(i)] = f"p{i.parameter_number}"
            else:
                names[id(i)] = f"v{k}"
                k += 1
        entry = "ENTRY " if comp is mod.entry else ""
        lines.append(f"{entry}{comp.name} {{")
        for i in order:
            if i.opcode == "parameter":
                args = str(i.parameter_number)
            elif i.opcode == "constant":
                args = format_literal(i.literal, i.shape)
            else:
                args = ", ".join(names.get(id(o), "?" + o.name) for o in i.operands)
            text = f"{names[id(i)]} = {i.shape} {i.opcode}({args})"
            for key, value in i.attrs.items():
                if key in ("custom_call_target", "opaque") and not isinstance(value, Raw):
                    text += f", {key}={quote(value)}"
                else:
                    text += f", {key}={format_attr_value(value)}"
            if metadata and i.metadata:
                text += f", metadata={i.metadata}"
            lines.append(("  ROOT " if i is comp.root else "  ") + text)
        lines.append("}")
    return "\n".join(lines)


def run_verified(p, mod: Module) -> bool:
    """Run pass `p` alone with verification and the no-change check."""
    return Pipeline("test", [p], verify=True, disabled=[]).run(mod)


def assert_rewrites(p, before: str, after: str, metadata: bool = False) -> Module:
    """`p` turns `before` into `after` (names and instruction order ignored)."""
    mod = module(before)
    assert run_verified(p, mod), f"{p.name} reported no change on:\n{before}"
    got, want = canonical(mod, metadata), canonical(module(after), metadata)
    assert got == want, f"\n--- got:\n{got}\n--- expected:\n{want}\n--- module:\n{mod}"
    return mod


def assert_unchanged(p, text: str) -> None:
    """`p` leaves `text` alone: run returns False and the module is identical."""
    mod = module(text)
    before = mod.clone()
    assert not run_verified(p, mod), f"{p.name} changed:\n{text}\ninto\n{mod}"
    assert module_diff(before, mod) is None


class _Helpers:
    module = staticmethod(module)
    canonical = staticmethod(canonical)
    run = staticmethod(run_verified)
    rewrites = staticmethod(assert_rewrites)
    unchanged = staticmethod(assert_unchanged)


@pytest.fixture
def hlo(no_pass_flags):
    return _Helpers


@pytest.fixture
def no_pass_flags(monkeypatch):
    monkeypatch.delenv("XLAPY_FLAGS", raising=False)
    monkeypatch.delenv("XLAPY_VERIFY_PASSES", raising=False)
