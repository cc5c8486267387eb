"""A disk cache that cannot hurt: every damaged, foreign or crafted entry is discarded with an
XlapyWarning and the module compiled again (the right result, a good entry written in its
place); nothing in an entry is executed when it is read; every flag that changes the code
is in the key."""

import hashlib
import json
import os
import pickle
import warnings

import numpy as np
import pytest

from xlapy.backends.cpu import cache_file
from xlapy.backends.cpu.compiler import CpuCompiler
from xlapy.errors import XlapyWarning
from xlapy.flags import parse_flags
from xlapy.hlo import parse

TEXT = ("HloModule cached{n}\nENTRY e {{\n  p = f32[32] parameter(0)\n"
        "  c = f32[] constant({n})\n  b = f32[32] broadcast(c), dimensions={{}}\n"
        "  m = f32[32] multiply(p, b)\n  ROOT r = f32[32] add(m, p)\n}}\n")
X = np.arange(32, dtype=np.float32)


def _want(n):
    return X * np.float32(n) + X


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAPY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("XLAPY_DISABLE_CACHE", raising=False)
    monkeypatch.delenv("XLAPY_FLAGS", raising=False)
    return tmp_path


def _compile(n=3):
    """A fresh compiler (no memory cache): (result, stats, XlapyWarnings raised)."""
    c = CpuCompiler()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = c.compile(parse(TEXT.format(n=n))).run(X)
    return out, c.stats, [str(w.message) for w in caught if w.category is XlapyWarning]


def _entry(cache, n=3):
    """Compile module n into the cache; the path of its entry."""
    before = set(cache.glob("*.xlapy"))
    out, stats, warned = _compile(n)
    np.testing.assert_array_equal(out, _want(n))
    assert stats["compiles"] == 1 and not warned
    (path,) = [p for p in set(cache.glob("*.xlapy")) - before
               if not p.name.startswith("runtime-")]
    return path


def _recompiles_with_warning(path, n=3, why=""):
    out, stats, warned = _compile(n)
    np.testing.assert_array_equal(out, _want(n))
    assert stats["compiles"] == 1 and stats["disk_hits"] == 0
    assert len(warned) == 1 and f"discarded {path}" in warned[0], warned
    assert why in warned[0], warned
    # the entry written in its place serves the next process as it should
    out, stats, warned = _compile(n)
    np.testing.assert_array_equal(out, _want(n))
    assert stats["disk_hits"] == 1 and stats["compiles"] == 0 and not warned


def _rewrite(path, edit_meta=None, edit_header=None, blobs=None):
    """Re-store an entry with its metadata edited and a valid hash: a crafted entry."""
    data = path.read_bytes()
    (meta, old_blobs) = cache_file.parse(data, "cpu-program", path.stem)
    if edit_meta:
        edit_meta(meta)
    blobs = old_blobs if blobs is None else blobs
    header = {"kind": "cpu-program", "key": path.stem, "blobs": [len(b) for b in blobs],
              "meta": meta}
    if edit_header:
        edit_header(header)
    body = json.dumps(header).encode() + b"\n" + b"".join(blobs)
    path.write_bytes(cache_file.MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n"
                     + body)


def test_a_good_entry_is_used(cache):
    _entry(cache)
    out, stats, warned = _compile()
    np.testing.assert_array_equal(out, _want(3))
    assert stats["disk_hits"] == 1 and stats["compiles"] == 0 and not warned


@pytest.mark.parametrize("damage, why", [
    (lambda d: os.urandom(len(d)), "not an xlapy cache entry"),
    (lambda d: b"", "not an xlapy cache entry"),
    (lambda d: d[:len(d) // 2], "does not match its hash"),
    (lambda d: d[:len(cache_file.MAGIC) + 10], "truncated before its hash"),
    (lambda d: d[:-1], "does not match its hash"),
    (lambda d: d + b"\0", "does not match its hash"),
    # object code overwritten in place (the end of the file): refused before it is loaded,
    # where running it would crash the process
    (lambda d: d[:-200] + b"\xcc" * 200, "does not match its hash"),
    (lambda d: d.replace(b"xlapy-cache 1", b"xlapy-cache 9", 1), "another version"),
])
def test_damaged_entries_are_recompiled(cache, damage, why):
    path = _entry(cache)
    path.write_bytes(damage(path.read_bytes()))
    _recompiles_with_warning(path, why=why)


def test_swapped_entries_are_recompiled(cache):
    a, b = _entry(cache, 3), _entry(cache, 5)
    data_a, data_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(data_b)
    b.write_bytes(data_a)
    _recompiles_with_warning(a, 3, "stored for another key")
    _recompiles_with_warning(b, 5, "stored for another key")


class _RunsACommand:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_pickle_that_would_run_a_command_is_never_unpickled(cache):
    path = _entry(cache)
    marker = cache / "pwned"
    path.write_bytes(pickle.dumps(_RunsACommand(marker)))  # the old format's file name
    _recompiles_with_warning(path, why="not an xlapy cache entry")
    assert not marker.exists()


@pytest.mark.parametrize("edit, why", [
    (lambda m: m.update(arena_size=-1), "the arena size out of range"),
    (lambda m: m.update(arena_size="0"), "the arena size out of range"),
    (lambda m: m.update(param_shapes=["f32[33]"]), "not those of module"),
    (lambda m: m.update(result_shape="s32[32]"), "not those of module"),
    (lambda m: m.update(param_shapes=["(" * 5000 + "f32[]" + ")" * 5000]), "not a shape"),
    (lambda m: m.update(entry_symbol=7), "'entry_symbol'"),
    (lambda m: m.pop("optimized_text"), "'optimized_text'"),
    (lambda m: m.update(aliases=[[0, 9]]), "an aliased parameter out of range"),
    (lambda m: m.update(launch={"wrapper": "w", "n": 1, "chunk": 1, "flush_denormals": True,
                                "sources": [[0, 99]]}), "a launch pointer out of range"),
])
def test_crafted_metadata_is_refused(cache, edit, why):
    path = _entry(cache)
    _rewrite(path, edit_meta=edit)
    _recompiles_with_warning(path, why=why)


def test_crafted_headers_are_refused(cache):
    path = _entry(cache)
    _rewrite(path, edit_header=lambda h: h.update(kind="cpu-runtime-object"))
    _recompiles_with_warning(path, why="of kind 'cpu-runtime-object'")
    _rewrite(path, edit_header=lambda h: h.update(blobs=[1 << 40]))
    _recompiles_with_warning(path, why="its size does not match its header")
    _rewrite(path, blobs=[b""])
    _recompiles_with_warning(path, why="no object code")


def test_an_unreadable_entry_only_costs_a_compile(cache):
    path = _entry(cache)
    path.unlink()
    path.mkdir()  # (reading it raises IsADirectoryError)
    out, stats, warned = _compile()
    np.testing.assert_array_equal(out, _want(3))
    assert stats["compiles"] == 1 and not warned


def test_every_flag_that_changes_code_is_in_the_key():
    c = CpuCompiler()
    m = parse(TEXT.format(n=2))

    def key(flag_text):
        return c.fingerprint(m, 2, 100_000, fl=parse_flags(flag_text))

    plain = key("")
    assert key("--xla_disable_hlo_passes=algsimp") != plain
    assert key("--xla_disable_hlo_passes=algsimp") != key("--xla_disable_hlo_passes=cse")
    assert key("--xla_cpu_parallel_codegen_split_count=3") != plain
    assert key("--xla_dump_hlo_as_text") == plain  # dumps change no code


def test_disabling_a_pass_with_a_warm_cache_compiles_again(cache, monkeypatch):
    _entry(cache)
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_disable_hlo_passes=algsimp")
    out, stats, warned = _compile()
    np.testing.assert_array_equal(out, _want(3))
    assert stats["compiles"] == 1 and stats["disk_hits"] == 0 and not warned
