"""call_graph.inline_single_calls: internal functions with exactly one call site and no other
reference are marked alwaysinline (one function less for LLVM's code generation)."""

from llvmlite import ir

from xlapy.backends.llvm.call_graph import inline_single_calls
from xlapy.backends.llvm.types import PTR, VOID


def _fn(m, name, linkage="internal"):
    f = ir.Function(m, ir.FunctionType(VOID, [PTR]), name)
    f.linkage = linkage
    return f, ir.IRBuilder(f.append_basic_block("entry"))


def _leaf(m, name, linkage="internal"):
    """A function that only returns."""
    f, b = _fn(m, name, linkage)
    b.ret_void()
    return f


def test_marks_only_single_call_internal_functions():
    m = ir.Module()
    once, twice = _leaf(m, "once"), _leaf(m, "twice")
    taken = _leaf(m, "taken")            # its address is passed on (a pool wrapper)
    rec, b = _fn(m, "rec")               # calls itself once
    b.call(rec, [rec.args[0]])
    b.ret_void()
    ext = _leaf(m, "ext", "external")
    sink = ir.Function(m, ir.FunctionType(VOID, [PTR]), "sink")   # a declaration
    entry, b = _fn(m, "entry", "external")
    for f in (once, twice, twice, ext):
        b.call(f, [entry.args[0]])
    b.call(sink, [taken])
    b.call(taken, [entry.args[0]])
    b.ret_void()
    assert inline_single_calls(m) == ["once"]
    assert "alwaysinline" in once.attributes
    assert not any("alwaysinline" in f.attributes for f in (twice, taken, rec, ext, entry))


def test_callers_kept_separate():
    m = ir.Module()
    kernel, inner = _leaf(m, "kernel"), _leaf(m, "inner")
    wrapper, b = _fn(m, "wrapper")
    b.call(inner, [wrapper.args[0]])
    b.ret_void()
    entry, b = _fn(m, "entry", "external")
    b.call(kernel, [entry.args[0]])
    b.call(wrapper, [entry.args[0]])
    b.ret_void()
    assert inline_single_calls(m, ("entry",)) == ["inner"]
