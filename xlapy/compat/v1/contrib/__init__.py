"""tf.contrib: contrib.compiler.jit (experimental_jit_scope), contrib.crf, contrib.rnn,
contrib.layers (regularizers, conv2d, batch_norm, pooling, dropout, layer_norm,
optimize_loss), contrib.framework (variable selection, arg_scope), contrib.training (HParams,
create_train_op), contrib.losses (the pre-tf.losses API), contrib.metrics (streaming
metrics), contrib.util, contrib.predictor (SavedModel predictors),
contrib.seq2seq and contrib.legacy_seq2seq (their sequence losses), contrib.distributions,
contrib.lookup (lookup tables), contrib.cudnn_rnn (CudnnLSTM / CudnnGRU as stacks of their
compatible cells), contrib.learn (ModeKeys, datasets.load_dataset)."""

from xlapy.compat.v1.contrib import compiler
from xlapy.compat.v1.contrib import crf
from xlapy.compat.v1.contrib import cudnn_rnn
from xlapy.compat.v1.contrib import data
from xlapy.compat.v1.contrib import distributions
from xlapy.compat.v1.contrib import framework
from xlapy.compat.v1.contrib import image
from xlapy.compat.v1.contrib import layers
from xlapy.compat.v1.contrib import learn
from xlapy.compat.v1.contrib import legacy_seq2seq
from xlapy.compat.v1.contrib import lookup
from xlapy.compat.v1.contrib import losses
from xlapy.compat.v1.contrib import opt
from xlapy.compat.v1.contrib import predictor
from xlapy.compat.v1.contrib import rnn
from xlapy.compat.v1.contrib import seq2seq
from xlapy.compat.v1.contrib import slim
from xlapy.compat.v1.contrib import stateless
from xlapy.compat.v1.contrib import summary
from xlapy.compat.v1.contrib import training
from xlapy.compat.v1.contrib import util
