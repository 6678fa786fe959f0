"""``ember.distributed``: ember has no process groups yet (no collectives, no DistributedDataParallel), so
``is_available()`` is False and scripts take their single-process path, as with a torch built without
distributed support."""


def is_available():
    """False: ember has no distributed backend."""
    return False


def is_initialized():
    """False: no process group is ever initialised."""
    return False
