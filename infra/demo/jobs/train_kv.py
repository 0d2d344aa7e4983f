"""Demo job: linear regression with python logging in key=value style, epochs and throughput."""

import argparse
import logging
import time

import torch
from torch import nn

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=4)
p.add_argument("--steps-per-epoch", type=int, default=300)
p.add_argument("--batch", type=int, default=256)
p.add_argument("--log-every", type=int, default=10)
args = p.parse_args()

logging.basicConfig(level=logging.INFO, format="%(asctime)s | %(levelname)-7s | %(message)s")
log = logging.getLogger("train")
torch.manual_seed(0)
torch.set_num_threads(1)
w = torch.randn(64, 1)
model = nn.Sequential(nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
total = args.epochs * args.steps_per_epoch
step = 0
for epoch in range(1, args.epochs + 1):
    for _ in range(args.steps_per_epoch):
        t0 = time.perf_counter()
        x = torch.randn(args.batch, 64)
        loss = nn.functional.mse_loss(model(x), x @ w)
        opt.zero_grad()
        loss.backward()
        opt.step()
        time.sleep(0.015)
        dt = time.perf_counter() - t0
        step += 1
        if step % args.log_every == 0:
            lr = opt.param_groups[0]["lr"]
            log.info(
                f"epoch={epoch}/{args.epochs} step={step}/{total} loss={loss.item():.5f} lr={lr:.6f} "
                f"step_time={dt:.4f}s throughput={args.batch / dt:.2f} samples/s"
            )
    for g in opt.param_groups:
        g["lr"] *= 0.5
    log.info(f"epoch {epoch} done")
log.info("finished")
