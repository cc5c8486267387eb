"""tf.contrib.predictor: a callable wrapping a session over a SavedModel's signature.

    predict = tf.contrib.predictor.from_saved_model(export_dir)
    out = predict({"x": batch})          # {"y": ndarray, ...}, by the signature's keys

from_saved_model loads the MetaGraphDef tagged `tags` (default "serve") into a new graph and
session, and feeds and fetches the tensors of the signature `signature_def_key` (default
"serving_default"), or of the given `signature_def`.
"""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError

__all__ = ["Predictor", "from_saved_model"]


class Predictor:
    """predictor(input_dict) -> {output key: value}; input_dict is keyed by the
    signature's input keys."""

    def __init__(self, session, feed_tensors, fetch_tensors):
        self._session = session
        self._feed_tensors = dict(feed_tensors)
        self._fetch_tensors = dict(fetch_tensors)

    session = property(lambda self: self._session)
    graph = property(lambda self: self._session.graph)
    feed_tensors = property(lambda self: self._feed_tensors)
    fetch_tensors = property(lambda self: self._fetch_tensors)

    def __call__(self, input_dict):
        unknown = set(input_dict) - set(self._feed_tensors)
        if unknown:
            raise InvalidArgumentError(f"Got unexpected keys in input_dict: {sorted(unknown)}"
                                       f"\nexpected: {sorted(self._feed_tensors)}")
        feed = {self._feed_tensors[k]: v for k, v in input_dict.items()}
        return self._session.run(self._fetch_tensors, feed)

    def __repr__(self):
        return (f"SavedModelPredictor with feed tensors {self._feed_tensors} and fetch "
                f"tensors {self._fetch_tensors}")


def from_saved_model(export_dir, signature_def_key=None, signature_def=None,
                     input_names=None, output_names=None, tags=None, graph=None,
                     config=None):
    from xlapy.compat.v1.framework import Graph
    from xlapy.compat.v1.saved_model import loader, signature_constants, tag_constants
    from xlapy.compat.v1.session import Session
    if signature_def_key is not None and signature_def is not None:
        raise InvalidArgumentError("Cannot specify both signature_def_key and "
                                   "signature_def.")
    if (input_names is None) != (output_names is None):
        raise InvalidArgumentError("input_names and output_names must both be given or "
                                   "both be None")
    tags = [tag_constants.SERVING] if tags is None else \
        ([tags] if isinstance(tags, str) else list(tags))
    graph = graph or Graph()
    sess = Session(graph=graph, config=config)
    meta = loader.load(sess, tags, export_dir)
    if input_names is not None:
        feeds = {k: graph.get_tensor_by_name(v) for k, v in input_names.items()}
        fetches = {k: graph.get_tensor_by_name(v) for k, v in output_names.items()}
        return Predictor(sess, feeds, fetches)
    if signature_def is None:
        key = signature_def_key or signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
        sigs = meta.signature_def
        if key not in sigs:
            raise InvalidArgumentError(
                f"Got signature_def_key '{key}'. Available signatures are "
                f"{sorted(sigs.keys())}. Original error:\nNo SignatureDef with key '{key}' "
                "found in MetaGraphDef.")
        signature_def = sigs[key]
    feeds = {k: graph.get_tensor_by_name(v.name) for k, v in signature_def.inputs.items()}
    fetches = {k: graph.get_tensor_by_name(v.name) for k, v in signature_def.outputs.items()}
    return Predictor(sess, feeds, fetches)
