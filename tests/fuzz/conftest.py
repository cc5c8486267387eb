"""The fuzzer's library (fuzzlib/) is imported by its tests and scripts from this folder."""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
