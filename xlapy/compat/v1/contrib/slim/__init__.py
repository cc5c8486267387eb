"""tf.contrib.slim: TF-Slim's layers, arg_scope and helpers, as the slim-era model code
imports them (`slim = tf.contrib.slim`; `slim.conv2d`, `slim.arg_scope`, `slim.repeat`,
`slim.l2_regularizer`, `slim.losses`, `slim.get_variables` ...)."""

from xlapy.compat.v1 import losses
from xlapy.compat.v1.contrib.framework import (add_arg_scope, arg_scope,
                                               assign_from_checkpoint_fn,
                                               current_arg_scope, get_global_step,
                                               get_model_variables,
                                               get_or_create_global_step,
                                               get_trainable_variables, get_variables,
                                               get_variables_by_name,
                                               get_variables_to_restore, model_variables)
from xlapy.compat.v1.contrib.layers import (avg_pool2d, batch_norm, conv2d,
                                            conv2d_transpose, dropout, flatten,
                                            fully_connected, l1_regularizer, layer_norm,
                                            l2_regularizer, max_pool2d, repeat, stack,
                                            variance_scaling_initializer,
                                            xavier_initializer)
from xlapy.compat.v1.ops.nn_ops import softmax

