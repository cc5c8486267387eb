"""tf.losses: the weighted, reduced losses of TF 1.x (losses_impl.py), and the loss
collections (add_loss, get_losses, get_regularization_loss(es), get_total_loss)."""

from __future__ import annotations

from xlapy.compat.v1.losses.losses_impl import (Reduction, absolute_difference, add_loss,
                                                compute_weighted_loss, cosine_distance,
                                                get_losses, get_regularization_loss,
                                                get_regularization_losses, get_total_loss,
                                                hinge_loss, huber_loss, log_loss,
                                                mean_pairwise_squared_error,
                                                mean_squared_error, sigmoid_cross_entropy,
                                                softmax_cross_entropy,
                                                sparse_softmax_cross_entropy)
