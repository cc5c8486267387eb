"""loop_analysis.needs_vectorizer: which emitted functions still have a loop LLVM's loop
vectorizer could vectorize (those parts get -O3; the rest the short "direct" pipeline)."""

from llvmlite import ir

from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loop_analysis import natural_loops, needs_vectorizer
from xlapy.backends.llvm.loops import NOT_VECTORIZED, c64, for_range

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


def _column_sum(b, fn, i, op="fadd", ty=F32):
    """acc = 0; for r < 100: acc = acc op x[r * 10 + i] (an alloca'd accumulator, as the
    elemental reduce emits it); y[i] = acc."""
    acc = b.alloca(ty)
    b.store(ir.Constant(ty, 0.0), acc)
    with for_range(b, 0, 100, name="r") as r:
        x = b.load(b.gep(fn.args[0], [b.add(b.mul(r, c64(10)), i)], source_etype=ty), typ=ty)
        b.store(getattr(b, op)(b.load(acc, typ=ty), x), acc)
    b.store(b.load(acc, typ=ty), b.gep(fn.args[1], [i], source_etype=ty))


def test_an_ordered_float_sum_leaves_the_vectorizer_nothing_where_it_keeps_no_order():
    # x86's vectorizer rejects a loop with a float sum it may not reassociate; a target
    # that vectorizes ordered reductions (AArch64) could still vectorize the loop
    for op in ("fadd", "fmul", "fsub"):
        m = ir.Module()
        fn, b = _function(m)
        with for_range(b, 0, 10, name="c") as i:
            _column_sum(b, fn, i, op)
        b.ret_void()
        assert not needs_vectorizer(fn, ordered_fp_reductions=False)
        assert needs_vectorizer(fn, ordered_fp_reductions=True)
        assert needs_vectorizer(fn)  # (the conservative default)


def test_an_integer_sum_or_a_float_store_elsewhere_still_needs_it():
    m = ir.Module()
    fn, b = _function(m)
    with for_range(b, 0, 10, name="c") as i:
        _column_sum(b, fn, i, "add", T.I64)  # integer sums vectorize
    b.ret_void()
    assert needs_vectorizer(fn, ordered_fp_reductions=False)
    m = ir.Module()
    fn, b = _function(m)
    slot = b.alloca(F32)
    with for_range(b, 0, 100) as i:  # a float computed and stored, not accumulated
        src = b.gep(fn.args[0], [i], source_etype=F32)
        b.store(b.fadd(b.load(src, typ=F32), b.load(src, typ=F32)), slot)
        b.store(b.load(slot, typ=F32), b.gep(fn.args[1], [i], source_etype=F32))
    b.ret_void()
    assert needs_vectorizer(fn, ordered_fp_reductions=False)
