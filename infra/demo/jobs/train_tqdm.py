"""Demo job: an MLP classifier on synthetic data, reporting through a tqdm bar with a postfix."""

import argparse
import math
import time

import torch
from torch import nn
from tqdm import tqdm

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=600)
p.add_argument("--batch", type=int, default=128)
p.add_argument("--lr", type=float, default=3e-3)
p.add_argument("--sleep", type=float, default=0.03, help="seconds per step, to make the demo watchable")
args = p.parse_args()

torch.manual_seed(0)
torch.set_num_threads(1)
w_true = torch.randn(32, 10)
model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 10))
opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / args.steps)))
print(f"model params: {sum(p.numel() for p in model.parameters())}")
bar = tqdm(range(args.steps), mininterval=0.2)
for step in bar:
    x = torch.randn(args.batch, 32)
    y = (x @ w_true).argmax(dim=1)
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    time.sleep(args.sleep)
    bar.set_postfix(loss=f"{loss.item():.4f}", lr=f"{sched.get_last_lr()[0]:.2e}")
bar.close()
print("training finished")
