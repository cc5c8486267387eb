"""What ahead-of-time compilation refuses, with one clear message each: a wrong target
triple, CPU or feature (listing the valid ones), an unsupported op or a dynamic shape
(naming it), bad names and options. And what it adapts: arguments and results laid out
otherwise than row-major."""

import numpy as np
import pytest

import xlapy.aot as aot
from xlapy.errors import AotError, LoweringError, ParseError
from xlapy_tests_aot_harness import run_in_c

ADD = """HloModule add
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT s = f32[4] add(a, b)
}
"""


@pytest.mark.parametrize("kw,message", [
    (dict(target_triple="riscv64-unknown-linux-gnu"),
     "x86_64 and aarch64 only; valid triples: x86_64-pc-linux-gnu, aarch64-unknown-linux-gnu"),
    (dict(target_triple="nonsense"), "valid triples: x86_64-pc-linux-gnu"),
    (dict(target_cpu="pentium9"), r"--target_cpu=pentium9 is not a CPU LLVM knows for x86_64; "
                                  r"valid: generic, native, .*skylake"),
    (dict(target_triple="aarch64-unknown-linux-gnu", target_cpu="skylake"),
     r"not a CPU LLVM knows for aarch64; valid: generic, native, .*cortex-a72"),
    (dict(target_features="+avx9"), r"'\+avx9' is not '\+name' or '-name' .* valid names: "
                                    r".*avx2"),
    (dict(target_features="avx2"), r"'avx2' is not '\+name' or '-name'"),
    (dict(cpp_class="ns::1Bad"), "--cpp_class=ns::1Bad: expected ns1::ns2::Name"),
    (dict(entry_point="run-it"), "--entry_point=run-it: not a C identifier"),
    (dict(max_threads=0), "max_threads must be a positive integer"),
    (dict(arg_names=["a"]), "arg_names has 1 names for 2 arrays"),
    (dict(arg_names=["a", "b c"]), "arg_names: 'b c' is not a C identifier"),
])
def test_bad_targets_and_options(kw, message):
    with pytest.raises(AotError, match=message):
        aot.compile(ADD, **kw)


def test_native_cpu_is_the_hosts_machine_only():
    other = "aarch64-unknown-linux-gnu" if aot.targets.machine_of(
        aot.targets.host_triple()) == "x86_64" else "x86_64-pc-linux-gnu"
    with pytest.raises(AotError, match="--target_cpu=native means this host's CPU"):
        aot.compile(ADD, target_triple=other, target_cpu="native")


def test_unsupported_custom_calls_name_the_op():
    other = """HloModule k
ENTRY e {
  a = f32[3,3] parameter(0)
  ROOT c = (f32[3,3], s32[]) custom-call(a), custom_call_target="my_kernel"
}
"""
    with pytest.raises(LoweringError, match="unsupported custom-call target 'my_kernel'"):
        aot.compile(other)


def test_dynamic_shapes_are_refused_where_they_are_written():
    with pytest.raises(ParseError, match=r"<hlo>:4:11: error: dynamic dimensions"):
        aot.compile(ADD.replace("b = f32[4]", "b = f32[<=4]"))


def test_hlo_takes_no_example_arguments():
    with pytest.raises(AotError, match="an HLO module takes no example arguments"):
        aot.compile(ADD, np.zeros(4, np.float32))


def test_graph_needs_a_config():
    import xlapy.compat.v1 as tf
    with pytest.raises(AotError, match="a compat.v1 graph needs a tf2xla config"):
        aot.compile(tf.Graph())


LAYOUTS = """HloModule layouts
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  n = f32[2,3]{0,1} negate(p)
  t = f32[3,2]{0,1} transpose(p), dimensions={1,0}
  ROOT r = (f32[2,3]{0,1}, f32[3,2]{0,1}) tuple(n, t)
}
"""


def test_arguments_and_results_are_row_major(host_tc, tmp_path):
    """A parameter or result laid out column-major in the HLO is still passed and returned
    row-major: the object converts at its edges."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    c = aot.compile(LAYOUTS, entry_point="layouts")
    [(n, t)] = run_in_c(host_tc, [(c, [x])], tmp_path)
    np.testing.assert_array_equal(n, -x)
    np.testing.assert_array_equal(t, x.T)
