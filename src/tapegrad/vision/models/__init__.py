"""torchvision.models: the image classifiers, with their pretrained weights.

Each family's module builds torchvision's module tree (the same class and attribute names,
parameter and buffer names, shapes and initialization, drawn from the generator in the same
order), so a torchvision checkpoint loads with ``strict=True`` and ``manual_seed`` gives the
same initial weights. ``weights=ResNet18_Weights.DEFAULT`` downloads the checkpoint through
``torch.hub``; ``get_model``/``list_models`` find builders by name.
"""

from ._api import (  # noqa: F401
    Weights,
    WeightsEnum,
    get_model,
    get_model_builder,
    get_model_weights,
    get_weight,
    list_models,
)
from .alexnet import *  # noqa: F403
from .convnext import *  # noqa: F403
from .densenet import *  # noqa: F403
from .efficientnet import *  # noqa: F403
from .googlenet import *  # noqa: F403
from .inception import *  # noqa: F403
from .maxvit import *  # noqa: F403
from .mnasnet import *  # noqa: F403
from .mobilenet import *  # noqa: F403
from .regnet import *  # noqa: F403
from .resnet import *  # noqa: F403
from .shufflenetv2 import *  # noqa: F403
from .squeezenet import *  # noqa: F403
from .swin_transformer import *  # noqa: F403
from .vgg import *  # noqa: F403
from .vision_transformer import *  # noqa: F403
