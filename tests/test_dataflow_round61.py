"""Round 61's misses (and round 60's Informer), as mechanisms: a harness object the entry builds with the settings
(``Exp = Exp_Main; exp = Exp(args)``) whose base class builds ``self.model`` from a registry keyed by a setting and
whose optimizer trains it: that network is counted; a library's value compared (``torch.__version__ >= '1.5.0'``)
is unknown, not an error that stops the count; the ``--`` between a launcher's options and the script's; a
``GradScaler()`` in the arm of a conditional expression the settings rule out."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_RUN = """
import argparse
import torch
from exp.exp_main import Exp_Main

parser = argparse.ArgumentParser()
parser.add_argument('--model', type=str, required=True, default='DLinear')
parser.add_argument('--seq_len', type=int, default=96)
parser.add_argument('--pred_len', type=int, default=96)
parser.add_argument('--enc_in', type=int, default=7)
parser.add_argument('--batch_size', type=int, default=32)
parser.add_argument('--learning_rate', type=float, default=0.0001)
parser.add_argument('--train_epochs', type=int, default=10)
parser.add_argument('--use_amp', action='store_true', default=False)
args = parser.parse_args()

Exp = Exp_Main
for ii in range(1):
    exp = Exp(args)
    exp.train('setting')
"""
_BASIC = """
import os
import torch


class Exp_Basic(object):
    def __init__(self, args):
        self.args = args
        self.device = self._acquire_device()
        self.model = self._build_model().to(self.device)

    def _build_model(self):
        raise NotImplementedError

    def _acquire_device(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        return torch.device('cuda:0')
"""
_MAIN = """
import torch
from torch import optim
from exp.exp_basic import Exp_Basic
from models import DLinear, Wide


class Exp_Main(Exp_Basic):
    def __init__(self, args):
        super(Exp_Main, self).__init__(args)

    def _build_model(self):
        model_dict = {'DLinear': DLinear, 'Wide': Wide}
        model = model_dict[self.args.model].Model(self.args).float()
        return model

    def _select_optimizer(self):
        return optim.Adam(self.model.parameters(), lr=self.args.learning_rate)

    def train(self, setting):
        model_optim = self._select_optimizer()
        for epoch in range(self.args.train_epochs):
            pass
"""
_DLINEAR = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, configs):
        super(Model, self).__init__()
        self.Linear_Seasonal = nn.Linear(configs.seq_len, configs.pred_len)
        self.Linear_Trend = nn.Linear(configs.seq_len, configs.pred_len)
        padding = 1 if torch.__version__ >= '1.5.0' else 2
        self.conv = nn.Conv1d(configs.enc_in, configs.enc_in, 3, padding=padding)
"""
_WIDE = """
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, configs):
        super(Model, self).__init__()
        self.fc = nn.Linear(configs.seq_len, 1000)
"""


def test_network_a_harness_builds_from_a_registry_keyed_by_a_setting(tmp_path: Path) -> None:
    """`exp = Exp(args)` (an alias of the job's `Exp_Main`): its base class sets `self.model = self._build_model()`,
    which picks `model_dict[self.args.model].Model(self.args)`; the optimizer trains `self.model`: that network is
    counted, with the settings the command gives (and `torch.__version__ >= '1.5.0'` left unknown on the way)."""
    root = write(
        tmp_path,
        {
            "run_longExp.py": _RUN,
            "exp/__init__.py": "",
            "exp/exp_basic.py": _BASIC,
            "exp/exp_main.py": _MAIN,
            "models/__init__.py": "",
            "models/DLinear.py": _DLINEAR,
            "models/Wide.py": _WIDE,
        },
    )
    meta = extract_metadata(root, "python -u run_longExp.py --model DLinear --seq_len 336 --pred_len 96 --enc_in 7")
    linear, conv = 2 * (336 * 96 + 96), 7 * 7 * 3 + 7
    assert meta.params_millions is not None
    assert abs(meta.params_millions - (linear + conv) / 1e6) < 1e-4
    wide = extract_metadata(root, "python -u run_longExp.py --model Wide --seq_len 96")
    assert wide.params_millions is not None
    assert abs(wide.params_millions - (96 * 1000 + 1000) / 1e6) < 1e-4


_BASE_TRAIN = """
import argparse
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--depth", type=int, default=20)
parser.add_argument("--device-batch-size", type=int, default=32)
parser.add_argument("--fp16", type=int, default=0)
args = parser.parse_args()
model = DDP(nn.Linear(args.depth, args.depth))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler() if args.fp16 == 1 else None
loader = torch.utils.data.DataLoader(dataset, batch_size=args.device_batch_size)
"""


def test_launcher_separator_and_a_grad_scaler_the_settings_rule_out(tmp_path: Path) -> None:
    """`torchrun … -m scripts.base_train -- --device-batch-size=16`: the `--` is the launcher's, the script reads its
    options after it; `GradScaler() if args.fp16 == 1 else None` with fp16 off builds none (fp32), with
    `--fp16 1` it does (fp16)."""
    root = write(tmp_path, {"scripts/__init__.py": "", "scripts/base_train.py": _BASE_TRAIN})
    cmd = "torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --depth=24 --device-batch-size=16"
    meta = extract_metadata(root, cmd)
    assert (meta.batch_size_per_device, meta.global_batch_size) == (16, 128)
    assert meta.precision == "fp32"
    assert extract_metadata(root, f"{cmd} --fp16 1").precision == "fp16"


_ATTN = """
import torch.nn as nn


class _MultiheadAttention(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)


class Model(nn.Module):
    def __init__(self, configs):
        super(Model, self).__init__()
        self.attn = _MultiheadAttention(configs.seq_len)
        self.head = nn.Linear(configs.seq_len, configs.pred_len)
"""


def test_attention_written_from_linear_layers_is_no_mlp(tmp_path: Path) -> None:
    """A harness-built network whose linear layers sit in a class named for attention (PatchTST's
    `_MultiheadAttention`) is a transformer of some kind, not an MLP: no family is claimed from its layers."""
    root = write(
        tmp_path,
        {
            "run_longExp.py": _RUN,
            "exp/__init__.py": "",
            "exp/exp_basic.py": _BASIC,
            "exp/exp_main.py": _MAIN.replace("DLinear, Wide", "DLinear, Wide, PatchTST").replace(
                "'Wide': Wide}", "'Wide': Wide, 'PatchTST': PatchTST}"
            ),
            "models/__init__.py": "",
            "models/DLinear.py": _DLINEAR,
            "models/Wide.py": _WIDE,
            "models/PatchTST.py": _ATTN,
        },
    )
    meta = extract_metadata(root, "python -u run_longExp.py --model PatchTST --seq_len 16 --pred_len 4")
    assert meta.params_millions is not None
    assert abs(meta.params_millions - (3 * (16 * 16 + 16) + 16 * 4 + 4) / 1e6) < 1e-6
    assert meta.model_type != "mlp"
