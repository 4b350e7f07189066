"""``python -m tapegrad COMMAND [ARGS...]``: the same as the ``tapegrad`` command (``_cli.py``)."""

import sys

from ._cli import main

sys.exit(main())
