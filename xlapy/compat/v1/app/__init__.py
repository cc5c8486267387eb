"""tf.app: run(main) and a minimal tf.app.flags (absl-style DEFINE_* on argparse)."""

from __future__ import annotations

import sys

from xlapy.compat.v1.app import flags


def run(main=None, argv=None):
    """Parse the flags defined with tf.app.flags out of argv, call main(argv) and exit with
    its return value, as tf.app.run did."""
    args = list(sys.argv if argv is None else argv)
    rest = flags.FLAGS._parse(args)
    main = main or sys.modules["__main__"].main
    sys.exit(main(rest))
