"""The vectorizable math library: accuracy sweeps, exact special values, vectorization.

Every function runs inside an O3-optimized, vectorized loop kernel (math_testing.MathJIT) and
is compared with a long double reference: max error <= 4 ulp (float32 and float64), special
values bit-exact (signed zeros included), and the optimized loop is SIMD code without calls.
benchmarks/math_accuracy.py runs the same sweeps with more points for docs/math_accuracy.md.
"""
import re

import numpy as np
import pytest
from llvmlite import binding as llvm
from llvmlite import ir

from xlapy.backends.llvm.math import FUNCTIONS, math_function
from xlapy.backends.llvm.math_testing import (MathJIT, check_special_cases, float_range,
                                              host_target_machine, reference, sweep_inputs,
                                              sweep_inputs_binary, ulp_error)

UNARY = sorted(n for n, (_, arity) in FUNCTIONS.items() if arity == 1)
BINARY = sorted(n for n, (_, arity) in FUNCTIONS.items() if arity == 2)
TYPES = ('f32', 'f64')
MAX_ULP = 4.0
N = 40000           # points per sweep part (~6-10 parts per function)



@pytest.fixture(scope='module')
def jit():
    return MathJIT([(n, s) for n in FUNCTIONS for s in TYPES])


# ------------------------------------------------------------------------------ interface

def test_math_function_interface():
    mod = ir.Module()
    f = math_function(mod, 'exp', ir.FloatType())
    assert f is math_function(mod, 'exp', ir.FloatType())
    assert f.name == 'xlapy.exp.f32' and f.linkage == 'internal'
    assert 'alwaysinline' in f.attributes and 'nounwind' in f.attributes
    g = math_function(mod, 'pow', ir.DoubleType())
    assert g.name == 'xlapy.pow.f64' and len(g.args) == 2
    assert isinstance(g.function_type.return_type, ir.DoubleType)
    with pytest.raises(KeyError, match='unknown function'):
        math_function(mod, 'gamma', ir.FloatType())
    with pytest.raises(TypeError, match='not float or double'):
        math_function(mod, 'exp', ir.IntType(32))
    llvm.parse_assembly(str(mod)).verify()


# ------------------------------------------------------------------------------ accuracy

@pytest.mark.parametrize('sfx', TYPES)
@pytest.mark.parametrize('name', UNARY)
def test_accuracy_unary(jit, name, sfx):
    x, _ = sweep_inputs(name, sfx, N)
    err = ulp_error(jit(name, sfx, x), reference(name, x), sfx)
    i = int(np.argmax(err))
    assert err[i] <= MAX_ULP, f'{name}.{sfx}({x[i]!r}): {err[i]:.2f} ulp'


@pytest.mark.parametrize('sfx', TYPES)
@pytest.mark.parametrize('name', BINARY)
def test_accuracy_binary(jit, name, sfx):
    (a, b), _ = sweep_inputs_binary(name, sfx, N)
    err = ulp_error(jit(name, sfx, a, b), reference(name, a, b), sfx)
    i = int(np.argmax(err))
    assert err[i] <= MAX_ULP, f'{name}.{sfx}({a[i]!r}, {b[i]!r}): {err[i]:.2f} ulp'


# ------------------------------------------------------------------------------ special values

@pytest.mark.parametrize('sfx', TYPES)
@pytest.mark.parametrize('name', sorted(FUNCTIONS))
def test_special_values(jit, name, sfx):
    """+-0 (signs kept by odd functions), +-inf, NaN, subnormals, overflow/underflow thresholds;
    pow and atan2 through every C99 special case (math_testing.special_cases)."""
    bad = check_special_cases(jit, name, sfx)
    assert not bad, '; '.join(bad)


def test_exp_f32_thresholds_exhaustive(jit):
    """Every float from the last finite exp to overflow, and the whole subnormal-result range."""
    x = np.concatenate([float_range(88.72, 88.73, 'f32', 10 ** 6),
                        float_range(-104.0, -87.0, 'f32', 10 ** 6)])
    res = jit('exp', 'f32', x)
    ref = reference('exp', x)
    err = ulp_error(res, ref, 'f32')
    assert err.max() <= 1.0
    with np.errstate(over='ignore'):
        assert np.array_equal(np.isinf(res), np.isinf(ref.astype(np.float32)))
    assert res[x == np.float32(88.72283)][0] < np.inf and np.isinf(res[x == np.float32(88.7229)][0])


def test_sin_worst_case_reduction(jit):
    """The hardest double argument reduction (|x mod pi/2| ~ 2^-61) and sin(1e22)."""
    x = np.array([np.ldexp(6381956970095103.0, 797), 1e22, 1.7976931348623157e308])
    for name in ('sin', 'cos', 'tan'):
        err = ulp_error(jit(name, 'f64', x), reference(name, x), 'f64')
        assert err.max() <= 1.0, (name, err)
    assert jit('sin', 'f64', np.array([1e22]))[0] == -0.8522008497671888


# ------------------------------------------------------------------------------ vectorization

@pytest.mark.parametrize('sfx', TYPES)
@pytest.mark.parametrize('name', sorted(FUNCTIONS))
def test_vectorized_without_calls(jit, name, sfx):
    body = jit.kernel_ir(name, sfx)
    elt = 'float' if sfx == 'f32' else 'double'
    widths = {int(w) for w in re.findall(rf'<(\d+) x {elt}>', body)}
    assert widths and max(widths) >= 4, f'{name}.{sfx} kernel is not vectorized'
    callees = set(re.findall(r'\bcall\b[^@]*@"?([\w.]+)', body))
    assert all(c.startswith('llvm.') for c in callees), f'{name}.{sfx} calls {callees}'
    assert not re.search(r'@"?(exp|log|sin|cos|tan|pow|atan2|erf|cbrt|expm1|log1p|tanh)f?\b', body)


def test_machine_code_has_no_calls(jit):
    """The intrinsics used (rint, floor, fma, ...) lower to instructions, not to libm calls."""
    asm = host_target_machine().emit_assembly(llvm.parse_assembly(jit.optimized_ir))
    calls = re.findall(r'^\s*(?:call|jmp)q?\s+\*?([A-Za-z_][\w.@]*)', asm, re.M)
    assert not [c for c in calls if not c.startswith('.L')], calls


def test_nvptx_code_has_no_calls():
    """The same IR compiles for NVPTX (the later GPU backend) without any call."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    try:
        target = llvm.Target.from_triple('nvptx64-nvidia-cuda')
    except RuntimeError:
        pytest.skip('llvmlite built without the NVPTX target')
    tm = target.create_target_machine(cpu='sm_80', opt=3)
    mod = ir.Module()
    mod.triple, mod.data_layout = 'nvptx64-nvidia-cuda', str(tm.target_data)
    for name, (_, arity) in FUNCTIONS.items():
        for ty in (ir.FloatType(), ir.DoubleType()):
            fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ir.PointerType()] * (arity + 1)),
                             f'k_{name}_{ty}')
            b = ir.IRBuilder(fn.append_basic_block())
            args = [b.load(fn.args[i], typ=ty) for i in range(arity)]
            b.store(b.call(math_function(mod, name, ty), args), fn.args[arity])
            b.ret_void()
    llmod = llvm.parse_assembly(str(mod))
    llmod.verify()
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=3))
    pb.getModulePassManager().run(llmod, pb)
    ptx = tm.emit_assembly(llmod)
    assert '.entry' in ptx or '.func' in ptx
    assert not re.search(r'\bcall(\.uni)?\b', ptx)
