"""A config file opened at a path the entry spells out, an optimizer given as a spec string, and a name that only
contains a family's name (round 32's misses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.identity import model_type_of
from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write


def test_a_config_file_beside_the_script(tmp_path: Path) -> None:
    """BYOL-PyTorch: `with open(Path(Path(__file__).parent, 'config/train_config.yaml')) as f: config =
    yaml.safe_load(f)` with no flag naming it; the file's settings are the job's (the loader batch a trainer reads
    from it, the epochs, the rate)."""
    write(
        tmp_path,
        {
            "config/train_config.yaml": "data:\n  train_batch_size: 96\noptimizer:\n  total_epochs: 30\n  lr: 0.3\n",
            "main.py": """
import os
from pathlib import Path
import yaml
import torch
from trainer import Trainer
def main():
    with open(Path(Path(__file__).parent, 'config/train_config.yaml'), 'r') as f:
        config = yaml.safe_load(f)
    Trainer(config).train()
if __name__ == "__main__":
    main()
""",
            "trainer.py": """
import torch
class Trainer:
    def __init__(self, config):
        self.config = config
""",
        },
    )
    meta = extract_metadata(tmp_path, "python main.py")
    assert (meta.batch_size_per_device, meta.epochs, meta.learning_rate) == (96, 30, pytest.approx(0.3))


def test_a_config_opened_for_something_else_is_not_the_settings(tmp_path: Path) -> None:
    """A YAML the entry opens into a name that is not a settings object (`classes = yaml.safe_load(...)`) adds no
    settings."""
    write(
        tmp_path,
        {
            "labels.yaml": "batch_size: 999\n",
            "main.py": """
import yaml, torch
classes = yaml.safe_load(open('labels.yaml'))
model = torch.nn.Linear(4, 4)
loader = torch.utils.data.DataLoader(None, batch_size=8)
""",
        },
    )
    assert extract_metadata(tmp_path, "python main.py").batch_size_per_device == 8


def test_an_optimizer_spec_string_carries_the_rate(tmp_path: Path) -> None:
    """XLM's `--optimizer adam_inverse_sqrt,lr=0.00010,warmup_updates=30000`: the rate is in the spec the job parses
    itself."""
    write(
        tmp_path,
        {
            "train.py": """
import argparse, torch
parser = argparse.ArgumentParser()
parser.add_argument('--optimizer', type=str, default='adam,lr=0.0001')
parser.add_argument('--batch_size', type=int, default=32)
params = parser.parse_args()
def get_optimizer(parameters, s):
    method, _, rest = s.partition(',')
    opts = {k: float(v) for k, v in (x.split('=') for x in rest.split(','))}
    return torch.optim.Adam(parameters, **opts)
model = torch.nn.Linear(4, 4)
optimizer = get_optimizer(model.parameters(), params.optimizer)
"""
        },
    )
    meta = extract_metadata(tmp_path, "python train.py --optimizer adam_inverse_sqrt,lr=0.00025,warmup_updates=30000")
    assert meta.learning_rate == pytest.approx(0.00025)


def test_a_name_that_merely_contains_a_familys_name() -> None:
    """`BYOLModel` contains "olmo" (byOLMOdel) but is no OLMo; OLMo names still are decoder-only transformers."""
    assert model_type_of(["BYOLModel", "BYOL-PyTorch"], None) != "decoder_only_transformer"
    assert model_type_of(["allenai/OLMo-7B"], None) == "decoder_only_transformer"


def test_a_closure_keeps_the_names_of_the_function_that_made_it(tmp_path: Path) -> None:
    """timm's helper, copied into many repositories: `def _ntuple(n): def parse(x): ... tuple(repeat(x, n))`, then
    `to_2tuple = _ntuple(2)`; a patch embedding's kernel is `to_2tuple(patch_size)` (16 x 16)."""
    write(
        tmp_path,
        {
            "helper.py": """
from itertools import repeat
import collections.abc as container_abcs
def _ntuple(n):
    def parse(x):
        if isinstance(x, container_abcs.Iterable):
            return x
        return tuple(repeat(x, n))
    return parse
to_1tuple = _ntuple(1)
to_2tuple = _ntuple(2)
to_3tuple = _ntuple(3)
""",
            "train.py": """
import torch, torch.nn as nn
from helper import to_2tuple
class PatchEmbed(nn.Module):
    def __init__(self, patch_size=16, in_chans=3, embed_dim=192):
        super().__init__()
        patch_size = to_2tuple(patch_size)
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
model = PatchEmbed()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
""",
        },
    )
    assert extract_metadata(tmp_path, "python train.py").params_millions == pytest.approx(
        (3 * 192 * 16 * 16 + 192) / 1e6, abs=1e-3
    )


def test_the_layers_of_a_models_local_bases(tmp_path: Path) -> None:
    """NAFNet's `class NAFNetLocal(Local_Base, NAFNet)` builds its layers in its base class's constructor: a CNN; a
    GoPro options name is the GoPro dataset."""
    write(
        tmp_path,
        {
            "train.py": """
import torch, torch.nn as nn
class Local_Base:
    def convert(self):
        pass
class NAFNet(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.intro = nn.Conv2d(3, width, 3, padding=1)
        self.ending = nn.Conv2d(width, 3, 3, padding=1)
class NAFNetLocal(Local_Base, NAFNet):
    def __init__(self, *args, **kwargs):
        Local_Base.__init__(self)
        NAFNet.__init__(self, *args, **kwargs)
dataroot = './datasets/GoPro/train/sharp_crops.lmdb'
model = NAFNetLocal(width=32)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
"""
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert (meta.model_type, meta.dataset) == ("cnn", "GoPro")


def test_the_backbone_a_wrapper_built_names_it(tmp_path: Path) -> None:
    """TSM's `TSN(..., base_model=args.arch)` builds `getattr(torchvision.models, base_model)()` in one arm and a
    MobileNetV2 in another: with `--arch resnet50` the count follows the ResNet arm, and so does the name."""
    write(
        tmp_path,
        {
            "main.py": """
import argparse, torch, torchvision
from torch import nn
parser = argparse.ArgumentParser()
parser.add_argument('--arch', type=str, default='BNInception')
args = parser.parse_args()
class TSN(nn.Module):
    def __init__(self, num_class, base_model='resnet101'):
        super().__init__()
        if 'resnet' in base_model:
            self.base_model = getattr(torchvision.models, base_model)(False)
        elif base_model == 'mobilenetv2':
            self.base_model = torchvision.models.mobilenet_v2(False)
        self.new_fc = nn.Linear(2048, num_class)
model = TSN(400, base_model=args.arch)
optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
"""
        },
    )
    meta = extract_metadata(tmp_path, "python main.py --arch resnet50")
    assert meta.model_name is not None and meta.model_name.startswith("resnet50")


def test_module_globals_set_in_the_main_block(tmp_path: Path) -> None:
    """nlp-tutorial's Transformer: the classes read `d_model`, `n_layers`, ... that the script's `if __name__ ==
    '__main__':` block sets before building the model; run as a script, those are module globals."""
    write(
        tmp_path,
        {
            "Transformer.py": """
import torch, torch.nn as nn, torch.optim as optim
class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(d_model, d_ff)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d_model)
        self.layers = nn.ModuleList([Layer() for _ in range(n_layers)])
if __name__ == '__main__':
    vocab = {'P': 0, 'ich': 1, 'mochte': 2}
    vocab_size = len(vocab)
    d_model = 64
    d_ff = 128
    n_layers = 2
    model = Net()
    optimizer = optim.Adam(model.parameters(), lr=0.001)
"""
        },
    )
    want = (3 * 64 + 2 * (64 * 128 + 128)) / 1e6
    assert extract_metadata(tmp_path, "python Transformer.py").params_millions == pytest.approx(want, abs=1e-3)


def test_a_settings_dict_built_with_dict_in_an_imported_module(tmp_path: Path) -> None:
    """face.evoLVe: `configurations = {1: dict(BATCH_SIZE=512, LR=0.1, ..., DEVICE=torch.device(...))}` in config.py,
    read by the entry as `cfg = configurations[1]; BATCH_SIZE = cfg['BATCH_SIZE']`; the literal entries count, and a
    DIV2K folder name is the DIV2K dataset."""
    write(
        tmp_path,
        {
            "config.py": """
import torch
configurations = {
    1: dict(
        BATCH_SIZE = 512,
        LR = 0.1,
        NUM_EPOCH = 125,
        DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu"),
    ),
}
""",
            "train.py": """
import torch
from config import configurations
if __name__ == '__main__':
    cfg = configurations[1]
    BATCH_SIZE = cfg['BATCH_SIZE']
    LR = cfg['LR']
    NUM_EPOCH = cfg['NUM_EPOCH']
    model = torch.nn.Linear(4, 4)
    train_loader = torch.utils.data.DataLoader('data/DIV2K_train_HR', batch_size=BATCH_SIZE)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    for epoch in range(NUM_EPOCH):
        pass
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert (meta.batch_size_per_device, meta.epochs, meta.learning_rate) == (512, 125, pytest.approx(0.1))
    assert meta.dataset == "DIV2K"


def test_a_model_module_chosen_by_name_with_import_module(tmp_path: Path) -> None:
    """EDSR-style loaders: `from importlib import import_module`, then `module = import_module('model.' +
    args.model.lower())` and `self.model = module.make_model(args)` inside the harness class: the module the setting
    names builds the model that is counted."""
    write(
        tmp_path,
        {
            "model/__init__.py": """
from importlib import import_module
import torch.nn as nn
class Model(nn.Module):
    def __init__(self, args):
        super().__init__()
        module = import_module('model.' + args.model.lower())
        self.model = module.make_model(args)
""",
            "model/tiny.py": """
import torch.nn as nn
def make_model(args):
    return Tiny(args)
class Tiny(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.conv = nn.Conv2d(3, args.n_feats, 3)
""",
            "main.py": """
import argparse, torch
import model
parser = argparse.ArgumentParser()
parser.add_argument('--model', default='EDSR')
parser.add_argument('--n_feats', type=int, default=64)
args = parser.parse_args()
net = model.Model(args)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)
""",
        },
    )
    meta = extract_metadata(tmp_path, "python main.py --model TINY --n_feats 32")
    assert meta.params_millions == pytest.approx((3 * 32 * 9 + 32) / 1e6, abs=1e-4)
