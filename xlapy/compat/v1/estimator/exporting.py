"""Estimator.export_savedmodel: the PREDICT graph of a model_fn, fed by a serving input
receiver and restored from a checkpoint, written as a SavedModel in a new timestamped
directory export_dir_base/<seconds since the epoch> (TF's layout), tagged SERVING, with a
signature per EstimatorSpec.export_outputs entry (estimator/export.py)."""

from __future__ import annotations

import os
import shutil
import time

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.estimator import export as export_lib
from xlapy.compat.v1.estimator.spec import ModeKeys

_DEFAULT_KEY = "serving_default"


def timestamped_export_dir(export_dir_base) -> str:
    """export_dir_base/<int(time.time())>; a later second when that one is taken (TF waits
    for the next second; two exports in one second take consecutive numbers here)."""
    base = os.fspath(export_dir_base)
    if isinstance(base, bytes):
        base = base.decode()
    stamp = int(time.time())
    while os.path.exists(os.path.join(base, str(stamp))) or \
            os.path.exists(os.path.join(base, f"temp-{stamp}")):
        stamp += 1
    return os.path.join(base, str(stamp))


def default_export_outputs(predictions):
    return {_DEFAULT_KEY:
            export_lib.PredictOutput(predictions)}


def export_saved_model(estimator, export_dir_base, serving_input_receiver_fn,
                       assets_extra=None, as_text=False, checkpoint_path=None) -> bytes:
    from xlapy.compat.v1.ops.array_ops import group
    from xlapy.compat.v1.ops.lookup_table_ops import tables_initializer
    from xlapy.compat.v1.saved_model.builder import SavedModelBuilder
    from xlapy.compat.v1.saved_model.tag_constants import SERVING
    from xlapy.compat.v1.session import Session
    from xlapy.compat.v1.train.saver import Saver
    from xlapy.compat.v1.train.training_util import get_or_create_global_step
    from xlapy.compat.v1.variables import local_variables_initializer
    if serving_input_receiver_fn is None or not callable(serving_input_receiver_fn):
        raise InvalidArgumentError("An input_receiver_fn must be defined.")
    path = checkpoint_path or estimator.latest_checkpoint()
    if not path:
        raise InvalidArgumentError(f"Couldn't find trained model at {estimator.model_dir}.")
    with estimator._graph().as_default():
        get_or_create_global_step()
        receiver = serving_input_receiver_fn()
        if not isinstance(receiver, export_lib.ServingInputReceiver):
            raise InvalidTypeError(f"serving_input_receiver_fn must return a "
                                   f"ServingInputReceiver, got {type(receiver).__name__}")
        spec = estimator._spec(receiver.features, None, ModeKeys.PREDICT)
        outputs = spec.export_outputs or default_export_outputs(spec.predictions)
        sigs = build_all_signature_defs(receiver.receiver_tensors, outputs,
                                                   receiver.receiver_tensors_alternatives)
        main_op = group(local_variables_initializer(), tables_initializer(),
                        name="legacy_init_op")
        saver = Saver(allow_empty=True, max_to_keep=0, sharded=True)
        final = timestamped_export_dir(export_dir_base)
        temp = os.path.join(os.path.dirname(final), f"temp-{os.path.basename(final)}")
        with Session(config=estimator.config.session_config) as sess:
            saver.restore(sess, path)
            builder = SavedModelBuilder(temp)
            builder.add_meta_graph_and_variables(sess, [SERVING], signature_def_map=sigs,
                                                 main_op=main_op, saver=saver,
                                                 clear_devices=True)
            builder.save(as_text)
    try:
        if assets_extra:
            extra = os.path.join(temp, "assets.extra")
            for dest, source in assets_extra.items():
                target = os.path.join(extra, dest)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(source, target)
        os.rename(temp, final)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return final.encode()


def build_all_signature_defs(receiver_tensors, export_outputs,
                             receiver_tensors_alternatives=None):
    """{signature key: SignatureDef} (TF's export.build_all_signature_defs); invalid ones
    (a classify signature over non-string receivers) are logged and left out."""
    from xlapy.compat.v1 import logging
    if not isinstance(export_outputs, dict):
        raise InvalidTypeError("export_outputs must be a dict and not "
                               f"{type(export_outputs).__name__}")
    for k, v in export_outputs.items():
        if not isinstance(v, export_lib.ExportOutput):
            raise InvalidTypeError(f"Values in export_outputs must be ExportOutput objects; "
                                   f"{k!r} is {v!r}")
    receivers = {None: receiver_tensors}
    receivers.update(receiver_tensors_alternatives or {})
    out = {}
    for rname, rtensors in receivers.items():
        for key, output in export_outputs.items():
            name = key if rname is None else f"{rname}:{key}"
            try:
                out[name] = output.as_signature_def(rtensors)
            except InvalidArgumentError as e:
                logging.warning("Signature %s is excluded from export: %s", name, e)
    if _DEFAULT_KEY not in out:
        logging.warning("Export includes no default signature!")
    return out
