"""Registry entries bound to a name, literal_eval'd settings, layer-building lambdas and classes held by the model,
DataParallel inside the model, per-GPU batches times an unknown GPU count, and trainers' train(model) (round 25's
misses)."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_CIFAR_RESNET = """
import torch.nn as nn
__all__ = ["resnet"]
class ResNet_cifar(nn.Module):
    def __init__(self, num_classes=10, depth=20, width=16):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(width, width, 3, bias=False) for _ in range(depth)])
        self.fc = nn.Linear(width, num_classes)
    criterion = nn.CrossEntropyLoss

def resnet(**config):
    dataset = config.pop("dataset", "imagenet")
    if dataset == "cifar10":
        config.setdefault("num_classes", 10)
        return ResNet_cifar(**config)
"""


def test_a_registry_entry_bound_to_a_name_and_a_literal_eval_config(tmp_path: Path) -> None:
    """`model = models.__dict__[args.model]`, `model_config = dict(model_config, **literal_eval(args.model_config))`,
    `model = model(**model_config)`: the class the entry builds, counted with the config the command gives; the
    loss `getattr(model, 'criterion', CrossEntropyLoss)()` is not the model."""
    root = write(
        tmp_path,
        {
            "models/__init__.py": "from .resnet import *\n",
            "models/resnet.py": _CIFAR_RESNET,
            "main.py": """
import argparse
from ast import literal_eval
import torch
import models
from torch.nn import CrossEntropyLoss
p = argparse.ArgumentParser()
p.add_argument("--model", default="alexnet")
p.add_argument("--model-config", default="")
p.add_argument("--dataset", default="imagenet")
args = p.parse_args()
model = models.__dict__[args.model]
model_config = {"dataset": args.dataset}
if args.model_config != "":
    model_config = dict(model_config, **literal_eval(args.model_config))
model = model(**model_config)
criterion = getattr(model, "criterion", CrossEntropyLoss)()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
""",
        },
    )
    meta = extract_metadata(root, "python main.py --dataset cifar10 --model resnet --model-config \"{'depth': 44}\"")
    assert (meta.model_name or "").lower().startswith("resnet")
    assert meta.params_millions is not None
    assert abs(meta.params_millions - (44 * 16 * 16 * 9 + 16 * 10 + 10) / 1e6) < 1e-3


_DEEPLAB = """
import torch.nn as nn
class ASPP(nn.Module):
    def __init__(self, C, depth, num_classes, conv=nn.Conv2d, norm=nn.BatchNorm2d):
        super().__init__()
        self.aspp1 = conv(C, depth, kernel_size=1, bias=False)
        self.aspp1_bn = norm(depth, 0.0003)
        self.aspp2 = conv(C, depth, kernel_size=3, bias=False)
        self.aspp2_bn = norm(depth, 0.0003)
        self.conv3 = nn.Conv2d(depth, num_classes, kernel_size=1)
    def forward(self, x):
        a1, a2 = self.aspp1_bn(self.aspp1(x)), self.aspp2_bn(self.aspp2(x))
        return self.conv3(self.aspp1_bn(a1) + self.aspp2_bn(a2)) + self.aspp1(x) + self.aspp2(x)

class ResNet(nn.Module):
    def __init__(self, num_classes, num_groups=None, weight_std=False):
        self.norm = lambda planes, momentum=0.05: nn.BatchNorm2d(planes, momentum=momentum) if num_groups is None \\
            else nn.GroupNorm(num_groups, planes)
        self.conv = nn.Conv2d
        super().__init__()
        self.conv1 = self.conv(3, 64, kernel_size=7, bias=False)
        self.bn1 = self.norm(64)
        self.aspp = ASPP(64, 32, num_classes, conv=self.conv, norm=self.norm)

def resnet101(pretrained=False, **kwargs):
    return ResNet(**kwargs)
"""


def test_layer_building_lambdas_classes_the_model_holds_and_a_literal_getattr(tmp_path: Path) -> None:
    """`self.norm = lambda planes: nn.BatchNorm2d(planes) …` and `self.conv = nn.Conv2d`, handed on to an ASPP head,
    built by `getattr(deeplab, 'resnet101')(...)`: every layer counts, and DeepLab's ASPP head with a 255 void label
    is segmentation."""
    uses = "\n".join(f"aspp_rate_{i} = {i}  # aspp" for i in range(8))
    root = write(
        tmp_path,
        {
            "deeplab.py": _DEEPLAB,
            "main.py": f"""
import argparse
import torch
import torch.nn as nn
import deeplab
{uses}
p = argparse.ArgumentParser()
p.add_argument("--base_lr", type=float, default=0.00025)
args = p.parse_args()
model = getattr(deeplab, "resnet101")(pretrained=False, num_classes=21)
criterion = nn.CrossEntropyLoss(ignore_index=255)
model = nn.DataParallel(model).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=args.base_lr)
""",
        },
    )
    meta = extract_metadata(root, "python main.py --base_lr 0.007")
    bn = lambda c: 2 * c  # noqa: E731  (weight and bias)
    want = 3 * 64 * 49 + bn(64) + 64 * 32 + bn(32) + 64 * 32 * 9 + bn(32) + 32 * 21 + 21
    assert meta.params_millions is not None
    assert abs(meta.params_millions - want / 1e6) < 1e-3
    assert meta.task == "semantic_segmentation"


def test_data_parallel_inside_the_model_and_a_batch_times_the_gpus(tmp_path: Path) -> None:
    """The model wraps its own encoder (`self.encoder = nn.DataParallel(self.encoder)`) and plain `python` runs it on
    4 visible GPUs: one process, DataParallel; a loader of `batch_size * number_gpus` (a count the script reads at run
    time) hands each GPU `batch_size`. A wrap under `if len(gpu_ids) > 0:` in a helper decides nothing."""
    root = write(
        tmp_path,
        {
            "models.py": """
import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Conv2d(3, 8, 3)
class TwoViews(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.encoder = nn.DataParallel(self.encoder)
""",
            "train.py": """
import argparse
import torch
from models import TwoViews
p = argparse.ArgumentParser()
p.add_argument("--batch_size", type=int, default=8)
p.add_argument("--number_gpus", type=int, default=-1)
args = p.parse_args()
if args.number_gpus < 0:
    args.number_gpus = torch.cuda.device_count()
args.effective_batch_size = args.batch_size * args.number_gpus
model = TwoViews().cuda()
loader = torch.utils.data.DataLoader(ds, batch_size=args.effective_batch_size)
optimizer = torch.optim.SGD(model.parameters(), lr=0.03)
""",
        },
    )
    meta = extract_metadata(root, "CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py")
    assert (meta.distributed, meta.num_gpus, meta.batch_size_per_device) == ("dp", 4, 8)
    (root / "models.py").write_text(
        (root / "models.py")
        .read_text()
        .replace(
            "        self.encoder = nn.DataParallel",
            "        if len(gpu_ids) > 0:\n            self.encoder = nn.DataParallel",
        )
    )
    assert extract_metadata(root, "CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py").distributed != "dp"


def test_a_trainer_objects_train_takes_the_model_and_sintel_is_known(tmp_path: Path) -> None:
    """`t = SupervisedTrainer(...)` then `t.train(seq2seq, data)`: the module handed to a trainer's train() is the
    model (whatever its variable is called); `--training_dataset MpiSintelFinal` names MPI Sintel."""
    root = write(
        tmp_path,
        {
            "s2s/models.py": """
import torch.nn as nn
class Seq2seq(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder
""",
            "s2s/__init__.py": "",
            "sample.py": """
import argparse
from s2s.models import Seq2seq
from s2s.trainer import SupervisedTrainer
p = argparse.ArgumentParser()
p.add_argument("--training_dataset", default="FlyingChairs")
args = p.parse_args()
seq2seq = Seq2seq(encoder, decoder)
t = SupervisedTrainer(batch_size=32)
seq2seq = t.train(seq2seq, train, num_epochs=6)
""",
        },
    )
    meta = extract_metadata(root, "python sample.py --training_dataset MpiSintelFinal")
    assert meta.model_name == "Seq2seq"
    assert meta.dataset == "MPI Sintel"
