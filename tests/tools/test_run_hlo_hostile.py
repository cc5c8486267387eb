"""run-hlo on hostile files: every one ends in the tool's one-line error (with a position
where there is one), never a traceback, a crash or a hang. Each runs under a deadline, so a
hang fails the test instead of stopping the suite."""

import threading

import numpy as np
import pytest

from xlapy.errors import ShapeError
from xlapy.hlo.attributes import PaddingConfig
from xlapy.hlo.parser import parse_shape
from xlapy.hlo.shape_inference import infer_shape
from xlapy.tools.main import main

DEADLINE = 120  # seconds; each case takes well under one


def _run(argv):
    """main(argv) in a thread under DEADLINE: (rc, SystemExit message or None)."""
    box = {}

    def go():
        try:
            box["rc"] = main(argv)
        except SystemExit as e:
            box["exit"] = str(e.code)
        except BaseException as e:  # (reported below as the failure it is)
            box["error"] = e

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(DEADLINE)
    assert not t.is_alive(), f"run-hlo {argv} still running after {DEADLINE} s"
    if "error" in box:
        raise AssertionError(f"run-hlo raised {type(box['error']).__name__}") from box["error"]
    return box.get("rc"), box.get("exit")


def _one_line_error(tmp_path, capsys, text: str | bytes, *extra) -> str:
    path = tmp_path / "m.hlo"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    rc, exit_message = _run(["run-hlo", str(path), *(extra or ("--random-inputs",))])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and exit_message is None, (rc, exit_message, err)
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.replace(str(path), "m.hlo")


def _module(root: str, *before: str) -> str:
    lines = "".join(f"  {b}\n" for b in before)
    return f"HloModule m\nENTRY e {{\n{lines}  ROOT r = {root}\n}}\n"


def test_not_utf8_names_line_and_column(tmp_path, capsys):
    text = _module("f32[2] parameter(0)").encode().replace(b"(0)", b"(0) \xff\xfe")
    err = _one_line_error(tmp_path, capsys, text)
    assert err.startswith("xlapy run-hlo: m.hlo:3:")
    assert "not UTF-8" in err and "0xff" in err


def test_rank_over_64(tmp_path, capsys):
    err = _one_line_error(tmp_path, capsys, _module(f"f32[{','.join(['1'] * 65)}] parameter(0)"))
    assert "m.hlo:3:12:" in err and "rank 65" in err and "at most 64" in err


@pytest.mark.parametrize("depth", [65, 2000])
def test_deeply_nested_tuple_shapes(tmp_path, capsys, depth):
    shape = "(" * depth + "f32[]" + ")" * depth
    err = _one_line_error(tmp_path, capsys, _module(f"{shape} parameter(0)"))
    assert "m.hlo:3:" in err and "nested more than 64 deep" in err


def test_deeply_nested_tuple_instructions(tmp_path, capsys):
    # tuple(tuple(...)) 2,000 deep: the shapes nest as deep as the instructions
    body = ["t0 = f32[] constant(1)"]
    shape = "f32[]"
    for i in range(1, 2000):
        shape = f"({shape})"
        body.append(f"t{i} = {shape} tuple(t{i - 1})")
    err = _one_line_error(tmp_path, capsys, _module(f"({shape}) tuple(t1999)", *body))
    assert "m.hlo:" in err and "nested more than 64 deep" in err


@pytest.mark.parametrize("dims", ["9223372036854775807", "9223372036854775808",
                                  "4611686018427387904,4"])
def test_overflowing_dimensions(tmp_path, capsys, dims):
    err = _one_line_error(tmp_path, capsys, _module(f"f32[{dims}] parameter(0)"))
    assert "m.hlo:3:12:" in err, err


def test_pad_to_1e17_elements(tmp_path, capsys):
    # declared: the parser refuses it; left to shape inference (via the verifier): refused too
    text = _module("f32[100000000000000000] pad(c, z), padding=0_99999999999999999",
                   "c = f32[1] constant({0})", "z = f32[] constant(0)")
    err = _one_line_error(tmp_path, capsys, text)
    assert "m.hlo:5:12:" in err and "more than an array can" in err
    with pytest.raises(ShapeError, match="pad: f32.100000000000000001. would take"):
        infer_shape("pad", [parse_shape("f32[1]"), parse_shape("f32[]")],
                    {"padding": PaddingConfig((0,), (10**17,), (0,))})


def test_output_larger_than_memory_is_refused_before_running(tmp_path, capsys):
    # 400 GB of output: refused up front (where memory is overcommitted, allocating it could
    # succeed and the run be killed for it); a pad that big once ran for minutes
    text = _module("f32[100000000000] pad(c, z), padding=0_99999999999",
                   "c = f32[1] constant({0})", "z = f32[] constant(0)")
    err = _one_line_error(tmp_path, capsys, text, "--backend", "cpu")
    assert "not enough memory to run m" in err and "f32[100000000000]" in err


def test_random_inputs_of_a_huge_parameter(tmp_path, capsys):
    err = _one_line_error(tmp_path, capsys, _module("f32[100000000000] parameter(0)"))
    assert "random inputs for parameters f32[100000000000]" in err
    assert "400000000000 bytes" in err


@pytest.mark.parametrize("content", [b"not a zip file at all\n", b"PK\x03\x04garbage" * 3,
                                     b"\x93NUMPY\x01\x00garbage", b""])
def test_input_file_that_is_not_an_npz(tmp_path, content):
    hlo = tmp_path / "m.hlo"
    hlo.write_text(_module("f32[2] parameter(0)"))
    bad = tmp_path / "in.npz"
    bad.write_bytes(content)
    rc, exit_message = _run(["run-hlo", str(hlo), "--input", str(bad)])
    assert exit_message is not None and rc is None
    assert exit_message.startswith(f"xlapy run-hlo: error: cannot read inputs from {bad}: ")
    assert "\n" not in exit_message and "pickle" not in exit_message


def test_truncated_and_damaged_npz(tmp_path):
    hlo = tmp_path / "m.hlo"
    hlo.write_text(_module("f32[2] parameter(0)"))
    good = tmp_path / "good.npz"
    np.savez(good, np.ones(2, np.float32))
    data = good.read_bytes()
    for name, content in [("trunc.npz", data[:len(data) // 2]),
                          ("flipped.npz", data[:60] + b"x" * 20 + data[80:])]:
        bad = tmp_path / name
        bad.write_bytes(content)
        rc, exit_message = _run(["run-hlo", str(hlo), "--input", str(bad)])
        assert exit_message is not None and "cannot read inputs from" in exit_message
