"""`make fuzz`: an open-ended campaign (see fuzzlib/campaign.py for the options)."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from fuzzlib.campaign import main

if __name__ == "__main__":
    sys.exit(main())
