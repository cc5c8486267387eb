"""tensorflow.python.platform: app, flags, gfile, test, tf_logging."""
