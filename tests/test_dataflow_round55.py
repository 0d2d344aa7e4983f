"""Round 55's misses, as mechanisms: a command kept in a shell heredoc (``read -r -d '' cmd <<EOF``) and run by
``deepspeed --module``; a global batch beside its micro-batch; ``param_dtype``; the stage an entry's name says
(``train_sft``, ``train_dpo``); Horovod's launcher; lists of training files naming their datasets; ml_collections'
``dict(...)`` fields and ``--config.<field>`` overrides."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_SFT = """
import argparse
import torch
from transformers import AutoModelForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("--model.model_name_or_path", dest="model_name_or_path")
parser.add_argument("--data.dataset", dest="dataset")
parser.add_argument("--train.batch_size", dest="batch_size", type=int, default=128)
parser.add_argument("--train.micro_batch_size", dest="micro_batch_size", type=int, default=8)
parser.add_argument("--train.max_epochs", dest="max_epochs", type=int, default=2)
parser.add_argument("--adam.lr", dest="learning_rate", type=float, default=1e-5)
parser.add_argument("--ds.zero_stage", dest="zero_stage", type=int, default=2)
parser.add_argument("--ds.param_dtype", dest="param_dtype", default="bf16")
args = parser.parse_args()
model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
"""
_SCRIPT = """set -x

read -r -d '' training_commands <<EOF
trainer.cli.train_sft \\
   --data.dataset Open-Orca/OpenOrca \\
   --train.batch_size 256 \\
   --train.micro_batch_size 2 \\
   --model.model_name_or_path meta-llama/Meta-Llama-3-8B \\
   --train.max_epochs 1 \\
   --ds.param_dtype bf16 \\
   --adam.lr 5e-6
EOF

if [[ ${1} != "slurm" ]]; then
    deepspeed --module $training_commands
fi
"""


def test_a_heredoc_command_run_as_a_deepspeed_module(tmp_path: Path) -> None:
    """``read -r -d '' training_commands <<EOF`` … ``EOF`` then ``deepspeed --module $training_commands``: the module
    ``trainer.cli.train_sft`` runs with the heredoc's arguments; ``--train.batch_size`` beside
    ``--train.micro_batch_size`` is the global batch; ``--ds.param_dtype bf16`` the precision; the entry's name says
    supervised fine-tuning (the commit before found no command in the script)."""
    write(tmp_path, {"trainer/__init__.py": "", "trainer/cli/__init__.py": "", "trainer/cli/train_sft.py": _SFT,
                     "examples/train_sft.sh": _SCRIPT})  # fmt: skip
    md = extract_metadata(tmp_path, "bash examples/train_sft.sh")
    assert (md.batch_size_per_device, md.global_batch_size, md.learning_rate, md.epochs) == (2, 256, 5e-06, 1)
    assert (md.precision, md.task, md.dataset) == ("bf16", "instruction_finetuning", "OpenOrca")


_VQA = """
import argparse
import json
import horovod.torch as hvd
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--config")
args = parser.parse_args()
opts = json.load(open(args.config))
hvd.init()
model = torch.nn.Linear(4, 4)
optimizer = torch.optim.AdamW(model.parameters(), lr=opts["learning_rate"])
"""
_VQA_JSON = (
    '{"train_txt_dbs": ["/txt/vqa_train.db", "/txt/vqa_vg.db"], "train_img_dbs": ["/img/coco_train2014/"], '
    '"learning_rate": 8e-05, "num_train_steps": 6000}'
)


def test_horovod_ranks_and_a_list_of_training_files(tmp_path: Path) -> None:
    """``horovodrun -np 4 python train_vqa.py``: four ranks, data-parallel; ``train_txt_dbs: [/txt/vqa_train.db,
    …]`` names VQA v2, and ALBEF-style ``train_file: [coco.json, cc12m.json]`` every known dataset in it (the commit
    before ran one process and read no list)."""
    write(tmp_path, {"train_vqa.py": _VQA, "config/vqa.json": _VQA_JSON})
    md = extract_metadata(tmp_path, "horovodrun -np 4 python train_vqa.py --config config/vqa.json")
    assert (md.num_gpus, md.distributed, md.dataset) == (4, "ddp", "VQA v2")
    write(tmp_path, {"config/pre.json": '{"train_file": ["data/coco.json", "data/cc12m.json"], "learning_rate": 1e-4}'})
    assert extract_metadata(tmp_path, "python train_vqa.py --config config/pre.json").dataset == "COCO + CC12M"


_BV_TRAIN = """
from absl import app, flags
from ml_collections import config_flags
import jax

config_flags.DEFINE_config_file("config", None, "Training configuration.", lock_config=True)


def main(argv):
    config = flags.FLAGS.config
    total = steps_of("total", config)


if __name__ == "__main__":
    app.run(main)
"""
_BV_CONFIG = """
import ml_collections as mlc


def get_config():
  config = mlc.ConfigDict()
  config.total_epochs = 90
  config.input = {}
  config.input.data = dict(
      name='imagenet2012',
      split='train[:99%]',
  )
  config.input.batch_size = 1024
  config.lr = 0.001
  return config
"""


def test_ml_collections_dict_fields_and_config_flag_overrides(tmp_path: Path) -> None:
    """``config.input.data = dict(name='imagenet2012', …)`` is the field ``input.data.name``, which names ImageNet;
    ``--config.total_epochs 300`` overrides the file's 90 (the commit before read neither)."""
    write(tmp_path, {"big_vision/__init__.py": "", "big_vision/train.py": _BV_TRAIN,
                     "big_vision/configs/vit.py": _BV_CONFIG})  # fmt: skip
    md = extract_metadata(tmp_path, "python -m big_vision.train --config big_vision/configs/vit.py")
    assert md.dataset is not None and md.dataset.startswith("ImageNet")
    assert (md.epochs, md.global_batch_size) == (90, 1024)
    longer = "python -m big_vision.train --config big_vision/configs/vit.py --config.total_epochs 300"
    assert extract_metadata(tmp_path, longer).epochs == 300


_VIM = """
import torch
import torch.nn as nn
from mamba_ssm.modules.mamba_simple import Mamba


class VisionMamba(nn.Module):
    def __init__(self, embed_dim=192, depth=24, num_classes=1000):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, embed_dim, 16, 16)
        self.layers = nn.ModuleList([Mamba(embed_dim, d_state=16) for _ in range(depth)])
        self.head = nn.Linear(embed_dim, num_classes)


model = VisionMamba()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
"""


def test_layers_of_a_package_out_of_sight_leave_the_count_open(tmp_path: Path) -> None:
    """``Mamba(embed_dim, d_state=16)`` from a package the workspace does not hold (Vim vendors ``mamba_ssm`` in a
    folder that is no import root): its sized layers are out of sight, so the count is unknown rather than the patch
    embedding and head alone (the commit before said 0.34 M for a 7 M model)."""
    write(tmp_path, {"main.py": _VIM})
    assert extract_metadata(tmp_path, "python main.py").params_millions is None
    write(tmp_path, {"plain.py": _VIM.replace("Mamba(embed_dim, d_state=16)", "nn.Linear(embed_dim, embed_dim)")})
    assert extract_metadata(tmp_path, "python plain.py").params_millions is not None
