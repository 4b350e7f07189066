"""MobileNet V2 and V3 under one name, as torchvision's ``models.mobilenet``."""

from .mobilenetv2 import *  # noqa: F403
from .mobilenetv2 import __all__ as mv2_all
from .mobilenetv3 import *  # noqa: F403
from .mobilenetv3 import __all__ as mv3_all

__all__ = mv2_all + mv3_all
