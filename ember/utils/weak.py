"""``ember.utils.weak``: weak references and dictionaries keyed by object identity, for tensors (whose ``__eq__``
and ``__hash__`` are elementwise and by identity) and other objects."""
import weakref
from collections.abc import MutableMapping

__all__ = ["TensorWeakRef", "WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary"]


class WeakIdRef(weakref.ref):
    """A weak reference hashed by the id of its referent and equal to another only for the same live referent."""

    __slots__ = ["_id"]

    def __init__(self, key, callback=None):
        self._id = id(key)
        super().__init__(key, callback)

    def __hash__(self):
        return self._id

    def __eq__(self, other):
        a, b = self(), other()
        if a is not None and b is not None:
            return a is b
        return self is other


class _StrongIdRef:
    """A key to look up an object by identity without creating a weak reference."""

    __slots__ = ["_obj", "_id"]

    def __init__(self, obj):
        self._obj, self._id = obj, id(obj)

    def __call__(self):
        return self._obj

    def __hash__(self):
        return self._id

    def __eq__(self, other):
        return self._obj is other()


class WeakIdKeyDictionary(MutableMapping):
    """A dict whose keys are held weakly and compared by identity; an entry goes when its key is collected.

    Example::

        >>> d = WeakIdKeyDictionary()
        >>> t = ember.ones(2)
        >>> d[t] = "state"
        >>> t in d
        True
    """

    def __init__(self, dict=None, ref_type=WeakIdRef):
        self.data, self.ref_type = {}, ref_type

        def remove(k, selfref=weakref.ref(self)):
            self = selfref()
            if self is not None:
                self.data.pop(k, None)

        self._remove = remove
        if dict is not None:
            self.update(dict)

    def __getitem__(self, key):
        return self.data[_StrongIdRef(key)]

    def __setitem__(self, key, value):
        self.data[self.ref_type(key, self._remove)] = value

    def __delitem__(self, key):
        del self.data[_StrongIdRef(key)]

    def __contains__(self, key):
        return _StrongIdRef(key) in self.data

    def __iter__(self):
        for ref in list(self.data):
            obj = ref()
            if obj is not None:
                yield obj

    def __len__(self):
        return sum(1 for ref in list(self.data) if ref() is not None)

    def __repr__(self):
        return f"<{type(self).__name__} at {id(self):#x}>"

    def copy(self):
        """A shallow copy, holding the same keys weakly."""
        return type(self)(dict(self.items()), self.ref_type)

    __copy__ = copy


WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a tensor: ``ref()`` is the tensor, or None once it is collected."""

    __slots__ = ["ref"]

    def __init__(self, tensor):
        self.ref = weakref.ref(tensor)

    def __call__(self):
        return self.ref()
