"""tf.contrib.data (TF 1.15): the Dataset.apply transformations that became
tf.data.experimental, under their contrib names, and a few more.

Shared with tf.data.experimental (data/experimental.py): map_and_batch, shuffle_and_repeat,
parallel_interleave (and sloppy_interleave: the same deterministic order), unbatch,
sample_from_datasets, choose_from_datasets, get_single_element, CsvDataset,
make_csv_dataset, ignore_errors (which, as there, raises UnimplementedError: xlapy's host
pipeline cannot resume a stage after an error). In transformations.py:
batch_and_drop_remainder, padded_batch_and_drop_remainder, sliding_window_batch,
group_by_window, bucket_by_sequence_length, scan, rejection_resample, enumerate_dataset,
unique, Counter, assert_element_shape, prefetch_to_device.
"""

from xlapy.compat.v1.contrib.data.transformations import (Counter, assert_element_shape,
                                                          batch_and_drop_remainder,
                                                          bucket_by_sequence_length,
                                                          enumerate_dataset, group_by_window,
                                                          padded_batch_and_drop_remainder,
                                                          prefetch_to_device,
                                                          rejection_resample, scan,
                                                          sliding_window_batch, unique)
from xlapy.compat.v1.data.experimental import (CsvDataset, choose_from_datasets,
                                               get_single_element, ignore_errors,
                                               make_csv_dataset, map_and_batch,
                                               parallel_interleave, sample_from_datasets,
                                               shuffle_and_repeat, unbatch)


def sloppy_interleave(map_func, cycle_length, block_length=1):
    """parallel_interleave(..., sloppy=True): xlapy's order is the deterministic one."""
    return parallel_interleave(map_func, cycle_length, block_length, sloppy=True)


__all__ = ["Counter", "CsvDataset", "assert_element_shape", "batch_and_drop_remainder",
           "bucket_by_sequence_length", "choose_from_datasets", "enumerate_dataset",
           "get_single_element", "group_by_window", "ignore_errors", "make_csv_dataset",
           "map_and_batch", "padded_batch_and_drop_remainder", "parallel_interleave",
           "prefetch_to_device", "rejection_resample", "sample_from_datasets", "scan",
           "shuffle_and_repeat", "sliding_window_batch", "sloppy_interleave", "unbatch",
           "unique"]
