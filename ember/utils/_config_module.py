"""Config modules (``ember._dynamo.config``, ``ember._inductor.config``): a module's public attributes become
settings that keep what is assigned, refuse unknown names with AttributeError, and can be changed for a block or a
function with ``patch``. A class in the module is a section (``config.triton.unique_kernel_names``)."""
import contextlib
import copy
import sys
import types


def _collect(namespace, prefix, out):
    for name, value in list(namespace.items()):
        if name.startswith("_") or isinstance(value, types.ModuleType) or \
                callable(value) and not isinstance(value, type):
            continue
        if isinstance(value, type):
            _collect(vars(value), prefix + name + ".", out)
        else:
            out[prefix + name] = value


class _Section:
    """Attribute access to the settings under ``prefix`` of a config module."""

    def __init__(self, module, prefix):
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name):
        return self._module._lookup(self._prefix + name)

    def __setattr__(self, name, value):
        self._module._assign(self._prefix + name, value)

    def __delattr__(self, name):
        raise AttributeError(f"{self._module.__name__}.{self._prefix}{name} cannot be deleted")

    def __dir__(self):
        n = len(self._prefix)
        return sorted({k[n:].split(".")[0] for k in self._module._config if k.startswith(self._prefix)})


class ConfigModule(types.ModuleType):
    """A config module: settings read and assigned as attributes; unknown names raise AttributeError."""

    def _key(self, name):
        name = self._aliases.get(name, name)
        if name in self._config or any(k.startswith(name + ".") for k in self._config):
            return name
        raise AttributeError(f"{self.__name__}.{name} does not exist")

    def _lookup(self, name):
        key = self._key(name)
        return self._config[key] if key in self._config else _Section(self, key + ".")

    def _setting(self, name):
        key = self._key(name)
        if key not in self._config:
            raise AttributeError(f"{self.__name__}.{name} is a section, not a setting")
        return key

    def _assign(self, name, value):
        self._config[self._setting(name)] = value

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._lookup(name)

    def __setattr__(self, name, value):
        if name.startswith("_"):
            super().__setattr__(name, value)
        else:
            self._assign(name, value)

    def __delattr__(self, name):
        raise AttributeError(f"{self.__name__}.{name} cannot be deleted")

    def __dir__(self):
        return sorted(set(super().__dir__()) | {k.split(".")[0] for k in self._config})

    def get_config_copy(self):
        """A copy of all settings, by dotted name."""
        return copy.deepcopy(self._config)

    def load_config(self, config):
        """Assigns the settings of a dict of dotted names (as returned by :meth:`get_config_copy`)."""
        for name, value in config.items():
            self._assign(name, value)

    def patch(self, arg1=None, arg2=None, **changes):
        """Sets settings inside a ``with`` block or a decorated function and restores them after it:
        ``patch(name, value)``, ``patch({name: value})`` or ``patch(name=value)``."""
        if isinstance(arg1, str):
            changes[arg1] = arg2
        elif isinstance(arg1, dict):
            changes.update(arg1)
        elif arg1 is not None:
            raise TypeError("patch expects a setting's name and value, a dict or keyword arguments")
        return _Patch(self, changes)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, module, changes):
        self.module, self.changes, self.saved = module, changes, []

    def __enter__(self):
        config = self.module._config
        self.saved.append({key: config[key] for key in map(self.module._setting, self.changes)})
        self.module.load_config(self.changes)

    def __exit__(self, *exc_info):
        self.module._config.update(self.saved.pop())
        return False


def install_config_module(module_name, aliases=None):
    """Turns the module ``module_name`` into a :class:`ConfigModule` of its public attributes; ``aliases`` maps
    other names to settings."""
    module = sys.modules[module_name]
    config = {}
    namespace = vars(module)
    _collect(namespace, "", config)
    for name in {k.split(".")[0] for k in config}:
        del namespace[name]
    module.__class__ = ConfigModule
    module._config = config
    module._aliases = dict(aliases or {})
