"""An entry script without `.py`, a GAN's two optimizers, an optimizer at its default rate, an epoch loop that calls
the step loop, a multi-document YAML, a README that names the task under its title, and a sampler that sets the
step count (round 34's misses)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from schedmate.agents.advisor.extract.config_sources import load_yaml
from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_CYCLEGAN = {
    "models.py": """
import torch.nn as nn
class Generator(nn.Module):
    def __init__(self, input_nc, output_nc):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(input_nc, 64, 7), nn.Conv2d(64, output_nc, 7))
class Discriminator(nn.Module):
    def __init__(self, input_nc):
        super().__init__()
        # FCN classification layer
        self.model = nn.Sequential(nn.Conv2d(input_nc, 8, 4), nn.Conv2d(8, 1, 4))
""",
}
_TRAIN = """#!/usr/bin/python3
import argparse, itertools
import torch
from torch.utils.data import DataLoader
from models import Generator, Discriminator
parser = argparse.ArgumentParser()
parser.add_argument('--n_epochs', type=int, default=200)
parser.add_argument('--batchSize', type=int, default=1)
parser.add_argument('--lr', type=float, default=0.0002)
opt = parser.parse_args()
netG_A2B = Generator(3, 3)
netG_B2A = Generator(3, 3)
netD_A = Discriminator(3)
netD_B = Discriminator(3)
optimizer_D_A = torch.optim.Adam(netD_A.parameters(), lr=opt.lr, betas=(0.5, 0.999))
optimizer_D_B = torch.optim.Adam(netD_B.parameters(), lr=opt.lr, betas=(0.5, 0.999))
optimizer_G = torch.optim.Adam(itertools.chain(netG_A2B.parameters(), netG_B2A.parameters()), lr=opt.lr)
dataloader = DataLoader(None, batch_size=opt.batchSize, shuffle=True)
for epoch in range(0, opt.n_epochs):
    for i, batch in enumerate(dataloader):
        optimizer_G.zero_grad()
        loss_G = netG_A2B(batch).mean()
        loss_G.backward()
        optimizer_G.step()
"""


def test_an_executable_entry_without_py_runs_under_its_shebang(tmp_path: Path) -> None:
    """aitorzip's CycleGAN is started as `./train --dataroot ...`: the file has no `.py` but a Python shebang, so it
    is read as the Python entry it is (its flags, loader, epochs and rate); a shell shebang is not."""
    write(tmp_path, {**_CYCLEGAN, "train": _TRAIN})
    meta = extract_metadata(tmp_path, "./train --dataroot datasets/horse2zebra/ --cuda")
    assert (meta.batch_size_per_device, meta.epochs, meta.learning_rate) == (1, 200, pytest.approx(0.0002))
    write(tmp_path / "sh", {**_CYCLEGAN, "train": "#!/bin/bash\necho hi\n"})
    assert extract_metadata(tmp_path / "sh", "./train").epochs is None


def test_a_gans_generators_are_the_model_not_its_discriminator(tmp_path: Path) -> None:
    """Three optimizers: two train discriminators, one both generators (`itertools.chain`): the model is the
    generators (counted together), and a discriminator's 'classification layer' makes no classification task."""
    write(tmp_path, {**_CYCLEGAN, "train.py": _TRAIN})
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.model_name is not None and "Generator" in meta.model_name
    assert meta.task != "image_classification"


def test_an_optimizer_built_without_a_rate_runs_at_its_default(tmp_path: Path) -> None:
    """crnn.pytorch: `--adadelta` builds `optim.Adadelta(crnn.parameters())` with no rate, so Adadelta's default 1.0
    is in effect; `--lr 0.01` ("not used by adadelta") only reaches the other arms."""
    write(
        tmp_path,
        {
            "train.py": """
import argparse
import torch
import torch.optim as optim
parser = argparse.ArgumentParser()
parser.add_argument('--lr', type=float, default=0.01, help='learning rate, not used by adadealta')
parser.add_argument('--adam', action='store_true')
parser.add_argument('--adadelta', action='store_true')
opt = parser.parse_args()
crnn = torch.nn.LSTM(4, 4)
if opt.adam:
    optimizer = optim.Adam(crnn.parameters(), lr=opt.lr)
elif opt.adadelta:
    optimizer = optim.Adadelta(crnn.parameters())
else:
    optimizer = optim.RMSprop(crnn.parameters(), lr=opt.lr)
"""
        },
    )
    assert extract_metadata(tmp_path, "python train.py --adadelta").learning_rate == pytest.approx(1.0)
    assert extract_metadata(tmp_path, "python train.py --adam").learning_rate == pytest.approx(0.01)


def test_a_step_loop_in_the_function_the_epoch_loop_calls_counts_one_epoch(tmp_path: Path) -> None:
    """MixMatch: `for epoch in range(start_epoch, args.epochs): train(...)` and `def train(...): for batch_idx in
    range(args.train_iteration): ... optimizer.step()`: the run stops after the epochs; the inner loop is one
    epoch's steps, no step budget."""
    write(
        tmp_path,
        {
            "train.py": """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument('--epochs', default=1024, type=int)
parser.add_argument('--train-iteration', type=int, default=1024)
args = parser.parse_args()
model = torch.nn.Linear(4, 4)
def main():
    optimizer = torch.optim.Adam(model.parameters(), lr=0.002)
    start_epoch = 0
    for epoch in range(start_epoch, args.epochs):
        train(model, optimizer)
def train(model, optimizer):
    for batch_idx in range(args.train_iteration):
        loss = model(torch.zeros(4)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
if __name__ == '__main__':
    main()
"""
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert (meta.epochs, meta.max_steps) == (1024, None)


def test_a_yaml_of_several_documents_merges_them_in_order() -> None:
    """MelGAN's config is several `---` documents that its HParam reads with `yaml.load_all`, keys in order."""
    text = "data:\n  train: ''\n---\ntrain:\n  batch_size: 16\n  adam:\n    lr: 0.0001\n---\ntrain:\n  batch_size: 8\n"
    assert load_yaml(text) == {"data": {"train": ""}, "train": {"batch_size": 8}}
    with pytest.raises(yaml.YAMLError):  # a stream of scalars is no settings mapping
        load_yaml("1\n---\n2\n")


def test_the_readme_paragraph_under_its_title_names_the_task(tmp_path: Path) -> None:
    """pytorch-vdsr's README: '# PyTorch VDSR' then 'Implementation of CVPR2016 Paper: "Accurate Image
    Super-Resolution Using Very Deep Convolutional Networks"': the task is super-resolution."""
    write(tmp_path, {
        "README.md": '# PyTorch VDSR\nImplementation of CVPR2016 Paper: "Accurate Image Super-Resolution Using \n'
                     'Very Deep Convolutional Networks"\n\n## Usage\n',
        "main.py": """
import torch.nn as nn
import torch.optim as optim
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.input = nn.Conv2d(1, 64, 3)
        self.output = nn.Conv2d(64, 1, 3)
model = Net()
optimizer = optim.SGD(model.parameters(), lr=0.1)
""",
    })  # fmt: skip
    assert extract_metadata(tmp_path, "python main.py").task == "image_super_resolution"


def test_an_iteration_based_sampler_sets_the_step_count_scaled_by_the_world(tmp_path: Path) -> None:
    """lufficc/SSD: `max_iter = cfg.SOLVER.MAX_ITER // args.num_gpus` (WORLD_SIZE from the launcher) handed to the
    loader's `IterationBasedBatchSampler(num_iterations=max_iter)`: 120000 // 4 steps, not the setting itself."""
    write(tmp_path, {
        "data.py": """
import torch
class IterationBasedBatchSampler:
    def __init__(self, batch_sampler, num_iterations, start_iter=0):
        self.num_iterations = num_iterations
def make_data_loader(cfg, max_iter=None):
    batch_sampler = torch.utils.data.sampler.BatchSampler(None, batch_size=32, drop_last=False)
    batch_sampler = IterationBasedBatchSampler(batch_sampler, num_iterations=max_iter)
    return torch.utils.data.DataLoader(None, batch_sampler=batch_sampler)
""",
        "train.py": """
import os
import torch
from data import make_data_loader
MAX_ITER = 120000
def main():
    num_gpus = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else 1
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3 * num_gpus)
    max_iter = MAX_ITER // num_gpus
    loader = make_data_loader(None, max_iter=max_iter)
if __name__ == '__main__':
    main()
""",
    })  # fmt: skip
    meta = extract_metadata(tmp_path, "torchrun --nproc_per_node=4 train.py")
    assert meta.max_steps == 30000
    assert "WORLD_SIZE" not in os.environ
