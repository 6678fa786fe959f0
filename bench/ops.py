"""ember vs torch, side by side in one process: per-op dispatch cost on tiny tensors, throughput of elementwise
ops and reductions on large tensors, and float32 matmul GFLOP/s. Prints ratios (ember / torch time, lower is
better; for throughput, ember / torch speed, higher is better).

    python bench/ops.py                    # everything
    python bench/ops.py dispatch large     # some sections: dispatch, large, matmul
    python bench/ops.py large --threads 1  # ember and torch both on one thread
"""
import argparse
import time

import numpy as np
import torch

import ember
from ember._kernels import mkl


def best_time(fn, repeat=5, number=None, budget=0.2):
    """Best per-call seconds over ``repeat`` rounds of ``number`` calls (auto-sized to ``budget`` seconds)."""
    fn()
    if number is None:
        number, t0 = 1, time.perf_counter()
        fn()
        one = max(time.perf_counter() - t0, 1e-7)
        number = max(1, int(budget / one))
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def row(name, e, t, unit="us", scale=1e6, speed=False):
    ratio = (t / e) if speed else (e / t)
    label = "speed ratio" if speed else "time ratio"
    print(f"  {name:<34} ember {e * scale:10.2f} {unit}   torch {t * scale:10.2f} {unit}   {label} {ratio:5.2f}")
    return ratio


def dispatch():
    print("Per-op dispatch on tiny tensors (2 elements, float32): time per call, ember / torch")
    a_np, b_np = np.array([1.5, 2.5], np.float32), np.array([0.5, -1.0], np.float32)
    m_np = np.ones((2, 2), np.float32)
    ratios = {}
    for grad in (False, True):
        ea, eb = ember.tensor(a_np, requires_grad=grad), ember.tensor(b_np, requires_grad=grad)
        ta, tb = torch.tensor(a_np, requires_grad=grad), torch.tensor(b_np, requires_grad=grad)
        em, tm = ember.tensor(m_np, requires_grad=grad), torch.tensor(m_np, requires_grad=grad)
        cases = {
            "add": (lambda: ea + eb, lambda: ta + tb),
            "mul scalar": (lambda: ea * 2.0, lambda: ta * 2.0),
            "exp": (lambda: ea.exp(), lambda: ta.exp()),
            "sum": (lambda: ea.sum(), lambda: ta.sum()),
            "reshape": (lambda: ea.reshape(2, 1), lambda: ta.reshape(2, 1)),
            "matmul 2x2": (lambda: em @ em, lambda: tm @ tm),
            "getitem [0]": (lambda: ea[0], lambda: ta[0]),
        }
        print(f" requires_grad={grad}")
        for name, (fe, ft) in cases.items():
            ratios[(name, grad)] = row(name, best_time(fe), best_time(ft))
        fe = lambda: ((ea * eb).exp().sum()).backward()  # noqa: E731
        ft = lambda: ((ta * tb).exp().sum()).backward()  # noqa: E731
        if grad:
            ratios[("fwd+bwd mul-exp-sum", grad)] = row("forward+backward mul,exp,sum", best_time(fe), best_time(ft))
    geo = float(np.exp(np.mean(np.log(list(ratios.values())))))
    print(f"  geometric mean time ratio: {geo:.2f} (target <= 1.5)")


def large(n=64 * 1024 * 1024):
    print(f"Large tensors ({n // (1024 * 1024)}M float32 elements, {ember.get_num_threads()} ember threads): "
          "throughput, ember / torch (higher is better)")
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(n, dtype=np.float32)
    y_np = rng.standard_normal(n, dtype=np.float32)
    ex, ey = ember.from_numpy(x_np), ember.from_numpy(y_np)
    tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)
    cases = {
        "add": (lambda: ex + ey, lambda: tx + ty),
        "mul": (lambda: ex * ey, lambda: tx * ty),
        "exp": (lambda: ex.exp(), lambda: tx.exp()),
        "sum": (lambda: ex.sum(), lambda: tx.sum()),
        "mean": (lambda: ex.mean(), lambda: tx.mean()),
        "amax": (lambda: ex.amax(), lambda: tx.amax()),
        "sum(dim=1) of 8192x8192": (lambda: ex.view(8192, -1).sum(1), lambda: tx.view(8192, -1).sum(1)),
        "sum(dim=0) of 8192x8192": (lambda: ex.view(8192, -1).sum(0), lambda: tx.view(8192, -1).sum(0)),
        "div": (lambda: ex / ey, lambda: tx / ty),
        "sigmoid": (lambda: ex.sigmoid(), lambda: tx.sigmoid()),
        "tanh": (lambda: ex.tanh(), lambda: tx.tanh()),
        "var": (lambda: ex.var(), lambda: tx.var()),
    }
    for _ in range(10):  # a fresh process's first large allocations fault their pages in slowly (a VM's memory)
        ex + ey, tx + ty
    for name, (fe, ft) in cases.items():
        times = []
        for fn in (fe, ft):
            # after the other library's turn its idle threads spin for a while, taking the cores this one needs
            # (the first ember op after a torch op ran up to 2x slower without the pause)
            time.sleep(0.2)
            times.append(best_time(fn, repeat=6, number=1))
        row(name, *times, "ms", 1e3, speed=True)


def matmul():
    blas = "MKL, the ember[mkl] extra" if mkl.available() else "NumPy's BLAS"
    print(f"float32 matmul: GFLOP/s, ember (on {blas}) / torch (higher is better)")
    rng = np.random.default_rng(0)
    for n in (256, 512, 1024, 2048, 4096):
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        ea, eb, ta, tb = ember.from_numpy(a), ember.from_numpy(b), torch.from_numpy(a), torch.from_numpy(b)
        number = max(1, int(2e9 / (2 * n ** 3)))
        te = best_time(lambda: ea @ eb, repeat=3, number=number)
        tt = best_time(lambda: ta @ tb, repeat=3, number=number)
        flop = 2 * n ** 3
        print(f"  {n:>5}: ember {flop / te / 1e9:8.1f} GFLOP/s   torch {flop / tt / 1e9:8.1f} GFLOP/s   "
              f"speed ratio {tt / te:5.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sections", nargs="*", metavar="section", help="dispatch, large or matmul (default: all)")
    parser.add_argument("--threads", type=int, help="intra-op threads for both ember and torch (default: theirs)")
    args = parser.parse_args()
    sections = args.sections or ["dispatch", "large", "matmul"]
    for s in sections:
        if s not in ("dispatch", "large", "matmul"):
            parser.error(f"unknown section {s!r}: choose among dispatch, large, matmul")
    if args.threads:
        torch.set_num_threads(args.threads)
        ember.set_num_threads(args.threads)
    print(f"ember {ember.__version__} / torch {torch.__version__}, {torch.get_num_threads()} torch threads, "
          f"{ember.get_num_threads()} ember threads\n")
    for s in sections:
        globals()[s]()
        print()
