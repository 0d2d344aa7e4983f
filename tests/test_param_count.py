"""Parameter counts read from source must equal what torch builds from the same source.

The model sources below are written by the test; torch executes them only to get the true
count (the advisor never executes code — it walks the AST)."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

import pytest
import torch
from torch import nn

from schedmate.agents.advisor.extract.param_count import ParamCounter, namespace
from schedmate.agents.advisor.extract.workspace import Workspace

BLOCKS = """
import torch
from torch import nn
from torch.nn.utils import weight_norm


class DoubleConv(nn.Module):
    def __init__(self, cin, cout, mid=None):
        super().__init__()
        if not mid:
            mid = cout
        self.net = nn.Sequential(nn.Conv2d(cin, mid, kernel_size=3, padding=1, bias=False), nn.BatchNorm2d(mid),
                                 nn.ReLU(inplace=True), nn.Conv2d(mid, cout, 3, padding=1, bias=False),
                                 nn.BatchNorm2d(cout))


class Up(nn.Module):
    def __init__(self, cin, cout, bilinear=True):
        super().__init__()
        if bilinear:
            self.up = nn.Upsample(scale_factor=2)
            self.conv = DoubleConv(cin, cout, cin // 2)
        else:
            self.up = nn.ConvTranspose2d(cin, cin // 2, kernel_size=2, stride=2)
            self.conv = DoubleConv(cin, cout)


class Flow(nn.Module):
    def __init__(self, channels, layers=3, kernel=5):
        super().__init__()
        self.logs = nn.Parameter(torch.zeros(channels, 1))
        self.convs = nn.ModuleList()
        for i in range(layers):
            dil = 2 ** i
            self.convs.append(weight_norm(nn.Conv1d(channels, 2 * channels, kernel, dilation=dil)))
        self.norms = nn.ModuleList([nn.LayerNorm(channels) for _ in range(layers)])
"""

MODEL = """
from torch import nn
from blocks import DoubleConv, Up, Flow
import blocks


class Net(nn.Module):
    def __init__(self, n_channels, n_classes, bilinear=False, width=64, **kwargs):
        super().__init__()
        factor = 2 if bilinear else 1
        self.inc = DoubleConv(n_channels, width)
        self.up1 = Up(width * 2, width // factor, bilinear)
        self.flows = nn.ModuleList([blocks.Flow(width, layers=kwargs.get("layers", 2)) for _ in range(2)])
        self.emb = nn.Embedding(kwargs.get("vocab", 100), width)
        self.rnn = nn.LSTM(width, width, num_layers=2, bidirectional=True)
        self.head = nn.Linear(width, n_classes)
"""

TRAIN = """
import argparse
from model import Net
p = argparse.ArgumentParser()
args = p.parse_args()
model = Net(n_channels=3, n_classes=args.classes, bilinear=args.bilinear, **cfg.model)
"""


def _true_count(tmp: Path, classes: int, bilinear: bool, extra: dict[str, int]) -> int:
    ns: dict[str, object] = {}
    exec(compile(BLOCKS, "blocks.py", "exec"), ns)  # noqa: S102 - the test's own source, for ground truth
    mod = types.ModuleType("blocks")
    mod.__dict__.update(ns)
    sys.modules["blocks"] = mod
    try:
        ns2: dict[str, object] = {}
        exec(compile(MODEL, "model.py", "exec"), ns2)  # noqa: S102
        net = ns2["Net"](n_channels=3, n_classes=classes, bilinear=bilinear, **extra)  # type: ignore[operator]
    finally:
        del sys.modules["blocks"]
    assert isinstance(net, nn.Module)
    return sum(p.numel() for p in net.parameters())


@pytest.mark.filterwarnings("ignore::FutureWarning")  # torch's weight_norm deprecation, in the ground truth only
@pytest.mark.parametrize(("classes", "bilinear", "extra"), [(2, False, {}), (1, True, {"layers": 3, "vocab": 17})])
def test_count_matches_torch(tmp_path: Path, classes: int, bilinear: bool, extra: dict[str, int]) -> None:
    """Loops, branches, ModuleList/Sequential, weight_norm, nn.Parameter, LSTM, kwargs from a config namespace."""
    (tmp_path / "blocks.py").write_text(BLOCKS)
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text(TRAIN)
    call = next(n for n in ast.walk(ast.parse(TRAIN)) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Net")
    settings = {"classes": classes, "bilinear": bilinear, **{f"model.{k}": v for k, v in extra.items()}}
    ns = namespace(settings)
    counted = ParamCounter(Workspace(tmp_path)).count_call(call, {"args": ns, "cfg": ns}, "train.py")
    assert counted == _true_count(tmp_path, classes, bilinear, extra)


def test_count_class_and_unknown_sizes(tmp_path: Path) -> None:
    """count_class with keyword settings; a layer whose size cannot be known gives None, not a guess."""
    (tmp_path / "m.py").write_text(
        "from torch import nn\nimport os\n\nclass A(nn.Module):\n    def __init__(self, d=8, o=2):\n"
        "        super().__init__()\n        self.l = nn.Linear(d, o)\n\n"
        "class B(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.l = nn.Linear(int(os.environ['D']), 3)\n"
    )
    counter = ParamCounter(Workspace(tmp_path))
    assert counter.count_class("m.py", "A", {"d": 10}) == sum(p.numel() for p in nn.Linear(10, 2).parameters())
    assert counter.count_class("m.py", "B", {}) is None
    assert counter.count_class("m.py", "Missing", {}) is None
    assert torch.__version__  # the ground truth above came from the real library


@pytest.mark.parametrize(
    "body",
    [
        "for i in range(10**9):\n            self.ls.append(nn.Linear(4, 4))",
        "x = [0] * 10**10\n        self.l = nn.Linear(len(x), 2)",
        "x = 10**10**10\n        self.l = nn.Linear(x, 2)",
        "x = list(range(10**12))\n        self.l = nn.Linear(len(x), 2)",
    ],
)
def test_hostile_constructors_are_bounded(tmp_path: Path, body: str) -> None:
    """Loops, huge lists and huge powers in a constructor end quickly with no answer (and no memory blow-up)."""
    (tmp_path / "m.py").write_text(
        "from torch import nn\nclass A(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        f"        self.ls = nn.ModuleList()\n        {body}\n"
    )
    assert ParamCounter(Workspace(tmp_path), max_steps=5_000).count_class("m.py", "A", {}) is None
