"""A character-level GPT (about 1M parameters) trained on Tiny Shakespeare, then sampled.

    python examples/char_gpt.py                       # the full run (800 steps: validation loss about 1.84)
    python examples/char_gpt.py --steps 50            # a quick look

The model is nanoGPT's: token and position embeddings, pre-norm Transformer blocks with causal
``F.scaled_dot_product_attention``, a tied output layer, AdamW with warmup and cosine decay. The script is plain
PyTorch code: ``import ember as torch`` is the only change.
"""
import argparse
import math
import os
import time

import ember as torch
import ember.nn as nn
import ember.nn.functional as F
from ember.datasets import TinyShakespeare
from ember.utils.data import DataLoader, RandomSampler

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "..", "..", "shared", "data", "tinyshakespeare")


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.dropout = dropout

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        # (B, nh, T, hs)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                 nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size=128, n_layer=4, n_head=4, n_embd=128, dropout=0.0):
        super().__init__()
        self.block_size = block_size
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Embedding(block_size, n_embd)
        self.blocks = nn.Sequential(*[Block(n_embd, n_head, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)
        self.head.weight = self.tok_emb.weight  # weight tying
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(T))
        logits = self.head(self.ln_f(self.blocks(x)))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=0.8, top_k=20, generator=None):
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.block_size:])
            logits = logits[:, -1, :] / temperature
            v, _ = torch.topk(logits, top_k)
            logits[logits < v[:, [-1]]] = -float("inf")
            nxt = torch.multinomial(F.softmax(logits, dim=-1), 1, generator=generator)
            idx = torch.cat([idx, nxt], dim=1)
        return idx


@torch.no_grad()
def evaluate(model, dataset, batches, batch_size, generator):
    model.eval()
    loader = DataLoader(dataset, batch_size, sampler=RandomSampler(dataset, True, batches * batch_size,
                                                                   generator=generator))
    losses = [model(x, y)[1].item() for x, y in loader]
    model.train()
    return sum(losses) / len(losses)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=DEFAULT_DATA, help="folder holding input.txt")
    p.add_argument("--steps", type=int, default=800)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--block-size", type=int, default=128)
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=128)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--eval-every", type=int, default=250)
    p.add_argument("--eval-batches", type=int, default=20)
    p.add_argument("--seed", type=int, default=1337)
    args = p.parse_args(argv)

    torch.manual_seed(args.seed)
    train = TinyShakespeare(args.data_dir, args.block_size, train=True)
    val = TinyShakespeare(args.data_dir, args.block_size, train=False)
    model = GPT(train.vocab_size, args.block_size, args.n_layer, args.n_head, args.n_embd)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"GPT: {n_params / 1e6:.2f}M parameters, vocabulary {train.vocab_size}, context {args.block_size}; "
          f"{len(train.data):,} training characters")

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.99))
    warmup = max(1, min(100, args.steps // 10))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * s / args.steps))))
    g = torch.Generator().manual_seed(args.seed)
    loader = DataLoader(train, args.batch_size, sampler=RandomSampler(train, True, args.steps * args.batch_size,
                                                                      generator=g))
    start = time.perf_counter()
    for step, (x, y) in enumerate(loader, 1):
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if step % 10 == 0 or step == 1:
            rate = step * args.batch_size * args.block_size / (time.perf_counter() - start)
            print(f"step {step:5d}/{args.steps}  loss {loss.item():.4f}  {rate:,.0f} tokens/s", flush=True)
        if step % args.eval_every == 0 or step == args.steps:
            print(f"step {step:5d}  validation loss {evaluate(model, val, args.eval_batches, args.batch_size, g):.4f}")
    context = torch.tensor([train.encode("\n")])
    print("\n--- sample ---")
    print(train.decode(model.generate(context, 300, generator=g)[0]))


if __name__ == "__main__":
    main()
