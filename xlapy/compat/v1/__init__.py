"""xlapy.compat.v1: the TensorFlow 1.x graph-and-session API on xlapy.

The rule for users: a TF 1.x script runs on xlapy after replacing the module name
`tensorflow` with `xlapy.compat.v1` in its imports:

    import xlapy.compat.v1 as tf
    from xlapy.compat.v1.examples.tutorials.mnist import input_data
    from xlapy.compat.v1.python.client import timeline

Without XLA, Session.run executes the graph op by op with NumPy kernels. With
config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1 (or
TF_XLA_FLAGS=--tf_xla_auto_jit=2), jit_scope or ops on /device:XLA_CPU:0, clusters of ops
are compiled by xlapy (HLO, passes, LLVM) and run as one step. See docs/compat_v1.md.
"""

from __future__ import annotations

import sys

# ops register themselves on import
from xlapy.compat.v1.ops import (array_ops, batch_matmul_ops, index_ops, lookup_ops, math_ops,
                                 nn_ops, random_ops, script_ops, state_ops)
from xlapy.compat.v1 import errors
from xlapy.compat.v1.dtypes import (
    DType, as_dtype, bfloat16, bool, complex64, complex128, double, float16, float32, float64,
    half, int8, int16, int32, int64, string, uint8, uint16)
from xlapy.compat.v1.framework import (Graph, GraphKeys, Operation, Tensor,
                                       add_to_collection, control_dependencies,
                                       convert_to_tensor, device, get_collection,
                                       get_default_graph, name_scope, reset_default_graph)
from xlapy.compat.v1.tensor_shape import Dimension, TensorShape
from xlapy.compat.v1.gradients import gradients
from xlapy.compat.v1.custom_gradients import (NotDifferentiable, RegisterGradient,
                                              custom_gradient, hessians, identity_n,
                                              no_gradient)
from xlapy.compat.v1.ops.array_ops import (
    broadcast_to, concat, constant, expand_dims, fill, group, identity, no_op, one_hot, ones,
    ones_like, pad, placeholder, rank, reshape, shape, size, slice_ as slice, squeeze, stack,
    stop_gradient, tile, transpose, unstack, where, zeros, zeros_like)
from xlapy.compat.v1.ops.array_ops import tuple_ as tuple
from xlapy.compat.v1.ops.index_ops import strided_slice_op as strided_slice
from xlapy.compat.v1.ops.math_ops import (
    abs, add, add_n, argmax, argmin, cast, ceil, cos, div, divide, equal, exp, floor, floordiv,
    greater, greater_equal, less, less_equal, log, log1p, logical_and, logical_not, logical_or,
    matmul, maximum, minimum, mod, multiply, negative, not_equal, pow, realdiv, reciprocal,
    reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum, rsqrt,
    scalar_mul, sign, sin, sqrt, square, squared_difference, subtract, to_float, to_int32,
    to_int64, truediv)
from xlapy.compat.v1.ops.math_ops import subtract as sub, multiply as mul
from xlapy.compat.v1.ops.nn_ops import sigmoid, tanh
from xlapy.compat.v1.ops.random_ops import (random_normal, random_uniform,
                                            set_random_seed, truncated_normal)
from xlapy.compat.v1.ops.script_ops import py_func
from xlapy.compat.v1.misc_api import (is_variable_initialized, make_template,
                                      model_variables, moving_average_variables,
                                      numpy_function, report_uninitialized_variables)
from xlapy.compat.v1.ops.random_ops import get_seed
from xlapy.compat.v1.protos import (ConfigProto, GPUOptions, GraphOptions,
                                    OptimizerOptions, RunMetadata, RunOptions)
from xlapy.compat.v1.session import (InteractiveSession, Session,
                                     get_default_session)
from xlapy.compat.v1.variables import (AUTO_REUSE, Variable, VariableScope,
                                       all_variables, constant_initializer, get_variable,
                                       get_variable_scope, global_variables,
                                       global_variables_initializer,
                                       glorot_uniform_initializer, initialize_all_variables,
                                       local_variables, local_variables_initializer,
                                       ones_initializer, random_normal_initializer,
                                       random_uniform_initializer, trainable_variables,
                                       truncated_normal_initializer, variable_scope,
                                       variables_initializer, zeros_initializer)
from xlapy.compat.v1 import app, contrib, losses, nn, summary, train
from xlapy.compat.v1 import compat, function, gfile, logging, python
from xlapy.compat.v1.app import flags
from xlapy.compat.v1.ops.api import *  # noqa: F403  (control flow, gathers, ...)
from xlapy.compat.v1 import layers, nest
from xlapy.compat.v1.ops.api_more import *  # noqa: F403  (linalg, special math, random, ...)
from xlapy.compat.v1 import linalg, math, random  # tf.linalg, tf.math, tf.random
from xlapy.compat.v1.init_ops import (glorot_normal_initializer, orthogonal_initializer,
                                      uniform_unit_scaling_initializer,
                                      variance_scaling_initializer)
from xlapy.compat.v1 import data, debugging, image, initializers, io, metrics
from xlapy.compat.v1 import python_io  # tf.python_io (TFRecord files)
from xlapy.compat.v1 import distributions, estimator, feature_column, keras
from xlapy.compat.v1.ops.queue_ops import FIFOQueue, QueueBase, RandomShuffleQueue
from xlapy.compat.v1.train.queue_runner import start_queue_runners
from xlapy.compat.v1.sparse_tensor import (SparseTensor, SparseTensorValue,
                                           convert_to_tensor_or_sparse_tensor,
                                           sparse_placeholder)
from xlapy.compat.v1.ops.sparse_ops import (sparse_add, sparse_concat, sparse_reduce_sum,
                                            sparse_reorder, sparse_reshape, sparse_retain,
                                            sparse_tensor_dense_matmul, sparse_tensor_to_dense,
                                            sparse_to_dense, sparse_transpose)
from xlapy.compat.v1.ops.string_ops import string_split
from xlapy.compat.v1 import sparse, strings
from xlapy.compat.v1.ops.api_text import *  # noqa: F403  (string ops, tables, readers)
from xlapy.compat.v1.ops.api_image_signal import *  # noqa: F403  (space_to_batch, fft)
from xlapy.compat.v1 import lookup
from xlapy.compat.v1 import signal, spectral  # tf.signal, tf.spectral (FFTs, STFTs, MFCCs)
from xlapy.compat.v1 import bitwise, manip, quantization
from xlapy.compat.v1.quantization import (fake_quant_with_min_max_args,
                                          fake_quant_with_min_max_vars)
from xlapy.compat.v1.graph_def import (AttrValue, GraphDef, NameAttrList, NodeDef,
                                       TensorProto, TensorShapeProto, make_ndarray,
                                       make_tensor_proto)
from xlapy.compat.v1.proto.graph_pb import FunctionDef, FunctionDefLibrary, OpDef, VersionDef
from xlapy.compat.v1.proto.meta_graph_pb import (CollectionDef, MetaGraphDef, SignatureDef,
                                                 TensorInfo)
from xlapy.compat.v1.importer import import_graph_def
from xlapy.compat.v1 import graph_util, saved_model
from xlapy.compat.v1.ops.api_misc import *  # noqa: F403  (IndexedSlices, init_scope, ...)
from xlapy.compat.v1.ops.api_math_extra import *  # noqa: F403  (segment ops, special, ...)
from xlapy.compat.v1 import sets  # tf.sets
from xlapy.compat.v1.ops.nnx_io import count_up_to
from xlapy.compat.v1.ops.nnx_random import random_poisson
from xlapy.compat.v1.ops.queue_more import *  # noqa: F403  (PaddingFIFOQueue, accumulators)
from xlapy.compat.v1.ops.sparse_more import *  # noqa: F403  (sparse_slice, sparse_split, ...)
from xlapy.compat.v1.framework_more import *  # noqa: F403  (GradientTape, partitioners, ...)
from xlapy.compat.v1.ops.api_more2 import *  # noqa: F403  (quantize, fingerprint, betainc, ...)
from xlapy.compat.v1 import queue  # tf.queue (the queue classes)
from xlapy.compat.v1 import config, sysconfig  # tf.config, tf.sysconfig
from xlapy.compat.v1.ops.misc_more3 import (decode_compressed, load_file_system_library,
                                            load_library, load_op_library)
from xlapy.compat.v1.ops.session_handle_ops import (delete_session_tensor,
                                                    get_session_handle, get_session_tensor)
from xlapy.compat.v1.module import Module  # tf.Module

compat.v1 = sys.modules[__name__]  # tf.compat.v1 is this module, as in TF 1.15

newaxis = None
__version__ = "1.15.0-xlapy"  # the TF 1.x API level this module follows
VERSION = __version__


# submodules imported on first use (tf.test imports unittest: about 13 ms of every import;
# tf.profiler, its views and protos, about 10)
_LAZY_SUBMODULES = ("test", "profiler")


def __getattr__(name):
    if name in ("Summary", "Event", "SessionLog", "HistogramProto"):  # tf.Summary protobufs
        return getattr(summary, name)
    if name in _LAZY_SUBMODULES:
        import importlib  # (the lazy submodules above)
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'xlapy.compat.v1' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
