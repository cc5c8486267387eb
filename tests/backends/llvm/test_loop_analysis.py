"""loop_analysis.needs_vectorizer: which emitted functions still have a loop LLVM's loop
vectorizer could vectorize (those parts get -O3; the rest the short "direct" pipeline)."""

from llvmlite import ir

from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loop_analysis import natural_loops, needs_vectorizer
from xlapy.backends.llvm.loops import NOT_VECTORIZED, for_range

F32 = ir.FloatType()
V16 = ir.VectorType(F32, 16)


def _function(module, name="f", attrs=()):
    fn = ir.Function(module, ir.FunctionType(T.VOID, [T.PTR, T.PTR]), name)
    for a in attrs:
        fn.attributes.add(a)
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def _scalar_copy(b, fn, i, ty=F32):
    src = b.gep(fn.args[0], [i], source_etype=ty)
    b.store(b.fadd(b.load(src, typ=ty), b.load(src, typ=ty)),
            b.gep(fn.args[1], [i], source_etype=ty))


def test_scalar_innermost_loop_needs_it():
    m = ir.Module()
    fn, b = _function(m)
    with for_range(b, 0, 100) as i:
        _scalar_copy(b, fn, i)
    b.ret_void()
    assert len(natural_loops(fn)) == 1
    assert needs_vectorizer(fn)


def test_no_loop_vector_loop_and_marked_loop_do_not():
    m = ir.Module()
    fn, b = _function(m)
    b.ret_void()
    assert not needs_vectorizer(fn)
    fn, b = _function(m, "g")
    with for_range(b, 0, 100, step=16) as i:
        _scalar_copy(b, fn, i, V16)
    with for_range(b, 96, 100, hints=NOT_VECTORIZED) as i:  # the remainder
        _scalar_copy(b, fn, i)
    b.ret_void()
    assert len(natural_loops(fn)) == 2
    assert not needs_vectorizer(fn)


def test_only_innermost_loops_count():
    m = ir.Module()
    fn, b = _function(m)
    with for_range(b, 0, 10, name="o") as i:
        _scalar_copy(b, fn, i)             # scalar work in the outer loop is not vectorized
        with for_range(b, 0, 96, step=16, name="in") as j:
            _scalar_copy(b, fn, j, V16)
    b.ret_void()
    assert len(natural_loops(fn)) == 2
    assert not needs_vectorizer(fn)


def test_a_loop_calling_an_opaque_function_does_not():
    m = ir.Module()
    callee = ir.Function(m, ir.FunctionType(T.VOID, [T.I64]), "kernel")
    fn, b = _function(m)
    with for_range(b, 0, 10) as i:
        b.call(callee, [i])
    b.ret_void()
    assert not needs_vectorizer(fn)


def test_alwaysinline_helpers_count_as_the_callers_code():
    m = ir.Module()
    helper, hb = _function(m, "helper", ["alwaysinline"])
    with for_range(hb, 0, 100) as i:
        _scalar_copy(hb, helper, i)
    hb.ret_void()
    fn, b = _function(m)
    b.call(helper, list(fn.args))
    b.ret_void()
    assert needs_vectorizer(fn)
    # and a scalar helper called inside a loop keeps that loop vectorizable (LLVM inlines it)
    scalar, sb = _function(m, "scalar", ["alwaysinline"])
    sb.ret_void()
    g, b = _function(m, "g")
    with for_range(b, 0, 100):
        b.call(scalar, list(g.args))
    b.ret_void()
    assert needs_vectorizer(g)


def test_unrecognized_control_flow_counts_as_needing_it():
    m = ir.Module()
    fn, b = _function(m)
    target = fn.append_basic_block("t")
    br = b.branch_indirect(ir.BlockAddress(fn, target))
    br.add_destination(target)
    b.position_at_end(target)
    b.ret_void()
    assert needs_vectorizer(fn)
