"""``python -m benchmarks``: run the benchmark suite (see ``benchmarks/__init__.py``)."""

from ._cli import main

raise SystemExit(main())
