import os

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
print(f"rank {rank}: starting", flush=True)
torch.cuda.set_device(0)  # every rank on GPU 0: the launch script forgot LOCAL_RANK
dist.init_process_group("nccl")
t = torch.ones(1024, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
print(f"rank {rank}: all_reduce gave {t[0].item()}", flush=True)
dist.destroy_process_group()
