"""The disk cache's key hashes the sources of the code-generating packages only
(options.source_fingerprint): every xlapy module those packages import must be hashed too,
or a change to it could be served stale code."""

import ast
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
