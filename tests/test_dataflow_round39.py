"""Round 39's misses, as mechanisms: a function of the job that forwards its arguments to ``add_argument``."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write


def test_options_added_through_a_forwarding_wrapper_and_an_abbreviated_flag(tmp_path: Path) -> None:
    """LynnHo's GANs: `py.arg("--epochs", type=int, default=25)` where `pylib.argument` defines `def argument(*args,
    **kwargs): return GLOBAL_COMMAND_PARSER.add_argument(*args, **kwargs)` and `arg = argument`, re-exported by the
    package's `__init__`; the README's `--epoch=30` is argparse's unambiguous prefix of `--epochs`."""
    write(
        tmp_path,
        {
            "pylib/__init__.py": "from pylib.argument import *\n",
            "pylib/argument.py": """
import argparse
GLOBAL_COMMAND_PARSER = argparse.ArgumentParser()
def argument(*args, **kwargs):
    return GLOBAL_COMMAND_PARSER.add_argument(*args, **kwargs)
arg = argument
def args(args=None):
    return GLOBAL_COMMAND_PARSER.parse_args(args=args)
""",
            "train.py": """
import torch
import pylib as py
py.arg('--batch_size', type=int, default=64)
py.arg('--epochs', type=int, default=25)
py.arg('--lr', type=float, default=0.0002)
args = py.args()
G = torch.nn.Linear(8, 8)
loader = torch.utils.data.DataLoader(range(100), batch_size=args.batch_size)
opt = torch.optim.Adam(G.parameters(), lr=args.lr)
for ep in range(args.epochs):
    for x in loader:
        loss = G(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py --epoch=30 --lr 0.001")
    assert meta.batch_size_per_device == 64
    assert meta.epochs == 30
    assert meta.learning_rate == pytest.approx(1e-3)


def test_string_defaults_converted_by_type_a_negated_amp_switch_and_a_scalar_parameter(tmp_path: Path) -> None:
    """vision-transformers-cifar10: `add_argument('--n_epochs', type=int, default='200')` is 200 (argparse converts a
    string default with its type), `--patch default='4', type=int` sizes the patches; `use_amp = not args.noamp`
    then `autocast(enabled=use_amp)` is mixed precision; `nn.Parameter(torch.log(torch.tensor(dim_head ** -0.5)))`
    is one parameter. The count equals torch's."""
    write(
        tmp_path,
        {
            "train.py": """
import argparse
import torch
from torch import nn
parser = argparse.ArgumentParser()
parser.add_argument('--n_epochs', type=int, default='200')
parser.add_argument('--patch', default='4', type=int)
parser.add_argument('--noamp', action='store_true')
args = parser.parse_args()
use_amp = not args.noamp

class Net(nn.Module):
    def __init__(self, patch, dim_head=64):
        super().__init__()
        self.temperature = nn.Parameter(torch.log(torch.tensor(dim_head ** -0.5)))
        self.proj = nn.Linear(3 * patch * patch, 16)

net = Net(args.patch)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)
scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
for epoch in range(args.n_epochs):
    with torch.cuda.amp.autocast(enabled=use_amp):
        loss = net(torch.zeros(1, 48)).sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.epochs == 200
    assert meta.precision == "fp16"
    assert meta.params_millions == pytest.approx((1 + 48 * 16 + 16) / 1e6, abs=1e-6)


def test_a_parser_in_a_star_imported_module_and_a_model_sized_by_its_holders_settings(tmp_path: Path) -> None:
    """Self-Attention-GAN: `from parameter import *` then `config = get_parameters()` (a function of that module runs
    the parser: its defaults are the job's settings); `Trainer(loader, config)` keeps them (`self.imsize =
    config.imsize`) and builds `self.G = Generator(self.imsize, self.z_dim)` in a method; the optimizer trains
    `self.G`: its count is the generator's, with the settings the trainer holds."""
    write(
        tmp_path,
        {
            "parameter.py": """
import argparse
def get_parameters():
    parser = argparse.ArgumentParser()
    parser.add_argument('--imsize', type=int, default=32)
    parser.add_argument('--z_dim', type=int, default=128)
    parser.add_argument('--total_step', type=int, default=1000)
    parser.add_argument('--g_lr', type=float, default=0.0001)
    parser.add_argument('--parallel', type=bool, default=False)
    return parser.parse_args()
""",
            "models.py": """
from torch import nn
class Generator(nn.Module):
    def __init__(self, image_size, z_dim):
        super().__init__()
        self.fc = nn.Linear(z_dim, image_size * image_size)
""",
            "trainer.py": """
import torch
from torch import nn
from models import Generator
class Trainer(object):
    def __init__(self, data_loader, config):
        self.data_loader = data_loader
        self.imsize = config.imsize
        self.z_dim = config.z_dim
        self.total_step = config.total_step
        self.g_lr = config.g_lr
        self.parallel = config.parallel
        self.build_model()

    def build_model(self):
        self.G = Generator(self.imsize, self.z_dim).cuda()
        if self.parallel:
            self.G = nn.DataParallel(self.G)
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), self.g_lr)

    def train(self):
        for step in range(0, self.total_step):
            loss = self.G(torch.zeros(1, self.z_dim)).sum()
            self.g_optimizer.zero_grad()
            loss.backward()
            self.g_optimizer.step()
""",
            "main.py": """
from parameter import *
from trainer import Trainer
def main(config):
    trainer = Trainer(None, config)
    trainer.train()
if __name__ == '__main__':
    config = get_parameters()
    main(config)
""",
        },
    )
    meta = extract_metadata(tmp_path, "python main.py --imsize 64")
    assert meta.max_steps == 1000
    assert meta.learning_rate == pytest.approx(1e-4)
    assert meta.distributed == "single_gpu"
    assert meta.params_millions == pytest.approx((128 * 4096 + 4096) / 1e6, abs=0.01)


def test_a_model_built_when_its_module_is_imported_and_held_by_a_lightning_module(tmp_path: Path) -> None:
    """PyTorch_CIFAR10: `all_classifiers = {"tiny12": tiny12(), "tiny24": tiny24()}` is built when `module.py` is
    imported; `CIFAR10Module(args)` holds `all_classifiers[self.hparams.classifier]`: its count is that model's (torch's
    count), and the setting that chose it names it (a variant of the class)."""
    models = """
from torch import nn
class Tiny(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, width, 3), nn.BatchNorm2d(width))
        self.fc = nn.Linear(width * 100, 1000)
def tiny12():
    return Tiny(12)
def tiny24():
    return Tiny(24)
"""
    write(
        tmp_path,
        {
            "models.py": models,
            "module.py": """
import pytorch_lightning as pl
import torch
from models import tiny12, tiny24
all_classifiers = {"tiny12": tiny12(), "tiny24": tiny24()}
class CIFAR10Module(pl.LightningModule):
    def __init__(self, hparams):
        super().__init__()
        self.hparams = hparams
        self.criterion = torch.nn.CrossEntropyLoss()
        self.model = all_classifiers[self.hparams.classifier]
    def configure_optimizers(self):
        return torch.optim.SGD(self.model.parameters(), lr=self.hparams.learning_rate)
""",
            "train.py": """
from argparse import ArgumentParser
from pytorch_lightning import Trainer
from module import CIFAR10Module
def main(args):
    trainer = Trainer(max_epochs=args.max_epochs, gpus=1)
    model = CIFAR10Module(args)
    trainer.fit(model)
if __name__ == "__main__":
    parser = ArgumentParser()
    parser.add_argument("--classifier", type=str, default="tiny12")
    parser.add_argument("--max_epochs", type=int, default=100)
    parser.add_argument("--learning_rate", type=float, default=1e-2)
    args = parser.parse_args()
    main(args)
""",
        },
    )
    ns: dict[str, object] = {}
    exec(compile(models, "models.py", "exec"), ns)  # noqa: S102 - the test's own source, for ground truth
    truth = sum(p.numel() for p in ns["tiny24"]().parameters())  # type: ignore[operator]
    meta = extract_metadata(tmp_path, "python train.py --classifier tiny24")
    assert meta.params_millions == pytest.approx(truth / 1e6, abs=0.05)  # tiny12 holds 1.2 M, tiny24 2.4 M
    assert meta.model_name == "tiny24"


def test_a_readme_that_opens_with_prose_and_imagenet_normalisation_that_names_no_data(tmp_path: Path) -> None:
    """a-PyTorch-Tutorial-to-Super-Resolution: the README opens with "This is a PyTorch Tutorial to
    Super-Resolution." before its first heading (`# Contents`): that sentence says what the job does; the code's
    `lr_img_type='imagenet-norm'` normalises with ImageNet's statistics and trains on no ImageNet data."""
    write(
        tmp_path,
        {
            "README.md": "This is a **[PyTorch](https://pytorch.org) Tutorial to Super-Resolution**.\n\n# Contents\n",
            "models.py": """
from torch import nn
class SRResNet(nn.Module):
    def __init__(self, n_channels=64, scaling_factor=4):
        super().__init__()
        self.conv = nn.Conv2d(3, n_channels, 9, padding=4)
        self.up = nn.Conv2d(n_channels, 3 * scaling_factor ** 2, 3, padding=1)
        self.shuffle = nn.PixelShuffle(scaling_factor)
""",
            "train_srresnet.py": """
import torch
from models import SRResNet
batch_size = 16
lr = 1e-4
def main():
    model = SRResNet(n_channels=64, scaling_factor=4)
    optimizer = torch.optim.Adam(params=model.parameters(), lr=lr)
    train_dataset = SRDataset('./', split='train', lr_img_type='imagenet-norm', hr_img_type='[-1, 1]')
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=batch_size, shuffle=True)
    for epoch in range(10):
        for lr_imgs, hr_imgs in train_loader:
            loss = ((model(lr_imgs) - hr_imgs) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
if __name__ == '__main__':
    main()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train_srresnet.py")
    assert meta.task == "image_super_resolution"
    assert meta.dataset != "ImageNet"


def test_a_none_default_is_false_in_a_test_and_not_of_it_is_true(tmp_path: Path) -> None:
    """llama-recipes (an earlier set, kept right once `not` was read): `quantization: str = None` in the config
    dataclass; `if train_config.quantization: … train_config.quantization = "8bit"` never runs, so `if
    train_config.enable_fsdp and fsdp_config.pure_bf16 and not train_config.quantization: model.to(torch.bfloat16)`
    does: the model trains in bf16."""
    write(
        tmp_path,
        {
            "configs.py": """
from dataclasses import dataclass
@dataclass
class train_config:
    enable_fsdp: bool = False
    quantization: str = None
    lr: float = 1e-4
@dataclass
class fsdp_config:
    pure_bf16: bool = False
""",
            "finetune.py": """
import fire
import torch
from configs import train_config as TRAIN_CONFIG, fsdp_config as FSDP_CONFIG
def main(**kwargs):
    train_config, fsdp_config = TRAIN_CONFIG(), FSDP_CONFIG()
    if train_config.quantization:
        train_config.quantization = "8bit"
    model = torch.nn.Linear(8, 8)
    if train_config.enable_fsdp and fsdp_config.pure_bf16 and not train_config.quantization:
        model.to(torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=train_config.lr)
    for x in range(10):
        loss = model(torch.zeros(8)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
if __name__ == "__main__":
    fire.Fire(main)
""",
        },
    )
    meta = extract_metadata(tmp_path, "python finetune.py --enable_fsdp --fsdp_config.pure_bf16")
    assert meta.precision == "bf16"
