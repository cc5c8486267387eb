"""Input/output aliasing of a module's entry computation (XLA's `input_output_alias`).

A module header attribute such as

    HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {1}: (2, {}, may-alias) }

says that output leaf {0} may be written into the buffer of parameter 0 (the caller
donated it), output {1} into parameter 2. JAX emits it for `donate_argnums`; xlapy.jit does
the same. The attribute stays in `Module.attrs` as text (so printing is verbatim); this
module parses and formats it.

An alias is a permission, not an obligation: a backend that cannot honour one (the cpu
backend checks that the parameter is dead by the time the output is written) computes
into a fresh buffer instead, which gives the same result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xlapy.errors import VerificationError as AliasError

ATTR = "input_output_alias"
_ENTRY = re.compile(r"\{([\d,\s]*)\}\s*:\s*"
                    r"\(\s*(\d+)\s*,\s*\{([\d,\s]*)\}\s*(?:,\s*([\w-]+)\s*)?\)")


@dataclass(frozen=True)
class Alias:
    output_index: tuple        # shape index into the entry root ({} for a non-tuple root)
    parameter_number: int
    parameter_index: tuple     # shape index into that parameter
    kind: str = "may-alias"    # or "must-alias"


def _index(text: str) -> tuple:
    text = text.strip()
    return tuple(int(x) for x in text.split(",")) if text else ()


def parse_aliases(text: str) -> list[Alias]:
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise AliasError(f"input_output_alias: expected '{{ ... }}', got '{text}'")
    body = body[1:-1].strip()
    out, pos = [], 0
    while pos < len(body):
        m = _ENTRY.match(body, pos)
        if m is None:
            raise AliasError(f"input_output_alias: cannot read '{body[pos:]}': expected "
                             "'{output index}: (parameter, {parameter index}, may-alias)'")
        kind = m.group(4) or "may-alias"
        if kind not in ("may-alias", "must-alias"):
            raise AliasError(f"input_output_alias: unknown alias kind '{kind}'")
        out.append(Alias(_index(m.group(1)), int(m.group(2)), _index(m.group(3)), kind))
        pos = m.end()
        rest = body[pos:].lstrip()
        if rest.startswith(","):
            rest = rest[1:].lstrip()
        pos = len(body) - len(rest)
    return out


def format_aliases(aliases: list[Alias]) -> str:
    def idx(t):
        return "{" + ",".join(str(x) for x in t) + "}"
    items = [f"{idx(a.output_index)}: ({a.parameter_number}, {idx(a.parameter_index)}, {a.kind})"
             for a in aliases]
    return "{ " + ", ".join(items) + " }"


def module_aliases(module) -> list[Alias]:
    text = module.attrs.get(ATTR)
    return parse_aliases(text) if text else []


def set_module_aliases(module, aliases: list[Alias]) -> None:
    if aliases:
        module.attrs[ATTR] = format_aliases(aliases)
    else:
        module.attrs.pop(ATTR, None)


def _subshape(shape, index: tuple, what: str):
    for k in index:
        if not shape.is_tuple or k >= len(shape.tuple_shapes):
            raise AliasError(f"input_output_alias: {what} index {{{','.join(map(str, index))}}} "
                             f"is not in shape {shape.to_string()}")
        shape = shape.tuple_shapes[k]
    return shape


def check_aliases(module) -> list[Alias]:
    """The module's aliases, after checking that each names an existing output and
    parameter leaf of the same shape, and that no output or parameter leaf is used twice."""
    aliases = module_aliases(module)
    entry = module.entry
    seen_out, seen_param = set(), set()
    for a in aliases:
        if a.parameter_number >= len(entry.parameters):
            raise AliasError(f"input_output_alias: parameter {a.parameter_number} does not "
                             f"exist (the entry has {len(entry.parameters)})")
        out = _subshape(entry.root.shape, a.output_index, "output")
        par = _subshape(entry.parameters[a.parameter_number].shape, a.parameter_index,
                        "parameter")
        if out.is_tuple or par.is_tuple or out.dims != par.dims \
                or out.element_type != par.element_type:
            raise AliasError(f"input_output_alias: output {{{','.join(map(str, a.output_index))}}} "
                             f"{out.to_string()} cannot alias parameter {a.parameter_number} "
                             f"{par.to_string()}: the shapes differ")
        key_o, key_p = a.output_index, (a.parameter_number, a.parameter_index)
        if key_o in seen_out or key_p in seen_param:
            raise AliasError("input_output_alias: an output or parameter appears twice")
        seen_out.add(key_o)
        seen_param.add(key_p)
    return aliases


def leaf_position(shape, index: tuple) -> int:
    """The position of the leaf at `index` among shape.leaves()."""
    pos = 0
    for k in index:
        for s in shape.tuple_shapes[:k]:
            pos += len(s.leaves())
        shape = shape.tuple_shapes[k]
    return pos
