"""A character-level LSTM language model trained on Tiny Shakespeare, then sampled.

    python examples/lstm_lm.py                  # the full run (2000 steps)
    python examples/lstm_lm.py --steps 50       # a quick look

Embedding, a two-layer ``nn.LSTM`` (batch_first), a linear read-out; Adam with gradient clipping. Sampling carries
the LSTM's ``(h, c)`` state from one character to the next. Plain PyTorch code: ``import ember as torch``.
"""
import argparse
import os
import time

import ember as torch
import ember.nn as nn
import ember.nn.functional as F
from ember.datasets import TinyShakespeare
from ember.utils.data import DataLoader, RandomSampler

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "..", "..", "shared", "data", "tinyshakespeare")


class CharLSTM(nn.Module):
    def __init__(self, vocab_size, embed=64, hidden=256, layers=2, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True, dropout=dropout)
        self.head = nn.Linear(hidden, vocab_size)

    def forward(self, idx, state=None):
        out, state = self.lstm(self.embed(idx), state)  # (B, T, hidden)
        return self.head(out), state

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=0.8, generator=None):
        logits, state = self(idx)
        out = [idx]
        for _ in range(max_new_tokens):
            probs = F.softmax(logits[:, -1] / temperature, dim=-1)
            nxt = torch.multinomial(probs, 1, generator=generator)
            out.append(nxt)
            logits, state = self(nxt, state)
        return torch.cat(out, dim=1)


@torch.no_grad()
def evaluate(model, dataset, batches, batch_size, generator):
    model.eval()
    loader = DataLoader(dataset, batch_size, sampler=RandomSampler(dataset, True, batches * batch_size,
                                                                   generator=generator))
    losses = [F.cross_entropy(model(x)[0].flatten(0, 1), y.flatten()).item() for x, y in loader]
    model.train()
    return sum(losses) / len(losses)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=DEFAULT_DATA, help="folder holding input.txt")
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--seq-len", type=int, default=100)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--eval-every", type=int, default=250)
    p.add_argument("--eval-batches", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    torch.manual_seed(args.seed)
    train = TinyShakespeare(args.data_dir, args.seq_len, train=True)
    val = TinyShakespeare(args.data_dir, args.seq_len, train=False)
    model = CharLSTM(train.vocab_size, hidden=args.hidden, layers=args.layers)
    print(f"LSTM language model: {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters, "
          f"vocabulary {train.vocab_size}, sequences of {args.seq_len}")
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps, eta_min=args.lr / 10)
    g = torch.Generator().manual_seed(args.seed)
    loader = DataLoader(train, args.batch_size, sampler=RandomSampler(train, True, args.steps * args.batch_size,
                                                                      generator=g))
    start = time.perf_counter()
    for step, (x, y) in enumerate(loader, 1):
        logits, _ = model(x)
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if step % 10 == 0 or step == 1:
            rate = step * args.batch_size * args.seq_len / (time.perf_counter() - start)
            print(f"step {step:5d}/{args.steps}  loss {loss.item():.4f}  {rate:,.0f} characters/s", flush=True)
        if step % args.eval_every == 0 or step == args.steps:
            print(f"step {step:5d}  validation loss {evaluate(model, val, args.eval_batches, args.batch_size, g):.4f}")
    print("\n--- sample ---")
    print(train.decode(model.generate(torch.tensor([train.encode("ROMEO:")]), 300, generator=g)[0]))


if __name__ == "__main__":
    main()
