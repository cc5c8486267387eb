"""The vector forms of the math functions (math.VECTOR_FUNCTIONS: one call on 16 or 8 lanes,
used by vectorized reductions, elemental_vector.py) are the scalar functions lane for lane:
bitwise equal on sweeps and special values, for f32 and f64."""
import ctypes

import numpy as np
import pytest
from llvmlite import binding as llvm
from llvmlite import ir

from xlapy.backends.llvm.math import FUNCTIONS, VECTOR_FUNCTIONS, math_function
from xlapy.backends.llvm.math_testing import (MathJIT, host_target_machine, optimize,
                                              special_cases, sweep_inputs)

LANES = {'f32': 16, 'f64': 8}
TY = {'f32': (ir.FloatType(), np.float32), 'f64': (ir.DoubleType(), np.float64)}


@pytest.fixture(scope='module')
def jits():
    funcs = [(n, s) for n in sorted(VECTOR_FUNCTIONS) for s in TY]
    scalar = MathJIT(funcs)
    mod = ir.Module(name='vector_math')
    i64 = ir.IntType(64)
    for name, sfx in funcs:
        ety, _ = TY[sfx]
        vty = ir.VectorType(ety, LANES[sfx])
        fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ir.PointerType()] * 2 + [i64]),
                         f'v.{name}.{sfx}')
        mf = math_function(mod, name, vty)
        entry, loop, done = (fn.append_basic_block(n) for n in ('entry', 'loop', 'done'))
        b = ir.IRBuilder(entry)
        n = fn.args[2]
        b.cbranch(b.icmp_signed('>', n, ir.Constant(i64, 0)), loop, done)
        b.position_at_end(loop)
        i = b.phi(i64)
        i.add_incoming(ir.Constant(i64, 0), entry)
        off = b.mul(i, ir.Constant(i64, vty.count))
        x = b.load(b.gep(fn.args[0], [off], source_etype=ety), typ=vty, align=4)
        b.store(b.call(mf, [x]), b.gep(fn.args[1], [off], source_etype=ety), align=4)
        i1 = b.add(i, ir.Constant(i64, 1))
        i.add_incoming(i1, loop)
        b.cbranch(b.icmp_signed('<', i1, n), loop, done)
        b.position_at_end(done)
        b.ret_void()
    tm = host_target_machine()
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    llmod = llvm.parse_assembly(str(mod))
    llmod.verify()
    optimize(llmod, tm)
    engine = llvm.create_mcjit_compiler(llmod, tm)
    engine.finalize_object()
    vector = {}
    for name, sfx in funcs:
        proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
        vector[name, sfx] = proto(engine.get_function_address(f'v.{name}.{sfx}'))
    return scalar, vector, engine


def _bits(a):
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


@pytest.mark.parametrize('sfx', sorted(TY))
@pytest.mark.parametrize('name', sorted(VECTOR_FUNCTIONS))
def test_vector_form_is_the_scalar_function_lane_for_lane(jits, name, sfx):
    scalar, vector, _ = jits
    dt = TY[sfx][1]
    parts = [np.asarray(p, dt).ravel() for p in sweep_inputs(name, sfx, 3000)[0]]
    with np.errstate(over='ignore'):
        specials = np.array([c[0][0] for c in special_cases(name, sfx)], dt)
    x = np.concatenate(parts + [specials, np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0,
                                                    -0.0], dt)])
    lanes = LANES[sfx]
    x = np.concatenate([x, np.zeros((-len(x)) % lanes, dt)])
    want = scalar(name, sfx, x)
    got = np.empty_like(x)
    vector[name, sfx](x.ctypes.data, got.ctypes.data, len(x) // lanes)
    diff = np.flatnonzero(_bits(got) != _bits(want))
    assert diff.size == 0, (f'{name}.{sfx}: {diff.size} lanes differ, e.g. x={x[diff[:3]]} '
                            f'vector={got[diff[:3]]} scalar={want[diff[:3]]}')


def test_functions_without_a_vector_form_say_so():
    mod = ir.Module()
    other = sorted(set(n for n, (_, a) in FUNCTIONS.items() if a == 1) - VECTOR_FUNCTIONS)
    with pytest.raises(KeyError, match='no vector form'):
        math_function(mod, other[0], ir.VectorType(ir.FloatType(), 16))
