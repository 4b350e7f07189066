"""The layers and losses of torchvision.ops against torchvision: initial values after
manual_seed, reprs, outputs and gradients, the random draws of StochasticDepth and DropBlock,
FrozenBatchNorm2d and FeaturePyramidNetwork loading older checkpoints, the focal and box IoU
losses, and deformable convolution (outputs and gradients to float rounding: its products are
matrix products)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import vision_compare


def _x(L, *shape, seed=0, dtype="float64", grad=False):
    return L.tensor(np.random.RandomState(seed).standard_normal(shape).astype(dtype),
                    requires_grad=grad)


def _layers(L, V):
    ops = V.ops
    return [
        ops.Conv2dNormActivation(3, 8),
        ops.Conv2dNormActivation(3, 8, kernel_size=(3, 5), dilation=(1, 2), stride=2,
                                 norm_layer=None, activation_layer=L.nn.SiLU, inplace=None),
        ops.Conv2dNormActivation(3, 6, 1, groups=3, bias=True, activation_layer=L.nn.Hardswish),
        ops.Conv3dNormActivation(3, 4, kernel_size=3),
        ops.SqueezeExcitation(8, 2),
        ops.SqueezeExcitation(8, 3, activation=L.nn.SiLU, scale_activation=L.nn.Hardsigmoid),
        ops.MLP(6, [12, 4], norm_layer=L.nn.LayerNorm, dropout=0.25),
        ops.MLP(6, [5], activation_layer=L.nn.GELU, inplace=False, bias=False),
        ops.Permute([0, 2, 3, 1]),
    ]


def test_conv_norm_activation_se_mlp_permute(vcompare, vinit):
    vinit(_layers)  # the initial values after manual_seed(0)

    def scenario(L, V):
        L.manual_seed(0)
        layers = _layers(L, V)
        out = [repr(m) for m in layers]
        out.append([k for m in layers for k in m.state_dict()])
        out.append([m.out_channels for m in layers[:4]])
        vision_compare.own_values(L, layers)  # (the same values in both, whatever the kernels)
        x = _x(L, 2, 3, 7, 9, grad=True)
        for m in layers:
            m.double()
        L.manual_seed(1)
        ys = [layers[0](x), layers[1](x), layers[2](x),
              layers[3](_x(L, 2, 3, 4, 5, 6, seed=1)),
              layers[4](_x(L, 2, 8, 5, 5, seed=2)), layers[5](_x(L, 2, 8, 5, 5, seed=3)),
              layers[6](_x(L, 3, 6, seed=4)), layers[7](_x(L, 3, 6, seed=5)), layers[8](x)]
        out.append(ys)
        out.append(L.autograd.grad(sum(y.sum() for y in ys[:3]), x))
        return out

    vcompare(scenario, rtol=1e-10, atol=1e-12)


def test_conv_norm_activation_warns(vcompare):
    def scenario(L, V):
        from importlib import import_module

        misc = import_module(V.ops.__name__ + ".misc")
        L.manual_seed(0)
        return repr(misc.ConvNormActivation(2, 3, 3))

    vcompare(scenario)


def test_frozen_batch_norm(vcompare):
    def scenario(L, V):
        bn = V.ops.FrozenBatchNorm2d(4, eps=1e-3)
        source = L.nn.BatchNorm2d(4)
        source.running_mean.copy_(L.tensor([0.1, -0.2, 0.3, 0.0]))
        source.running_var.copy_(L.tensor([1.5, 0.5, 2.0, 1.0]))
        with L.no_grad():
            source.weight.copy_(L.tensor([1.0, 2.0, 0.5, -1.0]))
        result = bn.load_state_dict(source.state_dict())  # num_batches_tracked is dropped
        x = _x(L, 2, 4, 3, 3, dtype="float32")
        return [repr(bn), list(result.missing_keys), list(result.unexpected_keys),
                list(bn.state_dict()), bn(x)]

    vcompare(scenario, rtol=1.3e-6, atol=1e-5)


@pytest.mark.parametrize("mode", ["row", "batch"])
def test_stochastic_depth(vcompare, mode):
    def scenario(L, V):
        x = _x(L, 6, 3, 2, 2, dtype="float32", grad=True)
        L.manual_seed(4)
        outs = [V.ops.stochastic_depth(x, p, mode) for p in (0.0, 0.3, 0.7, 1.0)]
        layer = V.ops.StochasticDepth(0.5, mode)
        outs.append(layer(x))
        layer.eval()
        outs.append(layer(x))
        outs.append(V.ops.stochastic_depth(x, 0.5, mode, training=False))
        outs.append(L.autograd.grad(outs[2].sum(), x))
        outs.append(repr(layer))
        for bad in ((1.5, mode), (0.5, "nope")):
            try:
                V.ops.stochastic_depth(x, *bad)
            except ValueError as exc:
                outs.append(str(exc))
        return outs

    vcompare(scenario, rtol=0, atol=0)


def test_drop_block(vcompare):
    def scenario(L, V):
        L.manual_seed(5)
        x2 = _x(L, 2, 3, 9, 8, dtype="float32")
        x3 = _x(L, 2, 2, 5, 6, 7, seed=1, dtype="float32")
        out = [V.ops.drop_block2d(x2, 0.3, 3), V.ops.drop_block2d(x2, 0.2, 5, eps=1e-3),
               V.ops.drop_block2d(x2, 0.3, 11),  # block clipped to the map
               V.ops.drop_block3d(x3, 0.25, 3), V.ops.drop_block2d(x2, 0.3, 3, training=False)]
        y = x2.clone()
        V.ops.drop_block2d(y, 0.3, 3, inplace=True)
        out.append(y)
        layers = [V.ops.DropBlock2d(0.1, 3), V.ops.DropBlock3d(0.2, 3, inplace=True)]
        out += [repr(m) for m in layers]
        out.append(layers[0](x2))
        for call in (lambda: V.ops.drop_block2d(x2, 1.2, 3),
                     lambda: V.ops.drop_block2d(x3, 0.2, 3),
                     lambda: V.ops.drop_block2d(x2, 0.2, 4),
                     lambda: V.ops.drop_block3d(x2, 0.2, 3)):
            try:
                call()
            except ValueError as exc:
                out.append(str(exc))
        return out

    vcompare(scenario, rtol=1.3e-6, atol=1e-5)


def _fpns(L, V):
    ops = V.ops
    extra = __import__(ops.__name__ + ".feature_pyramid_network",
                       fromlist=["LastLevelMaxPool"])
    return [ops.FeaturePyramidNetwork([4, 6, 8], 5),
            ops.FeaturePyramidNetwork([4, 6, 8], 5, extra_blocks=extra.LastLevelMaxPool(),
                                      norm_layer=L.nn.BatchNorm2d),
            ops.FeaturePyramidNetwork([4, 6, 8], 5, extra_blocks=extra.LastLevelP6P7(8, 5))]


def test_feature_pyramid_network(vcompare, vinit):
    vinit(_fpns)  # the initial values after manual_seed(0)

    def scenario(L, V):
        ops = V.ops
        L.manual_seed(0)
        fpns = _fpns(L, V)
        out = [repr(f) for f in fpns] + [list(f.state_dict()) for f in fpns]
        vision_compare.own_values(L, fpns)  # (the same values in both, whatever the kernels)
        x = OrderedDict([("a", _x(L, 2, 4, 16, 12)), ("b", _x(L, 2, 6, 8, 6, seed=1)),
                         ("c", _x(L, 2, 8, 4, 3, seed=2))])
        for f in fpns:
            f.double()
            out.append(f(x))
        # a checkpoint of the version before the convolutions were wrapped
        old = OrderedDict((k.replace(".0.weight", ".weight").replace(".0.bias", ".bias"), v)
                          for k, v in fpns[0].state_dict().items())
        old._metadata = {"": {"version": 1}}
        fresh = ops.FeaturePyramidNetwork([4, 6, 8], 5).double()
        out.append(list(old))
        result = fresh.load_state_dict(old)
        out.append((list(result.missing_keys), list(result.unexpected_keys), fresh(x)))
        for bad in (lambda: ops.FeaturePyramidNetwork([0, 4], 5),
                    lambda: ops.FeaturePyramidNetwork([4], 5, extra_blocks=L.nn.ReLU())):
            try:
                bad()
            except (ValueError, TypeError) as exc:
                out.append((type(exc).__name__, str(exc)))
        return out

    vcompare(scenario, rtol=1e-10, atol=1e-12)


def test_sigmoid_focal_loss(vcompare):
    def scenario(L, V):
        logits = _x(L, 4, 5, grad=True)
        targets = L.tensor((np.random.RandomState(1).rand(4, 5) > 0.6).astype("float64"))
        out = []
        for alpha, gamma, reduction in ((0.25, 2, "none"), (0.5, 0, "mean"), (-1, 1.5, "sum")):
            loss = V.ops.sigmoid_focal_loss(logits, targets, alpha, gamma, reduction)
            out.append((loss, L.autograd.grad(loss.sum(), logits)))
        for alpha, reduction in ((2.0, "none"), (0.25, "nope")):
            try:
                V.ops.sigmoid_focal_loss(logits, targets, alpha, reduction=reduction)
            except ValueError as exc:
                out.append(str(exc))
        return out

    vcompare(scenario, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["generalized_box_iou_loss", "distance_box_iou_loss",
                                  "complete_box_iou_loss"])
def test_box_iou_losses(vcompare, name):
    def scenario(L, V):
        f = getattr(V.ops, name)
        rng = np.random.RandomState(2)
        xy = rng.uniform(0, 10, (6, 2))
        a = L.tensor(np.concatenate([xy, xy + rng.uniform(1, 5, (6, 2))], 1), requires_grad=True)
        xy = rng.uniform(0, 10, (6, 2))
        b = L.tensor(np.concatenate([xy, xy + rng.uniform(1, 5, (6, 2))], 1), requires_grad=True)
        out = []
        for reduction in ("none", "mean", "sum"):
            loss = f(a, b, reduction=reduction)
            out.append((loss, L.autograd.grad(loss.sum(), (a, b))))
        out.append(f(a[:0], b[:0], reduction="mean"))
        out.append(f(a.detach().float(), b.detach().float(), eps=1e-3))
        out.append(f(a.detach().long(), b.detach().long()))
        try:
            f(a, b, reduction="nope")
        except ValueError as exc:
            out.append(str(exc))
        return out

    vcompare(scenario, rtol=1e-6, atol=1e-7)


def test_deform_conv2d(vcompare):
    def scenario(L, V):
        out = []
        for groups, offset_groups, use_mask, stride, pad, dil in ((1, 1, False, 1, 1, 1),
                                                                  (2, 2, True, 2, 0, 1),
                                                                  (1, 3, True, 1, 2, 2)):
            x = _x(L, 2, 6, 7, 8, grad=True)
            k = 3
            oh = (7 + 2 * pad - (dil * (k - 1) + 1)) // stride + 1
            ow = (8 + 2 * pad - (dil * (k - 1) + 1)) // stride + 1
            offset = L.tensor(np.random.RandomState(1).standard_normal(
                (2, 2 * offset_groups * k * k, oh, ow)) * 2, requires_grad=True)
            weight = _x(L, 4, 6 // groups, k, k, seed=2, grad=True)
            bias = _x(L, 4, seed=3, grad=True)
            mask = L.tensor(np.random.RandomState(4).rand(2, offset_groups * k * k, oh, ow),
                            requires_grad=True) if use_mask else None
            y = V.ops.deform_conv2d(x, offset, weight, bias, stride=stride, padding=pad,
                                    dilation=dil, mask=mask)
            inputs = [x, offset, weight, bias] + ([mask] if use_mask else [])
            grads = L.autograd.grad((y * _x(L, *y.shape, seed=5)).sum(), inputs)
            out.append((y, grads))
        return out

    vcompare(scenario, rtol=1e-10, atol=1e-12)


def test_deform_conv2d_module_and_errors(vcompare):
    def scenario(L, V):
        L.manual_seed(0)
        layers = [V.ops.DeformConv2d(4, 6, 3), V.ops.DeformConv2d(4, 6, 3, stride=2, padding=1,
                                                                  dilation=2, groups=2,
                                                                  bias=False)]
        out = [repr(m) for m in layers] + [list(m.state_dict().items()) for m in layers]
        x = _x(L, 1, 4, 6, 6, dtype="float32")
        offset = L.zeros(1, 18, 4, 4)
        out.append(layers[0](x, offset))  # zero offsets: an ordinary convolution
        for call in (lambda: V.ops.deform_conv2d(x, L.zeros(1, 17, 4, 4), L.rand(2, 4, 3, 3)),
                     lambda: V.ops.deform_conv2d(x, L.zeros(1, 18, 5, 4), L.rand(2, 4, 3, 3)),
                     lambda: V.ops.deform_conv2d(x, offset, L.rand(2, 4, 3, 3),
                                                 mask=L.rand(1, 8, 4, 4)),
                     lambda: V.ops.deform_conv2d(x, offset, L.rand(2, 3, 3, 3)),
                     lambda: V.ops.deform_conv2d(x.double(), offset, L.rand(2, 4, 3, 3)),
                     lambda: V.ops.DeformConv2d(3, 4, 3, groups=2),
                     lambda: V.ops.DeformConv2d(4, 3, 3, groups=2)):
            try:
                call()
            except (RuntimeError, ValueError) as exc:
                out.append((type(exc).__name__, str(exc)))
        return out

    vcompare(scenario, rtol=1.3e-6, atol=1e-5)
