"""Run a callback right after an optional third-party package is imported, without importing it first."""
import sys


class _AfterImport:
    """A `sys.meta_path` finder that wraps the loader of one top-level package and leaves once it has loaded it."""

    def __init__(self, name, callback):
        self.name, self.callback = name, callback

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        # a bare `importlib.util.find_spec` also lands here: only executing the module counts
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(fullname, path, target)
                if spec is not None and spec.loader is not None:
                    spec.loader = _Loader(spec.loader, self)
                    return spec
        return None


class _Loader:
    def __init__(self, loader, hook):
        self.loader, self.hook = loader, hook

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        if self.hook in sys.meta_path:
            sys.meta_path.remove(self.hook)
            self.hook.callback()


def after_import(name, callback):
    """Call ``callback()`` once ``name`` is imported: now if it already is, else right after its import."""
    if name in sys.modules:
        callback()
    else:
        sys.meta_path.insert(0, _AfterImport(name, callback))
