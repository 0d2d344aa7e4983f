"""Data registries, class counts read at run time, evaluation-only autocast, timm registries in modules the entry
imports, per-batch inner loops and dataset short keys (round 24's misses)."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_HOURGLASS = """
import torch.nn as nn
__all__ = ["HourglassNet", "hg"]
class HourglassNet(nn.Module):
    def __init__(self, num_stacks=2, num_classes=16):
        super().__init__()
        self.body = nn.ModuleList([nn.Conv2d(64, 64, 3) for _ in range(num_stacks)])
        self.score = nn.ModuleList([nn.Conv2d(64, num_classes, 1) for _ in range(num_stacks)])

def hg(**kwargs):
    return HourglassNet(num_stacks=kwargs["num_stacks"], num_classes=kwargs["num_classes"])
"""


def test_a_data_registry_leaves_the_model_registry_and_a_run_time_class_count(tmp_path: Path) -> None:
    """`models.__dict__[args.arch](num_classes=njoints)` before `datasets.__dict__[args.dataset](...)`: the model is
    the arch registry's; the joint count read from the dataset at run time is counted as a small stand-in, which
    the metadata's cuts say."""
    root = write(
        tmp_path,
        {
            "pose/__init__.py": "",
            "pose/models/__init__.py": "from .hourglass import *\n",
            "pose/models/hourglass.py": _HOURGLASS,
            "pose/datasets/__init__.py": "from .mpii import mpii\n",
            "pose/datasets/mpii.py": "def mpii(**kwargs):\n    return []\nmpii.njoints = 16\n",
            "example/main.py": """
import argparse
import torch
import pose.models as models
import pose.datasets as datasets
p = argparse.ArgumentParser()
p.add_argument("--arch", default="hg")
p.add_argument("--dataset", default="mpii")
p.add_argument("--stacks", type=int, default=8)
args = p.parse_args()
njoints = datasets.__dict__[args.dataset].njoints
model = models.__dict__[args.arch](num_stacks=args.stacks, num_classes=njoints)
model = torch.nn.DataParallel(model).cuda()
optimizer = torch.optim.RMSprop(model.parameters(), lr=2.5e-4)
train_dataset = datasets.__dict__[args.dataset](is_train=True)
loader = torch.utils.data.DataLoader(train_dataset, batch_size=6)
""",
        },
    )
    meta = extract_metadata(root, "python example/main.py --stacks 4")
    body, head = 64 * 64 * 9 + 64, 64 * 10 + 10  # the heads at the stand-in 10 classes
    assert meta.params_millions is not None
    assert abs(meta.params_millions - 4 * (body + head) / 1e6) < 1e-3


def test_segmentation_vocabulary_of_class_names_losses_and_metrics(tmp_path: Path) -> None:
    """`DRNSeg`, `SegList`, `NLLLoss2d(ignore_index=255)` and FCN's `fast_hist`/`per_class_iu` helpers: per-pixel
    classification is semantic segmentation."""
    helpers = "\n".join(f"def helper{i}(x):\n    return fast_hist(x, x, 19), per_class_iu(x)\n" for i in range(6))
    root = write(
        tmp_path,
        {
            "segment.py": f"""
import torch
import torch.nn as nn
class DRNSeg(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.base = nn.Conv2d(3, 64, 3)
        self.seg = nn.Conv2d(64, classes, 1)
class SegList(torch.utils.data.Dataset):
    pass
def fast_hist(a, b, n):
    return a
def per_class_iu(h):
    return h
{helpers}
model = torch.nn.DataParallel(DRNSeg(19)).cuda()
criterion = nn.NLLLoss2d(ignore_index=255)
loader = torch.utils.data.DataLoader(SegList(), batch_size=8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
""",
        },
    )
    assert extract_metadata(root, "python segment.py").task == "semantic_segmentation"


def test_an_autocast_in_a_no_grad_evaluation_is_no_training_precision(tmp_path: Path) -> None:
    """`if True:  # with autocast():` in the training step and `with autocast():` only in a `@torch.no_grad()`
    `evaluate()`: the model trains in fp32."""
    root = write(
        tmp_path,
        {
            "engine.py": """
import torch
def train_one_epoch(model, loader, optimizer):
    for x in loader:
        if True:  # with torch.cuda.amp.autocast():
            loss = model(x).sum()
        loss.backward()
        optimizer.step()

@torch.no_grad()
def evaluate(model, loader):
    for x in loader:
        with torch.cuda.amp.autocast():
            model(x)
""",
            "main.py": """
import torch
from engine import train_one_epoch, evaluate
model = torch.nn.Linear(4, 4).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
loader = torch.utils.data.DataLoader(ds, batch_size=64)
for epoch in range(10):
    train_one_epoch(model, loader, optimizer)
    evaluate(model, loader)
""",
        },
    )
    assert extract_metadata(root, "python main.py").precision == "fp32"


def test_a_timm_model_registered_in_a_module_the_entry_imports(tmp_path: Path) -> None:
    """`import levit` registers `@register_model def LeViT_tiny(...)` in a module not named like a model file; timm's
    `create_model("LeViT_tiny")` builds it, and its count follows the job's code."""
    root = write(
        tmp_path,
        {
            "levit.py": """
import torch.nn as nn
from timm.models.registry import register_model
class LeViT(nn.Module):
    def __init__(self, dim, num_classes=1000):
        super().__init__()
        self.stem = nn.Conv2d(3, dim, 3)
        self.head = nn.Linear(dim, num_classes)

@register_model
def LeViT_tiny(num_classes=1000, pretrained=False):
    return LeViT(32, num_classes=num_classes)
""",
            "main.py": """
import argparse
import torch
from timm.models import create_model
import levit
p = argparse.ArgumentParser()
p.add_argument("--model", default="LeViT_tiny")
args = p.parse_args()
model = create_model(args.model, num_classes=1000)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
""",
        },
    )
    meta = extract_metadata(root, "python main.py")
    assert meta.params_millions == round((3 * 32 * 9 + 32 + 32 * 1000 + 1000) / 1e6, 4) or (
        meta.params_millions is not None and abs(meta.params_millions - 0.034) < 1e-3
    )


def test_inner_steps_of_a_per_batch_helper_are_no_step_budget(tmp_path: Path) -> None:
    """The entry loops over epochs and calls `train(x, y)` per batch, whose `for step in range(num_D_steps)` runs
    the discriminator's steps: the job stops by its epochs, and `C10` keys `{'C10': dset.CIFAR10}`."""
    root = write(
        tmp_path,
        {
            "utils.py": """
import torchvision.datasets as dset
dset_dict = {'C10': dset.CIFAR10, 'C100': dset.CIFAR100}
def prepare_parser():
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument('--dataset', default='I128')
    p.add_argument('--num_epochs', type=int, default=100)
    p.add_argument('--num_D_steps', type=int, default=2)
    p.add_argument('--batch_size', type=int, default=64)
    return p
""",
            "train_fns.py": """
def GAN_training_function(G, D, config):
    def train(x, y):
        for step_index in range(config['num_D_steps']):
            D.optim.zero_grad()
            D(x).mean().backward()
            D.optim.step()
        G(y).mean().backward()
        G.optim.step()
    return train
""",
            "train.py": """
import torch
import utils
import train_fns
def run(config):
    loader = torch.utils.data.DataLoader(utils.dset_dict[config['dataset']](), batch_size=config['batch_size'])
    train = train_fns.GAN_training_function(None, None, config)
    for epoch in range(0, config['num_epochs']):
        for x, y in loader:
            train(x, y)
def main():
    parser = utils.prepare_parser()
    config = vars(parser.parse_args())
    run(config)
if __name__ == '__main__':
    main()
""",
        },
    )
    meta = extract_metadata(root, "python train.py --dataset C10 --num_epochs 500 --num_D_steps 4")
    assert meta.dataset == "CIFAR-10"
    assert (meta.epochs, meta.max_steps) == (500, None)
