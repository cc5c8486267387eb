"""tf.train: optimizers, learning-rate schedules, the global step, moving averages and
checkpoints (Saver).

  optimizer.py            Optimizer (compute_gradients, apply_gradients, minimize, slots)
  optimizers.py           GradientDescent, Momentum, Adagrad, Adadelta, RMSProp, Adam
  learning_rate_decay.py  exponential_decay, piecewise_constant, polynomial_decay, ...
  training_util.py        get_global_step, create_global_step, get_or_create_global_step
  moving_averages.py      ExponentialMovingAverage
  saver.py                Saver, latest_checkpoint, get_checkpoint_state, checkpoint readers
  checkpoint_io.py        the checkpoint files (xlapy's documented format) and TF's state file
  example_pb.py           Example, SequenceExample and their parts (protobuf messages)
  warm_starting.py        init_from_checkpoint, warm_start
  feed_profiler_hooks.py  FeedFnHook, ProfilerHook
  checkpoint_object.py    Checkpoint, CheckpointManager (object-based checkpoints)
  adagrad_da.py           AdagradDAOptimizer (and its op ApplyAdagradDA)
  sync_replicas.py        SyncReplicasOptimizer, LooperThread
  server.py               Server, ServerDef (in-process)
"""

from xlapy.compat.v1.train.optimizer import Optimizer
from xlapy.compat.v1.train.optimizers import (AdadeltaOptimizer, AdagradOptimizer,
                                              AdamOptimizer, GradientDescentOptimizer,
                                              MomentumOptimizer, RMSPropOptimizer)
from xlapy.compat.v1.train.learning_rate_decay import (cosine_decay, exponential_decay,
                                                       inverse_time_decay, natural_exp_decay,
                                                       piecewise_constant, polynomial_decay)
from xlapy.compat.v1.train.training_util import (assert_global_step, create_global_step,
                                                 get_global_step, get_or_create_global_step,
                                                 global_step)
from xlapy.compat.v1.train.moving_averages import ExponentialMovingAverage
from xlapy.compat.v1.train.coordinator import Coordinator
from xlapy.compat.v1.train.supervisor import Supervisor
from xlapy.compat.v1.train.lr_schedules_more import (cosine_decay_restarts,
                                                     linear_cosine_decay,
                                                     noisy_linear_cosine_decay)
from xlapy.compat.v1.train.ftrl import (FtrlOptimizer, ProximalAdagradOptimizer,
                                        ProximalGradientDescentOptimizer)
from xlapy.compat.v1.train.monitored_session import (ChiefSessionCreator, MonitoredSession,
                                                     MonitoredTrainingSession, Scaffold,
                                                     SingularMonitoredSession)
from xlapy.compat.v1.train.session_run_hook import (CheckpointSaverHook,
                                                    CheckpointSaverListener, LoggingTensorHook,
                                                    NanLossDuringTrainingError, NanTensorHook,
                                                    SecondOrStepTimer, SessionRunArgs,
                                                    SessionRunContext, SessionRunHook,
                                                    SessionRunValues, StepCounterHook,
                                                    StopAtStepHook, SummarySaverHook)
from xlapy.compat.v1.train.checkpoint_io import CheckpointReader, CheckpointState
from xlapy.compat.v1.train.saver import (NewCheckpointReader, Saver, SaverDef,
                                         checkpoint_exists, get_checkpoint_mtimes,
                                         get_checkpoint_state, import_meta_graph,
                                         latest_checkpoint, list_variables, load_checkpoint,
                                         load_variable, remove_checkpoint,
                                         update_checkpoint_state)
from xlapy.compat.v1.train.warm_starting import init_from_checkpoint, warm_start
from xlapy.compat.v1.train.feed_profiler_hooks import FeedFnHook, ProfilerHook
from xlapy.compat.v1.summary.event_reader import summary_iterator
from xlapy.compat.v1.misc_api import write_graph
from xlapy.compat.v1.train.meta_graph import export_meta_graph
from xlapy.compat.v1.train.queue_runner import (QueueRunner,
                                                add_queue_runner, start_queue_runners)
from xlapy.compat.v1.train.input import (batch, input_producer,
                                         range_input_producer, shuffle_batch,
                                         slice_input_producer, string_input_producer)
from xlapy.compat.v1.train.example_pb import (BytesList, Example, Feature, FeatureList,
                                              FeatureLists, Features, FloatList, Int64List,
                                              SequenceExample)
from xlapy.compat.v1.train.input_more import (batch_join, limit_epochs, match_filenames_once,
                                              maybe_batch, maybe_batch_join,
                                              maybe_shuffle_batch, maybe_shuffle_batch_join,
                                              shuffle_batch_join)
from xlapy.compat.v1.train.device_setter import ClusterSpec, replica_device_setter
from xlapy.compat.v1.train.learning_rate_decay import (
    piecewise_constant as piecewise_constant_decay)
from xlapy.compat.v1.train.checkpoint_object import Checkpoint, CheckpointManager
from xlapy.compat.v1.train.adagrad_da import AdagradDAOptimizer
from xlapy.compat.v1.train.sync_replicas import LooperThread, SyncReplicasOptimizer
from xlapy.compat.v1.train.server import Server, ServerDef
