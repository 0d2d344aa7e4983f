"""The first static metadata pass on small real-looking repositories written by the test (nothing executed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from schedmate.agents.advisor.extract.metadata import extract_metadata

TRAIN = """
import argparse
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
p = argparse.ArgumentParser()
p.add_argument('--config', '-c', type=str, required=True)
p.add_argument('--lr', type=float, default=1e-3)
args = p.parse_args()
"""


def test_argparse_json_config_and_launcher(tmp_path: Path) -> None:
    """torchrun + argparse + a JSON config: batch sizes, lr override, precision, GPUs, provenance."""
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "cfg.json").write_text(
        '{"train": {"batch_size": 32, "epochs": 7, "fp16_run": true,\n "gradient_accumulation_steps": 2}}'
    )
    md = extract_metadata(tmp_path, "torchrun --nproc_per_node=4 train.py -c cfg.json --lr 5e-4")
    assert (md.batch_size_per_device, md.global_batch_size, md.epochs) == (32, 32 * 2 * 4, 7)
    assert (md.learning_rate, md.precision, md.num_gpus, md.distributed) == (5e-4, "fp16", 4, "ddp")
    assert md.provenance["learning_rate"].file == "command"
    assert md.provenance["batch_size_per_device"].file == "cfg.json"


def test_yaml_llamafactory_style_with_overrides_and_deepspeed(tmp_path: Path) -> None:
    """A YAML recipe with key=value overrides and a DeepSpeed ZeRO-3 JSON."""
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 3}}')
    (tmp_path / "sft.yaml").write_text(
        "model_name_or_path: Qwen/Qwen3-4B\nstage: sft\nfinetuning_type: full\ndeepspeed: ds.json\n"
        "per_device_train_batch_size: 1\ngradient_accumulation_steps: 2\nlearning_rate: 1.0e-5\n"
        "num_train_epochs: 3.0\nbf16: true\n"
    )
    md = extract_metadata(
        tmp_path, "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 llamafactory-cli train sft.yaml learning_rate=2e-5"
    )
    assert (md.distributed, md.num_gpus, md.global_batch_size) == ("deepspeed_zero3", 8, 16)
    assert (md.learning_rate, md.precision, md.task, md.params_millions) == (
        2e-5,
        "bf16",
        "instruction_finetuning",
        4022.5,  # the known-models table (Qwen3-4B: 4.02 B)
    )
    assert md.framework[:2] == ["LLaMA-Factory", "HF Trainer"] and "DeepSpeed" in md.framework


def test_overrides_starting_with_c_are_kept(tmp_path: Path) -> None:
    """Only config-file arguments are set aside; other key=value overrides (even ones starting with c) apply."""
    from schedmate.agents.advisor.extract.collect import collect_settings  # noqa: PLC0415
    from schedmate.agents.advisor.extract.launch import parse_command  # noqa: PLC0415
    from schedmate.agents.advisor.extract.workspace import Workspace  # noqa: PLC0415

    (tmp_path / "train.py").write_text("batch_size = 8\ncompile = True\n")
    (tmp_path / "cfg.py").write_text("batch_size = 16\n")
    ex = collect_settings(
        Workspace(tmp_path), parse_command("python train.py cfg.py --batch_size=32 --compile=False --config=x.py")
    )
    assert ex.values["batch_size"].value == 32
    assert (ex.values["compile"].value, ex.values["compile"].source) == (False, "command")
    assert "config" not in ex.values


SFT_SCRIPT = """
from trl import SFTTrainer, TrlParser, ModelConfig, get_peft_config
from alignment import get_model, get_dataset

def main(script_args, training_args, model_args):
    model = get_model(model_args, training_args)
    trainer = SFTTrainer(model=model, args=training_args, peft_config=get_peft_config(model_args))
    trainer.train()

if __name__ == "__main__":
    parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
    main(*parser.parse_args_and_config())
"""


def test_accelerate_config_file_sets_processes_distribution_and_is_overridden_by_flags(tmp_path: Path) -> None:
    """`accelerate launch --config_file zero3.yaml`: the file's process count, DeepSpeed stage and precision reach the
    metadata; `--num_processes=1` on the command line wins over the file; an FSDP file gives fsdp."""
    (tmp_path / "sft.py").write_text(SFT_SCRIPT)
    (tmp_path / "zero3.yaml").write_text(
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\nmixed_precision: bf16\nnum_machines: 1\n"
        "num_processes: 8\n"
    )
    (tmp_path / "fsdp.yaml").write_text("distributed_type: FSDP\nnum_processes: 4\nmixed_precision: fp16\n")
    (tmp_path / "recipe.yaml").write_text(
        "model_name_or_path: my-org/zephyr-7b-sft-full\nper_device_train_batch_size: 8\n"
        "gradient_accumulation_steps: 2\nlearning_rate: 5.0e-7\nnum_train_epochs: 1\n"
        "dataset_mixture:\n  datasets:\n    - id: HuggingFaceH4/ultrachat_200k\n      split: train_sft\n"
        "    - id: my-org/private_chats\n"
    )
    md = extract_metadata(tmp_path, "accelerate launch --config_file zero3.yaml sft.py --config recipe.yaml")
    assert (md.distributed, md.num_gpus, md.global_batch_size, md.precision) == ("deepspeed_zero3", 8, 128, "bf16")
    assert md.framework[:2] == ["HF Trainer", "TRL"] and "DeepSpeed" in md.framework and "PEFT" not in md.framework
    # the checkpoint's stated size, a causal LM fine-tuned by an SFT trainer; the listed datasets in order
    assert (md.params_millions, md.model_type, md.task) == (7000, "decoder_only_transformer", "instruction_finetuning")
    assert md.dataset == "UltraChat 200k + private_chats"
    one = extract_metadata(
        tmp_path, "accelerate launch --config_file zero3.yaml --num_processes=1 sft.py --config recipe.yaml --use_peft"
    )
    assert (one.num_gpus, one.global_batch_size) == (1, 16) and "PEFT" in one.framework
    fsdp = extract_metadata(tmp_path, "accelerate launch --config_file fsdp.yaml sft.py --config recipe.yaml")
    assert (fsdp.distributed, fsdp.num_gpus, fsdp.precision) == ("fsdp", 4, "fp16")
    flags = extract_metadata(
        tmp_path, "accelerate launch --use_deepspeed --zero_stage 2 --num_processes 2 sft.py --config recipe.yaml"
    )
    assert (flags.distributed, flags.num_gpus) == ("deepspeed_zero2", 2)


def test_a_checkpoint_loaded_as_a_causal_lm_is_a_decoder_with_its_stated_size(tmp_path: Path) -> None:
    """A model id the table does not know (``longchat-13b-16k``) loaded through a ``*ForCausalLM`` class: a decoder-only
    transformer of the size its name states; an id with no size token states none."""
    (tmp_path / "train.py").write_text(
        "import argparse\nfrom transformers import AutoTokenizer\nfrom mypkg.model import MyLlavaForCausalLM\n"
        "p = argparse.ArgumentParser()\np.add_argument('--model_name_or_path')\nargs = p.parse_args()\n"
        "model = MyLlavaForCausalLM.from_pretrained(args.model_name_or_path)\n"
    )
    md = extract_metadata(tmp_path, "python train.py --model_name_or_path lmsys/longchat-13b-16k")
    assert (md.model_type, md.params_millions) == ("decoder_only_transformer", 13000)
    none = extract_metadata(tmp_path, "python train.py --model_name_or_path lmsys/vicuna-v1.5")
    assert none.params_millions is None


def test_configargparse_key_value_files_keras_jobs_and_factories_in_the_jobs_modules(tmp_path: Path) -> None:
    """A ``key = value`` config file (ConfigArgParse) sets what the command line leaves open; a standalone Keras job
    is a Keras job with its ``fit_generator(epochs=)``; a factory's class defined in the job's module names the model
    (the binding every call makes, not the one an ``if`` arm adds), and a backbone weights file does not rename it."""
    (tmp_path / "run.py").write_text(
        "import configargparse\np = configargparse.ArgumentParser()\n"
        "p.add_argument('--config', is_config_file=True)\np.add_argument('--datadir', default='./data/llff/fern')\n"
        "p.add_argument('--lrate', type=float, default=5e-4)\nargs = p.parse_args()\n"
        "import torch\noptimizer = torch.optim.Adam(params, lr=args.lrate)\n"
    )
    (tmp_path / "lego.txt").write_text("# the lego scene\ndatadir = ./data/nerf_synthetic/lego\nlrate = 1e-3\n")
    (tmp_path / "darknet.cfg").write_text("[net]\nbatch=64\nlearning_rate=0.001\n")
    md = extract_metadata(tmp_path, "python run.py --config lego.txt --lrate 2e-4")
    assert (md.dataset, md.learning_rate) == ("NeRF synthetic (Blender)", 2e-4)
    assert extract_metadata(tmp_path, "python run.py --config darknet.cfg").learning_rate == 5e-4
    (tmp_path / "ktrain.py").write_text(
        "from keras.models import Model\nfrom keras.optimizers import Adam\n"
        "model.compile(optimizer=Adam(lr=1e-3), loss='mse')\n"
        "model.fit_generator(gen, steps_per_epoch=10, epochs=50, initial_epoch=0)\n"
        "model.compile(optimizer=Adam(lr=1e-4), loss='mse')\n"
        "model.fit_generator(gen, steps_per_epoch=10, epochs=100, initial_epoch=50)\n"
    )
    keras = extract_metadata(tmp_path, "python ktrain.py")
    assert (keras.framework, keras.epochs) == (["Keras"], 100)
    (tmp_path / "det").mkdir()
    (tmp_path / "det" / "ssd.py").write_text(
        "import torch.nn as nn\nclass SSD(nn.Module):\n    def __init__(self, base):\n"
        "        super().__init__()\n        self.vgg = nn.ModuleList(base)\n"
        "class SSDMasks(nn.Module):\n    pass\n"
        "def build_ssd(size, masks=False):\n    net = SSD(vgg(size))\n    if masks:\n        net = SSDMasks(net)\n"
        "    return net\n"
    )
    (tmp_path / "det" / "train.py").write_text(
        "import argparse, torch\nfrom ssd import build_ssd\np = argparse.ArgumentParser()\n"
        "p.add_argument('--basenet', default='vgg16_reducedfc.pth')\nargs = p.parse_args()\n"
        "ssd_net = build_ssd(300)\noptimizer = torch.optim.SGD(ssd_net.parameters(), lr=1e-3)\n"
    )
    det = extract_metadata(tmp_path / "det", "python train.py")
    assert (det.model_name, det.params_millions) == ("SSD", None)


def test_option_classes_inherit_their_base_arguments_and_data_parallel_over_listed_gpus(tmp_path: Path) -> None:
    """pix2pix-style option classes: ``TrainOptions(BaseOptions)`` inherits ``--dataroot`` and ``--fp16`` from the
    base class's module, so an ``if opt.fp16:`` arm that is off is dead code; ``--gpu_ids 0,1,2,3`` with one process
    and ``nn.DataParallel`` is data parallelism over 4 GPUs whose global batch is the loader's; the epoch loop the code
    runs wins over a setting named ``niter``."""
    (tmp_path / "options").mkdir()
    (tmp_path / "options" / "base_options.py").write_text(
        "import argparse\nclass BaseOptions():\n    def __init__(self):\n"
        "        self.parser = argparse.ArgumentParser()\n    def initialize(self):\n"
        "        self.parser.add_argument('--gpu_ids', type=str, default='0')\n"
        "        self.parser.add_argument('--fp16', action='store_true', default=False)\n"
        "        self.parser.add_argument('--batchSize', type=int, default=1)\n"
        "        self.parser.add_argument('--dataroot', type=str, default='./datasets/cityscapes/')\n"
        "    def parse(self):\n        self.initialize()\n        return self.parser.parse_args()\n"
    )
    (tmp_path / "options" / "train_options.py").write_text(
        "from .base_options import BaseOptions\nclass TrainOptions(BaseOptions):\n    def initialize(self):\n"
        "        BaseOptions.initialize(self)\n        self.parser.add_argument('--niter', type=int, default=100)\n"
        "        self.parser.add_argument('--niter_decay', type=int, default=100)\n"
        "        self.parser.add_argument('--lr', type=float, default=0.0002)\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch\nfrom options.train_options import TrainOptions\nopt = TrainOptions().parse()\n"
        "model = torch.nn.Linear(2, 2)\noptimizer = torch.optim.Adam(model.parameters(), lr=opt.lr)\n"
        "if opt.fp16:\n    from apex import amp\n    model, optimizer = amp.initialize(model, optimizer, opt_level='O1')\n"
        "model = torch.nn.DataParallel(model)\nstart_epoch = 1\n"
        "for epoch in range(start_epoch, opt.niter + opt.niter_decay + 1):\n    pass\n"
    )
    md = extract_metadata(tmp_path, "python train.py --batchSize 8 --gpu_ids 0,1,2,3")
    assert (md.dataset, md.precision, "apex" in md.framework) == ("Cityscapes", "fp32", False)
    assert (md.distributed, md.num_gpus, md.batch_size_per_device, md.global_batch_size) == ("dp", 4, 8, 8)
    assert (md.epochs, md.max_steps) == (200, None)
    assert extract_metadata(tmp_path, "python train.py --fp16").precision == "fp16"


def test_hydra_entries_objectives_and_registries_keyed_by_module_name(tmp_path: Path) -> None:
    """A plain loop composed by Hydra lists Hydra; a config group that selects the DPO objective (``loss=dpo``) is
    preference optimisation; ``--model PatchTST`` picking ``models/PatchTST.py`` of a registry names the model."""
    (tmp_path / "config" / "loss").mkdir(parents=True)
    (tmp_path / "config" / "config.yaml").write_text("lr: 5e-7\nbatch_size: 4\ndefaults:\n- _self_\n- loss: sft\n")
    (tmp_path / "config" / "loss" / "sft.yaml").write_text("name: sft\n")
    (tmp_path / "config" / "loss" / "dpo.yaml").write_text("name: dpo\nbeta: 0.1\n")
    (tmp_path / "train.py").write_text(
        "import hydra, torch\nimport transformers\n\n@hydra.main(version_base=None, config_path='config', "
        "config_name='config')\ndef main(config):\n"
        "    policy = transformers.AutoModelForCausalLM.from_pretrained('EleutherAI/pythia-2.8b')\n"
        "    optimizer = torch.optim.RMSprop(policy.parameters(), lr=config.lr)\n\nmain()\n"
    )
    dpo = extract_metadata(tmp_path, "python train.py loss=dpo loss.beta=0.1")
    assert (dpo.task, dpo.learning_rate, "Hydra" in dpo.framework) == ("preference_optimization_dpo", 5e-7, True)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "PatchTST.py").write_text(
        "from torch import nn\nclass Model(nn.Module):\n    def __init__(self, configs):\n"
        "        super().__init__()\n        self.head = nn.Linear(configs.d_model, 96)\n"
    )
    (tmp_path / "run.py").write_text(
        "import argparse\nfrom models import PatchTST, DLinear\np = argparse.ArgumentParser()\n"
        "p.add_argument('--model', type=str, default='DLinear')\nargs = p.parse_args()\n"
        "model_dict = {'PatchTST': PatchTST, 'DLinear': DLinear}\nmodel = model_dict[args.model].Model(args)\n"
    )
    assert extract_metadata(tmp_path, "python run.py --model PatchTST").model_name == "PatchTST"


_OPTION_JOB = """\
import argparse
from torch.utils.data import DataLoader
from utils import option
from models.select_model import define_Model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt", type=str, default="options/train.json")
    parser.add_argument("--dist", default=False)
    opt = option.parse(parser.parse_args().opt)
    for phase, dataset_opt in opt["datasets"].items():
        if phase == "train":
            if opt["dist"]:
                train_loader = DataLoader(train_set, batch_size=dataset_opt["dataloader_batch_size"] // opt["num_gpu"],
                                          shuffle=False, sampler=sampler)
            else:
                train_loader = DataLoader(train_set, batch_size=dataset_opt["dataloader_batch_size"], shuffle=True)
        elif phase == "test":
            test_loader = DataLoader(test_set, batch_size=1, shuffle=False)
    model = define_Model(opt)
    for epoch in range(1000000):
        psnr = util.calculate_psnr(out, ref, border=opt["scale"])


if __name__ == "__main__":
    main()
"""
_OPTION_JSON = """{
  "task": "sr_x2"  // comments after values, as the option parser allows
  , "scale": 2
  , "gpu_ids": [0, 1, 2, 3]
  /* a block comment */
  , "datasets": {"train": {"name": "train_dataset", "dataloader_batch_size": 32}}
  , "netG": {"net_type": "tinysr", "nc": 8}
  , "train": {"G_optimizer_lr": 2e-4, "G_scheduler_milestones": [100, 200], "D_optimizer_lr": 1e-5}
}
"""


def test_json_options_with_comments_a_registry_key_and_prefixed_settings(tmp_path: Path) -> None:
    """A JSON option file with // and /* */ comments is read; a lower-case ``net_type`` names the network class its
    registry builds (over the harness ``define_Model`` returns); ``G_optimizer_lr`` / ``dataloader_batch_size`` name
    the rate and the batch; the evaluation loader's batch of 1 is never the job's; a batch the code divides by the
    GPU count is the whole job's; a slot name ("train_dataset") is no dataset; PSNR with a scale is super-resolution."""
    (tmp_path / "main_train.py").write_text(_OPTION_JOB)
    (tmp_path / "options").mkdir()
    (tmp_path / "options" / "train.json").write_text(_OPTION_JSON)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "select_model.py").write_text(
        "from models.model_plain import ModelPlain as M\n\ndef define_Model(opt):\n    return M(opt)\n"
    )
    (tmp_path / "models" / "model_plain.py").write_text(
        "class ModelPlain:\n    def __init__(self, opt):\n        pass\n"
    )
    (tmp_path / "models" / "network_tinysr.py").write_text(
        "import torch.nn as nn\n\nclass TinySR(nn.Module):\n    def __init__(self, nc=8):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(3, nc, 3)\n"
    )
    one = extract_metadata(tmp_path, "python main_train.py --opt options/train.json")
    assert (one.model_name, one.model_type, one.task) == ("TinySR", "cnn", "image_super_resolution")
    assert (one.learning_rate, one.batch_size_per_device, one.global_batch_size) == (2e-4, 32, 32)
    assert one.dataset is None
    dist = extract_metadata(
        tmp_path,
        "python -m torch.distributed.launch --nproc_per_node=4 main_train.py --opt options/train.json --dist True",
    )
    assert (dist.batch_size_per_device, dist.global_batch_size, dist.distributed) == (8, 32, "ddp")


_DIFFUSERS_JOB = """\
import argparse
from datasets import load_dataset
from diffusers import DDPMScheduler, UNet2DModel


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dataset_name", type=str, default=None)
    p.add_argument("--train_batch_size", type=int, default=16)
    args = p.parse_args()
    if args.dataset_name is not None:
        dataset = load_dataset(args.dataset_name)
    else:
        dataset = load_dataset("imagefolder", data_files={})
    model = UNet2DModel(sample_size=64)
    noise_scheduler = DDPMScheduler(num_train_timesteps=1000)
    noisy = noise_scheduler.add_noise(clean, noise, timesteps)


if __name__ == "__main__":
    main()
"""


def test_identity_conditions_accelerate_flags_and_a_diffusers_unet(tmp_path: Path) -> None:
    """``if args.dataset_name is not None:`` is decided by the command; ``accelerate launch --multi_gpu`` is DDP
    (``--use_fsdp`` FSDP, ``--use_deepspeed --zero_stage 2`` ZeRO-2); a U-Net trained with a noise scheduler's
    ``add_noise`` is a diffusion U-Net (not a segmentation one), trained with Diffusers."""
    (tmp_path / "train_unconditional.py").write_text(_DIFFUSERS_JOB)
    run = "train_unconditional.py --dataset_name huggan/pokemon"
    md = extract_metadata(tmp_path, f"accelerate launch --multi_gpu {run}")
    assert (md.dataset, md.distributed, md.num_gpus) == ("huggan/pokemon", "ddp", None)
    assert (md.model_type, md.task, md.framework) == (
        "diffusion_unet",
        "image_generation_diffusion",
        ["PyTorch", "Diffusers"],
    )
    assert extract_metadata(tmp_path, f"accelerate launch {run.split(' --', maxsplit=1)[0]}").dataset == "imagefolder"
    assert extract_metadata(tmp_path, f"accelerate launch --use_fsdp {run}").distributed == "fsdp"
    assert extract_metadata(tmp_path, f"accelerate launch --use_deepspeed --zero_stage 2 {run}").distributed == (
        "deepspeed_zero2"
    )


_RNN_LM = """\
import torch
import torch.nn as nn

embed_size = 128
hidden_size = 1024
num_layers = 1
num_epochs = 5
batch_size = 20
learning_rate = 0.002

# Load "Penn Treebank" dataset
corpus = Corpus()
ids = corpus.get_data("data/train.txt", batch_size)
vocab_size = len(corpus.dictionary)


def conv3x3(i, o):
    return nn.Conv2d(i, o, 3, padding=1)


class RNNLM(nn.Module):
    def __init__(self, vocab_size, embed_size, hidden_size, num_layers):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_size)
        self.lstm = nn.LSTM(embed_size, hidden_size, num_layers, batch_first=True)
        self.linear = nn.Linear(hidden_size, vocab_size)


model = RNNLM(vocab_size, embed_size, hidden_size, num_layers)
optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
for epoch in range(num_epochs):
    pass
"""


def test_an_lstm_language_model_is_not_sized_as_a_gpt_and_helper_built_convolutions_are_a_cnn(tmp_path: Path) -> None:
    """An LSTM over a vocabulary is language modelling, and its ``num_layers``/``hidden_size`` do not make it a GPT
    of 50k tokens (its vocabulary comes from the data: unknown); Penn Treebank is a known dataset. A class whose
    convolutions a helper builds is still a CNN through its 2-D normalisation and pooling."""
    (tmp_path / "main.py").write_text(_RNN_LM)
    md = extract_metadata(tmp_path, "python main.py")
    assert (md.model_type, md.task, md.params_millions, md.dataset) == (
        "rnn",
        "language_modeling",
        None,
        "Penn Treebank",
    )
    (tmp_path / "main.py").write_text(
        _RNN_LM.split("class RNNLM", maxsplit=1)[0]
        + "class ResNet(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.conv = conv3x3(3, 16)\n        self.bn = nn.BatchNorm2d(16)\n        self.pool = nn.AvgPool2d(8)\n"
        "        self.fc = nn.Linear(16, 10)\n\n\nmodel = ResNet()\n"
    )
    assert extract_metadata(tmp_path, "python main.py").model_type == "cnn"


def test_a_module_run_through_package_dir_and_an_experiment_class_as_its_config(tmp_path: Path) -> None:
    """``python -m pkg.tools.train`` runs the file setup.py's ``package_dir`` maps it to; a config file that is one
    class setting ``self.x`` in ``__init__`` gives its attributes over those of the base class it imports through a
    package's re-export; a COCO annotation file names COCO."""
    (tmp_path / "setup.py").write_text('setup(package_dir={"pkg.tools": "tools"}, packages=["pkg"])\n')
    (tmp_path / "pkg" / "exp").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "exp" / "__init__.py").write_text("from .base_exp import Exp\n")
    (tmp_path / "pkg" / "exp" / "base_exp.py").write_text(
        "class Exp:\n    def __init__(self):\n        self.max_epoch = 300\n        self.depth = 1.0\n"
        '        self.train_ann = "instances_train2017.json"\n        self.warmup_lr = 0\n'
    )
    (tmp_path / "exps").mkdir()
    (tmp_path / "exps" / "small.py").write_text(
        "from pkg.exp import Exp as MyExp\n\nclass Exp(MyExp):\n    def __init__(self):\n"
        "        super().__init__()\n        self.depth = 0.33\n        self.max_epoch = 100\n"
    )
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "train.py").write_text(
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('-f', '--exp_file', type=str)\n"
        "p.add_argument('-b', '--batch-size', type=int, default=64)\nargs = p.parse_args()\n"
    )
    md = extract_metadata(tmp_path, "python -m pkg.tools.train -f exps/small.py -b 16")
    assert (md.epochs, md.dataset, md.batch_size_per_device) == (100, "COCO", 16)


def test_a_trainer_class_named_for_fsdp_and_a_mixed_precision_policy(tmp_path: Path) -> None:
    """``trainer=FSDPTrainer`` (a Hydra choice of the class that runs the job) is FSDP with torch's FSDP among the
    frameworks; ``fsdp_policy_mp: bfloat16`` is bf16, and a null policy leaves fp32."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("trainer: BasicTrainer\nlr: 5e-7\nfsdp_policy_mp: null\n")
    (tmp_path / "train.py").write_text(
        "import hydra\n\n@hydra.main(config_path='config', config_name='config')\ndef main(config):\n    pass\n"
    )
    md = extract_metadata(tmp_path, "python train.py trainer=FSDPTrainer fsdp_policy_mp=bfloat16")
    assert (md.distributed, md.precision, md.framework[-1]) == ("fsdp", "bf16", "PyTorch FSDP")
    plain = extract_metadata(tmp_path, "python train.py")
    assert (plain.distributed, plain.precision) == ("single_gpu", "fp32")


def test_openmmlab_python_configs_merge_their_bases_in_order(tmp_path: Path) -> None:
    """An mmcv/MMEngine Python config: ``dict(...)`` settings over the files ``_base_`` lists, merged key by key,
    ``_delete_=True`` replacing the base's dict; the dataset a ``RepeatDataset`` wraps is the one trained on."""
    (tmp_path / "configs" / "_base_").mkdir(parents=True)
    (tmp_path / "configs" / "_base_" / "data.py").write_text(
        "dataset_type = 'ADE20KDataset'\ndata = dict(samples_per_gpu=4, train=dict(type='RepeatDataset', times=50,"
        " dataset=dict(type=dataset_type, data_root='data/ade')))\n"
    )
    (tmp_path / "configs" / "_base_" / "schedule.py").write_text(
        "optimizer = dict(type='SGD', lr=0.01, momentum=0.9)\nrunner = dict(type='IterBasedRunner', max_iters=160000)\n"
    )
    (tmp_path / "configs" / "seg.py").write_text(
        "_base_ = ['./_base_/data.py', './_base_/schedule.py']\nnorm = dict(type='SyncBN')\n"
        "optimizer = dict(_delete_=True, type='AdamW', lr=0.00006, weight_decay=0.01)\ndata = dict(samples_per_gpu=2)\n"
    )
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "train.py").write_text(
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('config')\nargs = p.parse_args()\n"
    )
    md = extract_metadata(tmp_path, "python tools/train.py configs/seg.py")
    assert (md.batch_size_per_device, md.learning_rate, md.max_steps) == (2, 6e-05, 160000)
    assert md.dataset == "ADE20K"


_FABRIC_JOB = """\
from pathlib import Path
import lightning as L
from lightning.fabric.strategies import FSDPStrategy
from torch.utils.data import DataLoader

micro_batch_size = 8


def setup(devices: int = 1, train_data_dir: Path = Path("data/redpajama_sample")) -> None:
    if devices > 1:
        strategy = FSDPStrategy(state_dict_type="full")
    else:
        strategy = "auto"
    fabric = L.Fabric(devices=devices, strategy=strategy)
    loader = DataLoader(train_data_dir, batch_size=micro_batch_size, shuffle=True)


if __name__ == "__main__":
    from jsonargparse import CLI

    CLI(setup)
"""


def test_lightning_run_model_and_the_strategy_bound_in_the_arm_that_runs(tmp_path: Path) -> None:
    """``lightning run model --devices 8 script.py`` starts 8 processes; the strategy bound in the ``if devices > 1``
    arm (``devices`` as jsonargparse's ``CLI(setup)`` reads it from the command) is the one Fabric gets (FSDP), the
    other arm's ``"auto"`` only for one device; a data folder given on the
    command line names the job's data when it names no known dataset (not the default the code mentions)."""
    (tmp_path / "pretrain.py").write_text(_FABRIC_JOB)
    md = extract_metadata(
        tmp_path,
        "lightning run model --accelerator=cuda --devices=8 pretrain.py --devices 8 --train_data_dir data/slim",
    )
    assert (md.num_gpus, md.distributed, md.framework, md.dataset) == (8, "fsdp", ["Lightning"], "slim")
    assert (md.batch_size_per_device, md.global_batch_size) == (8, 64)
    one = extract_metadata(tmp_path, "fabric run --devices=1 pretrain.py --devices 1")
    assert (one.num_gpus, one.distributed) == (1, "single_gpu")


def test_data_parallel_over_what_the_script_makes_visible(tmp_path: Path) -> None:
    """``nn.DataParallel(model)`` without device ids uses every visible GPU: how many the command does not say;
    a script that sets ``CUDA_VISIBLE_DEVICES`` from its ``--gpu_id`` setting uses that many."""
    job = (
        "import argparse, os\nimport torch.nn as nn\np = argparse.ArgumentParser()\n"
        "p.add_argument('--gpu_id', type=str, default='0')\nopts = p.parse_args()\n"
        "{visible}model = nn.DataParallel(Net())\n"
    )
    (tmp_path / "main.py").write_text(job.format(visible=""))
    assert extract_metadata(tmp_path, "python main.py").num_gpus is None
    (tmp_path / "main.py").write_text(job.format(visible="os.environ['CUDA_VISIBLE_DEVICES'] = opts.gpu_id\n"))
    assert extract_metadata(tmp_path, "python main.py --gpu_id 0,1").num_gpus == 2
    assert extract_metadata(tmp_path, "python main.py").distributed == "dp"


def test_a_token_counted_total_batch_and_a_branch_on_a_string_index(tmp_path: Path) -> None:
    """llm.c's ``--total_batch_size`` counts tokens: over the sequence length it is the global batch in sequences;
    ``if args.model[0] == "d":`` is decided (the model is built from scratch: language modelling, not fine-tuning);
    ``--num_iterations`` is the step budget."""
    (tmp_path / "train_gpt2.py").write_text(
        "import argparse\nimport torch\np = argparse.ArgumentParser()\np.add_argument('--model', default='gpt2')\n"
        "p.add_argument('--batch_size', type=int, default=4)\np.add_argument('--sequence_length', type=int, default=64)\n"
        "p.add_argument('--total_batch_size', type=int, default=256)\np.add_argument('--num_iterations', type=int, default=10)\n"
        "p.add_argument('--learning_rate', type=float, default=1e-4)\nargs = p.parse_args()\n"
        "if args.model[0] == 'd':\n    model = GPT(GPTConfig(n_layer=12))\nelse:\n    model = GPT.from_pretrained(args.model)\n"
        "optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)\n"
    )
    md = extract_metadata(
        tmp_path,
        "python train_gpt2.py --model d12 --batch_size 32 --sequence_length 1024 --total_batch_size 524288 "
        "--num_iterations 18865",
    )
    assert (md.global_batch_size, md.max_steps, md.task) == (512, 18865, "language_modeling")


def test_composer_yaml_runs_axolotl_and_gin_configs(tmp_path: Path) -> None:
    """``composer train.py cfg.yaml``: ``max_duration: 4800ba`` is 4800 steps, ``global_train_batch_size`` the
    global batch, a sharded ``fsdp_config`` FSDP and a data setting naming C4 the dataset; ``axolotl train cfg.yml
    --launcher torchrun -- --nproc_per_node=2``: an HF Trainer with PEFT on 2 GPUs, SFT on prompt-formatted data,
    ``bf16: auto`` bf16; a gin file's macros and bindings over what it includes."""
    (tmp_path / "train.py").write_text(
        "import sys\nfrom omegaconf import OmegaConf\ncfg = OmegaConf.load(sys.argv[1])\n"
    )
    (tmp_path / "mpt.yaml").write_text(
        "variables:\n  data_local: ./my-copy-c4\nmodel:\n  name: mpt_causal_lm\n  d_model: 768\n  n_layers: 12\n"
        "optimizer:\n  lr: 6.0e-4\nmax_duration: 4800ba\nglobal_train_batch_size: 256\ndevice_train_microbatch_size: 16\n"
        "precision: amp_bf16\nfsdp_config:\n  sharding_strategy: FULL_SHARD\n"
    )
    md = extract_metadata(tmp_path, "composer train.py mpt.yaml")
    assert (md.max_steps, md.global_batch_size, md.distributed, md.dataset) == (4800, 256, "fsdp", "C4")
    assert (md.model_type, md.task, md.num_gpus) == ("decoder_only_transformer", "language_modeling", None)
    (tmp_path / "lora.yml").write_text(
        "base_model: NousResearch/Llama-3.2-1B\ndatasets:\n  - path: teknium/GPT4-LLM-Cleaned\n    type: alpaca\n"
        "adapter: lora\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\nnum_epochs: 1\nlearning_rate: 0.0002\n"
        "bf16: auto\n"
    )
    ax = extract_metadata(tmp_path, "axolotl train lora.yml --launcher torchrun -- --nproc_per_node=2 --nnodes=1")
    assert (ax.framework, ax.task, ax.precision) == (["HF Trainer", "PEFT"], "instruction_finetuning", "bf16")
    assert (ax.num_gpus, ax.distributed, ax.global_batch_size, ax.params_millions) == (2, "ddp", 16, 1236)
    (tmp_path / "base.gin").write_text(
        "network.T5Config:\n  dtype = 'bfloat16'\n  emb_dim = 768\nutils.SaveCheckpointConfig.dtype = 'float32'\n"
    )
    (tmp_path / "run.gin").write_text(
        'include "base.gin"\nMIXTURE_OR_TASK_NAME = "wmt_t2t_ende_v003"\nTRAIN_STEPS = 50000\n'
        "train/utils.DatasetConfig:\n  batch_size = 128\ninfer_eval/utils.DatasetConfig:\n  batch_size = 8\n"
    )
    (tmp_path / "t5train.py").write_text("from absl import app\nimport gin\n")
    gin = extract_metadata(tmp_path, "python t5train.py --gin_file=run.gin --gin.MODEL_DIR=/tmp/m")
    assert (gin.max_steps, gin.batch_size_per_device, gin.precision, gin.dataset) == (50000, 128, "bf16", "WMT T2T")


def test_an_architecture_registry_name_and_a_task_objects_split_loader(tmp_path: Path) -> None:
    """``--arch transformer_iwslt_de_en`` names the model a library's registry builds; ``task.load_dataset("valid")``
    loads a split, not a dataset; the data folder on the command line names IWSLT14."""
    (tmp_path / "train.py").write_text(
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('data')\np.add_argument('--arch', default='lstm')\n"
        "p.add_argument('--lr', type=float, default=0.25)\nargs = p.parse_args()\nmodel = task.build_model(args)\n"
        "task.load_dataset('valid', combine=False)\n"
    )
    md = extract_metadata(tmp_path, "python train.py data-bin/iwslt14.tokenized.de-en --arch transformer_iwslt_de_en")
    assert (md.model_name, md.dataset) == ("transformer_iwslt_de_en", "IWSLT14")


def test_bash_arrays_of_launch_arguments_are_expanded(tmp_path: Path) -> None:
    """Megatron-style launch scripts gather flags in bash arrays (``ARGS=(`` over several lines, comments inside)
    and pass ``${ARGS[@]}``: their words reach the launcher and the script."""
    (tmp_path / "pretrain.py").write_text(
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--micro-batch-size', type=int)\n"
        "p.add_argument('--global-batch-size', type=int)\np.add_argument('--train-iters', type=int)\n"
        "p.add_argument('--lr', type=float)\np.add_argument('--fp16', action='store_true')\nargs = p.parse_args()\n"
    )
    (tmp_path / "run.sh").write_text(
        "#!/bin/bash\nGPUS_PER_NODE=8\nDISTRIBUTED_ARGS=(\n    --nproc_per_node $GPUS_PER_NODE\n    --nnodes 1\n)\n"
        "TRAINING_ARGS=(\n    --micro-batch-size 4  # per GPU\n    --global-batch-size 32\n    --train-iters 1000\n"
        "    --fp16\n    --lr 0.0001\n)\ntorchrun ${DISTRIBUTED_ARGS[@]} pretrain.py \\\n    ${TRAINING_ARGS[@]}\n"
    )
    md = extract_metadata(tmp_path, "bash run.sh")
    assert (md.num_gpus, md.batch_size_per_device, md.global_batch_size) == (8, 4, 32)
    assert (md.max_steps, md.learning_rate, md.precision) == (1000, 0.0001, "fp16")


def test_hyperpyyaml_tags_and_references_and_a_library_model_class(tmp_path: Path) -> None:
    """SpeechBrain's HyperPyYAML: ``!new:pkg.Class`` mappings, ``!ref <name>`` references and ``!PLACEHOLDER`` are
    read as data (never constructed); the model is the class its ``!new:`` names, the data folder given on the
    command line names TIMIT, ``number_of_epochs`` counts epochs."""
    (tmp_path / "hparams").mkdir()
    (tmp_path / "hparams" / "train.yaml").write_text(
        "data_folder: !PLACEHOLDER\nnumber_of_epochs: 50\nbatch_size: 8\nlr: 1.0\n"
        "epoch_counter: !new:speechbrain.utils.epoch_loop.EpochCounter\n  limit: !ref <number_of_epochs>\n"
        "model: !new:speechbrain.lobes.models.CRDNN.CRDNN\n  input_shape: [null, null, 40]\n"
        "opt_class: !name:torch.optim.Adadelta\n  lr: !ref <lr>\n"
    )
    (tmp_path / "train.py").write_text(
        "import sys\nimport speechbrain as sb\nfrom hyperpyyaml import load_hyperpyyaml\n"
        "hparams_file, run_opts, overrides = sb.parse_arguments(sys.argv[1:])\n"
    )
    md = extract_metadata(tmp_path, "python train.py hparams/train.yaml --data_folder=/data/TIMIT")
    assert (md.model_name, md.dataset, md.epochs, md.batch_size_per_device, md.learning_rate) == (
        "CRDNN",
        "TIMIT",
        50,
        8,
        1.0,
    )


def test_trl_cli_library_defaults_deepspeed_zero_flags_and_ldm_targets(tmp_path: Path) -> None:
    """``trl dpo ...`` runs TRL's dpo script: DPO with DPOConfig's defaults (lr 1e-6, bf16) over TrainingArguments'
    (8 per device, 3 epochs) wherever the command says nothing; a DeepSpeed script's own ``--zero_stage 2`` is
    ZeRO-2; an LDM-style ``model.target`` names the model, and a sampler's ``num_steps`` is no step budget."""
    (tmp_path / "trl" / "scripts").mkdir(parents=True)
    (tmp_path / "trl" / "scripts" / "dpo.py").write_text(
        "from trl import DPOConfig, DPOTrainer, ModelConfig, TrlParser\n"
        "parser = TrlParser((ScriptArguments, DPOConfig, ModelConfig))\n"
        "script_args, training_args, model_args = parser.parse_args_and_config()\n"
    )
    md = extract_metadata(tmp_path, "trl dpo --model_name_or_path Qwen/Qwen2.5-0.5B-Instruct --dataset_name a/b")
    assert (md.task, md.framework, md.learning_rate, md.precision) == (
        "preference_optimization_dpo",
        ["HF Trainer", "TRL"],
        1e-6,
        "bf16",
    )
    assert (md.batch_size_per_device, md.epochs) == (8, 3)
    (tmp_path / "main.py").write_text(
        "import argparse\nimport deepspeed\np = argparse.ArgumentParser()\np.add_argument('--zero_stage', type=int, default=0)\n"
        "args = p.parse_args()\nmodel, opt, _, _ = deepspeed.initialize(model=m, config=get_ds_config(args.zero_stage))\n"
    )
    assert extract_metadata(tmp_path, "deepspeed main.py --zero_stage 2").distributed == "deepspeed_zero2"
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "toy.yaml").write_text(
        "model:\n  target: sgm.models.diffusion.DiffusionEngine\n  params:\n    sampler_config:\n      params:\n"
        "        num_steps: 50\nlightning:\n  trainer:\n    max_epochs: 20\n"
    )
    (tmp_path / "sgm" / "models").mkdir(parents=True)
    (tmp_path / "sgm" / "models" / "diffusion.py").write_text(
        "import torch.nn as nn\nclass DiffusionEngine(nn.Module):\n    pass\n"
    )
    (tmp_path / "ldm_main.py").write_text(
        "import argparse\nimport pytorch_lightning as pl\nfrom omegaconf import OmegaConf\np = argparse.ArgumentParser()\n"
        "p.add_argument('--base', nargs='*')\nopt = p.parse_args()\nwith torch.no_grad(), torch.cuda.amp.autocast(**kw):\n    pass\n"
    )
    ldm = extract_metadata(tmp_path, "python ldm_main.py --base configs/toy.yaml")
    assert (ldm.model_name, ldm.model_type, ldm.epochs, ldm.max_steps, ldm.precision) == (
        "DiffusionEngine",
        "diffusion_unet",
        20,
        None,
        "fp32",
    )


def test_a_dataset_configuration_and_hf_classification_heads(tmp_path: Path) -> None:
    """``load_dataset("glue", args.task_name)`` and ``--dataset_config_name``: the configuration is part of the dataset
    (GLUE's MNLI vs MRPC), a sequence-classification head is a text-classification task (a reward model is not), and
    a configuration the name already says is not repeated."""
    (tmp_path / "run_glue.py").write_text(
        "import argparse\nfrom datasets import load_dataset\n"
        "from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments\n"
        "p = argparse.ArgumentParser()\np.add_argument('--model_name_or_path', default='bert-base-uncased')\n"
        "p.add_argument('--task_name', default='mrpc')\nargs = p.parse_args()\n"
        "raw = load_dataset('glue', args.task_name)\n"
        "model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=3)\n"
        "trainer = Trainer(model=model, args=TrainingArguments(output_dir='o'), train_dataset=raw['train'])\n"
    )
    mnli = extract_metadata(tmp_path, "python run_glue.py --task_name mnli")
    assert (mnli.dataset, mnli.task, mnli.model_type) == (
        "GLUE (mnli)",
        "text_classification",
        "encoder_only_transformer",
    )
    assert extract_metadata(tmp_path, "python run_glue.py").dataset == "GLUE (mrpc)"
    (tmp_path / "run_ner.py").write_text(
        "import argparse\nfrom datasets import load_dataset\nfrom transformers import AutoModelForTokenClassification\n"
        "p = argparse.ArgumentParser()\np.add_argument('--dataset_name')\np.add_argument('--dataset_config_name')\n"
        "args = p.parse_args()\nmodel = AutoModelForTokenClassification.from_pretrained('bert-base-cased')\n"
    )
    ner = extract_metadata(
        tmp_path, "python run_ner.py --dataset_name wikitext --dataset_config_name wikitext-103-raw-v1"
    )
    assert (ner.dataset, ner.task) == ("WikiText-103 (wikitext-103-raw-v1)", "token_classification")
    (tmp_path / "reward.py").write_text(
        "from datasets import load_dataset\nfrom transformers import AutoModelForSequenceClassification\n"
        "from trl import RewardTrainer\nds = load_dataset('imdb', 'plain_text')\n"
        "reward_model = AutoModelForSequenceClassification.from_pretrained('gpt2')\n"
    )
    rm = extract_metadata(tmp_path, "python reward.py")
    assert rm.task != "text_classification"
    assert rm.dataset is not None and "plain_text" not in rm.dataset


def test_a_model_zoo_config_name_outranks_the_backbone_its_config_sets(tmp_path: Path) -> None:
    """``--config-file faster_rcnn_R_50_FPN_1x.yaml`` names a known detector; the ``MODEL.BACKBONE: resnet50`` its base
    config sets names only the detector's backbone, so it is not the model (nor does it make the task classification)."""
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "Base.yaml").write_text("MODEL:\n  BACKBONE: resnet50\nSOLVER:\n  IMS_PER_BATCH: 16\n")
    (tmp_path / "configs" / "faster_rcnn_R_50_FPN_1x.yaml").write_text('_BASE_: "Base.yaml"\nSOLVER:\n  MAX_ITER: 90\n')
    (tmp_path / "train_net.py").write_text(
        "import argparse\nfrom yacs.config import CfgNode\np = argparse.ArgumentParser()\n"
        "p.add_argument('--config-file', default='')\np.add_argument('opts', nargs=argparse.REMAINDER)\n"
        "args = p.parse_args()\ncfg = CfgNode(new_allowed=True)\ncfg.merge_from_file(args.config_file)\n"
    )
    md = extract_metadata(tmp_path, "python train_net.py --config-file configs/faster_rcnn_R_50_FPN_1x.yaml")
    assert (md.model_name, md.model_type, md.task, md.params_millions) == (
        "faster_rcnn_R_50_FPN_1x",
        "cnn_detector",
        "object_detection",
        41.8,
    )


def test_a_keras_functional_model_is_named_by_its_name_and_tfds_names_the_dataset(tmp_path: Path) -> None:
    """A factory returning ``keras.Model(inputs, outputs, name="unet")`` trains a U-Net (a segmentation model), and
    ``tfds.load("oxford_iiit_pet")`` is the dataset TensorFlow Datasets loads."""
    (tmp_path / "train.py").write_text(
        "import argparse\nimport keras\nimport tensorflow_datasets as tfds\nfrom keras import layers\n"
        "def build(size):\n    inputs = keras.Input(shape=(size, size, 3))\n"
        "    outputs = layers.Conv2D(3, 1)(layers.Conv2D(64, 3)(inputs))\n"
        "    return keras.Model(inputs, outputs, name='unet')\n"
        "p = argparse.ArgumentParser()\np.add_argument('--epochs', type=int, default=50)\nargs = p.parse_args()\n"
        "train = tfds.load('oxford_iiit_pet', split='train')\nmodel = build(256)\n"
        "model.compile(optimizer='adam')\nmodel.fit(train, epochs=args.epochs)\n"
    )
    md = extract_metadata(tmp_path, "python train.py --epochs 5")
    assert (md.model_name, md.model_type, md.task, md.dataset, md.epochs) == (
        "unet",
        "unet",
        "semantic_segmentation",
        "Oxford-IIIT Pet",
        5,
    )


def test_ml_collections_get_config_a_base_model_registry_and_split_named_data_files(tmp_path: Path) -> None:
    """``--config=configs/default.py`` whose ``get_config()`` fills a ``ConfigDict`` gives its settings; an ``arch.type``
    naming a class derived from the project's ``BaseModel`` is that model; a data file named only by its split
    (``data/e2e/train.jsonl``) is named by its folder, unless the folder is a generic one."""
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "default.py").write_text(
        "import ml_collections\ndef get_config():\n  config = ml_collections.ConfigDict()\n  config.model = 'ResNet50'\n"
        "  config.num_epochs = 100.0\n  config.learning_rate = 0.1\n  return config\n"
    )
    (tmp_path / "main.py").write_text(
        "from absl import app, flags\nfrom ml_collections import config_flags\n"
        "config_flags.DEFINE_config_file('config', None, 'config')\n"
    )
    md = extract_metadata(tmp_path, "python main.py --workdir=./out --config=configs/default.py")
    assert (md.model_name, md.params_millions, md.epochs, md.learning_rate) == ("ResNet50", 25.6, 100, 0.1)
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "model.py").write_text(
        "import torch.nn as nn\nfrom base import BaseModel\nclass MnistModel(BaseModel):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(320, 10)\n"
    )
    (tmp_path / "config.json").write_text('{"arch": {"type": "MnistModel", "args": {}}, "trainer": {"epochs": 3}}')
    (tmp_path / "train.py").write_text(
        "import argparse\nimport model.model as module_arch\np = argparse.ArgumentParser()\n"
        "p.add_argument('-c', '--config')\np.add_argument('--train_data')\nargs = p.parse_args()\n"
    )
    reg = extract_metadata(tmp_path, "python train.py -c config.json --train_data ./data/e2e/train.jsonl")
    assert (reg.model_name, reg.params_millions, reg.dataset) == ("MnistModel", 0.00321, "e2e")
    assert extract_metadata(tmp_path, "python train.py -c config.json --train_data data/train.jsonl").dataset == (
        "train.jsonl"
    )


def test_a_self_attention_class_makes_a_transformer_and_a_character_vocabulary_sizes_it(tmp_path: Path) -> None:
    """A model whose blocks build the job's own ``CausalSelfAttention`` is a transformer (a language model, not an
    MLP); a vocabulary made of the characters of the texts (``set(''.join(words))``), which only the data file
    tells, sizes its embedding by the GPT shape, and the ``--input-file`` it reads is its data."""
    (tmp_path / "makemore.py").write_text(
        "import argparse\nimport torch\nimport torch.nn as nn\n"
        "class CausalSelfAttention(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.c_attn = nn.Linear(n, 3 * n)\n        self.c_proj = nn.Linear(n, n)\n"
        "class Block(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.attn = CausalSelfAttention(n)\n        self.mlp = nn.Linear(n, 4 * n)\n"
        "class Transformer(nn.Module):\n    def __init__(self, n_layer, n_embd, vocab_size):\n        super().__init__()\n"
        "        self.wte = nn.Embedding(vocab_size, n_embd)\n"
        "        self.h = nn.ModuleList([Block(n_embd) for _ in range(n_layer)])\n"
        "        self.lm_head = nn.Linear(n_embd, 27, bias=False)\n"
        "p = argparse.ArgumentParser()\np.add_argument('--input-file', '-i', default='names.txt')\n"
        "p.add_argument('--n-layer', type=int, default=4)\np.add_argument('--n-embd', type=int, default=64)\n"
        "p.add_argument('--learning-rate', type=float, default=5e-4)\nargs = p.parse_args()\n"
        "words = open(args.input_file).read().splitlines()\nchars = sorted(list(set(''.join(words))))\n"
        "model = Transformer(args.n_layer, args.n_embd, len(chars) + 1)\n"
        "optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)\n"
    )
    md = extract_metadata(tmp_path, "python makemore.py -i names.txt")
    assert (md.model_type, md.task, md.params_millions, md.dataset) == (
        "decoder_only_transformer",
        "language_modeling",
        0.213,  # 12 x 4 x 64^2 + 256 x 64: three significant digits below a million
        "names.txt",
    )


def test_settings_a_config_function_returns_reach_the_consumers_through_the_functions_they_are_handed_to(
    tmp_path: Path,
) -> None:
    """``config = get_config()`` (a function of another module returning a dict literal, with constant arithmetic),
    handed to ``train_model(config)`` and on to ``get_ds(config)``: the loader's batch, the optimizer's rate and the
    epoch loop's bound are the dict's values."""
    (tmp_path / "config.py").write_text(
        "def get_config():\n    return {'batch_size': 8, 'num_epochs': 20, 'lr': 10**-4, 'datasource': 'opus_books'}\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch\nfrom torch.utils.data import DataLoader\nfrom config import get_config\n"
        "def get_ds(config):\n    return DataLoader(ds, batch_size=config['batch_size'], shuffle=True)\n"
        "def train_model(config):\n    loader = get_ds(config)\n"
        "    optimizer = torch.optim.Adam(model.parameters(), lr=config['lr'], eps=1e-9)\n"
        "    for epoch in range(0, config['num_epochs']):\n        pass\n"
        "if __name__ == '__main__':\n    config = get_config()\n    train_model(config)\n"
    )
    md = extract_metadata(tmp_path, "python train.py")
    assert (md.batch_size_per_device, md.epochs, md.learning_rate) == (8, 20, 1e-4)


def test_a_constant_of_a_module_the_script_imports_bounds_the_epoch_loop(tmp_path: Path) -> None:
    """``from conf import settings`` then ``range(1, settings.EPOCH + 1)``: the module's literal constant is read
    (``import config as C`` likewise); a name the module does not define stays unknown."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "__init__.py").write_text("")
    (tmp_path / "conf" / "settings.py").write_text("EPOCH = 200\nMILESTONES = [60, 120, 160]\n")
    (tmp_path / "train.py").write_text(
        "import torch\nfrom conf import settings\nfor epoch in range(1, settings.EPOCH + 1):\n    train(epoch)\n"
    )
    assert extract_metadata(tmp_path, "python train.py").epochs == 200
    (tmp_path / "config.py").write_text("LR = 3e-4\n")
    (tmp_path / "other.py").write_text(
        "import torch\nimport config as C\noptimizer = torch.optim.Adam(model.parameters(), lr=C.LR)\n"
        "for epoch in range(C.EPOCHS):\n    pass\n"
    )
    md = extract_metadata(tmp_path, "python other.py")
    assert (md.learning_rate, md.epochs) == (3e-4, None)


def test_a_data_loader_type_setting_names_its_dataset(tmp_path: Path) -> None:
    """``"data_loader": {"type": "MnistDataLoader"}`` in the job's JSON config names MNIST (a data section's class,
    as ``data.train.type`` does); a model section's ``type`` names no dataset."""
    (tmp_path / "config.json").write_text(
        '{"arch": {"type": "CifarNet"}, "data_loader": {"type": "MnistDataLoader", "args": {"batch_size": 128}}}'
    )
    (tmp_path / "train.py").write_text(
        "import argparse\nimport torch\np = argparse.ArgumentParser()\np.add_argument('-c', '--config')\n"
        "args = p.parse_args()\n"
    )
    assert extract_metadata(tmp_path, "python train.py -c config.json").dataset == "MNIST"


def test_a_language_model_started_from_pretrained_weights_is_fine_tuned(tmp_path: Path) -> None:
    """A GPT built by the job and handed ``--init_checkpoint gpt2-medium.bin`` fine-tunes a pretrained model; the same
    script from scratch (no checkpoint) trains a language model, and ``--resume`` is not a pretrained start."""
    (tmp_path / "model.py").write_text(
        "import torch.nn as nn\nclass CausalSelfAttention(nn.Module):\n    pass\nclass GPT2LMModel(nn.Module):\n"
        "    def __init__(self, n):\n        super().__init__()\n        self.attn = CausalSelfAttention()\n"
        "        self.head = nn.Linear(n, 50257)\n"
    )
    (tmp_path / "gpt2_ft.py").write_text(
        "import argparse\nimport torch\nfrom model import GPT2LMModel\np = argparse.ArgumentParser()\n"
        "p.add_argument('--init_checkpoint', default=None)\np.add_argument('--resume', default=None)\n"
        "args = p.parse_args()\nlm_net = GPT2LMModel(1024)\n"
        "optimizer = torch.optim.AdamW(lm_net.parameters(), lr=2e-4)\n"
    )
    tuned = extract_metadata(tmp_path, "python gpt2_ft.py --init_checkpoint ./pretrained/gpt2-medium-pytorch_model.bin")
    assert (tuned.model_type, tuned.task) == ("decoder_only_transformer", "language_model_finetuning")
    assert extract_metadata(tmp_path, "python gpt2_ft.py").task == "language_modeling"
    assert extract_metadata(tmp_path, "python gpt2_ft.py --resume out/last.pt").task == "language_modeling"


def test_fire_with_a_dict_of_commands_exposes_each_command_s_defaults(tmp_path: Path) -> None:
    """``fire.Fire({"run": run})`` (PyTorch-Ignite's examples): ``main.py run --learning_rate 0.2`` runs ``run`` with
    its defaults and the flags given."""
    (tmp_path / "main.py").write_text(
        "import fire\nimport torch\n"
        "def run(model: str = 'resnet18', batch_size: int = 512, num_epochs: int = 24, learning_rate: float = 0.4):\n"
        "    pass\n"
        "if __name__ == '__main__':\n    fire.Fire({'run': run})\n"
    )
    md = extract_metadata(tmp_path, "python main.py run --learning_rate 0.2")
    assert (md.model_name, md.epochs, md.learning_rate, md.batch_size_per_device) == ("resnet18", 24, 0.2, 512)


DEPTH_MODEL = """
import torch.nn as nn


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, planes):
        super().__init__()
        self.c1 = nn.Conv2d(cin, planes, 1, bias=False)
        self.c2 = nn.Conv2d(planes, planes * 4, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(planes * 4)


class ResNet(nn.Module):
    def __init__(self, dataset, depth, num_classes):
        super().__init__()
        blocks = {50: [3, 4, 6, 3], 101: [3, 4, 23, 3]}[depth]
        layers, cin = [], 64
        for n, planes in zip(blocks, [64, 128, 256, 512]):
            for _ in range(n):
                layers.append(Bottleneck(cin, planes))
                cin = planes * 4
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, num_classes)
"""

DEPTH_TRAIN = """
import argparse
import torch
import resnet as RN

parser = argparse.ArgumentParser()
parser.add_argument("--dataset", default="cifar100")
parser.add_argument("--depth", type=int, default=101)
args = parser.parse_args()


def main():
    if args.dataset == "imagenet":
        numberofclass = 1000
    else:
        numberofclass = 100
    model = RN.ResNet(args.dataset, args.depth, numberofclass)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


if __name__ == "__main__":
    main()
"""


def test_a_family_class_built_with_a_depth_is_named_by_it(tmp_path: Path) -> None:
    """`RN.ResNet(args.dataset, args.depth, numberofclass)` with `--depth 50`: the class received depth 50 and
    resnet50 is a known architecture, so the model is ResNet-50; its count follows the class count of the branch
    the dataset setting selects."""
    (tmp_path / "resnet.py").write_text(DEPTH_MODEL)
    (tmp_path / "train.py").write_text(DEPTH_TRAIN)
    md = extract_metadata(tmp_path, "python train.py --dataset imagenet --depth 50")
    assert md.model_name == "ResNet-50"
    ns: dict[str, object] = {}
    exec(compile(DEPTH_MODEL, "resnet.py", "exec"), ns)  # noqa: S102 - the test's own source, for ground truth
    truth = sum(p.numel() for p in ns["ResNet"]("imagenet", 50, 1000).parameters())  # type: ignore[operator]
    assert md.params_millions == round(truth / 1e6, 1)


CONFIGURATOR_TRAIN = """
import torch
import torch.nn as nn
from dataclasses import dataclass

vocab_size = 32000
dim = 32
exec(open("configurator.py").read())


@dataclass
class Args:
    vocab_size: int = 100
    dim: int = 8


class Net(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.emb = nn.Embedding(args.vocab_size, args.dim)
        self.head = nn.Linear(args.dim, args.vocab_size)


model_args = dict(vocab_size=vocab_size, dim=dim)
model = Net(Args(**model_args))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
"""


def test_a_module_global_the_command_line_sets_reaches_the_model(tmp_path: Path) -> None:
    """nanoGPT-style `exec(open("configurator.py").read())`: `--vocab_size=4096` replaces the module global the
    model's dataclass config is built from, so the count is the command's model, not the default's."""
    (tmp_path / "train.py").write_text(CONFIGURATOR_TRAIN)
    (tmp_path / "configurator.py").write_text("import sys\n")
    md = extract_metadata(tmp_path, "python train.py --vocab_size=4096")
    want = 4096 * 32 + (32 * 4096 + 4096)  # the embedding, and the head's weight and bias
    assert md.params_millions == float(f"{want / 1e6:.3g}")


VGG_MODELS = """
import torch.nn as nn

NEG = -(1, 2)
cfg = {"A": [8, "M", 16, "M"], "D": [8, 8, "M", 16, 16, "M", 32, "M"]}


class VGG(nn.Module):
    def __init__(self, features, num_class=100):
        super().__init__()
        self.features = features
        self.classifier = nn.Sequential(nn.Linear(32, 64), nn.ReLU(inplace=True), nn.Linear(64, num_class))


def make_layers(cfg, batch_norm=False):
    layers, cin = [], 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(2)]
            continue
        layers += [nn.Conv2d(cin, v, kernel_size=3, padding=1)]
        if batch_norm:
            layers += [nn.BatchNorm2d(v)]
        cin = v
        if cin >= 1024:
            break
    return nn.Sequential(*layers)


def vgg16_bn():
    if True:
        return VGG(make_layers(cfg["D"], batch_norm=True))
    return VGG(make_layers(cfg["A"]))
"""

VGG_UTILS = """
import sys


def get_network(args):
    if args.net == "vgg16":
        from models.vgg import vgg16_bn
        net = vgg16_bn()
    else:
        print("the network name you have entered is not supported yet")
        sys.exit()
    if args.gpu:
        net = net.cuda()
    return net
"""

VGG_TRAIN = """
import argparse
import torch
from utils import get_network

parser = argparse.ArgumentParser()
parser.add_argument("-net", type=str, required=True)
parser.add_argument("-gpu", action="store_true", default=False)
args = parser.parse_args()
net = get_network(args)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
"""


def test_a_factory_function_of_the_job_is_followed_and_its_count_outranks_the_known_size(tmp_path: Path) -> None:
    """`net = get_network(args)`: the interpreter follows the job's factory (an import inside it, a branch on the
    setting, `continue`/`break` in the layer loop, an early `return`, `net.cuda()` returning the module). The flag
    names a known architecture (vgg16), which names the model, but the job's own CIFAR VGG-16 is what it trains, so
    the count is the job's (torch's count of the same source), not torchvision's 138 M."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("")
    (tmp_path / "models" / "vgg.py").write_text(VGG_MODELS)
    (tmp_path / "utils.py").write_text(VGG_UTILS)
    (tmp_path / "train.py").write_text(VGG_TRAIN)
    md = extract_metadata(tmp_path, "python train.py -net vgg16 -gpu")
    ns: dict[str, object] = {}
    exec(compile(VGG_MODELS.replace("NEG = -(1, 2)", ""), "vgg.py", "exec"), ns)  # noqa: S102 - ground truth
    truth = sum(p.numel() for p in ns["vgg16_bn"]().parameters())  # type: ignore[operator]
    assert md.model_name == "vgg16"
    assert md.params_millions == float(f"{truth / 1e6:.3g}")


LIGHTNING_SYSTEM = """
import argparse
import torch
import torch.nn as nn
from pytorch_lightning import LightningModule, Trainer


class NeRF(nn.Module):
    def __init__(self, D=4, W=32):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(W if i else 63, W) for i in range(D)])
        self.rgb = nn.Linear(W, 3)


class NeRFSystem(LightningModule):
    def __init__(self, hparams):
        super().__init__()
        self.coarse = NeRF()
        self.models = [self.coarse]
        if hparams.N_importance > 0:
            self.fine = NeRF()
            self.models += [self.fine]

    def configure_optimizers(self):
        return torch.optim.Adam([p for m in self.models for p in m.parameters()], lr=5e-4)


parser = argparse.ArgumentParser()
parser.add_argument("--N_importance", type=int, default=0)
parser.add_argument("--num_gpus", type=int, default=1)
parser.add_argument("--world-size", dest="world_size", type=int, default=1)
hparams = parser.parse_args()
system = NeRFSystem(hparams)
trainer = Trainer(max_epochs=16, gpus=hparams.num_gpus)
trainer.fit(system)
"""


def test_the_module_a_lightning_trainer_fits_is_the_model_named_by_what_it_trains(tmp_path: Path) -> None:
    """`trainer.fit(system)`: the LightningModule is what trains; it holds two NeRF MLPs (the fine one under a
    setting), so the model is NeRF, its count is both networks' (torch's count of the same source), and its layers
    are all linear: an MLP."""
    (tmp_path / "train.py").write_text(LIGHTNING_SYSTEM)
    md = extract_metadata(tmp_path, "python train.py --N_importance 64")
    ns: dict[str, object] = {"__name__": "x"}
    nerf_source = LIGHTNING_SYSTEM.split("class NeRFSystem", maxsplit=1)[0].replace(
        "from pytorch_lightning import", "# "
    )
    exec(compile(nerf_source, "train.py", "exec"), ns)  # noqa: S102 - the test's own source, for ground truth
    one = sum(p.numel() for p in ns["NeRF"]().parameters())  # type: ignore[operator]
    assert (md.model_name, md.model_type, md.params_millions) == ("NeRF", "mlp", float(f"{2 * one / 1e6:.3g}"))


RESNET_REGISTRY = """
import argparse
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
import resnet


def Projector(args, embedding):
    spec = f"{embedding}-{args.mlp}"
    f = list(map(int, spec.split("-")))
    layers = []
    for i in range(len(f) - 2):
        layers.append(nn.Linear(f[i], f[i + 1]))
        layers.append(nn.BatchNorm1d(f[i + 1]))
    layers.append(nn.Linear(f[-2], f[-1], bias=False))
    return nn.Sequential(*layers)


class SSL(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.backbone, self.embedding = resnet.__dict__[args.arch]()
        self.projector = Projector(args, self.embedding)


def main(args):
    per_device_batch_size = args.batch_size // args.world_size
    loader = DataLoader([], batch_size=per_device_batch_size)
    model = SSL(args).cuda()
    optimizer = getattr(torch.optim, args.optim)(model.parameters(), lr=args.lr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="tiny")
    parser.add_argument("--mlp", default="64-64")
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--world-size", type=int, default=1)
    parser.add_argument("--optim", default="SGD")
    parser.add_argument("--lr", type=float, default=0.05)
    main(parser.parse_args())
"""

RESNET_MODULE = """
import torch.nn as nn


def tiny(**kwargs):
    return nn.Sequential(nn.Conv2d(3, 16, 3), nn.Conv2d(16, 32, 3)), 32
"""


def test_registry_in_module_dict_f_strings_world_size_and_an_optimizer_looked_up_by_name(tmp_path: Path) -> None:
    """`resnet.__dict__[args.arch]()` builds the job's backbone, the projector's widths come from an f-string and
    `map(int, …)`, so the count is the whole model's (torch's count of the same source); `args.batch_size //
    args.world_size` under a launcher of 8 processes is a 64 per device; `getattr(torch.optim, args.optim)(…, lr=)`
    is the optimizer (its rate), not the model."""
    (tmp_path / "main.py").write_text(RESNET_REGISTRY)
    (tmp_path / "resnet.py").write_text(RESNET_MODULE)
    md = extract_metadata(tmp_path, "torchrun --nproc_per_node=8 main.py --arch tiny --lr 0.2")
    layers = [torch.nn.Conv2d(3, 16, 3), torch.nn.Conv2d(16, 32, 3), torch.nn.Linear(32, 64), torch.nn.BatchNorm1d(64)]
    layers += [torch.nn.Linear(64, 64, bias=False)]
    truth = sum(p.numel() for m in layers for p in m.parameters())
    assert md.params_millions == float(f"{truth / 1e6:.3g}")
    assert (md.batch_size_per_device, md.global_batch_size, md.learning_rate) == (64, 512, 0.2)
    assert md.model_name == "tiny"  # (the architecture the setting picks from the registry names it)


STRUCTURED = {
    "train.py": """
import hydra
from hydra.core.config_store import ConfigStore
from project.configs import TrainConfig, AdamConfig, SGDConfig
from project.training import train

cs = ConfigStore.instance()
cs.store(name="config", node=TrainConfig)
cs.store(group="optim", name="adam", node=AdamConfig)
cs.store(group="optim", name="sgd", node=SGDConfig)


@hydra.main(config_path=".", config_name="config")
def main(cfg):
    train(cfg)


if __name__ == "__main__":
    main()
""",
    "project/__init__.py": "",
    "project/configs.py": """
from dataclasses import dataclass, field
from typing import Any, List
from omegaconf import MISSING

defaults = [{"optim": "adam"}]


@dataclass
class DataConfig:
    batch_size: int = 64
    train_path: str = "data/train_manifest.csv"


@dataclass
class TrainerConf:
    _target_: str = "pytorch_lightning.trainer.Trainer"
    max_epochs: int = 1000
    devices: Any = None
    precision: int = 32


@dataclass
class OptimConfig:
    learning_rate: float = 1.5e-4


@dataclass
class AdamConfig(OptimConfig):
    eps: float = 1e-8


@dataclass
class SGDConfig(OptimConfig):
    learning_rate: float = 0.1
    momentum: float = 0.9


@dataclass
class TrainConfig:
    defaults: List[Any] = field(default_factory=lambda: defaults)
    optim: Any = MISSING
    trainer: TrainerConf = TrainerConf()
    data: DataConfig = DataConfig()
""",
    "project/training.py": "def train(cfg):\n    pass\n",
    "configs/small.yaml": "# @package _global_\ndata:\n  batch_size: 8\ntrainer:\n  max_epochs: 70\n  devices: 1\n"
    "  precision: 16\n",
}


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("python train.py +configs=small", (8, 70.0, 1.5e-4, "fp16")),
        ("python train.py optim=sgd data.batch_size=16", (16, 1000.0, 0.1, "fp32")),
    ],
)
def test_hydra_structured_configs_are_composed(tmp_path: Path, command: str, expected: tuple[Any, ...]) -> None:
    """`ConfigStore.store(name=..., node=Dataclass)`: the primary config is the dataclass's defaults (nested and
    inherited fields, a defaults list kept in a module constant); a stored group option replaces its default
    (`optim=sgd`), and `+configs=small` adds a `@package _global_` YAML group over them."""
    for name, text in STRUCTURED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    meta = extract_metadata(tmp_path, command)
    assert (meta.batch_size_per_device, meta.epochs, meta.learning_rate, meta.precision) == expected


THIN_HYDRA = {
    "train.py": """
import hydra
from project.training import train


@hydra.main(config_path="configs", config_name="config")
def main(cfg):
    train(cfg)


if __name__ == "__main__":
    main()
""",
    "configs/config.yaml": "data:\n  labels_path: labels.json\n  batch_size: 4\nmodel:\n  width: 32\n  cell: lstm\n"
    "trainer:\n  max_epochs: 3\n",
    "labels.json": '["_", "a", "b", "c", "d", " "]',
    "project/__init__.py": "",
    "project/training.py": """
import json
import pytorch_lightning as pl
from hydra.utils import to_absolute_path
from project.model import Net


def train(cfg):
    with open(to_absolute_path(cfg.data.labels_path)) as label_file:
        labels = json.load(label_file)
    model = Net(labels=labels, width=cfg.model.width, cell=cfg.model.cell)
    trainer = pl.Trainer(max_epochs=cfg.trainer.max_epochs)
    trainer.fit(model)
""",
    "project/model.py": """
import pytorch_lightning as pl
import torch.nn as nn

CELLS = {"lstm": "LSTM"}


class Net(pl.LightningModule):
    def __init__(self, labels, width, cell):
        super().__init__()
        self.inp = nn.Linear(8, width)
        self.out = nn.Linear(width, len(labels))
""",
}


def test_a_thin_hydra_entry_s_training_function_builds_the_model(tmp_path: Path) -> None:
    """`@hydra.main def main(cfg): train(cfg)`: the job module defining `train` builds the model and fits it; the
    model is named and counted there, with the label list its code reads through `to_absolute_path(...)`; a layer
    class the code would call from a name holding an unknown stops the count instead of counting nothing for it."""
    for name, text in THIN_HYDRA.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    meta = extract_metadata(tmp_path, "python train.py")
    truth = sum(p.numel() for m in (torch.nn.Linear(8, 32), torch.nn.Linear(32, 6)) for p in m.parameters())
    assert (meta.model_name, meta.params_millions) == ("Net", pytest.approx(truth / 1e6, rel=5e-3))
    model = tmp_path / "project" / "model.py"
    model.write_text(
        model.read_text() + "        rnn_type = pick_cell(cell)\n        self.rnn = rnn_type(width, width)\n"
    )
    assert extract_metadata(tmp_path, "python train.py").params_millions is None


_LIGHTNING_DEEPSPEED = """\
import argparse
import lightning.pytorch as pl
from lightning.pytorch.strategies import DeepSpeedStrategy

p = argparse.ArgumentParser()
p.add_argument("--strategy", default="deepspeed_stage_2_offload")
p.add_argument("--devices", type=int, default=4)
args = p.parse_args()
trainer = pl.Trainer(accelerator="gpu", devices=args.devices, strategy=args.strategy, precision="bf16-mixed")
"""


def test_lightning_deepspeed_strategy_names_and_class(tmp_path: Path) -> None:
    """Lightning's registered DeepSpeed strategy names (``deepspeed_stage_2_offload``) and ``DeepSpeedStrategy(stage=3)``
    given to ``Trainer(strategy=)`` mean DeepSpeed ZeRO at that stage, not plain DDP; plain ``ddp`` stays DDP."""
    (tmp_path / "train.py").write_text(_LIGHTNING_DEEPSPEED)
    md = extract_metadata(tmp_path, "python train.py")
    assert (md.distributed, md.num_gpus) == ("deepspeed_zero2", 4)
    (tmp_path / "custom.py").write_text(
        _LIGHTNING_DEEPSPEED.replace("strategy=args.strategy", "strategy=strategy").replace(
            "trainer =", "strategy = DeepSpeedStrategy(stage=3, offload_optimizer=True)\ntrainer ="
        )
    )
    assert extract_metadata(tmp_path, "python custom.py").distributed == "deepspeed_zero3"
    assert extract_metadata(tmp_path, "python train.py --strategy deepspeed").distributed == "deepspeed"
    assert extract_metadata(tmp_path, "python train.py --strategy ddp").distributed == "ddp"


_SCHEDULED_RATE = """\
import argparse
import numpy as np
import torch
import torch.distributed as dist
from engine import train_one_epoch


def cosine_scheduler(base_value, final_value, epochs, niter_per_ep, warmup_epochs=0):
    iters = np.arange(epochs * niter_per_ep)
    return final_value + 0.5 * (base_value - final_value) * (1 + np.cos(np.pi * iters / len(iters)))


p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, default=0.0005)
p.add_argument("--batch_size_per_gpu", type=int, default=64)
p.add_argument("--epochs", type=int, default=100)
args = p.parse_args()
model = torch.nn.Linear(8, 8)
optimizer = torch.optim.SGD(model.parameters(), lr=0, momentum=0.9)  # the schedule sets the rate
lr_schedule = cosine_scheduler(
    args.lr * (args.batch_size_per_gpu * dist.get_world_size()) / 256.0, 1e-6, args.epochs, 100, warmup_epochs=10
)
for epoch in range(args.epochs):
    train_one_epoch(model, optimizer, lr_schedule, epoch)
"""

_SCHEDULE_ENGINE = """\
def train_one_epoch(model, optimizer, lr_schedule, epoch):
    for it in range(100):
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr_schedule[epoch * 100 + it] * param_group.get("lr_scale", 1.0)
"""


def test_rate_of_a_per_step_schedule_written_into_param_groups(tmp_path: Path) -> None:
    """An optimizer built at lr 0 whose loop (here in an engine module) writes ``lr_schedule[it]`` into each
    param group trains at the rate the schedule was built from: the base setting scaled by the global batch
    (the linear scaling rule over 8 processes), not the raw ``--lr`` default."""
    (tmp_path / "main.py").write_text(_SCHEDULED_RATE)
    (tmp_path / "engine.py").write_text(_SCHEDULE_ENGINE)
    md = extract_metadata(tmp_path, "torchrun --nproc_per_node=8 main.py")
    assert md.learning_rate == pytest.approx(0.001)
    assert md.provenance["learning_rate"].line == 20
    assert extract_metadata(tmp_path, "torchrun --nproc_per_node=2 main.py --lr 0.001").learning_rate == pytest.approx(
        0.0005
    )


_BATCH_SCALED_RATE = """\
import argparse
import math
import torch

p = argparse.ArgumentParser()
p.add_argument("--base-lr", type=float, default=0.2)
p.add_argument("--batch-size", type=int, default=2048)
p.add_argument("--epochs", type=int, default=100)
args = p.parse_args()


def adjust_learning_rate(args, optimizer, loader, step):
    max_steps = args.epochs * len(loader)
    warmup_steps = 10 * len(loader)
    base_lr = args.base_lr * args.batch_size / 256
    if step < warmup_steps:
        lr = base_lr * step / warmup_steps
    else:
        lr = base_lr * 0.5 * (1 + math.cos(math.pi * step / max_steps))
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    return lr


def adjust_decay(optimizer, epoch):
    lr = args.base_lr * (0.1 ** (epoch // 30))
    for g in optimizer.param_groups:
        g["lr"] = lr


model = torch.nn.Linear(4, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0)
loader = torch.utils.data.DataLoader(range(10), batch_size=args.batch_size // 8)
for epoch in range(args.epochs):
    for step, x in enumerate(loader):
        adjust_learning_rate(args, optimizer, loader, step)
"""


def test_rate_scaled_by_the_batch_where_the_schedule_writes_it(tmp_path: Path) -> None:
    """A schedule function that writes a local into ``param_group["lr"]`` trains at the base rate setting scaled by
    the batch (``base_lr = args.base_lr * args.batch_size / 256``); a step decay of the setting alone (no batch in
    it) is no peak rate and is left alone."""
    (tmp_path / "main.py").write_text(_BATCH_SCALED_RATE)
    md = extract_metadata(tmp_path, "torchrun --nproc_per_node=8 main.py --batch-size 512 --base-lr 0.3")
    assert md.learning_rate == pytest.approx(0.6)
    assert (md.provenance["learning_rate"].line, md.provenance["learning_rate"].path) == (15, "use")
    only_decay = _BATCH_SCALED_RATE.replace("base_lr = args.base_lr * args.batch_size / 256", "base_lr = args.base_lr")
    (tmp_path / "main.py").write_text(only_decay)
    assert extract_metadata(tmp_path, "python main.py --base-lr 0.3").learning_rate == pytest.approx(0.3)


_MODULE_RATE = """\
import argparse
import pytorch_lightning as pl
from models import Autoencoder

p = argparse.ArgumentParser()
p.add_argument("--base_lr", type=float, default=4.5e-6)
p.add_argument("--batch_size", type=int, default=12)
p.add_argument("--scale_lr", type=int, default=1)
p.add_argument("--accumulate", type=int, default=2)
opt = p.parse_args()
model = Autoencoder()
if opt.scale_lr:
    model.learning_rate = opt.accumulate * opt.batch_size * opt.base_lr
else:
    model.learning_rate = opt.base_lr
trainer = pl.Trainer(max_epochs=5)
trainer.fit(model)
"""


def test_rate_the_entry_script_sets_on_the_lightning_module(tmp_path: Path) -> None:
    """``model.learning_rate = accumulate * batch * base_lr`` in the arm that runs is the rate the module's
    ``configure_optimizers`` reads (CompVis-style entry scripts); when the arm that runs cannot be told and one
    arm's value cannot be followed, the other arm's use is not taken (the rate setting itself is all that is told)."""
    (tmp_path / "main.py").write_text(_MODULE_RATE)
    (tmp_path / "models.py").write_text("import torch\nclass Autoencoder(torch.nn.Module):\n    pass\n")
    assert extract_metadata(tmp_path, "python main.py").learning_rate == pytest.approx(1.08e-4)
    assert extract_metadata(tmp_path, "python main.py --scale_lr 0").learning_rate == pytest.approx(4.5e-6)
    (tmp_path / "main.py").write_text(
        _MODULE_RATE.replace("if opt.scale_lr:", "if torch_version_ok():").replace(
            "opt.accumulate * opt.batch_size", "opt.accumulate * ngpu() * opt.batch_size"
        )
    )
    assert extract_metadata(tmp_path, "python main.py").provenance["learning_rate"].path == "static"  # the setting


_TIMM_STYLE_TRAIN = """\
import argparse
import torch
from timm.models import create_model
import models

try:
    from apex import amp
    has_apex = True
except ImportError:
    has_apex = False

p = argparse.ArgumentParser()
p.add_argument("data")
p.add_argument("--model", default="resnet50")
p.add_argument("-b", "--batch-size", type=int, default=32)
p.add_argument("--apex-amp", action="store_true", default=False)
args = p.parse_args()
use_amp = None
if args.apex_amp and has_apex:
    use_amp = "apex"
model = create_model(args.model, num_classes=1000)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
if use_amp == "apex":
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
model = torch.nn.parallel.DistributedDataParallel(model)
loader = torch.utils.data.DataLoader(args.data, batch_size=args.batch_size)
"""

_REGISTERED_MODELS = """\
import copy
import torch.nn as nn
from timm.models.registry import register_model


class GroupNorm(nn.GroupNorm):
    def __init__(self, num_channels, **kwargs):
        super().__init__(1, num_channels, **kwargs)


class TinyNet(nn.Module):
    def __init__(self, dims, num_classes=1000, init_cfg=None):
        super().__init__()
        self.stem = nn.Conv2d(3, dims[0], 3)
        self.body = nn.Sequential(*[nn.Linear(dims[i], dims[i + 1]) for i in range(len(dims) - 1)])
        self.norm = GroupNorm(dims[-1])
        self.head = nn.Linear(dims[-1], num_classes)
        self.init_cfg = copy.deepcopy(init_cfg)


@register_model
def tinynet_s(pretrained=False, **kwargs):
    return TinyNet([16, 32], **kwargs)
"""


def test_shell_wrapper_hands_on_its_arguments_and_a_registered_builder_is_counted(tmp_path: Path) -> None:
    """``./distributed_train.sh 8 DATA --model X ...`` with ``NUM_PROC=$1; shift; torchrun ... train.py "$@"``: the
    script gets the arguments after the shift; timm's ``create_model(name)`` of the job's own ``@register_model``
    function is counted by the interpreter (a norm class named like its torch base is a layer, not a loop;
    ``copy.deepcopy`` of a plain setting is that setting); ``has_apex`` set in a ``try`` and its ``except`` depends on
    where the job runs, so ``amp.initialize`` under ``if use_amp == "apex"`` may run: mixed precision with apex."""
    (tmp_path / "distributed_train.sh").write_text(
        '#!/bin/bash\nNUM_PROC=$1\nshift\npython3 -m torch.distributed.launch --nproc_per_node=$NUM_PROC train.py "$@"\n'
    )
    (tmp_path / "train.py").write_text(_TIMM_STYLE_TRAIN)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("from .tinynet import *\n")
    (tmp_path / "models" / "tinynet.py").write_text(_REGISTERED_MODELS)
    md = extract_metadata(tmp_path, "./distributed_train.sh 4 /data/imagenet --model tinynet_s -b 64 --apex-amp")
    assert (md.model_name, md.num_gpus, md.batch_size_per_device, md.global_batch_size) == ("tinynet_s", 4, 64, 256)
    want = (3 * 16 * 9 + 16) + (16 * 32 + 32) + 2 * 32 + (32 * 1000 + 1000)
    assert md.params_millions == pytest.approx(want / 1e6, abs=1e-3)
    assert (md.precision, md.framework) == ("fp16", ["PyTorch", "apex"])
    plain = extract_metadata(tmp_path, "./distributed_train.sh 4 /data/imagenet --model tinynet_s")
    assert plain.precision == "fp32"


_OLMO_STYLE_TRAIN = """\
import sys
from enum import Enum
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.nn.parallel import DistributedDataParallel as DDP
from config import TrainConfig, DistributedStrategy
from model import Net

cfg = TrainConfig.load(sys.argv[1])
loader = torch.utils.data.DataLoader(range(10), batch_size=cfg.global_train_batch_size)
model = Net(256)
if cfg.distributed_strategy == DistributedStrategy.ddp:
    dist_model = DDP(model)
elif cfg.distributed_strategy == DistributedStrategy.fsdp:
    dist_model = FSDP(model)
optim = torch.optim.AdamW(model.parameters(), lr=cfg.optimizer.learning_rate)
with torch.autocast("cuda", enabled=True, dtype=cfg.autocast_precision):
    pass
"""

_OLMO_STYLE_MODEL = """\
import torch.nn as nn


class Activation(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.width = width

    @property
    def output_multiplier(self):
        raise NotImplementedError


class SwiGLU(Activation):
    @property
    def output_multiplier(self):
        return 0.5


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.act = SwiGLU(width)
        self.ff_proj = nn.Linear(width, 4 * width)
        self.ff_out = nn.Linear(int(self.act.output_multiplier * 4 * width), width)
"""


def test_string_enum_arms_micro_batches_properties_and_autocast_dtype(tmp_path: Path) -> None:
    """``if cfg.distributed_strategy == DistributedStrategy.ddp`` compares a string setting with a string enum
    member, so FSDP in the other arm is not the job's; the loader's device batch split into the config's
    micro-batches makes the micro-batch the per-device batch; a ``@property`` of a subclass without its own
    ``__init__`` is the subclass's (SwiGLU halves the width); ``autocast(enabled=True, dtype=<unknown>)`` does not
    mean float16: the config's ``precision: amp_bf16`` does."""
    (tmp_path / "config.py").write_text(
        "from enum import Enum\n\n\nclass StrEnum(str, Enum):\n    pass\n\n\n"
        "class DistributedStrategy(StrEnum):\n    ddp = 'ddp'\n    fsdp = 'fsdp'\n"
    )
    (tmp_path / "train.py").write_text(_OLMO_STYLE_TRAIN)
    (tmp_path / "model.py").write_text(_OLMO_STYLE_MODEL)
    (tmp_path / "c.yaml").write_text(
        "distributed_strategy: ddp\nglobal_train_batch_size: 1024\ndevice_train_microbatch_size: 16\n"
        "precision: amp_bf16\noptimizer:\n  learning_rate: 6.0e-4\n"
    )
    md = extract_metadata(tmp_path, "python train.py c.yaml")
    assert (md.distributed, md.framework) == ("single_gpu", ["PyTorch"])
    assert (md.batch_size_per_device, md.global_batch_size, md.precision) == (16, 1024, "bf16")
    assert md.params_millions == pytest.approx((256 * 1024 + 1024 + 512 * 256 + 256) / 1e6, abs=1e-3)


_MCORE_LOOP = """\
from torch.optim import Adam
from megatron.core.pipeline_parallel.schedules import get_forward_backward_func
from model import build

model = build()
optim = Adam(model.parameters())
forward_backward_func = get_forward_backward_func()
for iteration in range(5):
    optim.zero_grad()
    forward_backward_func(forward_step_func=None, data_iterator=None, model=model, num_microbatches=1)
    optim.step()
"""


def test_megatron_core_loop_library_default_rate_and_a_rate_the_code_writes(tmp_path: Path) -> None:
    """A loop whose pass runs Megatron's ``forward_backward_func`` and steps the optimizer is a step loop (5 steps);
    ``Adam(model.parameters())`` trains at torch's default rate 1e-3; Megatron is named as a framework. When the
    code writes ``param_group["lr"]`` itself (a Noam-style wrapper), the default is not the rate."""
    (tmp_path / "train.py").write_text(_MCORE_LOOP)
    (tmp_path / "model.py").write_text("import torch\n\n\ndef build():\n    return torch.nn.Linear(4, 4)\n")
    md = extract_metadata(tmp_path, "torchrun --nproc_per_node=2 train.py")
    assert (md.max_steps, md.learning_rate, md.framework) == (5, 0.001, ["PyTorch", "Megatron"])
    (tmp_path / "model.py").write_text(
        "import torch\n\n\ndef build():\n    return torch.nn.Linear(4, 4)\n\n\n"
        "def noam(optimizer, step):\n    for group in optimizer.param_groups:\n        group['lr'] = step ** -0.5\n"
    )
    (tmp_path / "train.py").write_text(_MCORE_LOOP.replace("from model import build", "from model import build, noam"))
    assert extract_metadata(tmp_path, "torchrun --nproc_per_node=2 train.py").learning_rate is None
