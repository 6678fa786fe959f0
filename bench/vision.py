"""ember vs torch, side by side in one process: grid_sample and bilinear interpolate on CPU, forward and
forward+backward. Prints the time per call and the ratio ember / torch (lower is better).

    python bench/vision.py                     # everything, float32
    python bench/vision.py grid_sample         # some sections: grid_sample, interpolate
    python bench/vision.py --dtype float64 --threads 1
"""
import argparse
import time

import numpy as np
import torch

import ember
from ops import best_time  # bench/ops.py, beside this script


def row(name, e, t):
    print(f"  {name:<48} ember {e * 1e3:9.3f} ms   torch {t * 1e3:9.3f} ms   time ratio {e / t:6.2f}")
    return e / t


def compare(name, make):
    """Times ``make(lib)()`` for ember and torch, pausing between them (the other library's idle threads spin)."""
    times = []
    for lib in (ember, torch):
        fn = make(lib)
        time.sleep(0.2)
        times.append(best_time(fn, budget=0.3))
    return row(name, *times)


def _pair(lib, x_np, grad, dtype):
    return lib.tensor(x_np, dtype=getattr(lib, dtype), requires_grad=grad)


def grid_sample(dtype):
    N, C, H, W, Ho, Wo = 8, 16, 64, 64, 64, 64
    print(f"grid_sample ({N}, {C}, {H}, {W}) at a ({N}, {Ho}, {Wo}, 2) grid, {dtype}")
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((N, C, H, W))
    grid_np = rng.uniform(-1.1, 1.1, (N, Ho, Wo, 2))
    g_np = rng.standard_normal((N, C, Ho, Wo))
    ratios = []
    for mode in ("bilinear", "nearest"):
        for pm in ("zeros", "border", "reflection"):
            for align in (False, True):
                if mode == "nearest" and align:
                    continue
                kw = dict(mode=mode, padding_mode=pm, align_corners=align)

                def forward(lib):
                    x, grid = _pair(lib, x_np, False, dtype), _pair(lib, grid_np, False, dtype)
                    return lambda: lib.nn.functional.grid_sample(x, grid, **kw)

                def backward(lib):
                    x, grid = _pair(lib, x_np, True, dtype), _pair(lib, grid_np, True, dtype)
                    g = _pair(lib, g_np, False, dtype)
                    return lambda: lib.autograd.grad(lib.nn.functional.grid_sample(x, grid, **kw), (x, grid), g)

                tag = f"{mode} {pm} align={align}"
                ratios.append(compare(f"{tag} forward", forward))
                ratios.append(compare(f"{tag} fwd+bwd", backward))
    return ratios


def interpolate(dtype):
    N, C, H, W = 8, 32, 64, 64
    print(f"interpolate ({N}, {C}, {H}, {W}) x2, {dtype}")
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((N, C, H, W))
    g_np = rng.standard_normal((N, C, 2 * H, 2 * W))
    ratios = []
    for mode, align in (("bilinear", False), ("bilinear", True), ("nearest", None), ("nearest-exact", None)):
        kw = dict(scale_factor=2, mode=mode, align_corners=align)

        def forward(lib):
            x = _pair(lib, x_np, False, dtype)
            return lambda: lib.nn.functional.interpolate(x, **kw)

        def backward(lib):
            x, g = _pair(lib, x_np, True, dtype), _pair(lib, g_np, False, dtype)
            return lambda: lib.autograd.grad(lib.nn.functional.interpolate(x, **kw), (x,), g)

        tag = mode + ("" if align is None else f" align={align}")
        ratios.append(compare(f"{tag} forward", forward))
        ratios.append(compare(f"{tag} fwd+bwd", backward))
    return ratios


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sections", nargs="*", metavar="section", help="grid_sample, interpolate (default: both)")
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    parser.add_argument("--threads", type=int, help="intra-op threads for both ember and torch (default: theirs)")
    args = parser.parse_args()
    sections = args.sections or ["grid_sample", "interpolate"]
    for s in sections:
        if s not in ("grid_sample", "interpolate"):
            parser.error(f"unknown section {s!r}: choose among grid_sample, interpolate")
    if args.threads:
        torch.set_num_threads(args.threads)
        ember.set_num_threads(args.threads)
    print(f"ember {ember.__version__} / torch {torch.__version__}, {torch.get_num_threads()} torch threads, "
          f"{ember.get_num_threads()} ember threads\n")
    ratios = []
    for s in sections:
        ratios += globals()[s](args.dtype)
        print()
    print(f"geometric mean time ratio: {float(np.exp(np.mean(np.log(ratios)))):.2f}")
