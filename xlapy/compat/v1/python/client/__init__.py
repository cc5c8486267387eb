"""tensorflow.python.client: timeline."""
