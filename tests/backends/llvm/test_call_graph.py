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


def test_a_caller_inlines_callees_up_to_the_budget(monkeypatch):
    """Past INLINE_BUDGET instructions of callees, the rest of a caller's single-call
    callees are marked noinline (so -O3's inliner leaves them too); its first is always
    inlined, whatever its size, and each caller has a budget of its own."""
    from xlapy.backends.llvm import call_graph
    monkeypatch.setattr(call_graph, "INLINE_BUDGET", 2)
    m = ir.Module()
    big, b = _fn(m, "big")                   # 3 instructions: over the budget alone
    for _ in range(2):
        b.call(_leaf(m, f"in_big{_}"), [big.args[0]])
    b.ret_void()
    leaves = [_leaf(m, f"k{i}") for i in range(3)]  # 1 instruction each
    entry, b = _fn(m, "entry", "external")
    b.call(big, [entry.args[0]])
    for f in leaves:
        b.call(f, [entry.args[0]])
    b.ret_void()
    other, b = _fn(m, "other", "external")
    b.call(_leaf(m, "other_leaf"), [other.args[0]])
    b.ret_void()
    assert inline_single_calls(m) == ["big", "in_big0", "in_big1", "other_leaf"]
    assert all("noinline" in f.attributes for f in leaves)
    assert inline_single_calls(m) == []      # marked once: nothing changes on a second walk


def test_kept_callers_budget_their_callees_too(monkeypatch):
    """An entry kept apart (a module that may be split) inlines nothing itself, but past the
    budget its callees are still marked noinline: -O3 would inline them into it where
    they share a part."""
    from xlapy.backends.llvm import call_graph
    monkeypatch.setattr(call_graph, "INLINE_BUDGET", 1)
    m = ir.Module()
    leaves = [_leaf(m, f"k{i}") for i in range(3)]
    entry, b = _fn(m, "entry", "external")
    for f in leaves:
        b.call(f, [entry.args[0]])
    b.ret_void()
    assert inline_single_calls(m, ("entry",)) == []
    assert ["noinline" in f.attributes for f in leaves] == [False, True, True]
