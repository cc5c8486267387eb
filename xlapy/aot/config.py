"""tfcompile's tf2xla Config in protobuf text format: which graph tensors are fed, which are
fetched, and the variables.

  config = parse_config(text, filename)     Config; AotError with file:line:column

The subset tfcompile's configs use (tensorflow/compiler/tf2xla/tf2xla.proto):

  feed     { id { node_name: "x" output_index: 0 }  shape { dim { size: 1 } dim { size: 784 } }
             name: "x"  type: DT_FLOAT }
  fetch    { id { node_name: "y" }  name: "y" }
  variable { node_name: "w"  name: "w"  shape { ... }  type: DT_FLOAT  readonly: true }

Text format as protobuf writes it: `name: value` scalars (strings in quotes, integers,
true/false, enum names), `name { ... }` or `name: { ... }` (or `< ... >`) messages, repeated
fields by repetition or `[a, b]`, `#` comments. A field the subset does not know is an error
naming it and the fields that are known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from xlapy.errors import AotError

# tensorflow/core/framework/types.proto DataType names -> xlapy element types
DATA_TYPES = {"DT_FLOAT": "f32", "DT_DOUBLE": "f64", "DT_INT32": "s32", "DT_UINT8": "u8",
              "DT_INT16": "s16", "DT_INT8": "s8", "DT_INT64": "s64", "DT_BOOL": "pred",
              "DT_BFLOAT16": "bf16", "DT_UINT16": "u16", "DT_HALF": "f16", "DT_UINT32": "u32",
              "DT_UINT64": "u64"}


@dataclass
class TensorId:
    node_name: str = ""
    output_index: int = 0

    def __str__(self) -> str:
        return f"{self.node_name}:{self.output_index}"


@dataclass
class Feed:
    id: TensorId
    shape: list | None = None       # dims; None: not given (the placeholder's then)
    name: str = ""
    type: str | None = None         # xlapy element type
    where: str = ""


@dataclass
class Fetch:
    id: TensorId
    name: str = ""
    where: str = ""


@dataclass
class Variable:
    node_name: str
    name: str = ""
    shape: list | None = None
    type: str | None = None
    readonly: bool = False
    where: str = ""


@dataclass
class Config:
    feeds: list = field(default_factory=list)
    fetches: list = field(default_factory=list)
    variables: list = field(default_factory=list)


# ---- text format -----------------------------------------------------------------------------

_TOKEN = re.compile(r"""\s+|\#[^\n]*|(?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|
                        (?P<num>[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+)[fF]?)|
                        (?P<id>[A-Za-z_][A-Za-z0-9_.]*)|(?P<punct>[{}<>\[\]:,;])""", re.X)


class _Node:
    """A parsed message: field name -> [(value, where)]; a value is a scalar or a _Node."""

    def __init__(self, where: str):
        self.where = where
        self.fields: dict = {}


class _Parser:
    def __init__(self, text: str, filename: str):
        self.filename = filename
        self.tokens: list = []
        pos = line = 0
        line_start = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise self._error(f"unexpected character {text[pos]!r}",
                                  (line + 1, pos - line_start + 1))
            kind = m.lastgroup
            if kind is not None:
                self.tokens.append((kind, m.group(kind), (line + 1, pos - line_start + 1)))
            chunk = m.group(0)
            if "\n" in chunk:
                line += chunk.count("\n")
                line_start = pos + chunk.rindex("\n") + 1
            pos = m.end()
        self.i = 0

    def _error(self, message: str, at) -> AotError:
        return AotError(f"{self.filename}:{at[0]}:{at[1]}: {message}")

    def where(self, at) -> str:
        return f"{self.filename}:{at[0]}:{at[1]}"

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "", self._end())

    def _end(self):
        return self.tokens[-1][2] if self.tokens else (1, 1)

    def take(self, value: str | None = None):
        tok = self.peek()
        if tok[0] == "end" or (value is not None and tok[1] != value):
            want = f"'{value}'" if value else "more"
            raise self._error(f"expected {want}, found "
                              f"{repr(tok[1]) if tok[0] != 'end' else 'the end'}", tok[2])
        self.i += 1
        return tok

    def message(self, close: str | None, at) -> _Node:
        node = _Node(self.where(at))
        while True:
            kind, value, where = self.peek()
            if close is None and kind == "end":
                return node
            if kind == "punct" and value == close:
                self.i += 1
                return node
            if kind != "id":
                found = repr(value) if kind != "end" else "the end"
                raise self._error(f"expected a field name, found {found}", where)
            self.i += 1
            at = self.where(where)
            colon = self.peek()[1] == ":" and self.take(":")
            kind2, value2, where2 = self.peek()
            if kind2 == "punct" and value2 in "{<":
                self.i += 1
                node.fields.setdefault(value, []).append(
                    (self.message("}" if value2 == "{" else ">", where2), at))
            elif not colon:
                raise self._error(f"expected ':' or '{{' after '{value}'", where2)
            elif kind2 == "punct" and value2 == "[":
                self.i += 1
                while self.peek()[1] != "]":
                    node.fields.setdefault(value, []).append((self.scalar(), at))
                    if self.peek()[1] == ",":
                        self.i += 1
                self.take("]")
            else:
                node.fields.setdefault(value, []).append((self.scalar(), at))
            if self.peek()[1] in (",", ";"):
                self.i += 1

    def scalar(self):
        kind, value, where = self.take()
        if kind == "str":
            return _unquote(value)
        if kind == "num":
            v = value.rstrip("fF")
            return float(v) if any(c in v for c in ".eE") else int(v)
        if kind == "id":
            return {"true": True, "True": True, "false": False, "False": False}.get(value, value)
        raise self._error(f"expected a value, found {value!r}", where)


def _unquote(s: str) -> str:
    body = s[1:-1]
    return body.encode("latin-1", "backslashreplace").decode("unicode_escape")


# ---- schema ------------------------------------------------------------------------------------

def _fields(node: _Node, known: dict, what: str) -> dict:
    for name, values in node.fields.items():
        if name not in known:
            raise AotError(f"{values[0][1]}: unknown field '{name}' in {what}; known fields: "
                           f"{', '.join(known)}")
        if not known[name] and len(values) > 1:
            raise AotError(f"{values[1][1]}: field '{name}' of {what} given twice")
    return {name: [v for v, _ in values] for name, values in node.fields.items()}


def _one(fields: dict, name: str, typ, node: _Node, what: str, default=None):
    values = fields.get(name)
    if not values:
        return default
    v = values[0]
    ok = isinstance(v, typ) and not (typ is int and isinstance(v, bool))
    if not ok:
        kind = {str: "a string", int: "an integer", bool: "true or false",
                _Node: "a message"}[typ]
        raise AotError(f"{node.where}: field '{name}' of {what} must be {kind}, got {v!r}")
    return v


def _tensor_id(node: _Node, what: str) -> TensorId:
    f = _fields(node, {"node_name": False, "output_index": False}, what)
    name = _one(f, "node_name", str, node, what, "")
    if not name:
        raise AotError(f"{node.where}: {what} needs a node_name")
    return TensorId(name, _one(f, "output_index", int, node, what, 0))


def _shape(node: _Node | None, what: str) -> list | None:
    if node is None:
        return None
    f = _fields(node, {"dim": True, "unknown_rank": False}, f"the shape of {what}")
    if _one(f, "unknown_rank", bool, node, what, False):
        raise AotError(f"{node.where}: the shape of {what} has an unknown rank: ahead-of-time "
                       "code needs static shapes")
    dims = []
    for d in f.get("dim", []):
        df = _fields(d, {"size": False, "name": False}, f"a dim of {what}")
        dims.append(_one(df, "size", int, d, f"a dim of {what}", -1))
    return dims


def _type(fields: dict, node: _Node, what: str) -> str | None:
    t = fields.get("type", [None])[0]
    if t is None:
        return None
    if t not in DATA_TYPES:
        raise AotError(f"{node.where}: type {t!r} of {what} is not one of "
                       f"{', '.join(DATA_TYPES)}")
    return DATA_TYPES[t]


def parse_config(text: str, filename: str = "<config>") -> Config:
    p = _Parser(text, filename)
    root = p.message(None, (1, 1))
    top = _fields(root, {"feed": True, "fetch": True, "variable": True}, "the config")
    cfg = Config()
    for node in top.get("feed", []):
        if not isinstance(node, _Node):
            raise AotError(f"{root.where}: feed must be a message")
        f = _fields(node, {"id": False, "shape": False, "name": False, "type": False}, "a feed")
        id_node = _one(f, "id", _Node, node, "a feed")
        if id_node is None:
            raise AotError(f"{node.where}: a feed needs an id {{ node_name: ... }}")
        tid = _tensor_id(id_node, "a feed's id")
        cfg.feeds.append(Feed(tid, _shape(_one(f, "shape", _Node, node, "a feed"),
                                          f"feed {tid}"),
                              _one(f, "name", str, node, "a feed", ""),
                              _type(f, node, f"feed {tid}"), node.where))
    for node in top.get("fetch", []):
        if not isinstance(node, _Node):
            raise AotError(f"{root.where}: fetch must be a message")
        f = _fields(node, {"id": False, "name": False, "shape": False, "type": False},
                    "a fetch")
        id_node = _one(f, "id", _Node, node, "a fetch")
        if id_node is None:
            raise AotError(f"{node.where}: a fetch needs an id {{ node_name: ... }}")
        cfg.fetches.append(Fetch(_tensor_id(id_node, "a fetch's id"),
                                 _one(f, "name", str, node, "a fetch", ""), node.where))
    for node in top.get("variable", []):
        if not isinstance(node, _Node):
            raise AotError(f"{root.where}: variable must be a message")
        f = _fields(node, {"node_name": False, "name": False, "shape": False, "type": False,
                           "readonly": False}, "a variable")
        name = _one(f, "node_name", str, node, "a variable", "")
        if not name:
            raise AotError(f"{node.where}: a variable needs a node_name")
        cfg.variables.append(Variable(name, _one(f, "name", str, node, "a variable", ""),
                                      _shape(_one(f, "shape", _Node, node, "a variable"),
                                             f"variable {name}"),
                                      _type(f, node, f"variable {name}"),
                                      _one(f, "readonly", bool, node, "a variable", False),
                                      node.where))
    if not cfg.fetches:
        raise AotError(f"{filename}: the config fetches nothing (add fetch {{ id {{ node_name: "
                       "... }} }})")
    return cfg
