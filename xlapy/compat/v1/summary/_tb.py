"""The optional dependency of tf.summary: tensorboardX's protobuf classes and event writer.

TensorBoard event files are TFRecord files of `Event` protobufs; xlapy writes them with
tensorboardX (the `tensorboard` extra: pip install 'xlapy[tensorboard]') rather than by hand.
"""

from __future__ import annotations

import functools

from xlapy.compat.v1.errors import UnimplementedError

INSTALL = ("tf.summary needs the tensorboardX package to write TensorBoard event files: "
           "pip install 'xlapy[tensorboard]' (or pip install tensorboardX)")


@functools.cache
def tb():
    """The tensorboardX modules xlapy uses, as a namespace; a clear error without them."""
    try:
        from tensorboardX import event_file_writer
        from tensorboardX.proto import (attr_value_pb2, event_pb2, graph_pb2, node_def_pb2,
                                        summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2,
                                        versions_pb2)
    except ImportError as e:
        raise UnimplementedError(f"{INSTALL} ({e})") from None
    return _NS(event_file_writer=event_file_writer, attr_value_pb2=attr_value_pb2,
               event_pb2=event_pb2, graph_pb2=graph_pb2, node_def_pb2=node_def_pb2,
               summary_pb2=summary_pb2, tensor_pb2=tensor_pb2,
               tensor_shape_pb2=tensor_shape_pb2, types_pb2=types_pb2,
               versions_pb2=versions_pb2)


class _NS:
    def __init__(self, **kw):
        self.__dict__.update(kw)
