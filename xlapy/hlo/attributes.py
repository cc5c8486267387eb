"""Typed values of instruction attributes and their HLO text forms.

An instruction keeps its attributes in `instr.attrs`, a dict in print order, keyed by the
attribute's text name. Values are plain Python where possible:

  int lists (dimensions=, *_dims=, slice_sizes=, ...)  -> tuple[int, ...]
  ints / bools / identifiers (index=, is_stable=, direction=, kind=) -> int / bool / str
  quoted strings (custom_call_target=)                  -> str
  computations (to_apply=, calls=, body=, ...)         -> Computation (a list for
                                                           branch_computations=)
  slice=       -> SliceSpec     padding=    -> PaddingConfig
  window=      -> Window        dim_labels= -> ConvDimensionNumbers
  metadata=    -> kept on the instruction as `instr.metadata` (a dict), not in attrs
  anything else (backend_config=, sharding=, frontend_attributes=, operand_precision=, and
  attributes xlapy does not know) -> Raw(text), printed back verbatim.

ATTRIBUTE_KINDS maps every attribute name the parser understands to its kind; a name not
listed is parsed as Raw with a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xlapy.hlo.opcodes import OPCODES


class Raw(str):
    """Attribute text kept verbatim (printed back exactly as parsed)."""

    def __repr__(self) -> str:
        return f"Raw({str.__repr__(self)})"


@dataclass(frozen=True)
class SliceSpec:
    """slice={[start:limit:stride], ...}"""

    starts: tuple[int, ...]
    limits: tuple[int, ...]
    strides: tuple[int, ...]

    def __str__(self) -> str:
        parts = []
        for s, l, st in zip(self.starts, self.limits, self.strides):
            parts.append(f"[{s}:{l}]" if st == 1 else f"[{s}:{l}:{st}]")
        return "{" + ", ".join(parts) + "}"


@dataclass(frozen=True)
class PaddingConfig:
    """padding=lo_hi[_interior]x... ; interior is printed for all dims if any is nonzero."""

    lows: tuple[int, ...]
    highs: tuple[int, ...]
    interiors: tuple[int, ...]

    def __str__(self) -> str:
        interior = any(self.interiors)
        parts = []
        for lo, hi, it in zip(self.lows, self.highs, self.interiors):
            parts.append(f"{lo}_{hi}_{it}" if interior else f"{lo}_{hi}")
        return "x".join(parts)


@dataclass(frozen=True)
class Window:
    """window={size=2x2 stride=2x2 pad=0_0x0_0 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}

    Each field is a per-dimension tuple; only non-default fields are printed, like XLA."""

    size: tuple[int, ...]
    stride: tuple[int, ...]
    pad_low: tuple[int, ...]
    pad_high: tuple[int, ...]
    lhs_dilate: tuple[int, ...]
    rhs_dilate: tuple[int, ...]
    rhs_reversal: tuple[int, ...]

    @staticmethod
    def make(size, stride=None, pad_low=None, pad_high=None, lhs_dilate=None, rhs_dilate=None,
             rhs_reversal=None) -> "Window":
        n = len(size)
        return Window(tuple(size), tuple(stride or (1,) * n), tuple(pad_low or (0,) * n),
                      tuple(pad_high or (0,) * n), tuple(lhs_dilate or (1,) * n),
                      tuple(rhs_dilate or (1,) * n), tuple(rhs_reversal or (0,) * n))

    @property
    def rank(self) -> int:
        return len(self.size)

    def __str__(self) -> str:
        if not self.size:
            return "{}"
        x = lambda t: "x".join(map(str, t))
        parts = [f"size={x(self.size)}"]
        if any(s != 1 for s in self.stride):
            parts.append(f"stride={x(self.stride)}")
        if any(self.pad_low) or any(self.pad_high):
            parts.append("pad=" + "x".join(f"{lo}_{hi}"
                                           for lo, hi in zip(self.pad_low, self.pad_high)))
        if any(d != 1 for d in self.lhs_dilate):
            parts.append(f"lhs_dilate={x(self.lhs_dilate)}")
        if any(d != 1 for d in self.rhs_dilate):
            parts.append(f"rhs_dilate={x(self.rhs_dilate)}")
        if any(self.rhs_reversal):
            parts.append(f"rhs_reversal={x(self.rhs_reversal)}")
        return "{" + " ".join(parts) + "}"


@dataclass(frozen=True)
class ConvDimensionNumbers:
    """dim_labels=b01f_01io->b01f : which dimension of input/kernel/output is which."""

    input_batch: int
    input_feature: int
    input_spatial: tuple[int, ...]
    kernel_input_feature: int
    kernel_output_feature: int
    kernel_spatial: tuple[int, ...]
    output_batch: int
    output_feature: int
    output_spatial: tuple[int, ...]

    @staticmethod
    def parse(text: str) -> "ConvDimensionNumbers":
        """Raise ValueError on malformed labels (the parser turns it into a ParseError)."""
        try:
            lhs, rest = text.split("_", 1)
            rhs, out = rest.split("->")
        except ValueError:
            raise ValueError(f"malformed dim_labels '{text}', "
                             "expected e.g. b01f_01io->b01f") from None

        def labels(s, letters):
            found = {c: None for c in letters}
            spatial = {}
            for i, c in enumerate(s):
                if c in found and found[c] is None:
                    found[c] = i
                elif c.isdigit() and int(c) not in spatial:
                    spatial[int(c)] = i
                else:
                    raise ValueError(f"malformed dim_labels '{text}': unexpected '{c}' in '{s}'")
            if (any(v is None for v in found.values())
                    or sorted(spatial) != list(range(len(spatial)))):
                raise ValueError(f"malformed dim_labels '{text}': '{s}' needs each of "
                                 f"{'/'.join(letters)} once and spatial dims 0..n-1")
            return [found[c] for c in letters], tuple(spatial[k] for k in range(len(spatial)))

        (ib, if_), isp = labels(lhs, "bf")
        (ki, ko), ksp = labels(rhs, "io")
        (ob, of), osp = labels(out, "bf")
        if not (len(isp) == len(ksp) == len(osp)):
            raise ValueError(f"malformed dim_labels '{text}': spatial dimension counts differ")
        return ConvDimensionNumbers(ib, if_, isp, ki, ko, ksp, ob, of, osp)

    def __str__(self) -> str:
        def render(rank, named, spatial):
            chars = ["?"] * rank
            for c, i in named:
                chars[i] = c
            for k, i in enumerate(spatial):
                chars[i] = str(k)
            return "".join(chars)

        n = len(self.input_spatial) + 2
        lhs = render(n, [("b", self.input_batch), ("f", self.input_feature)], self.input_spatial)
        rhs = render(n, [("i", self.kernel_input_feature), ("o", self.kernel_output_feature)],
                     self.kernel_spatial)
        out = render(n, [("b", self.output_batch), ("f", self.output_feature)], self.output_spatial)
        return f"{lhs}_{rhs}->{out}"


@dataclass(frozen=True)
class ReplicaGroups:
    """replica_groups= / source_target_pairs=: lists of device ids.

    Two text forms: the explicit `{{0,1},{2,3}}` (`{}`: one group of every device) and the
    iota form `[G,S]<=[d0,d1,...]` or `[G,S]<=[d0,d1,...]T(p0,p1,...)`: the ids 0..n-1
    reshaped to the dims d, transposed by p, reshaped to G groups of S. `groups` holds the
    ids either way; `iota` keeps the iota text so it prints back as parsed."""

    groups: tuple[tuple[int, ...], ...]
    iota: str | None = None

    @staticmethod
    def from_iota(group_dims, dims, perm=None) -> "ReplicaGroups":
        """The iota form's groups; ValueError when the sizes do not agree."""
        import numpy as np  # only the iota form needs it
        dims, group_dims = tuple(dims), tuple(group_dims)
        perm = tuple(perm) if perm is not None else tuple(range(len(dims)))
        if len(group_dims) != 2:
            raise ValueError(f"iota replica groups take [groups,size], got {list(group_dims)}")
        if sorted(perm) != list(range(len(dims))):
            raise ValueError(f"iota replica groups: T{perm} is not a permutation of "
                             f"{len(dims)} dimensions")
        n = int(np.prod(dims, dtype=np.int64))
        if group_dims[0] * group_dims[1] != n:
            raise ValueError(f"iota replica groups: {group_dims[0]}x{group_dims[1]} groups "
                             f"but {n} ids in {list(dims)}")
        ids = np.arange(n).reshape(dims).transpose(perm).reshape(group_dims)
        text = (f"[{group_dims[0]},{group_dims[1]}]<=[{','.join(map(str, dims))}]"
                + ("" if perm == tuple(range(len(dims)))
                   else f"T({','.join(map(str, perm))})"))
        return ReplicaGroups(tuple(tuple(int(v) for v in g) for g in ids), text)

    def __str__(self) -> str:
        if self.iota is not None:
            return self.iota
        return "{" + ",".join("{" + ",".join(map(str, g)) + "}" for g in self.groups) + "}"


INT_LIST_ATTRS = (
    "dimensions", "lhs_contracting_dims", "rhs_contracting_dims", "lhs_batch_dims",
    "rhs_batch_dims", "slice_sizes", "dynamic_slice_sizes", "offset_dims",
    "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
    "start_indices_batching_dims", "update_window_dims", "inserted_window_dims",
    "scatter_dims_to_operand_dims", "input_batching_dims", "scatter_indices_batching_dims",
)
INT_ATTRS = ("channel_id", "index", "iota_dimension", "feature_group_count",
             "batch_group_count",
             "index_vector_dim", "exponent_bits", "mantissa_bits", "k")
BOOL_ATTRS = ("use_global_device_ids", "constrain_layout", "indices_are_sorted",
              "unique_indices", "is_stable", "largest",
              "custom_call_has_side_effect")
IDENT_ATTRS = ("direction", "type", "kind", "api_version", "custom_call_schedule")
STRING_ATTRS = ("custom_call_target", "opaque")

ATTRIBUTE_KINDS: dict[str, str] = {
    **{n: "ints" for n in INT_LIST_ATTRS},
    **{n: "int" for n in INT_ATTRS},
    **{n: "bool" for n in BOOL_ATTRS},
    **{n: "ident" for n in IDENT_ATTRS},
    **{n: "string" for n in STRING_ATTRS},
    "to_apply": "computation", "calls": "computation", "condition": "computation",
    "body": "computation", "select": "computation", "scatter": "computation",
    "true_computation": "computation", "false_computation": "computation",
    "branch_computations": "computations", "called_computations": "computations",
    "slice": "slice", "padding": "padding", "window": "window", "dim_labels": "dim_labels",
    "metadata": "metadata",
    "replica_groups": "replica_groups", "source_target_pairs": "replica_groups",
    # Known, but kept verbatim: xlapy does not interpret them.
    "backend_config": "raw", "sharding": "raw", "frontend_attributes": "raw",
    "operand_precision": "raw", "precision_config": "raw", "algorithm": "raw",
    "result_accuracy": "raw", "output_to_operand_aliasing": "raw",
    "operand_layout_constraints": "raw", "control-predecessors": "raw", "statistics": "raw",
    "schedule": "raw", "distribution": "raw", "origin": "raw", "rng_algorithm": "raw",
    # XLA attributes TensorFlow and JAX emit that describe replication and host transfers:
    # valid, and meaningless on one CPU device (the collectives' own attributes are typed
    # above: replica_groups, source_target_pairs, channel_id, use_global_device_ids, ...)
    "parameter_replication": "raw", "is_host_transfer": "raw",
    "infeed_config": "raw", "outfeed_config": "raw", "outfeed_shape": "raw",
    "original_value": "raw", "is_cross_program_prefetch": "raw",
}



def attribute_kind(opcode: str, name: str) -> str | None:
    """The kind of attribute `name` of `opcode`: the opcode's own (its row's `attrs` in the
    opcode table), else the shared ATTRIBUTE_KINDS; None for an unknown attribute."""
    row = OPCODES.get(opcode)
    own = dict(row.attrs).get(name) if row is not None else None
    return own or ATTRIBUTE_KINDS.get(name)


def _check_own_kinds() -> None:
    known = set(ATTRIBUTE_KINDS.values())
    for row in OPCODES.values():
        for name, kind in row.attrs:
            if kind not in known:
                raise ValueError(f"opcode table: {row.name}'s attribute {name} has unknown "
                                 f"kind {kind!r} (one of {sorted(known)})")


_check_own_kinds()

COMPARISON_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")
COMPARISON_TYPES = ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")
FUSION_KINDS = ("kLoop", "kInput", "kOutput", "kCustom")


_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def quote(s: str, control: str = "\\x{:02x}") -> str:
    """A C-style double-quoted string, as XLA prints metadata and targets; `control` formats
    the code of a control character (MLIR's strings take "\\{:02X}")."""
    if _NEEDS_ESCAPE.search(s) is None:  # the usual case: nothing to escape
        return '"' + s + '"'
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 32:
            out.append(control.format(ord(ch)))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
