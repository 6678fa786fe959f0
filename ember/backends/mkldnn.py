"""``ember.backends.mkldnn``: oneDNN's switch, kept for compatibility; ember's CPU ops run on NumPy."""
enabled = True


def is_available():
    """False: ember does not use oneDNN."""
    return False
