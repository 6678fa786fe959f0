"""Named tuples returned by ops with several outputs (``ember.max(x, 1).values``), as ``torch.return_types``."""
import collections

__all__ = ["max", "min", "aminmax", "median", "nanmedian", "mode", "cummax", "cummin"]


def structseq(name, fields):
    """A tuple subclass with named fields, printed as torch prints its return types."""
    cls = collections.namedtuple(name, fields)
    cls.__module__ = __name__
    cls.__qualname__ = name

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"ember.return_types.{name}(\n{body})"
    cls.__repr__ = __repr__
    return cls


max = structseq("max", ("values", "indices"))
min = structseq("min", ("values", "indices"))
aminmax = structseq("aminmax", ("min", "max"))
median = structseq("median", ("values", "indices"))
nanmedian = structseq("nanmedian", ("values", "indices"))
mode = structseq("mode", ("values", "indices"))
cummax = structseq("cummax", ("values", "indices"))
cummin = structseq("cummin", ("values", "indices"))
