"""Batching rule of the fft primitive: it transforms trailing dimensions, so batch
dimensions lead (moved to the front, as jax's fft batching rule does)."""

from __future__ import annotations

from xlapy.frontend.batching.trace import leading_batch_rule
from xlapy.frontend.primitives.fft import fft_p

fft_p.def_batch(leading_batch_rule(fft_p))
