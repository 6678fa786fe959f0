"""``ember._dynamo.config``: the graph capturer's settings, kept so that scripts that set them run. ember executes
eagerly: the settings are read back as assigned and change nothing. Unknown names raise AttributeError."""
from ..utils._config_module import install_config_module as _install

suppress_errors = False
verbose = False
recompile_limit = 8
accumulated_recompile_limit = 256
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
optimize_ddp = True
automatic_dynamic_shapes = True
assume_static_by_default = True
allow_ignore_mark_dynamic = False
inline_inbuilt_nn_modules = True
guard_nn_modules = True
force_parameter_static_shapes = True
force_nn_module_property_static_shapes = True
allow_unspec_int_on_nn_module = False
specialize_int = False
specialize_float = False
dynamic_shapes = True
compiled_autograd = False
error_on_recompile = False
skip_nnmodule_hook_guards = True
skip_fsdp_guards = True
replay_record_enabled = False
use_lazy_graph_module = True
raise_on_ctx_manager_usage = True
allow_rnn = False
rewrite_assert_with_torch_assert = True
trace_numpy = True
numpy_default_float = "float64"
numpy_default_int = "int64"
prefer_deferred_runtime_asserts_over_guards = False
do_not_emit_runtime_asserts = False
enable_cpp_guard_manager = True
repro_after = None
repro_level = 2
disable = False

_install(__name__, {"cache_size_limit": "recompile_limit",
                    "accumulated_cache_size_limit": "accumulated_recompile_limit"})
