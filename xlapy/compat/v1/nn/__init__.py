"""tf.nn: activations, softmax, cross entropies, bias_add, l2_loss, dropout, moments."""

from xlapy.compat.v1.ops.nn_ops import (bias_add, dropout, l2_loss, log_softmax,
                                        moments, relu, relu6, sigmoid,
                                        sigmoid_cross_entropy_with_logits, softmax,
                                        softmax_cross_entropy_with_logits,
                                        softmax_cross_entropy_with_logits_v2,
                                        sparse_softmax_cross_entropy_with_logits, tanh)
