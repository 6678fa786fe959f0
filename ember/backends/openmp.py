"""``ember.backends.openmp``: OpenMP's availability; ember's CPU ops run on its own thread pool, not OpenMP."""


def is_available():
    """False: ember's intra-op parallelism is its own thread pool (see :func:`ember.set_num_threads`)."""
    return False
