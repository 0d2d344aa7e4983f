"""Round 54's misses, as mechanisms: a shell script's ``case`` arm chosen by its argument (with a quoted,
several-word variable handed on); Hydra's ``group@_global_`` defaults; an RL job's environment named by a
``task_name`` its own modules use; a setting that picks one of the datasets a dict or a membership test names; an
epoch count multiplied by the data's length is still an epoch count."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_RUN = """
import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--task_name", default="MNLI")
parser.add_argument("--init_model", default=None)
parser.add_argument("--num_train_epochs", type=float, default=1.0)
parser.add_argument("--learning_rate", type=float, default=1e-4)
parser.add_argument("--train_batch_size", type=int, default=32)
args = parser.parse_args()
train_data = list(range(100))
num_train_steps = int(len(train_data) * args.num_train_epochs / args.train_batch_size)
model = torch.nn.Linear(4, 3)
optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
"""
_SCRIPT = """#!/bin/bash
init=$1
tag=$init
case ${init,,} in
	deberta-v3-small)
	parameters=" --num_train_epochs 3 \\
	--learning_rate 4.5e-5 \\
	--train_batch_size 64 "
		;;
	deberta-v3-large)
	parameters=" --num_train_epochs 2 \\
	--learning_rate 7e-6 \\
	--train_batch_size 16 "
		;;
	*)
		echo "usage $0 <model>"
		exit 0
		;;
esac

python run.py --task_name MNLI --init_model $init $parameters
"""


def test_a_case_arm_chosen_by_the_scripts_argument(tmp_path: Path) -> None:
    """``bash mnli.sh DeBERTa-v3-Large``: ``case ${init,,} in`` picks the arm whose pattern the lower-cased argument
    matches, and its quoted ``parameters="…"`` reaches the python command as words (the commit before read every
    arm's lines and no multi-word assignment: the defaults won)."""
    write(tmp_path, {"run.py": _RUN, "mnli.sh": _SCRIPT})
    md = extract_metadata(tmp_path, "bash mnli.sh DeBERTa-v3-Large")
    assert (md.epochs, md.learning_rate, md.global_batch_size) == (2, 7e-06, 16)
    small = extract_metadata(tmp_path, "bash mnli.sh deberta-v3-small")
    assert (small.epochs, small.learning_rate, small.global_batch_size) == (3, 4.5e-05, 64)


_DRQ_TRAIN = """
import hydra
import torch
import dmc


class Workspace:
    def __init__(self, cfg):
        self.cfg = cfg
        self.env = dmc.make(cfg.task_name, cfg.frame_stack)
        self.net = torch.nn.Linear(4, 4)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.lr)

    def train(self):
        for x in range(10):
            batch = torch.zeros(self.cfg.batch_size, 4)
            self.opt.zero_grad()
            self.net(batch).sum().backward()
            self.opt.step()


@hydra.main(config_path='cfgs', config_name='config')
def main(cfg):
    Workspace(cfg).train()


if __name__ == '__main__':
    main()
"""
_DMC = "from dm_control import suite\n\n\ndef make(name, frame_stack):\n    return suite.load(*name.split('_', 1))\n"
_CONFIG = "defaults:\n  - _self_\n  - task@_global_: quadruped_walk\n\nframe_stack: 3\nbatch_size: 256\nlr: 1e-4\n"
_QUADRUPED = "defaults:\n  - medium\n  - _self_\n\ntask_name: quadruped_walk\n"
_WALKER = "defaults:\n  - easy\n  - _self_\n\ntask_name: walker_walk\nbatch_size: 512\n"


def test_hydra_global_package_defaults_and_an_rl_task(tmp_path: Path) -> None:
    """``- task@_global_: quadruped_walk``: the task group's options merge at the root, so ``task=walker_walk``
    sets ``batch_size: 512`` for the whole job, and its ``task_name`` (read by a module that loads dm_control) names
    the environment (the commit before merged the group under ``task.`` and named none)."""
    write(tmp_path, {"train.py": _DRQ_TRAIN, "dmc.py": _DMC, "cfgs/config.yaml": _CONFIG,
                     "cfgs/task/quadruped_walk.yaml": _QUADRUPED, "cfgs/task/walker_walk.yaml": _WALKER,
                     "cfgs/task/medium.yaml": "num_train_frames: 3100000\n",
                     "cfgs/task/easy.yaml": "num_train_frames: 1100000\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py task=walker_walk")
    assert (md.global_batch_size, md.dataset, md.learning_rate) == (512, "walker_walk", 0.0001)
    md = extract_metadata(tmp_path, "python train.py")
    assert (md.global_batch_size, md.dataset) == (256, "quadruped_walk")


_GLOW = """
import argparse
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--problem", type=str, default='cifar10')
hps = parser.parse_args()
n_train = {'mnist': 50000, 'cifar10': 50000, 'imagenet': 1281152}[hps.problem]
if hps.problem in ['mnist', 'cifar10']:
    data = load(hps.problem)
"""


def test_a_setting_picks_one_of_the_datasets_a_table_names(tmp_path: Path) -> None:
    """``--problem`` defaulting to ``cifar10`` keys ``{'mnist': …, 'cifar10': …}[hps.problem]`` and ``in ['mnist',
    'cifar10']``: the data is CIFAR-10, not the first dataset the code mentions (the commit before said MNIST)."""
    write(tmp_path, {"train.py": _GLOW})
    assert extract_metadata(tmp_path, "python train.py").dataset == "CIFAR-10"
    assert extract_metadata(tmp_path, "python train.py --problem mnist").dataset == "MNIST"


_TRLX_EXAMPLE = """
import torch
import trl_lib
from trl_lib.default_configs import TRLConfig, default_ppo_config


def main(hparams={}):
    config = TRLConfig.update(default_ppo_config().to_dict(), hparams)
    trl_lib.train(config=config)


if __name__ == "__main__":
    main()
"""
_TRLX_CONFIGS = """
from dataclasses import dataclass


def default_ppo_config():
    return TRLConfig(
        train=TrainConfig(seq_length=1024, epochs=100, total_steps=10000, batch_size=32),
        model=ModelConfig(model_path="lvwerra/gpt2-imdb", num_layers_unfrozen=2),
        optimizer=OptimizerConfig(name="adamw", kwargs=dict(lr=3e-5, eps=1.0e-8)),
    )
"""


def test_a_config_factory_of_nested_settings_classes(tmp_path: Path) -> None:
    """``default_ppo_config()`` returns ``TRLConfig(train=TrainConfig(batch_size=32, …), optimizer=OptimizerConfig(
    kwargs=dict(lr=3e-5)))``: the nested keywords are the settings (``train.batch_size``, ``optimizer.kwargs.lr``;
    the commit before counted only the outer call's literal keywords, none, and read nothing)."""
    write(tmp_path, {"examples/ppo.py": _TRLX_EXAMPLE, "trl_lib/__init__.py": "",
                     "trl_lib/default_configs.py": _TRLX_CONFIGS})  # fmt: skip
    md = extract_metadata(tmp_path, "python examples/ppo.py")
    assert (md.global_batch_size, md.max_steps, md.learning_rate) == (32, 10000, 3e-05)
