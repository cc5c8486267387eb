"""The runtime's own objects (codegen.cached_object) are cached with the installation
(options.runtime_cache_dirs), apart from the programs: an emptied program cache does not
build them again, and a read-only installation falls back to the program cache."""

import warnings

from xlapy.backends.cpu import cache_file, codegen
from xlapy.errors import XlapyWarning

IR = """
define i64 @xlapy_test_runtime_answer() {
  ret i64 42
}
"""


def _builds():
    calls = []

    def build():
        calls.append(1)
        return IR
    return build, calls


def _setup(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAPY_RUNTIME_CACHE_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("XLAPY_CACHE_DIR", str(tmp_path / "programs"))
    monkeypatch.delenv("XLAPY_DISABLE_CACHE", raising=False)
    return tmp_path / "runtime", tmp_path / "programs"


def _entries(d):
    return sorted(d.glob("runtime-*.xlapy")) if d.is_dir() else []


def test_built_once_into_the_installation_and_kept_when_the_program_cache_empties(
        tmp_path, monkeypatch):
    runtime, programs = _setup(tmp_path, monkeypatch)
    build, calls = _builds()
    obj = codegen.cached_object(build, "test-answer", pipeline="direct")
    assert calls == [1] and obj
    (entry,) = _entries(runtime)
    assert _entries(programs) == []
    monkeypatch.setenv("XLAPY_CACHE_DIR", str(tmp_path / "new-programs"))
    assert codegen.cached_object(build, "test-answer", pipeline="direct") == obj
    assert calls == [1]  # served from the installation's cache, IR not even built
    meta, blobs = cache_file.read(entry, "cpu-runtime-object", entry.stem[len("runtime-"):])
    assert meta == {"name": "test-answer"} and blobs == [obj]


def test_read_only_installation_uses_the_program_cache(tmp_path, monkeypatch):
    runtime, programs = _setup(tmp_path, monkeypatch)
    runtime.write_text("a file where the directory would be")
    build, calls = _builds()
    obj = codegen.cached_object(build, "test-answer", pipeline="direct")
    (entry,) = _entries(programs)
    assert codegen.cached_object(build, "test-answer", pipeline="direct") == obj
    assert calls == [1]


def test_damaged_entry_is_discarded_with_a_warning_and_rebuilt(tmp_path, monkeypatch):
    runtime, _ = _setup(tmp_path, monkeypatch)
    build, calls = _builds()
    obj = codegen.cached_object(build, "test-answer", pipeline="direct")
    (entry,) = _entries(runtime)
    data = bytearray(entry.read_bytes())
    data[-1] ^= 0xFF
    entry.write_bytes(bytes(data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert codegen.cached_object(build, "test-answer", pipeline="direct") == obj
    assert calls == [1, 1]
    assert any(w.category is XlapyWarning and "discarded" in str(w.message) for w in caught)
    assert codegen.cached_object(build, "test-answer", pipeline="direct") == obj  # rewritten
    assert calls == [1, 1]


def test_disabled_cache_builds_every_time(tmp_path, monkeypatch):
    runtime, programs = _setup(tmp_path, monkeypatch)
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    build, calls = _builds()
    codegen.cached_object(build, "test-answer", pipeline="direct")
    codegen.cached_object(build, "test-answer", pipeline="direct")
    assert calls == [1, 1] and not runtime.exists() and not programs.exists()
