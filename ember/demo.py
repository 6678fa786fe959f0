"""A two-minute tour: fit a small classifier with ember's tensors and autograd, written exactly as in PyTorch.

    python -m ember.demo
"""
import math
import time

import ember as torch


def spirals(n_per_class=200, classes=3, generator=None):
    """Points on interleaved spirals, one class per arm."""
    t = torch.linspace(0.0, 1.0, n_per_class).repeat(classes)
    label = torch.arange(classes).repeat_interleave(n_per_class)
    angle = t * 4.0 + label * (2 * math.pi / classes) + 0.2 * torch.randn(t.shape, generator=generator)
    x = torch.stack([t * angle.sin(), t * angle.cos()], dim=1)
    return x, label


def main(steps=1500):
    g = torch.Generator().manual_seed(0)
    x, y = spirals(generator=g)
    w1 = (torch.randn(2, 64, generator=g) * 0.5).requires_grad_()
    b1 = torch.zeros(64, requires_grad=True)
    w2 = (torch.randn(64, 3, generator=g) * 0.1).requires_grad_()
    b2 = torch.zeros(3, requires_grad=True)
    params = [w1, b1, w2, b2]
    print(f"ember demo: a 2-64-3 MLP on {len(x)} spiral points, plain tensors + autograd + SGD")
    start = time.perf_counter()
    for step in range(steps + 1):
        logits = (x @ w1 + b1).tanh() @ w2 + b2
        loss = -logits.log_softmax(dim=1).gather(1, y[:, None]).mean()
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= 0.5 * p.grad
        if step % 150 == 0:
            acc = (logits.argmax(1) == y).float().mean().item()
            print(f"  step {step:4d}  loss {loss.item():.4f}  accuracy {acc:.1%}")
    print(f"done in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
