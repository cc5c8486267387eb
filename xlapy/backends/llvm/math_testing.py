"""Elementwise test kernels for the math library (used by its tests and
benchmarks/math_accuracy.py).

    jit = MathJIT([('exp', 'f32'), ('pow', 'f64')])
    out = jit('exp', 'f32', x)          # x: a contiguous numpy array of float32

Each kernel is `void k.<name>.<f32|f64>(T* noalias in0, [T* noalias in1,] T* noalias out, i64 n)`,
a plain loop calling the math function; the module is optimized at O3 for the host CPU with
the new pass manager (loop and SLP vectorization on) and compiled with MCJIT.
"""
import ctypes
import math
import re

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir

from .math import FUNCTIONS, math_function

_TYPES = {'f32': (ir.FloatType(), np.float32, ctypes.c_float),
          'f64': (ir.DoubleType(), np.float64, ctypes.c_double)}


def host_target_machine(opt=3):
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                        features=llvm.get_host_cpu_features().flatten(), opt=opt)


def kernel_name(name, sfx):
    return f'k.{name}.{sfx}'


def build_module(funcs):
    """An ir.Module with one elementwise loop kernel per (name, 'f32'|'f64')."""
    mod = ir.Module(name='xlapy_math_kernels')
    i64 = ir.IntType(64)
    ptr = ir.PointerType()
    for name, sfx in funcs:
        ty = _TYPES[sfx][0]
        arity = FUNCTIONS[name][1]
        fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ptr] * (arity + 1) + [i64]),
                         kernel_name(name, sfx))
        for a in fn.args[:-1]:
            a.add_attribute('noalias')
        mf = math_function(mod, name, ty)
        entry = fn.append_basic_block('entry')
        loop = fn.append_basic_block('loop')
        done = fn.append_basic_block('done')
        b = ir.IRBuilder(entry)
        n = fn.args[-1]
        b.cbranch(b.icmp_signed('>', n, ir.Constant(i64, 0)), loop, done)
        b.position_at_end(loop)
        i = b.phi(i64)
        i.add_incoming(ir.Constant(i64, 0), entry)
        xs = [b.load(b.gep(fn.args[k], [i], source_etype=ty), typ=ty) for k in range(arity)]
        b.store(b.call(mf, xs), b.gep(fn.args[arity], [i], source_etype=ty))
        i1 = b.add(i, ir.Constant(i64, 1))
        i.add_incoming(i1, loop)
        b.cbranch(b.icmp_signed('<', i1, n), loop, done)
        b.position_at_end(done)
        b.ret_void()
    return mod


def optimize(llmod, tm):
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(llmod, pb)


class MathJIT:
    def __init__(self, funcs, prefer_vector_width=None):
        self.funcs = list(funcs)
        tm = host_target_machine()
        mod = build_module(self.funcs)
        mod.triple = tm.triple
        mod.data_layout = str(tm.target_data)
        text = str(mod)
        if prefer_vector_width:
            # benchmarks: e.g. 512 asks for full-width vectors on AVX-512 hosts (LLVM prefers 256)
            text = re.sub(r'(define void @"k\.[^\n]*\))',
                          rf'\1 "prefer-vector-width"="{prefer_vector_width}"', text)
        self.unoptimized_ir = text
        llmod = llvm.parse_assembly(text)
        llmod.verify()
        optimize(llmod, tm)
        self.optimized_ir = str(llmod)
        self.engine = llvm.create_mcjit_compiler(llmod, tm)
        self.engine.finalize_object()
        self._fns = {}
        for name, sfx in self.funcs:
            arity = FUNCTIONS[name][1]
            addr = self.engine.get_function_address(kernel_name(name, sfx))
            proto = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * (arity + 1)), ctypes.c_int64)
            self._fns[name, sfx] = proto(addr)

    def kernel_ir(self, name, sfx):
        """The optimized IR text of one kernel's definition."""
        text = self.optimized_ir
        kn = re.escape(kernel_name(name, sfx))
        start = re.search(rf'^define [^\n]*@"?{kn}"?\(', text, re.M).start()
        return text[start:text.index('\n}\n', start) + 3]

    def __call__(self, name, sfx, *args, out=None):
        dt = _TYPES[sfx][1]
        arrs = [np.ascontiguousarray(a, dtype=dt) for a in args]
        shape = np.broadcast_shapes(*[a.shape for a in arrs])
        arrs = [np.ascontiguousarray(np.broadcast_to(a, shape)) for a in arrs]
        if out is None:
            out = np.empty(shape, dt)
        elif out.shape != shape or out.dtype != dt or not out.flags.c_contiguous:
            raise ValueError('out must be a C-contiguous array of the broadcast shape and type')
        self._fns[name, sfx](*[a.ctypes.data for a in arrs], out.ctypes.data, out.size)
        return out


# ------------------------------------------------------------------------------ references

L = np.longdouble


def _erf_ref(x):
    """erf in long double: 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1)/(2n+1)!! (positive terms)."""
    x = np.asarray(x, L)
    ax = np.minimum(np.abs(x), L(7))
    term = ax.copy()
    total = ax.copy()
    x2 = ax * ax
    for n in range(220):          # terms decay from n ~ x^2 = 49 on
        term = term * (2 * x2) / (2 * n + 3)
        total = total + term
    two_sqrtpi = L(2) / np.sqrt(np.arccos(L(-1)))
    r = two_sqrtpi * np.exp(-x2) * total
    r = np.where(np.abs(x) >= 7, L(1), r)
    r = np.where(np.isnan(x), x, np.copysign(r, x))
    return r


def reference(name, *args):
    """The function in long double (x87 80-bit, ~2^-64) on long double inputs."""
    args = [np.asarray(a).astype(L) for a in args]
    with np.errstate(all='ignore'):
        if name == 'logistic':
            return 1 / (1 + np.exp(-args[0]))
        if name == 'erf':
            return _erf_ref(args[0])
        if name == 'rsqrt':
            return 1 / np.sqrt(args[0])
        f = {'pow': np.power, 'atan2': np.arctan2}.get(name) or getattr(np, name)
        return f(*args)


def ulp_error(res, ref, sfx):
    """|res - ref| in units of the last place of ref in the result type (0 where res is the
    correctly rounded ref, including inf and nan; inf where res is inf/nan and ref is not)."""
    tgt, p, emin = (np.float32, 24, -149) if sfx == 'f32' else (np.float64, 53, -1074)
    ref = np.asarray(ref, L)
    with np.errstate(all='ignore'):
        refr = ref.astype(tgt)
        _, e = np.frexp(np.where(np.isfinite(ref), np.abs(ref), L(1)))
        u = np.ldexp(np.ones(ref.shape, L), np.maximum(e.astype(np.int64) - p, emin))
        err = np.abs(res.astype(L) - ref) / u
    same = (res == refr) | (np.isnan(res) & np.isnan(refr))
    err = np.where(same, 0.0, err)
    return np.where(np.isnan(err), np.inf, err).astype(np.float64)


def float_range(lo, hi, sfx, max_count):
    """Consecutive floats of type sfx in [lo, hi] (every k-th one to stay under max_count)."""
    dt, it = (np.float32, np.int32) if sfx == 'f32' else (np.float64, np.int64)

    def key(v):   # monotonic integer key of a float
        i = np.array(v, dt).view(it).astype(np.int64)
        return np.where(i < 0, -(i & np.int64(np.iinfo(it).max)), i)

    a, b = int(key(lo)), int(key(hi))
    step = max(1, (b - a) // max_count)
    ks = np.arange(a, b + 1, step, dtype=np.int64)
    bits = np.where(ks < 0, (-ks) | np.int64(np.iinfo(it).min), ks).astype(it)
    return bits.view(dt)


def sweep_inputs(name, sfx, n, seed=0):
    """Inputs for the accuracy sweep of a unary function: (array, description)."""
    rng = np.random.default_rng(seed)
    dt = np.float32 if sfx == 'f32' else np.float64
    fi = np.finfo(dt)
    tiny = float(fi.smallest_subnormal)
    lg = np.exp(rng.uniform(np.log(tiny), np.log(float(fi.max)), n)).astype(dt)
    parts = [lg, -lg]
    desc = [f'{2 * n} log-uniform over +-[{tiny:.3g}, {float(fi.max):.3g}]']
    f32 = sfx == 'f32'
    dense = {
        'exp': (-104, 89) if f32 else (-746, 710), 'expm1': (-20, 89) if f32 else (-40, 710),
        'log': (0, 100), 'log1p': (-1, 100), 'tanh': (-10, 10) if f32 else (-20, 20),
        'logistic': (-110, 110) if f32 else (-750, 750), 'erf': (-6, 6),
        'sin': (-100, 100), 'cos': (-100, 100), 'tan': (-100, 100), 'cbrt': (-100, 100),
        'sqrt': (0, 100), 'rsqrt': (0, 100),
    }[name]
    parts.append(np.linspace(dense[0], dense[1], 2 * n).astype(dt))
    parts.append(np.linspace(-1, 1, n).astype(dt))
    desc.append(f'{2 * n} uniform over [{dense[0]}, {dense[1]}], {n} uniform over [-1, 1]')
    edges = []
    if name in ('exp', 'logistic', 'expm1'):
        edges = ([(88.6, 88.8), (-87.6, -87.2), (-104.0, -102.5)] if f32 else
                 [(709.7, 709.8), (-708.5, -708.3), (-745.2, -744.9)])
        if name == 'logistic':
            edges = [(-e[1], -e[0]) for e in edges] + edges
    if name in ('sin', 'cos', 'tan'):
        # floats nearest to multiples of pi/2: the hard cases of argument reduction
        k = rng.integers(1, 2 ** 22 if f32 else 2 ** 50, n).astype(np.float64)
        near = (k * (np.pi / 2)).astype(dt)
        parts += [near, np.nextafter(near, dt(np.inf)), -near]
        desc.append(f'{3 * n} floats nearest to k*pi/2')
        if not f32:   # the worst case of double argument reduction (Kahan-McDonald)
            parts.append(np.array([np.ldexp(6381956970095103.0, 797)], dt))
        else:
            parts.append(np.array([np.ldexp(16367173.0, 72)], dt))
    for lo, hi in edges:
        parts.append(float_range(lo, hi, sfx, n // 4))
    if edges:
        desc.append('consecutive floats around ' + ', '.join(f'[{lo}, {hi}]' for lo, hi in edges))
    return np.concatenate(parts).astype(dt), '; '.join(desc)


def sweep_inputs_binary(name, sfx, n, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.float32 if sfx == 'f32' else np.float64
    fi = np.finfo(dt)
    lmax = np.log(float(fi.max))
    if name == 'atan2':
        def lu(m):
            v = np.exp(rng.uniform(np.log(float(fi.smallest_subnormal)), lmax, m))
            return v * rng.choice([-1.0, 1.0], m)
        y = np.concatenate([lu(2 * n), rng.uniform(-10, 10, 2 * n), rng.uniform(-1, 1, n)])
        x = np.concatenate([lu(2 * n), rng.uniform(-10, 10, 2 * n), rng.uniform(-1, 1, n)])
        return (y.astype(dt), x.astype(dt)), (f'{2 * n} pairs log-uniform over the whole range, '
                                              f'{2 * n} uniform in [-10, 10]^2, {n} in [-1, 1]^2')
    # pow: results spread over the whole range (including overflow and underflow)
    x = np.exp(rng.uniform(-lmax, lmax, 3 * n))
    t = rng.uniform(-1.1 * lmax, 1.1 * lmax, 3 * n)
    y = t / np.log(x)
    x2 = rng.uniform(0, 4, n)
    y2 = rng.uniform(-60, 60, n)
    x3 = -np.exp(rng.uniform(-5, 5, n))                  # negative x, integer y
    y3 = np.round(rng.uniform(-40, 40, n))
    x4 = 1 + rng.uniform(-1, 1, n) * 2.0 ** -20          # x near 1, large y
    y4 = rng.uniform(-1, 1, n) * (2.0 ** 26 if sfx == 'f32' else 2.0 ** 28)
    x5 = np.exp(rng.uniform(np.log(float(fi.smallest_subnormal)),
                            np.log(float(fi.smallest_normal)), n))
    y5 = rng.uniform(-1.5, 1.5, n)                       # subnormal x
    xs = np.concatenate([x, x2, x3, x4, x5]).astype(dt)
    ys = np.concatenate([y, y2, y3, y4, y5]).astype(dt)
    return (xs, ys), (f'{3 * n} pairs with |y log x| up to 1.1 * overflow, {n} in [0,4]x[-60,60], '
                      f'{n} negative x with integer y, {n} x near 1 with large |y|, '
                      f'{n} subnormal x with |y| < 1.5')


# ------------------------------------------------------------------------------ special values
# (input(s), expected) per C99 Annex F; 'finite' means finite and non-zero (threshold cases).

INF, NAN, PI = math.inf, math.nan, math.pi


def _type_consts(sfx):
    fi = np.finfo(_TYPES[sfx][1])
    return float(fi.smallest_subnormal), float(fi.smallest_normal), float(fi.max)


def unary_specials(sfx):
    sub, nrm, big = _type_consts(sfx)
    f32 = sfx == 'f32'
    exp_over = [(88.72283, 'finite'), (88.7229, INF), (89.0, INF), (-103.98, 0.0), (-104.0, 0.0),
                (-87.33, 'finite'), (-103.95, 'finite')] if f32 else \
               [(709.782712893384, 'finite'), (709.7827128933841, INF), (710.0, INF),
                (-745.1332191019411, sub), (-745.14, 0.0), (-746.0, 0.0), (-708.4, 'finite')]
    common_odd = [(0.0, 0.0), (-0.0, -0.0), (NAN, NAN), (sub, sub), (-sub, -sub)]
    return {
        'exp': [(0.0, 1.0), (-0.0, 1.0), (INF, INF), (-INF, 0.0), (NAN, NAN), (sub, 1.0),
                (-sub, 1.0), (big, INF), (-big, 0.0), (1e-30, 1.0)] + exp_over,
        'expm1': common_odd + [(INF, INF), (-INF, -1.0), (-100.0, -1.0), (-big, -1.0),
                               (big, INF), (1e3, INF), (nrm, nrm), (-nrm, -nrm)],
        'log': [(0.0, -INF), (-0.0, -INF), (INF, INF), (-INF, NAN), (-1.0, NAN), (-sub, NAN),
                (1.0, 0.0), (NAN, NAN), (2.0, math.log(2.0)), (sub, math.log(sub))],
        'log1p': common_odd + [(-1.0, -INF), (-2.0, NAN), (-INF, NAN), (INF, INF), (nrm, nrm),
                               (big, math.log(big))],
        'tanh': common_odd + [(INF, 1.0), (-INF, -1.0), (20.0, 1.0), (-20.0, -1.0), (big, 1.0),
                              (-big, -1.0), (nrm, nrm)],
        'logistic': [(0.0, 0.5), (-0.0, 0.5), (INF, 1.0), (-INF, 0.0), (NAN, NAN), (200.0, 1.0),
                     (-1000.0, 0.0), (big, 1.0), (-big, 0.0), (sub, 0.5)],
        'erf': common_odd + [(INF, 1.0), (-INF, -1.0), (10.0, 1.0), (-10.0, -1.0), (big, 1.0),
                             (-big, -1.0)],
        'sin': common_odd + [(INF, NAN), (-INF, NAN), (nrm, nrm), (-nrm, -nrm)],
        'cos': [(0.0, 1.0), (-0.0, 1.0), (INF, NAN), (-INF, NAN), (NAN, NAN), (sub, 1.0),
                (-sub, 1.0)],
        'tan': common_odd + [(INF, NAN), (-INF, NAN), (nrm, nrm)],
        'cbrt': [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, -INF), (NAN, NAN), (8.0, 2.0),
                 (-27.0, -3.0), (1.0, 1.0), (-1.0, -1.0), (0.125, 0.5), (1e3, 10.0),
                 (2.0 ** -147 if f32 else sub, 2.0 ** -49 if f32 else 2.0 ** -358)],
        'sqrt': [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, NAN), (-1.0, NAN), (4.0, 2.0),
                 (NAN, NAN)],
        'rsqrt': [(0.0, INF), (-0.0, -INF), (INF, 0.0), (4.0, 0.5), (-1.0, NAN), (NAN, NAN)],
    }


def same_value(got, want):
    """Bitwise equality, any NaN equals any NaN."""
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


POW_SPECIALS = [
    # (x, y, pow(x, y)) per C99 F.9.4.4
    (NAN, 0.0, 1.0), (NAN, -0.0, 1.0), (INF, 0.0, 1.0), (0.0, 0.0, 1.0), (1.0, NAN, 1.0),
    (1.0, INF, 1.0), (1.0, -INF, 1.0), (-1.0, INF, 1.0), (-1.0, -INF, 1.0),
    (0.0, -1.0, INF), (-0.0, -1.0, -INF), (-0.0, -3.0, -INF), (-0.0, -2.0, INF),
    (0.0, -0.5, INF), (-0.0, -0.5, INF), (0.0, -INF, INF), (-0.0, -INF, INF),
    (0.0, 1.0, 0.0), (-0.0, 1.0, -0.0), (-0.0, 3.0, -0.0), (-0.0, 2.0, 0.0), (-0.0, 0.5, 0.0),
    (0.0, INF, 0.0), (-0.0, INF, 0.0),
    (0.5, INF, 0.0), (0.5, -INF, INF), (2.0, INF, INF), (2.0, -INF, 0.0),
    (-0.5, INF, 0.0), (-0.5, -INF, INF), (-2.0, INF, INF), (-2.0, -INF, 0.0),
    (-INF, -1.0, -0.0), (-INF, -2.0, 0.0), (-INF, -0.5, 0.0), (-INF, 1.0, -INF),
    (-INF, 3.0, -INF), (-INF, 2.0, INF), (-INF, 0.5, INF), (INF, -1.0, 0.0), (INF, 0.5, INF),
    (INF, INF, INF), (INF, -INF, 0.0),
    (-2.0, 0.5, NAN), (-2.0, -1.5, NAN), (-8.0, 1 / 3, NAN), (-1.0, 0.5, NAN),
    (NAN, 1.0, NAN), (1.5, NAN, NAN), (NAN, NAN, NAN),
    (-2.0, 3.0, -8.0), (-2.0, 2.0, 4.0), (-2.0, -1.0, -0.5), (2.0, 10.0, 1024.0), (4.0, 0.5, 2.0),
    (-1.0, 3.0, -1.0), (-1.0, 2.0, 1.0), (-1.0, 1e30, 1.0),
]


def _pow_type_specials(sfx):
    sub, _, big = _type_consts(sfx)
    if sfx == 'f32':
        return [(2.0, 128.0, INF), (2.0, -149.0, sub), (2.0, -151.0, 0.0),
                (-2.0, 127.0, -2.0 ** 127), (-2.0, -149.0, -sub), (big, 2.0, INF),
                (big, -2.0, 0.0)]
    return [(2.0, 1024.0, INF), (2.0, -1074.0, sub), (2.0, -1076.0, 0.0),
            (-2.0, 1023.0, -2.0 ** 1023), (-2.0, -1073.0, -2 * sub), (big, 2.0, INF),
            (big, -2.0, 0.0)]


ATAN2_SPECIALS = [
    # (y, x, atan2(y, x)) per C99 F.9.1.4
    (0.0, 0.0, 0.0), (-0.0, 0.0, -0.0), (0.0, -0.0, PI), (-0.0, -0.0, -PI),
    (0.0, -1.0, PI), (-0.0, -1.0, -PI), (0.0, 1.0, 0.0), (-0.0, 1.0, -0.0),
    (1.0, 0.0, PI / 2), (1.0, -0.0, PI / 2), (-1.0, 0.0, -PI / 2), (-1.0, -0.0, -PI / 2),
    (1.0, INF, 0.0), (-1.0, INF, -0.0), (1.0, -INF, PI), (-1.0, -INF, -PI),
    (INF, 1.0, PI / 2), (-INF, 1.0, -PI / 2), (INF, -1.0, PI / 2), (INF, 0.0, PI / 2),
    (INF, INF, PI / 4), (INF, -INF, 3 * PI / 4), (-INF, INF, -PI / 4), (-INF, -INF, -3 * PI / 4),
    (NAN, 1.0, NAN), (1.0, NAN, NAN), (0.0, NAN, NAN), (NAN, NAN, NAN), (INF, NAN, NAN),
    (1.0, 1.0, PI / 4), (-1.0, -1.0, -3 * PI / 4), (3.0, 3.0, PI / 4),
    (1e-300, 1e300, 0.0), (1e300, 1e-300, PI / 2), (-1e300, -1e-300, -PI / 2),
]




def special_cases(name, sfx):
    """[(args tuple, expected)] for function `name` in type sfx."""
    if name == 'pow':
        return [((x, y), w) for x, y, w in POW_SPECIALS + _pow_type_specials(sfx)]
    if name == 'atan2':
        return [((y, x), w) for y, x, w in ATAN2_SPECIALS]
    return [((x,), w) for x, w in unary_specials(sfx)[name]]


def check_special_cases(jit, name, sfx):
    """Run the special cases of one function; returns the list of failures (strings)."""
    cases = special_cases(name, sfx)
    dt = _TYPES[sfx][1]
    with np.errstate(over='ignore'):          # 1e300 -> inf in float32 is intended
        args = [np.array([c[0][k] for c in cases], dt) for k in range(len(cases[0][0]))]
    got = jit(name, sfx, *args)
    bad = []
    for i, (_a, want) in enumerate(cases):
        g = float(got[i])
        if want == 'finite':
            ok = math.isfinite(g) and g != 0
        else:
            with np.errstate(over='ignore'):
                want = float(dt(want))
            ok = same_value(g, want)
        if not ok:
            shown = ', '.join(repr(float(x[i])) for x in args)
            bad.append(f'{name}.{sfx}({shown}) = {g!r}, want {want!r}')
    return bad
