"""Signal processing (``torch.signal``): the ``windows`` of SciPy's ``scipy.signal.windows``."""
from . import windows  # noqa: F401
