"""Round 74's misses (measured once at first sight, then worked on), as mechanisms: an installed package's training
CLI run by the job's launch script (Graphormer's ``fairseq-train --user-dir ../../graphormer --batch-size 64 …``); a
launch script that moves to another folder before it trains (Yi's ``cd "$(dirname "${BASH_SOURCE[0]}")/../sft/"``)
and exports its devices (``export CUDA_VISIBLE_DEVICES=0,1,2,3``); ``sys.path`` grown with ``os.path.pardir``; the
DeepSpeed config a helper with parameters returns as a dict literal; DeepSpeed's hostfile slots."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.budget import Budget, spending
from schedmate.agents.advisor.extract.launch import follow_shell_script, parse_command
from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.advisor.extract.workspace import Workspace
from tests.repo_files import write

_FAIRSEQ_SH = """#!/usr/bin/env bash
mkdir -p ./ckpts
pip install -e ../../fairseq
CUDA_VISIBLE_DEVICES=0 fairseq-train \\
--user-dir ../../graphormer \\
--num-workers 16 \\
--dataset-name zinc \\
--arch graphormer_slim \\
--lr 2e-4 --end-learning-rate 1e-9 \\
--batch-size 64 \\
--fp16 \\
--max-epoch 10000 \\
--save-dir ./ckpts
"""


def test_an_installed_training_cli_in_a_launch_script(tmp_path: Path) -> None:
    """A script's `fairseq-train …` line (after `mkdir` and `pip install`, which set no batch, rate or length) is
    the job's command: its flags give the batch, the rate, the epochs, fp16 and the one visible GPU."""
    root = write(tmp_path, {"examples/prop/zinc.sh": _FAIRSEQ_SH, "graphormer/__init__.py": ""})
    with spending(Budget()):
        launch = follow_shell_script(Workspace(root / "examples/prop"), parse_command("bash zinc.sh"))
    assert launch.launcher == "fairseq-train" and launch.env.get("CUDA_VISIBLE_DEVICES") == "0"
    m = extract_metadata(root / "examples/prop", "bash zinc.sh")
    assert (m.batch_size_per_device, m.learning_rate, m.epochs, m.precision) == (64, 2e-4, 10000, "fp16")
    assert m.model_name == "graphormer_slim" and m.dataset == "zinc" and m.num_gpus == 1


def test_a_preparation_command_is_not_taken_for_the_training_cli(tmp_path: Path) -> None:
    """`wget -O data.zip URL` or `mkdir -p out` carry no training flags: a script of only those names no command."""
    script = "wget --tries 3 -O data.zip https://example.org/data.zip\nunzip data.zip\nmkdir -p out\n"
    root = write(tmp_path, {"prepare.sh": script})
    with spending(Budget()):
        launch = follow_shell_script(Workspace(root), parse_command("bash prepare.sh"))
    assert launch.launcher == "bash" and launch.script == "prepare.sh"


_YI_SH = """#/usr/bin/env bash

cd "$(dirname "${BASH_SOURCE[0]}")/../sft/"

export CUDA_VISIBLE_DEVICES=0,1,2,3 #limit parallelism to avoid cpu oom

deepspeed main.py \\
	--data_path /DATA_PATH/ \\
	--per_device_train_batch_size 1 \\
	--learning_rate 2e-6 \\
	--num_train_epochs 4 \\
	--zero_stage 2 \\
	--deepspeed \\
	--output_dir /finetuned_model
"""

_YI_MAIN = """
import argparse
import os
import sys

import deepspeed
import torch
from torch.utils.data import DataLoader

sys.path.append(
    os.path.abspath(os.path.join(os.path.dirname(__file__), os.path.pardir))
)
from utils.ds_utils import get_train_ds_config


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_path", type=str)
    parser.add_argument("--per_device_train_batch_size", type=int, default=16)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--zero_stage", type=int, default=0)
    parser.add_argument("--offload", action="store_true")
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    ds_config = get_train_ds_config(offload=args.offload, stage=args.zero_stage)
    ds_config["train_micro_batch_size_per_gpu"] = args.per_device_train_batch_size
    loader = DataLoader(range(100), batch_size=args.per_device_train_batch_size)
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=ds_config)
    for epoch in range(args.num_train_epochs):
        for batch in loader:
            loss = model(batch).sum()
            model.backward(loss)
            model.step()


if __name__ == "__main__":
    main()
"""

_DS_UTILS = """
GLOBAL_BATCH_SIZE = 32


def get_train_ds_config(offload, stage=2, enable_tensorboard=False):
    device = "cpu" if offload else "none"
    zero_opt_dict = {"stage": stage, "offload_param": {"device": device}}
    return {
        "train_batch_size": GLOBAL_BATCH_SIZE,
        "steps_per_print": 10,
        "zero_optimization": zero_opt_dict,
        "fp16": {"enabled": True, "loss_scale_window": 100},
        "gradient_clipping": 1.0,
        "tensorboard": {"enabled": enable_tensorboard},
    }
"""


def test_a_launch_script_that_moves_to_its_training_folder(tmp_path: Path) -> None:
    """Run from the repository's root, the script `cd`s to `../sft/` from its own folder, exports four devices and
    starts `deepspeed main.py`: the entry is `finetune/sft/main.py` (its sibling package on `sys.path` through
    `os.path.pardir`), four processes of one example each, and fp16 from the config the helper returns."""
    root = write(
        tmp_path,
        {
            "finetune/scripts/run_sft.sh": _YI_SH,
            "finetune/sft/main.py": _YI_MAIN,
            "finetune/utils/__init__.py": "",
            "finetune/utils/ds_utils.py": _DS_UTILS,
        },
    )
    m = extract_metadata(root, "bash finetune/scripts/run_sft.sh")
    assert m.num_gpus == 4 and m.global_batch_size == 4 and m.batch_size_per_device == 1
    assert (m.learning_rate, m.epochs, m.precision, m.distributed) == (2e-6, 4, "fp16", "deepspeed_zero2")


def test_a_script_run_from_its_own_folder_with_a_relative_cd(tmp_path: Path) -> None:
    """`cd ../sft/` (no `dirname`) from the scripts folder the job starts in reaches the same entry inside the
    repository the submission names (and nothing outside it without one); a `cd` to a folder that is not there
    leaves the script's own."""
    root = write(
        tmp_path,
        {
            "finetune/scripts/run.sh": "cd ../sft/\npython main.py --learning_rate 3e-5\n",
            "finetune/sft/main.py": _YI_MAIN,
            "finetune/utils/__init__.py": "",
            "finetune/utils/ds_utils.py": _DS_UTILS,
            "other/run.sh": "cd ./missing\npython train.py --lr 0.1\n",
            "other/train.py": "import torch\nopt = torch.optim.SGD([], lr=0.5)\nopt.step()\n",
        },
    )
    with spending(Budget()):
        launch = follow_shell_script(Workspace(root / "finetune/scripts"), parse_command("bash run.sh"))
    assert launch.cwd == "../sft" and launch.script == "main.py"
    m = extract_metadata(root / "finetune/scripts", "bash run.sh", repo=root)
    assert m.learning_rate == 3e-5 and m.precision == "fp16"
    assert extract_metadata(root / "finetune/scripts", "bash run.sh").precision == "fp32"  # main.py not readable
    assert extract_metadata(root / "other", "bash run.sh").learning_rate == 0.5  # its train.py read: the SGD's rate


def test_deepspeed_hostfile_slots(tmp_path: Path) -> None:
    """`deepspeed --hostfile config/hostfile`: one process per slot of every listed host (2 x 8 = 16), limited by
    `--num_nodes`; a file with a line that is not a host and its slots leaves the count unknown."""
    train = "import deepspeed\nengine, *_ = deepspeed.initialize(model=model)\nengine.backward(loss)\nengine.step()\n"
    root = write(
        tmp_path,
        {
            "train.py": train,
            "config/hostfile": "# the cluster\n[master address] slots=8\nworker-1 slots=8\n",
            "config/partial": "node-a slots=8\n...\n",
        },
    )
    assert extract_metadata(root, "deepspeed --hostfile config/hostfile train.py").num_gpus == 16
    assert extract_metadata(root, "deepspeed --hostfile=config/hostfile --num_nodes 1 train.py").num_gpus == 8
    assert extract_metadata(root, "deepspeed --hostfile config/partial train.py").num_gpus is None
    assert extract_metadata(root, "deepspeed -H config/hostfile --include worker-1:0,1 train.py").num_gpus != 16


def test_a_printed_command_is_not_the_training_cli(tmp_path: Path) -> None:
    """`echo $cmd` before `eval $cmd` prints the training flags; the shell's `echo` trains nothing: the command that
    runs after it is the job's."""
    script = 'cmd="python train.py --lr 0.2 --batch-size 4 --epochs 3"\necho $cmd\neval $cmd\n'
    train = "import torch\nfor epoch in range(3):\n    optimizer.step()\n"
    root = write(tmp_path, {"run.sh": script, "train.py": train})
    with spending(Budget()):
        launch = follow_shell_script(Workspace(root), parse_command("bash run.sh"))
    assert launch.launcher == "python" and launch.script == "train.py" and "0.2" in launch.args


_MM_CONFIG = """
model = dict(
    type='ImageClassifier',
    backbone=dict(type='ResNet', depth=50, num_stages=4, out_indices=(3, ), style='pytorch'),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(type='LinearClsHead', num_classes=1000, in_channels=2048))
train_dataloader = dict(batch_size=32, dataset=dict(type='ImageNet', data_root='data/imagenet'))
train_cfg = dict(by_epoch=True, max_epochs=100)
optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1, momentum=0.9))
"""

_MM_TRAIN = """
import argparse
from mmengine.config import Config
from mmengine.runner import Runner


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('config')
    parser.add_argument('--launcher', default='none')
    args = parser.parse_args()
    cfg = Config.fromfile(args.config)
    runner = Runner.from_cfg(cfg)
    runner.train()


if __name__ == '__main__':
    main()
"""

_MM_DIST = """#!/usr/bin/env bash
CONFIG=$1
GPUS=$2
PORT=${PORT:-29500}
PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \\
python -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT \\
    $(dirname "$0")/train.py $CONFIG --launcher pytorch ${@:3}
"""


def test_an_openmmlab_launch_script_reaches_its_train_entry(tmp_path: Path) -> None:
    """`bash tools/dist_train.sh configs/resnet/resnet50_8xb32_in1k.py 8` runs `$(dirname "$0")/train.py`, the
    script's own folder's entry; the config's ResNet-50 names the model (the config file's name only decorates it)."""
    root = write(
        tmp_path,
        {
            "tools/dist_train.sh": _MM_DIST,
            "tools/train.py": _MM_TRAIN,
            "configs/resnet/resnet50_8xb32_in1k.py": _MM_CONFIG,
        },
    )
    with spending(Budget()):
        launch = follow_shell_script(
            Workspace(root), parse_command("bash tools/dist_train.sh configs/resnet/resnet50_8xb32_in1k.py 8")
        )
    assert launch.script == "tools/train.py" and launch.nproc_per_node == 8
    m = extract_metadata(root, "bash tools/dist_train.sh configs/resnet/resnet50_8xb32_in1k.py 8")
    assert m.model_name == "ResNet-50" and m.params_millions is not None and abs(m.params_millions - 25.6) < 0.1
    assert (m.batch_size_per_device, m.global_batch_size, m.num_gpus) == (32, 256, 8)
