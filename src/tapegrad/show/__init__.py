"""tapegrad.show: make autograd visible (the gradient health check, its monitor)."""

from .health import HealthReport, health
from .monitor import Monitor

__all__ = ["HealthReport", "Monitor", "health"]
