"""A step setting read in thousands, an optimizer over a model's own `learnable_parameters()`, an argparse default
given by a module constant, and a nested setting of a YAML namespace beside a top-level one of the same leaf name
(round 37's misses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write


def test_a_step_setting_the_code_only_reads_scaled_is_not_the_step_count(tmp_path: Path) -> None:
    """pytorch_stacked_hourglass: `-m/--max_iters` is 'max number of iterations (thousands)', read only as
    `opt.max_iters * 1000`: 250 is not the step count. A setting read as it is stays the count."""
    script = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument('-m', '--max_iters', type=int, default=250)
opt = parser.parse_args()
def train(step_fn, data):
    epoch = 0
    while True:
        batch_id = 1000 * epoch
        if batch_id > opt.max_iters * 1000:
            return
        epoch += 1
"""
    write(tmp_path, {"train.py": script})
    assert extract_metadata(tmp_path, "python train.py").max_steps is None
    write(tmp_path / "plain", {"train.py": script.replace("opt.max_iters * 1000", "opt.max_iters")})
    assert extract_metadata(tmp_path / "plain", "python train.py").max_steps == 250


def test_an_optimizer_over_a_models_learnable_parameters(tmp_path: Path) -> None:
    """pytorch_RVAE: `Adam(rvae.learnable_parameters(), lr)` trains `rvae = RVAE(parameters)`: a model's own method
    that hands out its parameters names the model as `.parameters()` does."""
    write(
        tmp_path,
        {
            "train.py": """
import torch.nn as nn
from torch.optim import Adam
class RVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.LSTM(8, 16)
    def learnable_parameters(self):
        return [p for p in self.parameters() if p.requires_grad]
rvae = RVAE()
optimizer = Adam(rvae.learnable_parameters(), 5e-5)
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.model_name == "RVAE"
    assert meta.learning_rate == pytest.approx(5e-5)


def test_an_argparse_default_given_by_a_module_constant(tmp_path: Path) -> None:
    """prototypical-networks: `default_dataset = 'omniglot'` then `add_argument('--data.dataset',
    default=default_dataset)`: the option's default is that constant, not unknown."""
    write(
        tmp_path,
        {
            "run_train.py": """
import argparse
parser = argparse.ArgumentParser()
default_dataset = 'omniglot'
parser.add_argument('--data.dataset', type=str, default=default_dataset)
default_epochs = 10000
parser.add_argument('--train.epochs', type=int, default=default_epochs)
args = vars(parser.parse_args())
""",
        },
    )
    meta = extract_metadata(tmp_path, "python run_train.py")
    assert meta.dataset is not None and meta.dataset.lower() == "omniglot"
    assert meta.epochs == 10000


def test_a_nested_setting_is_read_by_its_whole_path(tmp_path: Path) -> None:
    """PatrickHua/SimSiam: the YAML has a top-level `name` (the experiment's) and `train.optimizer.name: sgd`;
    `get_optimizer(args.train.optimizer.name, model, lr=args.train.base_lr*args.train.batch_size/256)` picks its SGD
    arm by the nested one, so the rate there, 0.03 x 512 / 256, is the job's."""
    write(
        tmp_path,
        {
            "configs/simsiam.yaml": """name: simsiam-experiment
train:
  optimizer:
    name: sgd
  base_lr: 0.03
  batch_size: 512
""",
            "optimizers.py": """
import torch
def get_optimizer(name, model, lr):
    if name == 'lars':
        optimizer = torch.optim.Adam(model.parameters(), lr=lr * 10)
    elif name == 'sgd':
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    return optimizer
""",
            "main.py": """
import argparse
import yaml
import torch
from optimizers import get_optimizer
def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('-c', '--config-file', required=True, type=str)
    return parser.parse_args()
def main(args):
    model = torch.nn.Linear(4, 4)
    optimizer = get_optimizer(args.train.optimizer.name, model, lr=args.train.base_lr*args.train.batch_size/256)
if __name__ == "__main__":
    args = get_args()
    main(args=args)
""",
        },
    )
    meta = extract_metadata(tmp_path, "python main.py -c configs/simsiam.yaml")
    assert meta.learning_rate == pytest.approx(0.06)
