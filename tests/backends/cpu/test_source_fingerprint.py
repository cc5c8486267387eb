"""The disk cache's key hashes the sources of the code-generating packages only
(options.source_fingerprint): every xlapy module those packages import must be hashed too,
or a change to it could be served stale code."""

import ast
import os
import pathlib

from xlapy.backends.cpu import options

ROOT = pathlib.Path(options.__file__).resolve().parents[2]


def _imported(path: pathlib.Path) -> set:
    """The xlapy modules a file imports (relative imports resolved)."""
    mod = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    package = mod if path.name == "__init__.py" else mod[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            out.add(name)
    return {n for n in out if n == "xlapy" or n.startswith("xlapy.")}


def _hashed(name: str) -> bool:
    parts = name.split(".")
    if len(parts) == 1:
        return False  # `import xlapy` runs the frontends' __init__
    if parts[1] in options.CODEGEN_PACKAGES:
        return True
    return len(parts) == 2 and (ROOT / f"{parts[1]}.py").is_file()   # a top-level module


def test_code_generating_packages_import_only_hashed_modules():
    unhashed = {}
    for pkg in options.CODEGEN_PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            bad = sorted(n for n in _imported(path) if not _hashed(n))
            if bad:
                unhashed[str(path.relative_to(ROOT))] = bad
    assert not unhashed, f"modules the cache key does not hash: {unhashed}"


def test_fingerprint_is_stable_within_a_process():
    first = options.source_fingerprint()
    assert len(first) == 16 and int(first, 16) >= 0
    options._SOURCE_HASH.clear()
    try:
        assert options.source_fingerprint() == first
    finally:
        options._SOURCE_HASH[:] = [first]


# ---- the stat-keyed memo of the contents' hash ----------------------------------------------

def _tree(tmp_path):
    root = tmp_path / "src"
    for rel, text in {"top.py": "a = 1\n", "hlo/ir.py": "b = 2\n",
                      "backends/cpu/x.py": "c = 3\n", "frontend/f.py": "d = 4\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _memos(cache):
    return sorted(cache.glob("sources-*")) if cache.exists() else []


def _caches(tmp_path, monkeypatch):
    """(runtime cache, program cache) directories, both in tmp_path."""
    monkeypatch.setenv("XLAPY_RUNTIME_CACHE_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("XLAPY_CACHE_DIR", str(tmp_path / "programs"))
    monkeypatch.delenv("XLAPY_DISABLE_CACHE", raising=False)
    return tmp_path / "runtime", tmp_path / "programs"


def test_memo_is_written_once_settled_and_then_read(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    cache, programs = _caches(tmp_path, monkeypatch)
    paths = options._source_paths(str(root))
    truth = options._hash_contents(str(root), paths)
    monkeypatch.setattr(options, "SETTLE_SECONDS", 3600.0)  # files changed "just now"
    assert options._memoized_source_hash(str(root)) == truth
    assert _memos(cache) == []  # racy: not memoized
    monkeypatch.setattr(options, "SETTLE_SECONDS", 0.0)
    assert options._memoized_source_hash(str(root)) == truth
    (memo,) = _memos(cache)
    assert memo.read_text() == truth
    memo.write_text("0123456789abcdef")  # the memo, not the sources, answers now
    assert options._memoized_source_hash(str(root)) == "0123456789abcdef"
    memo.write_text("not a hash")  # a damaged memo is ignored and rewritten
    assert options._memoized_source_hash(str(root)) == truth
    assert memo.read_text() == truth
    assert _memos(programs) == []  # the installation's directory took it


def test_memo_goes_to_the_program_cache_where_the_installation_is_read_only(
        tmp_path, monkeypatch):
    root = _tree(tmp_path)
    cache, programs = _caches(tmp_path, monkeypatch)
    cache.write_text("a file where the directory would be: nothing can be written there")
    monkeypatch.setattr(options, "SETTLE_SECONDS", 0.0)
    truth = options._memoized_source_hash(str(root))
    (memo,) = _memos(programs)
    memo.write_text("fedcba9876543210")
    assert options._memoized_source_hash(str(root)) == "fedcba9876543210"
    assert truth == options._hash_contents(str(root), options._source_paths(str(root)))


def test_an_edit_that_keeps_size_and_mtime_changes_the_fingerprint(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    cache, _ = _caches(tmp_path, monkeypatch)
    monkeypatch.setattr(options, "SETTLE_SECONDS", 0.0)
    first = options._memoized_source_hash(str(root))
    assert len(_memos(cache)) == 1
    path = root / "backends" / "cpu" / "x.py"
    st = path.stat()
    path.write_text("c = 4\n")  # same size; mtime set back as `touch -d` or rsync -t would
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    second = options._memoized_source_hash(str(root))
    assert second != first
    assert second == options._hash_contents(str(root), options._source_paths(str(root)))
    # files outside the code-generating packages are not part of it
    (root / "frontend" / "f.py").write_text("d = 5\n")
    assert options._memoized_source_hash(str(root)) == second


def test_without_a_cache_directory_the_contents_are_hashed(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    cache, programs = _caches(tmp_path, monkeypatch)
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    monkeypatch.setattr(options, "SETTLE_SECONDS", 0.0)
    assert options.runtime_cache_dirs() == []
    assert options._memoized_source_hash(str(root)) == options._hash_contents(
        str(root), options._source_paths(str(root)))
    assert not cache.exists() and not programs.exists()


def test_runtime_cache_defaults_to_the_installation(monkeypatch):
    monkeypatch.delenv("XLAPY_RUNTIME_CACHE_DIR", raising=False)
    monkeypatch.delenv("XLAPY_DISABLE_CACHE", raising=False)
    own, programs = options.runtime_cache_dirs()
    assert own == pathlib.Path(options.__file__).resolve().parent / "__pycache__"
    assert programs == options.cache_dir()


def test_source_paths_list_the_sources_as_os_walk_does(tmp_path):
    """The scandir walk lists the .py files in os.walk's top-down sorted order (so the
    fingerprint of an unchanged tree is unchanged), without entering __pycache__ (no
    sources there) nor a symbolic link to a directory (os.walk does not follow them)."""
    root = tmp_path / "pkgroot"
    for rel in ("top.py", "z.txt", "hlo/b.py", "hlo/a.py", "hlo/sub/c.py", "hlo/sub/d.txt",
                "hlo/a_dir/e.py", "passes/x.py", "backends/cpu/k.py", "backends/llvm/l.py",
                "backends/cpu/__pycache__/k.cpython-311.pyc", "frontend/skip.py"):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("# source\n")
    (root / "hlo" / "dir.py").mkdir()             # a directory with a source's name
    os.symlink(root / "passes", root / "hlo" / "linked")  # not followed
    walked = [os.path.join(str(root), f) for f in sorted(os.listdir(root)) if f.endswith(".py")]
    for pkg in options.CODEGEN_PACKAGES:
        for dirpath, dirnames, files in os.walk(root / pkg):
            dirnames.sort()
            walked.extend(os.path.join(dirpath, f) for f in sorted(files) if f.endswith(".py"))
    got = options._source_paths(str(root))
    assert got == walked
    assert [os.path.relpath(p, root) for p in got] == [
        "top.py", "hlo/a.py", "hlo/b.py", "hlo/a_dir/e.py", "hlo/sub/c.py", "passes/x.py",
        "backends/cpu/k.py", "backends/llvm/l.py"]
