"""``DistributedDataParallel``: importable, as scripts import it at the top, though ember has no process groups."""
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """torch's multi-process wrapper. ember has no distributed backend (``ember.distributed.is_available()`` is
    False), so no process group is ever initialised and constructing one raises as torch does without one; the
    class exists so that ``from torch.nn.parallel import DistributedDataParallel`` and ``isinstance`` checks work.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, **kwargs):
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
