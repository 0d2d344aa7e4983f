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

from schedmate.agents.advisor.extract.metadata import extract_metadata
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


RESNETISH = """
import torch
from torch import nn


def init_weights(modules, scale=1.0):
    for m in modules:
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight)
            m.weight.data *= scale


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, planes, 1, bias=False)
        self.conv3 = nn.Conv2d(planes, self.expansion * planes, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(self.expansion * planes)
        init_weights([self.conv1, self.conv3], 0.1)


class Net(nn.Module):
    def __init__(self, block, blocks, heads=4, width=64):
        super().__init__()
        self.cin = width
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.layer1 = self._make_layer(block, width, blocks[0])
        self.layer2 = self._make_layer(block, 2 * width, blocks[1])
        self.attn = nn.MultiheadAttention(self.cin, heads)
        self.enc = nn.TransformerEncoderLayer(self.cin, heads, dim_feedforward=128)
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)

    def _make_layer(self, block, planes, n):
        layers = []
        for _ in range(n):
            layers.append(block(self.cin, planes))
            self.cin = planes * block.expansion
        return nn.Sequential(*layers)


def net50(**kwargs):
    return Net(Bottleneck, [2, 3], **kwargs)


MODELS = {"net50": net50}
"""


def test_methods_class_constants_init_loops_and_attention_layers(tmp_path: Path) -> None:
    """`self._make_layer(...)` runs the class's method, `block.expansion` / `self.expansion` read the class constant,
    `for m in self.modules()` and weight-init helpers build nothing, MultiheadAttention and TransformerEncoderLayer
    count as torch builds them, a registry `MODELS["net50"]()` calls its constructor: all equal torch's count."""
    (tmp_path / "resnetish.py").write_text(RESNETISH)
    ns: dict[str, object] = {}
    exec(compile(RESNETISH, "resnetish.py", "exec"), ns)  # noqa: S102 - the test's own source, for ground truth
    truth = sum(p.numel() for p in ns["net50"](heads=4).parameters())  # type: ignore[operator]
    call = ast.parse('MODELS["net50"](heads=4)').body[0].value  # type: ignore[attr-defined]
    assert ParamCounter(Workspace(tmp_path)).count_call(call, {}, "resnetish.py") == truth


TIMM_STYLE = """
import torch
from torch import nn
from timm.models.vision_transformer import PatchEmbed, Attention, Mlp


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = Attention(dim, num_heads=heads, qkv_bias=True)
        self.mlp = Mlp(in_features=dim, hidden_features=4 * dim)


class Tiny(nn.Module):
    def __init__(self, img=32, patch=4, dim=96, depth=3):
        super().__init__()
        self.embed = PatchEmbed(img, patch, 3, dim, bias=True)
        self.pos = nn.Parameter(torch.zeros(1, self.embed.num_patches, dim))
        self.blocks = nn.ModuleList([Block(dim, 3) for _ in range(depth)])
"""


def test_timm_building_blocks_count_as_timm_builds_them(tmp_path: Path) -> None:
    """timm's PatchEmbed (and its num_patches), Attention and Mlp, imported rather than defined by the job: counted
    as timm defines them (a patch Conv2d; qkv and proj Linear; fc1 and fc2 Linear), checked against those layers
    built in torch (timm itself is not a dependency)."""
    (tmp_path / "tiny.py").write_text(TIMM_STYLE)
    dim, depth, patch = 96, 3, 4
    block = [nn.LayerNorm(dim), nn.Linear(dim, 3 * dim), nn.Linear(dim, dim), nn.Linear(dim, 4 * dim),
             nn.Linear(4 * dim, dim)]  # fmt: skip
    parts = [nn.Conv2d(3, dim, patch, patch), nn.Parameter(torch.zeros(1, (32 // patch) ** 2, dim))]
    truth = sum(p.numel() for m in block for p in m.parameters()) * depth
    truth += sum(p.numel() for p in parts[0].parameters()) + parts[1].numel()  # type: ignore[union-attr]
    assert ParamCounter(Workspace(tmp_path)).count_class("tiny.py", "Tiny", {}) == truth


def test_recurrent_cells_count_like_torch(tmp_path: Path) -> None:
    """LSTMCell / GRUCell / RNNCell (Tacotron's attention and decoder RNNs) are counted as torch builds them."""
    (tmp_path / "m.py").write_text(
        "import torch.nn as nn\n"
        "class Dec(nn.Module):\n"
        "    def __init__(self, n_mel, dim):\n"
        "        super().__init__()\n"
        "        self.att = nn.LSTMCell(n_mel + 512, dim)\n"
        "        self.dec = nn.GRUCell(dim, dim, bias=False)\n"
        "        self.rnn = nn.RNNCell(dim, 64)\n"
    )
    counted = ParamCounter(Workspace(tmp_path)).count_class("m.py", "Dec", {"n_mel": 80, "dim": 1024})
    want = nn.LSTMCell(592, 1024), nn.GRUCell(1024, 1024, bias=False), nn.RNNCell(1024, 64)
    assert counted == sum(p.numel() for m in want for p in m.parameters())


SCRIPT = """
import argparse
import copy
import math
import torch
from torch import nn
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--latent_dim", type=int, default=100)
parser.add_argument("--dataset", default="cifar10")
parser.add_argument("--depth", type=int, default=3)
opt = parser.parse_args()


def world_size():
    if not dist.is_available() or not dist.is_initialized():
        return 1
    return dist.get_world_size()


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)


def stack(*mods):
    out = []
    for m in mods:
        if isinstance(m, nn.Sequential):
            out.extend(m.children())
        elif isinstance(m, nn.Module):
            out.append(m)
    return nn.Sequential(*out)


class Net(nn.Module):
    def __init__(self, classes, width):
        super().__init__()
        block = Block(width)
        self.blocks = nn.ModuleList([copy.deepcopy(block) for _ in range(opt.depth)])
        self.stem = stack(nn.Linear(opt.latent_dim, width), nn.Sequential(nn.ReLU(), nn.Linear(width, width)))
        self.heads = nn.ModuleList([nn.Linear(width, classes) for _, _ in enumerate(range(2), 1)])
        self.scale = nn.Parameter(torch.zeros(int(math.log(width, 2))))
        self.head2 = nn.Linear(self.heads[0].out_features, 3)
        self.world = world_size()
        self.model_ema = Block(width)


def main():
    if opt.dataset == "imagenet":
        classes = 1000
    elif opt.dataset == "cifar10":
        classes = 10
    else:
        classes = 100
    width = 64
    for step in range(3):
        last = step
    width = width * 2
    model = Net(classes, width)
    optimizer = torch.optim.Adam(model.parameters())


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize(("dataset", "classes"), [("cifar10", 10), ("imagenet", 1000), ("svhn", 100)])
def test_values_reaching_the_model_call_and_module_settings(tmp_path: Path, dataset: str, classes: int) -> None:
    """The values the model call's names hold are followed from the statements before it (a branch on a setting,
    arithmetic, a loop that assigns other names), the script's module-level `opt = parser.parse_args()` is the
    settings inside its classes; a deep copy of a block holds parameters of its own, `isinstance` on layers and
    containers, `enumerate(…, 1)`, `math.log`, a layer's `out_features`, and a runtime check that builds nothing
    (`dist.is_initialized()`) are followed; an EMA copy (`self.model_ema`) is not a trained parameter. The count
    equals torch's for the same source, less the EMA copy."""
    (tmp_path / "train.py").write_text(SCRIPT)
    settings = {"latent_dim": 100, "dataset": dataset, "depth": 3}
    ns: dict[str, object] = {"__name__": "not_main"}
    exec(compile(SCRIPT.replace("parser.parse_args()", "parser.parse_args([])"), "train.py", "exec"), ns)  # noqa: S102
    ns["opt"].dataset = dataset  # type: ignore[attr-defined]
    net = ns["Net"](classes, 128)  # type: ignore[operator]
    truth = sum(p.numel() for p in net.parameters()) - sum(p.numel() for p in net.model_ema.parameters())

    settings_ns = namespace(settings)
    counter = ParamCounter(Workspace(tmp_path))
    counter.bind_settings("train.py", settings_ns)
    call = next(
        n for n in ast.walk(ast.parse(SCRIPT)) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Net"
    )
    env = counter.values_at(call, "train.py", settings_ns)
    assert (env["classes"], env["width"]) == (classes, 128)
    assert counter.count_call(call, env, "train.py") == truth


CALLER = """
import argparse
import os
import yaml
import torch
from torch import nn
from transformers import BertConfig


class Net(nn.Module):
    def __init__(self, width, med):
        super().__init__()
        self.fc = nn.Linear(width, med.hidden_size)
        self.emb = nn.Embedding(med.vocab_size, med.hidden_size)


def load_checkpoint(model, path):
    if path.startswith("http"):
        checkpoint = torch.hub.load_state_dict_from_url(path)
    elif os.path.isfile(path):
        checkpoint = torch.load(path)
    else:
        raise RuntimeError("no checkpoint")
    state = checkpoint["model"]
    state["fc.weight"] = state["fc.weight"][:1]
    return model, model.load_state_dict(state)


def main(args, config):
    med = BertConfig.from_json_file(config["med_config"])
    model = Net(config["width"], med)
    model, msg = load_checkpoint(model, config["pretrained"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="configs/train.yaml")
    args = parser.parse_args()
    config = yaml.load(open(args.config, "r"), Loader=yaml.Loader)
    main(args, config)
"""


def test_a_function_s_parameters_come_from_its_call_site_and_config_files(tmp_path: Path) -> None:
    """`main(args, config)` after `config = yaml.load(open(args.config))`: the parameters hold what the call site
    passes (the YAML file of the workspace, read and never run), `BertConfig.from_json_file(path)` reads the JSON
    file, and a checkpoint loader that branches on the file system and raises builds nothing, so it is skipped."""
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "train.yaml").write_text("width: 48\nmed_config: configs/med.json\npretrained: x.pth\n")
    (tmp_path / "configs" / "med.json").write_text('{"hidden_size": 96, "vocab_size": 1000}')
    (tmp_path / "train.py").write_text(CALLER)
    counter = ParamCounter(Workspace(tmp_path))
    settings = namespace({"config": "configs/train.yaml"})
    call = next(
        n for n in ast.walk(ast.parse(CALLER)) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Net"
    )
    env = counter.values_at(call, "train.py", settings)
    assert env["config"]["width"] == 48
    truth = sum(p.numel() for m in (nn.Linear(48, 96), nn.Embedding(1000, 96)) for p in m.parameters())
    assert counter.count_call(call, env, "train.py") == truth
    outer = next(
        n for n in ast.walk(ast.parse(CALLER)) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "main"
    )
    assert counter.count_call(outer, counter.values_at(outer, "train.py", settings), "train.py") == truth


TIED = """
from dataclasses import dataclass, field
from typing import NamedTuple
import torch.nn as nn


@dataclass
class ModelArgs:
    dim: int = 64
    n_layers: int = 2
    vocab_size: int = 320
    hidden: list = field(default_factory=list)


class Shape(NamedTuple):
    width: int
    depth: int = 1


class LM(nn.Module):
    def __init__(self, args, shape):
        super().__init__()
        self.tok = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList([nn.Linear(args.dim, args.dim) for _ in range(args.n_layers)])
        self.extra = nn.Linear(shape.width, args.dim)
        self.out = nn.Linear(args.dim, args.vocab_size, bias=False)
        self.tok.weight = self.out.weight
"""


def test_dataclass_configs_and_tied_weights_count_as_torch_does(tmp_path: Path) -> None:
    """A `@dataclass` / `NamedTuple` config built with keyword and positional arguments holds its fields (defaults
    under the arguments), and `self.tok.weight = self.out.weight` ties one tensor, counted once as torch does."""
    (tmp_path / "lm.py").write_text(TIED)
    ns: dict[str, object] = {}
    exec(compile(TIED, "lm.py", "exec"), ns)  # noqa: S102 - the test's own source, for ground truth
    net = ns["LM"](ns["ModelArgs"](dim=48, vocab_size=500), ns["Shape"](24))  # type: ignore[operator]
    truth = sum(p.numel() for p in net.parameters())
    call = ast.parse("LM(ModelArgs(dim=48, vocab_size=500), Shape(24))").body[0].value  # type: ignore[attr-defined]
    assert ParamCounter(Workspace(tmp_path)).count_call(call, {}, "lm.py") == truth


LDM_UTIL = """
import importlib
from inspect import isfunction


def exists(x):
    return x is not None


def default(val, d):
    if exists(val):
        return val
    return d() if isfunction(d) else d


def get_obj_from_str(string, reload=False):
    module, cls = string.rsplit(".", 1)
    return getattr(importlib.import_module(module, package=None), cls)


def instantiate_from_config(config):
    if not "target" in config:
        raise KeyError("Expected key `target` to instantiate.")
    return get_obj_from_str(config["target"])(**config.get("params", dict()))
"""

LDM_BLOCKS = """
import torch.nn as nn
from ldm.util import default, exists

try:
    import xformers
    import xformers.ops
    XFORMERS = True
except:
    XFORMERS = False


class Attention(nn.Module):
    def __init__(self, query_dim, context_dim=None, heads=4):
        super().__init__()
        context_dim = default(context_dim, query_dim)
        self.to_q = nn.Linear(query_dim, query_dim, bias=False)
        self.to_k = nn.Linear(context_dim, query_dim, bias=False)


class FastAttention(Attention):
    pass


class Block(nn.Module):
    MODES = {"softmax": Attention, "xformers": FastAttention}

    def __init__(self, dim, context_dim=None, attention_blocks=None, level=0):
        super().__init__()
        mode = "xformers" if XFORMERS else "softmax"
        cls = self.MODES[mode]
        if context_dim is not None:
            from omegaconf.listconfig import ListConfig
            if type(context_dim) == ListConfig:
                context_dim = list(context_dim)
        self.conv = nn.Conv2d(dim, dim, 3, padding=1)
        if not exists(attention_blocks) or level < attention_blocks[0]:
            self.attn = cls(dim, context_dim=context_dim)
"""

LDM_NET = """
import torch.nn as nn
from ldm.blocks import Block
from ldm.util import instantiate_from_config


class Denoiser(nn.Module):
    def __init__(self, width, depth, context_dim=None):
        super().__init__()
        self.blocks = nn.ModuleList([Block(width, context_dim=context_dim) for _ in range(depth)])


class Diffusion(nn.Module):
    def __init__(self, denoiser_config, timesteps=1000, **kwargs):
        super().__init__()
        ckpt_path = kwargs.pop("ckpt_path", None)
        self.model = instantiate_from_config(denoiser_config)
        self.time_embed = nn.Embedding(timesteps, 8)
        if ckpt_path is not None:
            self.init_from_ckpt(ckpt_path)
"""

LDM_TRAIN = """
import pytorch_lightning as pl
from omegaconf import OmegaConf
from ldm.util import instantiate_from_config


def create_model(config_path):
    config = OmegaConf.load(config_path)
    return instantiate_from_config(config.model)


model = create_model('./configs/toy.yaml').cpu()
trainer = pl.Trainer(max_epochs=3)
trainer.fit(model)
"""


def test_config_targets_built_by_dynamic_import_count_as_torch_does(tmp_path: Path) -> None:
    """Latent-diffusion style: `instantiate_from_config(OmegaConf.load(path).model)` imports the `target` class with
    `importlib.import_module` + `getattr` and passes `params` as keywords; an optional `try: import xformers` flag is
    taken from the body that runs when nothing fails, `not exists(x) or i < x[0]` short-circuits, `isfunction` and
    `type(...) == ListConfig` are told on plain values, `kwargs.pop` reads a keyword. The job's own `create_model`
    is followed (its YAML file names no architecture): the class built names the model."""
    for name, text in {"ldm/__init__.py": "", "ldm/util.py": LDM_UTIL, "ldm/blocks.py": LDM_BLOCKS,
                       "ldm/net.py": LDM_NET, "train.py": LDM_TRAIN}.items():  # fmt: skip
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "toy.yaml").write_text(
        "model:\n  target: ldm.net.Diffusion\n  params:\n    timesteps: 500\n    denoiser_config:\n"
        "      target: ldm.net.Denoiser\n      params:\n        width: 32\n        depth: 3\n        context_dim: 48\n"
    )
    block = nn.ModuleDict({"conv": nn.Conv2d(32, 32, 3, padding=1), "q": nn.Linear(32, 32, bias=False),
                           "k": nn.Linear(48, 32, bias=False)})  # fmt: skip
    truth = 3 * sum(p.numel() for p in block.parameters()) + nn.Embedding(500, 8).weight.numel()
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.params_millions == pytest.approx(truth / 1e6, rel=2e-3)  # (the field keeps 4 significant digits)
    assert meta.model_name is not None and meta.model_name.startswith("Diffusion"), meta.model_name


SCHEDULE = """
import numpy as np
import torch.nn as nn


class Schedule:
    def __init__(self, betas, keep):
        alphas = np.cumprod(1.0 - np.array(betas))
        self.new_betas, self.steps = [], []
        last = 1.0
        for i, alpha in enumerate(alphas):
            if i in keep:
                self.new_betas.append(1 - alpha / last)
                last = alpha
                self.steps.append(i)


class Wrapper(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.layers = nn.ModuleList()
        for block in blocks.children():
            self.layers.append(block)


def create_model_and_schedule(width, betas):
    model = nn.Sequential(nn.Linear(width, width), nn.Linear(width, 2))
    return model, Schedule(betas, set(range(0, 1000, 10)))


def wrapped(width):
    return Wrapper(external_backbone(width))
"""


def test_a_loop_over_unknown_data_that_appends_numbers_builds_nothing(tmp_path: Path) -> None:
    """`create_model_and_diffusion`-style factories also build a noise schedule: a loop over a numpy array (unknown
    to the interpreter) that appends arithmetic and `enumerate` counters builds no layer, so the model's count
    stands; a loop appending the items of an unknown iterable (modules, maybe) still stops the count."""
    (tmp_path / "train.py").write_text(SCHEDULE)
    counter = ParamCounter(Workspace(tmp_path))
    call = ast.parse("create_model_and_schedule(16, betas)", mode="eval").body
    assert isinstance(call, ast.Call)
    truth = sum(p.numel() for p in nn.Sequential(nn.Linear(16, 16), nn.Linear(16, 2)).parameters())
    assert counter.count_call(call, {"betas": [0.1] * 1000}, "train.py") == truth
    risky = ast.parse("wrapped(16)", mode="eval").body
    assert isinstance(risky, ast.Call)
    assert counter.count_call(risky, {}, "train.py") is None


TWO_CONSTRUCTIONS = """
import argparse
from dataclasses import dataclass
import torch
import torch.nn as nn


@dataclass
class Config:
    vocab: int = 100
    width: int = 16


class LM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed = nn.Embedding(config.vocab, config.width)
        self.head = nn.Linear(config.width, config.vocab)

    @classmethod
    def from_pretrained(cls, name):
        config = Config(**{"small": dict(width=8), "big": dict(width=4096)}[name])
        model = LM(config)
        return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="d1")
    args = parser.parse_args()
    if args.model.startswith("d"):
        model = LM({"d1": Config(width=24), "d2": Config(width=48)}[args.model])
    else:
        model = LM.from_pretrained(args.model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
"""

GET_OPT = """
import argparse
import torch
import torch.nn as nn


def parse_opts():
    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, default=16)
    return parser.parse_args()


def get_opt():
    opt = parse_opts()
    opt.channels = 3
    if opt.width > 64:
        opt.channels = 5
    return opt


class Net(nn.Module):
    def __init__(self, channels, width):
        super().__init__()
        self.conv = nn.Conv2d(channels, width, 3)


def main():
    opt = get_opt()
    model = Net(opt.channels, opt.width).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize(
    ("source", "command", "truth"),
    [
        (TWO_CONSTRUCTIONS, "python train.py --model d2", nn.Sequential(nn.Embedding(100, 48), nn.Linear(48, 100))),
        (GET_OPT, "python train.py --width 32", nn.Conv2d(3, 32, 3)),
    ],
    ids=["method-construction-is-not-the-job-s", "settings-mutated-after-parse-args"],
)
def test_the_model_the_job_builds_with_the_settings_it_parsed(
    tmp_path: Path, source: str, command: str, truth: nn.Module
) -> None:
    """The model the optimizer trains is the one the script builds, not the `model = LM(config)` inside a
    `from_pretrained` classmethod; `parser.parse_args()` returns the job's settings wherever it is called, so a
    `get_opt()` that sets `opt.channels = 3` on them hands the model its input channels."""
    (tmp_path / "train.py").write_text(source)
    meta = extract_metadata(tmp_path, command)
    assert meta.params_millions == pytest.approx(sum(p.numel() for p in truth.parameters()) / 1e6, rel=2e-3)


DATA_SHAPED = """
import torch
import torch.nn as nn


def get_classes(path):
    with open(path, encoding="utf-8") as f:
        names = f.readlines()
    names = [c.strip() for c in names]
    return names, len(names)


class Embedder:
    def __init__(self, d, n_freqs):
        self.out_dim = d
        for freq in 2.0 ** torch.linspace(0.0, n_freqs - 1, steps=n_freqs):
            self.out_dim += 2 * d


class Net(nn.Module):
    def __init__(self, classes_path, n_freqs):
        super().__init__()
        _, num_classes = get_classes(classes_path)
        width = Embedder(3, n_freqs).out_dim
        self.head = nn.Linear(width, num_classes)
"""


def test_small_data_files_and_vectors_shape_the_model(tmp_path: Path) -> None:
    """The job's class list (`with open(path) as f: f.readlines()`, a text file of the workspace, read and never
    run) sizes the head, and a loop over `torch.linspace(..., steps=n)` runs n times (NeRF's positional encoder
    width); a file outside the workspace or opened for writing stays unknown."""
    (tmp_path / "model_data").mkdir()
    (tmp_path / "model_data" / "classes.txt").write_text("cat\ndog\nbird\nfish\nhorse\n")
    (tmp_path / "train.py").write_text(DATA_SHAPED)
    counter = ParamCounter(Workspace(tmp_path))
    call = ast.parse("Net('model_data/classes.txt', 10)", mode="eval").body
    assert isinstance(call, ast.Call)
    assert counter.count_call(call, {}, "train.py") == sum(p.numel() for p in nn.Linear(3 + 2 * 3 * 10, 5).parameters())
    for path in ("../classes.txt", "/etc/passwd", "model_data/missing.txt"):
        escaped = ast.parse(f"Net({path!r}, 10)", mode="eval").body
        assert isinstance(escaped, ast.Call)
        assert counter.count_call(escaped, {}, "train.py") is None, path


CHAR_LM = """
import torch.nn as nn

n_embd = 32
with open('input.txt', 'r', encoding='utf-8') as f:
    text = f.read()
chars = sorted(list(set(text)))
vocab_size = len(chars)


class CharLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)


model = CharLM()
"""


def test_a_character_vocabulary_read_at_module_level_sizes_the_model(tmp_path: Path) -> None:
    """`with open('input.txt') as f: text = f.read()` at module level, then `vocab_size = len(set(text))`: the
    corpus (1.2 MB here, over the 1 MB read for source files, as tiny shakespeare is) sizes the embedding."""
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ \n"
    (tmp_path / "input.txt").write_text((alphabet * 40_000)[:1_200_000])
    (tmp_path / "gpt.py").write_text(CHAR_LM)
    counter = ParamCounter(Workspace(tmp_path))
    call = ast.parse("CharLM()", mode="eval").body
    assert isinstance(call, ast.Call)
    truth = nn.Sequential(nn.Embedding(len(alphabet), 32), nn.Linear(32, len(alphabet)))
    assert counter.count_call(call, {}, "gpt.py") == sum(p.numel() for p in truth.parameters())


SEGMENTATION_PACKAGE = {
    "network/__init__.py": "from .modeling import *\n",
    "network/modeling.py": """
from functools import partial
import torch.nn as nn
from timm.models.vision_transformer import Block
from .utils import LayerGetter


class Backbone(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, width, 3), nn.Conv2d(width, width, 3), nn.Conv2d(width, 512, 1))
        self.classifier = nn.Linear(512, 1000)


class Head(nn.Module):
    def __init__(self, width, classes, norm_layer):
        super().__init__()
        self.block = Block(width, 4, 2.0, qkv_bias=True)
        self.norm = norm_layer(width)
        self.out = nn.Linear(width, classes)


def segmenter_small(num_classes=21):
    backbone = Backbone(32)
    backbone.low = backbone.features[0:2]
    backbone.features = None
    backbone.classifier = None
    return nn.Sequential(LayerGetter(backbone), Head(32, num_classes, partial(nn.LayerNorm, eps=1e-6)))
""",
    "network/utils.py": """
from collections import OrderedDict
import torch.nn as nn


class LayerGetter(nn.ModuleDict):
    def __init__(self, model):
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
        super().__init__(layers)
""",
    "main.py": """
import argparse
import torch
import network

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="segmenter_small")
parser.add_argument("--num_classes", type=int, default=21)
opts = parser.parse_args()
model = network.modeling.__dict__[opts.model](num_classes=opts.num_classes)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
""",
}


def test_a_registry_of_a_job_package_is_counted_without_what_it_drops(tmp_path: Path) -> None:
    """`network.modeling.__dict__[opts.model](...)` (a submodule reached as the package's attribute) is evaluated, not
    only named; `named_children()` of a job's module lists its submodules; a backbone's `features` and `classifier`
    set to None after its slices were taken are not trained (the kept slices are); `partial(nn.LayerNorm, eps=…)`
    builds a LayerNorm and timm's ViT `Block` counts as timm builds it."""
    for name, text in SEGMENTATION_PACKAGE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    block = nn.ModuleList([nn.LayerNorm(32), nn.Linear(32, 96), nn.Linear(32, 32), nn.LayerNorm(32),
                           nn.Linear(32, 64), nn.Linear(64, 32)])  # fmt: skip
    kept = nn.ModuleList([nn.Conv2d(3, 32, 3), nn.Conv2d(32, 32, 3), block, nn.LayerNorm(32), nn.Linear(32, 21)])
    meta = extract_metadata(tmp_path, "python main.py --num_classes 21")
    assert meta.params_millions == pytest.approx(sum(p.numel() for p in kept.parameters()) / 1e6, rel=5e-3)


CLASS_CONFIG = """
import torch.nn as nn


class Config:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class LM(nn.Module):
    @staticmethod
    def get_default_config():
        return Config(model_type="mini", n_layer=None, n_embd=None, vocab_size=None)

    @classmethod
    def shapes(cls):
        return {"mini": dict(n_layer=2, n_embd=48), "nano": dict(n_layer=1, n_embd=16)}

    def __init__(self, config):
        super().__init__()
        type_given = config.model_type is not None
        params_given = all([config.n_layer is not None, config.n_embd is not None])
        assert type_given ^ params_given
        if type_given:
            shape = LM.shapes()[config.model_type]
            config.n_layer, config.n_embd = shape["n_layer"], shape["n_embd"]
        self.embed = nn.Embedding(config.vocab_size, config.n_embd)
        self.blocks = nn.ModuleList([nn.Linear(config.n_embd, config.n_embd) for _ in range(config.n_layer)])


def build(vocab):
    config = LM.get_default_config()
    config.vocab_size = vocab
    return LM(config)
"""


def test_static_and_class_methods_and_all_any_are_followed(tmp_path: Path) -> None:
    """minGPT's `GPT.get_default_config()` (a static method) and a class method's table of shapes are evaluated, and
    `all([...])` / `any([...])` over known values decide the branch that picks the shape."""
    (tmp_path / "model.py").write_text(CLASS_CONFIG)
    counter = ParamCounter(Workspace(tmp_path))
    call = ast.parse("build(65)", mode="eval").body
    assert isinstance(call, ast.Call)
    truth = nn.ModuleList([nn.Embedding(65, 48), nn.Linear(48, 48), nn.Linear(48, 48)])
    assert counter.count_call(call, {}, "model.py") == sum(p.numel() for p in truth.parameters())


WRAPPED_REGISTRY = {
    "resnet.py": """
import torch.nn as nn

__all__ = ["ResNet", "resnet8", "resnet14"]


class ResNet(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.convs = nn.Sequential(*[nn.Conv2d(16, 16, 3, padding=1) for _ in range(depth)])
        self.fc = nn.Linear(16, 10)


def resnet8():
    return ResNet(3)


def resnet14():
    return ResNet(6)
""",
    "trainer.py": """
import argparse
import torch
import resnet

names = sorted(name for name in resnet.__dict__ if name.islower() and name.startswith("resnet"))
parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="resnet8", choices=names)
args = parser.parse_args()
model = torch.nn.DataParallel(resnet.__dict__[args.arch]())
model.cuda()
optimizer = torch.optim.SGD(model.parameters(), 0.1)
""",
}


def test_a_registry_call_inside_data_parallel_is_counted(tmp_path: Path) -> None:
    """`model = torch.nn.DataParallel(resnet.__dict__[args.arch]())`: the registry call inside the wrapper builds the
    model, and the interpreter counts what the command's `--arch` selects."""
    for name, text in WRAPPED_REGISTRY.items():
        (tmp_path / name).write_text(text)
    meta = extract_metadata(tmp_path, "python trainer.py --arch=resnet14")
    truth = nn.ModuleList([*(nn.Conv2d(16, 16, 3, padding=1) for _ in range(6)), nn.Linear(16, 10)])
    assert meta.params_millions == pytest.approx(sum(p.numel() for p in truth.parameters()) / 1e6, rel=5e-3)


LIBRARY_IDIOMS = """
import itertools
import torch
import torch.nn as nn


class LoRALayer:
    def __init__(self, r, alpha):
        self.r = r
        self.scaling = alpha / r


class LoRALinear(nn.Linear, LoRALayer):
    def __init__(self, fin, fout, r=4, alpha=8, **kw):
        nn.Linear.__init__(self, fin, fout, **kw)
        LoRALayer.__init__(self, r=r, alpha=alpha)
        self.lora_A = nn.Parameter(self.weight.new_zeros((r, fin)))
        self.lora_B = nn.Parameter(self.weight.new_zeros(fout, self.r))


VOCABULARIES = {"atoms": list(range(1, 119)) + ["misc"], "charges": [-1, 0, 1]}


def feature_dims():
    return list(map(len, [VOCABULARIES["atoms"], VOCABULARIES["charges"]]))


class Net(nn.Module):
    def __init__(self, resolution=5, heads=3):
        super().__init__()
        self.embeddings = nn.ModuleList([nn.Embedding(d, 8) for d in feature_dims()])
        points = list(itertools.product(range(resolution), range(resolution)))
        self.attention_biases = nn.Parameter(torch.zeros(heads, len(points)))
        self.proj = LoRALinear(8, 16, r=2)
"""


def test_library_idioms_base_inits_by_name_new_tensors_itertools_and_map_len(tmp_path: Path) -> None:
    """LoRA's `nn.Linear.__init__(self, ...)` and `LoRALayer.__init__(self, ...)` (base classes initialised by name),
    `self.weight.new_zeros(shape)`, `itertools.product` over ranges (LeViT's attention offsets) and
    `map(len, vocabularies)` (OGB's feature sizes) are evaluated: the count equals torch's."""
    (tmp_path / "model.py").write_text(LIBRARY_IDIOMS)
    namespace_ = types.ModuleType("library_idioms")
    exec(compile(LIBRARY_IDIOMS, "model.py", "exec"), namespace_.__dict__)  # noqa: S102 -- the test's own source
    truth = sum(p.numel() for p in namespace_.Net().parameters())
    call = ast.parse("Net()", mode="eval").body
    assert isinstance(call, ast.Call)
    assert ParamCounter(Workspace(tmp_path)).count_call(call, {}, "model.py") == truth
