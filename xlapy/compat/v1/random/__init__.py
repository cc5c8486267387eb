"""tf.random: TF 1.x's random namespace (the same ops as tf.random_normal, ...)."""

from __future__ import annotations

from xlapy.compat.v1.ops.random_more_ops import categorical, multinomial
from xlapy.compat.v1.ops.random_more_ops import random_gamma as gamma
from xlapy.compat.v1.ops.random_more_ops import random_shuffle as shuffle
from xlapy.compat.v1.ops.random_ops import (random_normal as normal,
                                            random_uniform as uniform, set_random_seed,
                                            truncated_normal)
from xlapy.compat.v1.ops.embedding_ops import (log_uniform_candidate_sampler,
                                               uniform_candidate_sampler)
from xlapy.compat.v1.ops.nnx_random import (poisson, stateless_random_normal as
                                            stateless_normal, stateless_random_uniform as
                                            stateless_uniform)
from xlapy.compat.v1.ops.nnx_samplers import (fixed_unigram_candidate_sampler,
                                              learned_unigram_candidate_sampler)
