"""tf.contrib.learn: ModeKeys (the model_fn modes of the pre-tf.estimator API) and
datasets.load_dataset for the data sets that are on this machine (datasets/__init__.py)."""

from xlapy.compat.v1.contrib.learn import datasets


class ModeKeys:
    """The modes a contrib.learn model_fn was called in (INFER is tf.estimator's
    PREDICT, 'infer')."""

    TRAIN = "train"
    EVAL = "eval"
    INFER = "infer"


__all__ = ["ModeKeys", "datasets"]
