"""``torch.utils.data._utils``'s importable corner: ``collate``, where custom collate functions find the building
blocks of ``default_collate``."""
from . import collate

__all__ = ["collate"]
