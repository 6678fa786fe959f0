"""Nested Python containers as trees, as ``torch.utils._pytree``: flatten a structure of lists, tuples, dicts,
namedtuples, OrderedDicts, defaultdicts and deques into its leaves and a :class:`TreeSpec`, and rebuild it.

Anything that is not a registered container is a leaf (``None`` included); :func:`register_pytree_node` adds
container types.

Example::

    >>> leaves, spec = tree_flatten({"a": [1, 2], "b": (3, None)})
    >>> leaves
    [1, 2, 3, None]
    >>> tree_unflatten([x * 10 for x in leaves[:3]] + [None], spec)
    {'a': [10, 20], 'b': (30, None)}
    >>> tree_map(lambda x: x + 1, {"x": 7, "y": (42, 64)})
    {'x': 8, 'y': (43, 65)}
"""
import functools
import types
from collections import OrderedDict, defaultdict, deque, namedtuple

__all__ = ["TreeSpec", "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_unflatten", "tree_iter",
           "tree_leaves", "tree_structure", "tree_map", "tree_map_", "tree_map_only", "tree_all", "tree_any",
           "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance"]

NodeDef = namedtuple("NodeDef", ["type", "flatten_fn", "unflatten_fn"])
SUPPORTED_NODES = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Registers ``cls`` as a container: ``flatten_fn(node) -> (children, context)`` and
    ``unflatten_fn(children, context) -> node``. The serialization and key-path arguments are accepted for torch's
    signature; ember's treespecs are not serialized.

    Raises:
        ValueError: ``cls`` is already registered
    """
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    if (to_dumpable_context is None) ^ (from_dumpable_context is None):
        raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must be None or registered.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn)


def is_namedtuple_class(cls):
    """Whether ``cls`` is a namedtuple class."""
    return (isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(field) is str for field in cls._fields) and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


def is_namedtuple(obj):
    """Whether ``obj`` is a namedtuple class or instance."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj):
    """Whether ``obj`` is a namedtuple instance."""
    return is_namedtuple_class(type(obj))


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


register_pytree_node(tuple, lambda t: (list(t), None), lambda values, _: tuple(values))
register_pytree_node(list, lambda t: (t, None), lambda values, _: list(values))
register_pytree_node(dict, _dict_flatten, lambda values, keys: dict(zip(keys, values)))
# every namedtuple class is a node of type ``namedtuple``, its context the class
register_pytree_node(namedtuple, lambda t: (list(t), type(t)), lambda values, cls: cls(*values))
register_pytree_node(OrderedDict, _dict_flatten, lambda values, keys: OrderedDict(zip(keys, values)))
register_pytree_node(defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d.keys())]),
                     lambda values, context: defaultdict(context[0], zip(context[1], values)))
register_pytree_node(deque, lambda d: (list(d), d.maxlen), lambda values, maxlen: deque(values, maxlen=maxlen))

_BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})
_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})


def _node_type(tree):
    cls = type(tree)
    return namedtuple if is_namedtuple_class(cls) else cls


def tree_is_leaf(tree, is_leaf=None):
    """Whether ``tree`` is a leaf: not a registered container, or one ``is_leaf`` accepts."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


class TreeSpec:
    """The structure of a pytree: the root's ``type`` (None for a leaf), its ``context`` (a dict's keys, a
    namedtuple's class, ...) and a spec per child.

    Attributes:
        num_leaves, num_nodes, num_children (int): the counts of leaves and nodes below (and including) the root,
            and of the root's children
    """

    __slots__ = ("type", "context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type, context, children_specs):
        self.type, self.context, self._children = type, context, children_specs
        if type is None:
            self.num_nodes, self.num_leaves, self.num_children = 1, 1, 0
        else:
            self.num_nodes = 1 + sum(c.num_nodes for c in children_specs)
            self.num_leaves = sum(c.num_leaves for c in children_specs)
            self.num_children = len(children_specs)

    def __repr__(self, indent=0):
        if self.type is None:
            return "*"
        indent += 2
        children = (",\n" + " " * indent).join(child.__repr__(indent) for child in self._children)
        return f"TreeSpec({self.type.__name__}, {self.context}, [{children}])"

    def __eq__(self, other):
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self is other or str(self.type) == str(other.type) and self.context == other.context
                and self._children == other._children)

    def __hash__(self):
        context = self.context
        if self.type is defaultdict:
            context = (context[0], tuple(context[1]))
        elif self.type in (dict, OrderedDict):
            context = tuple(context)
        elif self.type is not None and self.type not in _BUILTIN_TYPES:
            context = None  # a custom node's context may not be hashable
        return hash((self.type, context, tuple(self._children)))

    def is_leaf(self):
        """Whether the spec is a leaf's."""
        return self.type is None

    def children(self):
        """The children's specs."""
        return list(self._children)

    def child(self, index):
        """The spec of child ``index``."""
        return self._children[index]

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at this spec's leaves; ``tree`` must have this spec's structure down to them.

        Raises:
            ValueError: a node's type, number of children, keys or context differ from the spec's
        """
        subtrees = []
        self._flatten_up_to(tree, subtrees)
        return subtrees

    def _flatten_up_to(self, node, subtrees):
        if self.type is None:
            subtrees.append(node)
            return
        node_type = _node_type(node)
        if self.type in _DICT_TYPES and node_type in _DICT_TYPES:  # dicts of any kind match by keys
            keys = self.context[1] if self.type is defaultdict else self.context
            missing, extra = set(keys) - set(node), set(node) - set(keys)
            if missing or extra:
                raise ValueError("Node keys mismatch" + (f"; missing key(s): {missing}" if missing else "")
                                 + (f"; extra key(s): {extra}" if extra else "") + ".")
            children = [node[key] for key in keys]
        else:
            if node_type != self.type:
                raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
            if node_type is not deque and context != self.context:  # a deque's maxlen may differ
                raise ValueError(f"Node context mismatch for node type {self.type!r}; expected {self.context!r}, "
                                 f"but got {context!r}.")
        for child, spec in zip(children, self._children):
            spec._flatten_up_to(child, subtrees)

    def unflatten(self, leaves):
        """The pytree of this structure holding ``leaves`` (an iterable of ``num_leaves`` values), in order.

        Raises:
            ValueError: the number of leaves differs from ``num_leaves``
        """
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to "
                             f"a pytree that holds {self.num_leaves} items ({self}).")
        if self.type is None:
            return leaves[0]
        children, start = [], 0
        for spec in self._children:
            children.append(spec.unflatten(leaves[start:start + spec.num_leaves]))
            start += spec.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)


_LEAF_SPEC = TreeSpec(None, None, [])


def tree_flatten(tree, is_leaf=None):
    """The leaves of ``tree`` (depth first, in each container's order) and its :class:`TreeSpec`. ``is_leaf`` may
    stop the descent at containers it accepts."""
    leaves = []

    def flatten(node):
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF_SPEC
        node_type = _node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [flatten(child) for child in children])

    return leaves, flatten(tree)


def tree_unflatten(leaves, treespec):
    """The pytree of structure ``treespec`` holding ``leaves``: the inverse of :func:`tree_flatten`."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                            f"{type(treespec)}.")
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """An iterator over the leaves of ``tree``."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    for child in SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None):
    """The list of leaves of ``tree``."""
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    """The :class:`TreeSpec` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """A pytree of ``tree``'s structure whose leaves are ``func(leaf, *leaves of rests)``; each of ``rests`` must
    have ``tree``'s structure, or ``tree``'s as a prefix (its subtree at a leaf of ``tree`` is passed whole).

    Example::

        >>> tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]])
        [[5, 7, 9], [6, 1, 2]]
    """
    leaves, spec = tree_flatten(tree, is_leaf)
    return spec.unflatten(map(func, leaves, *(spec.flatten_up_to(r) for r in rests)))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Calls ``func`` as :func:`tree_map` does, for its side effects (in-place updates); returns ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    for args in zip(leaves, *(spec.flatten_up_to(r) for r in rests)):
        func(*args)
    return tree


def _predicate(type_or_types_or_pred):
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        return lambda x: isinstance(x, type_or_types_or_pred)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError("Argument must be a type, a tuple of types, or a callable.")


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """:func:`tree_map` applying ``func`` only to the leaves of the given type(s), or accepted by a predicate; the
    other leaves are kept.

    Example::

        >>> tree_map_only(int, lambda x: x * 10, [1, 2.0, (3, "a")])
        [10, 2.0, (30, 'a')]
    """
    pred = _predicate(type_or_types_or_pred)

    @functools.wraps(func)
    def only(x):
        return func(x) if pred(x) else x

    return tree_map(only, tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    """Whether ``pred`` holds for every leaf of ``tree``."""
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    """Whether ``pred`` holds for some leaf of ``tree``."""
    return any(map(pred, tree_iter(tree, is_leaf)))
