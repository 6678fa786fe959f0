"""Saving and loading a large state dict, ember vs torch side by side: the same tensors (a transformer-shaped state
dict, 500 MB of float32 by default), ember's safetensors file vs torch.save's zip file. Ratios are ember / torch.

    python bench/io.py               # 500 MB
    python bench/io.py --mb 100      # smaller

Times are medians of alternating rounds in this process, with the files in the page cache (both read from memory).
"load" is the load call alone; "load+read" also reads every tensor once (a sum), which is what a model's first use
costs and what makes a memory-mapped load pay for its pages. Peak memory is measured in a fresh child process per
framework that loads the file and reads every tensor: the growth of its high-water mark (VmHWM) over the resident
size after import, as a multiple of the tensors' size.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def state_dict_arrays(mb):
    """Transformer-like parameters (big matrices plus small vectors) totalling about ``mb`` megabytes."""
    rng = np.random.default_rng(0)
    width = 1024
    arrays, total, layer = {}, 0, 0
    while total < mb * 2**20:
        for name, shape in (("attn.qkv.weight", (3 * width, width)), ("attn.qkv.bias", (3 * width,)),
                            ("attn.proj.weight", (width, width)), ("mlp.fc.weight", (4 * width, width)),
                            ("mlp.proj.weight", (width, 4 * width)), ("ln.weight", (width,))):
            a = rng.standard_normal(shape, dtype=np.float32)
            arrays[f"layers.{layer}.{name}"] = a
            total += a.nbytes
        layer += 1
    return arrays


def _read_all(values, as_numpy):
    return sum(float(as_numpy(v).sum()) for v in values)


def loader(framework):
    if framework == "ember":
        import ember
        return (lambda path: ember.load(path)), (lambda t: t.numpy())
    import torch
    if framework == "torch-mmap":
        return (lambda path: torch.load(path, weights_only=True, mmap=True)), (lambda t: t.numpy())
    return (lambda path: torch.load(path, weights_only=True)), (lambda t: t.numpy())


def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def child(framework, path, nbytes):
    """Runs in a fresh process: loads ``path``, reads every tensor, prints the memory growth as JSON."""
    load, as_numpy = loader(framework)
    base = _status_kb("VmRSS")
    sd = load(path)
    _read_all(sd.values(), as_numpy)
    peak = _status_kb("VmHWM")
    print(json.dumps({"ratio": (peak - base) * 1024 / nbytes}))


def memory(framework, path, nbytes):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", framework, path, str(nbytes)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["ratio"]


def timed(fn, rounds):
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description="ember vs torch: save and load a large state dict")
    p.add_argument("--mb", type=int, default=500, help="size of the state dict in MB")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--dir", help="folder for the files (default: a temporary one, removed afterwards)")
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args.child[0], args.child[1], int(args.child[2]))
    import torch

    import ember
    folder = args.dir or tempfile.mkdtemp(prefix="ember-bench-io-")
    try:
        arrays = state_dict_arrays(args.mb)
        nbytes = sum(a.nbytes for a in arrays.values())
        e_sd = {k: ember.from_numpy(a) for k, a in arrays.items()}
        t_sd = {k: torch.from_numpy(a) for k, a in arrays.items()}
        e_path, t_path = os.path.join(folder, "sd.safetensors"), os.path.join(folder, "sd.pt")
        print(f"ember vs torch {torch.__version__}: a state dict of {len(arrays)} float32 tensors, "
              f"{nbytes / 2**20:.0f} MB; ratios are ember / torch (time: lower is better)\n")
        save = {"ember": timed(lambda: ember.save(e_sd, e_path), args.rounds),
                "torch": timed(lambda: torch.save(t_sd, t_path), args.rounds)}
        rows = [("save", save["ember"], save["torch"])]
        e_load, e_np = loader("ember")
        t_load, t_np = loader("torch")
        rows.append(("load", timed(lambda: e_load(e_path), args.rounds), timed(lambda: t_load(t_path), args.rounds)))
        rows.append(("load+read", timed(lambda: _read_all(e_load(e_path).values(), e_np), args.rounds),
                     timed(lambda: _read_all(t_load(t_path).values(), t_np), args.rounds)))
        m_load, _ = loader("torch-mmap")
        mmap_read = timed(lambda: _read_all(m_load(t_path).values(), t_np), args.rounds)
        pt_read = timed(lambda: _read_all(e_load(t_path).values(), e_np), args.rounds)
        print(f"{'':<12}{'ember s':>9}{'torch s':>9}{'ratio':>7}{'MB/s ember':>12}{'MB/s torch':>12}")
        for name, e, t in rows:
            print(f"{name:<12}{e:9.3f}{t:9.3f}{e / t:7.2f}{nbytes / 2**20 / e:12.0f}{nbytes / 2**20 / t:12.0f}")
        print(f"\nfor reference, load+read: torch.load(mmap=True) {mmap_read:.3f} s; ember.load of torch's .pt file "
              f"{pt_read:.3f} s")
        mem = {fw: memory(fw, path, nbytes) for fw, path in (("ember", e_path), ("torch", t_path),
                                                             ("torch-mmap", t_path))}
        print(f"\npeak memory growth while loading and reading, x the tensors' size: ember {mem['ember']:.2f}, "
              f"torch {mem['torch']:.2f}, torch mmap=True {mem['torch-mmap']:.2f}")
    finally:
        if not args.dir:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
