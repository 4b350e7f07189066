"""AlexNet (Krizhevsky 2014, "One weird trick for parallelizing convolutional neural networks"):
five convolutions with max pooling, then three fully connected layers with dropout."""

from functools import partial

from ... import flatten, nn
from ..._tensor import Tensor
from ..transforms._presets import ImageClassification
from ._api import WeightsEnum
from ._meta import _family_meta
from ._utils import _builder, _classifier, _imagenet1k_weights

__all__ = ["AlexNet", "AlexNet_Weights", "alexnet"]


class AlexNet(nn.Module):
    """``features`` (convolutions), ``avgpool`` to 6x6, ``classifier`` (three linear layers)."""

    def __init__(self, num_classes: int = 1000, dropout: float = 0.5) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout),
            nn.Linear(256 * 6 * 6, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x: Tensor) -> Tensor:
        x = self.avgpool(self.features(x))
        return self.classifier(flatten(x, 1))


_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#alexnet-and-vgg"
_DOCS = (
    "\n"
    "                These weights reproduce closely the results of the paper using "
    "a simplified training recipe.\n"
    "            "
)
_COMMON_META = _family_meta((63, 63), _RECIPE, _DOCS)


class AlexNet_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "alexnet-owt-7be5be79.pth", partial(ImageClassification, crop_size=224), _COMMON_META,
        num_params=61100840, acc=(56.522, 79.066), _ops=0.714, _file_size=233.087)
    DEFAULT = IMAGENET1K_V1


alexnet = _builder("alexnet", AlexNet_Weights, AlexNet, _classifier, AlexNet,
                   doc='AlexNet, as in "One weird trick for parallelizing convolutional neural '
                       'networks" (Krizhevsky 2014); ``weights`` a member of ``AlexNet_Weights`` '
                       "(pretrained) or None, ``progress`` shows the download's progress bar, "
                       "``kwargs`` go to ``AlexNet``.")
