"""Protobuf messages of TF 1.x (GraphDef, MetaGraphDef, SavedModel) on a small runtime."""
