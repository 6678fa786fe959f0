"""``ember.types``: the type aliases used in annotations (``Number``, ``Device``, ``_dtype``, ``_size``, ...)."""
import os
from collections.abc import Sequence
from typing import IO, Union

from ._device import device as _device
from . import _dtype as _dtype_module, _layout as _layout_module
from ._storage import UntypedStorage as Storage
from ._sym import SymBool, SymFloat, SymInt
from ._tensor import Size, Tensor

__all__ = ["Number", "Device", "Storage", "FileLike", "IntLikeType", "FloatLikeType", "BoolLikeType", "PySymType",
           "py_sym_types"]

_dtype = _dtype_module.dtype
_layout = _layout_module.layout
_int = int
_float = float
_bool = bool
_complex = complex
_str = str
_bytes = bytes

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
_size = Union[Size, list[int], tuple[int, ...]]
_symsize = Union[Size, Sequence[Union[int, SymInt]]]

Number = Union[int, float, bool]
_Number = (int, float, bool)
Device = Union[_device, str, int, None]
FileLike = Union[str, os.PathLike, IO[bytes]]

IntLikeType = Union[int, SymInt]
FloatLikeType = Union[float, SymFloat]
BoolLikeType = Union[bool, SymBool]
py_sym_types = (SymInt, SymFloat, SymBool)
PySymType = Union[SymInt, SymFloat, SymBool]
