"""A CNN for Fashion-MNIST (about 91-92% test accuracy after 3 epochs), torchvision-style data pipeline.

    python examples/fashion_mnist_cnn.py                    # the full run: 3 epochs
    python examples/fashion_mnist_cnn.py --steps 50         # a quick look: 50 batches per epoch

The data are the four IDX files of Fashion-MNIST in ``--data-dir``. Each epoch ends with an evaluation on the
10,000 test images; the best model is saved with ``torch.save`` (a safetensors file). Plain PyTorch code:
``import ember as torch`` is the only change.
"""
import argparse
import os
import time

import ember as torch
import ember.nn as nn
import ember.nn.functional as F
from ember import transforms
from ember.datasets import FashionMNIST
from ember.utils.data import DataLoader

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "..", "..", "shared", "data", "fashion-mnist")


class Net(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),  # (B, 32, 14, 14)
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2))  # (B, 64, 7, 7)
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.25), nn.Linear(64 * 7 * 7, 128), nn.ReLU(),
                                        nn.Linear(128, classes))

    def forward(self, x):
        return self.classifier(self.features(x))


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    loss = correct = n = 0
    for x, y in loader:
        logits = model(x)
        loss += F.cross_entropy(logits, y, reduction="sum").item()
        correct += (logits.argmax(1) == y).sum().item()
        n += len(y)
    model.train()
    return loss / n, correct / n


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=DEFAULT_DATA, help="folder holding the four Fashion-MNIST IDX files")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, help="batches per epoch (default: the whole training set)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--out", default=os.path.join("runs", "fashion_mnist"))
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    torch.manual_seed(args.seed)
    prep = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.2860,), (0.3530,))])
    train = FashionMNIST(args.data_dir, train=True, transform=prep)
    test = FashionMNIST(args.data_dir, train=False, transform=prep)
    train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True, drop_last=True)
    test_loader = DataLoader(test, batch_size=1000)
    per_epoch = min(len(train_loader), args.steps or len(train_loader))

    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=args.epochs * per_epoch)
    print(f"{sum(p.numel() for p in model.parameters()):,} parameters; {len(train)} training, {len(test)} test "
          f"images; {args.epochs} epochs of {per_epoch} batches of {args.batch_size}")
    os.makedirs(args.out, exist_ok=True)
    best = 0.0
    for epoch in range(1, args.epochs + 1):
        start, seen, running = time.perf_counter(), 0, 0.0
        for i, (x, y) in enumerate(train_loader, 1):
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            seen += len(y)
            running += loss.item()
            if i % 100 == 0 or i == per_epoch:
                print(f"epoch {epoch}  batch {i:4d}/{per_epoch}  loss {running / i:.4f}  "
                      f"{seen / (time.perf_counter() - start):,.0f} images/s", flush=True)
            if i == per_epoch:
                break
        test_loss, test_acc = evaluate(model, test_loader)
        print(f"epoch {epoch}: test loss {test_loss:.4f}, test accuracy {test_acc:.2%}")
        if test_acc > best:
            best = test_acc
            torch.save({"model": model.state_dict(), "epoch": epoch, "test_accuracy": test_acc},
                       os.path.join(args.out, "best.safetensors"))
    print(f"best test accuracy {best:.2%}; model saved in {os.path.join(args.out, 'best.safetensors')}")


if __name__ == "__main__":
    main()
