"""Positional arguments, torchvision's `train=False` split flag and `with tqdm(range(N)) as bar` step loops (round
27's misses)."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.config_sources import ArgSpec, resolve_argparse
from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write


def test_positional_arguments_are_read_and_one_left_out_fails_nothing() -> None:
    """`parser.add_argument('dataset')` then `main.py kinetics RGB --lr 0.02`: the positionals take the command's
    words; a command without them still gives every option."""
    specs = [
        ArgSpec(flags=("dataset",), dest="dataset", default=None, type="str", action=None, line=3, nargs=None),
        ArgSpec(flags=("modality",), dest="modality", default=None, type="str", action=None, line=4, nargs=None),
        ArgSpec(flags=("--lr",), dest="lr", default=0.1, type="float", action=None, line=5, nargs=None),
    ]
    got = resolve_argparse(specs, ["kinetics", "RGB", "--lr", "0.02"], "main.py")
    assert (got["dataset"].value, got["modality"].value, got["lr"].value) == ("kinetics", "RGB", 0.02)
    assert resolve_argparse(specs, ["--lr", "0.5"], "main.py")["lr"].value == 0.5


def test_the_split_flag_on_the_dataset_and_a_tqdm_context_step_loop(tmp_path: Path) -> None:
    """`DataLoader(datasets.MNIST(root, train=True), batch_size=args.batch_size)` before a `train=False` loader of
    another batch: the training loader's batch; `with tqdm(range(args.iter)) as pbar: for i in pbar:` stepping the
    optimizer each pass is the step budget."""
    root = write(
        tmp_path,
        {
            "train.py": """
import argparse
import torch
from torchvision import datasets
from tqdm import tqdm
p = argparse.ArgumentParser()
p.add_argument("-b", "--batch-size", type=int, default=64)
p.add_argument("--test-batch-size", type=int, default=1024)
p.add_argument("--iter", type=int, default=200000)
args = p.parse_args()
train_loader = torch.utils.data.DataLoader(datasets.MNIST("../mnist", train=True), batch_size=args.batch_size)
test_loader = torch.utils.data.DataLoader(datasets.MNIST("../mnist", train=False), batch_size=args.test_batch_size)
model = torch.nn.Linear(784, 10).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
with tqdm(range(args.iter)) as pbar:
    for i in pbar:
        loss = model(next(iter(train_loader))).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        },
    )
    meta = extract_metadata(root, "python train.py -b=240 --iter 5000")
    assert (meta.batch_size_per_device, meta.max_steps, meta.epochs) == (240, 5000, None)


def test_an_unlimited_lightning_budget_is_no_epoch_count(tmp_path: Path) -> None:
    """`Trainer.from_argparse_args(args)` with Lightning's `max_epochs=-1` (no limit): no epoch count, not -1."""
    root = write(
        tmp_path,
        {
            "train.py": """
from argparse import ArgumentParser
import pytorch_lightning as pl
parser = ArgumentParser()
parser = pl.Trainer.add_argparse_args(parser)
parser.set_defaults(max_epochs=-1, devices=1)
args = parser.parse_args()
trainer = pl.Trainer.from_argparse_args(args)
trainer.fit(model, data)
""",
        },
    )
    meta = extract_metadata(root, "python train.py")
    assert meta.epochs is None
    assert extract_metadata(root, "python train.py --max_epochs 7").epochs == 7
