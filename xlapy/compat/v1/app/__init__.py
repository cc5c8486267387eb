"""tf.app: run(main) and tf.app.flags (absl-style DEFINE_* on argparse)."""

from __future__ import annotations

import sys

from xlapy.compat.v1.app import flags


def run(main=None, argv=None):
    """Parse the flags defined with tf.app.flags out of argv, call main(argv) and exit with
    its return value, as tf.app.run did. A flag that does not parse (a value outside an
    enum, a required flag left None) prints "FATAL Flags parsing error" and exits with
    status 1, as absl's app.run."""
    args = list(sys.argv if argv is None else argv)
    try:
        rest = flags.FLAGS._parse(args)
    except flags.Error as e:
        sys.stderr.write(f"FATAL Flags parsing error: {e}\n"
                         "Pass --helpshort or --helpfull to see help on flags.\n")
        sys.exit(1)
    main = main or sys.modules["__main__"].main
    sys.exit(main(rest))
