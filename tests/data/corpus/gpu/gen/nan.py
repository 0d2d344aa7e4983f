import time

import torch

model = torch.nn.Linear(256, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=5.0)  # far too high: the loss diverges
t0 = time.time()
for step in range(1, 61):
    x = torch.randn(128, 256, device="cuda") * 10
    loss = (model(x) - 1).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        dt = (time.time() - t0) / 10
        t0 = time.time()
        print(f"iter {step}: loss {loss.item():.4f}, time {dt * 1000:.2f}ms", flush=True)
