"""Configs loaded by path, registries of module globals, datasets that name their task, hand-written attention, DeepSpeed's
own config flag, settings changed before a trainer runs, and parts of a job's own model (round 30's misses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

ZOO_LIKE = {
    "models/__init__.py": """
from .preresnet import *
def get_model(config):
    return globals()[config.architecture](config.num_classes)
""",
    "models/preresnet.py": """
import torch.nn as nn
__all__ = ['preresnet_small']
class PreResNet(nn.Module):
    def __init__(self, width, num_classes):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3, padding=1, bias=False)
        self.fc = nn.Linear(width, num_classes)
def preresnet_small(num_classes):
    return PreResNet(width=64, num_classes=num_classes)
""",
    "experiments/cifar10/small/config.yaml": """architecture: preresnet_small
num_classes: 10
dataset: cifar10
epochs: 30
batch_size: 96
lr_scheduler:
  base_lr: 0.05
""",
    "train.py": """
import argparse
import torch
import yaml
from easydict import EasyDict
from models import get_model
parser = argparse.ArgumentParser()
parser.add_argument("--work-path", required=True, type=str)
args = parser.parse_args()
def main():
    with open(args.work_path + "/config.yaml") as f:
        config = yaml.load(f)
    config = EasyDict(config)
    net = get_model(config)
    net = net.cuda()
    optimizer = torch.optim.SGD(net.parameters(), config.lr_scheduler.base_lr, momentum=0.9)
    loader = torch.utils.data.DataLoader(None, batch_size=config.batch_size)
    for epoch in range(config.epochs):
        pass
if __name__ == "__main__":
    main()
""",
}


def test_a_config_file_in_the_folder_the_command_names(tmp_path: Path) -> None:
    """`--work-path experiments/cifar10/small` and `open(args.work_path + "/config.yaml")` (CIFAR-ZOO): the file in
    that folder holds the settings; `globals()[config.architecture](config.num_classes)` builds the model it names
    (3*64*9 + 64*10 + 10 parameters)."""
    write(tmp_path, ZOO_LIKE)
    meta = extract_metadata(tmp_path, "python -u train.py --work-path ./experiments/cifar10/small")
    assert (meta.batch_size_per_device, meta.epochs, meta.learning_rate) == (96, 30, pytest.approx(0.05))
    assert meta.model_name == "PreResNet"
    assert meta.params_millions == pytest.approx((3 * 64 * 9 + 64 * 10 + 10) / 1e6, abs=1e-3)


BISENET_LIKE = {
    "configs/__init__.py": """
import importlib
class cfg_dict(object):
    def __init__(self, d):
        self.__dict__ = d
        self.get = d.get
def set_cfg_from_file(cfg_path):
    spec = importlib.util.spec_from_file_location('cfg_file', cfg_path)
    cfg_file = importlib.util.module_from_spec(spec)
    spec_loader = spec.loader.exec_module(cfg_file)
    cfg = cfg_file.cfg
    return cfg_dict(cfg)
""",
    "configs/small_city.py": """
cfg = dict(
    model_type='segnet',
    n_cats=19,
    lr_start=5e-3,
    max_iter=1000,
    dataset='CityScapes',
    ims_per_gpu=8,
)
""",
    "lib/__init__.py": "",
    "lib/models.py": """
import torch.nn as nn
class SegNet(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.stem = nn.Conv2d(3, 32, 3, bias=False)
        self.head = nn.Conv2d(32, n_classes, 1)
model_factory = {'segnet': SegNet}
""",
    "tools/train.py": """
import sys
sys.path.insert(0, '.')
import argparse
import torch
from lib.models import model_factory
from configs import set_cfg_from_file
parse = argparse.ArgumentParser()
parse.add_argument('--config', dest='config', type=str, default='configs/small_city.py')
args = parse.parse_args()
cfg = set_cfg_from_file(args.config)
def set_model():
    net = model_factory[cfg.model_type](cfg.n_cats)
    net.cuda()
    return net
def train():
    net = set_model()
    optim = torch.optim.SGD(net.parameters(), lr=cfg.lr_start, momentum=0.9)
    net = torch.nn.parallel.DistributedDataParallel(net)
    for it in range(cfg.max_iter):
        optim.step()
if __name__ == "__main__":
    train()
""",
}


def test_a_python_config_loaded_by_its_path(tmp_path: Path) -> None:
    """`importlib.util.spec_from_file_location(name, cfg_path)` then `cfg_file.cfg` into an object whose `__dict__`
    is that dict (BiSeNet): its keys are the settings the job reads (`cfg.lr_start`, `cfg.n_cats`), the registry key
    builds the model, and Cityscapes is a dataset of per-pixel labels."""
    write(tmp_path, BISENET_LIKE)
    meta = extract_metadata(tmp_path, "torchrun --nproc_per_node=2 tools/train.py --config configs/small_city.py")
    assert (meta.learning_rate, meta.max_steps) == (pytest.approx(5e-3), 1000)
    assert meta.params_millions == pytest.approx((3 * 32 * 9 + 32 * 19 + 19) / 1e6, abs=1e-3)
    assert (meta.dataset, meta.task) == ("Cityscapes", "semantic_segmentation")


PALM_LIKE = {
    "palm/__init__.py": "from palm.model import PaLM\n",
    "palm/model.py": """
import torch
from torch import nn, einsum
class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        sim = einsum('b i d, b j d -> b i j', q, k)
        attn = sim.softmax(dim=-1)
        return self.out(einsum('b i j, b j d -> b i d', attn, v))
def PaLM(*, dim, num_tokens, depth):
    net = nn.Sequential(nn.Embedding(num_tokens, dim), *[Block(dim) for _ in range(depth)],
                        nn.Linear(dim, num_tokens, bias=False))
    net[-1].weight = net[0].weight
    return net
""",
    "train.py": """
import gzip
import torch
from palm import PaLM
BATCH_SIZE = 4
LEARNING_RATE = 2e-4
model = PaLM(num_tokens=256, dim=64, depth=2)
model.cuda()
with gzip.open("./data/enwik8.gz") as file:
    pass
optim = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
""",
}


def test_a_function_that_builds_a_model_with_attention_written_by_hand(tmp_path: Path) -> None:
    """`def PaLM(...)` returns an `nn.Sequential` of an embedding, blocks whose forward is a softmax of an einsum of
    queries and keys, and a tied output layer: a decoder-only transformer, trained on enwik8 (a text corpus) from
    scratch, so a language model."""
    write(tmp_path, PALM_LIKE)
    meta = extract_metadata(tmp_path, "python train.py")
    assert (meta.model_type, meta.task, meta.dataset) == ("decoder_only_transformer", "language_modeling", "enwik8")


def test_a_video_dataset_makes_a_video_classifier(tmp_path: Path) -> None:
    """A 3-D CNN trained on UCF101 classifies clips, not images."""
    write(
        tmp_path,
        {
            "train.py": """
import torch, torch.nn as nn
dataset = 'ucf101'
class C3D(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv3d(3, 64, kernel_size=(3, 3, 3))
        self.fc = nn.Linear(64, num_classes)
model = C3D(num_classes=101)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
loader = torch.utils.data.DataLoader(None, batch_size=20)
"""
        },
    )
    assert extract_metadata(tmp_path, "python train.py").task == "video_classification"


def test_a_gan_on_a_segmentation_dataset_is_not_segmentation(tmp_path: Path) -> None:
    """pix2pixHD reads Cityscapes label maps to make photos: with a discriminator in the job, the dataset's own task
    is not the job's."""
    write(
        tmp_path,
        {
            "train.py": """
import torch, torch.nn as nn
dataroot = './datasets/cityscapes/'
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(35, 3, 3)
class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(38, 1, 3)
model = Generator()
netD = Discriminator()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
"""
        },
    )
    assert extract_metadata(tmp_path, "python train.py").task != "semantic_segmentation"


def test_deepspeeds_own_config_flag(tmp_path: Path) -> None:
    """`deepspeed train.py --deepspeed --deepspeed_config ds_config.json` (DeepSpeed's `add_config_arguments`): the
    JSON's `train_batch_size` is the global batch whatever the script's `--batch_size` default says, its legacy
    `"zero_optimization": true` is stage 1, and its optimizer's rate and fp16 count."""
    write(
        tmp_path,
        {
            "ds_config.json": """{"train_batch_size": 32, "gradient_accumulation_steps": 4,
 "optimizer": {"type": "Adam", "params": {"lr": 0.0002}}, "fp16": {"enabled": true}, "zero_optimization": true}""",
            "train.py": """
import argparse
import deepspeed
import torch
def add_argument():
    parser = argparse.ArgumentParser()
    parser.add_argument('-b', '--batch_size', default=32, type=int)
    parser.add_argument('--local_rank', type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()
model = torch.nn.Linear(8, 8)
cmd_args = add_argument()
engine, optimizer, loader, _ = deepspeed.initialize(args=cmd_args, model=model, model_parameters=model.parameters())
""",
        },
    )
    meta = extract_metadata(tmp_path, "deepspeed train.py --deepspeed --deepspeed_config ds_config.json")
    assert (meta.distributed, meta.global_batch_size, meta.batch_size_per_device) == ("deepspeed_zero1", 32, None)
    assert (meta.learning_rate, meta.precision) == (pytest.approx(2e-4), "fp16")


def test_an_import_in_a_method_nothing_calls_is_not_the_jobs_framework(tmp_path: Path) -> None:
    """build-nanogpt defines `GPT.from_pretrained` (which imports transformers) beside its own model and trains
    from scratch; `# model = GPT.from_pretrained("gpt2")` is a comment: neither makes it a transformers fine-tune."""
    write(
        tmp_path,
        {
            "train_gpt2.py": """
import torch
import torch.nn as nn
class GPT(nn.Module):
    def __init__(self, n=8):
        super().__init__()
        self.wte = nn.Embedding(256, n)
        self.lm_head = nn.Linear(n, 256, bias=False)
    @classmethod
    def from_pretrained(cls, model_type):
        from transformers import GPT2LMHeadModel
        return GPT2LMHeadModel.from_pretrained(model_type)
model = GPT()
# model = GPT.from_pretrained("gpt2")
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
"""
        },
    )
    meta = extract_metadata(tmp_path, "python train_gpt2.py")
    assert meta.framework == ["PyTorch"]
    assert meta.model_name is not None and "gpt2" not in meta.model_name.lower()


TRAINER_LIKE = {
    "base_models/__init__.py": "",
    "base_models/vgg.py": """
import torch.nn as nn
class VGG(nn.Module):
    def __init__(self, features, num_classes=1000):
        super().__init__()
        self.features = features
        self.classifier = nn.Linear(512, num_classes)
def vgg_small(pretrained=False):
    return VGG(nn.Sequential(nn.Conv2d(3, 512, 3)))
""",
    "fcn.py": """
import torch.nn as nn
from base_models.vgg import vgg_small
class FCN(nn.Module):
    def __init__(self, nclass):
        super().__init__()
        self.pretrained = vgg_small(pretrained=True).features
        self.head = nn.Conv2d(512, nclass, 1)
def get_segmentation_model(model, **kwargs):
    return {'fcn': FCN}[model](21)
""",
    "train.py": """
import argparse
import os
import torch
from fcn import get_segmentation_model
def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--model', type=str, default='fcn')
    parser.add_argument('--lr', type=float, default=1e-4)
    return parser.parse_args()
class Trainer(object):
    def __init__(self, args):
        self.model = get_segmentation_model(model=args.model)
        params_list = [{'params': self.model.pretrained.parameters(), 'lr': args.lr}]
        self.optimizer = torch.optim.SGD(params_list, lr=args.lr, momentum=0.9)
if __name__ == '__main__':
    args = parse_args()
    num_gpus = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else 1
    args.lr = args.lr * num_gpus
    trainer = Trainer(args)
""",
}


def test_a_trainers_model_built_by_a_factory_from_a_part_of_another(tmp_path: Path) -> None:
    """`self.model = get_segmentation_model(...)` in a trainer, whose model keeps only `vgg_small(...).features` of
    the job's own VGG (its classifier is not trained); `args.lr = args.lr * num_gpus` in the `__main__` block runs
    before `Trainer(args)` reads it, with WORLD_SIZE set by the launcher (4 processes)."""
    write(tmp_path, TRAINER_LIKE)
    meta = extract_metadata(tmp_path, "python -m torch.distributed.launch --nproc_per_node=4 train.py --lr 0.0001")
    assert meta.params_millions == pytest.approx((3 * 512 * 9 + 512 + 512 * 21 + 21) / 1e6, abs=1e-3)
    assert meta.learning_rate == pytest.approx(4e-4)
    assert extract_metadata(tmp_path, "python train.py --lr 0.0001").learning_rate == pytest.approx(1e-4)


def test_a_module_that_loads_a_transformers_model_where_the_entry_does_not_look(tmp_path: Path) -> None:
    """build-nanogpt's `hellaswag.py` imports transformers and loads GPT-2 in its own `evaluate()`; the entry imports
    only `render_example` from it: the job does not run transformers. A module class the entry builds that loads one
    (OpenNRE's `BERTEncoder`) still counts."""
    write(
        tmp_path,
        {
            "hellaswag.py": """
from transformers import GPT2LMHeadModel
def render_example(example):
    return example
def evaluate(model_type):
    model = GPT2LMHeadModel.from_pretrained(model_type)
    return model
""",
            "encoder.py": """
import torch.nn as nn
from transformers import BertModel
class BERTEncoder(nn.Module):
    def __init__(self, path):
        super().__init__()
        self.bert = BertModel.from_pretrained(path)
""",
            "train.py": """
import torch
from hellaswag import render_example
model = torch.nn.Linear(8, 8)
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
""",
            "train_bert.py": """
import torch
from encoder import BERTEncoder
model = BERTEncoder('bert-base-uncased')
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
""",
        },
    )
    assert extract_metadata(tmp_path, "python train.py").framework == ["PyTorch"]
    assert "HF Transformers" in extract_metadata(tmp_path, "python train_bert.py").framework


def test_a_config_loaded_by_path_stays_inside_the_working_directory(tmp_path: Path) -> None:
    """A job that loads `--config ../secret_cfg.py` through importlib reads nothing outside its working directory:
    the file beside it is not evaluated (its values do not appear), and the extraction does not fail."""
    (tmp_path / "secret_cfg.py").write_text("cfg = dict(lr_start=0.123, n_cats=7)\n")
    job = tmp_path / "job"
    write(job, {**{k: v for k, v in BISENET_LIKE.items() if k != "configs/small_city.py"}})
    meta = extract_metadata(job, "python tools/train.py --config ../secret_cfg.py")
    assert meta.learning_rate != pytest.approx(0.123)
    assert meta.params_millions is None


def test_modules_one_optimizer_trains_together_are_counted_together(tmp_path: Path) -> None:
    """NRI's `optim.Adam(list(encoder.parameters()) + list(decoder.parameters()))` and SfMLearner's parameter groups
    over `disp_net` and `pose_net` (each later wrapped in DataParallel): the model is every module the optimizer
    trains, not the first; a decoder chosen by a setting among several arms counts the arm that runs."""
    write(
        tmp_path,
        {
            "train.py": """
import argparse
import torch, torch.nn as nn
parser = argparse.ArgumentParser()
parser.add_argument('--decoder', type=str, default='mlp')
args = parser.parse_args()
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 20)
class MLPDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(20, 30)
class RNNDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(20, 500)
encoder = Encoder()
if args.decoder == 'mlp':
    decoder = MLPDecoder()
elif args.decoder == 'rnn':
    decoder = RNNDecoder()
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=5e-4)
""",
            "groups.py": """
import torch, torch.nn as nn
class DispNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
class PoseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(9, 16, 3)
disp_net = DispNet().to('cuda')
pose_net = PoseNet().to('cuda')
disp_net = torch.nn.DataParallel(disp_net)
pose_net = torch.nn.DataParallel(pose_net)
optim_params = [{'params': disp_net.parameters(), 'lr': 2e-4}, {'params': pose_net.parameters(), 'lr': 2e-4}]
optimizer = torch.optim.Adam(optim_params, betas=(0.9, 0.999))
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.params_millions == pytest.approx((10 * 20 + 20 + 20 * 30 + 30) / 1e6, abs=1e-4)
    grouped = extract_metadata(tmp_path, "python groups.py")
    assert grouped.params_millions == pytest.approx((3 * 8 * 9 + 8 + 9 * 16 * 9 + 16) / 1e6, abs=1e-4)


def test_a_loss_chosen_by_name_is_not_the_model(tmp_path: Path) -> None:
    """`getattr(losses, config['loss'])(ignore_index=255)` names a loss; `getattr(models, config['arch']['type'])(...)`
    the model (yassouali/pytorch-segmentation): the model's name is the architecture's."""
    write(
        tmp_path,
        {
            "config.json": '{"arch": {"type": "SegNet", "args": {}}, "loss": "CrossEntropyLoss2d", "ignore_index": 255}',
            "models/__init__.py": "from .segnet import SegNet\n",
            "models/segnet.py": """
import torch.nn as nn
class SegNet(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv = nn.Conv2d(3, num_classes, 1)
""",
            "losses.py": """
import torch.nn as nn
class CrossEntropyLoss2d(nn.Module):
    def __init__(self, ignore_index=255):
        super().__init__()
""",
            "train.py": """
import argparse, json, torch
import models, losses
def get_instance(module, name, config, *args):
    return getattr(module, config[name]['type'])(*args, **config[name]['args'])
def main(config):
    model = get_instance(models, 'arch', config, 19)
    loss = getattr(losses, config['loss'])(ignore_index=config['ignore_index'])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-c', '--config', default='config.json', type=str)
    args = parser.parse_args()
    config = json.load(open(args.config))
    main(config)
""",
        },
    )
    assert extract_metadata(tmp_path, "python train.py --config config.json").model_name != "CrossEntropyLoss2d"


def test_layers_cast_to_half_one_by_one(tmp_path: Path) -> None:
    """airbench's `for mod in self.modules(): mod.float() if isinstance(mod, BatchNorm) else mod.half()`: the
    model's weights are fp16."""
    write(
        tmp_path,
        {
            "train.py": """
import torch, torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.norm = nn.BatchNorm2d(8)
        for mod in self.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.float()
            else:
                mod.half()
model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
        },
    )
    assert extract_metadata(tmp_path, "python train.py").precision == "fp16"
