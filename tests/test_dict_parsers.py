"""Parsers built from dictionaries of defaults, consumers inside the job's helpers, and processes a script starts
only under settings it does not have (round-4 corpus idioms, written here as small synthetic workspaces)."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.test_usesites import write

YAML_HOOK_MAIN = """
import argparse
import torch
import torch.multiprocessing as mp
from torch.nn.parallel import DataParallel
from utils import yaml_config_hook
from model import load_optimizer
from net import Projector, get_resnet

def main(gpu, args):
    encoder = get_resnet(args.resnet)
    model = Projector(encoder, args.projection_dim)
    optimizer = load_optimizer(args, model)
    loader = torch.utils.data.DataLoader(None, batch_size=args.batch_size, shuffle=True)
    if args.dataparallel:
        model = DataParallel(model)
    for epoch in range(args.start_epoch, args.epochs):
        pass

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    config = yaml_config_hook("./config/config.yaml")
    for k, v in config.items():
        parser.add_argument(f"--{k}", default=v, type=type(v))
    args = parser.parse_args()
    args.num_gpus = torch.cuda.device_count()
    if args.nodes > 1:
        mp.spawn(main, args=(args,), nprocs=args.gpus, join=True)
    else:
        main(0, args)
"""
YAML_HOOK_CONFIG = """
nodes: 1
gpus: 1
dataparallel: 0
batch_size: 128
start_epoch: 0
epochs: 100
resnet: "resnet18"
projection_dim: 64
optimizer: "Adam"
"""
YAML_HOOK_UTILS = """
import yaml
def yaml_config_hook(config_file):
    with open(config_file) as f:
        return yaml.safe_load(f)
"""
YAML_HOOK_MODEL = """
import torch
def load_optimizer(args, model):
    if args.optimizer == "Adam":
        optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    elif args.optimizer == "LARS":
        learning_rate = 0.3 * args.batch_size / 256
        optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
    return optimizer
"""
YAML_HOOK_NET = """
import torch.nn as nn
import torchvision
def get_resnet(name):
    return {"resnet18": torchvision.models.resnet18(), "resnet50": torchvision.models.resnet50()}[name]

class Projector(nn.Module):
    def __init__(self, encoder, dim):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Sequential(nn.Linear(512, 512, bias=False), nn.ReLU(), nn.Linear(512, dim, bias=False))
"""


def _hook_workspace(tmp_path: Path) -> None:
    write(tmp_path, {"main.py": YAML_HOOK_MAIN, "config/config.yaml": YAML_HOOK_CONFIG, "utils.py": YAML_HOOK_UTILS,
                     "model.py": YAML_HOOK_MODEL, "net.py": YAML_HOOK_NET})  # fmt: skip


def test_flags_made_from_a_yaml_file_carry_its_values_and_take_the_command_line(tmp_path: Path) -> None:
    """`for k, v in yaml_config_hook("./config/config.yaml").items(): add_argument(f"--{k}", default=v)`: the file's
    values are the defaults, `--batch_size 256 --epochs 200` overrides them."""
    _hook_workspace(tmp_path)
    md = extract_metadata(tmp_path, "python main.py")
    assert (md.batch_size_per_device, md.global_batch_size, md.epochs) == (128, 128, 100)
    md = extract_metadata(tmp_path, "python main.py --batch_size 256 --epochs 200")
    assert (md.batch_size_per_device, md.epochs) == (256, 200)


def test_a_rate_written_in_a_helper_and_chosen_by_a_setting_is_the_rate(tmp_path: Path) -> None:
    """The optimizer is built in the job's own helper: a literal rate in the arm the config selects (Adam), a
    computed one (0.3 x batch / 256) when the command line selects the other arm."""
    _hook_workspace(tmp_path)
    assert extract_metadata(tmp_path, "python main.py").learning_rate == 3e-4
    md = extract_metadata(tmp_path, "python main.py --optimizer LARS --batch_size 512")
    assert md.learning_rate == 0.6


def test_a_spawn_only_under_a_setting_the_job_does_not_have_means_one_gpu(tmp_path: Path) -> None:
    """`if args.nodes > 1: mp.spawn(...)` with nodes 1: one process on one GPU, although the script reads
    device_count(); with `--nodes 2` the GPU count is no longer one."""
    _hook_workspace(tmp_path)
    md = extract_metadata(tmp_path, "python main.py")
    assert (md.num_gpus, md.distributed) == (1, "single_gpu")
    assert extract_metadata(tmp_path, "python main.py --nodes 2").num_gpus != 1


def test_a_wrapper_named_after_a_known_backbone_takes_its_family(tmp_path: Path) -> None:
    """The model class only holds linear heads; the encoder it receives is a ResNet named by the settings, so
    the family is a CNN (not an MLP) and the size is the ResNet's."""
    _hook_workspace(tmp_path)
    md = extract_metadata(tmp_path, "python main.py --resnet resnet50")
    assert md.model_type == "cnn"
    assert md.params_millions is not None and 24 < md.params_millions < 30


HELPER_MAIN = """
import argparse
from pkg.script_util import add_dict_to_argparser, model_defaults
import torch

def create_argparser():
    defaults = dict(lr=1e-4, batch_size=1, use_fp16=False)
    defaults.update(model_defaults())
    parser = argparse.ArgumentParser()
    add_dict_to_argparser(parser, defaults)
    return parser

def main():
    args = create_argparser().parse_args()
    loader = torch.utils.data.DataLoader(None, batch_size=args.batch_size, shuffle=True)
    opt = torch.optim.AdamW([], lr=args.lr)

if __name__ == "__main__":
    main()
"""
HELPER_UTIL = """
def model_defaults():
    return dict(image_size=64, num_channels=128, dropout=0.0)

def add_dict_to_argparser(parser, default_dict):
    for k, v in default_dict.items():
        v_type = type(v)
        if v is None:
            v_type = str
        parser.add_argument(f"--{k}", default=v, type=v_type)
"""


def test_a_helper_that_adds_a_flag_per_key_of_a_merged_dict(tmp_path: Path) -> None:
    """`add_dict_to_argparser(parser, defaults)` over `dict(lr=1e-4, batch_size=1)` updated with a defaults
    function: the command line's `--lr 3e-4 --batch_size 128` are typed by the defaults and reach the consumers."""
    write(tmp_path, {"scripts/train.py": HELPER_MAIN, "pkg/__init__.py": "", "pkg/script_util.py": HELPER_UTIL})
    md = extract_metadata(tmp_path, "python scripts/train.py --lr 3e-4 --batch_size 128 --image_size 32")
    assert (md.learning_rate, md.batch_size_per_device) == (3e-4, 128)
    assert extract_metadata(tmp_path, "python scripts/train.py").batch_size_per_device == 1
