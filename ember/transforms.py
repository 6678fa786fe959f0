"""Image transforms, as ``torchvision.transforms``, for images given as NumPy arrays (HW or HWC, torchvision's
PIL-image stand-in here) or tensors.

``ToTensor`` turns an HW/HWC array (or uint8 tensor) into a CHW float tensor in [0, 1]; the other transforms take
CHW tensors (or HW/HWC arrays). Random transforms draw from ember's default generator, which DataLoader seeds per
batch, so augmentations are reproducible for any ``num_workers``.
"""
import numbers

import numpy as np

from ._tensor import Tensor

__all__ = ["Compose", "ToTensor", "Normalize", "RandomCrop", "RandomHorizontalFlip", "Lambda"]


class Compose:
    """Applies ``transforms`` one after the other.

    Example::

        >>> t = Compose([ToTensor(), Normalize((0.5,), (0.5,))])
        >>> t(np.full((2, 2), 255, np.uint8))
        tensor([[[1., 1.],
                 [1., 1.]]])
    """

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({body}\n)"


class ToTensor:
    """An HW or HWC image (NumPy array, or a uint8 tensor laid out the same way) as a CHW tensor; uint8 values are
    scaled to floats in [0, 1] of the default dtype, other dtypes are kept."""

    def __call__(self, pic):
        from . import from_numpy, get_default_dtype
        if isinstance(pic, Tensor):
            pic = pic.detach().cpu().numpy()
        elif not isinstance(pic, np.ndarray):
            raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic[:, :, None]
        chw = np.ascontiguousarray(pic.transpose(2, 0, 1))
        if chw.dtype == np.uint8:
            return from_numpy(chw.astype(get_default_dtype().np) / np.array(255, get_default_dtype().np))
        return from_numpy(chw)

    def __repr__(self):
        return f"{type(self).__name__}()"


class Normalize:
    """``(tensor - mean) / std`` per channel of a ``(..., C, H, W)`` float tensor.

    Args:
        mean (sequence): per-channel means
        std (sequence): per-channel standard deviations
        inplace (bool): write into the input. Default: False
    """

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace
        self._stats = {}  # (dtype, device) -> (mean, std) shaped to broadcast over (C, H, W)

    def _stats_for(self, tensor):
        from . import as_tensor
        key = (tensor.dtype, tensor.device)
        if key not in self._stats:
            mean = as_tensor(self.mean, dtype=tensor.dtype, device=tensor.device)
            std = as_tensor(self.std, dtype=tensor.dtype, device=tensor.device)
            if bool((std == 0).any()):
                raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by "
                                 "zero.")
            self._stats[key] = (mean.view(-1, 1, 1) if mean.ndim == 1 else mean,
                                std.view(-1, 1, 1) if std.ndim == 1 else std)
        return self._stats[key]

    def __call__(self, tensor):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
        if not tensor.is_floating_point():
            raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
        if tensor.ndim < 3:
            raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                             f"{tensor.size()}")
        mean, std = self._stats_for(tensor)
        if not self.inplace:
            tensor = tensor.clone()
        return tensor.sub_(mean).div_(std)

    def __repr__(self):
        return f"{type(self).__name__}(mean={self.mean}, std={self.std})"


def _hw(img):
    """(height, width) of a CHW tensor or an HW/HWC array."""
    return tuple(img.shape[-2:]) if isinstance(img, Tensor) else tuple(img.shape[:2])


def _randint(high):
    from . import randint
    return int(randint(0, high, size=(1,)).item())


def _pad(img, left, top, right, bottom, fill, mode):
    """Pads the spatial dimensions (of a CHW tensor or an HW/HWC array)."""
    from . import from_numpy
    arr = img.detach().cpu().numpy() if isinstance(img, Tensor) else img
    spatial = [(top, bottom), (left, right)]
    width = [(0, 0)] * (arr.ndim - 2) + spatial if isinstance(img, Tensor) else spatial + [(0, 0)] * (arr.ndim - 2)
    kwargs = {"constant_values": fill} if mode == "constant" else {}
    out = np.pad(arr, width, mode=mode, **kwargs)
    return from_numpy(out).to(img.device) if isinstance(img, Tensor) else out


def _crop(img, top, left, height, width):
    if isinstance(img, Tensor):
        return img[..., top:top + height, left:left + width]
    return img[top:top + height, left:left + width]


def _size_pair(size, name="size"):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, (tuple, list)) and len(size) == 1:
        return int(size[0]), int(size[0])
    if not isinstance(size, (tuple, list)) or len(size) != 2:
        raise ValueError(f"Please provide only two dimensions (h, w) for {name}.")
    return int(size[0]), int(size[1])


class RandomCrop:
    """Crops a random ``size`` region (after optional padding).

    Args:
        size (int or (h, w)): the crop size
        padding (int or sequence, optional): pad all borders by this (int), left/right and top/bottom (2 values) or
            left, top, right, bottom (4 values) first
        pad_if_needed (bool): pad an image smaller than ``size``. Default: False
        fill (number): the constant for ``padding_mode='constant'``. Default: 0
        padding_mode (str): 'constant', 'edge', 'reflect' or 'symmetric'. Default: 'constant'
    """

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = _size_pair(size)
        if padding is not None and not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if isinstance(padding, (tuple, list)) and len(padding) not in (1, 2, 4):
            raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element "
                             "tuple")
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

    @staticmethod
    def get_params(img, output_size):
        """The (top, left, height, width) of a random crop of ``output_size``."""
        h, w = _hw(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        return _randint(h - th + 1), _randint(w - tw + 1), th, tw

    def __call__(self, img):
        if self.padding is not None:
            p = [self.padding] if isinstance(self.padding, numbers.Number) else list(self.padding)
            left, top, right, bottom = p * 4 if len(p) == 1 else p * 2 if len(p) == 2 else p
            img = _pad(img, left, top, right, bottom, self.fill, self.padding_mode)
        h, w = _hw(img)
        th, tw = self.size
        if self.pad_if_needed and (w < tw or h < th):
            dw, dh = max(tw - w, 0), max(th - h, 0)
            img = _pad(img, dw, dh, dw, dh, self.fill, self.padding_mode)
        return _crop(img, *self.get_params(img, self.size))

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    """Flips the image left-right with probability ``p``."""

    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        from . import rand
        if float(rand(1).item()) < self.p:
            return img.flip([-1]) if isinstance(img, Tensor) else np.ascontiguousarray(img[:, ::-1])
        return img

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


class Lambda:
    """Applies a user function as a transform."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{type(self).__name__}()"
