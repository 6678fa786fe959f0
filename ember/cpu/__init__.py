"""The CPU as a device module, mirroring ``ember.cuda``'s queries (torch's ``torch.cpu``)."""


def is_available():
    """Always True: ember computes on the CPU with NumPy."""
    return True


def device_count():
    """One CPU device."""
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """Does nothing: CPU ops have finished when they return."""


def __getattr__(name):
    # ember.cpu.amp, torch's older spelling of ember.amp for the CPU, imported on first use
    if name == "amp":
        import importlib
        return importlib.import_module(".amp", __name__)
    raise AttributeError(f"module 'ember.cpu' has no attribute {name!r}")
