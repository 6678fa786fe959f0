"""``ember.backends``: torch's backend switches, so that training scripts that set them run unchanged.

ember runs on NumPy and CuPy, not on cuDNN, oneDNN, OpenMP or Metal: the flags are kept (scripts read them back) and
change no computation; ``is_available()`` says that the backend is not used.
"""
from . import cuda, cudnn, mkldnn, mps, openmp, opt_einsum

__all__ = ["cuda", "cudnn", "mkldnn", "mps", "openmp", "opt_einsum"]
