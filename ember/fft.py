"""``ember.fft``: discrete Fourier transforms, as ``torch.fft``."""
from ._ops.fft import (fft, ifft, rfft, irfft, hfft, ihfft, fft2, ifft2, rfft2, irfft2, hfft2, ihfft2, fftn, ifftn,
                       rfftn, irfftn, hfftn, ihfftn, fftfreq, rfftfreq, fftshift, ifftshift)

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
