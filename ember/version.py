"""Build information, as ``torch.version``: ``__version__``, and ``cuda`` (the CUDA runtime's version when CuPy
and a GPU are present, else None as in CPU builds of torch)."""
__version__ = "0.1.0"  # the package's version (ember.__version__)

__all__ = ["__version__", "git_version", "hip", "debug"]
git_version = None
hip = None
debug = False


def __getattr__(name):
    # looked up on first use: finding CUDA imports CuPy, which `import ember` does not
    if name == "cuda":
        from ._device import _import_cupy, cuda_available
        if not cuda_available():
            return None
        v = _import_cupy().cuda.runtime.runtimeGetVersion()
        return f"{v // 1000}.{v % 1000 // 10}"
    raise AttributeError(f"module 'ember.version' has no attribute {name!r}")
