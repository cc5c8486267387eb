"""The list of supported TF 1.x symbols in docs/compat_v1.md is generated
(xlapy/tools/compat_symbols.py): a symbol that disappears from xlapy.compat.v1 fails here,
and so does a new one the list does not have yet."""

from xlapy.tools import compat_symbols


def test_listed_symbols_still_exist_and_the_list_is_current():
    listed = compat_symbols.parse(compat_symbols.DOC.read_text(encoding="utf-8"))
    assert listed, f"no generated symbol list in {compat_symbols.DOC}"
    now = compat_symbols.supported()
    gone = [f"{ns}.{n}" for ns, names in listed.items() for n in names
            if n not in now.get(ns, [])]
    assert not gone, f"TF 1.x symbols that disappeared from xlapy.compat.v1: {gone}"
    new = [f"{ns}.{n}" for ns, names in now.items() for n in names
           if n not in listed.get(ns, [])]
    assert not new, (f"symbols missing from the list in docs/compat_v1.md: {new}; run "
                     ".venv/bin/python -m xlapy.tools.compat_symbols --write")


def test_parse_reads_what_render_writes():
    symbols = {"tf": ["Session", "add"], "tf.nn": ["relu"]}
    assert compat_symbols.parse(compat_symbols.render(symbols)) == symbols
    assert compat_symbols.parse("no list here") == {}
