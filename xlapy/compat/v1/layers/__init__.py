"""tf.layers: dense, conv1d/conv2d/conv2d_transpose, max/average pooling, dropout,
batch_normalization, flatten, and their Layer classes (TF 1.x's variable naming:
dense/kernel, dense_1/kernel, conv2d/bias, batch_normalization/moving_mean, ...)."""

from xlapy.compat.v1.layers.base import Layer
from xlapy.compat.v1.layers.convolutional import (AveragePooling1D, AveragePooling2D, Conv1D,
                                                  Conv2D, Conv2DTranspose, MaxPooling1D,
                                                  MaxPooling2D, average_pooling1d,
                                                  average_pooling2d, conv1d, conv2d,
                                                  conv2d_transpose, max_pooling1d,
                                                  max_pooling2d)
from xlapy.compat.v1.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten
from xlapy.compat.v1.layers.normalization import BatchNormalization, batch_normalization
from xlapy.compat.v1.layers.separable import SeparableConv2D, separable_conv2d
from xlapy.compat.v1.layers.conv3d import Conv3D, Conv3DTranspose, conv3d, conv3d_transpose
from xlapy.compat.v1.layers.input_spec import InputSpec

__all__ = ["Layer", "Dense", "Dropout", "Flatten", "dense", "dropout", "flatten",
           "Conv1D", "Conv2D", "Conv2DTranspose", "MaxPooling1D", "MaxPooling2D",
           "AveragePooling1D", "AveragePooling2D", "conv1d", "conv2d", "conv2d_transpose",
           "max_pooling1d", "max_pooling2d", "average_pooling1d", "average_pooling2d",
           "BatchNormalization", "batch_normalization", "SeparableConv2D",
           "separable_conv2d", "Conv3D", "Conv3DTranspose", "conv3d", "conv3d_transpose",
           "InputSpec"]
