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
