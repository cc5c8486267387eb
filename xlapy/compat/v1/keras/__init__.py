"""tf.keras in TF 1.x graph mode: Sequential and functional models of Dense, Conv2D,
pooling, Flatten, Dropout, BatchNormalization, Activation and Reshape layers, compiled
with Keras' optimizers, losses and 'accuracy', trained with fit on NumPy arrays in the
Keras session (backend.get_session). What TF 1.x's "Get started" tutorial uses:

    model = tf.keras.models.Sequential([
        tf.keras.layers.Flatten(input_shape=(28, 28)),
        tf.keras.layers.Dense(512, activation=tf.nn.relu),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(10, activation=tf.nn.softmax)])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x_train, y_train, epochs=5)
    model.evaluate(x_test, y_test)

Embedding, SimpleRNN, LSTM, GRU, Bidirectional and TimeDistributed are in
keras/recurrent.py; the other layers in keras/core_layers.py, conv_layers.py and cudnn.py;
fit's callbacks (EarlyStopping, ModelCheckpoint, the learning-rate ones, ...) in
keras/callbacks.py; whole-model saving of Sequential models (HDF5, Keras' layout) in
keras/saving.py; utils, preprocessing, regularizers, initializers, constraints and
metrics in their modules. Functional models may have several inputs and outputs
(compile's loss, loss_weights and metrics per output; x and y as lists or dicts by
name). Not provided: stateful RNNs.
keras.datasets.mnist.load_data() reads Keras' cache or the bundled digits (no
downloads).
"""

from xlapy.compat.v1.keras import (activations, backend, callbacks, constraints, datasets,
                                   initializers, layers, losses, metrics, models, optimizers,
                                   preprocessing, regularizers, utils)
from xlapy.compat.v1.keras.layers import Input
from xlapy.compat.v1.keras.models import Model, Sequential
