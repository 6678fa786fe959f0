"""The collation functions under their ``torch.utils.data._utils.collate`` names (``default_collate_fn_map`` is the
same dict, so entries added here change ``default_collate``)."""
from ..collate import (_np_str_obj_array_pattern as np_str_obj_array_pattern, collate, collate_float_fn,
                       collate_int_fn, collate_numpy_array_fn, collate_numpy_scalar_fn, collate_str_fn,
                       collate_tensor_fn, default_collate, default_collate_err_msg_format, default_collate_fn_map,
                       default_convert)

__all__ = ["collate", "collate_float_fn", "collate_int_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_str_fn", "collate_tensor_fn", "default_collate", "default_collate_err_msg_format",
           "default_collate_fn_map", "default_convert", "np_str_obj_array_pattern"]
