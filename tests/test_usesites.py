"""Hyper-parameters by the API that consumes them, each followed back to its source (nothing executed)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from schedmate.agents.advisor.extract import syntax
from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.advisor.extract.syntax import parse, walk
from schedmate.agents.advisor.extract.syspath import sys_path_roots
from schedmate.agents.advisor.extract.workspace import Workspace
from tests.repo_files import write

FIRE = """
import fire, torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
from datasets import load_dataset

def train(base_model: str = "", data_path: str = "org/some-data", micro: int = 4, total: int = 64,
          num_epochs: int = 3, learning_rate: float = 3e-4):
    accum = total // micro
    model = AutoModelForCausalLM.from_pretrained(base_model)
    data = load_dataset(data_path)
    args = TrainingArguments(per_device_train_batch_size=micro, gradient_accumulation_steps=accum,
                             num_train_epochs=num_epochs, learning_rate=learning_rate, bf16=True, output_dir="o")
    Trainer(model=model, args=args, train_dataset=data["train"]).train()

if __name__ == "__main__":
    fire.Fire(train)
"""


def test_fire_defaults_and_command_line_reach_the_consumers(tmp_path: Path) -> None:
    """fire.Fire(train): parameters are the command line's flags, else their defaults; the model comes from
    the parameter from_pretrained receives, whatever it is called."""
    write(tmp_path, {"finetune.py": FIRE})
    md = extract_metadata(tmp_path, "python finetune.py --base_model meta-llama/Llama-2-7b-hf --total 128")
    assert md.model_name is not None and "Llama-2-7b" in md.model_name
    assert md.params_millions == 6738.0  # from the known-models table
    assert (md.batch_size_per_device, md.global_batch_size) == (4, 128)
    assert (md.epochs, md.learning_rate, md.precision) == (3, 3e-4, "bf16")
    assert md.dataset == "org/some-data"
    assert md.provenance["learning_rate"].path == "use"
    assert md.framework[0] == "HF Trainer"


ARGPARSE = """
import argparse, torch, yaml
from torch.utils.data import DataLoader
import torchvision.models as models
p = argparse.ArgumentParser()
p.add_argument('-a', '--arch', default='resnet18')
p.add_argument('-b', '--batch-size', type=int, default=256)
p.add_argument('--epochs', type=int, default=90)
p.add_argument('--hyp', type=str, default='hyp.yaml')
p.add_argument('--start-epoch', type=int, default=0)
args = p.parse_args()

def main():
    with open(args.hyp) as f:
        hyp = yaml.safe_load(f)
    model = models.__dict__[args.arch]()
    if args.fast:
        args.batch_size = args.batch_size * 2
    opt = torch.optim.SGD(model.parameters(), hyp['lr0'], momentum=0.9)
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=1000, shuffle=False)
    for epoch in range(args.start_epoch, args.epochs):
        pass

main()
"""


def test_argparse_overrides_hyp_files_and_registries(tmp_path: Path) -> None:
    """A default overridden later in code wins; a hyper-parameter YAML chosen by a flag is read; a model
    registry indexed by a flag names the model; the training loader (not the validation one) gives the batch."""
    write(tmp_path, {"train.py": ARGPARSE, "hyps/fast.yaml": "lr0: 0.02\nmomentum: 0.9\n", "hyp.yaml": "lr0: 0.5\n"})
    md = extract_metadata(
        tmp_path, "python train.py -a resnet50 --hyp hyps/fast.yaml -b 64 --epochs 30 --start-epoch 10"
    )
    assert md.learning_rate == 0.02 and md.provenance["learning_rate"].path == "use"
    assert md.batch_size_per_device == 128  # args.batch_size * 2 before the DataLoader
    assert md.epochs == 20  # range(start, stop)
    assert md.model_name == "resnet50" and md.params_millions == 25.6 and md.model_type == "cnn"


UNKNOWABLE = """
import argparse, torch
from torch.utils.data import DataLoader
p = argparse.ArgumentParser()
p.add_argument('--batch-size', type=int, default=256)
args = p.parse_args()
ngpus = torch.cuda.device_count()
args.batch_size = int(args.batch_size / ngpus)
loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
"""


def test_an_override_that_cannot_be_followed_makes_the_value_unknown(tmp_path: Path) -> None:
    """When the code reassigns the value through something unknowable (the GPU count), the stale default is
    not reported."""
    write(tmp_path, {"main.py": UNKNOWABLE})
    assert extract_metadata(tmp_path, "python main.py").batch_size_per_device is None


BRANCHES = """
import os
import torch
if os.path.exists("resume.pt"):
    lr = 0.1
else:
    lr = 0.01
opt = torch.optim.Adam(params, lr=lr)
"""


def test_assignments_in_two_arms_of_an_if_are_not_guessed(tmp_path: Path) -> None:
    """Two arms that assign different values: the use site cannot tell which ran, so it says nothing."""
    write(tmp_path, {"train.py": BRANCHES})
    md = extract_metadata(tmp_path, "python train.py")
    assert md.provenance.get("learning_rate") is None or md.provenance["learning_rate"].path != "use"


HELPER = """
from utils.opt import make_optimizer
lr0, epochs = 0.003, 12
optimizer = make_optimizer(model, lr0)
"""
HELPER_MOD = """
import torch
def make_optimizer(model, lr):
    return torch.optim.AdamW(model.parameters(), lr=lr)
"""


def test_a_workspace_helper_that_builds_the_optimizer_is_followed(tmp_path: Path) -> None:
    """One level into a local helper: the helper's parameter maps to the caller's argument; tuple assignment."""
    write(tmp_path, {"train.py": HELPER, "utils/opt.py": HELPER_MOD, "utils/__init__.py": ""})
    md = extract_metadata(tmp_path, "python train.py")
    assert md.learning_rate == 0.003 and md.provenance["learning_rate"].path == "use"


YACS = """
from config import get_cfg
import torch
cfg = get_cfg()
cfg.merge_from_file(args.config_file)
opt = torch.optim.SGD(model.parameters(), lr=cfg.SOLVER.BASE_LR)
"""


def test_config_objects_are_read_by_their_access_path(tmp_path: Path) -> None:
    """``cfg.SOLVER.BASE_LR`` is looked up as the merged setting ``SOLVER.BASE_LR`` (here from the config file
    and a dotted override on the command line)."""
    write(tmp_path, {"train.py": YACS, "cfg.yaml": "SOLVER:\n  BASE_LR: 0.04\n  IMS_PER_BATCH: 16\n"})
    md = extract_metadata(tmp_path, "python train.py --config cfg.yaml SOLVER.BASE_LR=0.08")
    assert md.learning_rate == 0.08


YACS_DEFAULTS = """
from yacs.config import CfgNode as CN
_C = CN()
_C.SOLVER = CN()
_C.SOLVER.BASE_LR = 0.001
_C.SOLVER.IMS_PER_BATCH = 16
_C.SOLVER.MAX_ITER = 40000
def get_cfg():
    return _C.clone()
"""
YACS_TRAIN = """
from config.defaults import get_cfg
cfg = get_cfg()
cfg.merge_from_file(args.config_file)
cfg.merge_from_list(args.opts)
"""


def test_yacs_defaults_bases_and_opts_pairs_merge_in_order(tmp_path: Path) -> None:
    """Config-tree defaults of an imported module < the YAML's _BASE_ < the YAML < ``KEY VALUE`` pairs; a total
    batch is the global batch and per device what it leaves per rank; the launcher's own GPU flag counts."""
    write(tmp_path, {
        "config/__init__.py": "", "config/defaults.py": YACS_DEFAULTS, "train_net.py": YACS_TRAIN,
        "configs/base.yaml": "SOLVER:\n  BASE_LR: 0.01\n  MAX_ITER: 1000\n",
        "configs/run.yaml": "_BASE_: base.yaml\nSOLVER:\n  MAX_ITER: 90000\n",
    })  # fmt: skip
    md = extract_metadata(
        tmp_path, "python train_net.py --config-file configs/run.yaml --num-gpus 8 SOLVER.BASE_LR 0.02"
    )
    assert (md.learning_rate, md.max_steps, md.num_gpus) == (0.02, 90000, 8)
    assert (md.global_batch_size, md.batch_size_per_device) == (16, 2)


YACS_SPLIT = """
from config import cfg, load_cfg
import torch
def train_model():
    loader = torch.utils.data.DataLoader(data, batch_size=int(cfg.TRAIN.BATCH_SIZE / cfg.NUM_GPUS))
    opt = torch.optim.SGD(model.parameters(), lr=cfg.OPTIM.BASE_LR)
def main():
    load_cfg(args.cfg)
    cfg.merge_from_list(args.opts)
    multi_proc_run(num_proc=cfg.NUM_GPUS, fun=train_model)
"""

YACS_SPLIT_DEFAULTS = """
from yacs.config import CfgNode
_C = CfgNode()
cfg = _C
_C.TRAIN = CfgNode()
_C.TRAIN.BATCH_SIZE = 128
_C.OPTIM = CfgNode()
_C.OPTIM.BASE_LR = 0.1
_C.NUM_GPUS = 1
def load_cfg(path):
    _C.merge_from_other_cfg(_C.load_cfg(open(path)))
"""


def test_an_executable_script_and_the_gpu_count_its_config_file_states(tmp_path: Path) -> None:
    """``./tools/run_net.py`` runs under Python like ``python tools/run_net.py``; a GPU count that the config
    file the command names states (``NUM_GPUS: 8``) is the job's, so the total batch is split over 8 ranks."""
    write(tmp_path, {
        "tools/run_net.py": YACS_SPLIT, "config.py": YACS_SPLIT_DEFAULTS,
        "c.yaml": "OPTIM:\n  BASE_LR: 0.8\nTRAIN:\n  BATCH_SIZE: 1024\nNUM_GPUS: 8\n",
    })  # fmt: skip
    md = extract_metadata(tmp_path, "./tools/run_net.py --mode train --cfg c.yaml OUT_DIR /tmp")
    assert (md.num_gpus, md.distributed) == (8, "ddp")
    assert (md.batch_size_per_device, md.global_batch_size, md.learning_rate) == (128, 1024, 0.8)
    half = extract_metadata(tmp_path, "python tools/run_net.py --mode train --cfg c.yaml TRAIN.BATCH_SIZE 512")
    assert (half.num_gpus, half.batch_size_per_device, half.global_batch_size) == (8, 64, 512)


SCALED = """
import argparse, torch
import torch.distributed as dist
from engine import train_one_epoch
import vits
p = argparse.ArgumentParser()
p.add_argument('--lr', type=float, default=5e-4)
p.add_argument('--batch-size', type=int, default=64)
p.add_argument('--arch', default='vit_small')
p.add_argument('--epochs', type=int, default=100)
args = p.parse_args()
student = vits.__dict__[args.arch]()
teacher = vits.__dict__['vit_base']()
args.lr = args.lr * args.batch_size * dist.get_world_size() / 512.0
opt = torch.optim.AdamW(student.parameters(), lr=args.lr)
for epoch in range(args.start, args.start + args.epochs):
    train_one_epoch(student, opt)
"""
ENGINE = """
import torch
def train_one_epoch(model, opt):
    scaler = torch.cuda.amp.GradScaler()
    with torch.cuda.amp.autocast():
        pass
"""


def test_world_size_registries_autocast_in_helpers_and_resumable_ranges(tmp_path: Path) -> None:
    """``get_world_size()`` is the launcher's process count (lr scaling); any ``X.__dict__[name]()`` registry
    names the model and the first one built is the trained one; an unconditional autocast in an imported engine
    means fp16; ``range(start, start + N)`` is N epochs."""
    write(tmp_path, {"main.py": SCALED, "engine.py": ENGINE, "vits.py": "def vit_small(): pass\n"})
    md = extract_metadata(tmp_path, "torchrun --nproc_per_node=4 main.py --batch-size 128")
    assert md.learning_rate == 5e-4 * 128 * 4 / 512
    assert md.model_name == "vit_small" and md.params_millions == 21.7
    assert (md.precision, md.epochs) == ("fp16", 100)


def test_names_datasets_and_eval_sections(tmp_path: Path) -> None:
    """A hub id loses its "-hf" format suffix and gains "+ LoRA" when the code builds a LoRA adapter; a data file
    is named by its file; an evaluation section's max_iters is not the training length."""
    write(tmp_path, {
        "train.py": "from peft import LoraConfig, get_peft_model\nfrom transformers import AutoModelForCausalLM\n"
                    "m = AutoModelForCausalLM.from_pretrained(model_name_or_path)\nm = get_peft_model(m, LoraConfig())\n",
        "cfg.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\ndata_path: data/my_instructions.jsonl\n"
                    "train:\n  epochs: 4\neval:\n  max_iters: 100\n",
    })  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py --config cfg.yaml")
    assert md.model_name == "Llama-2-7b + LoRA"
    assert md.dataset == "my_instructions.jsonl"
    assert (md.epochs, md.max_steps) == (4, None)


DEAD_ARMS = """
import torch
from torch.cuda.amp import GradScaler
from torch.utils.data import DataLoader
fp16 = False
freeze = True
batch_size = 16 if freeze else 8
ngpus = torch.cuda.device_count()
if ngpus > 1:
    batch_size = batch_size * ngpus
lr = min(max(batch_size / 64 * 1e-2, 5e-4), 5e-2)
if fp16:
    scaler = GradScaler()
net = Darknet(20).cuda()
opt = torch.optim.SGD(net.parameters(), lr, momentum=0.9)
loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
"""


def test_conditions_that_evaluate_prune_arms_and_pick_values(tmp_path: Path) -> None:
    """``x if c else y`` with a known ``c``, min/max, an ``if`` whose test is false (no GradScaler, no override),
    device_count() as the visible GPUs the command sets, and the model as the owner of the optimized parameters."""
    write(tmp_path, {"train.py": DEAD_ARMS})
    md = extract_metadata(tmp_path, "CUDA_VISIBLE_DEVICES=0 python train.py")
    assert (md.batch_size_per_device, md.learning_rate, md.precision) == (16, 2.5e-3, "fp32")
    assert md.model_name == "Darknet"


def test_module_launches_shell_args_accumulation_and_spawned_ddp(tmp_path: Path) -> None:
    """``torchrun -m pkg.main`` reads pkg/main.py; ``"$@"`` is no flag value; ``if (i + 1) % N == 0:
    optimizer.step()`` in a helper makes N the accumulation; a script spawning DDP processes is ``ddp``."""
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/main.py": "import argparse\nfrom pkg.engine import train_one_epoch\np = argparse.ArgumentParser()\n"
                       "p.add_argument('--batch-size', type=int, default=32)\np.add_argument('--update-freq', type=int, default=1)\n"
                       "args = p.parse_args()\ntrain_one_epoch(model, loader, update_freq=args.update_freq)\n",
        "pkg/engine.py": "def train_one_epoch(model, loader, update_freq=1):\n    for i, b in enumerate(loader):\n"
                         "        if (i + 1) % update_freq == 0:\n            optimizer.step()\n",
    })  # fmt: skip
    md = extract_metadata(tmp_path, "torchrun --nproc_per_node 2 -m pkg.main --batch-size 16 --update-freq 4")
    assert (md.batch_size_per_device, md.global_batch_size) == (16, 16 * 4 * 2)
    write(tmp_path / "s", {
        "run.sh": 'python train.py --lr 0.1 --fp16 "$@"\n',
        "train.py": "import torch.multiprocessing as mp\nfrom torch.nn.parallel import DistributedDataParallel\n"
                    "def worker(i):\n    DistributedDataParallel(model)\nmp.spawn(worker, nprocs=4)\n",
    })  # fmt: skip
    md2 = extract_metadata(tmp_path / "s", "bash run.sh")
    assert (md2.precision, md2.learning_rate, md2.distributed) == ("fp16", 0.1, "ddp")


ITER_LOOP = """
import argparse, torch
from data import *
p = argparse.ArgumentParser()
p.add_argument('--dataset', default='VOC')
p.add_argument('--start_iter', default=0, type=int)
args = p.parse_args()

def train():
    if args.dataset == 'COCO':
        cfg = coco
    elif args.dataset == 'VOC':
        cfg = voc
    net = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-3)
    batch_iterator = iter(loader)
    for micro in range(4):  # a warm-up that only accumulates gradients
        net(next(batch_iterator)).sum().backward()
    for iteration in range(args.start_iter, cfg['max_iter']):
        loss = net(next(batch_iterator)).sum()
        loss.backward()
        optimizer.step()

train()
"""


def test_an_iteration_loop_that_steps_the_optimizer_is_the_step_budget(tmp_path: Path) -> None:
    """``for it in range(start, cfg['max_iter'])`` whose passes each step the optimizer: the step budget, with ``cfg``
    the literal dict a star import brings in and the ``if`` arm the settings select (``--dataset COCO`` picks the
    other); the inner loop that only back-propagates is gradient accumulation, not the budget."""
    write(
        tmp_path,
        {
            "train.py": ITER_LOOP,
            "data/__init__.py": "from .config import *\nimport os\n",
            "data/config.py": "import os\nHOME = os.path.expanduser('~')\n"
            "voc = {'num_classes': 21, 'max_iter': 120000, 'root': os.path.join(HOME, 'voc')}\n"
            "coco = {'num_classes': 201, 'max_iter': 400000}\n",
        },
    )
    assert extract_metadata(tmp_path, "python train.py").max_steps == 120000
    assert extract_metadata(tmp_path, "python train.py --dataset COCO").max_steps == 400000


def test_a_step_counter_that_ends_training_is_the_step_budget(tmp_path: Path) -> None:
    """``while True: for batch in loader: … cur_itrs += 1 … if cur_itrs >= opts.total_itrs: return``: the bound is the
    step budget; a loop named for epochs that steps per batch stays the epoch loop."""
    write(
        tmp_path,
        {
            "main.py": "import argparse, torch\np = argparse.ArgumentParser()\n"
            "p.add_argument('--total_itrs', type=int, default=30e3)\nopts = p.parse_args()\n"
            "def main():\n    cur_itrs = 0\n    model = torch.nn.Linear(2, 2)\n"
            "    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)\n    while True:\n"
            "        for images, labels in train_loader:\n            cur_itrs += 1\n"
            "            loss = model(images).sum()\n            loss.backward()\n            optimizer.step()\n"
            "            if cur_itrs >= opts.total_itrs:\n                return\nmain()\n",
            "epochs.py": "import torch\nmodel = torch.nn.Linear(2, 2)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.01)\n"
            "for epoch in range(90):\n    loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n",
        },
    )
    assert extract_metadata(tmp_path, "python main.py --total_itrs 5000").max_steps == 5000
    assert extract_metadata(tmp_path, "python main.py").max_steps == 30000
    epochs = extract_metadata(tmp_path, "python epochs.py")
    assert (epochs.epochs, epochs.max_steps) == (90, None)


def test_an_unbounded_step_counter_limit_is_no_step_budget(tmp_path: Path) -> None:
    """``if it >= 1e999: break`` (infinite) or a NaN bound gives no step budget and breaks nothing else."""
    write(
        tmp_path,
        {
            "m.py": "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "it = 0\nfor b in loader:\n    it += 1\n    model(b).sum().backward()\n    opt.step()\n"
            "    if it >= 1e999:\n        break\n",
        },
    )
    cuts: list[str] = []
    md = extract_metadata(tmp_path, "python m.py", cuts=cuts)
    assert (md.max_steps, md.learning_rate, cuts) == (None, 0.1, [])


LAUNCHER = """
import argparse
import yaml
from src.train import main as app_main

parser = argparse.ArgumentParser()
parser.add_argument("--fname", default="configs/run.yaml")
args = parser.parse_args()
with open(args.fname) as y_file:
    params = yaml.safe_load(y_file)
app_main(args=params)
"""

TRAIN_LOOP = """
import torch
from torch.utils.data import DataLoader


def helper_loader(batch_size=7):
    return DataLoader([], batch_size=batch_size)


def main(args):
    use_bf16 = args["meta"]["use_bfloat16"]
    batch_size = args["data"]["batch_size"]
    epochs = args["optimization"]["epochs"]
    loader = DataLoader(range(10), batch_size=batch_size, shuffle=True)
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args["optimization"]["lr"])
    for epoch in range(epochs):
        for x in loader:
            with torch.cuda.amp.autocast(dtype=torch.bfloat16, enabled=use_bf16):
                loss = model(x).sum()
            loss.backward()
            optimizer.step()
"""


def test_a_launcher_s_training_function_in_another_module_is_read(tmp_path: Path) -> None:
    """A thin entry script that loads a YAML file and hands it to `src.train.main`: the training loop's consumers in
    that module (the loader's batch, the optimizer's rate, the epoch loop, bf16 autocast enabled by a setting) give
    the fields, read by the settings' access paths."""
    config = "meta:\n  use_bfloat16: true\ndata:\n  batch_size: 96\noptimization:\n  epochs: 12\n  lr: 0.0005\n"
    write(
        tmp_path, {"main.py": LAUNCHER, "src/__init__.py": "", "src/train.py": TRAIN_LOOP, "configs/run.yaml": config}
    )
    md = extract_metadata(tmp_path, "python main.py --fname configs/run.yaml")
    assert (md.batch_size_per_device, md.epochs, md.learning_rate, md.precision) == (96, 12, 0.0005, "bf16")
    assert md.provenance["batch_size_per_device"].file == "src/train.py"


GPU_CHECKS = """
import argparse
from functools import partial
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--precision", default=16, type=int)
parser.add_argument("--amp-dtype", default="float16")
args = parser.parse_args()
args.gpus = torch.cuda.device_count()
if not args.gpus:
    args.precision = 32
amp_dtype = torch.float16
if args.amp_dtype == "bfloat16":
    amp_dtype = torch.bfloat16
amp_autocast = partial(torch.autocast, device_type="cuda", dtype=amp_dtype)
"""


def test_the_job_runs_on_gpus_and_partial_binds_a_consumer(tmp_path: Path) -> None:
    """A scheduled job has GPUs: `if not args.gpus:` after `args.gpus = torch.cuda.device_count()` does not run, so
    the precision setting stands; `partial(torch.autocast, dtype=…)` consumes the dtype the flag selects."""
    write(tmp_path, {"train.py": GPU_CHECKS.replace("amp_autocast = partial", "# no autocast\\nunused = print")})
    assert extract_metadata(tmp_path, "python train.py").precision == "fp16"  # precision 16 kept on GPUs
    write(tmp_path, {"train.py": GPU_CHECKS})
    assert extract_metadata(tmp_path, "python train.py --amp-dtype bfloat16").precision == "bf16"


LOOPS = """
import torch
import tqdm


def train_a(n_epoch: int = 7, loader=None, model=None, optim=None):
    for i in range(n_epoch):
        for x in loader:
            optim.zero_grad()
            model(x).backward()
            optim.step()


def train_b(num_batches=int(1e4), accumulate=4, model=None, optim=None, loader=None):
    for i in tqdm.tqdm(range(num_batches), desc="training"):
        for _ in range(accumulate):
            loss = model(next(loader))
            loss.backward()
        optim.step()
        optim.zero_grad()


if __name__ == "__main__":
    train_b()
"""


def test_an_epoch_bound_and_an_accumulating_step_loop(tmp_path: Path) -> None:
    """`for i in range(n_epoch)` over a loop of batches is the epoch loop (its bound names it); a pass of
    `for i in tqdm(range(num_batches))` that back-propagates over micro-batches and steps once is one step."""
    head, rest = LOOPS.split("def train_b")
    write(tmp_path, {"a.py": head + "train_a()\n", "b.py": head.split("def train_a")[0] + "def train_b" + rest})
    assert extract_metadata(tmp_path, "python a.py").epochs == 7
    assert extract_metadata(tmp_path, "python b.py").max_steps == 10000


IGNITE = """
import fire
import ignite.distributed as idist
import torch


def run(batch_size=512, num_epochs=24, learning_rate=0.4):
    loader = idist.auto_dataloader(torch.zeros(8), batch_size=batch_size, shuffle=True)
    model = idist.auto_model(torch.nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
    for epoch in range(num_epochs):
        for batch in loader:
            pass


if __name__ == "__main__":
    fire.Fire({"run": run})
"""


def test_ignite_s_auto_dataloader_splits_the_batch_over_the_ranks(tmp_path: Path) -> None:
    """`idist.auto_dataloader(batch_size=512)` (PyTorch-Ignite) takes the total batch and gives each of the two ranks
    torchrun starts half of it."""
    meta = extract_metadata(write(tmp_path, {"main.py": IGNITE}), "torchrun --nproc_per_node=2 main.py run")
    assert (meta.batch_size_per_device, meta.global_batch_size, meta.num_gpus) == (256, 512, 2)


HELPER_LOADERS = {
    "data_loader.py": """
from torch.utils import data


def get_train_loader(root, batch_size=8):
    return data.DataLoader(dataset=root, batch_size=batch_size, drop_last=True)


def get_test_loader(root, batch_size=32, shuffle=True):
    return data.DataLoader(dataset=root, batch_size=batch_size, shuffle=shuffle)
""",
    "main.py": """
import argparse
import torch
import torch.multiprocessing as mp
from torch import nn
from data_loader import get_train_loader, get_test_loader


def main(rank, args):
    model = nn.parallel.DistributedDataParallel(nn.Linear(4, 4).cuda(), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loaders = dict(src=get_train_loader(root=args.train_dir, batch_size=args.batch_size // args.n_gpu),
                   val=get_test_loader(root=args.val_dir, batch_size=args.val_batch_size, shuffle=True))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n_gpu", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--val_batch_size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--train_dir", default="data/train")
    parser.add_argument("--val_dir", default="data/val")
    args = parser.parse_args()
    mp.spawn(main, nprocs=args.n_gpu, args=(args,))
""",
}


def test_a_loader_helper_named_for_its_split_and_an_n_gpu_flag(tmp_path: Path) -> None:
    """`get_train_loader(...)` beside a shuffled `get_test_loader(...)`: the helper named for training data gives the
    batch; `--n_gpu 4` given to a script that spawns its own DDP workers is its GPU count."""
    meta = extract_metadata(write(tmp_path, HELPER_LOADERS), "python main.py --n_gpu 4")
    assert (meta.batch_size_per_device, meta.global_batch_size, meta.num_gpus, meta.distributed) == (32, 128, 4, "ddp")


def test_parsed_trees_are_shared_read_only_and_a_changed_file_is_read_again(tmp_path: Path) -> None:
    """Extraction parses each file's text once and shares the tree with later extractions: no pass may change it
    (a helper's argument mapped into its caller is a copy), repeated extractions agree, and an edited file is
    parsed anew. ``walk`` visits what ``ast.walk`` visits, in its order."""
    files = {"train.py": HELPER, "utils/opt.py": HELPER_MOD, "utils/__init__.py": ""}
    write(tmp_path, files)
    first = extract_metadata(tmp_path, "python train.py")
    again = extract_metadata(tmp_path, "python train.py")
    assert first == again and first.learning_rate == 0.003
    for text in files.values():
        shared, fresh = parse(text), ast.parse(text)
        assert ast.dump(shared, include_attributes=True) == ast.dump(fresh, include_attributes=True)
        assert [ast.dump(n) for n in walk(shared)] == [ast.dump(n) for n in ast.walk(fresh)]
    (tmp_path / "train.py").write_text(HELPER.replace("0.003", "0.0007"))
    assert extract_metadata(tmp_path, "python train.py").learning_rate == 0.0007


TABLE_OPTIMIZER = """
import argparse, torch, torch.nn as nn
import data_pipeline as dp
from torch.nn.parallel.parallel_apply import parallel_apply
from torch.nn.parallel.replicate import replicate

class RankNet(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.emb = nn.EmbeddingBag(n, 16)
        self.top = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 1))
    def forward_on(self, x, ids):
        return parallel_apply(replicate(self.top, ids), x, None, ids)

def run():
    p = argparse.ArgumentParser()
    p.add_argument("--optimizer", default="sgd")
    p.add_argument("--learning-rate", type=float, default=0.01)
    p.add_argument("--mini-batch-size", type=int, default=1)
    p.add_argument("--test-mini-batch-size", type=int, default=-1)
    args = p.parse_args()
    train_data, train_ld, test_data, test_ld = dp.make_loaders(args)
    ranker = RankNet(1000)
    parameters = ranker.parameters() if args.optimizer == "sgd" else [
        {"params": ranker.emb.parameters(), "lr": args.learning_rate},
        {"params": ranker.top.parameters(), "lr": args.learning_rate}]
    opts = {"sgd": torch.optim.SGD, "adagrad": torch.optim.Adagrad}
    optimizer = opts[args.optimizer](parameters, lr=args.learning_rate)
    for epoch in range(1):
        pass

run()
"""
PIPELINE = """
import torch
from streaming import ShardLoader

def make_loaders(args):
    train = ClickLogs(args, "train")
    test = ClickLogs(args, "test")
    if args.memory_map:
        train_ld = ShardLoader(data_directory=".", batch_size=args.mini_batch_size, split="train")
        test_ld = ShardLoader(data_directory=".", batch_size=args.test_mini_batch_size, split="test")
    else:
        train_ld = torch.utils.data.DataLoader(train, batch_size=args.mini_batch_size, shuffle=False)
        test_ld = torch.utils.data.DataLoader(test, batch_size=args.test_mini_batch_size, shuffle=False)
    return train, train_ld, test, test_ld
"""


def test_the_model_an_optimizer_from_a_table_trains_and_a_helper_module_s_training_loader(tmp_path: Path) -> None:
    """The model is the module whose parameters (grouped, through a variable) an optimizer picked from a table
    trains; the batch is the training loader's inside a helper of a module imported whole (``dp.make_loaders``),
    never the test loader's (named by ``split=`` or built on test data); ``parallel_apply`` is data parallelism."""
    write(tmp_path, {"train.py": TABLE_OPTIMIZER, "data_pipeline.py": PIPELINE})
    md = extract_metadata(
        tmp_path, "python train.py --mini-batch-size=128 --test-mini-batch-size=16384 --learning-rate=0.1 --use-gpu"
    )
    assert md.model_name == "RankNet" and md.provenance["model_name"].line == 23
    assert md.batch_size_per_device == 128 and md.provenance["batch_size_per_device"].path == "use"
    assert md.distributed == "dp" and md.learning_rate == 0.1


ATTENTION_LSTM = """
import torch, torch.nn as nn

class Attention(nn.Module):
    def __init__(self, enc, dec, att):
        super().__init__()
        self.enc_att, self.dec_att, self.full_att = nn.Linear(enc, att), nn.Linear(dec, att), nn.Linear(att, 1)

class CaptionDecoder(nn.Module):
    def __init__(self, vocab=10000):
        super().__init__()
        self.attention = Attention(2048, 512, 512)
        self.embedding = nn.Embedding(vocab, 512)
        self.decode_step = nn.LSTMCell(512 + 2048, 512)
        self.fc = nn.Linear(512, vocab)

decoder = CaptionDecoder()
optimizer = torch.optim.Adam(decoder.parameters(), lr=4e-4)
"""


def test_an_lstm_cell_decoder_with_additive_attention_is_recurrent(tmp_path: Path) -> None:
    """``nn.LSTMCell`` counts as a recurrent layer, and a local ``Attention`` module beside it does not make the
    model a transformer (only self-attention / transformer layers do)."""
    write(tmp_path, {"train.py": ATTENTION_LSTM})
    md = extract_metadata(tmp_path, "python train.py")
    assert md.model_name == "CaptionDecoder" and md.model_type == "rnn"
    write(tmp_path, {"train.py": ATTENTION_LSTM.replace("Attention(2048, 512, 512)", "nn.MultiheadAttention(512, 8)")})
    assert extract_metadata(tmp_path, "python train.py").model_type == "decoder_only_transformer"


RUN_LIB = """
import torch
import models.utils as mutils

def train(config, workdir):
    score_model = mutils.create_model(config)
    optimizer = torch.optim.Adam(score_model.parameters(), lr=config.optim.lr)
    loader = torch.utils.data.DataLoader(range(10), batch_size=config.training.batch_size, shuffle=True)
"""
RUN_MAIN = """
import run_lib
from absl import app, flags
from ml_collections.config_flags import config_flags
FLAGS = flags.FLAGS
config_flags.DEFINE_config_file("config", None, "Training configuration.")
def main(argv):
    run_lib.train(FLAGS.config, "/out")
app.run(main)
"""
MODEL_UTILS = """
_MODELS = {}
def create_model(config):
    return _MODELS[config.model.name](config)
"""


def test_a_helper_s_own_create_model_names_no_model(tmp_path: Path) -> None:
    """Followed into a helper of a module imported whole (``run_lib.train(FLAGS.config, ...)``), the job's own
    ``mutils.create_model(config)`` builds from a config: it is not timm's ``create_model(name)`` and names nothing
    (the config's path is no model name); the helper's loader still gives the batch."""
    write(tmp_path, {"main.py": RUN_MAIN, "run_lib.py": RUN_LIB, "models/utils.py": MODEL_UTILS,
                     "models/__init__.py": "", "configs/cifar10_big.py": "def get_config():\n    return None\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "python main.py --config configs/cifar10_big.py")
    assert md.model_name is None or "cifar10" not in md.model_name


CONFIG_CLASS = """
class Config:
    voc_data_dir = '/dataset/VOC2007/'
    lr = 1e-3
    epoch = 14

    def _parse(self, kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)


opt = Config()
"""
FIRE_TRAIN = """
import torch
from apex.parallel import DistributedDataParallel as ApexDDP
from utils.config import opt
from model import DetectorVGG16
from trainer import DetectorTrainer

def train(**kwargs):
    opt._parse(kwargs)
    detector = DetectorVGG16()
    trainer = DetectorTrainer(detector).cuda()
    model = ApexDDP(trainer)
    params = [p for p in trainer.params() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=opt.lr)
    for epoch in range(opt.epoch):
        pass

if __name__ == '__main__':
    import fire
    fire.Fire()
"""


def test_an_imported_config_instance_s_class_attributes_and_the_module_a_trainer_is_built_around(
    tmp_path: Path,
) -> None:
    """``from utils.config import opt`` where ``opt = Config()`` holds the settings as class attributes: ``opt.epoch``
    is 14; a class that sets its attributes from ``fire``'s keyword arguments takes the command line's
    ``--lr=0.02`` over its default. The model is the module a ``...Trainer`` is built around, never the
    data-parallel wrapper imported under another name (``ApexDDP``)."""
    write(tmp_path, {"train.py": FIRE_TRAIN, "utils/config.py": CONFIG_CLASS, "utils/__init__.py": "",
                     "model.py": "class DetectorVGG16:\n    pass\n", "trainer.py": ""})  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py train --env=x")
    assert md.epochs == 14 and md.learning_rate == 0.001 and md.model_name == "DetectorVGG16"
    md = extract_metadata(tmp_path, "python train.py train --lr=0.02 --epoch 3")
    assert md.learning_rate == 0.02 and md.epochs == 3


OWN_FACTORY_TRAIN = """
import argparse, torch
from effdet import create_model
p = argparse.ArgumentParser()
p.add_argument('--model', default='tf_efficientdet_d1')
p.add_argument('--cfg', default='')
args = p.parse_args()
model = create_model(args.model or args.cfg, bench_task='train')
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
"""


def test_the_job_s_own_create_model_given_an_architecture_name_names_the_model(tmp_path: Path) -> None:
    """The job's own ``create_model(args.model)`` with ``--model efficientdet_d0`` builds a named, well-known
    architecture (named and counted from the known-model table); given a config path it names nothing."""
    write(tmp_path, {"train.py": OWN_FACTORY_TRAIN, "effdet/__init__.py": "from .factory import create_model\n",
                     "effdet/factory.py": "def create_model(name, **kw):\n    return None\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py --model efficientdet_d0")
    assert md.model_name == "efficientdet_d0" and md.params_millions == 3.9 and md.model_type == "cnn_detector"
    md = extract_metadata(tmp_path, "python train.py --model '' --cfg configs/det.yaml")
    assert md.model_name not in {"configs/det.yaml", "det"}


INIT_PATHS = """
import os.path as osp
import sys

def add_path(path):
    if path not in sys.path:
        sys.path.insert(0, path)

this_dir = osp.dirname(__file__)
add_path(osp.join(this_dir, '..', 'lib'))
add_path(osp.join(this_dir, '..', '..', 'outside'))
"""
LIB_TRAIN = """
import torch
import _init_paths
import models
from config import config
from utils import FullModel
model = eval('models.' + config.MODEL.NAME + '.get_seg_model')(config)
model = FullModel(model, criterion)
optimizer = torch.optim.SGD(model.parameters(), lr=config.TRAIN.LR)
end_epoch = config.TRAIN.END_EPOCH + config.TRAIN.EXTRA_EPOCH
for epoch in range(0, end_epoch):
    pass
"""
LIB_DEFAULTS = """
from yacs.config import CfgNode as CN
_C = CN()
_C.MODEL = CN()
_C.MODEL.NAME = 'seg_hrnet'
_C.TRAIN = CN()
_C.TRAIN.LR = 0.01
_C.TRAIN.END_EPOCH = 484
_C.TRAIN.EXTRA_EPOCH = 0
config = _C
"""


def test_folders_an_init_paths_module_puts_on_sys_path_are_import_roots(tmp_path: Path) -> None:
    """``import _init_paths`` whose ``add_path(osp.join(this_dir, '..', 'lib'))`` puts ``lib/`` on ``sys.path``:
    ``from config import config`` is ``lib/config``, so its yacs defaults count (``END_EPOCH + EXTRA_EPOCH``); a folder
    outside the workspace is never a root. ``model = FullModel(model, criterion)`` wraps the model, does not build
    one."""
    write(tmp_path, {"tools/train.py": LIB_TRAIN, "tools/_init_paths.py": INIT_PATHS,
                     "lib/config/__init__.py": "from .default import config\n", "lib/config/default.py": LIB_DEFAULTS,
                     "lib/models/__init__.py": "",
                     "lib/utils.py": "import torch.nn as nn\nclass FullModel(nn.Module):\n    pass\n"})  # fmt: skip
    ws = Workspace(tmp_path)
    assert sys_path_roots(ws, "tools/train.py") == ["lib"]
    md = extract_metadata(tmp_path, "python tools/train.py")
    assert md.epochs == 484 and md.learning_rate == 0.01 and md.model_name != "FullModel"


BASICSR_OPTIONS = """
network_g:
  type: RRDBNet
  num_block: 23
train:
  optim_g: {type: Adam, lr: 0.0002}
  total_iter: 1000000
"""


def test_an_installed_library_s_registered_network_type_names_the_model(tmp_path: Path) -> None:
    """``network_g.type: RRDBNet`` in options handed to an installed library (BasicSR's ``train_pipeline``, no
    class of that name in the workspace) still names the model."""
    write(tmp_path, {"train.py": "from basicsr.train import train_pipeline\ntrain_pipeline('.')\n",
                     "options/train.yml": BASICSR_OPTIONS})  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py -opt options/train.yml")
    assert md.model_name == "RRDBNet" and md.max_steps == 1000000


GAN_LOOP = """
import torch
from torch.utils.data import DataLoader
from samplers import GroupedSampler
from nets import factory

def main(n_critic=5):
    net = factory.build_detector(num_classes=80)
    sampler = GroupedSampler(data, batch_size=2, drop_last=False)
    loader = DataLoader(data, num_workers=3, batch_sampler=sampler)
    trainable = torch.nn.ModuleList([])
    trainable.append(student)
    trainable.append(adapter)
    opt_g = torch.optim.Adam(trainable.parameters(), lr=1e-4)
    for i, x in enumerate(loader):
        d_loss = critic(x).mean()
        d_loss.backward()
        opt_d.step()
        if (i + 1) % n_critic == 0:
            g_loss = -critic(gen(x)).mean()
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()

student = StudentNet(width=4)
main()
"""
NETS_FACTORY = """
import torch.nn as nn

class Detector(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.head = nn.Linear(256, num_classes)

def build_detector(num_classes):
    return Detector(num_classes)
"""


def test_a_critic_schedule_a_sampler_s_batch_a_module_factory_and_a_container_s_first_module(tmp_path: Path) -> None:
    """``if (i + 1) % n_critic == 0:`` around a block with its own backward is a GAN's schedule, not gradient
    accumulation (the global batch stays the loader's); a loader's ``batch_sampler=`` built with ``batch_size=2``
    gives the batch; ``net = factory.build_detector(...)`` of a job's module imported whole builds ``Detector``; an
    empty ``ModuleList`` the optimizer trains holds the model appended first."""
    write(tmp_path, {"train.py": GAN_LOOP, "nets/__init__.py": "", "nets/factory.py": NETS_FACTORY,
                     "samplers.py": "class GroupedSampler:\n    pass\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py")
    assert md.batch_size_per_device == 2 and md.global_batch_size == 2
    assert md.model_name == "StudentNet"
    write(tmp_path, {"train.py": GAN_LOOP.replace("trainable.parameters()", "params")})
    assert extract_metadata(tmp_path, "python train.py").model_name == "Detector"


def test_the_parse_cache_is_bounded_by_the_text_it_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text parsed again is the same shared tree while it is cached; after more text than the cache's budget
    was parsed, the oldest is evicted (parsed anew) and the newest is still shared."""
    monkeypatch.setattr(syntax, "_CACHE_CHARS", 2_000)
    first = "x = 1\n" * 50
    assert parse(first) is parse(first)
    others = [f"y{i} = {i}\n" * 40 for i in range(20)]
    for text in others:
        parse(text)
    assert parse(others[-1]) is parse(others[-1])
    old = parse(first)
    for text in others:
        parse(text)
    assert parse(first) is not old


SOLVER_MAIN = """
import argparse
from solver import Solver
p = argparse.ArgumentParser()
p.add_argument('--batch_size', type=int, default=16)
p.add_argument('--g_lr', type=float, default=0.0001)
config = p.parse_args()
solver = Solver(config)
solver.train()
"""
SOLVER = """
import torch
import torch.nn as nn

class Generator(nn.Module):
    def __init__(self, conv_dim=64):
        super().__init__()
        self.main = nn.Sequential(nn.Conv2d(3, conv_dim, 7, 1, 3), nn.ReLU(), nn.Conv2d(conv_dim, 3, 7, 1, 3))

class Discriminator(nn.Module):
    def __init__(self, conv_dim=64):
        super().__init__()
        self.main = nn.Conv2d(3, conv_dim, 4, 2, 1)

class Solver:
    def __init__(self, config):
        self.g_lr = config.g_lr
        self.build_model()

    def build_model(self):
        self.D = Discriminator(64)
        self.G = Generator(64)
        self.d_optimizer = torch.optim.Adam(self.D.parameters(), 0.0001)
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), self.g_lr)

    def train(self):
        for i in range(1000):
            g_loss = self.G(x).mean()
            g_loss.backward()
            self.g_optimizer.step()
"""


def test_a_solver_class_s_networks_built_as_attributes_name_the_model(tmp_path: Path) -> None:
    """A thin entry hands the config to a ``Solver`` whose ``build_model`` sets ``self.G = Generator(...)`` and
    ``self.D = Discriminator(...)`` with an optimizer each: the model is the first optimizer's module that is not
    the GAN's discriminator."""
    write(tmp_path, {"main.py": SOLVER_MAIN, "solver.py": SOLVER})
    md = extract_metadata(tmp_path, "python main.py")
    assert md.model_name == "Generator" and md.model_type == "cnn"


def test_a_sys_path_expression_nested_past_any_real_one_is_ignored(tmp_path: Path) -> None:
    """A hostile ``sys.path.insert(0, a / b / c / ...)`` thousands deep is no import root and breaks nothing else:
    the job's other settings are still read."""
    for n in (300, 3000):  # (past some 1,000 Python's own parser gives up: that file is no Python to follow)
        deep = " / ".join(["base"] * n)
        write(tmp_path, {"train.py": f"import sys, torch\nfrom pathlib import Path\nbase = Path('lib')\n"
                                     f"sys.path.insert(0, {deep})\nopt = torch.optim.SGD(model.parameters(), lr=0.3)\n"})  # fmt: skip
        assert sys_path_roots(Workspace(tmp_path), "train.py") == []
    write(tmp_path, {"train.py": "import sys, torch\nsys.path.insert(0, " + " / ".join(["'lib'"] * 300) + ")\n"
                                 "opt = torch.optim.SGD(model.parameters(), lr=0.3)\n"})  # fmt: skip
    assert extract_metadata(tmp_path, "python train.py").learning_rate == 0.3
