"""``torch.autograd.anomaly_mode``: where ``detect_anomaly`` and ``set_detect_anomaly``
(defined in ``autograd``) say they live."""

from __future__ import annotations

from . import detect_anomaly, set_detect_anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly"]
