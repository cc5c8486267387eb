"""The character-level scanner the StableHLO parser is built on.

MLIR's tokens depend on context as much as HLO's do (`2x3xf32` inside `tensor<...>` is three
tokens, `[b, 0, 1, f]x[0, 1, i, o]` is one attribute), so, like xlapy's HLO parser, the
parser asks for the token it expects at the current position. Reader extends that parser's
scanner (hlo/parser.py's _Parser: `error` with file:line:column, the line and a caret;
`expect`, `accept`, `items`, `match`, `describe_next`) with MLIR's lexical pieces: `//`
comments, SSA names (`%0`, `%arg0`, `%cst_1`, `%0#1`), symbols (`@main`, `@"a-b"`), bare
identifiers with dots (`stablehlo.add`), integers in decimal or hex, floats, strings.
"""

from __future__ import annotations

import bisect
import re

from xlapy.hlo.attributes import quote
from xlapy.hlo.parser import _Parser

_WS = re.compile(r"(?:\s+|//[^\n]*)+")
_SSA = re.compile(r"%([A-Za-z_$.\-][\w$.\-]*|\d+)")
_SYMBOL = re.compile(r'@(?:([A-Za-z_][\w$.]*)|"((?:[^"\\\n]|\\.)*)")')
_BARE_ID = re.compile(r"[A-Za-z_][\w$.]*")
_INT = re.compile(r"-?(?:0x[0-9a-fA-F]+|\d+)(?![\w.])")
_FLOAT = re.compile(r"[-+]?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_HEX2 = re.compile(r"[0-9a-fA-F]{2}")


class Reader(_Parser):
    """A cursor over MLIR text; every error is a ParseError at a position in it."""

    _newlines: list[int] | None = None

    def line_col(self, pos: int) -> tuple[int, int]:
        """(line, column) of a position, by bisection over the line starts (instructions
        record their op's position, so this is asked once per op)."""
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        line = bisect.bisect_left(self._newlines, pos)
        start = self._newlines[line - 1] + 1 if line else 0
        return line + 1, pos - start + 1

    def skip_ws(self) -> None:
        m = _WS.match(self.text, self.pos)
        if m:
            self.pos = m.end()

    def at_end(self) -> bool:
        self.skip_ws()
        return self.pos >= len(self.text)

    def peek_re(self, regex: re.Pattern) -> re.Match | None:
        self.skip_ws()
        return regex.match(self.text, self.pos)

    def keyword(self, word: str) -> bool:
        """Accept `word` only as a whole identifier (not the prefix of a longer one)."""
        self.skip_ws()
        end = self.pos + len(word)
        if self.text.startswith(word, self.pos) and not re.match(r"[\w$.]", self.text[end:end + 1]):
            self.pos = end
            return True
        return False

    def expect_keyword(self, word: str, what: str = "") -> None:
        if not self.keyword(word):
            raise self.error(f"expected '{word}'{' ' + what if what else ''}, "
                             f"found {self.describe_next()}")

    # ---- tokens ------------------------------------------------------------------------------
    def ssa_name(self, what: str = "an SSA value such as %0") -> str:
        return self.match(_SSA, what).group(1)

    def symbol(self, what: str = "a symbol such as @main") -> str:
        m = self.match(_SYMBOL, what)
        return m.group(1) if m.group(1) is not None else mlir_unescape(m.group(2))

    def bare_id(self, what: str = "an identifier") -> str:
        return self.match(_BARE_ID, what).group(0)

    def integer(self, what: str = "an integer") -> int:
        s = self.match(_INT, what).group(0)
        return int(s, 16) * (-1 if s.startswith("-") else 1) if "x" in s else int(s)

    def string(self) -> str:
        self.skip_ws()
        if self.text.startswith('"', self.pos) and not _STRING.match(self.text, self.pos):
            raise self.error("unterminated string (a string ends with '\"' on its line)")
        return mlir_unescape(self.match(_STRING, "a quoted string").group(0)[1:-1])

    def int_list(self, what: str = "a list of integers such as [0, 1]") -> tuple[int, ...]:
        self.expect("[", f"to open {what}")
        return tuple(self.items(lambda: self.integer(), "]", what))

    def balanced(self, opener: str, closer: str) -> str:
        """The text up to the `closer` matching an `opener` just read (nested brackets and
        strings skipped; `->` is an arrow, not a closing '>'). Returns the text inside."""
        start = self.pos
        i, text = self.pos, self.text
        pairs = {"<": ">", "(": ")", "[": "]", "{": "}"}
        stack = []
        while i < len(text):
            c = text[i]
            if c == '"':
                m = _STRING.match(text, i)
                if not m:
                    raise self.error("unterminated string", i)
                i = m.end()
                continue
            if c == ">" and i > 0 and text[i - 1] == "-":
                i += 1
                continue
            if c in pairs:
                stack.append(pairs[c])
            elif c in ">)]}":
                if not stack:
                    if c != closer:
                        raise self.error(f"unbalanced '{c}' (expected '{closer}' to close "
                                         f"'{opener}')", i)
                    self.pos = i + 1
                    return text[start:i]
                if stack[-1] != c:
                    raise self.error(f"unbalanced '{c}' (expected '{stack[-1]}')", i)
                stack.pop()
            i += 1
        raise self.error(f"expected '{closer}' to close '{opener}' before the end of the input",
                         start - 1)


def mlir_unescape(s: str) -> str:
    """MLIR string escapes: \\n, \\t, \\", \\\\ and \\XX (two hex digits: one byte of UTF-8)."""
    if "\\" not in s:
        return s
    out = bytearray()
    i = 0
    simple = {"n": b"\n", "t": b"\t", '"': b'"', "\\": b"\\"}
    while i < len(s):
        c = s[i]
        if c == "\\" and _HEX2.fullmatch(s, i + 1, i + 3):
            out.append(int(s[i + 1:i + 3], 16))
            i += 3
        elif c == "\\" and s[i + 1:i + 2] in simple:
            out.extend(simple[s[i + 1]])
            i += 2
        else:
            out.extend(c.encode())
            i += 1
    return out.decode("utf-8", errors="replace")


def mlir_quote(s: str) -> str:
    """A string literal MLIR reads back as `s`."""
    return quote(s, "\\{:02X}")
