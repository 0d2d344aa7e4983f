"""Code from before Python 3.7 (`x.cuda(async=True)`), a model built in a conditional expression, a builder function
named for a known architecture, classes named in lower case, absolute `sys.path` entries, a `getattr` on a tensor, and
a distillation teacher wrapped in `DataParallel` (round 36's misses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.advisor.extract.syntax import parse
from tests.repo_files import write

_RESNET = """
import torch.nn as nn
class ResNet(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3)
        self.fc = nn.Linear(width, 10)
def ResNet18():
    return ResNet(64)
"""
_KD = """
import argparse
import torch
import torch.nn as nn
import torch.optim as optim
import resnet
parser = argparse.ArgumentParser()
parser.add_argument('--lr', type=float, default=0.1)
parser.add_argument('--cuda', action='store_true')
params = parser.parse_args()

def train_kd(model, teacher_model, optimizer, dataloader):
    model.train()
    teacher_model.eval()
    for i, (train_batch, labels_batch) in enumerate(dataloader):
        train_batch, labels_batch = train_batch.cuda(async=True), \\
                                    labels_batch.cuda(async=True)
        loss = model(train_batch).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

model = resnet.ResNet18().cuda() if params.cuda else resnet.ResNet18()
optimizer = optim.SGD(model.parameters(), lr=params.lr, momentum=0.9)
teacher_model = resnet.ResNet18()
teacher_model = nn.DataParallel(teacher_model).cuda()
for epoch in range(175):
    train_kd(model, teacher_model, optimizer, [])
"""


def test_async_keyword_of_old_torch_reads_as_non_blocking() -> None:
    """`x.cuda(async=True)` (torch < 0.4; `async` is a keyword since Python 3.7) is read as the `non_blocking=True`
    torch renamed it to, continuation lines included, instead of losing the module."""
    tree = parse("a = b.cuda(async=True), \\\n    c.cuda(async=True)\nasync def f():\n    pass\n")
    assert "non_blocking=True" in __import__("ast").unparse(tree)


def test_an_old_script_with_a_model_in_a_conditional_and_a_frozen_teacher(tmp_path: Path) -> None:
    """knowledge-distillation-pytorch: the module parses despite `async=True`; `model = resnet.ResNet18().cuda() if
    params.cuda else resnet.ResNet18()` builds the same model either way (a builder function named for ResNet-18);
    the teacher is only run (`teacher_model.eval()`, never trained), so its `nn.DataParallel` leaves the student on
    one GPU."""
    write(tmp_path, {"resnet.py": _RESNET, "train.py": _KD})
    meta = extract_metadata(tmp_path, "python train.py --cuda")
    assert meta.model_name == "ResNet18"
    assert meta.params_millions == pytest.approx((3 * 64 * 9 + 64 + 640 + 10) / 1e6, rel=0.02)
    assert (meta.epochs, meta.learning_rate) == (175, pytest.approx(0.1))
    assert (meta.distributed, meta.num_gpus) == ("single_gpu", 1)


def test_a_trained_network_wrapped_in_data_parallel_still_counts(tmp_path: Path) -> None:
    """The same script with the student wrapped instead: the student's parameters reach the optimizer, so its
    `DataParallel` over every visible GPU is data parallelism."""
    student = _KD.replace("teacher_model = nn.DataParallel(teacher_model).cuda()", "model = nn.DataParallel(model)")
    write(tmp_path, {"resnet.py": _RESNET, "train.py": student})
    assert extract_metadata(tmp_path, "python train.py --cuda").distributed == "dp"


def test_classes_named_in_lower_case_are_the_model(tmp_path: Path) -> None:
    """pytorch-MNIST-CelebA-GAN-DCGAN: `class generator(nn.Module)` and `G = generator(input_size=100, n_class=784)`
    in a module-level script: a class of the script, whatever its case; the discriminator judges it."""
    write(
        tmp_path,
        {
            "gan.py": """
import torch
import torch.nn as nn
import torch.optim as optim
class generator(nn.Module):
    def __init__(self, input_size=32, n_class=10):
        super().__init__()
        self.fc1 = nn.Linear(input_size, 256)
        self.fc2 = nn.Linear(self.fc1.out_features, n_class)
class discriminator(nn.Module):
    def __init__(self, input_size=32, n_class=10):
        super().__init__()
        self.fc1 = nn.Linear(input_size, 64)
        self.fc2 = nn.Linear(self.fc1.out_features, n_class)
G = generator(input_size=100, n_class=28*28)
D = discriminator(input_size=28*28, n_class=1)
D_optimizer = optim.Adam(D.parameters(), lr=0.0002)
G_optimizer = optim.Adam(G.parameters(), lr=0.0002)
for epoch in range(100):
    for x_, _ in []:
        D_real = D(x_)
        D_fake = D(G(torch.randn(128, 100)))
        D_optimizer.step()
        G_result = G(torch.randn(128, 100))
        G_optimizer.step()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python gan.py")
    assert meta.model_name == "generator"
    assert meta.params_millions == pytest.approx((100 * 256 + 256 + 256 * 784 + 784) / 1e6, rel=0.02)
    assert meta.model_type == "mlp"


def test_an_absolute_sys_path_entry_is_the_workspace_folder_its_tail_names(tmp_path: Path) -> None:
    """fregu856/deeplabv3 appends `/root/deeplabv3/model` (where its author kept the repository) before `from
    deeplabv3 import DeepLabV3`: the tail `model` is the repository's folder, so the class is found and counted; a
    tail the repository does not have adds nothing."""
    write(
        tmp_path,
        {
            "model/deeplabv3.py": """
import torch.nn as nn
class DeepLabV3(nn.Module):
    def __init__(self, model_id):
        super().__init__()
        self.conv = nn.Conv2d(3, 20, 1)
""",
            "train.py": """
import sys
sys.path.append("/root/deeplabv3/model")
sys.path.append("/usr/lib/python3/dist-packages")
from deeplabv3 import DeepLabV3
import torch
network = DeepLabV3("1").cuda()
optimizer = torch.optim.Adam(network.parameters(), lr=0.0001)
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.model_name is not None and "DeepLabV3" in meta.model_name
    assert meta.params_millions == pytest.approx(80 / 1e6, rel=0.02)


def test_getattr_on_a_tensor_names_no_model(tmp_path: Path) -> None:
    """wide-residual-networks' `cast(params, dtype)`: `getattr(params.cuda() if … else params, dtype)()` converts a
    tensor to `float`; only a namespace (`getattr(models, args.arch)()`) picks a constructor by name."""
    write(
        tmp_path,
        {
            "utils.py": """
import torch
def cast(params, dtype='float'):
    return getattr(params.cuda() if torch.cuda.is_available() else params, dtype)()
""",
            "main.py": """
import argparse
from utils import cast
parser = argparse.ArgumentParser()
parser.add_argument('--dtype', default='float', type=str)
opt = parser.parse_args()
for sample in []:
    inputs = cast(sample[0], opt.dtype)
""",
        },
    )
    assert extract_metadata(tmp_path, "python main.py").model_name != "float"
