"""tf.data.experimental (TF 1.13-1.15): the transformations scripts pass to Dataset.apply
(shuffle_and_repeat, map_and_batch, parallel_interleave), AUTOTUNE, dataset samplers, CSV
datasets, Options, get_single_element.

The pipeline runs on the host one element at a time, so the parallelism and prefetching
arguments change nothing: the elements are the same, in TF's deterministic order (sloppy
interleaving is the deterministic order too).
"""

from __future__ import annotations

import csv
import io

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.data.dataset import Dataset
from xlapy.compat.v1.data.structure import _flatten, _Spec
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.tensor_shape import TensorShape

AUTOTUNE = -1


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    return lambda ds: ds.shuffle(buffer_size, seed=seed).repeat(count)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    return lambda ds: ds.map(map_func).batch(batch_size, drop_remainder=drop_remainder)


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    return lambda ds: ds.interleave(map_func, cycle_length=cycle_length,
                                    block_length=block_length)


def unbatch():
    return lambda ds: ds.unbatch()


def ignore_errors():
    def apply(ds):
        raise UnimplementedError("tf.data.experimental.ignore_errors: xlapy's host pipeline "
                                 "stops at the first error of a stage; filter the bad "
                                 "elements out instead")
    return apply


def get_single_element(dataset):
    """The only element of dataset, as tensors (an error at run time unless it has exactly
    one)."""
    return dataset.take(1).make_one_shot_iterator().get_next()


class Options:
    """tf.data.Options: accepted, changes nothing in a host pipeline."""

    def __init__(self):
        self.experimental_deterministic = None
        self.experimental_optimization = _Attrs()
        self.experimental_threading = _Attrs()
        self.experimental_stats = _Attrs()
        self.experimental_slack = None

    def merge(self, options):
        return self


class _Attrs:
    def __getattr__(self, name):
        return None


def sample_from_datasets(datasets, weights=None, seed=None):
    """Elements drawn from the datasets at random (with probabilities `weights`, uniform by
    default), until every dataset is exhausted (an exhausted one is no longer drawn)."""
    datasets = list(datasets)
    if not datasets:
        raise InvalidArgumentError("sample_from_datasets: no datasets")
    w = np.ones(len(datasets)) if weights is None else np.asarray(weights, np.float64)
    if hasattr(weights, "op") or w.shape != (len(datasets),):
        raise InvalidArgumentError("sample_from_datasets: weights must be a list of "
                                   f"{len(datasets)} numbers")
    first = _flatten(datasets[0]._structure)
    for d in datasets[1:]:
        other = _flatten(d._structure)
        if len(other) != len(first) or any(a.dtype != b.dtype for a, b in zip(first, other)):
            raise InvalidArgumentError("sample_from_datasets: the datasets' element types "
                                       "differ")

    def elements(ctx):
        rng = np.random.default_rng(seed)
        its = [iter(d._elements(ctx)) for d in datasets]
        live = list(range(len(its)))
        while live:
            p = w[live] / w[live].sum()
            k = live[int(rng.choice(len(live), p=p))]
            try:
                yield next(its[k])
            except StopIteration:
                live.remove(k)
    return Dataset(elements, datasets[0]._structure,
                   [c for d in datasets for c in d._captures])


def choose_from_datasets(datasets, choice_dataset):
    """Element i from datasets[choice[i]] (choice_dataset: int64 scalars)."""
    datasets = list(datasets)

    def elements(ctx):
        its = [iter(d._elements(ctx)) for d in datasets]
        for (c,) in choice_dataset._elements(ctx):
            k = int(c)
            if not 0 <= k < len(its):
                raise InvalidArgumentError(f"choose_from_datasets: choice {k} out of range "
                                           f"[0, {len(its)})")
            try:
                yield next(its[k])
            except StopIteration:
                return
    return Dataset(elements, datasets[0]._structure,
                   [c for d in datasets for c in d._captures] + choice_dataset._captures)


# ---- CSV -------------------------------------------------------------------------------------

def _read_text(path, compression_type):
    from xlapy.compat.v1.data.readers import _read
    return _read(path, (compression_type or "").upper()).decode("utf-8")


def _infer_dtype(values):
    """int32, float32 or string: the narrowest type every non-empty value parses as."""
    kind = dtypes.int32
    for v in values:
        if v == "":
            continue
        try:
            int(v)
            continue
        except ValueError:
            pass
        try:
            float(v)
            kind = dtypes.float32
        except ValueError:
            return dtypes.string
    return kind


def _convert(value, dtype, default, na_value, column):
    if value == "" or value == na_value:
        if default is None:
            raise InvalidArgumentError(f"Field {column} is required but missing in record")
        return default
    if dtype == dtypes.string:
        return value.encode()
    try:
        return dtype.np.type(int(value) if dtype.is_integer else float(value))
    except ValueError:
        raise InvalidArgumentError(f"Field {column} in record is not a valid "
                                   f"{dtype.name}: {value!r}") from None


def _defaults(column_defaults):
    """(dtype, default value or None) per column from TF's record_defaults forms: a type,
    or a one-element list holding the default value (an empty list: required)."""
    out = []
    for d in column_defaults:
        if isinstance(d, dtypes.DType) or isinstance(d, type) or isinstance(d, str) and \
                d in ("float32", "float64", "int32", "int64", "string"):
            out.append((dtypes.as_dtype(d), None))
            continue
        v = list(d) if isinstance(d, (list, tuple, np.ndarray)) else [d]
        if hasattr(d, "op"):
            from xlapy.compat.v1.ops._common import constant_value
            c = constant_value(d)
            if c is None:
                raise InvalidArgumentError("CSV column defaults must be known when the graph "
                                           "is built")
            v = list(np.ravel(c))
            out.append((d.dtype, v[0] if v else None))
            continue
        if not v:
            raise InvalidArgumentError("a column default [] needs a type: give a dtype")
        x = v[0]
        if isinstance(x, (bytes, str)):
            out.append((dtypes.string, x.encode() if isinstance(x, str) else x))
        elif isinstance(x, (bool, np.bool_)):
            raise InvalidArgumentError("CSV columns cannot be bool")
        elif isinstance(x, (int, np.integer)):
            out.append((dtypes.int32, np.int32(x)))
        else:
            out.append((dtypes.float32, np.float32(x)))
    return out


def _rows(filenames, header, field_delim, use_quote_delim, compression_type):
    for path in filenames:
        text = _read_text(path, compression_type)
        reader = csv.reader(io.StringIO(text), delimiter=field_delim,
                            quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE)
        for i, row in enumerate(reader):
            if header and i == 0:
                continue
            if row:
                yield row


def _files(file_pattern):
    import glob as _glob
    pats = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
    pats = [p.decode() if isinstance(p, bytes) else str(p) for p in pats]
    names = sorted({f for p in pats for f in _glob.glob(p)})
    if not names:
        from xlapy.compat.v1.errors import NotFoundError
        raise NotFoundError(f"No files match {', '.join(pats)}")
    return names


class CsvDataset(Dataset):
    """The records of CSV files as tuples of scalars, one per (selected) column, typed by
    record_defaults (a dtype: required; [value]: its default)."""

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header=False, field_delim=",", use_quote_delim=True, na_value="",
                 select_cols=None):
        names = _files(filenames)
        defs = _defaults(record_defaults)
        cols = list(select_cols) if select_cols is not None else list(range(len(defs)))
        if len(cols) != len(defs):
            raise InvalidArgumentError("select_cols and record_defaults must have the same "
                                       "length")

        def elements(ctx):
            for row in _rows(names, header, field_delim, use_quote_delim, compression_type):
                if max(cols) >= len(row):
                    raise InvalidArgumentError(f"Expect {max(cols) + 1} fields but have "
                                               f"{len(row)} in record")
                yield [np.asarray(_convert(row[c], dt, dv, na_value, c),
                                  object if dt == dtypes.string else dt.np)
                       for c, (dt, dv) in zip(cols, defs)]
        super().__init__(elements, tuple(_Spec(dt, TensorShape([])) for dt, _ in defs))


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None,
                     label_name=None, select_columns=None, field_delim=",",
                     use_quote_delim=True, na_value="", header=True, num_epochs=None,
                     shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=1, sloppy=False,
                     num_rows_for_inference=100, compression_type=None,
                     ignore_errors=False):
    """Batches of (features dict, label) (or the dict alone without label_name) from CSV
    files with a header row naming the columns (or column_names); column types from
    column_defaults or inferred from the first num_rows_for_inference rows (int32, float32
    or string)."""
    names = _files(file_pattern)
    first_rows = []
    for row in _rows(names, False, field_delim, use_quote_delim, compression_type):
        first_rows.append(row)
        if len(first_rows) > num_rows_for_inference:
            break
    if column_names is None:
        if not header:
            raise InvalidArgumentError("Cannot infer column names without a header line.")
        column_names = first_rows[0]
    column_names = list(column_names)
    data_rows = first_rows[1:] if header else first_rows
    if select_columns is not None:
        idx = [column_names.index(c) if isinstance(c, str) else int(c)
               for c in select_columns]
    else:
        idx = list(range(len(column_names)))
    if column_defaults is not None:
        defs = _defaults(column_defaults)
    else:
        defs = [(_infer_dtype([r[i] for r in data_rows if i < len(r)]), None) for i in idx]
        defs = [(dt, (b"" if dt == dtypes.string else dt.np.type(0))) for dt, _ in defs]
    keys = [column_names[i] for i in idx]
    if label_name is not None and label_name not in keys:
        raise InvalidArgumentError(f"`label_name` provided must be one of the columns: "
                                   f"{keys}")
    ds = CsvDataset(names, [[d] if d is not None else dt for dt, d in defs],
                    compression_type=compression_type, header=header,
                    field_delim=field_delim, use_quote_delim=use_quote_delim,
                    na_value=na_value, select_cols=idx)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)

    def to_dict(*cols):
        feats = dict(zip(keys, cols))
        if label_name is None:
            return feats
        label = feats.pop(label_name)
        return feats, label
    return ds.batch(batch_size).map(to_dict)


__all__ = ["AUTOTUNE", "CsvDataset", "Options", "choose_from_datasets",
           "get_single_element", "ignore_errors", "make_csv_dataset", "map_and_batch",
           "parallel_interleave", "sample_from_datasets", "shuffle_and_repeat", "unbatch"]
