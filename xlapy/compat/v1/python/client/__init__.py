"""tensorflow.python.client: session, timeline."""
