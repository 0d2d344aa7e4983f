"""Demo job: a tiny character-level transformer LM, logging nanoGPT-style iter lines."""

import argparse
import time

import torch
from torch import nn

p = argparse.ArgumentParser()
p.add_argument("--max-iters", type=int, default=1500)
p.add_argument("--log-interval", type=int, default=5)
args = p.parse_args()

torch.manual_seed(0)
torch.set_num_threads(1)
text = ("to be or not to be that is the question whether tis nobler in the mind to suffer " * 200).encode()
data = torch.tensor(list(text), dtype=torch.long)
vocab, block, batch, dim = 256, 32, 16, 64


class TinyLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(block, dim))
        layer = nn.TransformerEncoderLayer(dim, 4, 4 * dim, dropout=0.0, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        mask = nn.Transformer.generate_square_subsequent_mask(idx.shape[1])
        return self.head(self.blocks(self.emb(idx) + self.pos, mask=mask, is_causal=True))


model = TinyLM()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
print(f"number of parameters: {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M")
for it in range(args.max_iters + 1):
    t0 = time.time()
    ix = torch.randint(len(data) - block - 1, (batch,))
    x = torch.stack([data[i : i + block] for i in ix])
    y = torch.stack([data[i + 1 : i + block + 1] for i in ix])
    loss = nn.functional.cross_entropy(model(x).view(-1, vocab), y.view(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    dt = time.time() - t0
    if it % args.log_interval == 0:
        print(f"iter {it}: loss {loss.item():.4f}, time {dt * 1000:.2f}ms, {batch * block / dt:.0f} tok/s")
print("done")
