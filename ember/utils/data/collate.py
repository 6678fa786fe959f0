"""Collation, as ``torch.utils.data._utils.collate``: samples -> batches (``default_collate``) and NumPy -> tensors
(``default_convert``), following the structure of the samples (mappings, namedtuples, sequences)."""
import collections.abc
import copy
import re

import numpy as np

from ..._tensor import Tensor

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map"]

# NumPy dtypes that cannot become tensors: bytes, unicode and object arrays
_np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists;"
                                  " found {}")


def default_convert(data):
    """Converts every NumPy array and scalar in ``data`` (recursing into mappings, namedtuples and sequences) into a
    tensor; everything else is returned unchanged. The collate function when auto-batching is off.

    Example::

        >>> default_convert([np.array([0, 1]), 2])
        [tensor([0, 1]), 2]
    """
    from ... import as_tensor
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and _np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:  # the mapping type cannot be built from a dict
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # torch returns a list here
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """Collates ``batch`` (a list of samples) recursively; ``collate_fn_map`` maps element types to the functions
    that collate them (an exact type match first, then the first key the element is an instance of)."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        fields = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(fields)
                return clone
            return elem_type(fields)
        except TypeError:
            return fields
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        if not all(len(e) == elem_size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # torch returns a list here
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, column in enumerate(columns):
                    clone[i] = column
                return clone
            return elem_type(columns)
        except TypeError:
            return columns
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    from ... import stack
    return stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    from ... import as_tensor
    elem = batch[0]
    if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    from ... import as_tensor
    return as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    from ... import float64, tensor
    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    from ... import tensor
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Stacks a list of samples into a batch with a new leading dimension, following the samples' structure.

    Tensors and NumPy arrays are stacked into a tensor; Python floats become a float64 tensor, ints an int64 tensor
    (bools a bool tensor); NumPy scalars a tensor of their dtype; strings and bytes stay a list; mappings,
    namedtuples and sequences are collated field by field (tuples become lists, as in torch).

    Example::

        >>> default_collate([(0, 1.5), (1, 2.5)])
        [tensor([0, 1]), tensor([1.5000, 2.5000], dtype=ember.float64)]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
