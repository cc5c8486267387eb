"""tf.estimator.ModeKeys, EstimatorSpec and RunConfig."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError


class ModeKeys:
    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


class EstimatorSpec:
    """What a model_fn returns for one mode: TRAIN needs loss and train_op, EVAL loss,
    PREDICT predictions; eval_metric_ops maps names to (value, update_op) pairs as
    tf.metrics gives them."""

    def __init__(self, mode, predictions=None, loss=None, train_op=None,
                 eval_metric_ops=None, export_outputs=None, training_chief_hooks=None,
                 training_hooks=None, scaffold=None, evaluation_hooks=None,
                 prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise InvalidArgumentError(f"mode must be one of tf.estimator.ModeKeys, got "
                                       f"{mode!r}")
        if mode == ModeKeys.TRAIN and (loss is None or train_op is None):
            raise InvalidArgumentError("Missing loss or train_op: a TRAIN EstimatorSpec needs "
                                       "both")
        if mode == ModeKeys.EVAL and loss is None:
            raise InvalidArgumentError("Missing loss: an EVAL EstimatorSpec needs it")
        if mode == ModeKeys.PREDICT and predictions is None:
            raise InvalidArgumentError("Missing predictions: a PREDICT EstimatorSpec needs "
                                       "them")
        metrics = dict(eval_metric_ops or {})
        for k, v in metrics.items():
            if not (isinstance(v, (tuple, list)) and len(v) == 2):
                raise InvalidTypeError(f"eval_metric_ops[{k!r}] must be a (value, update_op) "
                                       f"pair, as tf.metrics returns, got {v!r}")
        self.mode, self.predictions, self.loss, self.train_op = mode, predictions, loss, \
            train_op
        self.eval_metric_ops = metrics
        self.export_outputs = export_outputs
        self.training_chief_hooks = tuple(training_chief_hooks or ())
        self.training_hooks = tuple(training_hooks or ())
        self.evaluation_hooks = tuple(evaluation_hooks or ())
        self.prediction_hooks = tuple(prediction_hooks or ())
        self.scaffold = scaffold

    def _replace(self, **kw):
        d = dict(mode=self.mode, predictions=self.predictions, loss=self.loss,
                 train_op=self.train_op, eval_metric_ops=self.eval_metric_ops,
                 export_outputs=self.export_outputs,
                 training_chief_hooks=self.training_chief_hooks,
                 training_hooks=self.training_hooks, scaffold=self.scaffold,
                 evaluation_hooks=self.evaluation_hooks,
                 prediction_hooks=self.prediction_hooks)
        d.update(kw)
        return EstimatorSpec(**d)


class RunConfig:
    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=None, save_checkpoints_secs=None,
                 session_config=None, keep_checkpoint_max=5,
                 keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None, eval_distribute=None,
                 experimental_distribute=None):
        if save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise InvalidArgumentError("Can not provide both save_checkpoints_steps and "
                                       "save_checkpoints_secs.")
        if save_checkpoints_steps is None and save_checkpoints_secs is None:
            save_checkpoints_secs = 600
        self.model_dir = model_dir
        self.tf_random_seed = tf_random_seed
        self.save_summary_steps = save_summary_steps
        self.save_checkpoints_steps = save_checkpoints_steps
        self.save_checkpoints_secs = save_checkpoints_secs
        self.session_config = session_config
        self.keep_checkpoint_max = keep_checkpoint_max
        self.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self.log_step_count_steps = log_step_count_steps
        self.is_chief, self.num_ps_replicas, self.num_worker_replicas = True, 0, 1
        self.task_type, self.task_id, self.master = "worker", 0, ""

    def replace(self, **kw):
        d = dict(self.__dict__)
        for k in ("is_chief", "num_ps_replicas", "num_worker_replicas", "task_type",
                  "task_id", "master"):
            d.pop(k)
        d.update(kw)
        return RunConfig(**d)
