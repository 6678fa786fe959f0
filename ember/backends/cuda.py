"""``ember.backends.cuda``: CUDA's matmul and attention switches, kept for compatibility."""
from .._device import cuda_available


class _Matmul:
    """``matmul.allow_tf32`` and the reduced-precision switches (no effect: CuPy's GEMMs run as CuPy decides)."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _Matmul()


def is_built():
    """Whether ember can run on CUDA here (CuPy installed and a GPU present)."""
    return cuda_available()
