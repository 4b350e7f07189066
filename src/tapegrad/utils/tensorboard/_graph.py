"""``add_graph``: the model's graph for TensorBoard, read from tapegrad's own autograd graph.

torch traces the model with its JIT; tapegrad already records every differentiable op as a
backward node, so the graph is read from there::

    model.eval(); hooks on every submodule note the creation-order window of its forward
    out = model(*inputs)           float inputs as fresh leaves that require grad
    walk out.grad_fn -> next_functions -> ... (iteratively), each node once:
        backward node   -> NodeDef name "Net/Linear[fc1]/AddmmBackward0", op its node name,
                           in the innermost module whose forward created it (by ``_seq``)
        AccumulateGrad  -> the leaf: a parameter ("Net/Linear[fc1]/weight", attr: its dotted
                           name "fc1.weight", op "Parameter") or an input ("input/input.1")
        input edges     =  the nodes in next_functions: the forward op's inputs
    one "output/output.N" IO node per output tensor

So the GraphDef has one node per autograd node reachable from the outputs, plus one per
output (and per input that cannot require grad, such as integer indices).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ..._tensor import Tensor
from ...autograd.grad_mode import enable_grad
from ...autograd.graph import AccumulateGrad, _sequence


def _attrs(shape: tuple[int, ...] | None, text: str | None = None) -> dict[str, AttrValue]:
    attr = {}
    if text is not None:
        attr["attr"] = AttrValue(s=text.encode("utf_8"))
    if shape is not None:
        dims = [TensorShapeProto.Dim(size=d) for d in shape]
        attr["_output_shapes"] = AttrValue(list=AttrValue.ListValue(
            shape=[TensorShapeProto(dim=dims)]))
    return attr


def _flatten(obj: Any) -> list[Any]:
    """The tensors in an output: a tensor, or tuples/lists/dicts of them."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _flatten(v)]
    if isinstance(obj, (tuple, list)):
        return [t for v in obj for t in _flatten(v)]
    return []


def _scopes(model: Any) -> dict[int, str]:
    """``id(module) -> "Net/Sequential[layers]/Linear[0]"`` for the model and its submodules."""
    if not hasattr(model, "named_modules"):
        return {}
    root = type(model).__name__
    scopes = {}
    for path, module in model.named_modules():
        scope = root
        if path:
            parts = path.split(".")
            owner = model
            for part in parts:
                owner = getattr(owner, part)
                scope += f"/{type(owner).__name__}[{part}]"
        scopes[id(module)] = scope
    return scopes


def _record_windows(model: Any, scopes: dict[int, str], windows: list[list[Any]],
                    shapes: dict[int, tuple[int, ...]]) -> list[Any]:
    """Hooks noting, for each forward call of a submodule, the range of ``_seq`` numbers of
    the nodes it creates, and the shapes of the tensors it returns."""
    handles = []
    open_windows: dict[int, list[list[Any]]] = {}  # per module, its calls still running
    for module in model.modules():
        scope = scopes[id(module)]

        def pre(mod: Any, args: Any, scope: str = scope) -> None:
            windows.append([next(_sequence), None, scope])
            open_windows.setdefault(id(mod), []).append(windows[-1])

        def post(mod: Any, args: Any, out: Any) -> None:
            open_windows[id(mod)].pop()[1] = next(_sequence)
            for t in _flatten(out):
                if t.grad_fn is not None:
                    shapes[id(t.grad_fn)] = tuple(t.shape)

        handles.append(module.register_forward_pre_hook(pre))
        handles.append(module.register_forward_hook(post))
    return handles


def graph(model: Callable[..., Any], args: Any, verbose: bool = False,
          use_strict_trace: bool = True) -> tuple[GraphDef, RunMetadata]:
    """Run ``model`` on ``args`` and return the GraphDef of the autograd graph it records."""
    if args is None:
        args = ()
    elif not isinstance(args, (tuple, list)):
        args = (args,)
    inputs = [a.detach().requires_grad_(True)
              if isinstance(a, Tensor) and a.is_floating_point() else a for a in args]

    scopes = _scopes(model)
    windows: list[list[Any]] = []
    shapes: dict[int, tuple[int, ...]] = {}
    training = getattr(model, "training", None)
    handles = _record_windows(model, scopes, windows, shapes) if scopes else []
    try:
        if training is not None:
            model.train(False)  # type: ignore[attr-defined]
        with enable_grad():
            outputs = _flatten(model(*inputs))
    finally:
        for h in handles:
            h.remove()
        if training is not None:
            model.train(training)  # type: ignore[attr-defined]

    param_names = {}
    if hasattr(model, "named_parameters"):
        for name, p in model.named_parameters():
            param_names[id(p)] = name
    module_scope = {}
    if hasattr(model, "named_modules"):
        module_scope = {path: scopes[id(m)] for path, m in model.named_modules()}
    input_names = {id(a): f"input/input.{i + 1}" for i, a in enumerate(inputs)}
    root_scope = scopes.get(id(model), type(model).__name__)

    def scope_of(seq: int) -> str:
        best = None
        for start, end, scope in windows:
            if start < seq and (end is None or seq < end) and (best is None or start > best[0]):
                best = (start, scope)
        return best[1] if best else root_scope

    taken: set[str] = set()

    def unique(name: str) -> str:
        candidate, k = name, 1
        while candidate in taken:
            candidate = f"{name}_{k}"
            k += 1
        taken.add(candidate)
        return candidate

    names: dict[int, str] = {}
    defs: dict[str, NodeDef] = {}  # in creation order
    leaf_count = 0

    def add(name: str, op: str, attr: dict[str, AttrValue]) -> None:
        defs[name] = NodeDef(name=name, op=op, attr=attr)

    def name_of(node: Any) -> str:
        nonlocal leaf_count
        key = id(node)
        if key in names:
            return names[key]
        if isinstance(node, AccumulateGrad):
            var = node.variable
            if id(var) in param_names:
                dotted = param_names[id(var)]
                owner, _, short = dotted.rpartition(".")
                name = unique(f"{module_scope.get(owner, root_scope)}/{short}")
                add(name, "Parameter", _attrs(tuple(var.shape), dotted))
            elif id(var) in input_names:
                name = unique(input_names[id(var)])
                add(name, "IO Node", _attrs(tuple(var.shape)))
            else:
                leaf_count += 1
                name = unique(f"{root_scope}/leaf.{leaf_count}")
                add(name, "Leaf", _attrs(tuple(var.shape)))
            names[key] = name
            return name
        name = unique(f"{scope_of(node._seq)}/{node.name()}")
        names[key] = name
        add(name, node.name(), _attrs(shapes.get(key)))
        return name

    # walk from the outputs, each node once, without recursion
    roots = [t.grad_fn for t in outputs if t.grad_fn is not None]
    seen = {id(r) for r in roots}
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        this = name_of(node)
        edges = [nxt for nxt, _ in node.next_functions if nxt is not None]
        for nxt in edges:
            if id(nxt) not in seen:
                seen.add(id(nxt))
                if not isinstance(nxt, AccumulateGrad):
                    stack.append(nxt)
        defs[this].input.extend(name_of(nxt) for nxt in edges)

    for a in inputs:  # inputs that are not in the autograd graph (integer indices, ...)
        if isinstance(a, Tensor) and not a.requires_grad:
            add(unique(input_names[id(a)]), "IO Node", _attrs(tuple(a.shape)))
    for i, t in enumerate(outputs):
        name = unique(f"output/output.{i + 1}")
        add(name, "IO Node", _attrs(tuple(t.shape)))
        if t.grad_fn is not None:
            defs[name].input.append(names[id(t.grad_fn)])
    nodes = list(defs.values())
    if verbose:
        for n in nodes:
            print(f"{n.name} = {n.op}({', '.join(n.input)})")
    stats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(
        device="/device:CPU:0")]))
    return GraphDef(node=nodes, versions=VersionDef(producer=22)), stats
