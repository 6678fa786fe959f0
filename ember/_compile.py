"""``ember.compile``: accepted so that scripts written for ``torch.compile`` run; ember executes eagerly."""
from .nn.modules.module import Module


class OptimizedModule(Module):
    """What ``compile`` returns for a module, as torch's: it holds the module as ``_orig_mod`` (so its
    ``state_dict`` keys carry the ``_orig_mod.`` prefix), runs it unchanged, and reads the module's other
    attributes through to it."""

    def __init__(self, mod):
        super().__init__()
        self._orig_mod = mod

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_orig_mod":
                raise
            return getattr(self._orig_mod, name)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None, name=None,
            disable=False):
    """Returns an :class:`OptimizedModule` wrapping ``model`` when it is a module, ``model`` itself when it is a
    function, or a decorator doing so when ``model`` is None.

    ember has no graph compiler: the ops of an eager step already run in NumPy's (or CuPy's) compiled kernels and
    in ember's fused loops, so the model computes exactly what it computed before, at the same speed.
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, name=name, disable=disable)
    if not callable(model):
        raise TypeError(f"A callable function is expected, but {type(model)} is provided.")
    return OptimizedModule(model) if isinstance(model, Module) else model
