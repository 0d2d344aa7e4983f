"""Ruled-out factory arms, config-class registries, config singletons, `set_defaults` and Lightning 1.x's
`Trainer.from_argparse_args` (round 23's misses)."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_BLOCKS = """
import torch.nn as nn
class Plain(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3)
        self.fc = nn.Linear(16, num_classes)

class Wide(nn.Module):
    def __init__(self, num_classes=10, width=4):
        super().__init__()
        self.conv = nn.Conv2d(3, 16 * width, 3)
        self.fc = nn.Linear(16 * width, num_classes)
        for key in self.state_dict():
            if key.endswith("weight"):
                self.state_dict()[key][...] = 0

def plain():
    return Plain()

def wide(num_classes=10):
    return Wide(num_classes=num_classes, width=8)
"""


def test_a_factory_in_an_arm_the_flags_rule_out_builds_nothing(tmp_path: Path) -> None:
    """`if args.baseline: model = plain() else: model = wide(...)` without `--baseline` trains the wide model, and
    the loop over `self.state_dict()` that initialises it does not stop its count."""
    root = write(
        tmp_path,
        {
            "nets.py": _BLOCKS,
            "train.py": """
import argparse
import torch
from nets import plain, wide
p = argparse.ArgumentParser()
p.add_argument("--baseline", action="store_true")
args = p.parse_args()
if args.baseline:
    model = plain()
else:
    model = wide(num_classes=10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
""",
        },
    )
    meta = extract_metadata(root, "python train.py")
    assert meta.model_name == "Wide"
    wide_params = 3 * 128 * 9 + 128 + 128 * 10 + 10
    assert meta.params_millions == round(wide_params / 1e6, 4) or abs(meta.params_millions - wide_params / 1e6) < 1e-3


def test_a_registry_of_config_classes_read_by_getattr(tmp_path: Path) -> None:
    """`cfg = getattr(models, args.model)` then `model = cfg.base(*cfg.args, num_classes=n, **cfg.kwargs)`: the class
    attribute `base` holds the model's class and `kwargs` its shape; a class count known only at run time takes the
    constructor's default."""
    root = write(
        tmp_path,
        {
            "models/__init__.py": "from .wide import *\n",
            "models/wide.py": _BLOCKS
            + """
class Wide4:
    base = Wide
    args = list()
    kwargs = {"width": 4}
""",
            "train.py": """
import argparse
import torch
import models
p = argparse.ArgumentParser()
p.add_argument("--model", type=str, required=True)
args = p.parse_args()
model_cfg = getattr(models, args.model)
num_classes = max(train_set.targets) + 1
model = model_cfg.base(*model_cfg.args, num_classes=num_classes, **model_cfg.kwargs)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
""",
        },
    )
    meta = extract_metadata(root, "python train.py --model Wide4")
    assert meta.model_name == "Wide"
    assert meta.params_millions is not None
    assert abs(meta.params_millions - (3 * 64 * 9 + 64 + 64 * 10 + 10) / 1e6) < 1e-3


def test_a_config_singleton_and_command_overrides_of_its_file(tmp_path: Path) -> None:
    """theconf: `C.get()["lr"]` reads the YAML the command names, and `--dataset cifar100` (no option of the script
    defines it) overrides the file's `dataset`, as its ConfigArgumentParser does."""
    root = write(
        tmp_path,
        {
            "confs/wide.yaml": "model:\n  type: wide\ndataset: cifar10\nbatch: 64\nepoch: 120\nlr: 0.2\n",
            "train.py": """
import torch
from theconf import Config as C, ConfigArgumentParser
from nets import Wide
def get_model(conf, num_class):
    if conf["type"] == "plain":
        return Plain(num_classes=num_class)
    elif conf["type"] == "wide":
        return Wide(num_classes=num_class, width=2)
def main():
    model = get_model(C.get()["model"], 10)
    loader = torch.utils.data.DataLoader(ds, batch_size=C.get()["batch"])
    optimizer = torch.optim.SGD(model.parameters(), lr=C.get()["lr"])
    max_epoch = C.get()["epoch"]
    for epoch in range(1, max_epoch + 1):
        for x in loader:
            optimizer.step()
if __name__ == "__main__":
    parser = ConfigArgumentParser(conflict_handler="resolve")
    parser.add_argument("--save", type=str, default="test.pth")
    args = parser.parse_args()
    main()
""",
            "nets.py": _BLOCKS,
        },
    )
    meta = extract_metadata(root, "python train.py -c confs/wide.yaml --dataset cifar100 --save x.pth")
    assert (meta.learning_rate, meta.batch_size_per_device, meta.epochs) == (0.2, 64, 120)
    assert meta.dataset == "CIFAR-100"
    assert meta.model_name == "Wide"
    assert meta.provenance["learning_rate"].path == "use"


def test_set_defaults_of_options_other_files_define_and_trainer_from_argparse_args(tmp_path: Path) -> None:
    """Lightning 1.x: `parser = Module.add_model_specific_args(parser)` then `parser.set_defaults(batch_size=batch_size,
    gpus=num_gpus, strategy=backend, max_epochs=50)` with local constants, and `pl.Trainer.from_argparse_args(args)`
    reading the Trainer's options from them: 2 GPUs under DDP, 50 epochs."""
    root = write(
        tmp_path,
        {
            "module.py": """
import pytorch_lightning as pl
class DataModule(pl.LightningDataModule):
    @staticmethod
    def add_data_specific_args(parent):
        parent.add_argument("--batch_size", type=int, default=8)
        return parent
""",
            "train.py": """
from argparse import ArgumentParser
import pytorch_lightning as pl
from module import DataModule
def build_args():
    parser = ArgumentParser()
    backend = "ddp"
    num_gpus = 2 if backend == "ddp" else 1
    batch_size = 1
    parser = DataModule.add_data_specific_args(parser)
    parser.set_defaults(batch_size=batch_size, lr=0.001)
    parser = pl.Trainer.add_argparse_args(parser)
    parser.set_defaults(gpus=num_gpus, strategy=backend, max_epochs=50)
    return parser.parse_args()
def main(args):
    trainer = pl.Trainer.from_argparse_args(args)
    trainer.fit(model, datamodule=data)
if __name__ == "__main__":
    main(build_args())
""",
        },
    )
    meta = extract_metadata(root, "python train.py")
    assert (meta.distributed, meta.num_gpus, meta.epochs) == ("ddp", 2, 50)
    assert (meta.batch_size_per_device, meta.global_batch_size, meta.learning_rate) == (1, 2, 0.001)
    given = extract_metadata(root, "python train.py --batch_size 4 --gpus 4")
    assert (given.batch_size_per_device, given.num_gpus) == (4, 4)


def test_list_of_range_of_a_flag_counts_the_data_parallel_devices(tmp_path: Path) -> None:
    """`DataParallel(model, device_ids=list(range(args.ngpu)))` with `--ngpu 4` spreads over 4 GPUs."""
    root = write(
        tmp_path,
        {
            "nets.py": _BLOCKS,
            "train.py": """
import argparse
import torch
from nets import Plain
p = argparse.ArgumentParser()
p.add_argument("--ngpu", type=int, default=1)
args = p.parse_args()
model = Plain()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model = torch.nn.DataParallel(model, device_ids=list(range(args.ngpu))).cuda()
""",
        },
    )
    assert extract_metadata(root, "python train.py --ngpu 4").num_gpus == 4
    assert extract_metadata(root, "python train.py --ngpu 4").distributed == "dp"


def test_a_schedulers_step_after_an_evaluation_is_no_accumulation(tmp_path: Path) -> None:
    """`if train_step % args.eval_interval == 0: … scheduler.step(val_loss)` steps a schedule every N optimizer steps;
    the global batch is not multiplied by N."""
    root = write(
        tmp_path,
        {
            "nets.py": _BLOCKS,
            "train.py": """
import argparse
import torch
from nets import Plain
p = argparse.ArgumentParser()
p.add_argument("--batch_size", type=int, default=22)
p.add_argument("--eval_interval", type=int, default=4000)
args = p.parse_args()
model = Plain().cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=0.00025)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size)
train_step = 0
for x in loader:
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
    train_step += 1
    if train_step % args.eval_interval == 0:
        val_loss = evaluate()
        scheduler.step(val_loss)
""",
        },
    )
    meta = extract_metadata(root, "python train.py")
    assert (meta.batch_size_per_device, meta.global_batch_size) == (22, 22)


def test_a_character_level_corpus_sizes_the_vocabulary(tmp_path: Path) -> None:
    """A transformer LM over enwik8 whose vocabulary is read from the data: a character corpus has at most 256
    symbols, not a GPT-2 vocabulary; a class of multi-head attention layers makes it a transformer."""
    root = write(
        tmp_path,
        {
            "mem.py": """
import torch.nn as nn
class RelMultiHeadAttn(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
class MemLM(nn.Module):
    def __init__(self, n_token, n_layer, d_model):
        super().__init__()
        self.emb = nn.Embedding(n_token, d_model)
        self.layers = nn.ModuleList([RelMultiHeadAttn(d_model) for _ in range(n_layer)])
""",
            "train.py": """
import argparse
import torch
from mem import MemLM
p = argparse.ArgumentParser()
p.add_argument("--dataset", type=str, default="wt103")
p.add_argument("--n_layer", type=int, default=12)
p.add_argument("--d_model", type=int, default=500)
args = p.parse_args()
ntokens = len(corpus.vocab)
model = MemLM(ntokens, args.n_layer, args.d_model)
optimizer = torch.optim.Adam(model.parameters(), lr=0.00025)
""",
        },
    )
    meta = extract_metadata(root, "python train.py --dataset enwik8 --n_layer 12 --d_model 512")
    assert meta.model_type == "decoder_only_transformer"
    assert meta.params_millions == round((12 * 12 * 512 * 512 + 256 * 512) / 1e6, 1)
