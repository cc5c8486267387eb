"""tf.config (TF 1.15): the devices of this process (tf.config.experimental) and the thread
counts (tf.config.threading).

xlapy's devices are the CPU and XLA_CPU (and XLA_GPU where xlapy's gpu backend finds a GPU),
as Session.list_devices() lists them. Visibility and memory growth are recorded and
reported back, but sessions place ops as before (xlapy has no GPU device of TF's kind
whose memory could grow). The intra-op thread count is xlapy's thread count for compiled
clusters (XLAPY_NUM_THREADS); the inter-op one is recorded only (the executor runs one op
at a time).
"""

from xlapy.compat.v1.config import experimental, threading

__all__ = ["experimental", "threading"]
