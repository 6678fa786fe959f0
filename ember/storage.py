"""``ember.storage``: the storage classes, :class:`UntypedStorage` (bytes) and :class:`TypedStorage` (elements)."""
from ._storage import TypedStorage, UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]
