"""tf.keras.preprocessing: sequence (pad_sequences, skipgrams), text (Tokenizer) and image
(ImageDataGenerator), NumPy-only as keras_preprocessing 1.1 (which TF 1.15 used)."""

from xlapy.compat.v1.keras.preprocessing import image, sequence, text
