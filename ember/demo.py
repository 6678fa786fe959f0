"""Watch a small CNN learn to read handwritten digits, written exactly as in PyTorch.

    pip install -e '.[demo]' && python -m ember.demo

By default it trains on scikit-learn's 1,797 8x8 digits (shipped with scikit-learn, no download) and evaluates on a
held-out fifth of them; ``--data-dir`` points it at a folder of MNIST or Fashion-MNIST IDX files instead. It writes a
checkpoint (``ember.save`` of the model and optimizer) and a plot of the learning curves to ``runs/demo/``.
"""
import argparse
import os
import time
from importlib.util import find_spec

import numpy as np

import ember as torch
import ember.nn as nn
import ember.nn.functional as F
from ember.utils.data import DataLoader, TensorDataset

_NEEDS = "the demo needs scikit-learn, tqdm and matplotlib: pip install -e '.[demo]'"


def make_model(side, classes=10):
    """Two conv blocks and a classifier head for ``side x side`` grayscale images."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # (B, 16, side/2, side/2)
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # (B, 32, side/4, side/4)
        nn.Flatten(), nn.Linear(32 * (side // 4) ** 2, 64), nn.ReLU(), nn.Linear(64, classes))


def load_digits(seed):
    """scikit-learn's 8x8 digits, a stratified 80/20 split, as float tensors scaled to [0, 1]."""
    from sklearn.datasets import load_digits as sk_digits
    from sklearn.model_selection import train_test_split
    d = sk_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]  # (N, 1, 8, 8)
    xtr, xte, ytr, yte = train_test_split(x, d.target, test_size=0.2, stratify=d.target, random_state=seed)
    classes = [str(i) for i in range(10)]
    return (torch.from_numpy(xtr), torch.from_numpy(ytr)), (torch.from_numpy(xte), torch.from_numpy(yte)), classes


def load_idx_folder(folder):
    """MNIST or Fashion-MNIST from a folder of IDX files, normalised with the training set's mean and std."""
    from ember.datasets import MNIST, FashionMNIST
    kind = FashionMNIST if "fashion" in os.path.abspath(folder).lower() else MNIST
    train, test = kind(folder, train=True), kind(folder, train=False)
    scale = train.data.float() / 255
    mean, std = scale.mean().item(), scale.std().item()
    prep = lambda ds: ((ds.data.float() / 255 - mean) / std).unsqueeze(1)  # noqa: E731  (N, 1, 28, 28)
    return (prep(train), train.targets), (prep(test), test.targets), kind.classes


@torch.no_grad()
def evaluate(model, x, y, batch_size=512):
    """(mean loss, accuracy, predictions) of ``model`` on ``(x, y)``."""
    model.eval()
    logits = torch.cat([model(x[i:i + batch_size]) for i in range(0, len(x), batch_size)])
    model.train()
    pred = logits.argmax(1)
    return F.cross_entropy(logits, y).item(), (pred == y).float().mean().item(), pred


def plot(history, images, labels, pred, classes, title, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    fig = plt.figure(figsize=(11, 6.8), layout="constrained")
    fig.suptitle(title, fontsize=12)
    top, bottom = fig.subfigures(2, 1, height_ratios=[2.2, 1])
    ax_loss, ax_acc = top.subplots(1, 2)
    steps = np.arange(1, len(history["step_loss"]) + 1)
    ax_loss.plot(steps, history["step_loss"], color="tab:blue", alpha=0.35, lw=0.8, label="train (per batch)")
    ends = np.array(history["epoch_end"])
    ax_loss.plot(ends, history["train_loss"], "o-", color="tab:blue", label="train (epoch mean)")
    ax_loss.plot(ends, history["test_loss"], "s-", color="tab:orange", label="test")
    ax_loss.set(xlabel="training step", ylabel="cross-entropy loss", title="Loss", yscale="log")
    ax_loss.legend()
    epochs = np.arange(1, len(ends) + 1)
    ax_acc.plot(epochs, np.array(history["train_acc"]) * 100, "o-", color="tab:blue", label="train")
    ax_acc.plot(epochs, np.array(history["test_acc"]) * 100, "s-", color="tab:orange", label="test")
    ax_acc.set(xlabel="epoch", ylabel="accuracy (%)", title="Accuracy", ylim=(min(50, ax_acc.get_ylim()[0]), 100.5))
    ax_acc.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_acc.legend(loc="lower right")
    classes = [c.split(" - ")[0] for c in classes]  # MNIST's "7 - seven" -> "7"
    for ax, img, y, p in zip(bottom.subplots(1, len(images)), images, labels, pred):
        ax.imshow(img, cmap="gray_r")
        ax.set_title(f"{classes[p]}" if p == y else f"{classes[p]}\n(is {classes[y]})",
                     color="tab:green" if p == y else "tab:red", fontsize=9)
        ax.axis("off")
    bottom.suptitle("test images and the model's answers", fontsize=10)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m ember.demo", description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", help="a folder of MNIST or Fashion-MNIST IDX files (default: scikit-learn's digits)")
    p.add_argument("--epochs", type=int, help="training epochs (default: 15 for the digits, 1 with --data-dir)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-2, help="peak learning rate of the one-cycle schedule")
    p.add_argument("--out", default=os.path.join("runs", "demo"), help="folder for the checkpoint and the plot")
    p.add_argument("--steps", type=int, help="stop each epoch after this many batches (a quick check)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    missing = [m for m in ("tqdm", "matplotlib", None if args.data_dir else "sklearn") if m and not find_spec(m)]
    if missing:
        raise SystemExit(f"{', '.join(missing)} not found: {_NEEDS}")
    from tqdm import tqdm

    torch.manual_seed(args.seed)
    if args.data_dir:
        (xtr, ytr), (xte, yte), classes = load_idx_folder(args.data_dir)
        name = f"{os.path.basename(os.path.normpath(args.data_dir))} (IDX files in {args.data_dir})"
    else:
        (xtr, ytr), (xte, yte), classes = load_digits(args.seed)
        name = "scikit-learn's handwritten digits"
    epochs = args.epochs or (1 if args.data_dir else 15)
    side = xtr.shape[-1]
    model = make_model(side, len(classes))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loader = DataLoader(TensorDataset(xtr, ytr), batch_size=args.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))
    per_epoch = min(len(loader), args.steps or len(loader))
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=epochs * per_epoch)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"ember demo: a {n_params:,}-parameter CNN learns {name}")
    print(f"  {len(xtr)} training and {len(xte)} test images of {side}x{side}, {epochs} epochs, "
          f"batch {args.batch_size}")
    print(model)

    history = {k: [] for k in ("step_loss", "epoch_end", "train_loss", "train_acc", "test_loss", "test_acc")}
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        seen = correct = 0
        total_loss = 0.0
        t0 = time.perf_counter()
        bar = tqdm(loader, desc=f"epoch {epoch}/{epochs}", unit="batch", total=per_epoch, dynamic_ncols=True)
        for i, (x, y) in enumerate(bar):
            if i == per_epoch:
                break
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            history["step_loss"].append(loss.item())
            seen += len(y)
            correct += (logits.argmax(1) == y).sum().item()
            total_loss += loss.item() * len(y)
            bar.set_postfix(loss=f"{total_loss / seen:.4f}", acc=f"{correct / seen:.1%}",
                            samples_s=f"{seen / (time.perf_counter() - t0):,.0f}", refresh=False)
        bar.close()
        test_loss, test_acc, _ = evaluate(model, xte, yte)
        for k, v in (("epoch_end", len(history["step_loss"])), ("train_loss", total_loss / seen),
                     ("train_acc", correct / seen), ("test_loss", test_loss), ("test_acc", test_acc)):
            history[k].append(v)
        print(f"  epoch {epoch}: train loss {total_loss / seen:.4f}, accuracy {correct / seen:.1%} | "
              f"test loss {test_loss:.4f}, accuracy {test_acc:.1%}", flush=True)
    elapsed = time.perf_counter() - start

    test_loss, test_acc, pred = evaluate(model, xte, yte)
    wrong = (pred != yte).sum().item()
    print(f"\nheld-out test set: accuracy {test_acc:.2%} ({len(yte) - wrong}/{len(yte)} right), loss {test_loss:.4f}; "
          f"trained in {elapsed:.1f} s")

    os.makedirs(args.out, exist_ok=True)
    ckpt = os.path.join(args.out, "checkpoint.safetensors")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epochs,
                "test_accuracy": test_acc, "image_size": side, "classes": classes}, ckpt)
    restored = make_model(side, len(classes))
    restored.load_state_dict(torch.load(ckpt)["model"])
    same = evaluate(restored, xte, yte)[1] == test_acc
    print(f"checkpoint: {ckpt} (model + optimizer; reloaded into a fresh model: test accuracy "
          f"{'identical' if same else 'DIFFERENT'})")

    shown = list(dict.fromkeys([*np.flatnonzero((pred != yte).numpy())[:4].tolist(), *range(12)]))[:12]
    png = os.path.join(args.out, "curves.png")
    plot(history, xte.numpy()[shown, 0], yte.numpy()[shown], pred.numpy()[shown], classes,
         f"ember demo: a CNN on {name.split(' (')[0]}, test accuracy {test_acc:.1%}", png)
    print(f"plot:       {png}")
    return {"test_accuracy": test_acc, "checkpoint": ckpt, "plot": png, "history": history}


if __name__ == "__main__":
    main()
