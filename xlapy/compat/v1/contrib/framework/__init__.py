"""tf.contrib.framework: the global-step and variable helpers TF 1.x scripts imported from
contrib before they moved to tf.train and tf.*."""

from xlapy.compat.v1.train.training_util import (get_global_step,
                                                 get_or_create_global_step)
from xlapy.compat.v1.misc_api import model_variables
from xlapy.compat.v1.contrib.framework.variables import (
    assign_from_checkpoint_fn, filter_variables, get_local_variables, get_model_variables,
    get_trainable_variables, get_unique_variable, get_variables, get_variables_by_name,
    get_variables_by_suffix, get_variables_to_restore)
from xlapy.compat.v1.contrib.framework.arg_scope import (add_arg_scope,
                                                         arg_scope, current_arg_scope,
                                                         has_arg_scope)
from xlapy.compat.v1.contrib.framework.model_variables import (get_name_scope,
                                                               global_variable,
                                                               local_variable, model_variable,
                                                               variable)
from xlapy.compat.v1 import nest
