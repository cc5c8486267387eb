"""Mirror of tensorflow.python: only what TF 1.x scripts imported from it (client.timeline)."""
