"""Text in TF 1.x input pipelines: the string ops against Python references, lookup tables
(tensor and file vocabularies, FarmHash OOV buckets, in tf.data map functions),
VarLenFeature / SparseFeature parsing into SparseTensors, FixedLengthRecordDataset and the
queue-based readers with string_input_producer and batch."""

import os

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import (FailedPreconditionError, InvalidArgumentError,
                                    OutOfRangeError, UnimplementedError)

from .test_premade import FINGERPRINTS


def run(*fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        out = sess.run(list(fetches), feed)
    return out[0] if len(fetches) == 1 else out


def objs(*vals, shape=None):
    a = np.empty(len(vals), object)
    a[:] = [v.encode() if isinstance(v, str) else v for v in vals]
    return a if shape is None else a.reshape(shape)


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.tolist() == want.tolist(), (got, want)


WORDS = ["", "a", "héllo wörld", "  Spaced Out\t", "ABC def", "ünï"]


# ---- string ops ------------------------------------------------------------------------------

def test_string_join_broadcasts_scalars():
    x = tf.constant([["a", "b"], ["", "é"]])
    j = tf.string_join([x, "-", x], separator="|")
    assert j.shape.as_list() == [2, 2] and j.dtype == tf.string
    same(run(j), objs("a|-|a", "b|-|b", "|-|", "é|-|é", shape=[2, 2]))
    assert run(tf.strings.join(["x", "y"])) == b"xy"
    p = tf.placeholder(tf.string, [None])
    with pytest.raises(InvalidArgumentError, match="Input shapes do not match"):
        tf.string_join([x, tf.constant(["a", "b", "c"])])
    with pytest.raises(InvalidArgumentError, match="Input shapes do not match"):
        run(tf.string_join([p, tf.constant(["a", "b"])]), feed={p: ["q"] * 3})
    with pytest.raises(TypeError):
        tf.string_join([tf.constant([1, 2])])


@pytest.mark.parametrize("axis,keep", [(None, False), (0, False), (1, True), (-1, False),
                                       ([0, 1], True)])
def test_reduce_join_against_python(axis, keep):
    words = np.array([["a", "bé", ""], ["c", "", "dd"]], dtype=object)
    t = tf.reduce_join(tf.constant(words), axis=axis, keep_dims=keep, separator=",")
    axes = [0, 1] if axis is None else [a % 2 for a in np.reshape(axis, [-1])]
    if axes == [0, 1]:
        want = np.array(",".join(words.reshape(-1)).encode(), dtype=object)
        want = want.reshape([1, 1]) if keep else want
    elif axes == [0]:
        want = objs(*[",".join(words[:, j]) for j in range(3)])
    else:
        want = objs(*[",".join(words[i]) for i in range(2)], shape=[2, 1] if keep else None)
    assert t.shape.as_list() == list(want.shape)
    same(run(t), want)
    same(run(tf.strings.reduce_join(tf.constant(np.zeros([2, 0], object)), axis=1)),
         objs("", ""))
    with pytest.raises(InvalidArgumentError, match="Invalid reduction dimension"):
        tf.reduce_join(tf.constant(words), axis=2)


def test_substr_length_bytes_and_chars():
    words = WORDS[2:]
    x = tf.constant(words)
    for pos, ln in ((0, 3), (1, 100), (-3, 2)):
        want = [w.encode()[pos if pos >= 0 else len(w.encode()) + pos:][:ln] for w in words]
        same(run(tf.substr(x, pos, ln)), objs(*want))
        want = [w[pos if pos >= 0 else len(w) + pos:][:ln] for w in words]
        same(run(tf.strings.substr(x, pos, ln, unit="UTF8_CHAR")), objs(*want))
    # pos and len broadcast elementwise
    got = run(tf.substr(tf.constant(["hello", "world"]), [0, 2], [2, 3]))
    same(got, objs("he", "rld"))
    with pytest.raises(InvalidArgumentError, match="pos 5 out of range for string"):
        run(tf.substr(tf.constant(["abc"]), 5, 1))
    same(run(tf.strings.length(tf.constant(WORDS))), [len(w.encode()) for w in WORDS])
    same(run(tf.strings.length(tf.constant(WORDS), unit="UTF8_CHAR")), [len(w) for w in WORDS])
    assert tf.strings.length(tf.constant(WORDS)).dtype == tf.int32
    with pytest.raises(InvalidArgumentError, match="unit"):
        tf.strings.length(tf.constant(WORDS), unit="CHAR")


def test_regex_replace_and_full_match():
    import re
    x = tf.constant(WORDS)
    for pat, rw, glob in ((r"[aeiouö]", "_", True), (r"(\w)(\w*)", r"\2\1", True),
                          (r"\s+", " ", False), ("^$", "EMPTY", True)):
        want = [re.sub(pat, rw.replace("\\2\\1", r"\2\1"), w, count=0 if glob else 1)
                for w in WORDS]
        same(run(tf.regex_replace(x, pat, rw, replace_global=glob)), objs(*want))
    same(run(tf.strings.regex_replace(tf.constant(["ab"]), "b", r"<\0\\>")), objs("a<b\\>"))
    same(run(tf.strings.regex_full_match(x, r"[a-zé ]*ö?[a-z]*")),
         [re.fullmatch(r"[a-zé ]*ö?[a-z]*", w) is not None for w in WORDS])
    with pytest.raises(InvalidArgumentError, match="Invalid pattern"):
        run(tf.strings.regex_full_match(x, "(a"))
    with pytest.raises(InvalidArgumentError, match="Rewrite schema error"):
        run(tf.regex_replace(x, "(a)", r"\2"))
    with pytest.raises(InvalidArgumentError, match="scalar"):
        tf.strings.regex_replace(x, tf.constant(["a", "b"]), "c")


def test_strip_lower_upper():
    x = tf.constant(WORDS)
    same(run(tf.strings.strip(x)), objs(*[w.strip(" \t\n\r\v\f") for w in WORDS]))
    ascii_lower = [w.encode().lower() for w in WORDS]  # ASCII letters only, as TF's default
    same(run(tf.strings.lower(x)), objs(*ascii_lower))
    same(run(tf.strings.upper(x)), objs(*[w.encode().upper() for w in WORDS]))
    same(run(tf.strings.upper(x, encoding="utf-8")), objs(*[w.upper() for w in WORDS]))
    same(run(tf.strings.lower(x, encoding="utf-8")), objs(*[w.lower() for w in WORDS]))


def test_to_number_and_hash_buckets():
    same(run(tf.strings.to_number(tf.constant(["1.5", "-2", "1e3"]))), [1.5, -2.0, 1000.0])
    same(run(tf.strings.to_number(tf.constant(["7", "-3"]), tf.int64)), [7, -3])
    with pytest.raises(InvalidArgumentError, match="could not correctly convert"):
        run(tf.strings.to_number(tf.constant(["x"])))
    keys = list(FINGERPRINTS)
    for n in (3, 1000):
        got = run(tf.strings.to_hash_bucket_fast(tf.constant(keys), n))
        same(got, [FINGERPRINTS[k] % n for k in keys])  # '' hashes too (no -1)
    same(run(tf.string_to_hash_bucket_fast(["Hello", "TensorFlow", "2.x"], 3)), [0, 2, 2])
    with pytest.raises(TypeError):
        tf.strings.to_hash_bucket_fast(tf.constant([1]), 3)


# ---- lookup tables ---------------------------------------------------------------------------

def test_index_table_from_tensor_with_oov_buckets():
    vocab = ["emerson", "lake", "palmer"]
    table = tf.contrib.lookup.index_table_from_tensor(tf.constant(vocab), num_oov_buckets=5)
    keys = ["emerson", "lake", "Hello", "palmer", "TensorFlow", "", "a"]
    ids = table.lookup(tf.constant(keys))
    assert ids.dtype == tf.int64 and ids.shape.as_list() == [7]
    want = [vocab.index(k) if k in vocab else 3 + FINGERPRINTS[k] % 5 for k in keys]
    got, size = run(ids, table.size())
    same(got, want)
    assert size == 8
    plain = tf.contrib.lookup.index_table_from_tensor(vocab, default_value=-7)
    same(run(plain.lookup(tf.constant([["lake", "x"], ["palmer", ""]]))), [[1, -7], [2, -7]])
    ints = tf.contrib.lookup.index_table_from_tensor([10, 20, -7], num_oov_buckets=2,
                                                     dtype=tf.int64)
    got = run(ints.lookup(tf.constant([20, 123, -7], tf.int64)))
    same(got, [1, 3 + FINGERPRINTS["123"] % 2, 2])


def test_tables_need_their_initializer():
    table = tf.contrib.lookup.index_table_from_tensor(["a", "b"])
    ids = table.lookup(tf.constant(["b"]))
    assert table.init in tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)
    assert tf.GraphKeys.TABLE_INITIALIZERS == "table_initializer"
    with tf.Session() as sess:
        with pytest.raises(FailedPreconditionError, match="Table not initialized"):
            sess.run(ids)
        with pytest.raises(FailedPreconditionError, match="Table not initialized"):
            sess.run(table.size())
        sess.run(table.initializer)
        sess.run(tf.tables_initializer())  # again: keeps the contents
        same(sess.run(ids), [1])
    with tf.Session() as sess:  # every session has its own tables
        with pytest.raises(FailedPreconditionError):
            sess.run(ids)


def test_hash_table_and_initializers():
    init = tf.contrib.lookup.KeyValueTensorInitializer(["x", "y", "z"], [1.5, -2.0, 3.0])
    table = tf.contrib.lookup.HashTable(init, -1.0)
    assert (table.key_dtype, table.value_dtype) == (tf.string, tf.float32)
    same(run(table.lookup(tf.constant(["z", "w", "x"]))), [3.0, -1.0, 1.5])
    s = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([3, 1], tf.int64), tf.constant(["three", "one"])), "?")
    same(run(s.lookup(tf.constant([1, 2, 3], tf.int64))), objs("one", "?", "three"))
    with pytest.raises(TypeError, match="Signature mismatch"):
        table.lookup(tf.constant([1.0]))
    vt = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
        ["a", "b"], tf.constant([0, 1], tf.int64)), num_oov_buckets=3)
    same(run(vt.lookup(tf.constant(["b", "Hello"]))), [1, 2 + FINGERPRINTS["Hello"] % 3])
    dup = tf.contrib.lookup.HashTable(tf.contrib.lookup.KeyValueTensorInitializer(
        ["a", "a"], tf.constant([1, 2], tf.int64)), -1)
    with tf.Session() as sess, pytest.raises(FailedPreconditionError, match="same key"):
        sess.run(dup.init)


def test_tables_from_files(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes("the\nquick\r\nbrøwn\nfox\n".encode())
    t = tf.contrib.lookup.index_table_from_file(str(vocab), num_oov_buckets=1)
    same(run(t.lookup(tf.constant(["fox", "brøwn", "the", "dog"]))), [3, 2, 0, 4])
    t3 = tf.contrib.lookup.index_table_from_file(str(vocab), vocab_size=2, default_value=-5)
    same(run(t3.lookup(tf.constant(["quick", "fox"]))), [1, -5])
    back = tf.contrib.lookup.index_to_string_table_from_file(str(vocab))
    same(run(back.lookup(tf.constant([2, 0, 9], tf.int64))), objs("brøwn", "the", "UNK"))
    cols = tmp_path / "cols.tsv"
    cols.write_bytes(b"a\t10\tx\nb\t20\ty\n")
    by_col = tf.contrib.lookup.HashTable(tf.contrib.lookup.TextFileInitializer(
        str(cols), tf.string, 2, tf.int64, 1), -1)
    same(run(by_col.lookup(tf.constant(["y", "x", "a"]))), [20, 10, -1])
    bad = tf.contrib.lookup.index_table_from_file(str(vocab), vocab_size=9)
    with tf.Session() as sess, pytest.raises(InvalidArgumentError, match="Invalid vocab_size"):
        sess.run(bad.init)
    few = tf.contrib.lookup.HashTable(tf.contrib.lookup.TextFileInitializer(
        str(vocab), tf.string, 3, tf.int64, tf.contrib.lookup.TextFileIndex.LINE_NUMBER), -1)
    with tf.Session() as sess, pytest.raises(InvalidArgumentError, match="number of columns"):
        sess.run(few.init)


def test_index_to_string_from_tensor():
    t = tf.contrib.lookup.index_to_string_table_from_tensor(["a", "b", "c"], default_value="?")
    same(run(t.lookup(tf.constant([[2, 0], [5, -1]], tf.int64))),
         objs("c", "a", "?", "?", shape=[2, 2]))


def test_lookup_in_dataset_map():
    # the NMT tutorial: src_dataset.map(lambda s: tf.cast(vocab_table.lookup(s), tf.int32))
    vocab = tf.contrib.lookup.index_table_from_tensor(tf.constant(["<unk>", "a", "b", "c"]),
                                                      default_value=0)
    ds = tf.data.Dataset.from_tensor_slices(tf.constant(["a c", "b b a", "d"]))
    ds = ds.map(lambda s: tf.string_split([s]).values)
    ds = ds.map(lambda w: tf.cast(vocab.lookup(w), tf.int32))
    ds = ds.padded_batch(2, padded_shapes=[None])
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run([tf.tables_initializer(), it.initializer])
        same(sess.run(nxt), [[1, 3, 0], [2, 2, 1]])
        same(sess.run(nxt), [[0]])
        with pytest.raises(OutOfRangeError):
            sess.run(nxt)


def test_lookup_of_sparse_keys():
    table = tf.contrib.lookup.index_table_from_tensor(["x", "y"])
    sp = tf.string_split(tf.constant(["y x", "q"]))
    ids = table.lookup(sp)
    assert isinstance(ids, tf.SparseTensor)
    v = run(ids)
    same(v.values, [1, 0, -1])
    same(v.indices, [[0, 0], [0, 1], [1, 0]])


def test_hasher_specs():
    with pytest.raises(UnimplementedError, match="StrongHashSpec"):
        tf.contrib.lookup.index_table_from_tensor(
            ["a"], num_oov_buckets=1, hasher_spec=tf.contrib.lookup.StrongHashSpec([1, 2]))


# ---- VarLenFeature / SparseFeature ------------------------------------------------------------

def _example(**feats):
    def feature(v):
        if v and isinstance(v[0], bytes):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
        if v and isinstance(v[0], float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=v))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=v))
    return tf.train.Example(features=tf.train.Features(
        feature={k: feature(v) for k, v in feats.items()})).SerializeToString()


EXAMPLES = [_example(w=[b"x", "yé".encode()], idx=[3, 1], val=[1.0, 2.0], n=[5]),
            _example(w=[b"z"], idx=[0], val=[5.0], n=[6]),
            _example(n=[7])]


def test_parse_single_example_var_len():
    feats = {"w": tf.VarLenFeature(tf.string), "n": tf.FixedLenFeature([], tf.int64),
             "s": tf.SparseFeature("idx", "val", tf.float32, 4),
             "i": tf.io.VarLenFeature(tf.int64)}
    s = tf.placeholder(tf.string, [])
    out = tf.parse_single_example(s, feats)
    assert isinstance(out["w"], tf.SparseTensor) and out["w"].indices.shape.as_list() == [None, 1]
    with tf.Session() as sess:
        got = sess.run(out, {s: EXAMPLES[0]})
        same(got["w"].indices, [[0], [1]])
        same(got["w"].values, objs("x", "yé"))
        same(got["w"].dense_shape, [2])
        assert got["n"] == 5
        same(got["s"].indices, [[1], [3]])     # sorted by index
        same(got["s"].values, np.float32([2.0, 1.0]))
        same(got["s"].dense_shape, [4])
        assert got["i"].values.shape == (0,) and got["i"].indices.shape == (0, 1)
        same(got["i"].dense_shape, [0])
        dense = sess.run(tf.sparse_tensor_to_dense(out["w"], default_value=""),
                         {s: EXAMPLES[1]})
        same(dense, objs("z"))
        with pytest.raises(InvalidArgumentError, match="Data types don't match"):
            sess.run(tf.parse_single_example(s, {"n": tf.VarLenFeature(tf.float32)}),
                     {s: EXAMPLES[0]})


def test_parse_example_var_len_batch():
    feats = {"w": tf.VarLenFeature(tf.string), "s": tf.SparseFeature("idx", "val",
                                                                     tf.float32, 4)}
    out = tf.parse_example(tf.constant(EXAMPLES), feats)
    assert out["w"].indices.shape.as_list() == [None, 2]
    got = run(out)
    same(got["w"].indices, [[0, 0], [0, 1], [1, 0]])
    same(got["w"].values, objs("x", "yé", "z"))
    same(got["w"].dense_shape, [3, 2])
    same(got["s"].indices, [[0, 1], [0, 3], [1, 0]])
    same(got["s"].dense_shape, [3, 4])
    with pytest.raises(InvalidArgumentError, match="out of bounds"):
        run(tf.parse_example(tf.constant(EXAMPLES), {"s": tf.SparseFeature(
            "idx", "val", tf.float32, 2)}))


def test_var_len_in_dataset_map_then_padded_batch(tmp_path):
    path = str(tmp_path / "ex.tfrecord")
    with tf.python_io.TFRecordWriter(path) as w:
        for e in EXAMPLES:
            w.write(e)

    def parse(s):
        f = tf.parse_single_example(s, {"w": tf.VarLenFeature(tf.string),
                                        "n": tf.FixedLenFeature([], tf.int64)})
        return tf.sparse_tensor_to_dense(f["w"], default_value=""), f["n"]
    ds = tf.data.TFRecordDataset(path).map(parse).padded_batch(3, ([None], []))
    w, n = ds.make_one_shot_iterator().get_next()
    got_w, got_n = run(w, n)
    same(got_w, objs("x", "yé", "z", "", "", "", shape=[3, 2]))
    same(got_n, [5, 6, 7])


# ---- readers ---------------------------------------------------------------------------------

def _cifar_file(path, n, header=b"", footer=b""):
    rng = np.random.default_rng(len(path))
    labels = rng.integers(0, 10, n).astype(np.uint8)
    images = rng.integers(0, 256, (n, 3, 4, 4)).astype(np.uint8)
    with open(path, "wb") as f:
        f.write(header)
        for lab, img in zip(labels, images):
            f.write(bytes([lab]) + img.tobytes())
        f.write(footer)
    return labels, images


def test_fixed_length_record_dataset(tmp_path):
    a, b = str(tmp_path / "a.bin"), str(tmp_path / "b.bin")
    la, ia = _cifar_file(a, 3, b"HDR", b"FOOT")
    lb, ib = _cifar_file(b, 2, b"HDR", b"FOOT" + b"x" * 10)  # + a partial record (ignored)
    rec = 1 + 3 * 4 * 4

    def decode(r):
        raw = tf.decode_raw(r, tf.uint8)
        label = tf.cast(tf.strided_slice(raw, [0], [1], shrink_axis_mask=1), tf.int32)
        return label, tf.transpose(tf.reshape(raw[1:], [3, 4, 4]), [1, 2, 0])
    ds = tf.data.FixedLengthRecordDataset([a, b], rec, header_bytes=3, footer_bytes=4)
    labels, images = ds.map(decode).batch(5).make_one_shot_iterator().get_next()
    got_l, got_i = run(labels, images)
    same(got_l, np.concatenate([la, lb]))
    same(got_i, np.concatenate([ia, ib]).transpose(0, 2, 3, 1))
    with pytest.raises(InvalidArgumentError, match="record_bytes"):
        tf.data.FixedLengthRecordDataset([a], 0)


def _drain(sess, *ts):
    out = []
    while True:
        try:
            out.append(sess.run(list(ts)))
        except OutOfRangeError:
            return out


def test_cifar_queue_pipeline(tmp_path):
    """The TF 1.0-era CIFAR-10 input: string_input_producer, FixedLengthRecordReader,
    decode_raw, shuffle_batch and QueueRunners."""
    files = [str(tmp_path / f"data_batch_{i}.bin") for i in range(2)]
    data = [_cifar_file(f, 4) for f in files]
    rec = 1 + 3 * 4 * 4
    queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
    reader = tf.FixedLengthRecordReader(record_bytes=rec)
    key, value = reader.read(queue)
    raw = tf.decode_raw(value, tf.uint8)
    label = tf.cast(tf.strided_slice(raw, [0], [1]), tf.int32)
    image = tf.transpose(tf.reshape(tf.strided_slice(raw, [1], [rec], [1]), [3, 4, 4]),
                         [1, 2, 0])
    image.set_shape([4, 4, 3])
    label.set_shape([1])
    images, labels, keys = tf.train.shuffle_batch([image, label, key], batch_size=3,
                                                  capacity=20, min_after_dequeue=2, seed=1,
                                                  allow_smaller_final_batch=True)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        batches = _drain(sess, images, labels, keys)
        coord.request_stop()
        coord.join(threads)
    got = {k.decode(): (img, lab[0]) for b in batches for img, lab, k in zip(*b)}
    want = {f"{f}:{i}": (imgs[i].transpose(1, 2, 0), labs[i])
            for f, (labs, imgs) in zip(files, data) for i in range(4)}
    assert sorted(got) == sorted(want)
    for k, (img, lab) in want.items():
        same(got[k][0], img)
        assert got[k][1] == lab


def test_tfrecord_and_text_readers(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    recs = [b"first", b"", "thïrd".encode()]
    with tf.python_io.TFRecordWriter(path) as w:
        for r in recs:
            w.write(r)
    q = tf.train.string_input_producer([path], num_epochs=2, shuffle=False)
    key, value = tf.TFRecordReader().read(q)
    k2, v2 = tf.train.batch([key, value], batch_size=2, allow_smaller_final_batch=True)
    offsets = np.cumsum([0] + [16 + len(r) for r in recs])[:3]
    txt = str(tmp_path / "lines.csv")
    with open(txt, "wb") as f:
        f.write(b"h1,h2\n1,a\n2,b\r\n3,c")
    tq = tf.train.string_input_producer([txt], num_epochs=1, shuffle=False)
    reader = tf.TextLineReader(skip_header_lines=1)
    tk, tv = reader.read_up_to(tq, 2)
    whole = tf.train.string_input_producer([txt], num_epochs=1, shuffle=False)
    wk, wv = tf.WholeFileReader().read(whole)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = _drain(sess, k2, v2)
        lines = _drain(sess, tk, tv)
        assert sess.run(reader.num_records_produced()) == 3
        assert sess.run(reader.num_work_units_completed()) == 1
        assert sess.run([wk, wv]) == [txt.encode(), open(txt, "rb").read()]
        coord.request_stop()
        coord.join(threads)
    keys = [k for b in got for k in b[0]]
    vals = [v for b in got for v in b[1]]
    assert keys == [f"{path}:{o}".encode() for o in offsets] * 2
    assert vals == recs * 2
    assert [len(b[0]) for b in got] == [2, 2, 2]
    same(np.concatenate([b[0] for b in lines]), objs(f"{txt}:2", f"{txt}:3", f"{txt}:4"))
    same(np.concatenate([b[1] for b in lines]), objs("1,a", "2,b", "3,c"))
    assert os.path.exists(path)


def test_sparse_elements_through_map_filter_and_batch():
    ds = tf.data.Dataset.from_tensor_slices(tf.constant(EXAMPLES))
    ds = ds.map(lambda s: tf.parse_single_example(s, {"w": tf.VarLenFeature(tf.string),
                                                      "n": tf.FixedLenFeature([], tf.int64)}))
    assert ds.output_classes["w"] is tf.SparseTensor
    assert ds.output_shapes["w"].as_list() == [None]
    kept = ds.filter(lambda d: tf.size(d["w"].values) > 0)
    batched = kept.batch(2)
    assert batched.output_shapes["w"].as_list() == [None, None]
    nxt = batched.make_one_shot_iterator().get_next()
    assert isinstance(nxt["w"], tf.SparseTensor)
    dense = ds.map(lambda d: tf.sparse_tensor_to_dense(d["w"], default_value="?"))
    one = dense.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        got = sess.run(nxt)
        same(got["w"].indices, [[0, 0], [0, 1], [1, 0]])   # TF 1.x's batch of SparseTensors
        same(got["w"].values, objs("x", "yé", "z"))
        same(got["w"].dense_shape, [2, 2])
        same(got["n"], [5, 6])
        with pytest.raises(OutOfRangeError):
            sess.run(nxt)
        same(sess.run(one), objs("x", "yé"))
        same(sess.run(one), objs("z"))
        same(sess.run(one), np.zeros([0], object))
    with pytest.raises(UnimplementedError, match="padded_batch"):
        ds.padded_batch(2, {"w": [None], "n": []})
    with pytest.raises(UnimplementedError, match="unbatch"):
        ds.batch(2).unbatch()


def test_lookup_feeds_a_compiled_cluster():
    from .conftest import jit_config
    table = tf.contrib.lookup.index_table_from_tensor(["a", "b", "c"], num_oov_buckets=1)
    words = tf.placeholder(tf.string, [None])
    ids = tf.cast(table.lookup(tf.strings.lower(words)), tf.int32)
    emb = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    out = tf.reduce_sum(tf.gather(emb, ids) * 2.0, axis=1)
    with tf.Session(config=jit_config()) as sess:
        sess.run(tf.tables_initializer())
        same(sess.run(out, {words: ["B", "zz", "a"]}), [10.0, 26.0, 2.0])


def test_monitored_session_initializes_tables():
    table = tf.contrib.lookup.index_table_from_tensor(["a", "b"])
    ids = table.lookup(tf.constant(["b", "a", "c"]))
    with tf.train.MonitoredSession() as sess:
        same(sess.run(ids), [1, 0, -1])


def test_strided_slice_takes_tf_signature():
    x = tf.constant(np.arange(24).reshape(2, 3, 4))
    a = np.arange(24).reshape(2, 3, 4)
    same(run(tf.strided_slice(x, [0, 1, 0], [2, 3, 4], [1, 1, 2])), a[0:2, 1:3, 0:4:2])
    same(run(tf.strided_slice(x, [1, 0, 0], [0, 0, 3], begin_mask=6, end_mask=2,
                              shrink_axis_mask=1)), a[1, :, 0:3])
    same(run(tf.strided_slice(x, [0, 0], [1, 1], new_axis_mask=1, ellipsis_mask=2)),
         a[None, ...])
