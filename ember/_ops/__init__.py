"""Primitive ops by category. Each op is an autograd Function with its public function right below it."""
import warnings

# IEEE results (inf, nan) are values here, as in torch, not events: NumPy's floating-point warnings raised from
# inside ember's ops are silenced; the filter applies to ember's modules only, never to user code.
warnings.filterwarnings("ignore", message=r"(divide by zero|invalid value|overflow|underflow) encountered",
                        category=RuntimeWarning, module=r"ember\.")
