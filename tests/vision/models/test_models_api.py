"""The model registry and the weights enums against torchvision: list_models, get_model,
get_model_builder, get_model_weights, get_weight, every builder's enum (members, URLs, meta,
transforms), the pre-0.13 interface (pretrained=, positional arguments) with its warnings and
errors, and the checks of num_classes against the chosen weights."""

from __future__ import annotations

import copy
import importlib
import pickle

import pytest


def _builders(V):
    return V.models.list_models(module=V.models)


def test_list_models(vcompare):
    def scenario(L, V):
        m = V.models
        return [
            m.list_models(module=m),
            m.list_models(module=m, include="resnet*"),
            m.list_models(module=m, include=["vit_*", "swin_v2*"], exclude="*_l_*"),
            m.list_models(module=m, exclude=["*net*", "vit*", "swin*", "vgg*"]),
            m.list_models(module=m, include="nothing*"),
        ]

    result = vcompare(scenario).result
    assert len(result[0]) == 80 and "maxvit_t" in result[0]


def test_get_model_and_builder(vcompare):
    def scenario(L, V):
        m = V.models
        L.manual_seed(0)
        model = m.get_model("squeezenet1_1", num_classes=7)
        return [
            m.get_model_builder("SqueezeNet1_1").__name__,
            m.get_model_builder("resnet50").__name__,
            [(k, tuple(v.shape)) for k, v in model.state_dict().items()][-2:],
            model.classifier[1].weight.sum(),
            m.get_model_builder("nope"),
        ]

    vcompare(scenario)


def test_unknown_model(vcompare):
    vcompare(lambda L, V: V.models.get_model("nope"))
    vcompare(lambda L, V: V.models.get_model_weights("nope"))


def test_get_model_weights_and_get_weight(vcompare):
    def scenario(L, V):
        m = V.models
        out = [repr(m.get_model_weights("resnet18")), repr(m.get_model_weights(m.vit_b_16)),
               repr(m.get_weight("ResNet50_Weights.IMAGENET1K_V2")),
               repr(m.get_weight("ViT_H_14_Weights.IMAGENET1K_SWAG_E2E_V1")),
               repr(m.get_weight("MobileNet_V3_Large_Weights.DEFAULT"))]
        for bad in ("foo", "Nope_Weights.IMAGENET1K_V1", "a.b.c"):
            try:
                m.get_weight(bad)
            except ValueError as exc:
                out.append(str(exc))
        try:
            m.get_weight("ResNet50_Weights.NOPE")
        except KeyError as exc:
            out.append(("KeyError", str(exc)))
        try:
            m.get_model_weights(lambda x: x)
        except ValueError as exc:
            out.append(str(exc))
        return out

    vcompare(scenario)


def _enum_table(V):
    """Every builder's weights: member names (aliases too), URLs, meta and transforms."""
    m = V.models
    table = {}
    for name in _builders(V):
        enum = m.get_model_weights(name)
        members = {}
        for member_name, member in enum.__members__.items():
            t = member.transforms
            members[member_name] = (
                repr(member), member.url, member.meta, t.func.__name__, t.args,
                {k: (v.name if hasattr(v, "name") else v) for k, v in t.keywords.items()},
            )
        table[name] = (enum.__name__, members)
    return table


def test_every_builders_weights(vcompare):
    result = vcompare(lambda L, V: _enum_table(V)).result
    assert len(result) == 80
    assert result["resnet50"][1]["DEFAULT"][0] == "ResNet50_Weights.IMAGENET1K_V2"


def test_weights_presets(vcompare):
    # the preset each set of weights expects, built by the transforms package
    def scenario(L, V):
        m = V.models
        out = []
        for name in ("resnet18", "vit_b_16", "efficientnet_b3", "inception_v3", "regnet_y_16gf",
                     "swin_v2_b", "vgg16", "maxvit_t"):
            for member in m.get_model_weights(name):
                out.append(repr(member.transforms()))
        return out

    vcompare(scenario)


def test_weights_enum_behaviour(vcompare):
    def scenario(L, V):
        m = V.models
        w = m.ResNet18_Weights
        out = [w.verify(None), repr(w.verify("IMAGENET1K_V1")),
               repr(w.verify("ResNet18_Weights.IMAGENET1K_V1")),
               repr(w.verify(w.DEFAULT)), w.DEFAULT is w.IMAGENET1K_V1,
               copy.deepcopy(w.IMAGENET1K_V1) is w.IMAGENET1K_V1,
               pickle.loads(pickle.dumps(m.ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1))
               is m.ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1,
               w.IMAGENET1K_V1.value == m.ResNet18_Weights.IMAGENET1K_V1.value,
               w.IMAGENET1K_V1.value == m.ResNet34_Weights.IMAGENET1K_V1.value,
               [repr(x) for x in m.RegNet_Y_128GF_Weights]]
        for bad in (m.ResNet50_Weights.IMAGENET1K_V1, 3):
            try:
                w.verify(bad)
            except TypeError as exc:
                out.append(str(exc))
        try:
            w.verify("IMAGENET1K_V9")
        except KeyError as exc:
            out.append(("KeyError", str(exc)))
        return out

    vcompare(scenario)


def test_legacy_pretrained_interface(vcompare):
    # pretrained=False (by keyword or position) becomes weights=None, with torchvision's
    # deprecation warnings; builders without pretrained weights refuse pretrained=True
    def scenario(L, V):
        m = V.models
        out = []
        L.manual_seed(0)
        a = m.squeezenet1_1(pretrained=False)
        b = m.squeezenet1_1(False)
        c = m.squeezenet1_1(weights=None, progress=False)
        d = m.squeezenet1_1(None, False)  # positional keyword-only arguments
        out.append([sorted(x.state_dict()) == sorted(a.state_dict()) for x in (b, c, d)])
        for build in (lambda: m.regnet_y_128gf(pretrained=True),
                      lambda: m.vit_h_14(True),
                      lambda: m.resnet18(weights=m.ResNet50_Weights.DEFAULT),
                      lambda: m.resnet18(weights="IMAGENET1K_V1", num_classes=10),
                      lambda: m.googlenet(weights="DEFAULT", aux_logits=False,
                                          num_classes=3),
                      lambda: m.vit_b_16(weights="IMAGENET1K_SWAG_E2E_V1", image_size=224),
                      lambda: m.maxvit_t(weights="DEFAULT", input_size=(64, 64))):
            try:
                build()
            except (ValueError, TypeError) as exc:
                out.append((type(exc).__name__, str(exc)))
        return out

    vcompare(scenario)


def test_model_utils(vcompare):
    def scenario(L, V):
        from importlib import import_module

        u = import_module(V.models.__name__ + "._utils")
        out = [u._make_divisible(v, d) for v in (3.5, 8.0, 17.9, 31.0, 100.1) for d in (4, 8)]
        out.append(u._make_divisible(10, 8, min_value=16))
        out.append(u._ovewrite_value_param("x", None, 3))
        out.append(u._ovewrite_value_param("x", 3, 3))
        try:
            u._ovewrite_value_param("x", 2, 3)
        except ValueError as exc:
            out.append(str(exc))
        L.manual_seed(0)
        model = V.models.squeezenet1_1()
        getter = u.IntermediateLayerGetter(model, {"features": "feat"})
        x = L.ones(1, 3, 33, 33)
        feats = getter(x)
        out.append([(k, tuple(v.shape), v.sum()) for k, v in feats.items()])
        out.append(list(dict(getter.named_children())))
        try:
            u.IntermediateLayerGetter(model, {"nope": "x"})
        except ValueError as exc:
            out.append(str(exc))
        return out

    vcompare(scenario, rtol=1e-5)


@pytest.mark.parametrize("module", [
    "alexnet", "convnext", "densenet", "efficientnet", "googlenet", "inception", "maxvit",
    "mnasnet", "mobilenet", "mobilenetv2", "mobilenetv3", "regnet", "resnet", "shufflenetv2",
    "squeezenet", "swin_transformer", "vgg", "vision_transformer"])
def test_module_namespaces(vision, tv, module):
    # every public name of torchvision's model modules exists here
    theirs = importlib.import_module(f"{tv.models.__name__}.{module}")
    ours = importlib.import_module(f"{vision.models.__name__}.{module}")
    assert sorted(ours.__all__) == sorted(theirs.__all__)
    for name in theirs.__all__:
        assert hasattr(ours, name), name
