"""ember.utils._pytree against torch.utils._pytree: leaves, specs (repr, counts, equality), rebuilding, mapping
over several trees, and the errors of mismatched structures."""
import doctest
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest
import torch.utils._pytree as tp

import ember
import ember.utils._pytree as ep

Point = namedtuple("Point", "x y")

TREES = [
    1,
    None,
    [],
    {},
    (),
    [1, [2, (3, None)], {"b": 4, "a": [5, 6]}],
    {"p": Point(1, [2, 3]), "o": OrderedDict(z=3, y=(4,)), "n": None},
    (Point([], {}), [[[]]], "str", 2.5),
    defaultdict(list, {"k": [1, 2], "j": 3}),
    deque([1, (2, 3)], maxlen=5),
    ember.return_types.max(values=[1, 2], indices=3),
]


def spec_summary(spec):
    return repr(spec), spec.num_leaves, spec.num_nodes, spec.num_children, spec.is_leaf(), spec.context


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_unflatten_as_torch(tree):
    leaves, spec = ep.tree_flatten(tree)
    want_leaves, want_spec = tp.tree_flatten(tree)
    assert leaves == want_leaves
    assert spec_summary(spec) == spec_summary(want_spec)
    assert ep.tree_leaves(tree) == tp.tree_leaves(tree) == list(ep.tree_iter(tree))
    assert ep.tree_structure(tree) == spec
    rebuilt = ep.tree_unflatten(leaves, spec)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert ep.tree_unflatten(spec, leaves) == tree  # torch accepts the arguments swapped
    doubled = [x * 2 if isinstance(x, int) else x for x in leaves]
    assert ep.tree_unflatten(doubled, spec) == tp.tree_unflatten(doubled, want_spec)


def test_namedtuple_and_return_types_keep_their_class():
    tree = ember.return_types.max(values=1, indices=2)
    spec = ep.tree_structure(tree)
    assert spec.type is namedtuple and spec.context is ember.return_types.max
    assert type(ep.tree_map(lambda x: x + 1, tree)) is ember.return_types.max
    assert ep.is_namedtuple(Point) and ep.is_namedtuple_instance(Point(1, 2)) and not ep.is_namedtuple((1, 2))


def test_is_leaf():
    tree = [(1, 2), [3, (4,)]]
    leaves, spec = ep.tree_flatten(tree, is_leaf=lambda x: isinstance(x, tuple))
    want_leaves, want_spec = tp.tree_flatten(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == want_leaves == [(1, 2), 3, (4,)] and repr(spec) == repr(want_spec)
    assert ep.tree_is_leaf(None) and ep.tree_is_leaf(ember.ones(2)) and not ep.tree_is_leaf([1])


def test_spec_equality_and_hash():
    a, b = ep.tree_structure([1, {"k": 2}]), ep.tree_structure([7, {"k": 8}])
    assert a == b and hash(a) == hash(b)
    assert a != ep.tree_structure([1, {"j": 2}]) and a != ep.tree_structure((1, {"k": 2}))
    assert a.child(1) == ep.tree_structure({"k": 0}) and len(a.children()) == 2


def test_tree_map_over_several_trees():
    for m in (ep, tp):
        assert m.tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]]) == [[5, 7, 9], [6, 1, 2]]
        # dicts of any kind match by keys
        assert m.tree_map(lambda a, b: a + b, {"a": 1, "b": 2}, OrderedDict(b=1, a=5)) == {"a": 6, "b": 3}
    x = [1, 2]
    seen = []
    assert ep.tree_map_(lambda a, b: seen.append(a * b), x, [3, 4]) is x and seen == [3, 8]


@pytest.mark.parametrize("tree, other, message", [
    ([1, 2], [1], "Node arity mismatch; expected 2, but got 1."),
    ([1, 2], (1, 2), "Node type mismatch; expected <class 'list'>, but got <class 'tuple'>."),
    ({"a": 1}, {"b": 1}, "Node keys mismatch; missing key(s): {'a'}; extra key(s): {'b'}."),
    (Point(1, 2), namedtuple("Other", "x y")(1, 2), "Node context mismatch for node type"),
])
def test_mismatched_structures_raise_as_torch(tree, other, message):
    for m in (ep, tp):
        with pytest.raises(ValueError) as e:
            m.tree_map(lambda a, b: a, tree, other)
        assert str(e.value).startswith(message)


def test_unflatten_wrong_number_of_leaves():
    spec = ep.tree_structure((1, [2, 3]))
    for s in (spec, tp.tree_structure((1, [2, 3]))):
        with pytest.raises(ValueError, match="`leaves` has length 2 but the spec refers to a pytree that holds 3"):
            s.unflatten([1, 2])
    with pytest.raises(TypeError, match="Expected `treespec` to be an instance of PyTreeSpec"):
        ep.tree_unflatten([1], [1])


def test_tree_map_only():
    tree = [1, 2.0, (3, "a"), {"k": ember.ones(1)}]
    for only in (int, (int, str), lambda x: x == 2.0):
        got = ep.tree_map_only(only, lambda x: x * 2, tree[:3])
        assert got == tp.tree_map_only(only, lambda x: x * 2, tree[:3])
    out = ep.tree_map_only(ember.Tensor, lambda t: t + 1, tree)
    assert out[:3] == tree[:3] and out[3]["k"].item() == 2.0
    with pytest.raises(TypeError, match="must be a type, a tuple of types, or a callable"):
        ep.tree_map_only(3, lambda x: x, tree)
    assert ep.tree_all(lambda x: x is not None, tree) and not ep.tree_any(lambda x: x is None, tree)


def test_register_pytree_node():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    ep.register_pytree_node(Pair, lambda p: ([p.a, p.b], "pair"), lambda values, ctx: Pair(*values))
    try:
        leaves, spec = ep.tree_flatten([Pair(1, (2, 3)), 4])
        assert leaves == [1, 2, 3, 4] and spec.child(0).type is Pair and spec.child(0).context == "pair"
        out = ep.tree_map(lambda x: x * 10, [Pair(1, (2, 3)), 4])
        assert isinstance(out[0], Pair) and out[0].b == (20, 30) and out[1] == 40
        with pytest.raises(ValueError, match="already registered as pytree node"):
            ep.register_pytree_node(Pair, lambda p: ([], None), lambda v, c: Pair(0, 0))
    finally:
        del ep.SUPPORTED_NODES[Pair]


def test_docstring_examples():
    result = doctest.testmod(ep, verbose=False)
    assert result.attempted >= 5 and result.failed == 0
