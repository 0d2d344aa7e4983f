"""The README as the last witness of a job's data: when neither the code, its configs nor the command name a dataset,
a README that names exactly one well-known dataset where it speaks of training or data names the job's."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_TRAIN = """
import argparse
import torch
from torch import nn, optim
from torch.utils.data import DataLoader
from loader import WavFolder


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/")
    args = parser.parse_args()
    net = nn.Sequential(nn.Linear(80, 256), nn.ReLU(), nn.Linear(256, 80))
    opt = optim.Adam(net.parameters(), lr=1e-3)
    for x in DataLoader(WavFolder(args.data), batch_size=16):
        loss = (net(x) - x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
"""
_LOADER = """
from torch.utils.data import Dataset


class WavFolder(Dataset):
    def __init__(self, root):
        self.root = root
"""


@pytest.mark.parametrize(
    ("readme", "want"),
    [
        ("# Vocoder\n\nDownload the [LJ Speech Dataset](https://keithito.com/LJ-Speech-Dataset/) first.\n", "LJSpeech"),
        (  # the same dataset in two spellings is one dataset
            "# Vocoder\n\nTrained on LJSpeech.\n\n```\ndata/LJSpeech-1.1/wavs\n```\n",
            "LJSpeech",
        ),
        (
            "# Vocoder\n\nWe trained on LJSpeech and on VCTK; download either.\n",
            None,
        ),  # two: the README does not choose
        ("# Vocoder\n\nIt beats the baseline on LJSpeech by 0.2 MOS.\n", None),  # a benchmark, not training data
        ("# Vocoder\n\nA small model.\n", None),
    ],
)
def test_readme_names_the_only_dataset(tmp_path: Path, readme: str, want: str | None) -> None:
    """A README naming one dataset in a sentence about training or data is the job's dataset when nothing else is;
    two datasets, or one named only as a benchmark, say nothing (this fails on the commit before the fallback, which
    left every case at None)."""
    write(tmp_path, {"train.py": _TRAIN, "loader.py": _LOADER, "README.md": readme})
    assert extract_metadata(tmp_path, "python train.py").dataset == want


def test_code_named_dataset_wins_over_readme(tmp_path: Path) -> None:
    """The README is only the last witness: a dataset the code names wins over a different one the README names."""
    train = _TRAIN.replace('default="data/"', 'default="data/cifar10"')
    write(tmp_path, {"train.py": train, "loader.py": _LOADER, "README.md": "# X\n\nDownload LJSpeech to train.\n"})
    assert extract_metadata(tmp_path, "python train.py").dataset == "CIFAR-10"
