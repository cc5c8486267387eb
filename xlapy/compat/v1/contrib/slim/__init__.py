"""tf.contrib.slim: TF-Slim's layers, arg_scope and helpers, as the slim-era model code
imports them (`slim = tf.contrib.slim`; `slim.conv2d`, `slim.arg_scope`, `slim.repeat`,
`slim.l2_regularizer`, `slim.losses`, `slim.get_variables` ...), the training loop and
evaluation (slim.learning, slim.evaluation), slim.metrics (tf.contrib.metrics),
slim.variable / slim.model_variable and slim.model_analyzer."""

from xlapy.compat.v1 import losses
from xlapy.compat.v1.contrib import metrics
from xlapy.compat.v1.contrib.framework import (add_arg_scope, arg_scope,
                                               assign_from_checkpoint_fn,
                                               current_arg_scope, get_global_step,
                                               get_model_variables,
                                               get_or_create_global_step,
                                               get_trainable_variables, get_variables,
                                               get_variables_by_name,
                                               get_variables_by_suffix,
                                               get_variables_to_restore, local_variable,
                                               model_variable, model_variables, variable)
from xlapy.compat.v1.contrib.layers import (avg_pool2d, batch_norm, conv2d,
                                            conv2d_transpose, dropout, flatten,
                                            fully_connected, l1_regularizer, layer_norm,
                                            l2_regularizer, max_pool2d, one_hot_encoding,
                                            repeat, stack,
                                            variance_scaling_initializer,
                                            xavier_initializer)
from xlapy.compat.v1.ops.nn_ops import softmax

from xlapy.compat.v1.contrib.slim import evaluation, learning, model_analyzer
