"""tf.saved_model.constants: the file names of a SavedModel directory."""

SAVED_MODEL_SCHEMA_VERSION = SCHEMA_VERSION = 1
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
ASSETS_DIRECTORY = "assets"
MAIN_OP_KEY = "saved_model_main_op"
LEGACY_INIT_OP_KEY = "legacy_init_op"
