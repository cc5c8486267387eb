"""tf.nn: activations, softmax and cross entropies, convolutions and pooling, batch
normalization, embeddings and sampled losses, dropout, moments, top_k, and the RNN API
(rnn_cell, dynamic_rnn, raw_rnn, static_rnn, bidirectional_dynamic_rnn) and CTC (ctc_loss,
ctc_greedy_decoder, ctc_beam_search_decoder)."""

from xlapy.compat.v1.ops.activation_ops import (crelu, elu, l2_normalize,
                                                local_response_normalization, leaky_relu,
                                                lrn, selu, softplus, softsign, swish)
from xlapy.compat.v1.ops.conv_ops import (atrous_conv2d, conv1d, conv2d, conv2d_transpose,
                                          conv3d, conv3d_transpose, convolution,
                                          depthwise_conv2d, depthwise_conv2d_native,
                                          separable_conv2d)
from xlapy.compat.v1.ops.pool_ops import (avg_pool, avg_pool2d, avg_pool3d, max_pool,
                                          max_pool2d, max_pool3d, max_pool_with_argmax)
from xlapy.compat.v1.ops.embedding_ops import (embedding_lookup, embedding_lookup_sparse,
                                               log_uniform_candidate_sampler, nce_loss,
                                               sampled_softmax_loss,
                                               uniform_candidate_sampler)
from xlapy.compat.v1.ops.gather_ops import in_top_k, top_k
from xlapy.compat.v1.ops.nn_ops import (bias_add, dropout, l2_loss, log_softmax, moments,
                                        relu, relu6, relu_layer, sigmoid,
                                        sigmoid_cross_entropy_with_logits, softmax,
                                        softmax_cross_entropy_with_logits,
                                        softmax_cross_entropy_with_logits_v2,
                                        sparse_softmax_cross_entropy_with_logits, tanh,
                                        weighted_cross_entropy_with_logits, xw_plus_b,
                                        zero_fraction)
from xlapy.compat.v1.ops.norm_ops import batch_normalization, fused_batch_norm
from xlapy.compat.v1.ops.rnn_ops import (bidirectional_dynamic_rnn, dynamic_rnn, static_rnn,
                                         static_bidirectional_rnn)
from xlapy.compat.v1.ops.raw_rnn_ops import raw_rnn
from xlapy.compat.v1.nn import rnn_cell
from xlapy.compat.v1.ops.conv_backprop import conv2d_backprop_filter, conv2d_backprop_input
from xlapy.compat.v1.ops.nn_extra_ops import (avg_pool1d, depth_to_space, log_poisson_loss,
                                              max_pool1d, normalize_moments, space_to_depth,
                                              sufficient_statistics, weighted_moments)
from xlapy.compat.v1.image.patches import dilation2d, erosion2d
from xlapy.compat.v1.ops.space_batch_ops import space_to_batch  # tf.nn.space_to_batch
from xlapy.compat.v1.ops.embedding_safe import safe_embedding_lookup_sparse
from xlapy.compat.v1.ops.dilated_pool import pool, with_space_to_batch
from xlapy.compat.v1.ops.ctc_ops import ctc_beam_search_decoder, ctc_greedy_decoder, ctc_loss
from xlapy.compat.v1.ops.misc_more3 import ctc_loss_v2
from xlapy.compat.v1.ops.nnx_conv import (atrous_conv2d_transpose,
                                          batch_norm_with_global_normalization,
                                          collapse_repeated, compute_accidental_hits,
                                          conv1d_transpose,
                                          depthwise_conv2d_native_backprop_filter,
                                          depthwise_conv2d_native_backprop_input)
from xlapy.compat.v1.ops.nnx_fractional import fractional_avg_pool, fractional_max_pool
from xlapy.compat.v1.ops.nnx_samplers import (fixed_unigram_candidate_sampler,
                                              learned_unigram_candidate_sampler)
