"""Round 58's misses (and rounds 56-57's), as mechanisms: a shell script's ``while [[ "$1" != "" ]]; do case $1 in
…`` option loop; LoRA only where the adapters are built on the path the settings take; the i-th dataclass of an
``HfArgumentParser``; a DeepSpeed config given as ``--deepspeed x.json`` is DeepSpeed's, not the job's settings;
ChatML turns mean instruction tuning; Hydra's ``--config-name`` and a ``config_path`` built from the package's
folder; a ``group@package=option`` choice; typed-argument-parser (``Tap``) options; attributes a parsing function
sets before it returns the arguments; ``for ep in range(start_ep, args.ep)``."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.hydra import compose_hydra
from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.advisor.extract.workspace import Workspace
from tests.repo_files import write

_FINETUNE = """
from dataclasses import dataclass, field
import transformers
from transformers import Trainer
from peft import LoraConfig, get_peft_model


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="Qwen/Qwen-7B")


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    use_lora: bool = False


@dataclass
class LoraArguments:
    lora_r: int = 64


def preprocess(sources, tokenizer):
    roles = {"user": "<|im_start|>user", "assistant": "<|im_start|>assistant"}
    return roles


def train():
    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments, LoraArguments))
    model_args, training_args, lora_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    if training_args.use_lora:
        model = get_peft_model(model, LoraConfig(r=lora_args.lora_r))
    Trainer(model=model, args=training_args).train()


if __name__ == "__main__":
    train()
"""
_OPTIONS_LOOP = """#!/bin/bash
MODEL="Qwen/Qwen-7B"
DATA="path_to_data"
DS_CONFIG_PATH="ds_config_zero2.json"

while [[ "$1" != "" ]]; do
    case $1 in
        -m | --model )
            shift
            MODEL=$1
            ;;
        -d | --data )
            shift
            DATA=$1
            ;;
        * )
            echo "Unknown argument ${1}"
            exit 1
            ;;
    esac
    shift
done

export CUDA_VISIBLE_DEVICES=0

python finetune.py \\
  --model_name_or_path $MODEL \\
  --data_path $DATA \\
  --fp16 True \\
  --num_train_epochs 5 \\
  --per_device_train_batch_size 2 \\
  --gradient_accumulation_steps 8 \\
  --learning_rate 3e-4 \\
  --deepspeed ${DS_CONFIG_PATH} \\
  EXTRA
"""
_DS_CONFIG = """{
  "fp16": {"enabled": "auto"},
  "zero_optimization": {"stage": 2},
  "gradient_accumulation_steps": "auto",
  "train_batch_size": "auto",
  "train_micro_batch_size_per_gpu": "auto"
}"""


def _finetune_repo(tmp_path: Path, extra: str) -> None:
    write(tmp_path, {"finetune.py": _FINETUNE, "run.sh": _OPTIONS_LOOP.replace("EXTRA", extra),
                     "ds_config_zero2.json": _DS_CONFIG})  # fmt: skip


def test_an_option_loop_reads_every_option_and_none_when_none_is_given(tmp_path: Path) -> None:
    """``while [[ "$1" != "" ]]; do case $1 in -m) shift; MODEL=$1 ;; …; esac; shift; done``: with no arguments the
    loop does not run and ``MODEL`` keeps its value (the commit before ran every arm once: ``MODEL=$1``, unknown); with
    ``-m X -d Y`` both options are read."""
    _finetune_repo(tmp_path, "--use_lora")
    md = extract_metadata(tmp_path, "bash run.sh")
    assert md.model_name == "Qwen-7B + LoRA"
    given = extract_metadata(tmp_path, "bash run.sh -m /data/Qwen-14B -d /data/chats.json")
    assert given.model_name == "Qwen-14B + LoRA"


def test_lora_only_where_the_settings_build_the_adapters(tmp_path: Path) -> None:
    """``if training_args.use_lora: model = get_peft_model(…)`` with ``use_lora`` off (the dataclass default, the
    second of the parser's dataclasses): no LoRA in the name and no PEFT among the frameworks; with ``--use_lora``
    both (the commit before said LoRA whenever the code could build adapters)."""
    _finetune_repo(tmp_path, "--report_to none")
    md = extract_metadata(tmp_path, "bash run.sh")
    assert md.model_name == "Qwen-7B"
    assert "PEFT" not in md.framework
    _finetune_repo(tmp_path, "--use_lora")
    lora = extract_metadata(tmp_path, "bash run.sh")
    assert lora.model_name == "Qwen-7B + LoRA"
    assert "PEFT" in lora.framework


def test_a_deepspeed_config_of_auto_values_leaves_the_trainer_arguments(tmp_path: Path) -> None:
    """``--deepspeed ds_config_zero2.json`` whose ``gradient_accumulation_steps`` is ``"auto"``: the trainer's own
    ``--gradient_accumulation_steps 8`` stands (the commit before merged the DeepSpeed file over the job's settings:
    a global batch of 2); ChatML turns (``<|im_start|>``) make the task instruction tuning."""
    _finetune_repo(tmp_path, "--use_lora")
    md = extract_metadata(tmp_path, "bash run.sh")
    assert (md.batch_size_per_device, md.global_batch_size, md.num_gpus) == (2, 16, 1)
    assert md.distributed == "deepspeed_zero2"
    assert md.task == "instruction_finetuning"


_HYDRA_TRAIN = """
from importlib.resources import files

import hydra
import torch


@hydra.main(version_base="1.3", config_path=str(files("tts_pkg").joinpath("configs")), config_name=None)
def main(cfg):
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.optim.learning_rate)
    for epoch in range(cfg.optim.epochs):
        pass


if __name__ == "__main__":
    main()
"""
_HYDRA_CONFIG = """
datasets:
  name: Emilia_ZH_EN
optim:
  epochs: 11
  learning_rate: 7.5e-5
"""


def test_hydra_config_name_on_the_command_and_a_config_path_from_the_package(tmp_path: Path) -> None:
    """``config_path=str(files("tts_pkg").joinpath("configs"))`` is ``src/tts_pkg/configs`` (a namespace package, no
    ``__init__.py``), and ``--config-name Base.yaml`` picks the config there (the commit before read neither)."""
    write(tmp_path, {"src/tts_pkg/train/train.py": _HYDRA_TRAIN, "src/tts_pkg/configs/Base.yaml": _HYDRA_CONFIG,
                     "src/tts_pkg/configs/Other.yaml": "optim:\n  epochs: 3\n  learning_rate: 1.0e-3\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "accelerate launch src/tts_pkg/train/train.py --config-name Base.yaml")
    assert (md.epochs, md.learning_rate) == (11, 7.5e-05)
    other = extract_metadata(tmp_path, "python src/tts_pkg/train/train.py -cn Other")
    assert (other.epochs, other.learning_rate) == (3, 0.001)


_PACKAGED_TRAIN = """
import hydra
import lightning as L


@hydra.main(version_base="1.3", config_path="./configs", config_name="pretrain.yaml")
def main(cfg):
    trainer = L.Trainer(max_steps=cfg.trainer.max_steps)
    trainer.fit(hydra.utils.instantiate(cfg.model))


if __name__ == "__main__":
    main()
"""


def test_a_group_option_placed_at_a_package(tmp_path: Path) -> None:
    """``+lora@model.lora_config=r_8`` merges ``configs/lora/r_8.yaml`` under ``model.lora_config`` (the commit
    before dropped the choice); ``--config-name finetune`` replaces the decorator's ``pretrain.yaml``."""
    write(tmp_path, {"train.py": _PACKAGED_TRAIN,
                     "configs/pretrain.yaml": "trainer:\n  max_steps: 100000\nmodel:\n  lora_config: null\n",
                     "configs/finetune.yaml": "trainer:\n  max_steps: 10000\nmodel:\n  lora_config: null\n",
                     "configs/lora/r_8.yaml": "r: 8\nlora_alpha: 16\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py --config-name finetune +lora@model.lora_config=r_8")
    assert md.max_steps == 10000
    composed = compose_hydra(Workspace(tmp_path), "train.py", _PACKAGED_TRAIN, {},
                             ["--config-name", "finetune", "+lora@model.lora_config=r_8"])  # fmt: skip
    assert composed is not None
    assert composed[1]["model.lora_config.r"].value == 8


_TAP_ARGS = """
from tap import Tap
import torch.distributed as dist


class Args(Tap):
    depth: int = 16
    tblr: float = 1e-4
    tlr: float = None
    bs: int = 768
    batch_size: int = 0
    ep: int = 250
    fp16: int = 0


def init_dist_and_get_args():
    args = Args(explicit_bool=True).parse_args(known_only=True)
    bs_per_gpu = round(args.bs / dist.get_world_size())
    args.batch_size = bs_per_gpu
    args.tlr = args.tblr * args.bs / 256
    return args
"""
_TAP_TRAIN = """
import torch
from torch.utils.data import DataLoader
from utils import arg_util


def main_training():
    args: arg_util.Args = arg_util.init_dist_and_get_args()
    model = torch.nn.Linear(8, 8)
    opt = torch.optim.AdamW(model.parameters(), lr=args.tlr)
    loader = DataLoader(list(range(100)), batch_size=args.batch_size)
    start_ep = 0
    for ep in range(start_ep, args.ep):
        for x in loader:
            opt.step()


if __name__ == "__main__":
    main_training()
"""


def test_tap_options_and_what_the_parsing_function_sets(tmp_path: Path) -> None:
    """``class Args(Tap)`` fields are the command's options (``--bs=512 --ep=200``); the function that parses them
    sets ``args.batch_size = round(args.bs / world_size)`` and ``args.tlr = args.tblr * args.bs / 256`` before it
    returns them, which the optimizer and the loader then take; ``for ep in range(start_ep, args.ep)`` is the epoch
    loop (the commit before read no Tap option, nor those assignments, nor that loop)."""
    write(tmp_path, {"utils/__init__.py": "", "utils/arg_util.py": _TAP_ARGS, "train.py": _TAP_TRAIN})
    md = extract_metadata(tmp_path, "torchrun --nproc_per_node=8 train.py --bs=512 --ep=200")
    assert md.epochs == 200
    assert md.learning_rate == 0.0002
    assert (md.batch_size_per_device, md.global_batch_size) == (64, 512)


_RF_SCRIPT = """
import argparse
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets


class DiT_Llama(nn.Module):
    def __init__(self, in_channels, input_size, dim=512, n_layers=5, num_classes=10):
        super().__init__()
        self.x_embedder = nn.Conv2d(in_channels, dim, kernel_size=2, stride=2)
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n_layers)])
        self.final = nn.Linear(dim, in_channels * 4)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="use cifar?")
    parser.add_argument("--cifar", action="store_true")
    args = parser.parse_args()
    CIFAR = args.cifar
    if CIFAR:
        fdatasets = datasets.CIFAR10
        model = DiT_Llama(3, 32, dim=256, n_layers=10).cuda()
    else:
        fdatasets = datasets.MNIST
        model = DiT_Llama(1, 32, dim=64, n_layers=6).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    dataloader = DataLoader(fdatasets(root="./data", train=True, download=True), batch_size=256)
    for epoch in range(100):
        for x, c in dataloader:
            optimizer.step()
"""


def test_the_model_built_in_the_arm_a_flag_chooses_through_a_name(tmp_path: Path) -> None:
    """``CIFAR = args.cifar`` then ``if CIFAR: model = DiT_Llama(3, …, dim=256) else: model = DiT_Llama(1, …,
    dim=64)``: without ``--cifar`` the second is trained (the commit before counted the first); a DiT is a vision
    transformer (not a Llama: a decoder over tokens), and a rectified-flow README makes the task generation."""
    write(tmp_path, {"rf.py": _RF_SCRIPT, "README.md": "# Minimal Implementation of Rectified Flow Transformers\n"})
    mnist = extract_metadata(tmp_path, "python rf.py")
    cifar = extract_metadata(tmp_path, "python rf.py --cifar")
    assert mnist.params_millions is not None and cifar.params_millions is not None
    assert mnist.params_millions < 0.1 < cifar.params_millions
    assert (mnist.dataset, cifar.dataset) == ("MNIST", "CIFAR-10")
    assert (mnist.model_type, mnist.task) == ("vision_transformer", "image_generation_diffusion")


_CLICK_DS = """
import click
import deepspeed
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from transformers import get_scheduler


class Net(nn.Module):
    def __init__(self, dim=256, n_layers=12):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n_layers)])


class RF(nn.Module):
    def __init__(self, model, ln=True):
        super().__init__()
        self.model = model
        self.ln = ln


@click.command()
@click.option("--num_train_epochs", default=2, help="Number of training epochs")
@click.option("--learning_rate", default=3e-3, help="Learning rate")
@click.option("--train_batch_size", default=256, help="Total Train batch size")
@click.option("--per_device_train_batch_size", default=128, help="Per device train batch size")
@click.option("--train_dir", default="./data", help="Train dir")
@click.option("--hidden_dim", default=256, help="Hidden dim")
@click.option("--n_layers", default=12, help="Layers")
def main(num_train_epochs, learning_rate, train_batch_size, per_device_train_batch_size, train_dir,
         hidden_dim=256, n_layers=12):
    ds_config = {
        "train_micro_batch_size_per_gpu": per_device_train_batch_size,
        "train_batch_size": train_batch_size,
        "zero_optimization": {"stage": 2},
        "bfloat16": {"enabled": True},
    }
    rf = RF(Net(dim=hidden_dim, n_layers=n_layers), True).cuda()
    groups = [{"params": [p for p in rf.parameters()], "lr": learning_rate}]
    optimizer = torch.optim.AdamW(groups, lr=learning_rate)
    loader = DataLoader(train_dir, batch_size=per_device_train_batch_size)
    engine, optimizer, _, _ = deepspeed.initialize(model=rf, config=ds_config, optimizer=optimizer)
    for i in range(num_train_epochs):
        for batch in loader:
            engine.step()


if __name__ == "__main__":
    main()
"""
_CLICK_RUN = """deepspeed --hostfile=./hostfiles main.py \\
        --learning_rate 0.005 \\
        --hidden_dim 1024 \\
        --n_layers 4 \\
        --num_train_epochs 200 \\
        --train_batch_size 1024 \\
        --per_device_train_batch_size 32 \\
        --train_dir "/jfs/datacomp-1b-0-10k/1"
"""


def test_click_options_a_deepspeed_config_built_in_code_and_a_handed_network(tmp_path: Path) -> None:
    """click infers an option's type from its default (``--learning_rate 0.005`` is a float); the parameters of the
    click command are the command's options where the model is counted (``Net(dim=hidden_dim)`` with 1024, not the
    signature's 256); the dict handed to ``deepspeed.initialize(config=)`` gives the global batch and bf16
    (``"bfloat16"``, DeepSpeed's other name for it); the module DeepSpeed trains is ``rf``, a wrapper handed the
    network (named "Net (RF)"); a numbered shard folder names the folder above it (DataComp); importing only
    ``get_scheduler`` from transformers is no HF Transformers job (the commit before read none of these)."""
    write(tmp_path, {"main.py": _CLICK_DS, "run_multi.sh": _CLICK_RUN})
    md = extract_metadata(tmp_path, "bash run_multi.sh")
    assert (md.learning_rate, md.epochs, md.batch_size_per_device, md.global_batch_size) == (0.005, 200, 32, 1024)
    assert md.precision == "bf16"
    assert md.model_name == "Net (RF)"
    assert md.params_millions is not None and abs(md.params_millions - 4 * (1024 * 1024 + 1024) / 1e6) < 0.01
    assert md.dataset == "DataComp"
    assert md.framework == ["PyTorch", "DeepSpeed"]


_LIT_TRAIN = """
import hydra
import lightning as L


@hydra.main(version_base="1.3", config_path="./configs", config_name="pretrain.yaml")
def main(cfg):
    trainer = hydra.utils.instantiate(cfg.trainer)
    trainer.fit(hydra.utils.instantiate(cfg.model))


if __name__ == "__main__":
    main()
"""
_LIT_BASE = """trainer:
  _target_: lightning.pytorch.trainer.Trainer
  accelerator: gpu
  devices: auto
  strategy:
    _target_: lightning.pytorch.strategies.DDPStrategy
  precision: bf16-mixed
  max_steps: 100_000
"""
_LIT_FINETUNE = """defaults:
  - base
  - _self_

trainer:
  max_steps: 10000
data:
  batch_size: 4
"""


def test_a_primary_config_over_its_plain_base_and_a_strategy_class(tmp_path: Path) -> None:
    """``defaults: [base, _self_]`` merges ``base.yaml`` under the chosen config (the commit before read no plain
    default); ``strategy: {_target_: …DDPStrategy}`` is DDP, and ``devices: auto`` leaves the GPU count open."""
    write(tmp_path, {"train.py": _LIT_TRAIN, "configs/pretrain.yaml": "trainer:\n  max_steps: 5\n",
                     "configs/base.yaml": _LIT_BASE, "configs/finetune.yaml": _LIT_FINETUNE})  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py --config-name finetune")
    assert (md.max_steps, md.precision, md.distributed, md.num_gpus) == (10000, "bf16", "ddp", None)


_LLAMA_YAML = """model:
  dtype: bfloat16
  model_config:
    hidden_act: silu
    hidden_size: 2048
    intermediate_size: 11008
    max_position_embeddings: 128256
    num_attention_heads: 16
    num_hidden_layers: 28
    num_key_value_heads: 2
    rope_scaling: null
    tie_word_embeddings: true
    vocab_size: 128256
tokens:
  micro_batch_size: 3
  train_steps: 2000
"""
_LLAMA_TRAIN = """
import argparse
import yaml

parser = argparse.ArgumentParser()
parser.add_argument("--config-file", type=str, required=True)
args = parser.parse_args()
config = yaml.safe_load(open(args.config_file))
"""


def test_a_llama_shaped_config_counts_its_gated_mlp_grouped_attention_and_vocabulary(tmp_path: Path) -> None:
    """A config of ``hidden_size``/``intermediate_size``/``num_key_value_heads``/``vocab_size`` with a SiLU
    activation: 28 x (2 x 2048^2 + 2 x 2048 x 256 + 3 x 2048 x 11008) + 128,256 x 2048 (tied, rotary positions)
    = 2,420.6 M (the commit before used 12 x d^2 per layer and GPT-2's vocabulary: 1,775 M)."""
    write(tmp_path, {"run_train.py": _LLAMA_TRAIN, "examples/tiny_llama.yaml": _LLAMA_YAML})
    md = extract_metadata(tmp_path, "torchrun --nproc_per_node=8 run_train.py --config-file examples/tiny_llama.yaml")
    assert md.params_millions == 2420.6


def test_use_fp16_turns_half_precision_on(tmp_path: Path) -> None:
    """``--use_fp16 True`` (guided-diffusion's and the consistency models' switch) is fp16 training (the commit
    before read it as no precision setting)."""
    write(tmp_path, {"train.py": "import argparse\nparser = argparse.ArgumentParser()\n"
                     "parser.add_argument('--use_fp16', type=bool, default=False)\nargs = parser.parse_args()\n"})  # fmt: skip
    assert extract_metadata(tmp_path, "python train.py --use_fp16 True").precision == "fp16"
    assert extract_metadata(tmp_path, "python train.py").precision == "fp32"


def test_a_typed_network_through_the_jobs_own_base_classes(tmp_path: Path) -> None:
    """``network_g.type: CodeFormer`` where ``class CodeFormer(VQAutoEncoder)`` (another network the config builds,
    ``network_vqgan.type``), and ``model.arch: minigpt4`` where ``class MiniGPT4(MiniGPTBase)`` and
    ``MiniGPTBase(BaseModel)``: those classes are the models (the commit before took the VQ auto-encoder, and found
    no MiniGPT-4); a LAVIS-style ``datasets: {cc_sbu_align: …}`` section names the dataset."""
    write(tmp_path, {
        "basicsr/train.py": "import argparse\nparser = argparse.ArgumentParser()\n"
                            "parser.add_argument('-opt', type=str)\nargs = parser.parse_args()\n",
        "basicsr/archs/vqgan_arch.py": "import torch.nn as nn\nclass VQAutoEncoder(nn.Module):\n"
                                       "    def __init__(self, nf=64):\n        super().__init__()\n"
                                       "        self.conv = nn.Conv2d(3, nf, 3)\n",
        "basicsr/archs/codeformer_arch.py": "import torch.nn as nn\nfrom .vqgan_arch import VQAutoEncoder\n"
                                            "class CodeFormer(VQAutoEncoder):\n    def __init__(self, dim_embd=512):\n"
                                            "        super().__init__()\n        self.proj = nn.Linear(dim_embd, 1024)\n",
        "options/stage2.yml": "network_g:\n  type: CodeFormer\n  dim_embd: 512\nnetwork_vqgan:\n"
                              "  type: VQAutoEncoder\n  nf: 64\ntrain:\n  total_iter: 500000\n",
    })  # fmt: skip
    md = extract_metadata(tmp_path, "python basicsr/train.py -opt options/stage2.yml")
    assert md.model_name == "CodeFormer"
    other = tmp_path / "mini"
    write(other, {
        "README.md": "# MiniGPT-V\n",
        "train.py": "import argparse\nimport yaml\nparser = argparse.ArgumentParser()\n"
                    "parser.add_argument('--cfg-path', required=True)\nargs = parser.parse_args()\n",
        "minigpt4/models/base_model.py": "import torch.nn as nn\nclass BaseModel(nn.Module):\n    pass\n",
        "minigpt4/models/minigpt_base.py": "from .base_model import BaseModel\nclass MiniGPTBase(BaseModel):\n"
                                           "    pass\n",
        "minigpt4/models/minigpt4.py": "from .minigpt_base import MiniGPTBase\nclass MiniGPT4(MiniGPTBase):\n"
                                       "    pass\n",
        "train_configs/stage2.yaml": "model:\n  arch: minigpt4\ndatasets:\n  cc_sbu_align:\n    batch_size: 12\n"
                                     "run:\n  init_lr: 3e-5\n  max_epoch: 5\n",
    })  # fmt: skip
    mini = extract_metadata(other, "python train.py --cfg-path train_configs/stage2.yaml")
    assert (mini.model_name, mini.dataset) == ("MiniGPT4", "cc_sbu_align")


_TTS_TRAIN = _LIT_TRAIN.replace('config_name="pretrain.yaml"', 'config_name="finetune.yaml"')
_TTS_CONFIG = """pretrained_ckpt_path: checkpoints/openaudio-s1-mini
project: default
paths:
  run_dir: results/${project}
trainer:
  max_steps: 10000
data:
  batch_size: 4
model:
  _target_: pkg.lit_module.TextToSemantic
  model:
    _target_: pkg.llama.BaseTransformer.from_pretrained
    path: ${pretrained_ckpt_path}
    lora_config: null
  optimizer:
    _target_: torch.optim.AdamW
    lr: 1e-4
"""


def test_interpolations_and_a_checkpoint_a_hydra_target_loads(tmp_path: Path) -> None:
    """``path: ${pretrained_ckpt_path}`` resolves to the setting it names (``${project}`` to the command's value),
    and ``_target_: ….from_pretrained`` with that ``path`` loads the model the job trains ("openaudio-s1-mini"), with
    LoRA when ``+lora@model.model.lora_config=r_8`` adds adapters (the commit before left interpolations as written
    and named the Lightning wrapper)."""
    write(tmp_path, {"train.py": _TTS_TRAIN, "configs/finetune.yaml": _TTS_CONFIG,
                     "configs/lora/r_8.yaml": "r: 8\nlora_alpha: 16\n"})  # fmt: skip
    plain = extract_metadata(tmp_path, "python train.py project=my_speaker")
    assert plain.model_name == "openaudio-s1-mini"
    lora = extract_metadata(tmp_path, "python train.py project=my_speaker +lora@model.model.lora_config=r_8")
    assert lora.model_name == "openaudio-s1-mini + LoRA"
    composed = compose_hydra(Workspace(tmp_path), "train.py", _TTS_TRAIN, {}, ["project=my_speaker"])
    assert composed is not None
    assert composed[1]["model.model.path"].value == "checkpoints/openaudio-s1-mini"


_MAR_MODELS = """
import torch.nn as nn
from timm.models.vision_transformer import Block


class MAR(nn.Module):
    def __init__(self, encoder_embed_dim=1024, encoder_depth=16, class_num=1000):
        super().__init__()
        self.class_emb = nn.Embedding(class_num, encoder_embed_dim)
        self.blocks = nn.ModuleList([Block(encoder_embed_dim, 16) for _ in range(encoder_depth)])


def mar_large(**kwargs):
    return MAR(encoder_embed_dim=1024, encoder_depth=16, **kwargs)
"""
_MAR_MAIN = """
import argparse
import torch
from models import mar

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="mar_large", type=str)
parser.add_argument("--class_num", default=1000, type=int)
args = parser.parse_args()
model = mar.__dict__[args.model](class_num=args.class_num)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
"""


def test_a_registry_model_built_from_vision_transformer_blocks(tmp_path: Path) -> None:
    """``mar.__dict__[args.model]`` builds ``mar_large`` in a module that imports timm's vision-transformer ``Block``:
    a vision transformer; a README about image generation is not classification, whatever ``class_num`` the code
    reads (the commit before said no type, and classification)."""
    write(tmp_path, {"models/__init__.py": "", "models/mar.py": _MAR_MODELS, "main_mar.py": _MAR_MAIN,
                     "README.md": "# Autoregressive Image Generation without Vector Quantization\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "python main_mar.py --model mar_large")
    assert md.model_type == "vision_transformer"
    assert md.task != "image_classification"


def test_a_batch_slot_of_zero_is_no_batch(tmp_path: Path) -> None:
    """``batch_size: int = 0  # [automatically set]`` of a Tap class that nothing on the path fills: no batch, not a
    batch of 0 (the commit before reported 0 per device and 0 in all)."""
    write(tmp_path, {"utils/__init__.py": "", "utils/arg_util.py": _TAP_ARGS.replace("    args.batch_size = bs_per_gpu\n", ""),
                     "train.py": _TAP_TRAIN.replace("batch_size=args.batch_size", "batch_sampler=None")})  # fmt: skip
    md = extract_metadata(tmp_path, "torchrun --nproc_per_node=8 train.py --bs=512 --ep=200")
    assert (md.batch_size_per_device, md.global_batch_size) == (None, None)
