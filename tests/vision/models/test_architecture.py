"""Every model builder builds torchvision's network: the same state_dict keys (parameters and
buffers, in order), shapes and dtypes, and the same printed module tree.

These models go up to 644 million parameters (regnet_y_128gf, vit_h_14), whose initialization
alone would take minutes here; this test looks only at the architecture, so both libraries build
them with their initializers' random draws stubbed out (vision_compare.no_draws) and nothing is
run. The initial values are compared, bit for bit, in test_init_and_forward.py, on the models
small enough to initialize in the test's time.
"""

from __future__ import annotations

import warnings

import pytest
import vision_compare

_ALL = [
    "alexnet", "convnext_base", "convnext_large", "convnext_small", "convnext_tiny",
    "densenet121", "densenet161", "densenet169", "densenet201", "efficientnet_b0",
    "efficientnet_b1", "efficientnet_b2", "efficientnet_b3", "efficientnet_b4", "efficientnet_b5",
    "efficientnet_b6", "efficientnet_b7", "efficientnet_v2_l", "efficientnet_v2_m",
    "efficientnet_v2_s", "googlenet", "inception_v3", "maxvit_t", "mnasnet0_5", "mnasnet0_75",
    "mnasnet1_0", "mnasnet1_3", "mobilenet_v2", "mobilenet_v3_large", "mobilenet_v3_small",
    "regnet_x_16gf", "regnet_x_1_6gf", "regnet_x_32gf", "regnet_x_3_2gf", "regnet_x_400mf",
    "regnet_x_800mf", "regnet_x_8gf", "regnet_y_128gf", "regnet_y_16gf", "regnet_y_1_6gf",
    "regnet_y_32gf", "regnet_y_3_2gf", "regnet_y_400mf", "regnet_y_800mf", "regnet_y_8gf",
    "resnet101", "resnet152", "resnet18", "resnet34", "resnet50", "resnext101_32x8d",
    "resnext101_64x4d", "resnext50_32x4d", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0",
    "shufflenet_v2_x1_5", "shufflenet_v2_x2_0", "squeezenet1_0", "squeezenet1_1", "swin_b",
    "swin_s", "swin_t", "swin_v2_b", "swin_v2_s", "swin_v2_t", "vgg11", "vgg11_bn", "vgg13",
    "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn", "vit_b_16", "vit_b_32", "vit_h_14",
    "vit_l_16", "vit_l_32", "wide_resnet101_2", "wide_resnet50_2",
]


def test_the_list_is_torchvisions(tv):
    assert tv.models.list_models(module=tv.models) == sorted(_ALL)


def _architecture(L, V, name: str) -> tuple:
    with vision_compare.no_draws(L), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (googlenet's and inception's init_weights notice)
        model = V.models.get_model(name)
    entries = [(k, tuple(v.shape), str(v.dtype).split(".")[-1])
               for k, v in model.state_dict().items()]
    text = repr(model)
    del model
    return entries, text


@pytest.mark.parametrize("name", _ALL)
def test_architecture(lib, oracle, vision, tv, name):
    theirs = _architecture(oracle, tv, name)
    ours = _architecture(lib, vision, name)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
