"""Train a detector: python tools/train_net.py --config-file configs/X.yaml --num-gpus 8 SOLVER.MAX_ITER 1000"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

from det.config import get_cfg
from det.modeling import build_model


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--config-file", default="", metavar="FILE")
    p.add_argument("--num-gpus", type=int, default=1)
    p.add_argument("opts", default=None, nargs=argparse.REMAINDER, help="KEY VALUE pairs overriding the config")
    return p.parse_args()


def setup(args):
    cfg = get_cfg()
    cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    cfg.freeze()
    return cfg


def worker(rank, args, cfg):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=args.num_gpus)
    torch.cuda.set_device(rank)
    model = DistributedDataParallel(build_model(cfg).cuda(), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.SOLVER.BASE_LR, momentum=0.9, weight_decay=1e-4)
    scaler = torch.cuda.amp.GradScaler(enabled=cfg.SOLVER.AMP)
    for it in range(cfg.SOLVER.MAX_ITER):
        images, targets = next_batch(cfg.SOLVER.IMS_PER_BATCH // args.num_gpus)
        with torch.autocast("cuda", enabled=cfg.SOLVER.AMP):
            losses = sum(model(images, targets).values())
        optimizer.zero_grad()
        scaler.scale(losses).backward()
        scaler.step(optimizer)
        scaler.update()
        if it % 20 == 0 and rank == 0:
            print(f"iter: {it}  total_loss: {losses.item():.3f}")


def next_batch(n):
    raise NotImplementedError("reads COCO from DETECTRON2_DATASETS")


if __name__ == "__main__":
    args = parse()
    cfg = setup(args)
    mp.spawn(worker, nprocs=args.num_gpus, args=(args, cfg))
