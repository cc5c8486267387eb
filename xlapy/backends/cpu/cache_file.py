"""One entry of the disk cache as a file: a versioned container that is only ever read as data
(nothing in it is executed or unpickled when it is read), checked before anything uses it.

    b"xlapy-cache 1\\n"                     the format and its version
    b"<sha256 of the rest, 64 hex digits>\\n"
    header: one line of JSON, b"\\n"         {"kind", "key", "blobs": [byte counts], "meta"}
    blobs: raw bytes (object code), their counts in the header, nothing after them

    write(path, kind, key, meta, blobs)     atomically: readers see the old file or the new
    read(path, kind, key) -> (meta, blobs)  or None when there is no file; BadEntry when it
                                            is damaged, of another format or version, or was
                                            stored for another kind or key

The hash covers the header and every byte of object code, so a damaged entry (a truncated
file, flipped bits, object code overwritten in place) is found before its code is loaded;
the key inside says which compilation the entry was stored for, so a file renamed or copied
to another key's name is refused too. The hash is a check against damage, not a signature:
whoever can write the cache directory can write code this process will run (as with any
compiler cache), so it must be as private as the code itself (~/.cache/xlapy by default).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile

MAGIC = b"xlapy-cache 1\n"
MAX_HEADER = 64 << 20  # bytes of JSON (the optimized HLO text is in it)


class BadEntry(ValueError):
    """A cache file that must not be used (the message says why)."""


def write(path, kind: str, key: str, meta: dict, blobs: list[bytes]) -> None:
    """Store an entry at path (a temporary file in the same directory, then renamed over
    path, so a process reading it meanwhile sees either the old entry or the new one)."""
    header = json.dumps({"kind": kind, "key": key, "blobs": [len(b) for b in blobs],
                         "meta": meta}, separators=(",", ":"), allow_nan=False).encode()
    body = [header, b"\n", *blobs]
    h = hashlib.sha256()
    for part in body:
        h.update(part)
    path = os.fspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".",
                               prefix=os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC)
            f.write(h.hexdigest().encode() + b"\n")
            for part in body:
                f.write(part)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read(path, kind: str, key: str) -> tuple[dict, list[bytes]] | None:
    """(meta, blobs) of the entry at path, None when there is none, BadEntry when it cannot
    be used. Other OSErrors (permissions) propagate."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    return parse(data, kind, key)


def parse(data: bytes, kind: str, key: str) -> tuple[dict, list[bytes]]:
    if not data.startswith(MAGIC):
        if data.startswith(b"xlapy-cache "):
            raise BadEntry("written by another version of xlapy's cache format")
        raise BadEntry("not an xlapy cache entry (no format line)")
    start = len(MAGIC)
    digest, body = data[start:start + 65], data[start + 65:]
    if len(digest) != 65 or digest[64:] != b"\n":
        raise BadEntry("truncated before its hash")
    if hashlib.sha256(body).hexdigest().encode() != digest[:64]:
        raise BadEntry("its content does not match its hash (damaged or truncated)")
    end = body.find(b"\n", 0, MAX_HEADER)
    if end < 0:
        raise BadEntry("no header line")
    try:
        header = json.loads(body[:end].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise BadEntry(f"unreadable header ({type(e).__name__})") from None
    if not isinstance(header, dict):
        raise BadEntry("the header is not an object")
    if header.get("kind") != kind:
        raise BadEntry(f"an entry of kind {header.get('kind')!r}, expected {kind!r}")
    if header.get("key") != key:
        raise BadEntry("stored for another key (a file copied or renamed from another "
                       "entry)")
    sizes, meta = header.get("blobs"), header.get("meta")
    if not (isinstance(sizes, list) and all(type(n) is int and n >= 0 for n in sizes)):
        raise BadEntry("bad blob sizes in the header")
    if not isinstance(meta, dict):
        raise BadEntry("no metadata in the header")
    pos, blobs = end + 1, []
    for n in sizes:
        blobs.append(body[pos:pos + n])
        pos += n
    if pos != len(body):
        raise BadEntry("its size does not match its header")
    return meta, blobs
