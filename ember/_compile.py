"""``ember.compile``: accepted so that scripts written for ``torch.compile`` run; ember executes eagerly."""


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None, name=None,
            disable=False):
    """Returns ``model`` (a module or function) itself, or a decorator doing so when ``model`` is None.

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
    return model
