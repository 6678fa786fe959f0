"""``RemovableHandle``: what hook registrations return (``handle.remove()`` unregisters the hook)."""
from ..nn.modules._hooks import RemovableHandle

__all__ = ["RemovableHandle"]
