"""compat.v1 graphs compiled ahead of time with a tf2xla config, as tfcompile takes a
TensorFlow graph: feeds become arguments, fetches results; readonly variables constants
with their value in the session, read-write ones arguments and results (var_X in the
C++ class, updated by Run)."""

import numpy as np
import pytest

import xlapy.aot as aot
import xlapy.compat.v1 as tf
from xlapy.aot.config import parse_config
from xlapy.errors import AotError
from xlapy_tests_aot_harness import run_in_c

RNG = np.random.default_rng(3)
W_VALUE = RNG.standard_normal((20, 5)).astype(np.float32)
B_VALUE = RNG.standard_normal(5).astype(np.float32)

SOFTMAX_CONFIG = """
feed { id { node_name: "x" } shape { dim { size: 2 } dim { size: 20 } } name: "x" }
fetch { id { node_name: "y" } name: "probabilities" }
fetch { id { node_name: "logits" } }
variable { node_name: "W" readonly: true }
variable { node_name: "b" readonly: true }
"""


def softmax_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 20], name="x")
        W = tf.Variable(tf.zeros([20, 5]), name="W")
        b = tf.Variable(tf.zeros([5]), name="b")
        logits = tf.add(tf.matmul(x, W), b, name="logits")
        tf.nn.softmax(logits, name="y")
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=g)
    sess.run(init)
    W.load(W_VALUE, sess)
    b.load(B_VALUE, sess)
    return g, sess


def test_readonly_variables_become_constants(host_tc, tmp_path):
    g, sess = softmax_graph()
    c = aot.compile(g, config=SOFTMAX_CONFIG, session=sess, cpp_class="t::Softmax",
                    entry_point="softmax")
    assert [b.name for b in c.signature.args] == ["x"]
    assert [b.name for b in c.signature.results] == ["probabilities", None]
    x = RNG.standard_normal((2, 20)).astype(np.float32)
    [(probs, logits)] = run_in_c(host_tc, [(c, [x])], tmp_path)
    want_probs, want_logits = sess.run([g.get_tensor_by_name("y:0"),
                                        g.get_tensor_by_name("logits:0")],
                                       {g.get_tensor_by_name("x:0"): x})
    np.testing.assert_allclose(probs, want_probs, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(logits, want_logits, rtol=1e-5, atol=1e-6)


COUNTER_CPP = r"""
#include <cstdio>
#include "counter.h"

int main() {
  t::Counter c;
  const float start[3] = {1, 2, 3};
  for (int i = 0; i < 3; ++i) {
    c.var_total_data()[i] = start[i];
    c.arg_x(i) = 1;
  }
  for (int run = 0; run < 2; ++run) {
    if (!c.Run()) return 1;
    std::printf("y %g %g %g total %g %g %g\n", c.result_y(0), c.result_y(1), c.result_y(2),
                c.var_total(0), c.var_total(1), c.var_total(2));
  }
  return 0;
}
"""


def test_read_write_variable_is_argument_and_result(host_tc, tmp_path):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        v = tf.Variable(tf.zeros([3]), name="v")
        tf.multiply(v.assign_add(x), 2.0, name="y")
    config = ('feed { id { node_name: "x" } name: "x" } fetch { id { node_name: "y" } '
              'name: "y" } variable { node_name: "v" name: "total" }')
    c = aot.compile(g, config=config, cpp_class="t::Counter", entry_point="counter")
    assert len(c.signature.args) == 2 and len(c.signature.results) == 2
    assert [(v.name, v.arg, v.result) for v in c.signature.variables] == [("total", 1, 1)]
    assert "void set_var_total_data(const void* data)" in c.header
    c.write(header=tmp_path / "counter.h", object=tmp_path / "counter.o")
    (tmp_path / "main.cc").write_text(COUNTER_CPP)
    exe = host_tc.build([tmp_path / "main.cc"], [tmp_path / "counter.o"], tmp_path / "main",
                        libraries=c.libraries, flags=["-I", str(tmp_path)])
    done = host_tc.run([exe])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["y 4 6 8 total 2 3 4", "y 6 8 10 total 3 4 5"]


def _errors_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        z = tf.placeholder(tf.float32, [4], name="z")
        v = tf.Variable(tf.ones([4]), name="v")
        tf.add(x, v, name="plus_v")
        tf.add(x, z, name="plus_z")
        tf.add(x, tf.random_normal([4]), name="noisy")
        tf.multiply(v.assign(tf.reduce_sum(x, 0)), 1.0, name="assigned")
    return g


@pytest.mark.parametrize("config,message", [
    ('feed { id { node_name: "x" } shape { dim { size: 2 } dim { size: 4 } } } '
     'fetch { id { node_name: "plus_z" } }',
     "placeholder 'z' is needed by the fetches but not fed"),
    ('feed { id { node_name: "x" } } fetch { id { node_name: "plus_v" } }',
     r"feed 'x:0' has no static shape \(\[None, 4\]\)"),
    ('feed { id { node_name: "x" } shape { dim { size: 2 } dim { size: 4 } } } '
     'fetch { id { node_name: "plus_v" } }',
     "variable 'v' becomes a constant with its current value .* pass the session"),
    ('feed { id { node_name: "x" } shape { dim { size: 2 } dim { size: 4 } } } '
     'fetch { id { node_name: "assigned" } } variable { node_name: "v" readonly: true }',
     "variable 'v' is readonly in the config but the graph assigns it"),
    ('feed { id { node_name: "x" } shape { dim { size: 2 } dim { size: 4 } } } '
     'fetch { id { node_name: "noisy" } }',
     r"node 'random_normal.*' \(RandomStandardNormal\) cannot be compiled ahead of time"),
    ('feed { id { node_name: "x" } shape { dim { size: 2 } dim { size: 5 } } } '
     'fetch { id { node_name: "plus_v" } }', r"has shape \[2, 5\], incompatible"),
    ('fetch { id { node_name: "nothing" } }', "names node 'nothing', which the graph"),
    ('feed { id { node_name: "x" } shape { dim { size: 2 } dim { size: 4 } } name: "a b" } '
     'fetch { id { node_name: "plus_z" } } feed { id { node_name: "z" } }',
     "name 'a b' is not a C identifier"),
])
def test_graph_errors(config, message):
    with pytest.raises(AotError, match=message):
        aot.compile(_errors_graph(), config=parse_config(config, "c"))
