"""Training steps, ember vs torch side by side: the same model (torch's initial weights copied into ember), the same
inputs, the same optimizer. Prints the time of one step (forward + backward + optimizer step) and the peak memory
(RSS) of a process that trains the case, with ember / torch ratios (lower is better).

    python bench/train.py                  # all cases: mlp, lenet, gpt
    python bench/train.py gpt --steps 20   # one case, more steps
    python bench/train.py --threads 1      # both frameworks on one thread (steadier on a busy machine)
    python bench/train.py --device cuda    # on a GPU (ember through CuPy): step times only

Step times are measured in this process, alternating the two frameworks in short rounds and keeping the median, so
load from other programs hits both alike. Each round first runs untimed steps for 0.1 s: after the other framework's
turn, idle threads take a few milliseconds of steps to run at full speed again (on a virtual machine the first
LeNet steps after a pause take up to 1.5x as long, for either framework), and a training loop runs its steps back to
back. Peak memory is measured in a fresh child process per framework and case,
which imports only that framework: "peak" is the whole process's high-water mark (VmHWM), "train" is that minus the
resident size right after the import (what the model, its data and the training steps add).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CASES = {
    "mlp": "MLP 784-512-512-10, batch 128, SGD",
    "lenet": "LeNet-5 CNN on 1x28x28, batch 64, Adam",
    "gpt": "GPT vocab 65, context 128, 4 layers, 4 heads, width 256, batch 16, AdamW",
}


def mlp(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    return model, lambda p: lib.optim.SGD(p, lr=0.01, momentum=0.9)


def lenet(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
    return model, lambda p: lib.optim.Adam(p, lr=1e-3)


def gpt(lib, vocab=65, block=128, layers=4, heads=4, width=256):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(block, width)
            self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
            self.ln, self.head = nn.LayerNorm(width), nn.Linear(width, vocab)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(lib.arange(idx.shape[1], device=idx.device))
            return self.head(self.ln(self.blocks(x)))

    return GPT(), lambda p: lib.optim.AdamW(p, lr=3e-4)


def inputs(case):
    """The case's (input, target) batch as NumPy arrays, the same for both frameworks."""
    import numpy as np
    rng = np.random.default_rng(0)
    if case == "mlp":
        return rng.standard_normal((128, 784), dtype=np.float32), rng.integers(0, 10, 128)
    if case == "lenet":
        return rng.standard_normal((64, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, 64)
    return rng.integers(0, 65, (16, 128)), rng.integers(0, 65, (16, 128))


def trainer(lib, case, state_dict=None, device="cpu"):
    """(one training step as a function returning the loss, the model)."""
    lib.manual_seed(0)
    model, make_opt = {"mlp": mlp, "lenet": lenet, "gpt": gpt}[case](lib)
    if state_dict is not None:
        model.load_state_dict(state_dict)
    model.to(device)
    opt = make_opt(model.parameters())
    x, y = (lib.from_numpy(a).to(device) for a in inputs(case))
    F = lib.nn.functional

    def step():
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step, model


def compare_times(case, steps, rounds, device="cpu"):
    import torch

    import ember
    t_step, t_model = trainer(torch, case, device=device)
    e_step, _ = trainer(ember, case, {k: v.cpu() for k, v in t_model.state_dict().items()}, device)
    sync = {"ember": ember.cuda.synchronize, "torch": torch.cuda.synchronize} if device == "cuda" else \
        {"ember": lambda: None, "torch": lambda: None}
    first = e_step().item(), t_step().item()  # the same weights and inputs: the same first loss
    for _ in range(2):  # warm up
        e_step(), t_step()
    times = {"ember": [], "torch": []}
    per_round = max(1, steps // rounds)
    for _ in range(rounds):
        for name, fn in (("ember", e_step), ("torch", t_step)):
            # let the other framework's idle worker threads stop spinning (on a small machine they otherwise steal
            # the cores this one's threads need), then warm this one's up
            time.sleep(0.2)
            t0 = time.perf_counter()
            fn()
            while time.perf_counter() - t0 < 0.1:
                fn()
            sync[name]()
            t0 = time.perf_counter()
            for _ in range(per_round):
                fn()
            sync[name]()
            times[name].append((time.perf_counter() - t0) / per_round)
    return statistics.median(times["ember"]), statistics.median(times["torch"]), first


def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def child(framework, case, steps):
    """Runs in a fresh process: trains ``case`` with one framework, prints its memory figures as JSON."""
    lib = __import__(framework)
    import_rss = _status_kb("VmRSS")
    step, _ = trainer(lib, case)
    for _ in range(steps):
        step()
    peak = _status_kb("VmHWM")
    print(json.dumps({"peak_mb": peak / 1024, "train_mb": (peak - import_rss) / 1024}))


def memory(framework, case, steps):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", framework, case, "--steps",
                          str(steps)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description="ember vs torch training steps")
    p.add_argument("cases", nargs="*", choices=[[]] + list(CASES), default=[], metavar="case",
                   help=f"cases to run, of {', '.join(CASES)} (default: all)")
    p.add_argument("--steps", type=int, default=10, help="timed steps per framework and case")
    p.add_argument("--rounds", type=int, default=5, help="alternations of the two frameworks")
    p.add_argument("--threads", type=int, help="threads for both frameworks' math libraries (default: theirs)")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where both frameworks train")
    p.add_argument("--child", nargs=2, metavar=("FRAMEWORK", "CASE"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.threads:  # before NumPy or torch load their thread pools; the children inherit it
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    if args.child:
        return child(*args.child, max(3, args.steps // 2))
    import torch
    from ember._kernels import mkl
    where = (f"on {torch.cuda.get_device_name()}" if args.device == "cuda" else
             f"{torch.get_num_threads()} threads, {os.cpu_count()} CPUs, ember's GEMMs on "
             f"{'MKL' if mkl.available() else 'NumPy'}")
    print(f"ember vs torch {torch.__version__}, {where}; ratios are ember / torch, lower is better\n")
    head = (f"{'case':<7}{'ember ms':>10}{'torch ms':>10}{'ratio':>7}  |{'peak MB e/t':>15}{'ratio':>7}"
            f"  |{'train MB e/t':>15}{'ratio':>7}")
    rows = []
    for case in args.cases or list(CASES):
        e, t, first = compare_times(case, args.steps, args.rounds, args.device)
        if args.device == "cpu":
            me, mt = memory("ember", case, args.steps), memory("torch", case, args.steps)
        rows.append((case, e, t, me, mt, first) if args.device == "cpu" else (case, e, t, None, None, first))
    print(head if args.device == "cpu" else head.partition("|")[0])
    for case, e, t, me, mt, _ in rows:
        print(f"{case:<7}{e * 1e3:10.1f}{t * 1e3:10.1f}{e / t:7.2f}" + ("" if me is None else "  |"
              f"{me['peak_mb']:7.0f}/{mt['peak_mb']:<7.0f}{me['peak_mb'] / mt['peak_mb']:7.2f}  |"
              f"{me['train_mb']:7.0f}/{mt['train_mb']:<7.0f}{me['train_mb'] / max(mt['train_mb'], 1):7.2f}"))
    print()
    for case, *_, first in rows:
        print(f"{case:<7}{CASES[case]}; first loss ember {first[0]:.5f}, torch {first[1]:.5f}")


if __name__ == "__main__":
    main()
