"""Split compilation (split.py, codegen.compile_objects): a program's LLVM module cut into parts
that compile concurrently and load into one engine."""

import os
import pathlib
import re
import threading
import time

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.backends.cpu import codegen, parallel_compile
from xlapy.backends.cpu.compiler import CpuCompiler
from xlapy.backends.cpu.emitters.program import ModuleEmitter
from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
from xlapy.backends.cpu.split import join_parts, parts_of, split_module
from xlapy.errors import LoweringError, XlapyError
from xlapy.flags import parse_flags
from xlapy.hlo import parse

# four kernels: an elementwise one, a row softmax (exp: an alwaysinline helper), a column
# sum and a constant table read by two of them
PROGRAM = """HloModule several
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
ENTRY e {
  x = f32[300,200] parameter(0)
  c = f32[200] constant({...})
  cb = f32[300,200] broadcast(c), dimensions={1}
  y = f32[300,200] multiply(x, cb)
  t = f32[300,200] tanh(y)
  ninf = f32[] constant(-inf)
  mx = f32[300] reduce(t, ninf), dimensions={1}, to_apply=max
  mb = f32[300,200] broadcast(mx), dimensions={0}
  d = f32[300,200] subtract(t, mb)
  e = f32[300,200] exponential(d)
  z = f32[] constant(0)
  s = f32[300] reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[300,200] broadcast(s), dimensions={0}
  sm = f32[300,200] divide(e, sb)
  cs = f32[200] reduce(y, z), dimensions={0}, to_apply=add
  w = f32[200] add(cs, c)
  ROOT r = (f32[300,200], f32[200], f32[300,200]) tuple(sm, w, y)
}
"""


def _module():
    text = PROGRAM.replace("{...}", "{" + ", ".join(f"{0.5 + k / 400:.4f}" for k in range(200))
                           + "}")
    return parse(text)


def _emitter():
    em = ModuleEmitter(run_cpu_pipeline(_module()), 2, 1000, use_threads=True)
    em.emit("xlapy_entry")
    return em


def _defines(text):
    return re.findall(r'^define (\w+) [^@]*@"([^"]+)"', text, re.M)


def test_one_part_is_the_module_text():
    em = _emitter()
    assert split_module(em.llmod, "xlapy_entry", 1) == [str(em.llmod)]


def test_parts_define_every_function_once_and_declare_the_rest():
    em = _emitter()
    text = str(em.llmod)
    whole = _defines(text)
    inline = set(re.findall(r'^define [^@]*@"([^"]+)"[^\n]*alwaysinline', text, re.M))
    assert inline  # the math helpers (tanh, exp)
    texts = split_module(em.llmod, "xlapy_entry", 2)
    assert len(texts) == 2
    owners = {}
    for k, t in enumerate(texts):
        for linkage, name in _defines(t):
            if name in inline:
                assert linkage == "internal"      # a private copy per part that uses it
                continue
            assert name not in owners, f"{name} defined twice"
            owners[name] = k
    assert set(owners) == {n for _, n in whole} - inline
    for k, t in enumerate(texts):
        codegen.parse_ir(t)                             # each part is a valid module on its own
        for name, home in owners.items():           # used elsewhere: declared, and external
            if home != k and f'@"{name}"' in t:
                assert re.search(rf'^declare [^\n]*@"{re.escape(name)}"\(', t, re.M)
                assert re.search(rf'^define external [^\n]*@"{re.escape(name)}"\(',
                                 texts[home], re.M)
    # the constant table is a private global, copied into each part that reads it
    users = [t for t in texts if re.search(r'@"const\.c[^"]*" = private', t)]
    assert users


def test_joined_parts_read_back_as_the_parts():
    """A dump's ir-parts.ll (join_parts) gives back each part (parts_of), also when a part
    ends without a newline (its last metadata line), and each still parses."""
    texts = split_module(_emitter().llmod, "xlapy_entry", 2)
    assert len(texts) == 2
    back = parts_of(join_parts(texts))
    assert [t.rstrip("\n") for t in back] == [t.rstrip("\n") for t in texts]
    for t in back:
        codegen.parse_ir(t)
    assert parts_of(join_parts(["a\n", "b"])) == ["a\n", "b\n"]


def test_single_cluster_is_not_split():
    em = ModuleEmitter(run_cpu_pipeline(parse("""HloModule one
ENTRY e {
  x = f32[100] parameter(0)
  ROOT y = f32[100] tanh(x)
}""")), 1, 10**9, use_threads=False)
    em.emit("xlapy_entry")
    # the entry and one kernel: a part holding only the entry is not worth its set-up; the
    # one text is the module's own (assembled from the function texts already printed)
    assert split_module(em.llmod, "xlapy_entry", 2) == [str(em.llmod)]


def _compile(monkeypatch, count):
    monkeypatch.setenv("XLAPY_FLAGS", f"--xla_cpu_parallel_codegen_split_count={count}")
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    return CpuCompiler().compile(_module())  # its own in-memory cache


@pytest.mark.skipif(not parallel_compile.available(), reason="llvmlite's lock layout")
def test_split_program_gives_the_same_bits_as_one_module(monkeypatch):
    x = np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32)
    one = _compile(monkeypatch, 1)
    two = _compile(monkeypatch, 2)
    assert len(one.spec.objects) == 1 and len(two.spec.objects) == 2
    for a, b in zip(one.run(x), two.run(x)):
        np.testing.assert_array_equal(a, b)
    want = get_platform("interpreter").compiler.compile(_module()).run(x)
    for a, b in zip(two.run(x), want):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)


@pytest.mark.skipif(not parallel_compile.available(), reason="llvmlite's lock layout")
def test_concurrent_split_compilations(monkeypatch):
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_cpu_parallel_codegen_split_count=2")
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    x = np.random.default_rng(1).standard_normal((300, 200)).astype(np.float32)
    want = get_platform("interpreter").compiler.compile(_module()).run(x)
    errors = []

    def work():
        try:
            for _ in range(3):
                exe = CpuCompiler().compile(_module())
                for a, b in zip(exe.run(x), want):
                    np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)
        except BaseException as e:  # reported on the main thread
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_error_in_a_worker_part_reaches_the_caller():
    good = 'define i64 @"f"() {\n  ret i64 1\n}\n'
    bad = 'define i64 @"g"() {\n  ret i32 1\n}\n'
    with pytest.raises(LoweringError, match="LLVM rejected the generated IR"):
        codegen.compile_objects([good, bad])
    assert len(codegen.compile_objects([good, good.replace('"f"', '"h"')])) == 2  # still usable


def test_split_count_flag_takes_an_integer():
    assert parse_flags("--xla_cpu_parallel_codegen_split_count=3"
                       ).xla_cpu_parallel_codegen_split_count == 3
    with pytest.raises(XlapyError, match="takes an integer"):
        parse_flags("--xla_cpu_parallel_codegen_split_count=many")


def test_reduction_lane_buffer_is_vector_aligned(monkeypatch):
    """The lane buffer (of reductions whose operands elemental_vector does not emit as vector
    code) is read back as one vector: it must have the vector's alignment (it once had the
    element's, a misaligned aligned-move wherever it stayed in memory)."""
    from xlapy.backends.llvm import elemental_reduce
    monkeypatch.setattr(elemental_reduce, "DIRECT_VECTORS", False)
    em = _emitter()
    text = str(em.llmod)
    assert re.search(r"alloca float, i64 16, align 64", text)
    assert not re.search(r"alloca float, i64 16\n", text)


@pytest.mark.skipif(not hasattr(os, "fork") or not parallel_compile.available(),
                    reason="needs fork and parallel compilation")
def test_split_compilation_in_a_forked_child(cpu_check, tmp_path):
    """The helper threads do not survive a fork: the child starts its own."""
    cpu_check.in_forked_child(tmp_path, f"""
import os, sys
os.environ["XLAPY_DISABLE_CACHE"] = "1"
os.environ["XLAPY_FLAGS"] = "--xla_cpu_parallel_codegen_split_count=2"
sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
from test_split import _module
from xlapy.backends.cpu.compiler import CpuCompiler
x = np.ones((300, 200), np.float32)
want = CpuCompiler().compile(_module()).run(x)
""", """
exe = CpuCompiler().compile(_module())
ok = len(exe.spec.objects) == 2 and all(np.array_equal(a, b) for a, b in zip(exe.run(x), want))
""")


def test_split_count_defaults_to_the_cores_at_most_eight(monkeypatch):
    from xlapy.backends.cpu import compiler
    monkeypatch.setattr(parallel_compile, "available", lambda: True)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    assert compiler.codegen_split_count(parse_flags("")) == compiler.MAX_DEFAULT_PARTS == 8
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert compiler.codegen_split_count(parse_flags("")) == 2
    flag = "--xla_cpu_parallel_codegen_split_count=12"
    assert compiler.codegen_split_count(parse_flags(flag)) == 12   # asked for explicitly
    monkeypatch.setattr(parallel_compile, "available", lambda: False)
    assert compiler.codegen_split_count(parse_flags(flag)) == 1


def test_small_modules_are_not_split(monkeypatch):
    """Under MIN_PART_LINES lines per part, a module stays whole: handing a few milliseconds
    of LLVM work to a thread on an idle core costs about as much as it saves."""
    from xlapy.backends.cpu import split
    em = _emitter()
    lines = str(em.llmod).count("\n")
    assert len(split_module(em.llmod, "xlapy_entry", 2)) == 2
    monkeypatch.setattr(split, "MIN_PART_LINES", lines)   # room for one part only
    assert split_module(em.llmod, "xlapy_entry", 2) == [str(em.llmod)]
    tiny = ModuleEmitter(run_cpu_pipeline(parse("""HloModule tiny
ENTRY e {
  x = f32[4] parameter(0)
  ROOT y = f32[4] add(x, x)
}""")), 2, 1, use_threads=True)
    tiny.emit("xlapy_entry")
    monkeypatch.setattr(split, "MIN_PART_LINES", 150)
    assert split_module(tiny.llmod, "xlapy_entry", 2) == [str(tiny.llmod)]


def test_function_called_only_from_an_inline_helper():
    """A unit whose only caller is an alwaysinline helper (copied into its callers' parts)
    lands in its caller's part, or is external: left internal in another part, the call
    resolved to address 0 (a Winograd convolution's epilogue, called from a helper)."""
    from llvmlite import ir
    mod = ir.Module("m")
    i64 = ir.IntType(64)
    fty = ir.FunctionType(i64, [i64])

    def chain(name, lines, callee=None, inline=False, linkage="internal"):
        fn = ir.Function(mod, fty, name)
        fn.linkage = linkage
        if inline:
            fn.attributes.add("alwaysinline")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        x = fn.args[0]
        for k in range(lines):
            x = b.add(x, ir.Constant(i64, k))
        if callee is not None:
            x = b.call(callee, [x])
        b.ret(x)
        return fn

    target = chain("target", 200)
    helper = chain("helper", 5, target, inline=True)
    user = chain("user", 300, helper)
    other = chain("other", 250)   # packed largest first: target joins other's part
    entry = ir.Function(mod, fty, "xlapy_entry")
    b = ir.IRBuilder(entry.append_basic_block("entry"))
    b.ret(b.add(b.call(user, [entry.args[0]]), b.call(other, [entry.args[0]])))
    texts = split_module(mod, "xlapy_entry", 2)
    assert len(texts) == 2
    owner = {name: k for k, t in enumerate(texts) for _, name in _defines(t)
             if name != "helper"}
    assert owner["user"] == owner["target"] or re.search(
        r'^define external [^\n]*@"target"\(', texts[owner["target"]], re.M)
    for t in texts:
        codegen.parse_ir(t)


@pytest.mark.skipif(not parallel_compile.available(), reason="llvmlite's lock layout")
def test_dumped_parts_print_one_at_a_time_and_keep_the_locale(monkeypatch):
    """llvmlite's module printing saves, sets ("C") and restores the process's locale: the
    parts' optimized IR, printed for a dump on their threads, must not be printed at once
    (two at a time could leave the process in the C locale, ASCII)."""
    import locale

    import llvmlite.binding as llvm
    printing, most = [0], [0]
    count_lock = threading.Lock()
    plain = llvm.ModuleRef.__str__

    def watched(mod):
        with count_lock:
            printing[0] += 1
            most[0] = max(most[0], printing[0])
        try:
            time.sleep(0.05)  # long enough for the other parts' threads to get here too
            return plain(mod)
        finally:
            with count_lock:
                printing[0] -= 1

    monkeypatch.setattr(llvm.ModuleRef, "__str__", watched)
    parts = [f'define i64 @"f{k}"() {{\n  ret i64 {k}\n}}\n' for k in range(4)]
    before = locale.setlocale(locale.LC_ALL)
    dumped = {}
    try:
        codegen.compile_objects(parts, lambda name, text: dumped.setdefault(name, text))
        assert locale.setlocale(locale.LC_ALL) == before
    finally:
        locale.setlocale(locale.LC_ALL, before)  # never leave this worker in another locale
    assert most[0] == 1
    assert all(re.search(rf'@"?f{k}"?\(', dumped["ir-with-opt.ll"]) for k in range(4))
