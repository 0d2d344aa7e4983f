"""Pipes and redirections in launch lines, a launch script that runs a copy of the job's script, a model built inside
DataParallel and handed to an optimizer helper, `'x' in args`, `mp.spawn(nprocs=N)` and an options class whose
`parse()` builds the parser (round 28's misses)."""

from __future__ import annotations

from pathlib import Path

import pytest
from torch import nn

from schedmate.agents.advisor.extract.launch import parse_command
from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write


@pytest.mark.parametrize(
    ("command", "script", "args"),
    [
        ("python train.py --lr 3 2>&1 | tee logs/train.log", "train.py", ["--lr", "3"]),
        ("python train.py --lr 3 > log.txt 2>&1", "train.py", ["--lr", "3"]),
        ("nohup python train.py --epochs 2 >> out.log 2>&1 &", "train.py", ["--epochs", "2"]),
        ("python train.py --n 2 2> err.log", "train.py", ["--n", "2"]),
        ("cat hosts | python train.py --n 2", "train.py", ["--n", "2"]),
    ],
)
def test_a_pipe_filter_and_redirections_are_not_the_job(command: str, script: str, args: list[str]) -> None:
    """`python train.py … 2>&1 | tee log`: the job is the producer, not `tee`; `> log`, `2>&1` and `2> err` are the
    shell's, not arguments (a trailing `2` of `2>&1` is no positional)."""
    launch = parse_command(command)
    assert (launch.launcher, launch.script, launch.args) == ("python", script, args)


SEMSEG_LIKE = {
    "tool/train.sh": """#!/bin/sh
export PYTHONPATH=./
PYTHON=python
dataset=$1
exp_name=$2
exp_dir=exp/${dataset}/${exp_name}
config=config/${dataset}_${exp_name}.yaml
now=$(date +"%Y%m%d_%H%M%S")
mkdir -p ${exp_dir}
cp tool/train.sh tool/train.py ${config} ${exp_dir}
$PYTHON -u ${exp_dir}/train.py --config=${config} 2>&1 | tee ${exp_dir}/train-$now.log
""",
    "tool/train.py": """
import argparse
import torch
from torch.utils.data import DataLoader
p = argparse.ArgumentParser()
p.add_argument("--config", type=str)
p.add_argument("--lr", type=float, default=0.01)
p.add_argument("--epochs", type=int, default=100)
args = p.parse_args()
model = torch.nn.Conv2d(3, 8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
for epoch in range(args.epochs):
    pass
""",
    "config/ade20k_pspnet50.yaml": "epochs: 100\n",
}


def test_a_launch_script_that_runs_a_copy_of_the_job_script_reads_the_original(tmp_path: Path) -> None:
    """`cp tool/train.py ${exp_dir}` then `python ${exp_dir}/train.py … | tee log` (semseg's train.sh): the copy is
    made when the job runs, so the job's own `tool/train.py` is what is read."""
    root = write(tmp_path, SEMSEG_LIKE)
    meta = extract_metadata(root, "sh tool/train.sh ade20k pspnet50")
    assert meta.learning_rate == pytest.approx(0.01)
    assert meta.epochs == 100
    assert meta.params_millions == pytest.approx((3 * 8 * 9 + 8) / 1e6, abs=1e-3)


RAFT_LIKE = {
    "core/flow.py": """
import torch.nn as nn
class Flow(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        if 'dropout' not in self.args:
            self.args.dropout = 0
        if args.small:
            self.enc = nn.Conv2d(3, 32, 7)
        else:
            self.enc = nn.Conv2d(3, 64, 7)
""",
    "train.py": """
import sys
sys.path.append('core')
import argparse
import torch
import torch.nn as nn
import torch.optim as optim
from flow import Flow

def fetch_optimizer(args, model):
    optimizer = optim.AdamW(model.parameters(), lr=args.lr)
    return optimizer

def train(args):
    model = nn.DataParallel(Flow(args), device_ids=args.gpus)
    model.cuda()
    optimizer = fetch_optimizer(args, model)

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--small', action='store_true')
    parser.add_argument('--lr', type=float, default=0.0002)
    parser.add_argument('--gpus', type=int, nargs='+', default=[0, 1])
    args = parser.parse_args()
    train(args)
""",
}


def test_a_model_built_inside_data_parallel_and_a_namespace_membership_test(tmp_path: Path) -> None:
    """`model = nn.DataParallel(Flow(args), device_ids=args.gpus)` whose parameters an optimizer helper trains: the
    model is `Flow`, counted with `'dropout' not in self.args` told from the settings (an argparse Namespace holds
    its options)."""
    root = write(tmp_path, RAFT_LIKE)
    meta = extract_metadata(root, "python train.py --lr 0.0004 --gpus 0 1")
    assert meta.model_name == "Flow"
    assert meta.params_millions == pytest.approx(
        sum(p.numel() for p in nn.Conv2d(3, 64, 7).parameters()) / 1e6, rel=1e-3
    )


SPAWNING = {
    "train.py": """
import argparse
import torch
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

def main_worker(gpu, ngpus, args):
    torch.distributed.init_process_group("nccl", rank=gpu, world_size=ngpus)
    model = DDP(torch.nn.Linear(10, 10).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    loader = DataLoader(None, batch_size=args.batch_size)

if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--train-gpu", type=int, nargs="+", default=[0, 1, 2])
    args = p.parse_args()
    ngpus_per_node = len(args.train_gpu)
    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
""",
}


def test_mp_spawn_starts_nprocs_processes(tmp_path: Path) -> None:
    """`mp.spawn(main_worker, nprocs=len(args.train_gpu))` starts one DDP process per listed GPU: 3 of them."""
    root = write(tmp_path, SPAWNING)
    meta = extract_metadata(root, "python train.py")
    assert (meta.num_gpus, meta.distributed) == (3, "ddp")


OPTIONS_CLASS = {
    "lib/opts.py": """
import argparse
class opts(object):
    def __init__(self):
        self.parser = argparse.ArgumentParser()
        self.parser.add_argument('task', default='ctdet')
        self.parser.add_argument('--lr', type=float, default=1.25e-4)
        self.parser.add_argument('--num_epochs', type=int, default=140)
        self.parser.add_argument('--batch_size', type=int, default=32)

    def parse(self, args=''):
        opt = self.parser.parse_args(args) if args else self.parser.parse_args()
        return opt
""",
    "_init_paths.py": """
import os.path as osp
import sys
this_dir = osp.dirname(__file__)
sys.path.insert(0, osp.join(this_dir, 'lib'))
""",
    "main.py": """
import _init_paths
import torch
from opts import opts

def main(opt):
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.Adam(model.parameters(), opt.lr)
    train_loader = torch.utils.data.DataLoader(None, batch_size=opt.batch_size)
    for epoch in range(1, opt.num_epochs + 1):
        pass

if __name__ == '__main__':
    opt = opts().parse()
    main(opt)
""",
}


def test_an_options_class_whose_parse_method_builds_the_parser(tmp_path: Path) -> None:
    """`opt = opts().parse()` with `from opts import opts` (CenterNet): the options class's `add_argument` defaults
    count, though the imported name says nothing of arguments."""
    root = write(tmp_path, OPTIONS_CLASS)
    meta = extract_metadata(root, "python main.py ctdet --batch_size 114 --lr 5e-4")
    assert (meta.epochs, meta.batch_size_per_device, meta.learning_rate) == (140, 114, pytest.approx(5e-4))


REGISTRY_EXTENDED = {
    "models/imagenet/__init__.py": "from .tinynet import *\n",
    "models/imagenet/tinynet.py": """
import torch.nn as nn
__all__ = ['tinynet']
class TinyNet(nn.Module):
    def __init__(self, width_mult=1.0):
        super().__init__()
        c = int(32 * width_mult)
        self.conv = nn.Conv2d(3, c, 3)
        self.fc = nn.Linear(c, 1000)

def tinynet(**kwargs):
    return TinyNet(**kwargs)
""",
    "imagenet.py": """
import argparse
import torch
import torchvision.models as models
import models.imagenet as customized_models
for name in customized_models.__dict__:
    if name.islower() and not name.startswith("__") and callable(customized_models.__dict__[name]):
        models.__dict__[name] = customized_models.__dict__[name]
p = argparse.ArgumentParser()
p.add_argument('-a', '--arch', default='resnet18')
p.add_argument('--width-mult', type=float, default=1.0)
args = p.parse_args()
model = models.__dict__[args.arch](width_mult=args.width_mult)
model = torch.nn.DataParallel(model).cuda()
optimizer = torch.optim.SGD(model.parameters(), 0.1)
""",
}


def test_a_torchvision_registry_extended_with_the_jobs_own_builders(tmp_path: Path) -> None:
    """`models.__dict__[name] = customized_models.__dict__[name]` adds the job's builders to torchvision's table:
    `-a tinynet --width-mult 2.0` builds the job's `tinynet(width_mult=2.0)`, counted with that argument."""
    root = write(tmp_path, REGISTRY_EXTENDED)
    meta = extract_metadata(root, "python imagenet.py -a tinynet --width-mult 2.0")
    truth = (3 * 64 * 9 + 64) + (64 * 1000 + 1000)
    assert meta.params_millions == pytest.approx(truth / 1e6, abs=5e-4)


SOLVER = {
    "model.py": """
import torch.nn as nn
class VAE(nn.Module):
    def __init__(self, z_dim=10, nc=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(nc, 32, 4, 2, 1), nn.Linear(32, z_dim * 2))
        self.decoder = nn.Sequential(nn.Linear(z_dim, 32), nn.ConvTranspose2d(32, nc, 4, 2, 1))
""",
    "utils.py": """
def cuda(tensor, uses_cuda):
    return tensor.cuda() if uses_cuda else tensor
""",
    "solver.py": """
import torch
import torch.optim as optim
from model import VAE
from utils import cuda

class Solver(object):
    def __init__(self, args):
        self.use_cuda = args.cuda and torch.cuda.is_available()
        net = VAE
        self.net = cuda(net(args.z_dim, 3), self.use_cuda)
        self.optim = optim.Adam(self.net.parameters(), lr=args.lr)
""",
    "main.py": """
import argparse
from solver import Solver
p = argparse.ArgumentParser()
p.add_argument('--cuda', default=True)
p.add_argument('--z_dim', type=int, default=10)
p.add_argument('--lr', type=float, default=1e-4)
args = p.parse_args()
net = Solver(args)
net.train()
""",
}


def test_a_solver_class_that_holds_the_model_is_named_by_the_model(tmp_path: Path) -> None:
    """`net = Solver(args)`, a plain class whose `self.net = cuda(VAE(...), use_cuda)` (a helper returning
    `tensor.cuda() if uses_cuda else tensor`: the same module either way) is what the optimizer trains: the model
    is `VAE`, not the harness."""
    root = write(tmp_path, SOLVER)
    meta = extract_metadata(root, "python main.py --z_dim 10")
    assert meta.model_name == "VAE"
    truth = (3 * 32 * 16 + 32) + (32 * 20 + 20) + (10 * 32 + 32) + (32 * 3 * 16 + 3)
    assert meta.params_millions == pytest.approx(truth / 1e6, abs=5e-4)
