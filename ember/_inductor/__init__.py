"""``ember._inductor``: the code generator's namespace; ember has none, only its :mod:`config` is kept so that
scripts that set it run."""
from . import config

__all__ = ["config"]
