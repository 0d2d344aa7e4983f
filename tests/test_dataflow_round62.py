"""Round 62's misses, as mechanisms: a library's trainer-argument subclass (``SentenceTransformerTrainingArguments``)
and model class loaded by Hub name (``SentenceTransformer(model_name)``, the name from ``sys.argv``); the training
split of several ``load_dataset`` calls; a module chosen at run time (``importlib.import_module(args.model)``) whose
``get_model`` builds the network; a YOLO repository's bare hyper-parameter file name found by its globbing
``check_yaml``, its ``Model(cfg)`` built from the YAML's layer names (``eval``, item assignment, ``suppress``,
membership and ``isinstance`` among the job's classes, a forward-pass probe), named by the config file, and the GPUs
its ``select_device(opt.device)`` makes visible; a loader's ``param_dtype``; a base config's unused ``lora_rank``."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_NLI = """
import sys
from datasets import load_dataset
from sentence_transformers import SentenceTransformer, losses
from sentence_transformers.trainer import SentenceTransformerTrainer
from sentence_transformers.training_args import SentenceTransformerTrainingArguments

model_name = sys.argv[1] if len(sys.argv) > 1 else "bert-base-uncased"
train_batch_size = 16
model = SentenceTransformer(model_name)
train_dataset = load_dataset("sentence-transformers/all-nli", "pair-class", split="train")
eval_dataset = load_dataset("sentence-transformers/all-nli", "pair-class", split="dev")
stsb_eval_dataset = load_dataset("sentence-transformers/stsb", split="validation")
train_loss = losses.SoftmaxLoss(model=model, num_labels=3)
args = SentenceTransformerTrainingArguments(
    output_dir="output",
    num_train_epochs=1,
    per_device_train_batch_size=train_batch_size,
    fp16=True,
    bf16=False,
)
trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=train_dataset, loss=train_loss)
trainer.train()
"""


def test_sentence_transformers_trainer_and_model_by_name(tmp_path: Path) -> None:
    """A sentence-transformers job: the model is the Hub checkpoint `SentenceTransformer(name)` loads, the name
    `sys.argv[1]` or its default; the library's `…TrainingArguments` gives batch, epochs, fp16 and HF's default rate;
    its trainer is an HF Trainer; the data is the split trained on, not the evaluation sets loaded after it."""
    root = write(tmp_path, {"training_nli.py": _NLI})
    meta = extract_metadata(root, "python training_nli.py")
    assert meta.model_name == "bert-base-uncased"
    assert meta.params_millions is not None and abs(meta.params_millions - 110) < 5
    assert meta.dataset == "sentence-transformers/all-nli"
    assert (meta.batch_size_per_device, meta.epochs, meta.learning_rate) == (16, 1, 5e-5)
    assert meta.precision == "fp16"
    assert meta.framework == ["HF Trainer", "Sentence Transformers"]
    other = extract_metadata(root, "python training_nli.py distilbert-base-uncased")
    assert other.model_name == "distilbert-base-uncased"


_CLS = """
import argparse
import importlib
import os
import sys
import torch

BASE_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.join(BASE_DIR, 'models'))


def parse_args():
    parser = argparse.ArgumentParser('training')
    parser.add_argument('--model', default='small_cls', help='model name')
    parser.add_argument('--num_category', default=40, type=int)
    parser.add_argument('--batch_size', type=int, default=24)
    return parser.parse_args()


def test(model, loader):
    classifier = model.eval()
    return classifier


def main(args):
    model = importlib.import_module(args.model)
    classifier = model.get_model(args.num_category).cuda()
    optimizer = torch.optim.Adam(classifier.parameters(), lr=0.001)


if __name__ == '__main__':
    main(parse_args())
"""
_SMALL = """
import torch.nn as nn


class get_model(nn.Module):
    def __init__(self, num_class):
        super(get_model, self).__init__()
        self.fc = nn.Linear(64, num_class)
"""
_BIG = _SMALL.replace("nn.Linear(64, num_class)", "nn.Linear(1024, num_class)")


def test_network_of_a_module_imported_by_a_setting(tmp_path: Path) -> None:
    """`MODEL = importlib.import_module(args.model)` then `MODEL.get_model(n)`: the module the setting names (on the
    path the script appends) builds the network, counted per choice; a `model.eval()` of another function's
    parameter named `model` is not it."""
    root = write(tmp_path, {"train_cls.py": _CLS, "models/small_cls.py": _SMALL, "models/big_cls.py": _BIG})
    small = extract_metadata(root, "python train_cls.py --model small_cls")
    assert small.params_millions is not None and abs(small.params_millions / ((64 * 40 + 40) / 1e6) - 1) < 0.01
    big = extract_metadata(root, "python train_cls.py --model big_cls --num_category 10")
    assert big.params_millions is not None and abs(big.params_millions / ((1024 * 10 + 10) / 1e6) - 1) < 0.01


_YOLO_TRAIN = """
import argparse
import yaml
import torch
from models.yolo import Model
from utils.general import check_yaml
from utils.torch_utils import select_device


def train(hyp, opt, device):
    if isinstance(hyp, str):
        with open(hyp, errors='ignore') as f:
            hyp = yaml.safe_load(f)
    cfg = opt.cfg
    model = Model(cfg, ch=3, nc=None, anchors=hyp.get('anchors')).to(device)
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=hyp['lr0'], momentum=0.9)


def main(opt):
    opt.cfg, opt.hyp = check_yaml(opt.cfg), check_yaml(opt.hyp)
    device = select_device(opt.device)
    train(opt.hyp, opt, device)


def parse_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument('--cfg', type=str, default='yolo.yaml')
    parser.add_argument('--hyp', type=str, default='data/hyps/hyp.scratch-low.yaml')
    parser.add_argument('--device', default='')
    return parser.parse_args()


if __name__ == '__main__':
    opt = parse_opt()
    main(opt)
"""
_YOLO_MODEL = """
import contextlib
from copy import deepcopy
import torch
import torch.nn as nn
from models.common import *


class Detect(nn.Module):
    def __init__(self, nc=80, ch=()):
        super().__init__()
        self.nc = nc
        self.cv = nn.ModuleList(nn.Conv2d(x, max((self.nc, 16)), 1) for x in ch)
        self.dfl = DFL(4)


class DualDetect(Detect):
    pass


class DetectionModel(nn.Module):
    def __init__(self, cfg='yolo.yaml', ch=3, nc=None, anchors=None):
        super().__init__()
        import yaml
        with open(cfg, encoding='ascii', errors='ignore') as f:
            self.yaml = yaml.safe_load(f)
        if anchors:
            self.yaml['anchors'] = round(anchors)
        self.model = parse_model(deepcopy(self.yaml), ch=[ch])
        m = self.model[-1]
        if isinstance(m, (Detect,)):
            forward = lambda x: self.forward(x)
            m.stride = torch.tensor([256 / x.shape[-2] for x in forward(torch.zeros(1, ch, 256, 256))])
        if isinstance(m, (DualDetect,)):
            m.stride = None


Model = DetectionModel


def parse_model(d, ch):
    nc = d['nc']
    layers = []
    for i, (f, n, m, args) in enumerate(d['backbone'] + d['head']):
        m = eval(m) if isinstance(m, str) else m
        for j, a in enumerate(args):
            with contextlib.suppress(NameError):
                args[j] = eval(a) if isinstance(a, str) else a
        if m in {Conv, nn.ConvTranspose2d}:
            c1, c2 = ch[f], args[0]
            args = [c1, c2, *args[1:]]
        elif m in {Detect, DualDetect}:
            args.append([ch[x] for x in f])
        layers.append(m(*args))
        ch.append(c2)
    return nn.Sequential(*layers)
"""
_YOLO_COMMON = """
import torch
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self, c1, c2, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, bias=False)
        self.bn = nn.BatchNorm2d(c2)


class DFL(nn.Module):
    def __init__(self, c1=16):
        super().__init__()
        self.conv = nn.Conv2d(c1, 1, 1, bias=False).requires_grad_(False)
        self.conv.weight.data[:] = nn.Parameter(torch.arange(c1, dtype=torch.float).view(1, c1, 1, 1))
"""
_YOLO_GENERAL = """
import glob
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def check_yaml(file, suffix=('.yaml', '.yml')):
    return check_file(file, suffix)


def check_file(file, suffix=''):
    file = str(file)
    if os.path.isfile(file) or not file:
        return file
    files = []
    for d in 'data', 'models', 'utils':
        files.extend(glob.glob(str(ROOT / d / '**' / file), recursive=True))
    assert len(files), f'File not found: {file}'
    return files[0]
"""
_YOLO_TORCH = """
import os
import torch


def select_device(device='', batch_size=0):
    device = str(device).strip().lower().replace('cuda:', '').replace('none', '')
    cpu = device == 'cpu'
    if cpu:
        os.environ['CUDA_VISIBLE_DEVICES'] = '-1'
    elif device:
        os.environ['CUDA_VISIBLE_DEVICES'] = device
    return torch.device('cuda:0' if not cpu else 'cpu')
"""
_YOLO_CFG = """
nc: 80
backbone:
  [[-1, 1, Conv, [16, 3, 2]],
   [-1, 1, Conv, [32, 3, 2]]]
head:
  [[[1], 1, Detect, [nc]]]
"""


def test_yolo_model_from_its_yaml_and_a_hyp_file_found_by_name(tmp_path: Path) -> None:
    """YOLO: `--hyp hyp.scratch-high.yaml` names a file `check_yaml` finds by globbing the repository (its lr0 is the
    rate); `Model(cfg)` is built from the YAML's layer names and counted; the model is named by the config file;
    `select_device('0')` makes one GPU visible, so no DataParallel, one GPU."""
    root = write(
        tmp_path,
        {
            "train.py": _YOLO_TRAIN,
            "models/__init__.py": "",
            "models/yolo.py": _YOLO_MODEL,
            "models/common.py": _YOLO_COMMON,
            "models/detect/gelan-t.yaml": _YOLO_CFG,
            "utils/__init__.py": "",
            "utils/general.py": _YOLO_GENERAL,
            "utils/torch_utils.py": _YOLO_TORCH,
            "data/hyps/hyp.scratch-high.yaml": "lr0: 0.02\nmomentum: 0.937\n",
        },
    )
    cmd = "python train.py --device 0 --cfg models/detect/gelan-t.yaml --hyp hyp.scratch-high.yaml"
    meta = extract_metadata(root, cmd)
    assert meta.learning_rate == 0.02
    conv1, conv2 = 3 * 16 * 9 + 2 * 16, 16 * 32 * 9 + 2 * 32
    head, dfl = 16 * 80 + 80, 4  # (the head reads layer 1 of `ch`, whose first entry is the input)
    assert (
        meta.params_millions is not None and abs(meta.params_millions / ((conv1 + conv2 + head + dfl) / 1e6) - 1) < 0.01
    )
    assert meta.model_name == "gelan-t"
    assert (meta.distributed, meta.num_gpus) == ("single_gpu", 1)


_LOADER = """
import torch
from torch.optim import AdamW
from finetune.wrapped_model import load_model


def train():
    param_dtype = torch.bfloat16
    model = load_model(folder="model", param_dtype=param_dtype)
    optimizer = AdamW(model.parameters(), lr=6e-5)


train()
"""
_WRAPPED = """
import torch.nn as nn


def load_model(folder, param_dtype):
    model = nn.Linear(8, 8)
    return model.to(param_dtype)
"""


def test_weights_loaded_in_the_param_dtype_train_in_it(tmp_path: Path) -> None:
    """`load_model(..., param_dtype=torch.bfloat16)` (mistral-finetune; FSDP's `MixedPrecision(param_dtype=…)` reads
    the same): the trained weights compute in bf16."""
    root = write(tmp_path, {"train.py": _LOADER, "finetune/__init__.py": "", "finetune/wrapped_model.py": _WRAPPED})
    assert extract_metadata(root, "python train.py").precision == "bf16"
    fp32 = write(tmp_path / "b", {"train.py": _LOADER.replace("torch.bfloat16", "torch.float32"),
                                  "finetune/__init__.py": "", "finetune/wrapped_model.py": _WRAPPED})  # fmt: skip
    assert extract_metadata(fp32, "python train.py").precision == "fp32"


_PIX_BASE = """
model = 'Net_XL'
lora_rank = 4
data = dict(type='SAM', root='images')
train_batch_size = 32
"""
_PIX_CFG = """
_base_ = ['../base.py']
train_batch_size = 8
"""
_PIX_TRAIN = """
import argparse
import torch
from mmcv import Config
from diffusion.model.builder import build_model

parser = argparse.ArgumentParser()
parser.add_argument('config')
args = parser.parse_args()
config = Config.fromfile(args.config)
model = build_model(config.model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
loader = torch.utils.data.DataLoader(dataset, batch_size=config.train_batch_size)
"""


def test_mmcv_config_data_type_and_an_unused_lora_rank(tmp_path: Path) -> None:
    """An mmcv Python config over a base (`data = dict(type='SAM', ...)`: the data's type names it); the base's
    `lora_rank = 4` that the entry never reads builds no adapters: the model is not called a LoRA fine-tune."""
    root = write(
        tmp_path,
        {"train.py": _PIX_TRAIN, "configs/base.py": _PIX_BASE, "configs/run/net.py": _PIX_CFG},
    )
    meta = extract_metadata(root, "python train.py configs/run/net.py")
    assert meta.dataset == "SAM"
    assert meta.batch_size_per_device == 8
    assert meta.model_name is None or "LoRA" not in meta.model_name


_ENET = """
import torch
import torch.nn as nn
from models.enet import ENet
from data import load_classes

class_encoding = load_classes()
num_classes = len(class_encoding)
model = ENet(num_classes).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
"""
_ENET_MODEL = """
import torch.nn as nn


class ENet(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.initial = nn.Conv2d(3, 16, 3, bias=False)
        self.fullconv = nn.ConvTranspose2d(16, num_classes, kernel_size=3, stride=2, padding=1, bias=False)
"""


def test_a_class_count_read_from_the_data_given_positionally(tmp_path: Path) -> None:
    """`ENet(num_classes)` with `num_classes = len(class_encoding)` known only at run time: counted with a small
    stand-in class count (the output layer is a small share), as a keyword class count already was."""
    root = write(tmp_path, {"main.py": _ENET, "models/__init__.py": "", "models/enet.py": _ENET_MODEL, "data.py": ""})
    meta = extract_metadata(root, "python main.py")
    assert meta.params_millions is not None
    assert 3 * 16 * 9 / 1e6 < meta.params_millions < (3 * 16 * 9 + 16 * 100 * 9) / 1e6


def test_an_installed_training_cli_with_its_defaults(tmp_path: Path) -> None:
    """Ultralytics' `yolo train ...` runs no script of the job's: its documented defaults fill what the command
    leaves out (batch 16 in total, AMP), a device list starts one process per device with the batch divided among
    them, and `optimizer=auto` ignores `lr0` (the rate is chosen at run time), an explicit optimizer keeps it."""
    meta = extract_metadata(tmp_path, "yolo train model=yolov8n.pt data=coco8.yaml epochs=10")
    assert (meta.batch_size_per_device, meta.global_batch_size, meta.epochs) == (16, 16, 10)
    assert (meta.precision, meta.distributed, meta.num_gpus, meta.learning_rate) == ("fp16", "single_gpu", 1, None)
    assert meta.dataset == "COCO8"
    ddp = extract_metadata(tmp_path, "yolo train model=yolov8m.pt data=coco.yaml optimizer=SGD lr0=0.02 device=0,1,2,3")
    assert (ddp.batch_size_per_device, ddp.global_batch_size) == (4, 16)
    assert (ddp.distributed, ddp.num_gpus, ddp.learning_rate) == ("ddp", 4, 0.02)
    auto = extract_metadata(tmp_path, "yolo train model=yolov8m.pt data=coco.yaml lr0=0.02")
    assert auto.learning_rate is None
