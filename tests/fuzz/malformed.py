"""`make fuzz`'s malformed-input part (see fuzzlib/malformed_run.py for the options)."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from fuzzlib.malformed_run import main

if __name__ == "__main__":
    sys.exit(main())
