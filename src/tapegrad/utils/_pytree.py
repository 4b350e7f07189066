"""Nested containers as a flat list of leaves plus a spec to rebuild them (``torch.utils._pytree``).

A pytree is a leaf or a container node whose children are pytrees. The nodes are ``list``,
``tuple``, ``dict``, named tuples, ``OrderedDict``, ``defaultdict`` and ``deque`` (and what
``register_pytree_node`` adds); everything else, ``None`` and tensors included, is a leaf::

    leaves, spec = tree_flatten((img, {"boxes": b, "labels": y}))   # [img, b, y]
    tree_unflatten([f(x) for x in leaves], spec)                     # the same shape, new leaves

The leaves come depth first, children in container order (a dict's in insertion order). The
torchvision transforms (``transforms.v2``) use it to find the images, boxes and masks in a
sample and to put the transformed ones back where they were.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict, deque
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

__all__ = ["LeafSpec", "PyTree", "TreeSpec", "register_pytree_node", "tree_flatten",
           "tree_leaves", "tree_map", "tree_structure", "tree_unflatten"]

PyTree = Any


class NodeDef(NamedTuple):
    """How one container type splits into (children, context) and is rebuilt from them."""
    type: type
    flatten_fn: Callable[[Any], tuple[list, Any]]
    unflatten_fn: Callable[[Iterable, Any], Any]


SUPPORTED_NODES: dict[type, NodeDef] = {}


def register_pytree_node(cls: type, flatten_fn: Callable[[Any], tuple[list, Any]],
                         unflatten_fn: Callable[[Iterable, Any], Any], **kwargs: Any) -> None:
    """Make ``cls`` a container node: ``flatten_fn(x) -> (children, context)`` and
    ``unflatten_fn(children, context) -> x``."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn)


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node_type(x: Any) -> type:
    if _is_namedtuple(x):
        return NamedTuple  # type: ignore[return-value]
    return type(x)


register_pytree_node(list, lambda x: (list(x), None), lambda c, _: list(c))
register_pytree_node(tuple, lambda x: (list(x), None), lambda c, _: tuple(c))
register_pytree_node(dict, lambda x: (list(x.values()), list(x.keys())),
                     lambda c, keys: dict(zip(keys, c, strict=True)))
register_pytree_node(NamedTuple, lambda x: (list(x), type(x)),  # type: ignore[arg-type]
                     lambda c, cls: cls(*c))
register_pytree_node(OrderedDict, lambda x: (list(x.values()), list(x.keys())),
                     lambda c, keys: OrderedDict(zip(keys, c, strict=True)))
register_pytree_node(defaultdict,
                     lambda x: (list(x.values()), [x.default_factory, list(x.keys())]),
                     lambda c, ctx: defaultdict(ctx[0], zip(ctx[1], c, strict=True)))
register_pytree_node(deque, lambda x: (list(x), x.maxlen),
                     lambda c, maxlen: deque(c, maxlen=maxlen))


class TreeSpec:
    """The shape of a pytree: a node's type and context, and its children's specs."""

    def __init__(self, type: Any, context: Any, children_specs: list[TreeSpec]) -> None:
        self.type = type
        self.context = context
        self.children_specs = children_specs
        self.num_nodes: int = 1 + sum(s.num_nodes for s in children_specs)
        self.num_leaves: int = sum(s.num_leaves for s in children_specs)
        self.num_children = len(children_specs)

    def is_leaf(self) -> bool:
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self) -> list[TreeSpec]:
        return list(self.children_specs)

    def child(self, index: int) -> TreeSpec:
        return self.children_specs[index]

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        return tree_unflatten(leaves, self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.type is other.type and self.context == other.context
                and self.children_specs == other.children_specs)

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self, indent: int = 0) -> str:
        name = "namedtuple" if self.type is NamedTuple else self.type.__name__
        context = self.context.__repr__() if not isinstance(self.context, type) else (
            repr(self.context))
        parts = [child.__repr__(indent + 2) for child in self.children_specs]
        inner = (",\n" + " " * (indent + 2)).join(parts)
        return f"TreeSpec({name}, {context}, [{inner}])"


class LeafSpec(TreeSpec):
    """The spec of a single leaf, printed ``*``."""

    def __init__(self) -> None:
        super().__init__(None, None, [])
        self.num_nodes = 1
        self.num_leaves = 1

    def __repr__(self, indent: int = 0) -> str:
        return "*"


_LEAF = LeafSpec()


def _flatten(tree: PyTree, leaves: list, is_leaf: Callable[[Any], bool] | None) -> TreeSpec:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF
    node = SUPPORTED_NODES.get(_node_type(tree))
    if node is None:
        leaves.append(tree)
        return _LEAF
    children, context = node.flatten_fn(tree)
    specs = [_flatten(child, leaves, is_leaf) for child in children]
    return TreeSpec(node.type, context, specs)


def tree_flatten(tree: PyTree, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` (depth first) and the spec that rebuilds it."""
    leaves: list[Any] = []
    spec = _flatten(tree, leaves, is_leaf)
    return leaves, spec


def _build(spec: TreeSpec, it: Any) -> PyTree:
    if isinstance(spec, LeafSpec):
        return next(it)
    children = [_build(child, it) for child in spec.children_specs]
    return SUPPORTED_NODES[spec.type].unflatten_fn(children, spec.context)


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """The pytree of shape ``treespec`` holding ``leaves`` (in flattening order)."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance "
                        f"of TreeSpec but got item of type {type(treespec)}.")
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(
            f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
            f"to a pytree that holds {treespec.num_leaves} items ({treespec}).")
    return _build(treespec, iter(leaves))


def tree_leaves(tree: PyTree, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, depth first."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: PyTree, is_leaf: Callable[[Any], bool] | None = None) -> TreeSpec:
    """The spec of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
             is_leaf: Callable[[Any], bool] | None = None) -> PyTree:
    """``tree`` with ``func`` applied to each leaf (and the matching leaves of ``rests``)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [tree_flatten(r, is_leaf)[0] for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others, strict=True)], spec)
