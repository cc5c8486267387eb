"""tensorflow.examples: the MNIST tutorial's input_data reader."""
