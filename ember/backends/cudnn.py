"""``ember.backends.cudnn``: cuDNN's switches, kept for compatibility; ember does not use cuDNN."""
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    """Whether ember runs convolutions on cuDNN: never (CuPy's own kernels serve CUDA tensors)."""
    return False


def version():
    """cuDNN's version, None: ember does not use cuDNN."""
    return None
