"""``ember.distributed``: ember has no process groups yet (no collectives; ``DistributedDataParallel`` and
``init_process_group`` exist to be imported, and refuse to run), so ``is_available()`` is False and scripts take
their single-process path, as with a torch built without distributed support."""


def is_available():
    """False: ember has no distributed backend."""
    return False


def is_initialized():
    """False: no process group is ever initialised."""
    return False


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, **kwargs):
    """Raises: ember has no distributed backend to start a process group with."""
    raise RuntimeError("ember.distributed has no backend: init_process_group() is not available; run the script "
                       "as a single process.")


def destroy_process_group(group=None):
    """Raises: no process group was ever initialised."""
    raise ValueError("Default process group has not been initialized, please make sure to call init_process_group.")
