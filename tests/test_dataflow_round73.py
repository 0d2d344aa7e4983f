"""Round 73's misses (measured once at first sight, then worked on), as mechanisms: a launch script's bash ``let``
arithmetic (MetaFormer's ``let BATCH_SIZE=ALL_BATCH_SIZE/NUM_GPU/GRAD_ACCUM_STEPS``); a consumer called with a dict
of keyword arguments built before it (timm-style ``create_model(**create_model_args)``); ``isinstance`` of a class
handed as a default (``mlps=Mlp``) is no list or tuple."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.budget import Budget, spending
from schedmate.agents.advisor.extract.launch import follow_shell_script, parse_command
from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.advisor.extract.workspace import Workspace
from tests.repo_files import write

_TRAIN_SH = """DATA_PATH=/path/to/imagenet
ALL_BATCH_SIZE=4096
NUM_GPU=8
GRAD_ACCUM_STEPS=4
let BATCH_SIZE=ALL_BATCH_SIZE/NUM_GPU/GRAD_ACCUM_STEPS

sh distributed_train.sh $NUM_GPU $DATA_PATH --model caformer_s18 -b $BATCH_SIZE --grad-accum-steps $GRAD_ACCUM_STEPS
"""

_DIST_SH = """#!/bin/bash
NUM_PROC=$1
shift
python3 -m torch.distributed.launch --nproc_per_node=$NUM_PROC train.py "$@"
"""


def test_bash_let_arithmetic(tmp_path: Path) -> None:
    """`let BATCH_SIZE=ALL_BATCH_SIZE/NUM_GPU/GRAD_ACCUM_STEPS` is 4096 / 8 / 4 = 128 by the time `-b $BATCH_SIZE`
    is handed on."""
    step = "import torch\n\nfor batch in range(10):\n    optimizer.step()\n"
    root = write(tmp_path, {"train.sh": _TRAIN_SH, "distributed_train.sh": _DIST_SH, "train.py": step})
    with spending(Budget()):
        launch = follow_shell_script(Workspace(root), parse_command("bash train.sh"))
    assert launch.script == "train.py" and launch.nproc_per_node == 8
    assert launch.args[launch.args.index("-b") + 1] == "128"


_TIMM_TRAIN = """
import argparse
import torch
from timm.models import create_model
import tiny_models

parser = argparse.ArgumentParser()
parser.add_argument('--model', default='resnet50')
parser.add_argument('--pretrained', action='store_true')
parser.add_argument('--lr', type=float, default=0.05)


def main():
    args = parser.parse_args()
    create_model_args = dict(
        model_name=args.model,
        pretrained=args.pretrained,
        num_classes=1000,
    )
    model = create_model(**create_model_args)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)


if __name__ == '__main__':
    main()
"""


_TINY_MODELS = """
import torch.nn as nn
from timm.models.registry import register_model


class TinyNet(nn.Module):
    def __init__(self, num_classes=1000, width=64):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3, padding=1)
        self.head = nn.Linear(width, num_classes)


@register_model
def tiny_net_w64(pretrained=False, **kwargs):
    return TinyNet(width=64, **kwargs)
"""


def test_keyword_arguments_from_a_dict_built_before_the_call(tmp_path: Path) -> None:
    """`create_model(**create_model_args)` with `create_model_args = dict(model_name=args.model, ...)`: the model
    the command names (`--model tiny_net_w64`, registered by the job), not the parser's default, counted."""
    root = write(tmp_path, {"train.py": _TIMM_TRAIN, "tiny_models.py": _TINY_MODELS})
    meta = extract_metadata(root, "python train.py --model tiny_net_w64")
    assert meta.model_name == "tiny_net_w64"
    expected = (3 * 9 * 64 + 64) + (64 * 1000 + 1000)
    assert meta.params_millions is not None and abs(meta.params_millions - expected / 1e6) < 1e-3


_METAFORMER = """
import torch
import torch.nn as nn


class Mlp(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)


class Net(nn.Module):
    def __init__(self, dims=(16, 32), mlps=Mlp, num_classes=10):
        super().__init__()
        if not isinstance(mlps, (list, tuple)):
            mlps = [mlps] * len(dims)
        self.blocks = nn.ModuleList([mlps[i](dims[i]) for i in range(len(dims))])
        self.head = nn.Linear(dims[-1], num_classes)


model = Net()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(100):
    optimizer.zero_grad()
    model(torch.randn(2, 16)).sum().backward()
    optimizer.step()
"""


def test_a_class_handed_as_a_default_is_no_tuple(tmp_path: Path) -> None:
    """`mlps=Mlp` then `if not isinstance(mlps, (list, tuple)): mlps = [mlps] * n` (MetaFormer): a class is no list
    or tuple, so each stage builds an Mlp and the network is counted."""
    root = write(tmp_path, {"train.py": _METAFORMER})
    meta = extract_metadata(root, "python train.py")
    mlp = lambda d: (d * 4 * d + 4 * d) + (4 * d * d + d)  # noqa: E731
    expected = mlp(16) + mlp(32) + (32 * 10 + 10)
    assert meta.params_millions is not None and abs(meta.params_millions - expected / 1e6) < 1e-3
