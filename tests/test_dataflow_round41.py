"""Round 41's misses, as mechanisms: a rate written only in an arm the settings rule out, devices a script makes
visible to itself from its config module, a factory that returns its model wrapped in DataParallel, a class chosen by
``getattr(module, args.net)``, a CNN whose fully connected layers hold most weights, a schedule's decay step in the
epoch loop, and a setting that picks one of the datasets the code branches on."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write


def test_the_default_rate_stands_when_the_schedule_writes_only_for_another_optimizer(tmp_path: Path) -> None:
    """densenet.pytorch: `--opt adam` builds `optim.Adam(net.parameters(), weight_decay=1e-4)` (its default rate
    1e-3); `adjust_opt(args.opt, optimizer, epoch)` writes `param_group['lr']` only `if optAlg == 'sgd'`."""
    write(
        tmp_path,
        {
            "train.py": """
import argparse
import torch
from torch import optim
def adjust_opt(optAlg, optimizer, epoch):
    if optAlg == 'sgd':
        lr = 1e-1 if epoch < 150 else 1e-2
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--nEpochs', type=int, default=300)
    parser.add_argument('--opt', type=str, default='sgd', choices=('sgd', 'adam'))
    args = parser.parse_args()
    net = torch.nn.Conv2d(3, 8, 3)
    if args.opt == 'sgd':
        optimizer = optim.SGD(net.parameters(), lr=1e-1, momentum=0.9)
    elif args.opt == 'adam':
        optimizer = optim.Adam(net.parameters(), weight_decay=1e-4)
    for epoch in range(1, args.nEpochs + 1):
        adjust_opt(args.opt, optimizer, epoch)
        loss = net(torch.zeros(1, 3, 8, 8)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
if __name__ == '__main__':
    main()
""",
        },
    )
    assert extract_metadata(tmp_path, "python train.py --opt adam").learning_rate == pytest.approx(1e-3)


def test_devices_a_script_makes_visible_from_its_config_module(tmp_path: Path) -> None:
    """WS-DAN: `os.environ['CUDA_VISIBLE_DEVICES'] = config.GPU` with `GPU = '0'` in `config.py`: one device is
    visible, so `if torch.cuda.device_count() > 1: net = nn.DataParallel(net)` never runs: one GPU, no DataParallel."""
    write(
        tmp_path,
        {
            "config.py": "GPU = '0'\nbatch_size = 12\nepochs = 160\n",
            "train.py": """
import os
import torch
from torch import nn
import config
os.environ['CUDA_VISIBLE_DEVICES'] = config.GPU
device = torch.device("cuda")
def main():
    net = nn.Conv2d(3, 8, 3).to(device)
    if torch.cuda.device_count() > 1:
        net = nn.DataParallel(net)
    loader = torch.utils.data.DataLoader(range(10), batch_size=config.batch_size)
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-3)
    for epoch in range(config.epochs):
        for x in loader:
            loss = net(x).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
if __name__ == '__main__':
    main()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert (meta.distributed, meta.num_gpus) == ("single_gpu", 1)


def test_a_factory_that_returns_its_model_wrapped_in_data_parallel(tmp_path: Path) -> None:
    """pytorch-randaugment: `get_model(conf, num_class)` builds `WideResNet(...)` in an `if` chain on `conf['type']`
    and returns `DataParallel(model.cuda())`: the wrapped module names and sizes the model (torch's count)."""
    wrn = """
from torch import nn
class WideResNet(nn.Module):
    def __init__(self, depth, widen_factor, num_classes=10):
        super().__init__()
        self.conv = nn.Conv2d(3, 16 * widen_factor, 3)
        self.fc = nn.Linear(16 * widen_factor, num_classes)
"""
    write(
        tmp_path,
        {
            "nets/__init__.py": """
from torch.nn.parallel.data_parallel import DataParallel
from nets.wrn import WideResNet
def get_model(conf, num_class=10):
    name = conf['type']
    if name == 'wresnet40_2':
        model = WideResNet(40, 2, num_classes=num_class)
    elif name == 'wresnet28_10':
        model = WideResNet(28, 10, num_classes=num_class)
    else:
        raise NameError(name)
    model = model.cuda()
    model = DataParallel(model)
    return model
""",
            "nets/wrn.py": wrn,
            "train.py": """
import torch
from nets import get_model
conf = {'type': 'wresnet28_10'}
model = get_model(conf, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(200):
    loss = model(torch.zeros(1, 3, 8, 8)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.model_name == "WideResNet"
    assert meta.params_millions == pytest.approx((3 * 160 * 9 + 160 + 160 * 10 + 10) / 1e6, abs=0.001)


def test_a_class_chosen_by_a_setting_through_getattr_with_a_schedule_step_in_the_epoch_loop(tmp_path: Path) -> None:
    """sphereface_pytorch: `net = getattr(net_sphere, args.net)()` builds `sphere20a`, a CNN whose fully connected
    layers hold most of its weights (still a CNN); `if epoch in [0, 10]: if epoch != 0: args.lr *= 0.1` then
    `optim.SGD(..., lr=args.lr)` in the epoch loop: the job starts at 0.1 (the decay is a later pass's)."""
    write(
        tmp_path,
        {
            "net_sphere.py": """
from torch import nn
class sphere20a(nn.Module):
    def __init__(self, classnum=100):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, 2, 1)
        self.fc5 = nn.Linear(64 * 7 * 6, 512)
        self.fc6 = nn.Linear(512, classnum)
""",
            "train.py": """
import argparse
import torch
import torch.optim as optim
import net_sphere
parser = argparse.ArgumentParser()
parser.add_argument('--net', '-n', default='sphere20a', type=str)
parser.add_argument('--lr', default=0.1, type=float)
args = parser.parse_args()
net = getattr(net_sphere, args.net)()
net.cuda()
for epoch in range(0, 20):
    if epoch in [0, 10, 15, 18]:
        if epoch != 0:
            args.lr *= 0.1
        optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)
    loss = net(torch.zeros(1, 3, 8, 8)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.model_type == "cnn"
    assert meta.params_millions == pytest.approx((3 * 64 * 9 + 64 + 2688 * 512 + 512 + 512 * 100 + 100) / 1e6, abs=0.05)
    assert meta.learning_rate == pytest.approx(0.1)


def test_a_setting_picks_one_of_the_datasets_the_code_branches_on(tmp_path: Path) -> None:
    """pytorch-playground: `--type cifar10` (default) and `if args.type == 'cifar10': … elif args.type ==
    'cifar100': …`: the setting says which of the two datasets the code names is trained on."""
    write(
        tmp_path,
        {
            "train.py": """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument('--type', default='cifar10', help='cifar10|cifar100')
args = parser.parse_args()
if args.type == 'cifar10':
    num_classes = 10
elif args.type == 'cifar100':
    num_classes = 100
model = torch.nn.Linear(8, num_classes)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(150):
    loss = model(torch.zeros(8)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        },
    )
    assert extract_metadata(tmp_path, "python train.py").dataset == "CIFAR-10"
    assert extract_metadata(tmp_path, "python train.py --type cifar100").dataset == "CIFAR-100"


def test_a_harness_perceptual_loss_network_is_not_counted_with_the_model(tmp_path: Path) -> None:
    """pix2pixHD (an earlier set, shown once DataParallel no longer hid its harness): `Pix2PixHDModel` holds `netG`,
    `netD` and `criterionVGG = VGGLoss()`, whose `Vgg19` takes torchvision's pretrained VGG-19 apart for a perceptual
    loss; the loss's network is not trained with the model: the count is the generator's and discriminator's."""
    write(
        tmp_path,
        {
            "losses.py": """
import torch.nn as nn
from torchvision import models
class Vgg19(nn.Module):
    def __init__(self):
        super().__init__()
        features = models.vgg19(pretrained=True).features
        self.slice1 = nn.Sequential()
        for x in range(2):
            self.slice1.add_module(str(x), features[x])
class VGGLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.vgg = Vgg19()
        self.criterion = nn.L1Loss()
""",
            "nets.py": """
import torch.nn as nn
from losses import VGGLoss
class Harness(nn.Module):
    def __init__(self):
        super().__init__()
        self.netG = nn.Linear(100, 1000)
        self.netD = nn.Linear(1000, 1)
        self.criterionVGG = VGGLoss()
""",
            "train.py": """
import torch
from nets import Harness
def create_model():
    model = Harness()
    return torch.nn.DataParallel(model)
model = create_model()
optimizer_G = torch.optim.Adam(model.module.netG.parameters(), lr=2e-4)
for epoch in range(200):
    loss = model.module.netG(torch.zeros(100)).sum()
    optimizer_G.zero_grad()
    loss.backward()
    optimizer_G.step()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.params_millions == pytest.approx((100 * 1000 + 1000 + 1000 + 1) / 1e6, abs=0.005)
