"""Parser for XLA's HLO text format.

Accepts the text JAX emits before optimization (`lower(...).as_text(dialect="hlo")`: no `%`
sigils, no computation signatures) and the text XLA prints for optimized modules (`%` names,
signatures, layouts, metadata, FileNames/StackFrames header blocks, backend_config, fused
computations, `/*index=N*/` comments).

Algorithm: a hand-written recursive-descent parser over the raw characters (XLA's lexer is
context dependent: `2x2`, `0_0x1_1` and `b01f_01io->b01f` are single tokens only where an
attribute expects them, so the parser asks for the token it expects). It runs in two
phases: (1) parse every computation into records (names, operand names with their
positions, attributes); (2) build the objects (parser_build.py), resolving operand and
computation names, so forward references work and an unknown name is reported at its own
position.

Every error is a ParseError with line:column, the offending line and a caret. Attributes
xlapy does not know are kept verbatim (Raw) with a warning.
"""

from __future__ import annotations

import bisect
import re
import warnings
from dataclasses import dataclass, field

import numpy as np

from xlapy.errors import ParseError
from xlapy.hlo import attributes as A
from xlapy.hlo import literal_scan
from xlapy.hlo.ir import ELIDED, Module
from xlapy.hlo.literal import nan_with_payload
from xlapy.hlo.opcodes import OPCODES
from xlapy.hlo.shapes import MAX_TUPLE_DEPTH, PRIMITIVE_TYPES, Layout, Shape, size_problem
from xlapy.hlo.parser_build import Builder

_WS = re.compile(r"(?:\s+|/\*.*?\*/|//[^\n]*)+", re.S)
_NAME = re.compile(r"%?([A-Za-z_](?:[\w.]|-(?!>))*)")
_ATTR_NAME = re.compile(r"[A-Za-z_][\w\-]*")
_OPCODE = re.compile(r"[a-z][a-z0-9\-]*")
_INT = re.compile(r"[+-]?\d+")
_TYPE = re.compile(r"(" + "|".join(sorted(PRIMITIVE_TYPES, key=len, reverse=True)) + r")\[")
_NUMBER = re.compile(r"[+-]?(?:inf|nan(?:\(0x[0-9a-fA-F]+\))?"
                     r"|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")
_IDENT = re.compile(r"[A-Za-z_][\w.\-]*")
_PADDING = re.compile(r"-?\d+_-?\d+(?:_-?\d+)?(?:x-?\d+_-?\d+(?:_-?\d+)?)*")
_DXD = re.compile(r"-?\d+(?:x-?\d+)*")
_DIM_LABELS = re.compile(r"[\w]+_[\w]+->[\w]+")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_HEADER_BLOCKS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


@dataclass
class _InstrRecord:
    name: str
    pos: int
    is_root: bool
    shape: Shape
    opcode: str
    operands: list  # [(name, pos)]
    attrs: dict
    attr_pos: dict
    metadata: dict
    literal: object = None
    parameter_number: int | None = None


@dataclass
class _CompRecord:
    name: str
    pos: int
    is_entry: bool
    instrs: list = field(default_factory=list)
    signature: list | None = None
    attrs: dict = field(default_factory=dict)


class _Parser:
    def __init__(self, text: str, filename: str):
        self.text = text
        self.filename = filename
        self.pos = 0
        self._newlines: list[int] | None = None  # offsets of every '\n', built on first use
        self.literal_values = 0   # values of the literals read by a fast path so far

    # ---- errors and positions -------------------------------------------------------------
    def error(self, message: str, pos: int | None = None) -> ParseError:
        pos = self.pos if pos is None else pos
        pos = min(pos, len(self.text))
        line = self.text.count("\n", 0, pos) + 1
        start = self.text.rfind("\n", 0, pos) + 1
        end = self.text.find("\n", pos)
        end = len(self.text) if end < 0 else end
        return ParseError(message, line, pos - start + 1, self.text[start:end], self.filename)

    def line_col(self, pos: int) -> tuple[int, int]:
        # every instruction records its position: a search of a newline index, not a count
        # from the text's start (quadratic in a module with megabytes of literal text)
        if self._newlines is None:
            nl, find, k = [], self.text.find, self.text.find("\n")
            while k >= 0:
                nl.append(k)
                k = find("\n", k + 1)
            self._newlines = nl
        line = bisect.bisect_left(self._newlines, pos)
        start = self._newlines[line - 1] + 1 if line else 0
        return line + 1, pos - start + 1

    def describe_next(self) -> str:
        self.skip_ws()
        if self.pos >= len(self.text):
            return "end of input"
        m = re.compile(r"\S{1,20}").match(self.text, self.pos)
        return f"'{m.group(0)}'"

    # ---- scanning ---------------------------------------------------------------------------
    def skip_ws(self) -> None:
        m = _WS.match(self.text, self.pos)
        if m:
            self.pos = m.end()

    def peek(self, s: str) -> bool:
        self.skip_ws()
        return self.text.startswith(s, self.pos)

    def accept(self, s: str) -> bool:
        if self.peek(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str, what: str | None = None) -> None:
        if not self.accept(s):
            raise self.error(f"expected '{s}'{' ' + what if what else ''}, "
                             f"found {self.describe_next()}")

    def items(self, item, close: str, what: str | None = None) -> list:
        """item() for each element of a comma-separated list ended by `close` (whose opening
        bracket was already read); `what` names the list in the error for a missing comma."""
        out = []
        if not self.accept(close):
            while True:
                out.append(item())
                if self.accept(close):
                    break
                self.expect(",", f"or '{close}' in {what}" if what else None)
        return out

    def match(self, regex: re.Pattern, what: str) -> re.Match:
        self.skip_ws()
        m = regex.match(self.text, self.pos)
        if not m:
            raise self.error(f"expected {what}, found {self.describe_next()}")
        self.pos = m.end()
        return m

    def at_keyword(self, word: str) -> bool:
        self.skip_ws()
        return (self.text.startswith(word, self.pos)
                and not re.match(r"[\w.\-]",
                                 self.text[self.pos + len(word):self.pos + len(word) + 1]))

    def name(self, what: str = "a name") -> str:
        return self.match(_NAME, what).group(1)

    def integer(self, what: str = "an integer") -> int:
        return int(self.match(_INT, what).group(0))

    def string(self) -> str:
        m = self.match(_STRING, "a quoted string")
        return _unescape(m.group(0)[1:-1])

    # ---- shapes -------------------------------------------------------------------------
    def shape(self, depth: int = 0) -> Shape:
        self.skip_ws()
        start = self.pos
        if self.accept("("):
            if depth >= MAX_TUPLE_DEPTH:
                raise self.error(f"tuple shapes nested more than {MAX_TUPLE_DEPTH} deep", start)
            return Shape.tuple(self.items(lambda: self.shape(depth + 1), ")", "tuple shape"))
        m = _TYPE.match(self.text, self.pos)
        if not m:
            raise self.error(f"expected a shape such as f32[2,3], found {self.describe_next()}")
        t = PRIMITIVE_TYPES[m.group(1)]
        self.pos = m.end()

        def dim():
            self.skip_ws()
            if self.text.startswith(("<=", "?"), self.pos):
                raise self.error("dynamic dimensions (<=N or ?) are not supported")
            d = self.integer("a dimension size")
            if d < 0:
                raise self.error(f"negative dimension size {d}", start)
            return d
        dims = self.items(dim, "]", "dimensions")
        layout = None
        if self.text.startswith("{", self.pos):  # a layout only directly after ']'
            self.pos += 1
            m2t = []
            extra = ""
            if not self.accept("}"):
                while True:
                    self.skip_ws()
                    if self.text.startswith(":", self.pos):
                        end = self._balanced_end(self.pos + 1, closer="}")
                        extra = self.text[self.pos + 1:end].strip()
                        self.pos = end
                        self.expect("}")
                        break
                    m2t.append(self.integer("a layout dimension"))
                    if self.accept("}"):
                        break
                    if not self.peek(":"):
                        self.expect(",", "or '}' in layout")
            if sorted(m2t) != list(range(len(dims))) and (m2t or len(dims) == 0):
                raise self.error(f"layout {{{','.join(map(str, m2t))}}} is not a permutation of "
                                 f"the {len(dims)} dimensions of {t.name}{dims}", start)
            if dims or extra:
                layout = Layout(tuple(m2t), extra)
        shape = Shape(t, tuple(dims), layout)
        problem = size_problem(shape)
        if problem:
            raise self.error(problem, start)
        return shape

    def _balanced_end(self, pos: int, closer: str) -> int:
        """Index of the unmatched `closer` at nesting depth 0 from pos (strings skipped)."""
        depth, i, text = 0, pos, self.text
        while i < len(text):
            c = text[i]
            if c == '"':
                m = _STRING.match(text, i)
                if not m:
                    raise self.error("unterminated string", i)
                i = m.end()
                continue
            if c in "{[(":
                depth += 1
            elif c in "}])":
                if depth == 0:
                    if c != closer:
                        raise self.error(f"unbalanced '{c}'", i)
                    return i
                depth -= 1
            i += 1
        raise self.error(f"expected '{closer}' before end of input", pos)

    # ---- module ------------------------------------------------------------------------
    def module(self) -> Module:
        self.skip_ws()
        if not self.at_keyword("HloModule"):
            raise self.error("expected 'HloModule' at the start of the module, "
                             f"found {self.describe_next()}")
        self.pos += len("HloModule")
        mod = Module(self.name("a module name"))
        while self.accept(","):
            key_pos = self.pos
            key = self.match(_ATTR_NAME, "a module attribute name").group(0)
            self.expect("=")
            self.skip_ws()
            value = self.raw_value()
            if key == "entry_computation_layout":
                mod.has_entry_layout = True
                mod._entry_layout_text = (value, key_pos)
            else:
                mod.attrs[key] = value
        self.header_blocks(mod)
        records = []
        while True:
            self.skip_ws()
            if self.pos >= len(self.text):
                break
            records.append(self.computation())
        if not records:
            raise self.error("the module has no computations")
        Builder(self, mod, records).build()
        return mod

    def header_blocks(self, mod: Module) -> None:
        while True:
            self.skip_ws()
            word = next((w for w in _HEADER_BLOCKS if self.at_keyword(w)), None)
            if word is None:
                return
            self.pos += len(word)
            lines = []
            while True:
                self.skip_ws()
                if not re.match(r"\d", self.text[self.pos:self.pos + 1]):
                    break
                end = self.text.find("\n", self.pos)
                end = len(self.text) if end < 0 else end
                lines.append(self.text[self.pos:end].rstrip())
                self.pos = end
            mod.header_blocks[word] = lines

    def computation(self) -> _CompRecord:
        self.skip_ws()
        pos = self.pos
        is_entry = False
        if self.at_keyword("ENTRY"):
            self.pos += len("ENTRY")
            is_entry = True
        name = self.name("a computation name (or ENTRY)")
        rec = _CompRecord(name, pos, is_entry)
        if self.accept("("):
            def parameter():
                self.name("a parameter name")
                self.expect(":")
                return self.shape()
            rec.signature = self.items(parameter, ")", "the parameter list")
            self.expect("->", "after the parameter list")
            rec.signature = (rec.signature, self.shape())
        self.expect("{", f"to open computation {name}")
        while not self.accept("}"):
            self.skip_ws()
            if self.pos >= len(self.text):
                raise self.error(f"expected '}}' to close computation {name}, found end of input")
            rec.instrs.append(self.instruction())
        while self.accept(","):
            key = self.match(_ATTR_NAME, "a computation attribute name").group(0)
            self.expect("=")
            self.skip_ws()
            rec.attrs[key] = self.raw_value()
        if not rec.instrs:
            raise self.error(f"computation {name} has no instructions", pos)
        return rec

    # ---- instructions -------------------------------------------------------------------
    def instruction(self) -> _InstrRecord:
        self.skip_ws()
        pos = self.pos
        is_root = False
        if self.at_keyword("ROOT"):
            self.pos += 4
            is_root = True
        name = self.name("an instruction name")
        self.expect("=", f"after instruction name {name}")
        shape = self.shape()
        self.skip_ws()
        op_pos = self.pos
        opcode = self.match(_OPCODE, "an opcode").group(0)
        if opcode not in OPCODES:
            raise self.error(f"unknown opcode '{opcode}'", op_pos)
        rec = _InstrRecord(name, pos, is_root, shape, opcode, [], {}, {}, {})
        self.expect("(", f"after opcode {opcode}")
        if opcode == "parameter":
            rec.parameter_number = self.integer("a parameter number")
            if rec.parameter_number < 0:
                raise self.error("negative parameter number")
            self.expect(")")
        elif opcode == "constant":
            rec.literal = self.literal(shape)
            self.expect(")", "after the constant's value")
        else:
            def operand():
                self.skip_ws()
                if _TYPE.match(self.text, self.pos) or self.text.startswith("(", self.pos):
                    self.shape()  # old-style operand shape prefix; the operand's own shape wins
                self.skip_ws()
                opnd_pos = self.pos
                return self.name("an operand name"), opnd_pos
            rec.operands = self.items(operand, ")", "the operand list")
        while self.accept(","):
            self.attribute(rec)
        return rec

    def attribute(self, rec: _InstrRecord) -> None:
        self.skip_ws()
        key_pos = self.pos
        key = self.match(_ATTR_NAME, "an attribute name").group(0)
        self.expect("=", f"after attribute name {key}")
        if key in rec.attrs or (key == "metadata" and rec.metadata):
            raise self.error(f"attribute {key} given twice", key_pos)
        kind = A.attribute_kind(rec.opcode, key)
        self.skip_ws()
        if kind is None:
            warnings.warn(f"{self.filename}:{self.line_col(key_pos)[0]}: unknown attribute "
                          f"'{key}' kept verbatim", stacklevel=4)
            kind = "raw"
        value_pos = self.pos
        if key == "metadata":
            rec.metadata = self.metadata()
            return
        value = getattr(self, "attr_" + kind)()
        rec.attrs[key] = value
        rec.attr_pos[key] = value_pos

    def attr_ints(self):
        self.expect("{")
        return tuple(self.items(self.integer, "}", "integer list"))

    def attr_int(self):
        return self.integer()

    def attr_bool(self):
        if self.accept("true"):
            return True
        if self.accept("false"):
            return False
        raise self.error(f"expected true or false, found {self.describe_next()}")

    def attr_ident(self):
        return self.match(_IDENT, "an identifier").group(0)

    def attr_string(self):
        return self.string()

    def attr_computation(self):
        self.skip_ws()
        if self.text.startswith("{", self.pos):
            return self.attr_computations()
        return ("comp", self.name("a computation name"), self.pos)

    def attr_computations(self):
        self.expect("{")

        def computation():
            self.skip_ws()
            p = self.pos
            return "comp", self.name("a computation name"), p
        return ("comps", self.items(computation, "}", "computation list"))

    def attr_slice(self):
        self.expect("{")

        def slice_range():
            self.expect("[", "to open a slice range")
            start = self.integer()
            self.expect(":")
            limit = self.integer()
            stride = self.integer() if self.accept(":") else 1
            self.expect("]", "to close a slice range")
            return start, limit, stride
        ranges = self.items(slice_range, "}", "slice")
        return A.SliceSpec(*(tuple(r[k] for r in ranges) for k in range(3)))

    def attr_padding(self):
        text = self.match(_PADDING, "a padding config such as 0_0x1_1 or 0_0_1").group(0)
        lows, highs, interiors = [], [], []
        for part in text.split("x"):
            nums = [int(v) for v in re.findall(r"-?\d+", part)]
            lows.append(nums[0])
            highs.append(nums[1])
            interiors.append(nums[2] if len(nums) > 2 else 0)
        return A.PaddingConfig(tuple(lows), tuple(highs), tuple(interiors))

    def attr_window(self):
        start = self.pos
        self.expect("{")
        fields = {}
        while not self.accept("}"):
            self.skip_ws()
            kpos = self.pos
            key = self.match(_ATTR_NAME, "a window field (size, stride, pad, ...)").group(0)
            self.expect("=")
            if key == "pad":
                text = self.match(_PADDING, "window padding such as 0_0x1_1").group(0)
                pairs = [tuple(int(v) for v in re.findall(r"-?\d+", p)) for p in text.split("x")]
                if any(len(p) != 2 for p in pairs):
                    raise self.error("window padding takes low_high per dimension", kpos)
                fields["pad_low"] = tuple(p[0] for p in pairs)
                fields["pad_high"] = tuple(p[1] for p in pairs)
            elif key in ("size", "stride", "lhs_dilate", "rhs_dilate", "rhs_reversal"):
                fields[key] = tuple(int(v) for v in self.match(_DXD, "NxN...").group(0).split("x"))
            else:
                raise self.error(f"unknown window field '{key}'", kpos)
        if not fields:
            return A.Window.make(())
        if "size" not in fields:
            raise self.error("window has no size=", start)
        n = len(fields["size"])
        for k, v in fields.items():
            if len(v) != n:
                raise self.error(f"window field {k} has {len(v)} dimensions, size has {n}", start)
        return A.Window.make(**fields)

    def attr_dim_labels(self):
        self.skip_ws()
        pos = self.pos
        text = self.match(_DIM_LABELS, "dim_labels such as b01f_01io->b01f").group(0)
        try:
            return A.ConvDimensionNumbers.parse(text)
        except ValueError as e:
            raise self.error(str(e), pos) from None

    def attr_replica_groups(self):
        """{{0,1},{2,3}}, {} or the iota form [G,S]<=[dims] with an optional T(perm)."""
        self.skip_ws()
        pos = self.pos
        if self.accept("["):
            group_dims = self.items(self.integer, "]", "iota replica group dimensions")
            self.expect("<=", "in iota replica groups [G,S]<=[dims]")
            self.expect("[")
            dims = self.items(self.integer, "]", "iota dimensions")
            perm = None
            if self.accept("T"):
                self.expect("(")
                perm = self.items(self.integer, ")", "iota transpose")
            try:
                return A.ReplicaGroups.from_iota(group_dims, dims, perm)
            except ValueError as e:
                raise self.error(str(e), pos) from None
        self.expect("{", "to open replica groups")

        def group():
            self.expect("{", "to open a replica group")
            return tuple(self.items(self.integer, "}", "replica group"))
        return A.ReplicaGroups(tuple(self.items(group, "}", "replica groups")))

    def attr_raw(self):
        return self.raw_value()

    def raw_value(self) -> A.Raw:
        """An attribute value kept verbatim: a balanced {...}, a string, or a bare token."""
        self.skip_ws()
        start = self.pos
        c = self.text[self.pos:self.pos + 1]
        if c in ("{", "(", "["):
            closer = {"{": "}", "(": ")", "[": "]"}[c]
            end = self._balanced_end(self.pos + 1, closer)
            self.pos = end + 1
        elif c == '"':
            self.match(_STRING, "a quoted string")
        else:
            m = re.compile(r"[^\s,{}()\[\]]+").match(self.text, self.pos)
            if not m:
                raise self.error(f"expected an attribute value, found {self.describe_next()}")
            self.pos = m.end()
            # values like `{...}->{...}` (entry_computation_layout) continue after '->'
        if self.text.startswith("->", self.pos):
            self.pos += 2
            self.raw_value()
        return A.Raw(self.text[start:self.pos])

    def metadata(self) -> dict:
        self.expect("{", "to open metadata")
        out = {}
        while not self.accept("}"):
            self.skip_ws()
            key = self.match(_ATTR_NAME, "a metadata field name").group(0)
            self.expect("=")
            self.skip_ws()
            if self.text.startswith('"', self.pos):
                out[key] = self.string()
            else:
                v = self.match(re.compile(r"[^\s}]+"), "a metadata value").group(0)
                out[key] = int(v) if re.fullmatch(r"-?\d+", v) else A.Raw(v)
        return out

    # ---- literals --------------------------------------------------------------------------
    def literal(self, shape: Shape):
        self.skip_ws()
        if shape.is_tuple:
            self.expect("(", "to open a tuple literal")
            values = []
            for i, s in enumerate(shape.tuple_shapes):
                if i:
                    self.expect(",", "between tuple literal elements")
                values.append(self.literal(s))
            self.expect(")", "to close a tuple literal")
            return tuple(values)
        if shape.is_token:
            raise self.error("a token cannot be a constant")
        if self.text.startswith("{...}", self.pos):
            self.pos += 5
            return ELIDED
        t = shape.element_type
        if shape.rank == 0:
            # XLA sometimes brackets scalars in nested literals; accept a bare value only.
            return _make_array([self.scalar(t)], t, ())
        fast = self._fast_literal(shape)
        if fast is not None:
            return fast
        flat: list = []
        self._nested(shape.dims, 0, flat, t)
        return _make_array(flat, t, shape.dims)

    def _fast_literal(self, shape: Shape):
        """A large numeric literal read at machine speed (a real model's weights are millions
        of values): by the compiled scanner (literal_scan.py) once the module's literals
        reach NATIVE_LITERAL_MIN values (before that, compiling the scanner would cost more
        than it saves), else by NumPy: the literal's text runs to the constant's ')', its
        braces and commas must be exactly those of the shape (the skeleton), and NumPy must
        read every value. None (the element-by-element path then parses it, with its
        precise errors) for anything else: small literals, pred, NaN payloads, a malformed
        literal."""
        t = shape.element_type
        if shape.size < FAST_LITERAL_MIN or t.is_pred or not (t.is_float or t.is_integer):
            return None
        self.literal_values += shape.size
        if self.literal_values >= NATIVE_LITERAL_MIN:
            scanned = literal_scan.scan(self.text, self.pos, shape.dims, not t.is_float)
            if scanned is None:
                return None
            arr, end = scanned
        else:
            if t.name == "u64":
                return None
            end = self.text.find(")", self.pos)
            if end < 0:
                return None
            span = self.text[self.pos:end]
            if span.translate(_SKELETON) != _skeleton(shape.dims) or "nan" in span:
                return None
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    arr = np.fromstring(span.translate(_SEPARATORS), sep=" ",
                                        dtype=np.float64 if t.is_float else np.int64)
                except (ValueError, DeprecationWarning):
                    return None
            if arr.size != shape.size:
                return None
        if not t.is_float:
            info = np.iinfo(t.np_dtype)
            if arr.min() < info.min or arr.max() > info.max:
                return None
        self.pos = end
        with np.errstate(over="ignore"):  # a float beyond the type rounds to inf, as XLA's
            return arr.astype(t.np_dtype).reshape(shape.dims)

    def _nested(self, dims, depth, flat, t):
        start = self.pos
        self.expect("{", f"to open dimension {depth} of the literal")
        if depth == len(dims) - 1:
            n = 0
            if not self.accept("}"):
                while True:
                    flat.append(self.scalar(t))
                    n += 1
                    if self.accept("}"):
                        break
                    self.expect(",", "or '}' in literal")
        else:
            n = 0
            if not self.accept("}"):
                while True:
                    self._nested(dims, depth + 1, flat, t)
                    n += 1
                    if self.accept("}"):
                        break
                    self.expect(",", "or '}' in literal")
        if n != dims[depth]:
            raise self.error(f"literal has {n} elements in dimension {depth}, the shape says "
                             f"{dims[depth]}", start)

    def scalar(self, t):
        self.skip_ws()
        pos = self.pos
        if t.is_pred:
            for word, v in (("true", True), ("false", False), ("1", True), ("0", False)):
                if self.text.startswith(word, self.pos):
                    self.pos += len(word)
                    return v
            raise self.error(f"expected true or false, found {self.describe_next()}")
        if t.is_complex:  # (real, imag), as XLA prints a complex value
            part = t.component_type
            self.expect("(", f"to open a {t.name} value (real, imag)")
            re_ = self.scalar(part)
            self.expect(",", f"between the real and imaginary parts of a {t.name} value")
            im = self.scalar(part)
            self.skip_ws()
            self.expect(")", f"to close a {t.name} value (real, imag)")
            return (re_, im)
        m = self.match(_NUMBER, f"a {t.name} value")
        s = m.group(0)
        if t.is_float:
            neg = s.startswith("-")
            body = s.lstrip("+-")
            if body.startswith("nan("):
                return nan_with_payload(t.name, int(body[6:-1], 16), neg)
            if body == "nan":
                v = float("nan")
                return -v if neg else v
            return float(s)
        if not re.fullmatch(r"[+-]?\d+", s):
            raise self.error(f"expected an integer {t.name} value, found '{s}'", pos)
        v = int(s)
        info = np.iinfo(t.np_dtype)
        if not info.min <= v <= info.max:
            raise self.error(f"value {v} is out of range for {t.name}", pos)
        return v


FAST_LITERAL_MIN = 64   # literals with at least this many values try the fast readers
NATIVE_LITERAL_MIN = 1 << 16   # ... the compiled scanner, from this many values in a module
_SKELETON = str.maketrans("", "", "".join(chr(c) for c in range(128) if chr(c) not in "{},"))
_SEPARATORS = str.maketrans("{},", "   ")


def _skeleton(dims) -> str:
    """The braces and commas of a literal of these dims: [2,3] -> '{{,,},{,,}}'."""
    inner = "{" + "," * (dims[-1] - 1) + "}" if dims[-1] else "{}"
    for d in reversed(dims[:-1]):
        inner = "{" + ",".join([inner] * d) + "}"
    return inner


def _make_array(values, t, dims):
    if t.is_complex:  # parts rounded to the component type first, signs and payloads kept
        part = t.component_type.np_dtype
        arr = np.empty(len(values), dtype=t.np_dtype)
        arr.real = np.array([np.asarray(v[0], part) for v in values], dtype=part)
        arr.imag = np.array([np.asarray(v[1], part) for v in values], dtype=part)
        return arr.reshape(dims)
    if t.is_float:
        # float -> target dtype rounds as XLA's parser does; copysign keeps -nan's sign.
        arr = np.empty(len(values), dtype=t.np_dtype)
        for i, v in enumerate(values):
            arr[i] = v
        return arr.reshape(dims)
    return np.array(values, dtype=t.np_dtype).reshape(dims)


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out, i = [], 0
    simple = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'"}
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n in simple:
                out.append(simple[n])
                i += 2
                continue
            if n == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", s[i + 2:i + 4]):
                out.append(chr(int(s[i + 2:i + 4], 16)))
                i += 4
                continue
        out.append(c)
        i += 1
    return "".join(out)


def parse(text: str, filename: str = "<hlo>") -> Module:
    """Parse HLO module text into a Module. Raises ParseError with line:column on bad input."""
    if not isinstance(text, str):
        raise TypeError(f"parse() takes HLO text (str), not {type(text).__name__}")
    p = _Parser(text, filename)
    try:
        return p.module()
    except RecursionError:  # (a guard: shapes and literals limit their own nesting)
        raise p.error("nested too deeply to parse") from None


def parse_file(path) -> Module:
    return parse(read_text(path), str(path))


def read_text(path) -> str:
    """A module file's text, with universal newlines; ParseError naming the line and column
    of the first byte that is not UTF-8."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        good = data[:e.start].decode("utf-8")
        line = good.count("\n") + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise ParseError(f"not UTF-8 text: byte 0x{data[e.start]:02x} cannot start or continue "
                         "a character", line, column, "", str(path)) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # (as open() reads text)


def parse_shape(text: str) -> Shape:
    """Parse one shape such as 'f32[2,3]{1,0}' or '(f32[], s32[4])'."""
    p = _Parser(text, "<shape>")
    s = p.shape()
    p.skip_ws()
    if p.pos != len(text):
        raise p.error(f"unexpected text after shape: {p.describe_next()}")
    return s
