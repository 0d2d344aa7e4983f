"""torchvision's models taken apart, their heads replaced, their class counts set: counted from what the job keeps.

Expected counts are torchvision's own (``sum(p.numel() for p in model.parameters())`` with torchvision 0.29)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.known import known_model
from schedmate.agents.advisor.extract.library_modules import library_module
from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_TRAIN = """
optimizer = torch.optim.SGD({module}.parameters(), lr=0.01)
loader = torch.utils.data.DataLoader(None, batch_size=32)
"""


def _params(tmp_path: Path, code: str, module: str = "model") -> float | None:
    write(tmp_path, {"train.py": code + _TRAIN.format(module=module)})
    return extract_metadata(tmp_path, "python train.py").params_millions


def test_simclr_keeps_the_children_it_wants(tmp_path: Path) -> None:
    """`for name, module in resnet50().named_children()`, a CIFAR stem in place of conv1, the Linear head and the
    max pool left out (leftthomas/SimCLR): 25,557,032 - 9,408 (conv1) + 1,728 (3x3 stem) - 2,049,000 (fc), plus the
    projection head. Before, the library model was one opaque size and the loop was skipped: 1.1 M."""
    code = """
import torch, torchvision
import torch.nn as nn
class Model(nn.Module):
    def __init__(self, feature_dim=128):
        super().__init__()
        self.f = []
        for name, module in torchvision.models.resnet50().named_children():
            if name == 'conv1':
                module = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
            if not isinstance(module, nn.Linear) and not isinstance(module, nn.MaxPool2d):
                self.f.append(module)
        self.f = nn.Sequential(*self.f)
        self.g = nn.Sequential(nn.Linear(2048, 512, bias=False), nn.BatchNorm1d(512), nn.ReLU(inplace=True),
                               nn.Linear(512, feature_dim, bias=True))
model = Model().cuda()
"""
    head = 2048 * 512 + 2 * 512 + 512 * 128 + 128
    want = (25_557_032 - 9_408 + 1_728 - 2_049_000 + head) / 1e6
    assert _params(tmp_path, code) == pytest.approx(want, abs=0.06)


def test_the_transfer_learning_tutorial(tmp_path: Path) -> None:
    """`model = models.resnet18(weights=...)`, then `model.fc = nn.Linear(model.fc.in_features, 2)` in the script:
    a library builder is the model the optimizer trains, and the head it swaps counts instead of the old one
    (11,176,512 + 1,026). Before, a lower-case builder was not taken for the model at all."""
    code = """
import torch
import torch.nn as nn
from torchvision import models
model = models.resnet18(weights='IMAGENET1K_V1')
num_ftrs = model.fc.in_features
model.fc = nn.Linear(num_ftrs, 2)
model = model.to('cuda')
"""
    assert _params(tmp_path, code) == pytest.approx(11.2)
    write(tmp_path, {"train.py": code + _TRAIN.format(module="model")})
    assert extract_metadata(tmp_path, "python train.py").model_name == "resnet18"


def test_children_but_the_last(tmp_path: Path) -> None:
    """`nn.Sequential(*list(resnet.children())[:-1])` and a new Linear on `resnet.fc.in_features` (the image
    captioning encoder): resnet152 without its 2,049,000-parameter head."""
    code = """
import torch
import torch.nn as nn
import torchvision.models as models
class EncoderCNN(nn.Module):
    def __init__(self, embed_size):
        super().__init__()
        resnet = models.resnet152(pretrained=True)
        modules = list(resnet.children())[:-1]
        self.resnet = nn.Sequential(*modules)
        self.linear = nn.Linear(resnet.fc.in_features, embed_size)
        self.bn = nn.BatchNorm1d(embed_size, momentum=0.01)
model = EncoderCNN(256)
"""
    want = (60_192_808 - 2_049_000 + 2048 * 256 + 256 + 512) / 1e6
    assert _params(tmp_path, code) == pytest.approx(want, abs=0.06)


def test_a_class_count_sizes_the_head(tmp_path: Path) -> None:
    """`resnet50(num_classes=10)` and `densenet121(num_classes=3)`: the builders' heads sized by the class count."""
    assert _params(tmp_path, "import torch, torchvision\nmodel = torchvision.models.resnet50(num_classes=10)\n") == (
        pytest.approx(23.5)
    )
    code = "import torch\nfrom torchvision.models import densenet121\nnet = densenet121(num_classes=3).cuda()\n"
    assert _params(tmp_path, code, "net") == pytest.approx(6.96, abs=0.06)


def test_a_member_of_a_sequential_replaced(tmp_path: Path) -> None:
    """`model.classifier[6] = nn.Linear(4096, 10)` (VGG) and `model.classifier[1] = nn.Linear(
    model.classifier[1].in_features, 5)` (MobileNetV2): the member replaced no longer counts."""
    code = """
import torch, torch.nn as nn, torchvision
model = torchvision.models.vgg16(pretrained=True)
model.classifier[6] = nn.Linear(4096, 10)
"""
    assert _params(tmp_path, code) == pytest.approx(134.3)
    code = """
import torch, torch.nn as nn
from torchvision import models
model = models.mobilenet_v2(weights=models.MobileNet_V2_Weights.DEFAULT)
model.classifier[1] = nn.Linear(model.classifier[1].in_features, 5)
"""
    assert _params(tmp_path, code) == pytest.approx(2.23, abs=0.06)


def test_only_the_features_kept(tmp_path: Path) -> None:
    """`self.features = models.vgg16(pretrained=True).features`: VGG's convolutions (14,714,688), not its
    123 M classifier, plus the job's own head."""
    code = """
import torch, torch.nn as nn
from torchvision import models
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = models.vgg16(pretrained=True).features
        self.head = nn.Linear(512, 10)
model = Net()
"""
    assert _params(tmp_path, code) == pytest.approx((14_714_688 + 5_130) / 1e6, abs=0.06)


def test_the_detection_fine_tuning_tutorial(tmp_path: Path) -> None:
    """`fasterrcnn_resnet50_fpn`, then `model.roi_heads.box_predictor = FastRCNNPredictor(in_features, 2)` with
    `in_features = model.roi_heads.box_predictor.cls_score.in_features`: 41,352,281 parameters."""
    code = """
import torch, torchvision
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor
model = torchvision.models.detection.fasterrcnn_resnet50_fpn(weights="DEFAULT")
in_features = model.roi_heads.box_predictor.cls_score.in_features
model.roi_heads.box_predictor = FastRCNNPredictor(in_features, 2)
"""
    assert _params(tmp_path, code) == pytest.approx(41.35, abs=0.06)


def test_changes_to_a_wrapper_are_not_followed(tmp_path: Path) -> None:
    """After `model = nn.DataParallel(model)`, statements change the wrapper: the count stops following them, and a
    name another statement rebinds (`model = something_else`) is not the model any more."""
    code = """
import torch, torch.nn as nn, torchvision
model = torchvision.models.resnet18()
model = nn.DataParallel(model)
model.fc = nn.Linear(512, 2)
"""
    assert _params(tmp_path, code) == pytest.approx(11.7)


def test_the_table_agrees_with_the_published_counts() -> None:
    """The builders' structure table (made from torchvision) and the known-models table (torchvision's published
    'Params' column) give the same counts for the models both hold, detectors and vision transformers included
    (within 0.5 %: ViT-H/14's published count is at a larger image size); a v2 detector is not its v1's prefix match
    (`retinanet_resnet50_fpn_v2` is 38.2 M, not RetinaNet v1's 34.0 M)."""
    table = json.loads(
        (Path(__file__).parents[1] / "agents/advisor/extract/library_modules.json").read_text(encoding="utf-8")
    )
    checked = 0
    for name in table["models"]:
        built = library_module(name, {})
        published = known_model(name)
        if built is None or published is None:
            continue
        checked += 1
        assert built[1] / 1e6 == pytest.approx(published[0], abs=max(0.06, 0.005 * published[0])), name
    assert checked >= 60


def test_a_head_replaced_by_setattr(tmp_path: Path) -> None:
    """TSN's `setattr(self.base_model, self.base_model.last_layer_name, nn.Dropout(p))` after reading the old head's
    `in_features`, then a new Linear for the classes: resnet101 without its 1000-class head (44,549,160 - 2,049,000)
    plus 2048 x 101 + 101."""
    code = """
import torch, torchvision
from torch import nn
class TSN(nn.Module):
    def __init__(self, num_class, base_model='resnet101', dropout=0.8):
        super().__init__()
        self.base_model = getattr(torchvision.models, base_model)(True)
        self.base_model.last_layer_name = 'fc'
        feature_dim = getattr(self.base_model, self.base_model.last_layer_name).in_features
        setattr(self.base_model, self.base_model.last_layer_name, nn.Dropout(p=dropout))
        self.new_fc = nn.Linear(feature_dim, num_class)
model = TSN(101)
"""
    assert _params(tmp_path, code) == pytest.approx((44_549_160 - 2_049_000 + 2048 * 101 + 101) / 1e6, abs=0.06)
