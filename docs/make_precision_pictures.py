"""Run the precision lab and keep its output for the README and the docs.

    python docs/make_precision_pictures.py     (needs matplotlib: pip install 'tapegrad[viz]')

Trains the lab's model four ways (``tapegrad.show.precision_lab``, 60 steps, one BLAS thread)
and writes docs/img/mixed_precision.png (the loss curves and the GradScaler's scale history) and
docs/img/precision_lab.txt and precision_lab_zh.txt (the report ``tapegrad precision`` prints).
"""

from __future__ import annotations

from pathlib import Path

import tapegrad as torch
from tapegrad.show.precision import PrecisionReport

OUT = Path(__file__).resolve().parent / "img"


def main() -> None:
    torch.set_num_threads(1)  # the lab's matrices are small: one thread times them best
    report = torch.show.precision_lab(60, lang="en")
    for lang, suffix in (("en", ""), ("zh", "_zh")):
        view = PrecisionReport(report.runs, report.steps, lang)
        if lang == "en":
            view.plot(str(OUT / "mixed_precision.png"))
        (OUT / f"precision_lab{suffix}.txt").write_text(str(view) + "\n", encoding="utf-8")
        print(view, "\n")


if __name__ == "__main__":
    main()
