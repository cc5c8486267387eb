"""A small protobuf runtime: messages described by field tables, with the API of protobuf's
generated Python classes (constructor keywords, attribute access, HasField, WhichOneof,
CopyFrom, MergeFrom, SerializeToString, ParseFromString, FromString, str() as text format)
and protobuf's wire format (proto3: default scalars are not written, numeric repeated
fields are packed, a oneof member is written whenever it is set).

    class VersionDef(Message):
        FIELDS = (F("producer", 1, "int32"), F("min_consumer", 2, "int32"),
                  F("bad_consumers", 3, "int32", repeated=True))

A field's type is a scalar type name ("string", "bytes", "int32", "int64", "uint32",
"uint64", "bool", "float", "double"), an Enum, or a message class (or its name, resolved
later, for recursive messages); map fields have map_key set. Serialization is deterministic:
fields in number order, map entries by sorted key (protobuf's deterministic=True).
Unknown fields are skipped when parsing. xlapy's core dependencies do not include the
protobuf runtime; tests compare the bytes with it.
"""

from __future__ import annotations

import codecs
import re
import struct

from xlapy.compat.v1.protowire import (DecodeError, _delimited, _escape, _escape_str,
                                       _fields, _float_text, _read_varint, _tag, _varint)

__all__ = ["DecodeError", "Enum", "F", "Message", "parse_text"]

_VARINT = {"int32", "int64", "uint32", "uint64", "bool"}
_MESSAGES: dict = {}


class Enum:
    """A protobuf enum: its values by name (the text format prints names)."""

    def __init__(self, name: str, values: dict):
        self.name = name
        self.values = dict(values)
        self.names = {v: k for k, v in values.items()}


class F:
    __slots__ = ("name", "number", "type", "repeated", "oneof", "map_key")

    def __init__(self, name, number, type, repeated=False, oneof=None, map_key=None):
        self.name, self.number, self.type = name, number, type
        self.repeated, self.oneof, self.map_key = repeated, oneof, map_key

    @property
    def cls(self):
        t = self.type
        if isinstance(t, str) and t in _MESSAGES:
            t = self.type = _MESSAGES[t]
        return t

    @property
    def is_message(self) -> bool:
        return isinstance(self.cls, type)

    def default(self):
        t = self.cls
        if isinstance(t, Enum) or t in ("int32", "int64", "uint32", "uint64"):
            return 0
        return {"string": "", "bytes": b"", "bool": False, "float": 0.0, "double": 0.0}[t]


def _check(f: F, v):
    t = f.cls
    if t == "string":
        if isinstance(v, bytes):
            v = v.decode("utf-8")
        if not isinstance(v, str):
            raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: "
                            f"bytes, str (field {f.name})")
        return v
    if t == "bytes":
        if isinstance(v, str):
            v = v.encode("utf-8")
        if not isinstance(v, (bytes, bytearray)):
            raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: "
                            f"bytes (field {f.name})")
        return bytes(v)
    if t == "bool":
        return bool(v)
    if t in ("float", "double"):
        if isinstance(v, (str, bytes)):
            raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: int, "
                            f"float (field {f.name})")
        v = float(v)
        return struct.unpack("<f", struct.pack("<f", v))[0] if t == "float" and \
            abs(v) < 3.5e38 else v
    if isinstance(v, (str, bytes, float)) and not (isinstance(t, Enum) and isinstance(v, str)):
        raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: int "
                        f"(field {f.name})")
    if isinstance(t, Enum) and isinstance(v, str):
        if v not in t.values:
            raise ValueError(f"Enum type {t.name} has no value named {v}")
        return t.values[v]
    return int(v)


# ---- containers ----------------------------------------------------------------------------

class RepeatedScalar(list):
    def __init__(self, owner, f):
        super().__init__()
        self._owner, self._f = owner, f

    def append(self, v):
        super().append(_check(self._f, v))
        self._owner._modified()

    def extend(self, vs):
        super().extend([_check(self._f, v) for v in vs])
        self._owner._modified()

    def insert(self, i, v):
        super().insert(i, _check(self._f, v))
        self._owner._modified()

    def __setitem__(self, i, v):
        if isinstance(i, slice):
            super().__setitem__(i, [_check(self._f, x) for x in v])
        else:
            super().__setitem__(i, _check(self._f, v))
        self._owner._modified()


class RepeatedMessage(list):
    def __init__(self, owner, f):
        super().__init__()
        self._owner, self._f = owner, f

    def add(self, **kwargs):
        m = self._f.cls(**kwargs)
        super().append(m)
        self._owner._modified()
        return m

    def append(self, m):
        self.add().CopyFrom(m)

    def extend(self, ms):
        for m in list(ms):
            self.append(m)

    def insert(self, i, m):
        c = self._f.cls()
        c.CopyFrom(m)
        super().insert(i, c)
        self._owner._modified()

    def MergeFrom(self, other):
        self.extend(other)


class MessageMap(dict):
    """map<key, message or scalar>: reading a missing key of a message map makes an entry,
    as protobuf does."""

    def __init__(self, owner, f):
        super().__init__()
        self._owner, self._f = owner, f

    def __missing__(self, key):
        f = self._f
        v = f.cls() if f.is_message else f.default()
        super().__setitem__(self._key(key), v)
        self._owner._modified()
        return v

    def _key(self, k):
        return _check(F("key", 1, self._f.map_key), k)

    def __setitem__(self, key, value):
        f = self._f
        if f.is_message:
            m = f.cls()
            m.CopyFrom(value)
            value = m
        else:
            value = _check(f, value)
        super().__setitem__(self._key(key), value)
        self._owner._modified()

    def get_or_create(self, key):
        return self[key]

    def MergeFrom(self, other):
        for k, v in other.items():
            self[k] = v


# ---- messages ------------------------------------------------------------------------------

class Message:
    FIELDS: tuple = ()
    __slots__ = ("_v", "_set", "_parent")

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls._BY_NAME = {f.name: f for f in cls.FIELDS}
        cls._BY_NUM = {f.number: f for f in cls.FIELDS}
        cls._ORDER = tuple(sorted(cls.FIELDS, key=lambda f: f.number))
        _MESSAGES.setdefault(cls.__qualname__, cls)

    def __init__(self, **kwargs):
        object.__setattr__(self, "_v", {})
        object.__setattr__(self, "_set", set())
        object.__setattr__(self, "_parent", None)
        for k, v in kwargs.items():
            f = self._field(k)
            if v is None:
                continue
            if f.map_key is not None:
                m = getattr(self, k)
                for a, b in dict(v).items():
                    m[a] = f.cls(**b) if isinstance(b, dict) else b
            elif f.repeated:
                rep = getattr(self, k)
                for item in v:
                    rep.append(f.cls(**item) if f.is_message and isinstance(item, dict)
                               else item)
            elif f.is_message:
                if isinstance(v, dict):
                    v = f.cls(**v)
                getattr(self, k).CopyFrom(v)
                self._mark(f)
            else:
                setattr(self, k, v)

    @classmethod
    def _field(cls, name) -> F:
        f = cls._BY_NAME.get(name)
        if f is None:
            raise ValueError(f'Protocol message {cls.__name__} has no "{name}" field.')
        return f

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        f = self._BY_NAME.get(name)
        if f is None:
            raise AttributeError(f"{type(self).__name__} has no field or attribute '{name}'")
        v = self._v.get(name)
        if v is not None:
            return v
        if f.map_key is not None:
            v = MessageMap(self, f)
        elif f.repeated:
            v = (RepeatedMessage if f.is_message else RepeatedScalar)(self, f)
        elif f.is_message:
            v = f.cls()
            object.__setattr__(v, "_parent", (self, f))
        else:
            return f.default()
        self._v[name] = v
        return v

    def __setattr__(self, name, value):
        f = self._BY_NAME.get(name)
        if f is None:
            raise AttributeError(f"Protocol message {type(self).__name__} has no \"{name}\" "
                                 "field.")
        if f.repeated or f.map_key is not None or f.is_message:
            raise AttributeError(f"Assignment not allowed to field \"{name}\" in protocol "
                                 "message object.")
        self._v[name] = _check(f, value)
        self._mark(f)

    def _mark(self, f: F):
        if f.oneof:
            for other in self.FIELDS:
                if other.oneof == f.oneof and other is not f:
                    self._set.discard(other.name)
                    self._v.pop(other.name, None)
        self._set.add(f.name)
        self._modified()

    def _modified(self):
        p = self._parent
        if p is not None:
            owner, f = p
            if owner._v.get(f.name) is not self:
                return  # detached (its oneof member was replaced)
            if f.name not in owner._set:
                owner._mark(f)
            else:
                owner._modified()

    def _has(self, f: F) -> bool:
        if f.map_key is not None or f.repeated:
            return bool(self._v.get(f.name))
        if f.is_message or f.oneof:
            return f.name in self._set
        return self._v.get(f.name, f.default()) != f.default()

    # -- protobuf's message API
    def HasField(self, name):
        if any(f.oneof == name for f in self.FIELDS):
            return self.WhichOneof(name) is not None
        f = self._field(name)
        if f.repeated or f.map_key is not None or not (f.is_message or f.oneof):
            raise ValueError(f'Protocol message has no singular "{name}" field.')
        return name in self._set

    def WhichOneof(self, group):
        members = [f for f in self.FIELDS if f.oneof == group]
        if not members:
            raise ValueError(f'Protocol message has no oneof "{group}" field.')
        for f in members:
            if f.name in self._set:
                return f.name
        return None

    def ClearField(self, name):
        self._field(name)
        self._v.pop(name, None)
        self._set.discard(name)

    def Clear(self):
        self._v.clear()
        self._set.clear()

    def SetInParent(self):
        self._modified()

    def ListFields(self):
        return [(f, getattr(self, f.name)) for f in self._ORDER if self._has(f)]

    def IsInitialized(self):
        return True

    def CopyFrom(self, other):
        if other is self:
            return
        if type(other) is not type(self):
            raise TypeError(f"Parameter to CopyFrom() must be instance of same class: "
                            f"expected {type(self).__name__} got {type(other).__name__}.")
        self.Clear()
        self.MergeFrom(other)

    def MergeFrom(self, other):
        if type(other) is not type(self):
            raise TypeError(f"Parameter to MergeFrom() must be instance of same class: "
                            f"expected {type(self).__name__} got {type(other).__name__}.")
        for f in self._ORDER:
            if not other._has(f):
                continue
            src = other._v.get(f.name)
            if f.map_key is not None or f.repeated:
                getattr(self, f.name).MergeFrom(src) if f.map_key is not None else \
                    getattr(self, f.name).extend(src)
            elif f.is_message:
                getattr(self, f.name).MergeFrom(src)
                self._mark(f)
            else:
                setattr(self, f.name, src)
        self._modified()

    # -- wire format
    def SerializeToString(self, deterministic=None):
        out = []
        for f in self._ORDER:
            if not self._has(f):
                continue
            v = self._v.get(f.name)
            if f.map_key is not None:
                kf, vf = F("key", 1, f.map_key), F("value", 2, f.type)
                for k in sorted(v):
                    out.append(_delimited(f.number, _encode(kf, k, True) +
                                          _encode(vf, v[k], True)))
            elif f.repeated:
                if f.is_message or f.cls in ("string", "bytes"):
                    out.extend(_encode(f, x, True) for x in v)
                else:
                    out.append(_delimited(f.number, b"".join(_raw(f, x) for x in v)))
            else:
                out.append(_encode(f, v, True))
        return b"".join(out)

    SerializePartialToString = SerializeToString

    def ByteSize(self):
        return len(self.SerializeToString())

    def ParseFromString(self, data):
        self.Clear()
        return self.MergeFromString(data)

    def MergeFromString(self, data):
        buf = bytes(data)
        self._merge(buf)
        self._modified()
        return len(buf)

    @classmethod
    def FromString(cls, data):
        m = cls()
        m.MergeFromString(data)
        return m

    def _merge(self, buf):
        for num, wt, v in _fields(buf, 0, len(buf)):
            f = self._BY_NUM.get(num)
            if f is None:
                continue
            if f.map_key is not None:
                kf, vf = F("key", 1, f.map_key), F("value", 2, f.type)
                key, val = kf.default(), None
                for enum, ewt, ev in _fields(v, 0, len(v)):
                    if enum == 1:
                        key = _decode_scalar(kf, ewt, ev)[0]
                    elif enum == 2:
                        val = ev if vf.is_message else _decode_scalar(vf, ewt, ev)[0]
                m = getattr(self, f.name)
                if vf.is_message:
                    entry = vf.cls()
                    if val is not None:
                        entry._merge(val)
                    dict.__setitem__(m, key, entry)
                else:
                    dict.__setitem__(m, key, vf.default() if val is None else val)
            elif f.is_message:
                if wt != 2:
                    raise DecodeError(f"{type(self).__name__}.{f.name}: wrong wire type {wt}")
                if f.repeated:
                    m = f.cls()
                    m._merge(v)
                    list.append(getattr(self, f.name), m)
                else:
                    getattr(self, f.name)._merge(v)
                    self._mark(f)
            else:
                vals = _decode_scalar(f, wt, v)
                if f.repeated:
                    list.extend(getattr(self, f.name), vals)
                else:
                    self._v[f.name] = vals[-1]
                    self._mark(f)

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented if not isinstance(other, Message) else False
        return all(self._has(f) == other._has(f) and
                   (not self._has(f) or _plain(self._v.get(f.name)) ==
                    _plain(other._v.get(f.name)))
                   for f in self.FIELDS)

    __hash__ = None

    def __deepcopy__(self, memo=None):
        c = type(self)()
        c.CopyFrom(self)
        return c

    def __reduce__(self):
        return type(self).FromString, (self.SerializeToString(),)

    # -- text format
    def _text(self, indent: int) -> list:
        pad = " " * indent
        lines = []
        for f in self._ORDER:
            if not self._has(f):
                continue
            v = self._v.get(f.name)
            if f.map_key is not None:
                kf, vf = F("key", 1, f.map_key), F("value", 2, f.type)
                for k in sorted(v):
                    lines += [f"{pad}{f.name} {{", f"{pad}  key: {_text_scalar(kf, k)}"]
                    if vf.is_message:
                        lines += [f"{pad}  value {{"] + v[k]._text(indent + 4) + [f"{pad}  }}"]
                    else:
                        lines.append(f"{pad}  value: {_text_scalar(vf, v[k])}")
                    lines.append(f"{pad}}}")
            elif f.is_message:
                for m in (v if f.repeated else [v]):
                    lines += [f"{pad}{f.name} {{"] + m._text(indent + 2) + [f"{pad}}}"]
            else:
                for x in (v if f.repeated else [v]):
                    lines.append(f"{pad}{f.name}: {_text_scalar(f, x)}")
        return lines

    def __str__(self):
        lines = self._text(0)
        return "\n".join(lines) + "\n" if lines else ""

    __repr__ = __str__


def _plain(v):
    if isinstance(v, dict):
        return dict(v)
    if isinstance(v, list):
        return list(v)
    return v


def _raw(f: F, v) -> bytes:
    t = f.cls
    if t == "float":
        return struct.pack("<f", v)
    if t == "double":
        return struct.pack("<d", v)
    return _varint(int(v))


def _encode(f: F, v, force: bool) -> bytes:
    t = f.cls
    if f.is_message:
        return _delimited(f.number, v.SerializeToString())
    if t == "string":
        return _delimited(f.number, v.encode("utf-8"))
    if t == "bytes":
        return _delimited(f.number, v)
    if t == "float":
        return _tag(f.number, 5) + _raw(f, v)
    if t == "double":
        return _tag(f.number, 1) + _raw(f, v)
    return _tag(f.number, 0) + _raw(f, v)


def _signed(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


def _decode_scalar(f: F, wt: int, v) -> list:
    t = f.cls
    if t in ("string", "bytes"):
        if wt != 2:
            raise DecodeError(f"field {f.name}: wrong wire type {wt}")
        if t == "bytes":
            return [bytes(v)]
        try:
            return [bytes(v).decode("utf-8")]
        except UnicodeDecodeError:
            raise DecodeError(f"field {f.name}: string is not valid UTF-8") from None
    if t in ("float", "double"):
        size, fmt, want = (4, "<f", 5) if t == "float" else (8, "<d", 1)
        if wt == want:
            return [struct.unpack(fmt, v)[0]]
        if wt == 2 and len(v) % size == 0:
            return [x[0] for x in struct.iter_unpack(fmt, v)]
        raise DecodeError(f"field {f.name}: wrong wire type {wt}")
    if wt == 0:
        raws = [v]
    elif wt == 2:
        raws, p = [], 0
        while p < len(v):
            x, p = _read_varint(v, p, len(v))
            raws.append(x)
    else:
        raise DecodeError(f"field {f.name}: wrong wire type {wt}")
    if t == "bool":
        return [bool(x) for x in raws]
    if t in ("uint32", "uint64"):
        return [x & ((1 << (32 if t == "uint32" else 64)) - 1) for x in raws]
    return [_signed(x) for x in raws]  # int32 and enums: sign-extended to 64 bits


def _text_scalar(f: F, v) -> str:
    t = f.cls
    if t == "string":
        return f'"{_escape_str(v)}"'
    if t == "bytes":
        return f'"{_escape(v)}"'
    if t == "bool":
        return "true" if v else "false"
    if t == "float":
        return _float_text(v)
    if t == "double":
        return repr(float(v)) if v == v and abs(v) != float("inf") else _float_text(v)
    if isinstance(t, Enum):
        return t.names.get(v, str(v))
    return str(v)


# ---- text format parsing -------------------------------------------------------------------

_TOKEN = re.compile(r"""\s+|\#[^\n]*|(?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|"""
                    r"""(?P<word>[-+]?[\w.+-]+)|(?P<punct>[{}<>:\[\],;])""")


def _tokens(text: str) -> list:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise DecodeError(f"text format: unexpected character {text[pos]!r} at {pos}")
        pos = m.end()
        if m.lastgroup:
            out.append((m.lastgroup, m.group(m.lastgroup)))
    return out


class _Parser:
    def __init__(self, text):
        self.toks, self.i = _tokens(text), 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, want=None):
        tok = self.peek()
        if tok[0] is None or (want is not None and tok[1] != want):
            raise DecodeError(f"text format: expected {want or 'a token'}, got {tok[1]!r}")
        self.i += 1
        return tok

    def message(self, msg, close=None):
        while True:
            kind, word = self.peek()
            if kind is None or word == close:
                if word != close:
                    raise DecodeError(f"text format: expected {close!r} at the end")
                if close:
                    self.take(close)
                return
            self.take()
            f = type(msg)._BY_NAME.get(word)
            if f is None:
                raise DecodeError(f'text format: message {type(msg).__name__} has no field '
                                  f'named "{word}"')
            if self.peek()[1] == ":":
                self.take(":")
            if self.peek()[1] == "[":
                self.take("[")
                while self.peek()[1] != "]":
                    self.value(msg, f)
                    if self.peek()[1] == ",":
                        self.take(",")
                self.take("]")
            else:
                self.value(msg, f)
            if self.peek()[1] in (",", ";"):
                self.take()

    def value(self, msg, f: F):
        if f.map_key is not None:
            close = {"{": "}", "<": ">"}[self.take()[1]]
            key, val = F("key", 1, f.map_key).default(), None
            while self.peek()[1] != close:
                name = self.take()[1]
                if self.peek()[1] == ":":
                    self.take(":")
                if name == "key":
                    key = self.scalar(F("key", 1, f.map_key))
                elif f.is_message:
                    val = f.cls()
                    self.message(val, {"{": "}", "<": ">"}[self.take()[1]])
                else:
                    val = self.scalar(f)
            self.take(close)
            m = getattr(msg, f.name)
            m[key] = val if val is not None else (f.cls() if f.is_message else f.default())
        elif f.is_message:
            close = {"{": "}", "<": ">"}[self.take()[1]]
            sub = getattr(msg, f.name).add() if f.repeated else getattr(msg, f.name)
            self.message(sub, close)
            if not f.repeated:
                msg._mark(f)
        else:
            v = self.scalar(f)
            getattr(msg, f.name).append(v) if f.repeated else setattr(msg, f.name, v)

    def scalar(self, f: F):
        t = f.cls
        kind, word = self.take()
        if t in ("string", "bytes"):
            if kind != "str":
                raise DecodeError(f"text format: field {f.name} takes a string, got {word!r}")
            raw = b""
            while True:
                raw += codecs.escape_decode(word[1:-1].encode("utf-8"))[0]
                if self.peek()[0] != "str":
                    break
                word = self.take()[1]
            return raw if t == "bytes" else raw.decode("utf-8")
        try:
            if t == "bool":
                if word in ("true", "t", "True", "1"):
                    return True
                if word in ("false", "f", "False", "0"):
                    return False
                raise ValueError(word)
            if t in ("float", "double"):
                w = word.lower().rstrip("f") if not word.lower().endswith("inf") else word
                return float(w.replace("infinity", "inf"))
            if isinstance(t, Enum) and word in t.values:
                return t.values[word]
            return int(word, 0)
        except ValueError:
            raise DecodeError(f"text format: bad value {word!r} for field {f.name}") from None


def parse_text(text: str, message):
    """Merge the text format `text` into `message` (protobuf's text_format.Merge)."""
    _Parser(text).message(message)
    return message
