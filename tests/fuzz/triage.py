"""Shrink a campaign finding to a regression case (see fuzzlib/triage.py)."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from fuzzlib.triage import main

if __name__ == "__main__":
    sys.exit(main())
