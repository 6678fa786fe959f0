"""``ember._inductor.config``: the code generator's settings, kept so that scripts that set them run. ember has no
code generator: the settings are read back as assigned and change nothing. Unknown names raise AttributeError."""
from ..utils._config_module import install_config_module as _install

debug = False
coordinate_descent_tuning = False
coordinate_descent_check_all_directions = False
coordinate_descent_search_radius = 1
fx_graph_cache = True
fx_graph_remote_cache = None
autotune_local_cache = True
autotune_remote_cache = None
search_autotune_cache = False
epilogue_fusion = True
aggressive_fusion = False
permute_fusion = False
benchmark_fusion = False
benchmark_epilogue_fusion = True
benchmark_kernel = False
max_autotune = False
max_autotune_gemm = False
max_autotune_pointwise = False
max_autotune_gemm_backends = "ATEN,TRITON,CPP"
freezing = False
freezing_discard_parameters = False
force_fuse_int_mm_with_mul = False
use_mixed_mm = True
fallback_random = False
cpp_wrapper = False
conv_1x1_as_mm = False
split_reductions = True
layout_optimization = True
keep_output_stride = True
shape_padding = True
comprehensive_padding = True
compile_threads = 1
emulate_precision_casts = False
pattern_matcher = True
reorder_for_compute_comm_overlap = False
allow_buffer_reuse = True
size_asserts = True
nan_asserts = False
implicit_fallbacks = True
dce = False
realize_opcount_threshold = None
unroll_reductions_threshold = 8
inplace_buffers = True
joint_graph_constant_folding = True


class triton:
    unique_kernel_names = True
    descriptive_names = "original_aten"
    cudagraphs = False
    cudagraph_trees = True
    cudagraph_skip_dynamic_graphs = False
    cudagraph_dynamic_shape_warn_limit = 8
    max_tiles = None
    autotune_pointwise = True
    persistent_reductions = True
    cooperative_reductions = False
    multi_kernel = 0
    divisible_by_16 = True
    store_cubin = False
    use_block_ptr = False
    enable_persistent_tma_matmul = False


class trace:
    enabled = False
    debug_log = False
    info_log = False
    graph_diagram = False
    output_code = True
    compile_profile = False


class cpp:
    threads = -1
    simdlen = None
    min_chunk_size = 512
    dynamic_threads = False
    weight_prepack = True
    enable_kernel_profile = False
    enable_floating_point_contract_flag = "off"


class cuda:
    arch = None
    version = None
    compile_opt_level = "-O1"


class aot_inductor:
    output_path = ""
    debug_compile = False
    package = False


_install(__name__)
