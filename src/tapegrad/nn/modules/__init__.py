"""The layer classes of ``tapegrad.nn``, one family per file as in torch.nn.modules."""

from .activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    MultiheadAttention,
    PReLU,
    ReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .batchnorm import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
)
from .channelshuffle import ChannelShuffle
from .container import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,  # type: ignore[attr-defined]
)
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import (
    AlphaDropout,
    Dropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
)
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .instancenorm import (
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
)
from .lazy import LazyModuleMixin
from .linear import Bilinear, Identity, LazyLinear, Linear
from .linear_cross_entropy_options import LinearCrossEntropyOptions
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    CTCLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    LinearCrossEntropyLoss,
    MarginRankingLoss,
    MSELoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    NLLLoss2d,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .module import Module
from .normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding, EmbeddingBag
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = [
    "Module", "Identity", "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d",
    "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Threshold", "ReLU", "Hardtanh",
    "ReLU6", "Sigmoid", "Tanh", "Softmax", "Softmax2d", "LogSoftmax", "ELU", "SELU", "CELU",
    "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink",
    "MultiheadAttention", "PReLU", "Softsign", "Softmin", "Tanhshrink", "RReLU", "SiLU", "Mish",
    "Hardswish", "Hardsigmoid", "L1Loss", "NLLLoss", "KLDivLoss", "MSELoss", "BCELoss",
    "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SmoothL1Loss",
    "HuberLoss", "SoftMarginLoss", "CrossEntropyLoss", "MultiLabelSoftMarginLoss",
    "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss",
    "TripletMarginWithDistanceLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss",
    "Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "AvgPool1d", "AvgPool2d", "AvgPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d",
    "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LayerNorm", "GroupNorm",
    "LocalResponseNorm", "RMSNorm", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
    "AlphaDropout", "FeatureAlphaDropout", "Embedding", "EmbeddingBag", "PairwiseDistance",
    "CosineSimilarity", "Flatten", "Unflatten", "CircularPad1d", "CircularPad2d",
    "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
    "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "PixelShuffle", "PixelUnshuffle",
    "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "TransformerEncoder",
    "TransformerEncoderLayer", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
    "AdaptiveLogSoftmaxWithLoss", "ChannelShuffle", "Fold", "Unfold", "FractionalMaxPool2d",
    "FractionalMaxPool3d",
]
__all__ += ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
            "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
            "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
            "LazyInstanceNorm3d", "LazyModuleMixin", "NLLLoss2d", "LinearCrossEntropyLoss",
            "LinearCrossEntropyOptions"]
__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
