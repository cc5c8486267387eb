"""Every op, from one table: the executor's NumPy kernel against a NumPy reference, the
inferred static shape and dtype against the result, and the XLA-compiled op against the
executor. The whole table is compiled as ONE cluster (everything on XLA_CPU, tied together
by a NoOp), so the test costs one compilation."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.op_registry import registered_ops

R = np.random.default_rng(7)


def f32(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, shape).astype(np.float32)


def i32(*shape, lo=-5, hi=6):
    return R.integers(lo, hi, shape).astype(np.int32)


def softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


X, Y, P, B = f32(3, 4), f32(3, 4), f32(3, 4, lo=0.5, hi=3.0), f32(4)
I, J = i32(3, 4), i32(3, 4, lo=1)
M, N = f32(3, 5), f32(5, 4)
LAB = np.eye(4, dtype=np.float32)[[0, 3, 1]]
SLAB = np.array([2, 0, 3], np.int64)

# name: (op type, builder(*inputs) -> tensor or tuple, reference(*arrays), inputs)
CASES = {
    "neg": ("Neg", tf.negative, np.negative, [X]),
    "abs": ("Abs", tf.abs, np.abs, [X]),
    "sign": ("Sign", tf.sign, np.sign, [X]),
    "square": ("Square", tf.square, np.square, [X]),
    "exp": ("Exp", tf.exp, np.exp, [X]),
    "log": ("Log", tf.log, np.log, [P]),
    "log1p": ("Log1p", tf.log1p, np.log1p, [P]),
    "sqrt": ("Sqrt", tf.sqrt, np.sqrt, [P]),
    "rsqrt": ("Rsqrt", tf.rsqrt, lambda a: 1 / np.sqrt(a), [P]),
    "reciprocal": ("Reciprocal", tf.reciprocal, np.reciprocal, [P]),
    "floor": ("Floor", tf.floor, np.floor, [X]),
    "ceil": ("Ceil", tf.ceil, np.ceil, [X]),
    "sin": ("Sin", tf.sin, np.sin, [X]),
    "cos": ("Cos", tf.cos, np.cos, [X]),
    "tanh": ("Tanh", tf.tanh, np.tanh, [X]),
    "sigmoid": ("Sigmoid", tf.sigmoid, lambda a: 1 / (1 + np.exp(-a)), [X]),
    "relu": ("Relu", tf.nn.relu, lambda a: np.maximum(a, 0), [X]),
    "relu6": ("Relu6", tf.nn.relu6, lambda a: np.clip(a, 0, 6), [X * 4]),
    "softmax": ("Softmax", tf.nn.softmax, softmax, [X]),
    "log_softmax": ("LogSoftmax", tf.nn.log_softmax, lambda a: np.log(softmax(a)), [X]),
    "l2_loss": ("L2Loss", tf.nn.l2_loss, lambda a: (a * a).sum() / 2, [X]),
    "add_bcast": ("Add", tf.add, np.add, [X, B]),
    "sub": ("Sub", tf.subtract, np.subtract, [X, Y]),
    "mul_bcast": ("Mul", tf.multiply, np.multiply, [X, B[None, :]]),
    "div": ("RealDiv", tf.divide, np.divide, [X, P]),
    "floordiv": ("FloorDiv", tf.floordiv, np.floor_divide, [I, J]),
    "floormod": ("FloorMod", tf.mod, np.remainder, [I, J]),
    "maximum": ("Maximum", tf.maximum, np.maximum, [X, Y]),
    "minimum": ("Minimum", tf.minimum, np.minimum, [X, Y]),
    "pow": ("Pow", tf.pow, np.power, [P, X]),
    "sqdiff": ("SquaredDifference", tf.squared_difference, lambda a, b: (a - b) ** 2, [X, Y]),
    "equal": ("Equal", tf.equal, np.equal, [I, J]),
    "not_equal": ("NotEqual", tf.not_equal, np.not_equal, [I, J]),
    "less": ("Less", tf.less, np.less, [X, Y]),
    "less_equal": ("LessEqual", tf.less_equal, np.less_equal, [I, J]),
    "greater": ("Greater", tf.greater, np.greater, [X, Y]),
    "greater_equal": ("GreaterEqual", tf.greater_equal, np.greater_equal, [I, J]),
    "logical": ("LogicalAnd", lambda a, b: tf.logical_or(tf.logical_and(a > 0, b > 0),
                                                         tf.logical_not(a > b)),
                lambda a, b: ((a > 0) & (b > 0)) | ~(a > b), [X, Y]),
    "add_n": ("AddN", lambda a, b: tf.add_n([a, b, a]), lambda a, b: a + b + a, [X, Y]),
    "matmul": ("MatMul", tf.matmul, np.matmul, [M, N]),
    "matmul_ta": ("MatMul", lambda a, b: tf.matmul(a, b, transpose_a=True),
                  lambda a, b: a.T @ b, [M, f32(3, 2)]),
    "matmul_tb": ("MatMul", lambda a, b: tf.matmul(a, b, transpose_b=True),
                  lambda a, b: a @ b.T, [M, f32(2, 5)]),
    "matmul_tab": ("MatMul", lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
                   lambda a, b: a.T @ b.T, [M, f32(2, 3)]),
    "sum": ("Sum", lambda a: tf.reduce_sum(a, 1), lambda a: a.sum(1), [X]),
    "sum_all_keep": ("Sum", lambda a: tf.reduce_sum(a, keepdims=True),
                     lambda a: a.sum(keepdims=True), [X]),
    "sum_int": ("Sum", lambda a: tf.reduce_sum(a, 0), lambda a: a.sum(0).astype(np.int32), [I]),
    "mean": ("Mean", lambda a: tf.reduce_mean(a, 0), lambda a: a.mean(0), [X]),
    "max": ("Max", lambda a: tf.reduce_max(a, 1, keepdims=True),
            lambda a: a.max(1, keepdims=True), [X]),
    "min": ("Min", lambda a: tf.reduce_min(a), lambda a: a.min(), [X]),
    "prod": ("Prod", lambda a: tf.reduce_prod(a, 0), lambda a: a.prod(0), [P]),
    "all_any": ("All", lambda a: tf.logical_and(tf.reduce_all(a > -3, 1), tf.reduce_any(a > 1, 1)),
                lambda a: (a > -3).all(1) & (a > 1).any(1), [X]),
    "argmax": ("ArgMax", lambda a: tf.argmax(a, 1), lambda a: a.argmax(1), [X]),
    "argmin": ("ArgMin", lambda a: tf.argmin(a, 0, output_type=tf.int32),
               lambda a: a.argmin(0).astype(np.int32), [X]),
    "cast": ("Cast", lambda a: tf.cast(a, tf.int32), lambda a: a.astype(np.int32), [X * 3]),
    "cast_bool": ("Cast", lambda a: tf.cast(a > 0, tf.float32),
                  lambda a: (a > 0).astype(np.float32), [X]),
    "reshape": ("Reshape", lambda a: tf.reshape(a, [2, -1]), lambda a: a.reshape(2, -1), [X]),
    "transpose": ("Transpose", lambda a: tf.transpose(a), lambda a: a.T, [X]),
    "concat": ("ConcatV2", lambda a, b: tf.concat([a, b, a], 1),
               lambda a, b: np.concatenate([a, b, a], 1), [X, Y]),
    "stack": ("Pack", lambda a, b: tf.stack([a, b], 1), lambda a, b: np.stack([a, b], 1), [X, Y]),
    "unstack": ("Unpack", lambda a: tuple(tf.unstack(a, axis=1)),
                lambda a: tuple(a[:, i] for i in range(4)), [X]),
    "slice": ("Slice", lambda a: tf.slice(a, [1, 1], [2, -1]), lambda a: a[1:3, 1:], [X]),
    "strided": ("StridedSlice", lambda a: a[1:, ::2], lambda a: a[1:, ::2], [X]),
    "getitem_int": ("StridedSlice", lambda a: a[-1, None], lambda a: a[-1, None], [X]),
    "pad": ("Pad", lambda a: tf.pad(a, [[1, 0], [0, 2]]), lambda a: np.pad(a, [(1, 0), (0, 2)]),
            [X]),
    "tile": ("Tile", lambda a: tf.tile(a, [2, 3]), lambda a: np.tile(a, (2, 3)), [X]),
    "one_hot": ("OneHot", lambda a: tf.one_hot(a, 5), lambda a: np.eye(5, dtype=np.float32)[a],
                [np.array([0, 4, 2], np.int32)]),
    "where": ("SelectV2", lambda a, b: tf.where(a > b, a, b), lambda a, b: np.where(a > b, a, b),
              [X, Y]),
    "expand_dims": ("ExpandDims", lambda a: tf.expand_dims(a, 1), lambda a: a[:, None], [X]),
    "squeeze": ("Squeeze", lambda a: tf.squeeze(a, [0]), lambda a: a[0], [X[:1]]),
    "broadcast_to": ("BroadcastTo", lambda a: tf.broadcast_to(a, [3, 4]),
                     lambda a: np.broadcast_to(a, (3, 4)), [B]),
    "fill": ("Fill", lambda a: tf.fill(tf.shape(a), 2.5),
             lambda a: np.full(a.shape, 2.5, np.float32), [X]),
    "zeros_like": ("ZerosLike", tf.zeros_like, np.zeros_like, [X]),
    "ones_like": ("OnesLike", tf.ones_like, np.ones_like, [X]),
    "shape": ("Shape", tf.shape, lambda a: np.array(a.shape, np.int32), [X]),
    "size": ("Size", tf.size, lambda a: np.int32(a.size), [X]),
    "rank": ("Rank", tf.rank, lambda a: np.int32(a.ndim), [X]),
    "identity": ("Identity", tf.identity, lambda a: a, [X]),
    "stop_gradient": ("StopGradient", tf.stop_gradient, lambda a: a, [X]),
    "bias_add": ("BiasAdd", tf.nn.bias_add, np.add, [X, B]),
    "xent": ("SoftmaxCrossEntropyWithLogits",
             lambda a, b: tuple(tf.nn.softmax_cross_entropy_with_logits(
                 labels=b, logits=a).op.outputs),
             lambda a, b: (-(b * np.log(softmax(a))).sum(1), softmax(a) - b), [X, LAB]),
    "sparse_xent": ("SparseSoftmaxCrossEntropyWithLogits",
                    lambda a, b: tuple(tf.nn.sparse_softmax_cross_entropy_with_logits(
                        labels=b, logits=a).op.outputs),
                    lambda a, b: (-np.log(softmax(a))[np.arange(3), b],
                                  softmax(a) - np.eye(4)[b]), [X, SLAB]),
    "bcast_grad_args": ("BroadcastGradientArgs",
                        lambda a, b: tuple(tf.get_default_graph().create_op(
                            "BroadcastGradientArgs", [tf.shape(a), tf.shape(b)]).outputs),
                        lambda a, b: (np.array([], np.int32), np.array([0], np.int32)),
                        [X, B]),
}


def _build():
    """All cases in one graph; returns (fetches, feed, references)."""
    fetches, feed, refs = {}, {}, {}
    with tf.device("/device:XLA_CPU:0"):
        for name, (_, build, ref, inputs) in CASES.items():
            phs = []
            for i, a in enumerate(inputs):
                p = tf.placeholder(tf.as_dtype(a.dtype), a.shape, name=f"{name}_in{i}")
                feed[p] = a
                phs.append(p)
            fetches[name] = build(*phs)
            refs[name] = ref(*inputs)
        tie = tf.group(*[t for v in fetches.values() for t in (v if isinstance(v, tuple) else [v])],
                       name="tie")
    return fetches, feed, refs, tie


def _check(name, got, want, tensor):
    if isinstance(want, tuple):
        for g, w, t in zip(got, want, tensor):
            _check(name, g, w, t)
        return
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == tensor.dtype.np, f"{name}: dtype {got.dtype} != {tensor.dtype.name}"
    assert tensor.shape.is_compatible_with(got.shape), \
        f"{name}: shape {got.shape} vs {tensor.shape}"
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want.astype(got.dtype), rtol=2e-5, atol=2e-6,
                                   err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_xla_matches_numpy():
    fetches, feed, refs, tie = _build()
    sess = tf.Session()
    summary = sess.cluster_summary([fetches, tie], feed)
    assert summary.startswith("XLA clustering: 1 cluster(s)"), summary
    got, _ = sess.run([fetches, tie], feed)
    for name, value in got.items():
        _check(name, value, refs[name], fetches[name])


def test_executor_matches_numpy():
    # the same table without XLA
    fetches, feed, refs = {}, {}, {}
    for name, (_, build, ref, inputs) in CASES.items():
        phs = []
        for _i, a in enumerate(inputs):
            p = tf.placeholder(tf.as_dtype(a.dtype), a.shape)
            feed[p] = a
            phs.append(p)
        fetches[name] = build(*phs)
        refs[name] = ref(*inputs)
    sess = tf.Session()
    assert "off" in sess.cluster_summary(fetches, feed)
    for name, value in sess.run(fetches, feed).items():
        _check(name, value, refs[name], fetches[name])


# ops covered elsewhere, and why
ELSEWHERE = {
    "Const": "everywhere", "Placeholder": "everywhere", "NoOp": "test_session (targets)",
    "VariableV2": "test_session, test_optimizers", "Assign": "test_session",
    "AssignAdd": "test_session", "AssignSub": "test_session",
    "ApplyGradientDescent": "test_optimizers", "ApplyMomentum": "test_optimizers",
    "ApplyAdam": "test_optimizers", "ApplyAdagrad": "test_optimizers",
    "ApplyRMSProp": "test_train", "ApplyCenteredRMSProp": "test_train",
    "ApplyAdadelta": "test_train",
    "ScalarSummary": "test_summary", "HistogramSummary": "test_summary",
    "ImageSummary": "test_summary", "TensorSummaryV2": "test_summary",
    "MergeSummary": "test_summary", "TensorSummary": "test_estimator_more",
    "AudioSummaryV2": "test_estimator_more", "DefunOutputs": "test_jit_scope",
    "IsVariableInitialized": "test_session",
    "RandomStandardNormal": "test_session", "TruncatedNormal": "test_session",
    "RandomUniform": "test_session", "PyFunc": "test_jit",
    "ReluGrad": "test_gradients", "SigmoidGrad": "test_gradients", "TanhGrad": "test_gradients",
    "BiasAddGrad": "test_gradients", "ReducedShape": "test_gradients",
    "ConcatOffset": "test_gradients", "StridedSliceGrad": "test_gradients",
    "IdentityN": "test_custom_gradients",
}


# the ops of control flow, convolutions, gathers, RNNs ... (tested by their own files)
_FILES = {
    "test_control_flow": "While WhileGrad If IfGrad",
    "test_ctc": "CTCGreedyDecoder CTCBeamSearchDecoder",
    "test_nn_ops": "Conv2D Conv2DBackpropInput Conv2DBackpropFilter Conv3D "
                   "Conv3DBackpropInputV2 Conv3DBackpropFilterV2 DepthwiseConv2dNative "
                   "DepthwiseConv2dNativeBackpropInput DepthwiseConv2dNativeBackpropFilter "
                   "MaxPool MaxPoolGrad AvgPool AvgPoolGrad MaxPool3D MaxPool3DGrad AvgPool3D "
                   "AvgPool3DGrad MaxPoolWithArgmax MaxPoolGradWithArgmax Elu EluGrad Selu "
                   "SeluGrad LeakyRelu LeakyReluGrad Softplus "
                   "SoftplusGrad Softsign SoftsignGrad LRN LRNGrad FusedBatchNorm "
                   "FusedBatchNormGrad LogUniformCandidateSampler UniformCandidateSampler "
                   "TopKV2 InTopKV2",
    "test_array_more": "GatherV2 GatherNd ScatterNd UnsortedSegmentSum SegmentSum Unique "
                       "Where Split SplitV Range LinSpace ReverseV2 ReverseSequence Cumsum "
                       "Cumprod MirrorPad MirrorPadGrad PadV2 MatrixBandPart Einsum "
                       "TruncateDiv TruncateMod IsFinite IsNan IsInf Print PrintV2 "
                       "ScatterUpdate ScatterAdd ScatterSub",
    "test_distributed_hvd": "XlapyAllreduce XlapyBroadcast",
    "test_math_linalg": "Round Erf Erfc Expm1 Lgamma Digamma DivNoNan MatrixInverse "
                        "MatrixInverseGrad MatrixDeterminant MatrixDeterminantGrad "
                        "LogMatrixDeterminant LogMatrixDeterminantGrad MatrixSolve "
                        "MatrixSolveGrad Cholesky CholeskyGrad SelfAdjointEigV2 "
                        "SelfAdjointEigV2Grad Svd SvdGrad Qr QrGrad Diag DiagPart MatrixDiag "
                        "MatrixDiagPart MatrixDiagPartGrad Bitcast SearchSorted "
                        "HistogramFixedWidth InvertPermutation UnsortedSegmentMax "
                        "UnsortedSegmentMin PlaceholderWithDefault DynamicPartition "
                        "DynamicStitch UniqueWithCounts RandomShuffle Multinomial RandomGamma "
                        "RandomGammaGrad BatchMatMulV2",
    "test_ftrl_conv_more": "ApplyFtrl ApplyFtrlV2 ApplyProximalGradientDescent "
                           "ApplyProximalAdagrad",
    "test_data": "IteratorGetNext MakeIterator IteratorToStringHandle",
    "test_queues": "QueueEnqueueV2 QueueEnqueueManyV2 QueueDequeueV2 QueueDequeueManyV2 "
                   "QueueDequeueUpToV2 QueueCloseV2 QueueSizeV2 QueueIsClosedV2 "
                   "XlapyInputProducerEnqueue",
    "test_data (io)": "ReadFile WriteFile DecodeImage EncodePng",
    "test_tfrecord": "ParseSingleExample ParseExample ParseSingleSequenceExample DecodeRaw "
                     "DecodeCSV StringToNumber AsString",
    "test_sparse": "SparseTensorDenseMatMul SparseToDense SparseTensorDenseAdd SparseReduceSum "
                   "SparseReorder SparseReshape SparseAdd SparseAddGrad StringSplit "
                   "StringSplitV2",
    "test_premade": "StringToHashBucketFast XlapyVocabularyLookup XlapyCrossHashed",
    "test_strings": "StringJoin ReduceJoin Substr StringLength RegexReplace RegexFullMatch "
                    "StringStrip StringLower StringUpper InitializeTableV2 "
                    "InitializeTableFromTextFileV2 LookupTableFindV2 LookupTableSizeV2 "
                    "ReaderReadV2 ReaderReadUpToV2 ReaderNumRecordsProducedV2 "
                    "ReaderNumWorkUnitsCompletedV2 ReaderResetV2",
    "test_math_more": "Tan Atan Asin Acos Sinh Cosh Asinh Acosh Atanh Rint Atan2 Xlogy Xdivy "
                      "MulNoNan Assert CheckNumerics Roll MatrixSetDiag "
                      "MatrixTriangularSolve MatrixTriangularSolveGrad TensorScatterUpdate "
                      "TensorScatterAdd TensorScatterSub ListDiff",
    "test_image_more": "SpaceToBatchND BatchToSpaceND NonMaxSuppressionV3 NonMaxSuppressionV4 "
                       "DrawBoundingBoxes SampleDistortedBoundingBoxV2 EncodeJpeg DecodeGif "
                       "ExtractGlimpse",
    "test_signal": "Complex Real Imag ComplexAbs Conj Angle FFT IFFT FFT2D IFFT2D RFFT RFFT2D "
                   "IRFFT IRFFT2D",
    "test_bitwise_quant": "BitwiseAnd BitwiseOr BitwiseXor Invert LeftShift RightShift "
                          "FakeQuantWithMinMaxArgs FakeQuantWithMinMaxArgsGradient "
                          "FakeQuantWithMinMaxVars FakeQuantWithMinMaxVarsGradient",
}
# (one entry per file of the TF 1.x API additions of 2026-11-27; op types added there)
_FILES.update({
    "test_tf1_framework_misc": "Timestamp SerializeTensor ParseTensor EncodeBase64 "
                               "DecodeBase64 MatchingFiles",
    "test_tf1_math_extra": "SegmentMean SegmentMax SegmentMin SegmentProd UnsortedSegmentProd "
                           "Igamma Igammac IgammaGradA Polygamma Zeta BesselI0e BesselI1e "
                           "NextAfter DenseToDenseSetOperation DenseToSparseSetOperation "
                           "SparseToSparseSetOperation SetSize EditDistance",
    "test_tf1_metrics_losses_more": "",
    "test_tf1_nn_image_train_more": "FractionalMaxPool FractionalAvgPool FractionalMaxPoolGrad "
                                    "FractionalAvgPoolGrad FixedUnigramCandidateSampler "
                                    "LearnedUnigramCandidateSampler RandomPoissonV2 "
                                    "StatelessRandomUniform StatelessRandomNormal "
                                    "StatelessRandomUniformInt CountUpTo",
    "test_tf1_contrib_more": "",
})
# (one entry per file of the TF 1.x API additions of 2026-11-27, second round)
_FILES.update({
    "test_profiler": "",
    "test_queues_more": "XlapyPaddingQueueDequeueMany XlapyPaddingQueueDequeueUpTo "
                        "AccumulatorApplyGradient SparseAccumulatorApplyGradient "
                        "AccumulatorTakeGradient SparseAccumulatorTakeGradient "
                        "AccumulatorNumAccumulated AccumulatorSetGlobalStep "
                        "XlapyBucketEnqueue XlapyBucketDequeue",
    "test_sparse_more": "SparseSlice SparseSplit SparseFillEmptyRows SparseSparseMaximum "
                        "SparseSparseMinimum SparseReduceMax SparseReduceMaxSparse "
                        "SparseReduceSumSparse SerializeSparse SerializeManySparse "
                        "DeserializeManySparse SparseCross",
    "test_tf1_math_array_more": "QuantizeV2 Dequantize Fingerprint Betainc CumulativeLogsumexp "
                                "MatrixSquareRoot FFT3D IFFT3D GuaranteeConst",
    "test_tf1_framework_more": "",
    "test_keras_metrics_activations": "",
    "test_contrib_image_metric_learning": "ImageProjectiveTransformV2 "
                                          "ImageConnectedComponents",
    "test_train_more_optimizers": "ApplyAdagradDA XlapySyncReplicasLocalStep "
                                  "XlapySyncReplicasSetLocalStep",
    "test_contrib_feature_columns_data": "XlapySparseFeatureCross",
    "test_tf1_misc_namespaces": "StringFormat UnicodeDecodeWithOffsets UnicodeEncode "
                                "UnicodeTranscode XlapyRowSplitsToSparse DecodeCompressed "
                                "GetSessionHandle GetSessionTensor DeleteSessionTensor",
    "test_contrib_summary": "XlapyCreateSummaryFileWriter XlapyWriteSummary "
                            "XlapyFlushSummaryWriter XlapyCloseSummaryWriter",
    "test_tf1_small_gaps": "",
})
ELSEWHERE.update({op: f for f, ops in _FILES.items() for op in ops.split()})

# ops without an XLA lowering, and why (they run in the executor; clusters form around them)
EXECUTOR_ONLY = {
    # executor-only ops of test_tf1_framework_misc
    "Timestamp": "reads the host's clock", "SerializeTensor": "writes protobuf bytes (strings)",
    "ParseTensor": "reads protobuf bytes (strings); its shape depends on the data",
    "EncodeBase64": "transforms strings (XLA has no string type) on the host",
    "DecodeBase64": "transforms strings (XLA has no string type) on the host",
    "MatchingFiles": "lists the host's files",
    # executor-only ops of test_tf1_math_extra
    **{op: "output shape depends on the data (its last segment id)" for op in (
        "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd")},
    **{op: "set sizes (the output's shape) depend on the data; also strings" for op in (
        "DenseToDenseSetOperation", "DenseToSparseSetOperation", "SparseToSparseSetOperation",
        "SetSize")},
    "EditDistance": "groups SparseTensor entries (data-dependent) and compares strings",
    # executor-only ops of test_tf1_metrics_losses_more
    # executor-only ops of test_tf1_nn_image_train_more
    "FractionalMaxPool": "draws its pooling regions on the host; they shape the loops",
    "FractionalAvgPool": "draws its pooling regions on the host; they shape the loops",
    "FractionalMaxPoolGrad": "loops over pooling regions given as data",
    "FractionalAvgPoolGrad": "loops over pooling regions given as data",
    "FixedUnigramCandidateSampler": "draws with rejection on the host",
    "LearnedUnigramCandidateSampler": "keeps its class counts in the session",
    "RandomPoissonV2": "draws on the host from the op's generator",
    "StatelessRandomUniform": "NumPy's generator seeded by the seed tensor",
    "StatelessRandomNormal": "NumPy's generator seeded by the seed tensor",
    "StatelessRandomUniformInt": "NumPy's generator seeded by the seed tensor",
    "CountUpTo": "reads and writes the session's variable store",
    # executor-only ops of test_profiler
    # executor-only ops of test_queues_more
    **{op: "a queue's or accumulator's contents live in the session (queue_more*.py)"
       for op in ("XlapyPaddingQueueDequeueMany", "XlapyPaddingQueueDequeueUpTo",
                  "AccumulatorApplyGradient", "SparseAccumulatorApplyGradient",
                  "AccumulatorTakeGradient", "SparseAccumulatorTakeGradient",
                  "AccumulatorNumAccumulated", "AccumulatorSetGlobalStep",
                  "XlapyBucketEnqueue", "XlapyBucketDequeue")},
    # executor-only ops of test_sparse_more
    "SparseSlice": "as many entries as the data puts in the slice",
    "SparseSplit": "as many entries per piece as the data puts there",
    "SparseFillEmptyRows": "one entry per empty row: a count the data decides",
    "SparseSparseMaximum": "the union of two index sets: a data-dependent count",
    "SparseSparseMinimum": "the union of two index sets: a data-dependent count",
    "SparseReduceMaxSparse": "one entry per non-empty group: a data-dependent count",
    "SparseReduceSumSparse": "one entry per non-empty group: a data-dependent count",
    "SerializeSparse": "strings (TensorProto bytes)",
    "SerializeManySparse": "strings (TensorProto bytes)",
    "DeserializeManySparse": "parses strings; a data-dependent entry count",
    "SparseCross": "strings and hashes, a data-dependent entry count",
    # executor-only ops of test_tf1_math_array_more
    "Fingerprint": "hashes bytes (FarmHash Fingerprint64) on the host",
    # executor-only ops of test_tf1_framework_more
    # executor-only ops of test_keras_metrics_activations
    # executor-only ops of test_contrib_image_metric_learning
    "ImageConnectedComponents": "labels components by a graph search whose steps depend "
                                "on the data (SciPy on the host)",
    # executor-only ops of test_train_more_optimizers
    **{op: "a replica's local step is per-thread host state of the session" for op in (
        "XlapySyncReplicasLocalStep", "XlapySyncReplicasSetLocalStep")},
    # executor-only ops of test_contrib_feature_columns_data
    "XlapySparseFeatureCross": "hashes strings and crosses a data-dependent number of "
                               "values per example on the host",
    # executor-only ops of test_tf1_misc_namespaces
    **{op: "transforms strings (XLA has no string type) on the host" for op in (
        "StringFormat", "UnicodeDecodeWithOffsets", "UnicodeEncode", "UnicodeTranscode",
        "DecodeCompressed")},
    "XlapyRowSplitsToSparse": "output shape depends on the data (the rows' lengths)",
    **{op: "reads or writes the session's store of persistent tensors" for op in (
        "GetSessionHandle", "GetSessionTensor", "DeleteSessionTensor")},
    # executor-only ops of test_contrib_summary
    **{op: "opens, writes, flushes or closes an event file on the host (a summary "
           "writer's state)" for op in (
        "XlapyCreateSummaryFileWriter", "XlapyWriteSummary", "XlapyFlushSummaryWriter",
        "XlapyCloseSummaryWriter")},
    # executor-only ops of test_tf1_small_gaps
    # executor-only ops of test_tf1_contrib_more
    "Placeholder": "fed by the session", "PyFunc": "runs Python",
    "IsVariableInitialized": "reads the session's variable store",
    "Unique": "output shape depends on the data", "Where": "output shape depends on the data",
    "SegmentSum": "output shape depends on the data (its largest segment id)",
    "Print": "writes to the host's stderr", "PrintV2": "writes to the host's stream",
    "XlapyBroadcast": "sets variables from rank 0 through MPI once, before training",
    "DynamicPartition": "output shapes depend on the data",
    "DynamicStitch": "output shape depends on the data (its largest index)",
    "UniqueWithCounts": "output shapes depend on the data",
    "RandomGammaGrad": "SciPy's incomplete gamma, differentiated in float64",
    "IteratorGetNext": "runs the host-side tf.data pipeline",
    "IteratorToStringHandle": "names a host-side tf.data iterator (a string)",
    "MakeIterator": "restarts the host-side tf.data pipeline",
    "Assert": "raises on the host when its condition is false",
    "CheckNumerics": "raises on the host when its input has NaN or Inf",
    "ListDiff": "output shape depends on the data",
    "CTCGreedyDecoder": "the number of decoded labels (a SparseTensor) depends on the data",
    "CTCBeamSearchDecoder": "a prefix beam search; the decoded lengths depend on the data",
    "ReadFile": "reads a file on the host", "WriteFile": "writes a file on the host",
    "DecodeImage": "decodes with Pillow on the host (shape depends on the data)",
    "EncodePng": "encodes with Pillow on the host",
    "EncodeJpeg": "encodes with Pillow on the host",
    "DecodeGif": "decodes with Pillow on the host (shape depends on the data)",
    "NonMaxSuppressionV3": "the number of boxes kept depends on the data",
    "NonMaxSuppressionV4": "a greedy selection whose kept count depends on the data (padded "
                           "on request after it)",
    **{op: "parses serialized tf.train.Example protos (bytes) on the host" for op in (
        "ParseSingleExample", "ParseExample", "ParseSingleSequenceExample")},
    "DecodeRaw": "reinterprets bytes (strings) on the host",
    "DecodeCSV": "splits and converts text (strings) on the host",
    "StringToNumber": "converts text (strings) on the host",
    "AsString": "formats numbers as strings on the host",
    "SparseAdd": "the number of entries of a sum of SparseTensors depends on the data",
    "SparseAddGrad": "matches the entries of SparseAdd's data-dependent output",
    "StringSplit": "strings (XLA has no string type); the number of tokens is data",
    "StringSplitV2": "strings (XLA has no string type); the number of tokens is data",
    "StringToHashBucketFast": "hashes strings (FarmHash) on the host",
    "XlapyVocabularyLookup": "looks keys (strings) up in a host-side vocabulary table",
    "XlapyCrossHashed": "hashes crosses of strings (FarmHash) on the host",
    **{op: "transforms strings (XLA has no string type) on the host" for op in (
        "StringJoin", "ReduceJoin", "Substr", "StringLength", "RegexReplace", "RegexFullMatch",
        "StringStrip", "StringLower", "StringUpper")},
    **{op: "a lookup table's contents live in the session (lookup_table_ops.py)" for op in (
        "InitializeTableV2", "InitializeTableFromTextFileV2", "LookupTableFindV2",
        "LookupTableSizeV2")},
    **{op: "a reader reads files on the host; its position lives in the session" for op in (
        "ReaderReadV2", "ReaderReadUpToV2", "ReaderNumRecordsProducedV2",
        "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2")},
    **{op: "a queue's contents live in the session (queue_ops.py)" for op in (
        "QueueEnqueueV2", "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2",
        "QueueDequeueUpToV2", "QueueCloseV2", "QueueSizeV2", "QueueIsClosedV2",
        "XlapyInputProducerEnqueue")},
}


def test_every_registered_op_is_tested():
    tested = {c[0] for c in CASES.values()} | {"LogicalOr", "LogicalNot", "Any"}
    real = {t for t in registered_ops() if not t.startswith("Test")}  # test_jit's test ops
    missing = sorted(real - tested - set(ELSEWHERE))
    assert not missing, f"ops without a row in the op table: {missing}"


@pytest.mark.parametrize("op_type", sorted(registered_ops()))
def test_every_op_has_kernel_and_shape_rule(op_type):
    d = registered_ops()[op_type]
    assert d.infer is not None and d.kernel is not None
    if d.lowering is None and not op_type.startswith("Test"):
        # stays in the executor: must be a documented exception
        assert d.rng or op_type in EXECUTOR_ONLY or op_type in SUMMARY_OPS, op_type


# summaries are strings, which XLA does not compute: they run in the executor
SUMMARY_OPS = ("ScalarSummary", "HistogramSummary", "ImageSummary", "TensorSummaryV2",
               "MergeSummary", "TensorSummary", "AudioSummaryV2")
