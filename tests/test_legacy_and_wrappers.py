"""Older code, shell wrappers and launcher copies read as they run (round 16's first-sight misses, generalised)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.launch import follow_shell_script, parse_command
from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.advisor.extract.syntax import parse
from schedmate.agents.advisor.extract.workspace import Workspace
from tests.repo_files import write


def test_older_python_loses_only_the_lines_this_parser_refuses() -> None:
    """``x.cuda(async=True)`` (Python <= 3.6) and a Python 2 ``print`` become ``pass`` at their indentation, line
    numbers kept; the rest of the module is read. Text that is not Python still raises (a YAML file)."""
    code = (
        "import torch\ndef train(x):\n    y = x.cuda(async=True)\n    print 'step'\n    return torch.sum(x)\nlr = 0.1\n"
    )
    code += "".join(f"# setting {i}\nwidth_{i} = {i}\n" for i in range(10))  # 26 lines: two may be given up
    tree = parse(code)
    assigns = [n for n in ast.walk(tree) if isinstance(n, ast.Assign)]
    assert [(a.lineno, ast.unparse(a)) for a in assigns][:2] == [(6, "lr = 0.1"), (8, "width_0 = 0")]
    assert any(isinstance(n, ast.Return) and n.lineno == 5 for n in ast.walk(tree))
    with pytest.raises(SyntaxError):
        parse("model:\n  name: resnet\n  depth: 50\ntrain:\n  lr: 0.1\n")


_ARMS_TRAIN = """
import argparse, torch, torch.nn as nn
import models
p = argparse.ArgumentParser()
p.add_argument('--arch', default='resnext')
p.add_argument('--depth', type=int, default=29)
p.add_argument('--width', type=int, default=4)
p.add_argument('--train-batch', type=int, default=128)
p.add_argument('--lr', type=float, default=0.1)
p.add_argument('--gpu-id', default='0')
args = p.parse_args()
os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_id
n_gpu = torch.cuda.device_count()
torch.manual_seed(1) if n_gpu > 0 else None
loader = torch.utils.data.DataLoader(data, batch_size=args.train_batch)
if args.arch.startswith('resnext'):
    model = models.__dict__[args.arch](width=args.width)
elif args.arch.startswith('tiny'):
    model = models.__dict__[args.arch](depth=args.depth)
opt = torch.optim.SGD(model.parameters(), lr=args.lr)
for epoch in range(90):
    for x in loader:
        opt.zero_grad(); model(x).sum().backward(); opt.step()
"""
_ARMS_MODELS = """
import torch.nn as nn
def resnext(width=4):
    return nn.Linear(width, 1000)
def tiny(depth=22):
    return nn.Linear(depth, 10)
"""


def test_string_methods_tell_which_arm_builds_the_model_and_an_unused_gpu_count_is_not_a_gpu_spread(
    tmp_path: Path,
) -> None:
    """``if args.arch.startswith('resnext'): ... elif args.arch.startswith('tiny'):`` — the arm the flag selects
    builds the model with its own keyword arguments; a ``device_count()`` only seeded with is not acted on (no
    DataParallel, spawn or batch split), so the plain script runs on one GPU."""
    write(tmp_path, {"train.py": _ARMS_TRAIN, "models.py": _ARMS_MODELS})
    md = extract_metadata(tmp_path, "python train.py --arch tiny --depth 100 --train-batch 64")
    assert (md.model_name, md.params_millions) == ("tiny", pytest.approx((100 * 10 + 10) / 1e6, abs=1e-6))
    assert (md.batch_size_per_device, md.num_gpus, md.distributed) == (64, 1, "single_gpu")
    other = extract_metadata(tmp_path, "python train.py --width 8")
    assert other.params_millions == pytest.approx((8 * 1000 + 1000) / 1e6, abs=1e-6)


_VIT_TRAIN = """
import argparse, torch
from models.modeling import VisionTransformer, CONFIGS
p = argparse.ArgumentParser()
p.add_argument('--model_type', default='ViT-B_16')
p.add_argument('--backbone', default='resnet50')
args = p.parse_args()
model = VisionTransformer(CONFIGS[args.model_type], 224, num_classes=10)
opt = torch.optim.SGD(model.parameters(), lr=0.03)
"""
_VIT_MODELING = """
import torch.nn as nn
import ml_collections
def get_b16_config():
    config = ml_collections.ConfigDict()
    config.hidden_size = 768
    return config
CONFIGS = {'ViT-B_16': get_b16_config()}
class VisionTransformer(nn.Module):
    def __init__(self, config, img_size=224, num_classes=21843):
        super().__init__()
        self.patch = nn.Conv2d(3, config.hidden_size, kernel_size=16, stride=16)
        self.norm = nn.LayerNorm(config.hidden_size)
        self.head = nn.Linear(config.hidden_size, num_classes)
"""


def test_a_class_the_interpreter_cannot_count_takes_the_known_architecture_a_setting_names(tmp_path: Path) -> None:
    """``VisionTransformer(CONFIGS[args.model_type])`` whose shape the interpreter cannot build: ``--model_type
    ViT-B_16`` names a known architecture (torchvision's ViT-B/16, 86.6 M); a backbone setting is never read so."""
    write(tmp_path, {"train.py": _VIT_TRAIN, "models/__init__.py": "", "models/modeling.py": _VIT_MODELING})
    md = extract_metadata(tmp_path, "python train.py --model_type ViT-B_16")
    assert (md.model_name, md.params_millions, md.model_type) == ("ViT-B_16", 86.6, "vision_transformer")
    unnamed = extract_metadata(tmp_path, "python train.py --model_type ViT-custom")
    assert unnamed.params_millions is None


_RUN_SH = """#!/usr/bin/bash
set -ex
NGPU=${NGPU:-"8"}
CONFIG=${CONFIG:-"debug"}
COMM_MODE=${COMM_MODE:-""}
if [ -n "$COMM_MODE" ]; then
    NGPU="${NGPU}" python3 -m pkg.train --config ${CONFIG} "$@" --steps 1
elif [[ $NGPU -lt 2 ]]; then
    python3 -m pkg.train --config ${CONFIG} "$@"
else
    torchrun --nproc_per_node=${NGPU} --local-ranks-filter 0 --role rank --tee 3 -m pkg.train --config ${CONFIG} "$@"
fi
"""


def test_a_shell_wrapper_s_arms_follow_its_variables_and_the_command_s_environment(tmp_path: Path) -> None:
    """``CONFIG=big ./run.sh``: the variables the command sets are the script's; ``if [ -n "$COMM_MODE" ]`` with an
    empty default and ``[[ $NGPU -lt 2 ]]`` with 8 select the ``else`` arm (torchrun on 8 GPUs, ``-m`` after a
    ``--local-ranks-filter 0``); an environment that selects another arm gets that arm; a test that cannot be told
    leaves every arm possible (the first command, as before)."""
    write(tmp_path, {"run.sh": _RUN_SH, "pkg/__init__.py": "", "pkg/train.py": "print('hi')\n"})
    ws = Workspace(tmp_path)
    got = follow_shell_script(ws, parse_command("CONFIG=big ./run.sh --lr 3e-4"))
    assert (got.launcher, got.nproc_per_node, got.script, got.launcher_args[-1]) == ("torchrun", 8, "pkg.train", "-m")
    assert got.args == ["--config", "big", "--lr", "3e-4"]
    one = follow_shell_script(ws, parse_command("NGPU=1 ./run.sh"))
    assert (one.launcher, one.module, one.args) == ("python", "pkg.train", ["--config", "debug"])
    debug = follow_shell_script(ws, parse_command("COMM_MODE=fake ./run.sh"))
    assert debug.args[-2:] == ["--steps", "1"]
    write(tmp_path, {"run.sh": _RUN_SH.replace('[ -n "$COMM_MODE" ]', "[ -f /etc/cluster ]")})
    unknown = follow_shell_script(Workspace(tmp_path), parse_command("./run.sh"))
    assert unknown.args[-2:] == ["--steps", "1"]


_DIST_LAUNCH_SH = """#!/usr/bin/env bash
GPUS=$1
RUN_COMMAND=${@:2}
if [ $GPUS -lt 8 ]; then
    GPUS_PER_NODE=${GPUS_PER_NODE:-$GPUS}
else
    GPUS_PER_NODE=${GPUS_PER_NODE:-8}
fi
python ./tools/launch.py --nnodes 1 --node_rank 0 --nproc_per_node ${GPUS_PER_NODE} ${RUN_COMMAND}
"""
_LAUNCH_COPY = """
import subprocess, os
from argparse import ArgumentParser, REMAINDER
def parse_args():
    parser = ArgumentParser()
    parser.add_argument("--nnodes", type=int, default=1)
    parser.add_argument("--node_rank", type=int, default=0)
    parser.add_argument("--nproc_per_node", type=int, default=1)
    parser.add_argument("training_script", type=str)
    parser.add_argument('training_script_args', nargs=REMAINDER)
    return parser.parse_args()
def main():
    args = parse_args()
    for local_rank in range(0, args.nproc_per_node):
        cmd = [args.training_script] + args.training_script_args
        subprocess.Popen(cmd, env=os.environ.copy())
main()
"""
_DETR_TRAIN = """
import argparse, torch
p = argparse.ArgumentParser()
p.add_argument('--batch_size', default=2, type=int)
p.add_argument('--lr', default=2e-4, type=float)
p.add_argument('--output_dir', default='')
args = p.parse_args()
model = torch.nn.parallel.DistributedDataParallel(net)
loader = torch.utils.data.DataLoader(data, batch_size=args.batch_size)
opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
"""


def test_a_copy_of_torch_distributed_launch_runs_the_shell_script_it_is_given_on_its_processes(
    tmp_path: Path,
) -> None:
    """``./tools/run_dist_launch.sh 8 ./configs/r50.sh``: ``${@:2}`` hands on the second argument on, the ``if`` picks
    8 GPUs per node, ``tools/launch.py`` (``--nproc_per_node`` and a ``training_script`` it starts per process) runs
    like torchrun, and the shell script it is given runs ``main.py`` on those 8 processes."""
    write(tmp_path, {
        "tools/run_dist_launch.sh": _DIST_LAUNCH_SH, "tools/launch.py": _LAUNCH_COPY, "main.py": _DETR_TRAIN,
        "configs/r50.sh": "#!/usr/bin/env bash\nset -x\nPY_ARGS=${@:1}\npython -u main.py --output_dir exps/r50 ${PY_ARGS}\n",
    })  # fmt: skip
    md = extract_metadata(tmp_path, "./tools/run_dist_launch.sh 8 ./configs/r50.sh --batch_size 4")
    assert (md.num_gpus, md.distributed, md.batch_size_per_device, md.global_batch_size) == (8, "ddp", 4, 32)
    assert md.learning_rate == 2e-4
    four = extract_metadata(tmp_path, "./tools/run_dist_launch.sh 4 ./configs/r50.sh")
    assert (four.num_gpus, four.global_batch_size) == (4, 8)


_SEG_TRAIN = """
import argparse, torch
from config import cfg
from lib import UserScatteredDataParallel
def train(module, iterator, optimizers, epoch, cfg):
    for i in range(cfg.TRAIN.epoch_iters):
        loss = module(next(iterator))
        loss.backward()
        for optimizer in optimizers:
            optimizer.step()
def main(cfg, gpus):
    loader = torch.utils.data.DataLoader(data, batch_size=len(gpus))
    module = UserScatteredDataParallel(net, device_ids=gpus)
    optimizer = torch.optim.SGD(module.parameters(), lr=cfg.TRAIN.lr)
    for epoch in range(cfg.TRAIN.start_epoch, cfg.TRAIN.num_epoch):
        train(module, iter(loader), [optimizer], epoch, cfg)
p = argparse.ArgumentParser()
p.add_argument('--cfg', default='c.yaml')
p.add_argument('--gpus', default='0-3')
p.add_argument('opts', default=None, nargs=argparse.REMAINDER)
args = p.parse_args()
cfg.merge_from_file(args.cfg)
main(cfg, [int(x) for x in args.gpus.split(',')])
"""


def test_gpu_ranges_data_parallel_subclasses_per_gpu_batches_and_per_epoch_iterations(tmp_path: Path) -> None:
    """``--gpus 0-3`` is four GPUs; a job's own ``UserScatteredDataParallel`` is DataParallel; under it a batch
    setting named per GPU (``batch_size_per_gpu``) is per device, the global batch that times the GPUs; a loop over
    ``range(cfg.TRAIN.epoch_iters)`` counts the steps of one epoch, not epochs."""
    write(tmp_path, {
        "train.py": _SEG_TRAIN, "lib.py": "class UserScatteredDataParallel:\n    pass\n",
        "config.py": "from yacs.config import CfgNode as CN\ncfg = CN()\n",
        "c.yaml": "TRAIN:\n  batch_size_per_gpu: 2\n  num_epoch: 20\n  start_epoch: 0\n  epoch_iters: 5000\n  lr: 0.02\n",
    })  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py --gpus 0-3 --cfg c.yaml")
    assert (md.num_gpus, md.distributed, md.model_name) == (4, "dp", None)
    assert (md.batch_size_per_device, md.global_batch_size, md.epochs) == (2, 8, 20)
    two = extract_metadata(tmp_path, "python train.py --gpus 0,2 --cfg c.yaml")
    assert (two.num_gpus, two.global_batch_size) == (2, 4)


_DDIM_MAIN = """
import argparse, os, yaml, torch
p = argparse.ArgumentParser()
p.add_argument('--config', type=str, required=True)
args = p.parse_args()
with open(os.path.join("configs", args.config), "r") as f:
    config = yaml.safe_load(f)
"""


def test_a_config_name_the_entry_joins_to_its_folder_is_read_there(tmp_path: Path) -> None:
    """``--config cifar10.yml`` with ``open(os.path.join("configs", args.config))``: the file is
    ``configs/cifar10.yml`` and its settings are the job's; a name found nowhere reads nothing."""
    write(tmp_path, {
        "main.py": _DDIM_MAIN,
        "configs/cifar10.yml": "training:\n  batch_size: 128\n  n_epochs: 10000\noptim:\n  lr: 0.0002\n",
    })  # fmt: skip
    md = extract_metadata(tmp_path, "python main.py --config cifar10.yml")
    assert (md.batch_size_per_device, md.learning_rate) == (128, 0.0002)
    assert extract_metadata(tmp_path, "python main.py --config missing.yml").learning_rate is None


def test_a_dataset_registry_is_not_a_model_registry(tmp_path: Path) -> None:
    """``datasets.__dict__[args.dataset.upper()](...)`` builds a dataset: with the name now computed (``.upper()``),
    it must still not name the model, which the ``WideResNet(...)`` call does."""
    write(tmp_path, {"train.py": (
        "import argparse, torch, torch.nn as nn\nfrom torchvision import datasets\n"
        "p = argparse.ArgumentParser()\np.add_argument('--dataset', default='cifar10')\nargs = p.parse_args()\n"
        "train = datasets.__dict__[args.dataset.upper()]('../data', train=True)\n"
        "class WideResNet(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(64, 10)\n"
        "model = WideResNet()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    )})  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py --dataset cifar100")
    assert md.model_name == "WideResNet"


def test_a_gpu_count_handed_to_a_trainer_or_an_automatic_device_map_spreads_over_every_visible_gpu(
    tmp_path: Path,
) -> None:
    """``args.gpus = torch.cuda.device_count()`` then ``pl.Trainer(gpus=args.gpus)``, or ``device_map="auto"``: the
    job takes every GPU it sees (the count stays open); the same count only logged stays one GPU."""
    head = "import torch, argparse\nimport pytorch_lightning as pl\nargs = argparse.ArgumentParser().parse_args()\n"
    loop = "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    write(tmp_path, {
        "lit.py": head + "args.gpus = torch.cuda.device_count()\n" + loop + "pl.Trainer(gpus=args.gpus).fit(model)\n",
        "hf.py": head + "from transformers import AutoModel\nn = torch.cuda.device_count()\n"
                 "model = AutoModel.from_pretrained('gpt2', device_map='auto')\n" + loop,
        "log.py": head + "args.gpus = torch.cuda.device_count()\nprint('gpus', args.gpus)\n" + loop,
    })  # fmt: skip
    assert extract_metadata(tmp_path, "python lit.py").num_gpus is None
    assert extract_metadata(tmp_path, "python hf.py").num_gpus is None
    assert extract_metadata(tmp_path, "python log.py").num_gpus == 1
