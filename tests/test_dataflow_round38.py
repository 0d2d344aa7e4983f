"""Settings in a submodule imported under another name, a step budget over a loader's own epoch length, a setting
chosen by membership in a list, a class of linear heads around a handed CNN, epoch loops that carry on from one
another, and a README title that says "in PyTorch" (round 38's misses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write


def test_settings_of_a_submodule_imported_as_a_name_and_a_budget_over_the_loaders_epoch(tmp_path: Path) -> None:
    """yolo2-pytorch: `import cfgs.config as cfg` (whose `from .exps.exp1 import *` holds `max_epoch = 160` and
    `init_learning_rate = 1e-3`); `for step in range(start_epoch * imdb.batch_per_epoch, cfg.max_epoch *
    imdb.batch_per_epoch)`: the loader's own count of one epoch's batches times 160 epochs."""
    write(
        tmp_path,
        {
            "cfgs/__init__.py": "",
            "cfgs/exps/__init__.py": "",
            "cfgs/exps/exp1.py": "max_epoch = 160\ninit_learning_rate = 1e-3\n",
            "cfgs/config.py": "from .exps.exp1 import *  # noqa\n",
            "train.py": """
import torch
import cfgs.config as cfg
net = torch.nn.Conv2d(3, 8, 3)
lr = cfg.init_learning_rate
optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
class Data:
    batch_per_epoch = 100
imdb = Data()
start_epoch = 0
for step in range(start_epoch * imdb.batch_per_epoch, cfg.max_epoch * imdb.batch_per_epoch):
    loss = net(torch.zeros(1, 3, 8, 8)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.learning_rate == pytest.approx(1e-3)
    assert meta.epochs == 160


def test_a_setting_chosen_by_membership_and_linear_heads_around_a_handed_cnn(tmp_path: Path) -> None:
    """CloserLookFewShot: `if params.dataset in ['omniglot', 'cross_char']: params.stop_epoch = 5 … elif
    params.dataset in ['miniImagenet', 'cross']: params.stop_epoch = 400`: `--dataset miniImagenet` runs 400 epochs;
    `BaselineTrain(backbone.Conv4, 200)` holds only a linear classifier in its own source, but the network it is
    handed is convolutional: a CNN, not an MLP."""
    write(
        tmp_path,
        {
            "backbone.py": """
import torch.nn as nn
class Conv4(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Conv2d(3, 64, 3), nn.Conv2d(64, 64, 3))
        self.final_feat_dim = 1600
""",
            "train.py": """
import argparse
import torch
import torch.nn as nn
import backbone
class BaselineTrain(nn.Module):
    def __init__(self, model_func, num_class):
        super().__init__()
        self.feature = model_func()
        self.classifier = nn.Linear(self.feature.final_feat_dim, num_class)
def train(model, start_epoch, stop_epoch):
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(start_epoch, stop_epoch):
        model.train()
parser = argparse.ArgumentParser()
parser.add_argument('--dataset', default='CUB')
parser.add_argument('--stop_epoch', default=-1, type=int)
params = parser.parse_args()
if params.stop_epoch == -1:
    if params.dataset in ['omniglot', 'cross_char']:
        params.stop_epoch = 5
    elif params.dataset in ['miniImagenet', 'cross']:
        params.stop_epoch = 400
    else:
        params.stop_epoch = 600
model = BaselineTrain(backbone.Conv4, 200)
train(model, 0, params.stop_epoch)
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py --dataset miniImagenet")
    assert meta.epochs == 400
    assert meta.model_type == "cnn"
    assert meta.learning_rate == pytest.approx(1e-3)


def test_epoch_loops_that_carry_on_from_one_another(tmp_path: Path) -> None:
    """pytorch_Realtime_Multi-Person_Pose_Estimation: `for epoch in range(5):` with the base frozen, then `for epoch
    in range(5, args.epochs):`: the run is `--epochs` long, not 5 epochs."""
    write(
        tmp_path,
        {
            "train.py": """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument('--epochs', default=75, type=int)
args = parser.parse_args()
model = torch.nn.Conv2d(3, 8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
def train(epoch):
    pass
for epoch in range(5):
    train(epoch)
for epoch in range(5, args.epochs):
    train(epoch)
""",
        },
    )
    assert extract_metadata(tmp_path, "python train.py").epochs == 75


def test_a_readme_title_in_pytorch_names_the_family_without_its_preposition(tmp_path: Path) -> None:
    """`# YOLOv2 in PyTorch` over a `Darknet19` class: the family is YOLOv2, not 'YOLOv2 in'."""
    write(
        tmp_path,
        {
            "README.md": "# YOLOv2 in PyTorch\n",
            "train.py": """
import torch
import torch.nn as nn
class Darknet19(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
net = Darknet19()
optimizer = torch.optim.SGD(net.parameters(), lr=1e-3)
""",
        },
    )
    name = extract_metadata(tmp_path, "python train.py").model_name
    assert name is not None and " in" not in name and "Darknet19" in name


def test_a_helpers_scan_loader_does_not_stand_in_for_the_scripts_own_training_loader(tmp_path: Path) -> None:
    """big_transfer: `indices = fs.find_fewshot_indices(train_set, args.examples_per_class)` scans the data with its
    own `DataLoader(dataset, batch_size=1024)`; the script's training loader (`batch_size=micro_batch_size`, from a
    parser the analysis cannot read) is the job's: its batch stays unknown rather than 1024."""
    write(
        tmp_path,
        {
            "fewshot.py": """
import torch
def find_fewshot_indices(dataset, n_shots):
    loader = torch.utils.data.DataLoader(dataset, batch_size=1024, shuffle=True, num_workers=0)
    return [i for i, _ in enumerate(loader)][:n_shots]
""",
            "train.py": """
import torch
from fewshot import find_fewshot_indices
from common import make_parser
def main(args):
    train_set = None
    if args.examples_per_class is not None:
        indices = find_fewshot_indices(train_set, args.examples_per_class)
    micro_batch_size = args.batch // args.batch_split
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=micro_batch_size, shuffle=True)
if __name__ == "__main__":
    main(make_parser().parse_args())
""",
        },
    )
    assert extract_metadata(tmp_path, "python train.py").batch_size_per_device != 1024
