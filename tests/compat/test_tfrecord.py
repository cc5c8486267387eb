"""TFRecord files, tf.train.Example and the parsing ops of TF 1.x input pipelines:
CRC32C against known vectors, records written by TFRecordWriter and read back by
tf_record_iterator, TFRecordDataset and tensorboard's record reader (no, GZIP and ZLIB
compression), corruption raising DataLossError, the Example messages byte-for-byte against
protobuf's own runtime (messages built from descriptors with TF's field numbers), the
parsing ops (parse_single_example, parse_example, parse_single_sequence_example,
decode_raw, decode_csv, string_to_number, as_string) against Python / NumPy references,
and an MNIST-like pipeline from TFRecord files training a softmax regression."""

import gzip
import os
import struct
import zlib

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import (DataLossError, InvalidArgumentError, NotFoundError,
                                    OutOfRangeError, UnimplementedError)
from xlapy.compat.v1.io import tf_record
from xlapy.compat.v1.train import example_pb

from .conftest import jit_config


def _drain(sess, t):
    out = []
    while True:
        try:
            out.append(sess.run(t))
        except OutOfRangeError:
            return out


# ---- CRC32C and the record format ------------------------------------------------------------

# (data, CRC32C): the check value of the CRC catalogue and RFC 3720's iSCSI test vectors
CRC_VECTORS = [
    (b"", 0x00000000),
    (b"123456789", 0xE3069283),
    (b"a", 0xC1D04330),
    (bytes(32), 0x8A9136AA),
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
]


@pytest.mark.parametrize("data,crc", CRC_VECTORS)
def test_crc32c_vectors(data, crc):
    assert tf_record.crc32c(data) == crc
    assert tf_record._crc32c_python(data) == crc  # the fallback agrees


def test_masked_crc_and_record_layout_match_tensorboard():
    from tensorboard.compat.tensorflow_stub import pywrap_tensorflow as tb
    rng = np.random.default_rng(1)
    for n in (0, 1, 7, 100, 4096):
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert tf_record.masked_crc32c(data) == tb.masked_crc32c(data)
        crc = tf_record.crc32c(data)
        assert tf_record.masked_crc32c(data) == \
            ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
    rec = tf_record.encode_record(b"hello")
    length, hcrc = struct.unpack("<QI", rec[:12])
    assert length == 5 and rec[12:17] == b"hello" and len(rec) == 21
    assert hcrc == tb.masked_crc32c(rec[:8])
    assert struct.unpack("<I", rec[17:])[0] == tb.masked_crc32c(b"hello")


def _records(n=20, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, int(rng.integers(0, 300)), dtype=np.uint8).tobytes()
            for _ in range(n)] + [b"", b"last"]


@pytest.mark.parametrize("comp", ["", "GZIP", "ZLIB"])
def test_round_trip_writer_iterator_dataset(tmp_path, comp):
    recs = _records()
    path = str(tmp_path / f"r{comp}.tfrecord")
    opts = tf.python_io.TFRecordOptions(comp)
    with tf.python_io.TFRecordWriter(path, opts) as w:
        for r in recs[:-1]:
            w.write(r)
        w.flush()
        w.write("last")  # a str is written as UTF-8
    raw = open(path, "rb").read()
    if comp == "GZIP":
        assert raw[:2] == b"\x1f\x8b"
        raw = gzip.decompress(raw)
    elif comp == "ZLIB":
        raw = zlib.decompress(raw)
    assert raw == b"".join(tf_record.encode_record(r) for r in recs)
    # every way of naming the compression reads it back
    kind = {"": tf.python_io.TFRecordCompressionType.NONE,
            "GZIP": tf.python_io.TFRecordCompressionType.GZIP,
            "ZLIB": tf.python_io.TFRecordCompressionType.ZLIB}[comp]
    for o in (opts, comp, kind, tf.python_io.TFRecordOptions(kind)):
        assert list(tf.python_io.tf_record_iterator(path, o)) == recs
    assert list(tf.io.tf_record_iterator(path, options=opts)) == recs
    assert tf.python_io.TFRecordOptions.get_compression_type_string(opts) == comp
    el = tf.data.TFRecordDataset([path, path], compression_type=comp or None) \
        .make_one_shot_iterator().get_next()
    assert el.dtype == tf.string and el.shape.as_list() == []
    assert _drain(tf.Session(), el) == recs + recs


def test_tensorboard_reads_our_files_and_we_read_its(tmp_path):
    from tensorboard.compat.tensorflow_stub import pywrap_tensorflow as tb
    from tensorboard.summary.writer.record_writer import RecordWriter
    recs = _records(8, seed=2)
    ours = str(tmp_path / "ours.tfrecord")
    with tf.io.TFRecordWriter(ours) as w:
        for r in recs:
            w.write(r)
    reader = tb.PyRecordReader_New(ours.encode(), 0, None, None)
    got = []
    while True:
        try:
            reader.GetNext()
        except Exception:  # its OutOfRangeError at the end
            break
        got.append(reader.record())
    assert got == recs
    theirs = str(tmp_path / "theirs.tfrecord")
    with open(theirs, "wb") as f:
        rw = RecordWriter(f)
        for r in recs:
            rw.write(r)
        rw.flush()
    assert list(tf.python_io.tf_record_iterator(theirs)) == recs


def test_corruption_raises_data_loss(tmp_path):
    path = str(tmp_path / "ok.tfrecord")
    with tf.python_io.TFRecordWriter(path) as w:
        w.write(b"abcdef")
        w.write(b"second record")
    good = open(path, "rb").read()

    def read(data, name):
        p = str(tmp_path / name)
        open(p, "wb").write(data)
        return list(tf.python_io.tf_record_iterator(p))

    bad_data = bytearray(good)
    bad_data[12] ^= 1  # the first record's data
    with pytest.raises(DataLossError, match=r"^corrupted record at 12$"):
        read(bytes(bad_data), "a")
    bad_len = bytearray(good)
    bad_len[22 + 2] ^= 0x40  # the second record's length (it starts at 22)
    with pytest.raises(DataLossError, match=r"^corrupted record at 22$"):
        read(bytes(bad_len), "b")
    bad_footer = bytearray(good)
    bad_footer[-1] ^= 0xFF
    with pytest.raises(DataLossError, match=r"^corrupted record at 34$"):
        read(bytes(bad_footer), "c")
    with pytest.raises(DataLossError, match=r"^truncated record at 34$"):
        read(good[:-3], "d")
    with pytest.raises(DataLossError, match=r"^truncated record at 22$"):
        read(good[:27], "e")
    assert read(good[:22], "f") == [b"abcdef"]  # a whole record, then the end
    # in a pipeline: the records before it, then DataLossError from get_next
    p = str(tmp_path / "g")
    open(p, "wb").write(good[:-3])
    el = tf.data.TFRecordDataset(p).make_one_shot_iterator().get_next()
    sess = tf.Session()
    assert sess.run(el) == b"abcdef"
    with pytest.raises(DataLossError, match="truncated record at 34"):
        sess.run(el)
    # a broken compressed stream
    gz = str(tmp_path / "h.gz")
    with tf.python_io.TFRecordWriter(gz, "GZIP") as w:
        w.write(b"x" * 1000)
    data = bytearray(open(gz, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(gz, "wb").write(bytes(data))
    with pytest.raises(DataLossError):
        list(tf.python_io.tf_record_iterator(gz, "GZIP"))
    with pytest.raises(NotFoundError):
        list(tf.python_io.tf_record_iterator(str(tmp_path / "missing")))
    assert issubclass(DataLossError, tf.errors.OpError)
    assert DataLossError("x").error_code == tf.errors.DATA_LOSS == 15


# ---- tf.train.Example against protobuf's runtime -------------------------------------------

def _oracle():
    """TF's feature.proto / example.proto messages, made by protobuf's runtime from
    descriptors (the field numbers, types and map entries of TF's .proto files)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="xlapy_test/example.proto",
                                             package="tensorflow", syntax="proto3")
    R, O = F.LABEL_REPEATED, F.LABEL_OPTIONAL

    def msg(name, *fields):
        m = fdp.message_type.add(name=name)
        for fname, num, typ, label, tname in fields:
            f = m.field.add(name=fname, number=num, type=typ, label=label)
            if tname:
                f.type_name = ".tensorflow." + tname
        return m

    def map_msg(name, field, entry, value_type):
        m = fdp.message_type.add(name=name)
        e = m.nested_type.add(name=entry)
        e.options.map_entry = True
        e.field.add(name="key", number=1, type=F.TYPE_STRING, label=O)
        e.field.add(name="value", number=2, type=F.TYPE_MESSAGE, label=O,
                    type_name=".tensorflow." + value_type)
        m.field.add(name=field, number=1, type=F.TYPE_MESSAGE, label=R,
                    type_name=f".tensorflow.{name}.{entry}")

    msg("BytesList", ("value", 1, F.TYPE_BYTES, R, None))
    msg("FloatList", ("value", 1, F.TYPE_FLOAT, R, None))
    msg("Int64List", ("value", 1, F.TYPE_INT64, R, None))
    feat = msg("Feature", ("bytes_list", 1, F.TYPE_MESSAGE, O, "BytesList"),
               ("float_list", 2, F.TYPE_MESSAGE, O, "FloatList"),
               ("int64_list", 3, F.TYPE_MESSAGE, O, "Int64List"))
    feat.oneof_decl.add(name="kind")
    for f in feat.field:
        f.oneof_index = 0
    map_msg("Features", "feature", "FeatureEntry", "Feature")
    msg("FeatureList", ("feature", 1, F.TYPE_MESSAGE, R, "Feature"))
    map_msg("FeatureLists", "feature_list", "FeatureListEntry", "FeatureList")
    msg("Example", ("features", 1, F.TYPE_MESSAGE, O, "Features"))
    msg("SequenceExample", ("context", 1, F.TYPE_MESSAGE, O, "Features"),
        ("feature_lists", 2, F.TYPE_MESSAGE, O, "FeatureLists"))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return {n: message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorflow." + n))
            for n in ("BytesList", "FloatList", "Int64List", "Feature", "Features",
                      "FeatureList", "FeatureLists", "Example", "SequenceExample")}


@pytest.fixture(scope="module")
def pb():
    return _oracle()


def _build(ns, rng):
    """The same Example and SequenceExample built with tf.train or the oracle's classes."""
    imgs = [rng.integers(0, 256, 12, dtype=np.uint8).tobytes(), b"", b'q"\\\n\x00\xff']
    floats = [0.1, -2.5, 1e-7, 3.4028235e38, float("inf"), -0.0]
    ints = [0, 1, -1, 2**63 - 1, -(2**63), 300, 1 << 40]
    ex = ns["Example"](features=ns["Features"](feature={
        "img": ns["Feature"](bytes_list=ns["BytesList"](value=imgs)),
        "f": ns["Feature"](float_list=ns["FloatList"](value=floats)),
        "i": ns["Feature"](int64_list=ns["Int64List"](value=ints)),
        "empty": ns["Feature"](float_list=ns["FloatList"]()),
        "none": ns["Feature"](),
        "ключ": ns["Feature"](int64_list=ns["Int64List"](value=[5])),
    }))
    seq = ns["SequenceExample"](
        context=ns["Features"](feature={"len": ns["Feature"](
            int64_list=ns["Int64List"](value=[3]))}),
        feature_lists=ns["FeatureLists"](feature_list={
            "tok": ns["FeatureList"](feature=[
                ns["Feature"](int64_list=ns["Int64List"](value=[t, t + 1])) for t in range(3)]),
            "w": ns["FeatureList"](feature=[ns["Feature"](float_list=ns["FloatList"](
                value=[0.5 * t])) for t in range(2)]),
        }))
    return ex, seq


def _sorted_serialization(pb, m):
    """protobuf's serialization of an Example or SequenceExample with map entries in sorted
    key order (upb's deterministic mode does not sort them): each map entry serialized by
    protobuf alone, in key order (concatenated messages are one message, by the wire
    format)."""
    def delimited(num, payload):
        n, out = len(payload), bytearray([num << 3 | 2])
        while n > 0x7F:
            out.append(n & 0x7F | 0x80)
            n >>= 7
        return bytes(out) + bytes([n]) + payload

    def features(f):
        return b"".join(pb["Features"](feature={k: f.feature[k]}).SerializeToString()
                        for k in sorted(f.feature))
    if isinstance(m, pb["Example"]):
        return delimited(1, features(m.features))
    lists = b"".join(pb["FeatureLists"](feature_list={k: m.feature_lists.feature_list[k]})
                     .SerializeToString() for k in sorted(m.feature_lists.feature_list))
    return delimited(1, features(m.context)) + delimited(2, lists)


def test_example_wire_format_matches_protobuf(pb):
    from google.protobuf import text_format
    ours_ns = {n: getattr(tf.train, n) for n in pb}
    ex, seq = _build(ours_ns, np.random.default_rng(3))
    pex, pseq = _build(pb, np.random.default_rng(3))
    for a, b in ((ex, pex), (seq, pseq)):
        data = a.SerializeToString()
        assert data == _sorted_serialization(pb, b)
        # both directions: protobuf parses ours, we parse protobuf's (insertion order)
        assert type(b).FromString(data) == b
        back = type(a).FromString(b.SerializeToString())
        assert back == a and back.SerializeToString() == data
        assert str(a) == text_format.MessageToString(b)
        assert a.ByteSize() == b.ByteSize()
    # maps of one entry: protobuf's own bytes
    one = tf.train.Example(features=tf.train.Features(feature={"x": tf.train.Feature(
        float_list=tf.train.FloatList(value=[1.0, -0.5]))}))
    pone = pb["Example"](features=pb["Features"](feature={"x": pb["Feature"](
        float_list=pb["FloatList"](value=[1.0, -0.5]))}))
    assert one.SerializeToString() == pone.SerializeToString()
    for k in pex.features.feature:  # and every Feature
        assert ex.features.feature[k].SerializeToString() == \
            pex.features.feature[k].SerializeToString()
    assert ex.features.feature["f"].float_list.value[0] == pex.features.feature["f"] \
        .float_list.value[0] == float(np.float32(0.1))
    assert ex.features.feature["i"].int64_list.value[:] == [0, 1, -1, 2**63 - 1, -(2**63),
                                                           300, 1 << 40]
    assert seq.feature_lists.feature_list["tok"].feature[2].int64_list.value == [2, 3]
    assert ex.features.feature["none"].WhichOneof("kind") is None
    assert ex.features.feature["empty"].WhichOneof("kind") == "float_list"


def test_example_decodes_unpacked_fields_and_skips_unknown_ones(pb):
    # FloatList / Int64List written unpacked (one tag per value), as proto2 writers do
    def varint(n):
        out = bytearray()
        n &= (1 << 64) - 1
        while True:
            out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
            n >>= 7
            if not n:
                return bytes(out)
    fl = b"".join(b"\x0d" + struct.pack("<f", v) for v in (1.5, -2.0))
    il = b"".join(b"\x08" + varint(v) for v in (7, -3))
    il_packed = b"\x0a" + varint(len(varint(9))) + varint(9)  # packed and unpacked mixed
    unknown = b"\x20\x05" + b"\x2a\x03abc" + b"\x35\x00\x00\x00\x00" + b"\x39" + bytes(8)
    assert tf.train.FloatList.FromString(fl).value == [1.5, -2.0]
    assert tf.train.Int64List.FromString(il + il_packed + unknown).value == [7, -3, 9]
    assert pb["Int64List"].FromString(il + il_packed).value == [7, -3, 9]
    # a map entry without a key or without a value; the same key twice: the last wins
    entry = b"\x12\x04\x1a\x02\x08\x01"  # value only: key ""
    entry2 = b"\x0a\x01k"  # key only: an empty Feature
    twice = b"\x0a\x01k\x12\x04\x1a\x02\x08\x02"
    feats = b"".join(b"\x0a" + bytes([len(e)]) + e for e in (entry, entry2, twice))
    ours = tf.train.Features.FromString(feats)
    theirs = pb["Features"].FromString(feats)
    assert sorted(ours.feature) == sorted(theirs.feature) == ["", "k"]
    assert ours.feature[""].int64_list.value == [1]
    assert ours.feature["k"].int64_list.value == [2] == theirs.feature["k"].int64_list.value
    for bad in (b"\x0a\x05ab", b"\x0a", b"\x0f"):
        with pytest.raises(example_pb.DecodeError):
            tf.train.Example.FromString(bad)


def test_example_message_api():
    f = tf.train.Feature()
    assert not f.HasField("float_list") and f.float_list.value == []
    assert not f.HasField("float_list")  # reading does not set it
    f.float_list.value.append(2)
    assert f.WhichOneof("kind") == "float_list" and f.HasField("kind")
    f.int64_list.value.extend([1, 2])  # the oneof switches
    assert f.WhichOneof("kind") == "int64_list" and not f.HasField("float_list")
    ex = tf.train.Example()
    assert not ex.HasField("features") and ex.SerializeToString() == b""
    ex.features.feature["x"].bytes_list.value.append(b"abc")
    assert ex.HasField("features") and "x" in ex.features.feature
    assert len(ex.features.feature) == 1
    ex2 = tf.train.Example()
    ex2.ParseFromString(ex.SerializeToString())
    assert ex2 == ex and ex2 != tf.train.Example()
    ex2.features.feature["x"].bytes_list.value[0] = b"abd"
    assert ex2 != ex
    c = tf.train.Example()
    c.CopyFrom(ex)
    assert c == ex
    c.MergeFrom(ex)  # a map entry is replaced, a repeated field appended to
    assert c.features.feature["x"].bytes_list.value == [b"abc"]
    c.features.feature["x"].bytes_list.MergeFrom(ex.features.feature["x"].bytes_list)
    assert c.features.feature["x"].bytes_list.value == [b"abc", b"abc"]
    fl = tf.train.FeatureList()
    fl.feature.add(float_list=tf.train.FloatList(value=[1.0]))
    fl.feature.append(tf.train.Feature(int64_list=tf.train.Int64List(value=[3])))
    assert len(fl.feature) == 2 and fl.feature[1].int64_list.value[0] == 3
    with pytest.raises(TypeError):
        tf.train.BytesList(value=["a str"])
    with pytest.raises(TypeError):
        tf.train.Int64List(value=[1.5])
    with pytest.raises(ValueError):
        tf.train.Int64List(value=[2**63])
    with pytest.raises(ValueError):
        tf.train.Example(feature=1)
    with pytest.raises(AttributeError):
        ex.features = tf.train.Features()
    assert str(tf.train.Int64List(value=[1, 2])) == "value: 1\nvalue: 2\n"


# ---- parsing ops ----------------------------------------------------------------------------

def _example(**feats):
    def feature(v):
        if isinstance(v, tf.train.Feature):
            return v
        v = list(v) if isinstance(v, (list, tuple, np.ndarray)) else [v]
        if v and isinstance(v[0], bytes):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
        if v and isinstance(v[0], (float, np.floating)):
            return tf.train.Feature(float_list=tf.train.FloatList(value=v))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=v))
    return tf.train.Example(features=tf.train.Features(
        feature={k: feature(v) for k, v in feats.items()})).SerializeToString()


def test_parse_single_example_every_kind_and_defaults():
    s = _example(f=[1.5, 2.5, 3.5, 4.5], i=[7], b=[b"x", b"yz"], seq=[1.0, 2.0, 3.0, 4.0,
                                                                      5.0, 6.0])
    spec = {
        "f": tf.FixedLenFeature([2, 2], tf.float32),
        "i": tf.FixedLenFeature([], tf.int64),
        "b": tf.FixedLenFeature([2], tf.string),
        "seq": tf.FixedLenSequenceFeature([3], tf.float32),
        "absent_f": tf.FixedLenFeature([2], tf.float32, default_value=[-1.0, -2.0]),
        "absent_s": tf.FixedLenFeature([], tf.string, default_value="dflt"),
        "absent_seq": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
    }
    ser = tf.placeholder(tf.string, [])
    out = tf.parse_single_example(ser, spec)
    assert out["f"].shape.as_list() == [2, 2] and out["f"].dtype == tf.float32
    assert out["i"].shape.as_list() == [] and out["i"].dtype == tf.int64
    assert out["seq"].shape.as_list() == [None, 3]
    assert out["b"].dtype == tf.string
    v = tf.Session().run(out, {ser: s})
    np.testing.assert_array_equal(v["f"], [[1.5, 2.5], [3.5, 4.5]])
    assert v["f"].dtype == np.float32 and v["i"] == 7 and v["i"].dtype == np.int64
    assert list(v["b"]) == [b"x", b"yz"]
    np.testing.assert_array_equal(v["seq"], [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(v["absent_f"], [-1.0, -2.0])
    assert v["absent_s"] == b"dflt"
    assert v["absent_seq"].shape == (0,) and v["absent_seq"].dtype == np.int64
    io_out = tf.io.parse_single_example(s, {"i": tf.io.FixedLenFeature([1], tf.int64)})
    assert tf.Session().run(io_out)["i"].tolist() == [7]


def test_parse_example_batches_and_pads_sequences():
    sers = [_example(x=[1.0, 2.0], n=[1], s=[1, 2, 3]), _example(x=[3.0, 4.0], s=[4]),
            _example(x=[5.0, 6.0], n=[3], s=[])]
    spec = {"x": tf.FixedLenFeature([2], tf.float32),
            "n": tf.FixedLenFeature([], tf.int64, default_value=-1),
            "s": tf.FixedLenSequenceFeature([], tf.int64, allow_missing=True,
                                            default_value=9)}
    out = tf.parse_example(tf.constant(sers), spec)
    assert out["x"].shape.as_list() == [3, 2] and out["s"].shape.as_list() == [3, None]
    v = tf.Session().run(out)
    np.testing.assert_array_equal(v["x"], [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(v["n"], [1, -1, 3])
    np.testing.assert_array_equal(v["s"], [[1, 2, 3], [4, 9, 9], [9, 9, 9]])
    ph = tf.placeholder(tf.string, [None])
    o2 = tf.io.parse_example(ph, {"x": tf.FixedLenFeature([2], tf.float32)})
    assert o2["x"].shape.as_list() == [None, 2]
    assert tf.Session().run(o2, {ph: np.array([], object)})["x"].shape == (0, 2)
    with pytest.raises(InvalidArgumentError, match="allow_missing to be True"):
        tf.parse_example(sers, {"s": tf.FixedLenSequenceFeature([], tf.int64)})


def test_parse_errors_have_tf_messages():
    sess = tf.Session()
    s = _example(x=[1.0, 2.0, 3.0], i=[1])

    def run_single(spec, data=s):
        return sess.run(tf.parse_single_example(data, spec))

    with pytest.raises(InvalidArgumentError, match=r"^Feature: y \(data type: float\) is "
                       r"required but could not be found\.$"):
        run_single({"y": tf.FixedLenFeature([], tf.float32)})
    with pytest.raises(InvalidArgumentError, match=r"^Name: <unknown>, Feature: y \(data "
                       r"type: int64\) is required but could not be found\.$"):
        sess.run(tf.parse_example([s], {"y": tf.FixedLenFeature([], tf.int64)}))
    msg = (r"^Name: <unknown>, Key: x, Index: 0\.  Number of float values != expected\.  "
           r"Values size: 3 but output shape: \[2\]$")
    with pytest.raises(InvalidArgumentError, match=msg):
        run_single({"x": tf.FixedLenFeature([2], tf.float32)})
    with pytest.raises(InvalidArgumentError, match=r"Name: ex1, Key: x, Index: 1\.  Number "
                       r"of float values != expected"):
        sess.run(tf.parse_example([_example(x=[1.0, 2.0]), s],
                                  {"x": tf.FixedLenFeature([2], tf.float32)},
                                  example_names=["ex0", "ex1"]))
    with pytest.raises(InvalidArgumentError, match=r"Key: i, Index: 0\.  Data types don't "
                       r"match\. Data type: int64 but expected type: float"):
        run_single({"i": tf.FixedLenFeature([], tf.float32)})
    with pytest.raises(InvalidArgumentError, match="not a multiple of stride length"):
        run_single({"x": tf.FixedLenSequenceFeature([2], tf.float32)})
    with pytest.raises(InvalidArgumentError, match="Could not parse example input"):
        run_single({"x": tf.FixedLenFeature([3], tf.float32)}, b"\x0a\x05ab")
    with pytest.raises(UnimplementedError, match="SequenceExample"):
        tf.parse_single_sequence_example(s, {"v": tf.VarLenFeature(tf.float32)})
    with pytest.raises(TypeError, match="not in the list of allowed values"):
        tf.parse_single_example(s, {"x": tf.FixedLenFeature([3], tf.int32)})
    with pytest.raises(InvalidArgumentError, match="Cannot reshape"):
        tf.parse_single_example(s, {"x": tf.FixedLenFeature([3], tf.float32,
                                                             default_value=[1.0])})
    with pytest.raises(InvalidArgumentError, match="must be a scalar"):
        tf.parse_single_example([s], {"x": tf.FixedLenFeature([3], tf.float32)})


def test_parse_single_sequence_example():
    se = tf.train.SequenceExample()
    se.context.feature["len"].int64_list.value.append(3)
    for t in range(3):
        se.feature_lists.feature_list["tok"].feature.add().int64_list.value.extend([t, 10 * t])
        se.feature_lists.feature_list["w"].feature.add().float_list.value.append(t / 2)
    ctx, seq = tf.parse_single_sequence_example(
        se.SerializeToString(),
        context_features={"len": tf.FixedLenFeature([], tf.int64),
                          "lang": tf.FixedLenFeature([], tf.string, default_value="en")},
        sequence_features={"tok": tf.FixedLenSequenceFeature([2], tf.int64),
                           "w": tf.FixedLenSequenceFeature([], tf.float32),
                           "gone": tf.FixedLenSequenceFeature([], tf.float32,
                                                              allow_missing=True)})
    assert seq["tok"].shape.as_list() == [None, 2]
    c, s = tf.Session().run([ctx, seq])
    assert c["len"] == 3 and c["lang"] == b"en"
    np.testing.assert_array_equal(s["tok"], [[0, 0], [1, 10], [2, 20]])
    np.testing.assert_allclose(s["w"], [0.0, 0.5, 1.0])
    assert s["gone"].shape == (0,)
    with pytest.raises(InvalidArgumentError, match="Feature list 'x' is required"):
        tf.Session().run(tf.parse_single_sequence_example(
            se.SerializeToString(), sequence_features={
                "x": tf.FixedLenSequenceFeature([], tf.float32)})[1])


# ---- decode_raw / decode_csv / string_to_number / as_string -----------------------------

@pytest.mark.parametrize("dt", [tf.uint8, tf.int16, tf.int32, tf.int64, tf.float16,
                                tf.float32, tf.float64])
def test_decode_raw_against_numpy(dt):
    rng = np.random.default_rng(5)
    arr = (rng.standard_normal((2, 3, 4)) * 100).astype(dt.np)
    strings = np.array([[row.tobytes() for row in m] for m in arr], dtype=object)
    x = tf.placeholder(tf.string, [2, 3])
    out = tf.decode_raw(x, dt)
    assert out.shape.as_list() == [2, 3, None] and out.dtype == dt
    np.testing.assert_array_equal(tf.Session().run(out, {x: strings}), arr)
    big = tf.io.decode_raw(strings, dt, little_endian=False)
    swapped = np.frombuffer(b"".join(row.tobytes() for m in arr for row in m),
                            dtype=np.dtype(dt.np).newbyteorder(">")).reshape(arr.shape)
    np.testing.assert_array_equal(tf.Session().run(big), swapped)


def test_decode_raw_errors():
    sess = tf.Session()
    with pytest.raises(InvalidArgumentError, match="length 5 that is not a multiple of 4, "
                       "the size of float"):
        sess.run(tf.decode_raw([b"12345"], tf.float32))
    with pytest.raises(InvalidArgumentError, match="element 1 has size 2 != 4"):
        sess.run(tf.decode_raw([b"1234", b"12"], tf.uint8))


def test_decode_csv_against_python():
    import csv
    lines = ['1,2.5,"a,""b"" c",7', ',,plain,', '-3,1e3,"",8', '4,nan,x,NA']
    recs = tf.placeholder(tf.string, [None])
    cols = tf.decode_csv(recs, [[0], [-1.0], ["dflt"], tf.constant([5], tf.int64)],
                         na_value="NA")
    assert [c.dtype for c in cols] == [tf.int32, tf.float32, tf.string, tf.int64]
    assert cols[0].shape.as_list() == [None]
    got = tf.Session().run(cols, {recs: np.array(lines, object)})
    ref = list(csv.reader(lines))
    assert got[0].tolist() == [int(r[0]) if r[0] else 0 for r in ref]
    np.testing.assert_array_equal(got[1], np.array([float(r[1]) if r[1] else -1.0
                                                    for r in ref], np.float32))
    assert got[2].tolist() == [r[2].encode() if r[2] else b"dflt" for r in ref]
    assert got[3].tolist() == [int(r[3]) if r[3] not in ("", "NA") else 5 for r in ref]
    # field_delim, select_cols, use_quote_delim=False
    a, c = tf.decode_csv(["1|x|2.5", "2|y|3"], [[0], [0.0]], field_delim="|",
                         select_cols=[0, 2])
    b = tf.decode_csv(['"q"|z'], [[""], [""]], field_delim="|", use_quote_delim=False)
    va, vc, vb = tf.Session().run([a, c, b])
    assert va.tolist() == [1, 2] and vc.tolist() == [2.5, 3.0]
    assert [x.tolist() for x in vb] == [[b'"q"'], [b"z"]]


def test_decode_csv_errors():
    sess = tf.Session()
    with pytest.raises(InvalidArgumentError, match="Expect 2 fields but have 3 in record 0"):
        sess.run(tf.decode_csv(["1,2,3"], [[0], [0]]))
    with pytest.raises(InvalidArgumentError, match="Field 1 is required but missing in "
                       "record 0"):
        sess.run(tf.decode_csv(["1,"], [[0], tf.constant([], tf.int32)]))
    with pytest.raises(InvalidArgumentError, match="Field 0 in record 1 is not a valid "
                       "int32: 2.5"):
        sess.run(tf.decode_csv(["1", "2.5"], [[0]]))
    with pytest.raises(InvalidArgumentError, match="Quoted field has to end with quote"):
        sess.run(tf.decode_csv(['"ab"c,1'], [[""], [0]]))


def test_string_to_number_and_as_string():
    strs = ["1.5", "-2", "1e3", " 7 ", "inf", "-0.25"]
    x = tf.string_to_number(strs)
    assert x.dtype == tf.float32 and x.shape.as_list() == [6]
    sess = tf.Session()
    np.testing.assert_array_equal(sess.run(x), np.array([float(s) for s in strs], np.float32))
    i = tf.string_to_number(tf.constant([["12", "-3"]]), out_type=tf.int64)
    assert i.shape.as_list() == [1, 2]
    np.testing.assert_array_equal(sess.run(i), [[12, -3]])
    with pytest.raises(InvalidArgumentError, match="StringToNumberOp could not correctly "
                       "convert string: 1.5"):
        sess.run(tf.string_to_number(["1.5"], tf.int32))
    with pytest.raises(InvalidArgumentError, match="could not correctly convert string: 3e9"):
        sess.run(tf.string_to_number(["3e9"], tf.int32))
    with pytest.raises(InvalidArgumentError):
        sess.run(tf.string_to_number(["abc"]))
    vals = np.array([1.5, -0.1234567, 100.0, np.inf], np.float32)
    assert sess.run(tf.as_string(vals)).tolist() == \
        [(b"%f" % v) if np.isfinite(v) else b"inf" for v in vals]
    assert sess.run(tf.as_string(vals[:3], precision=2)).tolist() == \
        [b"%.2f" % v for v in vals[:3]]
    assert sess.run(tf.as_string(vals[:3], scientific=True, precision=3)).tolist() == \
        [b"%.3e" % v for v in vals[:3]]
    assert sess.run(tf.as_string(vals[:3], shortest=True)).tolist() == \
        [b"%g" % v for v in vals[:3]]
    ints = np.array([5, -42, 123456], np.int64)
    assert sess.run(tf.as_string(ints)).tolist() == [b"%d" % v for v in ints]
    assert sess.run(tf.as_string(ints, width=6, fill="0")).tolist() == \
        [b"%06d" % v for v in ints]
    assert sess.run(tf.as_string(tf.constant([True, False]))).tolist() == [b"true", b"false"]
    with pytest.raises(InvalidArgumentError, match="Cannot select both"):
        tf.as_string(vals, scientific=True, shortest=True)
    # string_to_number inverts as_string
    back = sess.run(tf.string_to_number(tf.as_string(ints), tf.int64))
    np.testing.assert_array_equal(back, ints)


# ---- an input pipeline end to end -----------------------------------------------------------

def _write_digits(path, images, labels, comp=""):
    with tf.python_io.TFRecordWriter(path, tf.python_io.TFRecordOptions(comp)) as w:
        for img, lab in zip(images, labels):
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[img.tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(lab)])),
            })).SerializeToString())


def test_mnist_like_tfrecord_pipeline_trains_softmax(tmp_path):
    rng = np.random.default_rng(0)
    n, classes, side = 600, 4, 8
    protos = rng.integers(0, 256, (classes, side * side)).astype(np.float32)
    labels = rng.integers(0, classes, n)
    images = np.clip(protos[labels] + rng.normal(0, 40, (n, side * side)), 0, 255) \
        .astype(np.uint8).reshape(n, side, side)
    files = [str(tmp_path / "train-0.tfrecord"), str(tmp_path / "train-1.tfrecord.gz")]
    _write_digits(files[0], images[:300], labels[:300])
    _write_digits(files[1], images[300:], labels[300:], "GZIP")

    def parse(serialized):
        f = tf.parse_single_example(serialized, {
            "image_raw": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64)})
        img = tf.cast(tf.decode_raw(f["image_raw"], tf.uint8), tf.float32) / 255.0
        return tf.reshape(img, [side * side]), tf.cast(f["label"], tf.int32)

    def dataset(name, comp):
        return tf.data.TFRecordDataset(name, compression_type=comp).map(parse)

    train = dataset(files[0], "").concatenate(dataset(files[1], "GZIP"))
    train = train.shuffle(600, seed=1).repeat().batch(32)
    assert train.output_shapes[0].as_list() == [None, side * side]
    x, y = train.make_one_shot_iterator().get_next()
    w = tf.Variable(tf.zeros([side * side, classes]))
    b = tf.Variable(tf.zeros([classes]))
    logits = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    # evaluation: the first file again, through an initializable iterator and parse_example
    ev = tf.data.TFRecordDataset(files[0]).batch(100).map(
        lambda s: tf.parse_example(s, {"image_raw": tf.FixedLenFeature([], tf.string),
                                       "label": tf.FixedLenFeature([], tf.int64)}))
    ev_it = ev.make_initializable_iterator()
    batch = ev_it.get_next()
    ex = tf.reshape(tf.cast(tf.decode_raw(batch["image_raw"], tf.uint8), tf.float32) / 255.0,
                    [-1, side * side])
    correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(tf.matmul(ex, w) + b, 1),
                                             batch["label"]), tf.int32))
    sess = tf.Session(config=jit_config())
    sess.run(tf.global_variables_initializer())
    first = sess.run(loss)
    for _ in range(150):
        _, lv = sess.run([step, loss])
    assert lv < first / 4
    sess.run(ev_it.initializer)
    hits = sum(_drain(sess, correct))
    assert hits / 300 > 0.97
    # the decoded images are the images written
    it = dataset(files[1], "GZIP").batch(300).make_one_shot_iterator().get_next()
    xs, ys = sess.run(it)
    np.testing.assert_allclose(xs, images[300:].reshape(300, -1) / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(ys, labels[300:])
    with pytest.raises(NotFoundError):
        sess.run(tf.data.TFRecordDataset(str(tmp_path / "nope")).make_one_shot_iterator()
                 .get_next())
    assert os.path.getsize(files[1]) < os.path.getsize(files[0])
