"""``ember.backends.opt_einsum``: the contraction-order switches of ``einsum``. ember's ``einsum`` lets NumPy
(or CuPy) choose the order; the opt_einsum package is not used, so ``is_available()`` is False and ``enabled``
and ``strategy`` are kept as assigned."""
enabled = False
strategy = None


def is_available():
    """False: ember does not use the opt_einsum package."""
    return False


def get_opt_einsum():
    """The opt_einsum package if ember used it: None."""
    return None
