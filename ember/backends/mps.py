"""``ember.backends.mps``: Apple's Metal backend, which ember does not have."""


def is_available():
    """False: ember runs on CPU (NumPy) and CUDA (CuPy) only."""
    return False


def is_built():
    """False: ember has no Metal backend."""
    return False
