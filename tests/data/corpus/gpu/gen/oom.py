import torch

model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 4096)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
batch = 256
for step in range(1, 41):
    if step == 35:
        batch = 256 * 4096  # a batch-size schedule gone wrong: 1M rows of 4096 floats
    x = torch.randn(batch, 4096, device="cuda")
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step}/1000 | loss {loss.item():.4f} | lr {opt.param_groups[0]['lr']:.2e}", flush=True)
