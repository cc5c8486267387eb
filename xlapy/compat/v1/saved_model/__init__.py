"""tf.saved_model: SavedModel directories (TF 1.x's serving format).

    tf.saved_model.simple_save(sess, "export/1", inputs={"x": x}, outputs={"y": y})
    meta = tf.saved_model.loader.load(sess2, [tf.saved_model.tag_constants.SERVING],
                                      "export/1")

The directory is laid out as TF's (saved_model.pb, variables/variables.index and
.data-00000-of-00001); the SavedModel and MetaGraphDef protos are TF's, the variables are
in xlapy's checkpoint format (see tf.train.Saver), so TF cannot read them, nor xlapy TF's.
"""

from xlapy.compat.v1.saved_model import (builder, constants, loader, signature_constants,
                                         signature_def_utils, tag_constants, utils)
from xlapy.compat.v1.saved_model import main_op  # tf.saved_model.main_op (the module)
from xlapy.compat.v1.saved_model.main_op import main_op_with_restore
from xlapy.compat.v1.saved_model.builder import SavedModelBuilder
from xlapy.compat.v1.saved_model.loader import contains_saved_model, maybe_saved_model_directory
from xlapy.compat.v1.saved_model.signature_constants import (
    CLASSIFY_INPUTS, CLASSIFY_METHOD_NAME, CLASSIFY_OUTPUT_CLASSES, CLASSIFY_OUTPUT_SCORES,
    DEFAULT_SERVING_SIGNATURE_DEF_KEY, PREDICT_INPUTS, PREDICT_METHOD_NAME, PREDICT_OUTPUTS,
    REGRESS_INPUTS, REGRESS_METHOD_NAME, REGRESS_OUTPUTS)
from xlapy.compat.v1.saved_model.signature_def_utils import (
    build_signature_def, classification_signature_def, is_valid_signature,
    predict_signature_def, regression_signature_def)
from xlapy.compat.v1.saved_model.tag_constants import GPU, SERVING, TPU, TRAINING
from xlapy.compat.v1.saved_model.utils import build_tensor_info, get_tensor_from_tensor_info

Builder = SavedModelBuilder
load = loader.load


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """Save session's graph and variables with one signature, serving_default, predicting
    `outputs` from `inputs`, under the tag SERVING."""
    sig = predict_signature_def(inputs=inputs, outputs=outputs)
    b = SavedModelBuilder(export_dir)
    b.add_meta_graph_and_variables(session, tags=[SERVING],
                                   signature_def_map={DEFAULT_SERVING_SIGNATURE_DEF_KEY: sig},
                                   main_op=legacy_init_op, clear_devices=True)
    b.save()
