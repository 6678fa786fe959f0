"""``ember.utils.dlpack``: tensors to and from DLPack capsules."""
from .._dlpack import DLDeviceType, from_dlpack, to_dlpack

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]
