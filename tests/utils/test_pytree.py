"""``torch.utils._pytree``: the leaves, their order and the rebuilt containers match torch's."""

from __future__ import annotations

import collections

import pytest

P = collections.namedtuple("P", "x y")


def _trees():
    return [
        1,
        None,
        [1, (2, 3), {"b": 4, "a": [5, None]}],
        (P(1, [2]), collections.OrderedDict(z=1, a=2), collections.deque([3, 4], maxlen=5)),
        {"img": "x", "target": {"boxes": "b", "labels": ("l",)}},
        collections.defaultdict(list, {"k": [1, 2]}),
    ]


def test_flatten_and_unflatten_match_torch(lib):
    from torch.utils import _pytree as theirs

    ours = lib.utils._pytree if hasattr(lib.utils, "_pytree") else None
    if ours is None:
        import importlib

        ours = importlib.import_module(lib.__name__ + ".utils._pytree")
    for tree in _trees():
        leaves, spec = ours.tree_flatten(tree)
        ref_leaves, ref_spec = theirs.tree_flatten(tree)
        assert leaves == ref_leaves
        assert repr(spec) == repr(ref_spec)
        assert spec.num_leaves == ref_spec.num_leaves
        rebuilt = ours.tree_unflatten([f"<{v}>" for v in leaves], spec)
        expected = theirs.tree_unflatten([f"<{v}>" for v in ref_leaves], ref_spec)
        assert rebuilt == expected and type(rebuilt) is type(expected)
        assert ours.tree_map(lambda v: [v], tree) == theirs.tree_map(lambda v: [v], tree)
    with pytest.raises(ValueError, match="has length 1 but the spec refers to a pytree that "
                                         "holds 3 items"):
        ours.tree_unflatten([1], ours.tree_flatten([1, (2, 3)])[1])
    assert ours.tree_flatten({"a": 1}, is_leaf=lambda x: isinstance(x, dict))[0] == [{"a": 1}]
