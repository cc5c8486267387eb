"""tf.keras.datasets: mnist.load_data() without downloading (see mnist.py)."""

from xlapy.compat.v1.keras.datasets import mnist
