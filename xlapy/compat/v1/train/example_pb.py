"""tf.train.Example and its parts (TF's example.proto and feature.proto), as protobuf
messages with the API of protobuf's generated Python classes, and protobuf's wire format
written here (xlapy's core dependencies do not include the protobuf runtime):

    message BytesList    { repeated bytes value = 1; }
    message FloatList    { repeated float value = 1 [packed = true]; }
    message Int64List    { repeated int64 value = 1 [packed = true]; }
    message Feature      { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
                                        Int64List int64_list = 3; } }
    message Features     { map<string, Feature> feature = 1; }
    message FeatureList  { repeated Feature feature = 1; }
    message FeatureLists { map<string, FeatureList> feature_list = 1; }
    message Example      { Features features = 1; }
    message SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }

As protobuf's messages: constructors take field values (messages, dicts for maps, iterables
for repeated fields); reading a message field gives its (empty) value without setting it,
and changing it sets it (and, in Feature's oneof, clears the other kinds); maps of messages
make an entry when a missing key is read; floats are stored as float32. Serialization is
deterministic (map entries by sorted key), packed; decoding takes packed and unpacked
repeated numbers, and skips unknown fields. str() is protobuf's text format.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.protowire import (DecodeError, _delimited, _escape, _escape_str,
                                       _fields, _float_text, _int64, _read_varint, _varint)


# ---- containers ----------------------------------------------------------------------------

class _Repeated:
    """A repeated scalar field (bytes, float or int64 values)."""

    __slots__ = ("_owner", "_check", "_values")

    def __init__(self, owner, check):
        self._owner, self._check, self._values = owner, check, []

    def append(self, v):
        self._values.append(self._check(v))
        self._owner._modified()

    def extend(self, vs):
        vals = [self._check(v) for v in vs]
        self._values.extend(vals)
        self._owner._modified()

    def insert(self, i, v):
        self._values.insert(i, self._check(v))
        self._owner._modified()

    def remove(self, v):
        self._values.remove(v)

    def pop(self, i=-1):
        return self._values.pop(i)

    def __setitem__(self, i, v):
        if isinstance(i, slice):
            self._values[i] = [self._check(x) for x in v]
        else:
            self._values[i] = self._check(v)
        self._owner._modified()

    def __delitem__(self, i):
        del self._values[i]

    def __getitem__(self, i):
        return self._values[i]

    def __len__(self):
        return len(self._values)

    def __iter__(self):
        return iter(self._values)

    def __eq__(self, other):
        if isinstance(other, _Repeated):
            return self._values == other._values
        try:
            return self._values == list(other)
        except TypeError:
            return NotImplemented

    __hash__ = None

    def __repr__(self):
        return repr(self._values)


class _RepeatedMessages:
    """A repeated message field (FeatureList.feature)."""

    __slots__ = ("_owner", "_cls", "_values")

    def __init__(self, owner, cls):
        self._owner, self._cls, self._values = owner, cls, []

    def add(self, **kwargs):
        m = self._cls(**kwargs)
        self._values.append(m)
        self._owner._modified()
        return m

    def append(self, m):
        if not isinstance(m, self._cls):
            raise TypeError(f"Parameter to append() must be instance of "
                            f"{self._cls.__name__}, got {type(m).__name__}")
        c = self._cls()
        c.CopyFrom(m)
        self._values.append(c)
        self._owner._modified()

    def extend(self, ms):
        for m in ms:
            self.append(m)

    def __getitem__(self, i):
        return self._values[i]

    def __delitem__(self, i):
        del self._values[i]

    def __len__(self):
        return len(self._values)

    def __iter__(self):
        return iter(self._values)

    def __eq__(self, other):
        if isinstance(other, _RepeatedMessages):
            return self._values == other._values
        try:
            return self._values == list(other)
        except TypeError:
            return NotImplemented

    __hash__ = None

    def __repr__(self):
        return repr(self._values)


class _MessageMap:
    """A map<string, message> field: reading a missing key makes an empty entry."""

    __slots__ = ("_owner", "_cls", "_entries")

    def __init__(self, owner, cls):
        self._owner, self._cls, self._entries = owner, cls, {}

    def __getitem__(self, key):
        key = _check_key(key)
        m = self._entries.get(key)
        if m is None:
            m = self._entries[key] = self._cls()
            self._owner._modified()
        return m

    def get_or_create(self, key):
        return self[key]

    def __setitem__(self, key, value):
        raise ValueError("Direct assignment of submessage not allowed")

    def get(self, key, default=None):
        return self._entries.get(_check_key(key), default)

    def __contains__(self, key):
        return _check_key(key) in self._entries

    def __delitem__(self, key):
        del self._entries[_check_key(key)]

    def __len__(self):
        return len(self._entries)

    def __iter__(self):
        return iter(self._entries)

    def keys(self):
        return self._entries.keys()

    def values(self):
        return self._entries.values()

    def items(self):
        return self._entries.items()

    def clear(self):
        self._entries.clear()

    def MergeFrom(self, other):
        for k, v in other.items():
            self[k].CopyFrom(v)

    def __eq__(self, other):
        if isinstance(other, _MessageMap):
            return self._entries == other._entries
        if isinstance(other, dict):
            return self._entries == other
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        return repr(self._entries)


def _check_key(k):
    if isinstance(k, bytes):
        try:
            return k.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{k!r} has type bytes, but isn't valid UTF-8 encoding") from None
    if not isinstance(k, str):
        raise TypeError(f"{k!r} has type {type(k).__name__}, but expected one of: bytes, str")
    return k


def _check_bytes(v):
    if isinstance(v, (bytes, bytearray)) or (isinstance(v, np.bytes_)):
        return bytes(v)
    raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: bytes")


def _check_float(v):
    if not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: int, float")
    with np.errstate(over="ignore"):  # beyond float32's range: inf, as protobuf stores it
        return float(np.float32(v))


def _check_int64(v):
    if isinstance(v, (float, np.floating)) or not isinstance(v, (int, np.integer, bool,
                                                                  np.bool_)):
        raise TypeError(f"{v!r} has type {type(v).__name__}, but expected one of: int")
    v = int(v)
    if not -(1 << 63) <= v < (1 << 63):
        raise ValueError(f"Value out of range: {v}")
    return v


# ---- messages ------------------------------------------------------------------------------

class Message:
    """The base of the messages here: fields are described by _FIELDS, a list of
    (name, number, kind, arg) with kind "repeated" (arg: checker, packed wire type), "message"
    (arg: class), "repeated_message" (arg: class) or "map" (arg: value class); _ONEOF names
    the message fields that form one oneof."""

    _FIELDS: tuple = ()
    _ONEOF: tuple = ()
    _ONEOF_NAME = ""
    __slots__ = ("_values", "_present", "_parent", "_parent_field")

    def __init__(self, **kwargs):
        self._values = {}
        self._present = set()
        self._parent = None
        self._parent_field = None
        names = {f[0] for f in self._FIELDS}
        for k, v in kwargs.items():
            if k not in names:
                raise ValueError(f'Protocol message {type(self).__name__} has no "{k}" field.')
            if v is None:
                continue
            spec = self._spec(k)
            if spec[2] == "message":
                if isinstance(v, dict):
                    v = spec[3](**v)
                elif not isinstance(v, spec[3]):
                    raise TypeError(f"Parameter to initialize message field must be dict or "
                                    f"instance of same class: expected {spec[3].__name__} got "
                                    f"{type(v).__name__}.")
                getattr(self, k).CopyFrom(v)
                self._set_present(k)
            elif spec[2] == "map":
                m = getattr(self, k)
                for key, val in dict(v).items():
                    if isinstance(val, dict):
                        val = spec[3](**val)
                    m[key].CopyFrom(val)
            elif spec[2] == "repeated_message":
                rep = getattr(self, k)
                for item in v:
                    rep.append(spec[3](**item) if isinstance(item, dict) else item)
            else:
                if isinstance(v, (str, bytes)):
                    raise TypeError(f"{k}: a repeated field takes an iterable of values, got "
                                    f"{type(v).__name__}")
                getattr(self, k).extend(v)

    @classmethod
    def _spec(cls, name):
        for f in cls._FIELDS:
            if f[0] == name:
                return f
        raise AttributeError(name)

    def __getattr__(self, name):  # a field not read yet (or any unknown name)
        if name.startswith("_"):
            raise AttributeError(name)
        values = self._values
        if name in values:
            return values[name]
        spec = type(self)._spec(name)
        kind = spec[2]
        if kind == "repeated":
            v = _Repeated(self, spec[3][0])
        elif kind == "message":
            v = spec[3]()
            v._parent, v._parent_field = self, name
        elif kind == "repeated_message":
            v = _RepeatedMessages(self, spec[3])
        else:
            v = _MessageMap(self, spec[3])
        values[name] = v
        return v

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        spec = type(self)._spec(name)
        if spec[2] == "message":
            raise AttributeError(f"Assignment not allowed to message field \"{name}\" in "
                                 "protocol message object.")
        raise AttributeError(f"Assignment not allowed to repeated field \"{name}\" in "
                             "protocol message object.")

    def _set_present(self, name):
        if name in self._ONEOF:
            for other in self._ONEOF:
                if other != name and other in self._present:
                    self._present.discard(other)
                    self._values.pop(other, None)
        self._present.add(name)

    def _modified(self):
        p = self._parent
        if p is not None:
            if self._parent_field not in p._present:
                p._set_present(self._parent_field)
                # the value the parent holds may have been dropped by a oneof switch
                p._values[self._parent_field] = self
            p._modified()

    def _has(self, name) -> bool:
        spec = type(self)._spec(name)
        if spec[2] == "message":
            return name in self._present
        v = self._values.get(name)
        return v is not None and len(v) > 0

    # -- protobuf's message API
    def HasField(self, name):
        if self._ONEOF and name == self._ONEOF_NAME:
            return self.WhichOneof(name) is not None
        if not any(f[0] == name and f[2] == "message" for f in self._FIELDS):
            raise ValueError(f'Protocol message has no singular "{name}" field.')
        return name in self._present

    def WhichOneof(self, oneof_group):
        if oneof_group != self._ONEOF_NAME or not self._ONEOF:
            raise ValueError(f'Protocol message has no oneof "{oneof_group}" field.')
        for n in self._ONEOF:
            if n in self._present:
                return n
        return None

    def ClearField(self, name):
        type(self)._spec(name)
        self._values.pop(name, None)
        self._present.discard(name)

    def Clear(self):
        self._values.clear()
        self._present.clear()

    def ListFields(self):
        out = []
        for f in self._FIELDS:
            if self._has(f[0]):
                out.append((f[0], getattr(self, f[0])))
        return out

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
        for f in self._FIELDS:
            name, kind = f[0], f[2]
            if not other._has(name):
                continue
            src = getattr(other, name)
            if kind == "message":
                getattr(self, name).MergeFrom(src)
                self._set_present(name)
                self._values[name] = self._values.get(name) or getattr(self, name)
            elif kind == "map":
                dst = getattr(self, name)
                for k, v in src.items():
                    dst[k].CopyFrom(v)
            elif kind == "repeated_message":
                getattr(self, name).extend(src)
            else:
                getattr(self, name).extend(list(src))
        self._modified()

    def SerializeToString(self, deterministic=None):
        out = []
        for name, num, kind, arg in self._FIELDS:
            if kind == "message":
                if name in self._present:
                    out.append(_delimited(num, self._values[name].SerializeToString()))
                continue
            v = self._values.get(name)
            if not v:
                continue
            if kind == "repeated":
                check = arg[0]
                if check is _check_bytes:
                    out.extend(_delimited(num, b) for b in v)
                elif check is _check_float:
                    out.append(_delimited(num, np.asarray(v._values, "<f4").tobytes()))
                else:
                    out.append(_delimited(num, b"".join(_varint(i) for i in v)))
            elif kind == "repeated_message":
                out.extend(_delimited(num, m.SerializeToString()) for m in v)
            else:  # map<string, message>: entries with key = 1, value = 2
                for k in sorted(v.keys()):
                    entry = _delimited(1, k.encode()) + _delimited(
                        2, v._entries[k].SerializeToString())
                    out.append(_delimited(num, entry))
        return b"".join(out)

    def SerializePartialToString(self, deterministic=None):
        return self.SerializeToString()

    def ByteSize(self):
        return len(self.SerializeToString())

    def ParseFromString(self, data):
        self.Clear()
        return self.MergeFromString(data)

    def MergeFromString(self, data):
        buf = memoryview(bytes(data)) if not isinstance(data, (bytes, bytearray)) else data
        self._merge(buf, 0, len(buf))
        self._modified()
        return len(buf)

    @classmethod
    def FromString(cls, data):
        m = cls()
        m.MergeFromString(data)
        return m

    def _merge(self, buf, pos, end):
        by_num = {f[1]: f for f in self._FIELDS}
        for num, wt, v in _fields(buf, pos, end):
            f = by_num.get(num)
            if f is None:
                continue  # unknown fields are skipped
            name, _, kind, arg = f
            if kind == "message":
                if wt != 2:
                    raise DecodeError(f"{type(self).__name__}.{name}: wrong wire type {wt}")
                sub = getattr(self, name)
                sub._merge(v, 0, len(v))
                self._set_present(name)
                self._values[name] = sub
            elif kind == "repeated_message":
                if wt != 2:
                    raise DecodeError(f"{type(self).__name__}.{name}: wrong wire type {wt}")
                getattr(self, name).add()._merge(v, 0, len(v))
            elif kind == "map":
                if wt != 2:
                    raise DecodeError(f"{type(self).__name__}.{name}: wrong wire type {wt}")
                key, val = "", None
                for enum, ewt, ev in _fields(v, 0, len(v)):
                    if enum == 1 and ewt == 2:
                        try:
                            key = ev.decode("utf-8")
                        except UnicodeDecodeError:
                            raise DecodeError("String field is not valid UTF-8") from None
                    elif enum == 2 and ewt == 2:
                        val = ev
                entry = arg()
                if val is not None:
                    entry._merge(val, 0, len(val))
                getattr(self, name)._entries[key] = entry
            else:
                rep = getattr(self, name)
                check, packed_wt = arg
                vals = rep._values
                if check is _check_bytes:
                    if wt != 2:
                        raise DecodeError(f"{type(self).__name__}.{name}: wrong wire type {wt}")
                    vals.append(v)
                elif check is _check_float:
                    if wt == 5:
                        vals.append(float(np.frombuffer(v, "<f4")[0]))
                    elif wt == 2:
                        if len(v) % 4:
                            raise DecodeError("Truncated packed float field.")
                        vals.extend(np.frombuffer(v, "<f4").astype(np.float64).tolist())
                    else:
                        raise DecodeError(f"{type(self).__name__}.{name}: wrong wire type {wt}")
                else:
                    if wt == 0:
                        vals.append(_int64(v))
                    elif wt == 2:
                        p = 0
                        while p < len(v):
                            x, p = _read_varint(v, p, len(v))
                            vals.append(_int64(x))
                    else:
                        raise DecodeError(f"{type(self).__name__}.{name}: wrong wire type {wt}")

    def __eq__(self, other):
        if not isinstance(other, Message):
            return NotImplemented
        if type(other) is not type(self):
            return False
        for f in self._FIELDS:
            name = f[0]
            a, b = self._has(name), other._has(name)
            if a != b:
                return False
            if a and getattr(self, name) != getattr(other, name):
                return False
        return True

    __hash__ = None

    def __deepcopy__(self, memo=None):
        c = type(self)()
        c.CopyFrom(self)
        return c

    def __reduce__(self):
        return type(self).FromString, (self.SerializeToString(),)

    def _text(self, indent: int) -> list:
        pad = " " * indent
        lines = []
        for name, _, kind, arg in self._FIELDS:
            if not self._has(name):
                continue
            v = getattr(self, name)
            if kind == "repeated":
                for x in v:
                    if arg[0] is _check_bytes:
                        s = f'"{_escape(x)}"'
                    elif arg[0] is _check_float:
                        s = _float_text(x)
                    else:
                        s = str(x)
                    lines.append(f"{pad}{name}: {s}")
            elif kind == "message":
                lines += [f"{pad}{name} {{"] + v._text(indent + 2) + [f"{pad}}}"]
            elif kind == "repeated_message":
                for m in v:
                    lines += [f"{pad}{name} {{"] + m._text(indent + 2) + [f"{pad}}}"]
            else:
                for k in sorted(v.keys()):
                    lines += [f"{pad}{name} {{", f'{pad}  key: "{_escape_str(k)}"',
                              f"{pad}  value {{"] + v._entries[k]._text(indent + 4) + \
                        [f"{pad}  }}", f"{pad}}}"]
        return lines

    def __str__(self):
        lines = self._text(0)
        return "\n".join(lines) + "\n" if lines else ""

    def __repr__(self):
        return str(self)

    def __unicode__(self):
        return str(self)


class BytesList(Message):
    _FIELDS = (("value", 1, "repeated", (_check_bytes, 2)),)
    __slots__ = ()


class FloatList(Message):
    _FIELDS = (("value", 1, "repeated", (_check_float, 5)),)
    __slots__ = ()


class Int64List(Message):
    _FIELDS = (("value", 1, "repeated", (_check_int64, 0)),)
    __slots__ = ()


class Feature(Message):
    _FIELDS = (("bytes_list", 1, "message", BytesList), ("float_list", 2, "message", FloatList),
               ("int64_list", 3, "message", Int64List))
    _ONEOF = ("bytes_list", "float_list", "int64_list")
    _ONEOF_NAME = "kind"
    __slots__ = ()


class Features(Message):
    _FIELDS = (("feature", 1, "map", Feature),)
    __slots__ = ()


class FeatureList(Message):
    _FIELDS = (("feature", 1, "repeated_message", Feature),)
    __slots__ = ()


class FeatureLists(Message):
    _FIELDS = (("feature_list", 1, "map", FeatureList),)
    __slots__ = ()


class Example(Message):
    _FIELDS = (("features", 1, "message", Features),)
    __slots__ = ()


class SequenceExample(Message):
    _FIELDS = (("context", 1, "message", Features),
               ("feature_lists", 2, "message", FeatureLists))
    __slots__ = ()
