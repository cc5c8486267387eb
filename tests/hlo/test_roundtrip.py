"""print(parse(text)) parses back to an equal module, for every file in the corpus."""

import pathlib

import pytest

from xlapy.hlo import module_diff, parse

FILES = sorted(pathlib.Path(__file__).parent.glob("*.hlo"))


def test_corpus_is_present():
    assert len(FILES) >= 40, f"expected the JAX corpus in tests/hlo, found {len(FILES)} files"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_roundtrip(path):
    text = path.read_text()
    module = parse(text, str(path))
    printed = module.to_string()
    again = parse(printed, "<printed>")
    diff = module_diff(module, again)
    assert diff is None, diff
    assert again.to_string() == printed  # printing is a fixed point after one round


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_clone_is_an_equal_independent_copy(path):
    module = parse(path.read_text(), str(path))
    printed = module.to_string()
    copy = module.clone()
    assert module_diff(module, copy) is None and copy.to_string() == printed
    # the copy shares no instruction or computation with the original
    orig = {id(i) for c in module.computations for i in c.instructions}
    assert not orig & {id(i) for c in copy.computations for i in c.instructions}
    assert not {id(c) for c in module.computations} & {id(c) for c in copy.computations}
    for c in copy.computations:
        assert c.module is copy
        for i in c.instructions:
            assert i.parent is c and all(o.parent is c for o in i.operands)
            assert all(i in o.users for o in i.operands)
            for callee in i.called_computations():
                assert callee.module is copy
    # editing the copy leaves the original alone
    root = copy.entry.root
    copy.entry.root = root.operands[0] if root.operands else root
    assert module.to_string() == printed
