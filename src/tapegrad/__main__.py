"""``python -m tapegrad run SCRIPT [ARGS...]``."""

import sys

from ._cli import main

sys.exit(main())
