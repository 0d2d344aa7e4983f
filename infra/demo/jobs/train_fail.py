"""Demo job that fails: a classifier whose dataset misses a label after a while (a user-script bug)."""

import argparse
import time

import torch
from torch import nn

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=400)
p.add_argument("--fail-at", type=int, default=250)
args = p.parse_args()

torch.manual_seed(0)
torch.set_num_threads(1)
labels = {i: i % 4 for i in range(args.fail_at * 8)}  # the label table is shorter than the dataset


class Data(torch.utils.data.Dataset):
    def __len__(self) -> int:
        return args.steps * 8

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        return torch.randn(16), labels[i]


model = nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(Data(), batch_size=8)
for step, (x, y) in enumerate(loader, start=1):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    time.sleep(0.02)
    if step % 10 == 0:
        print(f"step {step}/{args.steps} | loss {loss.item():.4f} | lr 0.1", flush=True)
