"""The disk cache of compiled programs (~/.cache/xlapy, or XLAPY_CACHE_DIR;
XLAPY_DISABLE_CACHE=1 turns it off): the object code and what the executable needs to run
it, keyed by the compiler's fingerprint of the module, options, flags and target, so another
process that compiles the same module skips LLVM entirely.

Each entry is a cache_file (JSON and raw object code, hashed; never pickle) holding the
ExecutableSpec. An entry is used only when its hash, its key and every field check out and
its parameter and result shapes are the module's; anything else (a damaged, truncated,
foreign or renamed file) is discarded with an XlapyWarning and the module compiled again,
and the new entry replaces it. Several processes may share the directory: an entry is
written to a temporary file and renamed into place, so a reader sees a whole entry or none.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from xlapy.backends.cpu import cache_file
from xlapy.backends.cpu.executable import ExecutableSpec
from xlapy.backends.cpu.options import cache_dir
from xlapy.backends.llvm.elemental import EXTERNAL_CONSTANT_PREFIX, external_constant_symbol
from xlapy.backends.cpu.runtime.constants import as_bytes
from xlapy.backends.cpu.runtime.launch import ARENA, MAX_POINTERS, OUT, PARAM, Launch
from xlapy.errors import XlapyError, XlapyWarning
from xlapy.hlo.ir import Module
from xlapy.hlo.parser import parse_shape

KIND = "cpu-program"
MAX_ARENA = 1 << 46
_CONSTANT_SYMBOL = re.compile(re.escape(EXTERNAL_CONSTANT_PREFIX) + "[0-9a-f]{32}")


def load(key: str, module: Module) -> ExecutableSpec | None:
    """The spec stored for key, checked against module; None when there is none (or the
    entry was unusable: then with a warning)."""
    root = cache_dir()
    if root is None:
        return None
    path = root / f"{key}.xlapy"
    try:
        found = cache_file.read(path, KIND, key)
        if found is None:
            return None
        return _decode(*found, module)
    except cache_file.BadEntry as e:
        warnings.warn(f"xlapy's disk cache: discarded {path}: {e}; compiling the module "
                      "again", XlapyWarning, stacklevel=4)
    except OSError:
        pass  # an unreadable cache directory only costs a compilation
    return None


def store(key: str, spec: ExecutableSpec) -> None:
    root = cache_dir()
    if root is None:
        return
    try:
        root.mkdir(parents=True, exist_ok=True)
        consts = spec.constants or {}
        cache_file.write(root / f"{key}.xlapy", KIND, key, _encode(spec),
                         list(spec.objects) + [as_bytes(d) for d in consts.values()])
    except OSError:
        pass  # a read-only or full cache directory only costs a recompile


def _encode(spec: ExecutableSpec) -> dict:
    launch = spec.launch
    return {
        "arena_size": spec.arena_size,
        "param_shapes": [str(s) for s in spec.param_shapes],
        "result_shape": str(spec.result_shape),
        "optimized_text": spec.optimized_text,
        "entry_symbol": spec.entry_symbol,
        "profile_labels": (None if spec.profile_labels is None
                           else [list(x) for x in spec.profile_labels]),
        "compile_seconds": spec.compile_seconds,
        "aliases": None if spec.aliases is None else sorted(spec.aliases.items()),
        "constants": list(spec.constants or ()),  # their bytes: the blobs after the objects
        "launch": None if launch is None else {
            "wrapper": launch.wrapper, "n": launch.n, "chunk": launch.chunk,
            "flush_denormals": launch.flush_denormals,
            "sources": [list(s) for s in launch.sources]},
        "collectives": spec.collectives,   # plain JSON: the collectives' plan descriptors
    }


# ---- decoding: every field checked, BadEntry for anything unexpected -----------------------

def _field(meta: dict, name: str, types, optional: bool = False):
    value = meta.get(name)
    if value is None and optional:
        return None
    if type(value) not in types:
        raise cache_file.BadEntry(f"field {name!r} is missing or of the wrong type")
    return value


def _int(value, lo: int, hi: int, what: str) -> int:
    if type(value) is not int or not lo <= value <= hi:
        raise cache_file.BadEntry(f"{what} out of range")
    return value


def _shape(text, what: str):
    if type(text) is not str:
        raise cache_file.BadEntry(f"{what} is not a shape")
    try:
        return parse_shape(text)
    except (XlapyError, RecursionError):
        raise cache_file.BadEntry(f"{what} is not a shape") from None


def _decode(meta: dict, objects: list[bytes], module: Module) -> ExecutableSpec:
    params = [_shape(s, "a parameter shape")
              for s in _field(meta, "param_shapes", (list,))]
    result = _shape(_field(meta, "result_shape", (str,)), "the result shape")
    entry = module.entry
    if len(params) != len(entry.parameters) or not all(
            s.compatible(p.shape) for s, p in zip(params, entry.parameters)) \
            or not result.compatible(entry.root.shape):
        raise cache_file.BadEntry(f"its shapes are not those of module {module.name}")
    symbols = _field(meta, "constants", (list,), optional=True) or []
    if len(symbols) >= len(objects) or not all(
            type(n) is str and _CONSTANT_SYMBOL.fullmatch(n) for n in symbols):
        raise cache_file.BadEntry("bad constants")
    constants = dict(zip(symbols, objects[len(objects) - len(symbols):]))
    objects = objects[:len(objects) - len(symbols)]
    if any(external_constant_symbol(np.frombuffer(d, np.uint8)) != n
           for n, d in constants.items()):
        raise cache_file.BadEntry("a constant's bytes are not those its name hashes")
    n_params = sum(len(s.leaves()) for s in params)
    n_outs = len(result.leaves())
    if not objects or not all(objects):
        raise cache_file.BadEntry("no object code")
    arena = _int(meta.get("arena_size"), 0, MAX_ARENA, "the arena size")
    spec = ExecutableSpec(objects, arena, params, result,
                          _field(meta, "optimized_text", (str,)),
                          _field(meta, "entry_symbol", (str,)))
    labels = _field(meta, "profile_labels", (list,), optional=True)
    if labels is not None:
        if not all(type(x) is list and len(x) == 3 and all(type(s) is str for s in x)
                   for x in labels):
            raise cache_file.BadEntry("bad profile labels")
        spec.profile_labels = [tuple(x) for x in labels]
    seconds = _field(meta, "compile_seconds", (dict,), optional=True)
    if seconds is not None and not all(type(v) in (int, float) for v in seconds.values()):
        raise cache_file.BadEntry("bad compile times")
    spec.compile_seconds = seconds
    spec.constants = constants or None
    aliases = _field(meta, "aliases", (list,), optional=True)
    if aliases is not None:
        if not all(type(a) is list and len(a) == 2 for a in aliases):
            raise cache_file.BadEntry("bad aliases")
        spec.aliases = {_int(o, 0, n_outs - 1, "an aliased output"):
                        _int(p, 0, n_params - 1, "an aliased parameter") for o, p in aliases}
    launch = _field(meta, "launch", (dict,), optional=True)
    if launch is not None:
        spec.launch = _launch(launch, n_params, n_outs, arena)
    colls = _field(meta, "collectives", (list,), optional=True)
    if colls is not None:
        if not all(type(d) is dict and type(d.get("opcode")) is str
                   and type(d.get("name")) is str for d in colls):
            raise cache_file.BadEntry("bad collective descriptors")
        spec.collectives = colls
    return spec


def _launch(d: dict, n_params: int, n_outs: int, arena: int) -> Launch:
    sources = _field(d, "sources", (list,))
    if len(sources) > MAX_POINTERS or not all(type(s) is list and len(s) == 2
                                               for s in sources):
        raise cache_file.BadEntry("bad launch pointers")
    limit = {PARAM: n_params - 1, OUT: n_outs - 1, ARENA: arena}
    checked = []
    for kind, v in sources:
        if kind not in limit or type(kind) is not int:
            raise cache_file.BadEntry("bad launch pointer kind")
        checked.append((kind, _int(v, 0, limit[kind], "a launch pointer")))
    return Launch(_field(d, "wrapper", (str,)), _int(d.get("n"), 0, 1 << 62, "launch n"),
                  _int(d.get("chunk"), 1, 1 << 62, "launch chunk"),
                  _field(d, "flush_denormals", (bool,)), tuple(checked))
