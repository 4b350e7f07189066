"""Initial values, outputs and gradients of the models against torchvision.

* Initial values: after ``manual_seed(0)`` every parameter and buffer is bit-identical to
  torchvision's (the generator is drawn in the same order; under torch's scalar CPU kernels,
  within the bound on the last bits of draws, tests/cpu_kernels.py), for one model of each
  family and the other cheap ones. Families whose smallest builder takes long to initialize
  here (ViT, Swin, MaxViT, ConvNeXt, EfficientNetV2) are checked on small configurations of
  the same classes, which run the same initialization code. AlexNet and VGG are left out (their
  classifiers have 55 and 120 million parameters: 15 s and most of a minute to draw here);
  their init loops are the same calls as SqueezeNet's and ResNet's.
* Outputs: each family's model is built in both libraries (without drawing its initial
  values), given the same random weights and the batch-norm statistics of one training-mode
  batch (so that activations stay of order 1 in eval mode), and both run the same small batch:
  in float32 and eval mode, tapegrad's distance to the exact (float64) result must be of
  torch's own size (the convolution and matrix kernels round differently, docs/float32.md,
  and a network compounds it); in float64, eval and train mode, they agree to 1e-10, the
  random draws of dropout and stochastic depth included. Batch norm in training normalizes
  by the statistics of the batch, which for the last layers of a 32x downsampling network on
  a 32x32 image are those of two numbers per channel: ill-conditioned enough to turn float64
  rounding into 1e-8, so those networks get 64x64 images in float64.
  Gradients (of the input and of every parameter) are compared in float64 for a few.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import pytest
import vision_compare


def _build(L, V, spec: Callable) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return spec(V.models)


# name -> builder of the model, from the models package of either library
SMALL = {
    "squeezenet1_0": lambda m: m.squeezenet1_0(),
    "squeezenet1_1": lambda m: m.squeezenet1_1(),
    "resnet18": lambda m: m.resnet18(),
    "resnet_bottleneck": lambda m: m.resnet.ResNet(m.resnet.Bottleneck, [1, 1, 1, 1],
                                                   num_classes=10, zero_init_residual=True,
                                                   groups=2, width_per_group=8),
    "densenet121": lambda m: m.densenet121(),
    "googlenet": lambda m: m.googlenet(init_weights=True, num_classes=10),
    "inception_v3": lambda m: m.inception_v3(init_weights=True, num_classes=10),
    "mobilenet_v2": lambda m: m.mobilenet_v2(),
    "mobilenet_v3_small": lambda m: m.mobilenet_v3_small(),
    "mobilenet_v3_large": lambda m: m.mobilenet_v3_large(width_mult=0.5),
    "shufflenet_v2_x0_5": lambda m: m.shufflenet_v2_x0_5(),
    "mnasnet0_5": lambda m: m.mnasnet0_5(),
    "efficientnet_b0": lambda m: m.efficientnet_b0(),
    "efficientnet_v2_small": lambda m: m.efficientnet.EfficientNet(
        [m.efficientnet.FusedMBConvConfig(1, 3, 1, 8, 8, 2),
         m.efficientnet.FusedMBConvConfig(4, 3, 2, 8, 16, 2),
         m.efficientnet.MBConvConfig(4, 3, 2, 16, 24, 2)],
        dropout=0.2, stochastic_depth_prob=0.5, last_channel=64, num_classes=10),
    "regnet_x_400mf": lambda m: m.regnet_x_400mf(),
    "regnet_y_400mf": lambda m: m.regnet_y_400mf(),
    "convnext_small_config": lambda m: m.convnext.ConvNeXt(
        [m.convnext.CNBlockConfig(16, 32, 2), m.convnext.CNBlockConfig(32, None, 2)],
        stochastic_depth_prob=0.5, layer_scale=0.5, num_classes=10),
    "vit_small_config": lambda m: m.vision_transformer.VisionTransformer(
        image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32,
        dropout=0.1, num_classes=10),
    "vit_representation": lambda m: m.vision_transformer.VisionTransformer(
        image_size=32, patch_size=4, num_layers=1, num_heads=2, hidden_dim=8, mlp_dim=16,
        representation_size=12, num_classes=10,
        conv_stem_configs=[m.vision_transformer.ConvStemConfig(4, 3, 2),
                           m.vision_transformer.ConvStemConfig(8, 3, 2)]),
    "swin_small_config": lambda m: m.swin_transformer.SwinTransformer(
        patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[3, 3],
        stochastic_depth_prob=0.5, num_classes=10),
    "swin_v2_small_config": lambda m: m.swin_transformer.SwinTransformer(
        patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
        stochastic_depth_prob=0.5, num_classes=10, block=m.swin_transformer.SwinTransformerBlockV2,
        downsample_layer=m.swin_transformer.PatchMergingV2),
    "maxvit_small_config": lambda m: m.maxvit.MaxVit(
        input_size=(32, 32), stem_channels=8, partition_size=2, block_channels=[16, 32],
        block_layers=[1, 2], head_dim=8, stochastic_depth_prob=0.5, num_classes=10),
}


@pytest.mark.parametrize("name", list(SMALL))
def test_initial_values(lib, oracle, vision, tv, name):
    vision_compare.compare_initial_values(lambda L, V: [_build(L, V, SMALL[name])],
                                          lib, oracle, vision, tv)


# name -> (builder, input size, batch); every family, at small sizes
FAMILIES = {
    # (AlexNet's and VGG's classifiers hold 55 and 120 million parameters: their convolutional
    # part runs here, the rest is a flatten and three linear layers)
    "alexnet_features": (lambda m: m.alexnet().features, 63, 2),
    "vgg11_bn_features": (lambda m: m.vgg11_bn().features, 32, 2),
    "resnet18": (lambda m: m.resnet18(num_classes=10), 64, 2),
    "resnext_dilated": (lambda m: m.resnet.ResNet(
        m.resnet.Bottleneck, [1, 1, 1, 1], num_classes=10, groups=4, width_per_group=8,
        replace_stride_with_dilation=[False, True, True]), 32, 2),
    "squeezenet1_0": (lambda m: m.squeezenet1_0(num_classes=10), 48, 2),
    "densenet121": (lambda m: m.densenet121(num_classes=10), 32, 2, 64),
    "densenet_memory_efficient": (lambda m: m.densenet.DenseNet(
        8, (2, 2), 16, bn_size=2, drop_rate=0.2, num_classes=10, memory_efficient=True), 32, 2),
    "googlenet": (lambda m: m.googlenet(init_weights=True, num_classes=10,
                                        transform_input=True), 64, 2),
    "inception_v3": (lambda m: m.inception_v3(init_weights=True, num_classes=10,
                                              aux_logits=False), 75, 2, 107),
    "mobilenet_v2": (lambda m: m.mobilenet_v2(num_classes=10), 32, 2, 64),
    "mobilenet_v3_large": (lambda m: m.mobilenet_v3_large(num_classes=10, dilated=True,
                                                          reduced_tail=True), 32, 2),
    "shufflenet_v2_x0_5": (lambda m: m.shufflenet_v2_x0_5(num_classes=10), 32, 2),
    "mnasnet0_5": (lambda m: m.mnasnet0_5(num_classes=10), 32, 2, 64),
    "efficientnet_b0": (lambda m: m.efficientnet_b0(num_classes=10), 32, 2, 64),
    "efficientnet_v2_small": (SMALL["efficientnet_v2_small"], 32, 2),
    "regnet_y_400mf": (lambda m: m.regnet_y_400mf(num_classes=10), 32, 2, 64),
    "convnext_small_config": (SMALL["convnext_small_config"], 32, 2),
    "vit_small_config": (SMALL["vit_small_config"], 32, 2),
    "vit_representation": (SMALL["vit_representation"], 32, 2),
    "swin_small_config": (SMALL["swin_small_config"], 40, 2),
    "swin_v2_small_config": (SMALL["swin_v2_small_config"], 36, 2),
    "maxvit_small_config": (SMALL["maxvit_small_config"], 32, 2),
}


def _pair_of_models(lib, oracle, vision, tv, spec: Callable, dtype: str):
    """The model in both libraries with the same random weights and batch statistics."""
    with vision_compare.no_draws(oracle):
        theirs = _build(oracle, tv, spec)
    with vision_compare.no_draws(lib):
        ours = _build(lib, vision, spec)
    rng = np.random.RandomState(0)
    with oracle.no_grad():
        for name, p in theirs.named_parameters():
            if p.dim() >= 2:  # weights: N(0, 1 / fan_in)
                fan_in = int(np.prod(p.shape[1:]))
                value = rng.standard_normal(tuple(p.shape)) / np.sqrt(fan_in)
            elif name.endswith("weight"):  # normalization scales
                value = rng.uniform(0.5, 1.5, tuple(p.shape))
            else:
                value = rng.uniform(-0.1, 0.1, tuple(p.shape))
            p.copy_(oracle.tensor(value.astype(np.float32)))
        # the batch norms' statistics: those of one batch in training mode
        norm_class = oracle.nn.modules.batchnorm._BatchNorm
        norms = [m for m in theirs.modules() if isinstance(m, norm_class)]
        for m in norms:
            m.momentum = None
            m.reset_running_stats()
        if norms:
            theirs.train()
            size, batch = _SIZES[spec]
            x = np.random.RandomState(5).standard_normal((16, 3, size, size))
            oracle.manual_seed(9)
            theirs(oracle.tensor(x.astype(np.float32)))
            for m, source in zip(norms, [m for m in ours.modules()
                                         if isinstance(m, lib.nn.modules.batchnorm._BatchNorm)],
                                 strict=True):
                m.momentum = source.momentum
    source = theirs.state_dict()
    state = OrderedDict((k, lib.tensor(v.detach().numpy().copy())) for k, v in source.items())
    state._metadata = source._metadata  # the modules' versions (MNASNet checks its own)
    ours.load_state_dict(state, strict=True)
    if dtype == "float64":
        theirs.double()
        ours.double()
    return theirs, ours


def _inputs(lib, oracle, size: int, batch: int, dtype: str, grad: bool):
    x = np.random.RandomState(0).standard_normal((batch, 3, size, size)).astype(dtype)
    return (oracle.tensor(x, requires_grad=grad), lib.tensor(x, requires_grad=grad))


def _logits(out):
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("name", list(FAMILIES))
def test_outputs_float32_eval(lib, oracle, vision, tv, name):
    # In float32 both libraries' outputs differ from the exact (float64) ones by the rounding
    # of a few dozen layers of convolutions and products, each kernel rounding its own way:
    # tapegrad's error must be of torch's size (at most 3 times torch's, measured 0.7 to 2).
    spec, size, batch = FAMILIES[name][:3]
    theirs, ours = _pair_of_models(lib, oracle, vision, tv, spec, "float32")
    theirs.eval()
    ours.eval()
    xa, xb = _inputs(lib, oracle, size, batch, "float32", False)
    with oracle.no_grad():
        ya = _logits(theirs(xa)).numpy()
        truth = _logits(theirs.double()(xa.double())).numpy()
    with lib.no_grad():
        yb = _logits(ours(xb)).numpy()
    assert yb.dtype == ya.dtype == np.float32 and yb.shape == ya.shape
    torch_error = np.abs(ya - truth).max()
    our_error = np.abs(yb - truth).max()
    assert our_error <= 3 * torch_error + 1e-7 * np.abs(truth).max(), (our_error, torch_error)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_outputs_float64_eval_and_train(lib, oracle, vision, tv, name):
    spec, size, batch = FAMILIES[name][:3]
    size = FAMILIES[name][3] if len(FAMILIES[name]) > 3 else size
    theirs, ours = _pair_of_models(lib, oracle, vision, tv, spec, "float64")
    for mode in ("eval", "train"):
        getattr(theirs, mode)()
        getattr(ours, mode)()
        xa, xb = _inputs(lib, oracle, size, batch, "float64", False)
        oracle.manual_seed(1)
        ya = _logits(theirs(xa)).detach().numpy()
        lib.manual_seed(1)  # (each just before its run: with --lib torch they share a generator)
        yb = _logits(ours(xb)).detach().numpy()
        np.testing.assert_allclose(yb, ya, rtol=1e-10, atol=1e-12, err_msg=mode)
    # the running statistics that training updated
    for (ka, a), (kb, b) in zip(theirs.state_dict().items(), ours.state_dict().items(),
                                strict=True):
        assert ka == kb
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-10, atol=1e-12, err_msg=ka)


_SIZES = {entry[0]: entry[1:3] for entry in FAMILIES.values()}

GRADIENTS = ["resnet18", "densenet_memory_efficient", "mobilenet_v3_large",
             "efficientnet_v2_small", "convnext_small_config", "vit_small_config",
             "swin_small_config", "swin_v2_small_config", "maxvit_small_config"]


@pytest.mark.parametrize("name", GRADIENTS)
def test_gradients_float64(lib, oracle, vision, tv, name):
    spec, size, batch = FAMILIES[name][:3]
    size = FAMILIES[name][3] if len(FAMILIES[name]) > 3 else size
    theirs, ours = _pair_of_models(lib, oracle, vision, tv, spec, "float64")
    theirs.train()
    ours.train()
    xa, xb = _inputs(lib, oracle, size, batch, "float64", True)
    oracle.manual_seed(2)
    ya = _logits(theirs(xa))
    lib.manual_seed(2)
    yb = _logits(ours(xb))
    weights = np.random.RandomState(1).standard_normal(tuple(ya.shape))
    (ya * oracle.tensor(weights)).sum().backward()
    (yb * lib.tensor(weights)).sum().backward()
    assert type(yb.grad_fn).__name__ == type(ya.grad_fn).__name__
    np.testing.assert_allclose(xb.grad.numpy(), xa.grad.numpy(), rtol=1e-9, atol=1e-12)
    for (ka, a), (kb, b) in zip(theirs.named_parameters(), ours.named_parameters(), strict=True):
        assert ka == kb and (a.grad is None) == (b.grad is None), ka
        if a.grad is not None:
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-9, atol=1e-12,
                                       err_msg=ka)


def test_auxiliary_outputs(vcompare):
    # in training, GoogLeNet and Inception v3 also return their auxiliary classifiers' logits
    # (Inception's need 299x299 images: its auxiliary head runs alone on a map of that size)
    def scenario(L, V):
        out = []
        L.manual_seed(0)
        model = _build(L, V, lambda m: m.googlenet(init_weights=True, num_classes=5))
        # values of our own (test_initial_values compares the drawn ones, whose last bits
        # depend on the CPU kernels torch runs)
        vision_compare.own_values(L, [model])
        model.double()
        x = L.tensor(np.random.RandomState(0).standard_normal((2, 3, 64, 64)))
        L.manual_seed(3)
        res = model(x)
        out.append((type(res).__name__, res._fields, [r.detach() for r in res]))
        model.eval()
        out.append(type(model(x)).__name__)
        inception = V.models.inception
        L.manual_seed(0)
        head = inception.InceptionAux(16, 5)
        vision_compare.own_values(L, [head], seed=1)
        head.double()
        x = L.tensor(np.random.RandomState(1).standard_normal((2, 16, 17, 17)))
        out.append(head(x).detach())
        with L.no_grad(), vision_compare.no_draws(L):
            net = inception.Inception3(num_classes=5, init_weights=False)
        net.train()
        res = net.eager_outputs(out[-1], out[-1])
        out.append((type(res).__name__, res._fields))
        net.eval()
        out.append(type(net.eager_outputs(out[-2], None)).__name__)
        return out

    vcompare(scenario, rtol=1e-10, atol=1e-12)
