import sys

from xlapy.tools.main import main

sys.exit(main())
