"""The files of a checkpoint: xlapy's own documented format, and TF's `checkpoint` state file.

TensorFlow 1.x's V2 format keeps its index in a LevelDB-style table of protobufs; no
maintained reader/writer of it exists on PyPI without TensorFlow itself, so xlapy writes
its own format with the same file names and the same Saver API (docs/compat_v1.md):

    PREFIX.index                  UTF-8 JSON:
        {"format": "xlapy-checkpoint", "version": 1, "num_shards": 1,
         "tensors": {"<name>": {"dtype": "float32", "shape": [784, 10], "shard": 0,
                                "offset": 0, "nbytes": 31360, "crc32": 2859284712}, ...}}
    PREFIX.data-00000-of-00001    the tensors' bytes one after another in name order, each
                                  little-endian and row-major, at a 64-byte aligned offset
    DIR/checkpoint                TF's CheckpointState in protobuf text format:
                                      model_checkpoint_path: "model.ckpt-1000"
                                      all_model_checkpoint_paths: "model.ckpt-900"
                                      all_model_checkpoint_paths: "model.ckpt-1000"

crc32 is zlib's CRC-32 of the tensor's bytes, checked on every read. Files are written to a
temporary name and renamed, the index last, so a checkpoint whose index exists is complete.
TensorFlow's own checkpoints are not readable (reading one says so).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import zlib

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import DataLossError, InvalidArgumentError, NotFoundError

FORMAT, VERSION = "xlapy-checkpoint", 1
_ALIGN = 64


def data_path(prefix: str, shard: int = 0, num_shards: int = 1) -> str:
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def index_path(prefix: str) -> str:
    return prefix + ".index"


def _atomic_write(path: str, payload: bytes) -> None:
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tempstate", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_checkpoint(prefix: str, tensors: dict) -> None:
    """Write {name: array} as the checkpoint PREFIX (see the module doc)."""
    entries, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        arr = np.asarray(tensors[name])
        dt = dtypes.as_dtype(arr.dtype)  # refuses dtypes a checkpoint cannot hold
        raw = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
        pad = (-offset) % _ALIGN
        if pad:
            chunks.append(b"\0" * pad)
            offset += pad
        entries[name] = {"dtype": dt.name, "shape": list(arr.shape), "shard": 0,
                         "offset": offset, "nbytes": len(raw), "crc32": zlib.crc32(raw)}
        chunks.append(raw)
        offset += len(raw)
    _atomic_write(data_path(prefix), b"".join(chunks))
    index = {"format": FORMAT, "version": VERSION, "num_shards": 1, "tensors": entries}
    _atomic_write(index_path(prefix), json.dumps(index, indent=1).encode())


def checkpoint_exists(prefix: str) -> bool:
    return os.path.isfile(index_path(prefix))


class CheckpointReader:
    """Reads a checkpoint written by write_checkpoint (tf.train.NewCheckpointReader)."""

    def __init__(self, prefix: str):
        prefix = os.fspath(prefix)
        path = index_path(prefix)
        if not os.path.isfile(path):
            raise NotFoundError(f"Unsuccessful TensorSliceReader constructor: Failed to find "
                                f"any matching files for {prefix} (no {path})")
        raw = open(path, "rb").read()
        try:
            index = json.loads(raw.decode())
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise DataLossError(f"{path} is not an xlapy checkpoint index (TensorFlow's own "
                                "checkpoints cannot be read by xlapy: restore them in "
                                "TensorFlow and save them again with xlapy's Saver)") from None
        if not isinstance(index, dict) or index.get("format") != FORMAT:
            raise DataLossError(f"{path} is not an xlapy checkpoint index")
        if index.get("version") != VERSION:
            raise DataLossError(f"{path}: checkpoint format version {index.get('version')} is "
                                f"not supported (this xlapy reads version {VERSION})")
        self._prefix = prefix
        self._entries = index["tensors"]
        self._num_shards = int(index.get("num_shards", 1))

    def has_tensor(self, name: str) -> bool:
        return name in self._entries

    def get_tensor(self, name: str) -> np.ndarray:
        e = self._entries.get(name)
        if e is None:
            raise NotFoundError(f"Key {name} not found in checkpoint")
        dt = dtypes.as_dtype(e["dtype"]).np
        path = data_path(self._prefix, e["shard"], self._num_shards)
        try:
            with open(path, "rb") as f:
                f.seek(e["offset"])
                raw = f.read(e["nbytes"])
        except FileNotFoundError:
            raise DataLossError(f"checkpoint {self._prefix}: data file {path} is missing") \
                from None
        if len(raw) != e["nbytes"] or zlib.crc32(raw) != e["crc32"]:
            raise DataLossError(f"checkpoint {self._prefix}: the bytes of '{name}' in {path} "
                                "are truncated or corrupted (CRC-32 mismatch)")
        arr = np.frombuffer(raw, dtype=dt.newbyteorder("<")).astype(dt)
        return arr.reshape(e["shape"])

    def get_variable_to_shape_map(self) -> dict:
        return {n: list(e["shape"]) for n, e in self._entries.items()}

    def get_variable_to_dtype_map(self) -> dict:
        return {n: dtypes.as_dtype(e["dtype"]) for n, e in self._entries.items()}

    def debug_string(self) -> bytes:
        return "".join(f"{n} ({e['dtype']}) {e['shape']}\n"
                       for n, e in sorted(self._entries.items())).encode()


# ---- the `checkpoint` state file -----------------------------------------------------------

class CheckpointState:
    """TF's CheckpointState message: the latest checkpoint and the ones kept."""

    def __init__(self, model_checkpoint_path: str = "", all_model_checkpoint_paths=(),
                 all_model_checkpoint_timestamps=(), last_preserved_timestamp: float = 0.0):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps)
        self.last_preserved_timestamp = last_preserved_timestamp

    def to_text(self) -> str:
        lines = [f"model_checkpoint_path: {_quote(self.model_checkpoint_path)}"]
        lines += [f"all_model_checkpoint_paths: {_quote(p)}"
                  for p in self.all_model_checkpoint_paths]
        lines += [f"all_model_checkpoint_timestamps: {t!r}"
                  for t in self.all_model_checkpoint_timestamps]
        if self.last_preserved_timestamp:
            lines.append(f"last_preserved_timestamp: {self.last_preserved_timestamp!r}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text: str, where: str) -> "CheckpointState":
        st = cls()
        for n, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.fullmatch(r"(\w+)\s*:\s*(.+)", line)
            if not m:
                raise InvalidArgumentError(f"{where}:{n}: cannot parse '{line}'")
            key, value = m.groups()
            if key == "model_checkpoint_path":
                st.model_checkpoint_path = _unquote(value, where, n)
            elif key == "all_model_checkpoint_paths":
                st.all_model_checkpoint_paths.append(_unquote(value, where, n))
            elif key == "all_model_checkpoint_timestamps":
                st.all_model_checkpoint_timestamps.append(float(value))
            elif key == "last_preserved_timestamp":
                st.last_preserved_timestamp = float(value)
            else:
                raise InvalidArgumentError(f"{where}:{n}: unknown field '{key}'")
        return st

    def __repr__(self):
        return self.to_text()


def _quote(s: str) -> str:
    return json.dumps(s)  # a subset of protobuf text strings: \" \\ \n and \uXXXX escapes


def _unquote(value: str, where: str, line: int) -> str:
    value = value.strip()
    if len(value) < 2 or value[0] != value[-1] or value[0] not in "\"'":
        raise InvalidArgumentError(f"{where}:{line}: expected a quoted string, got {value}")
    body = value[1:-1]
    try:
        return json.loads('"' + body.replace("\\'", "'") + '"')
    except json.JSONDecodeError:
        return body


def write_state(directory: str, state: CheckpointState, filename: str = "checkpoint") -> None:
    _atomic_write(os.path.join(directory, filename), state.to_text().encode())


def read_state(directory: str, filename: str = "checkpoint") -> CheckpointState | None:
    path = os.path.join(directory, filename)
    if not os.path.isfile(path):
        return None
    return CheckpointState.from_text(open(path, encoding="utf-8").read(), path)
