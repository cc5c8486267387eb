"""tensorflow.python.summary: summary."""
