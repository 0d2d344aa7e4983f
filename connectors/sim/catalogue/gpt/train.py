"""Pre-train a GPT on OpenWebText. Settings are module globals; a config file and --key=value override them:
$ torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py --max_iters=5000
"""
import math
import os

import numpy as np
import torch
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

from model import GPT, GPTConfig

# defaults
dataset = "openwebtext"
batch_size = 12
block_size = 1024
gradient_accumulation_steps = 40
n_layer = 12
n_head = 12
n_embd = 768
dropout = 0.0
learning_rate = 6e-4
max_iters = 600000
warmup_iters = 2000
dtype = "bfloat16"
compile = True
exec(open("configurator.py").read())  # overrides from the config file and the command line

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    gradient_accumulation_steps //= world_size
    device = f"cuda:{local_rank}"
    torch.cuda.set_device(device)
else:
    world_size, device, local_rank = 1, "cuda", 0

data = np.memmap(os.path.join("data", dataset, "train.bin"), dtype=np.uint16, mode="r")


def get_batch():
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy(data[i:i + block_size].astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + block_size].astype(np.int64)) for i in ix])
    return x.to(device), y.to(device)


model = GPT(GPTConfig(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size, dropout=dropout))
model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, betas=(0.9, 0.95), weight_decay=0.1)
if compile:
    model = torch.compile(model)
if ddp:
    model = DDP(model, device_ids=[local_rank])
ctx = torch.autocast("cuda", dtype=torch.bfloat16 if dtype == "bfloat16" else torch.float16)


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * it / warmup_iters
    return learning_rate * 0.5 * (1 + math.cos(math.pi * min(1.0, it / max_iters)))


for it in range(max_iters):
    for group in optimizer.param_groups:
        group["lr"] = get_lr(it)
    for _ in range(gradient_accumulation_steps):
        x, y = get_batch()
        with ctx:
            _, loss = model(x, y)
        (loss / gradient_accumulation_steps).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if it % 10 == 0 and local_rank == 0:
        print(f"iter {it}: loss {loss.item():.4f}")

if ddp:
    destroy_process_group()
