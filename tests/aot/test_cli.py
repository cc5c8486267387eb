"""python -m xlapy aot: tfcompile's flags, the three kinds of input, the files written, and
errors as one line with exit status 2."""

import pathlib

import pytest

from xlapy.backends.cpu import elf
from xlapy.tools.main import main

HLO = pathlib.Path(__file__).parents[1] / "hlo" / "softmax.hlo"


def test_hlo_to_header_object_and_metadata(tmp_path, capsys):
    h, o, m = tmp_path / "s.h", tmp_path / "s.o", tmp_path / "meta.o"
    assert main(["aot", "--hlo", str(HLO), "--cpp_class", "ns::Softmax", "--out_header",
                 str(h), "--out_function_object", str(o), "--out_metadata_object", str(m),
                 "--target_triple", "aarch64-unknown-linux-gnu", "--sizes"]) == 0
    assert "class Softmax final" in h.read_text()
    info = elf.read(o.read_bytes())
    assert info.machine == "aarch64"
    exported = {s.name for s in info.symbols if s.binding == 1 and s.section}
    assert exported == {"ns_softmax", "ns_softmax_set_num_threads", "ns_softmax_num_threads"}
    meta = {s.name for s in elf.read(m.read_bytes()).symbols if s.section}
    assert {"ns_softmax_signature", "ns_softmax_hlo"} <= meta
    out = capsys.readouterr().out
    assert "ns::Softmax (ns_softmax) for aarch64-unknown-linux-gnu" in out and "code " in out


def test_function_with_argument_shapes(tmp_path):
    (tmp_path / "model.py").write_text(
        "import xlapy.numpy as xnp\n"
        "def scale(x, y):\n"
        "    return xnp.tanh(x) * y\n")
    o = tmp_path / "f.o"
    assert main(["aot", "--function", f"{tmp_path}/model.py:scale", "--args", "f32[8]",
                 "f32[8]", "--out_object", str(o), "--out_header", str(tmp_path / "f.h"),
                 "--entry_point", "scale", "--max_threads", "1"]) == 0
    header = (tmp_path / "f.h").read_text()
    assert "float& arg_x(size_t dim0)" in header and "Threads: one (no pool)" in header
    assert "pthread_create" not in elf.read(o.read_bytes()).undefined()


def test_graph_with_config(tmp_path):
    (tmp_path / "g.py").write_text(
        "import xlapy.compat.v1 as tf\n"
        "def build():\n"
        "    g = tf.Graph()\n"
        "    with g.as_default():\n"
        "        x = tf.placeholder(tf.float32, [3], name='x')\n"
        "        tf.square(x, name='y')\n"
        "    return g\n")
    (tmp_path / "g.pbtxt").write_text('feed { id { node_name: "x" } name: "x" }\n'
                                      'fetch { id { node_name: "y" } name: "y" }\n')
    h = tmp_path / "g.h"
    assert main(["aot", "--graph", f"{tmp_path}/g.py:build", "--config",
                 str(tmp_path / "g.pbtxt"), "--cpp_class", "Sq", "--out_header", str(h)]) == 0
    assert "Sq: (x: f32[3]) -> (y: f32[3])" in h.read_text()


@pytest.mark.parametrize("argv,message", [
    (["--hlo", str(HLO), "--target_triple", "sparc-sun-solaris"],
     "xlapy aot: --target_triple=sparc-sun-solaris: xlapy generates code for x86_64 and "
     "aarch64 only; valid triples: x86_64-pc-linux-gnu, aarch64-unknown-linux-gnu"),
    (["--hlo", str(HLO), "--args", "f32[2]"], "xlapy aot: --args goes with --function"),
    (["--graph", "nowhere.py:g"], "xlapy aot: --graph needs --config"),
    (["--function", "nowhere.py:f"], "xlapy aot: --function nowhere.py:f: no file nowhere.py"),
    (["--hlo", "missing.hlo"], "xlapy aot: cannot read the HLO file missing.hlo"),
])
def test_errors_are_one_line(argv, message, capsys):
    assert main(["aot", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err
