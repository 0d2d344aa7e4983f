import torch
from torch.nn import functional

model = torch.nn.Linear(512, 10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(1, 31):
    x = torch.randn(64, 512, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    if step == 23:
        y[5] = 10  # a label outside the 10 classes (an off-by-one in the dataset)
    loss = functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"Epoch 0 | iter {step}/30 | loss: {loss.item():.4f}", flush=True)
