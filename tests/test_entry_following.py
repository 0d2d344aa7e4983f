"""Where training really starts and how its settings are built: console scripts, thin wrappers, config classes,
ml_collections trees, yacs options, registries, and the wrappers/casts that decide distribution and precision."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.test_usesites import write

CONSOLE_SETUP = """
from setuptools import setup
setup(name='gan', packages=['gan'], entry_points={'console_scripts': ['gan_train = gan.cli:main']})
"""
CONSOLE_CLI = """
import fire
from gan.trainer import Trainer

def train_from_folder(data='./data', batch_size=5, gradient_accumulate_every=6, num_train_steps=150000,
                      learning_rate=2e-4, fp16=False):
    model = Trainer(batch_size=batch_size, lr=learning_rate)
    for _ in range(num_train_steps):
        model.train()

def main():
    fire.Fire(train_from_folder)
"""


def test_a_console_script_runs_the_function_its_package_declares(tmp_path: Path) -> None:
    """`gan_train --batch-size 1 ...` is `gan.cli:main`; fire exposes train_from_folder, whose defaults are the
    settings the command line does not give; a Trainer is not the model."""
    write(tmp_path, {"setup.py": CONSOLE_SETUP, "gan/__init__.py": "", "gan/cli.py": CONSOLE_CLI,
                     "gan/trainer.py": "class Trainer():\n    pass\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "gan_train --data ./imgs --batch-size 1 --gradient-accumulate-every 16")
    assert (md.batch_size_per_device, md.global_batch_size) == (1, 16)
    assert (md.max_steps, md.learning_rate, md.precision) == (150000, 2e-4, "fp32")
    assert md.model_name != "Trainer"
    assert md.framework == ["PyTorch"]


WRAPPER = """
# Monkey-patch attention before transformers is imported.
from pkg.patches import patch_attention
patch_attention()
from pkg.train import train

if __name__ == "__main__":
    train()
"""
TRAIN_MODULE = """
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments
from dataclasses import dataclass, field

@dataclass
class DataArguments:
    data_path: str = field(default="data/conversations.json")
    lazy: bool = False

def train():
    parser = HfArgumentParser((DataArguments, TrainingArguments))
    data_args, training_args = parser.parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf")
    trainer = Trainer(model=model, args=training_args)
    trainer.train()

if __name__ == "__main__":
    train()
"""


def test_a_thin_wrapper_is_followed_to_the_module_that_trains(tmp_path: Path) -> None:
    """train_mem.py only patches and calls pkg.train.train(): the HF Trainer, its FSDP flag and the dataclass
    defaults (the data file) are read from pkg/train.py."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/patches.py": "def patch_attention():\n    pass\n",
                     "pkg/train.py": TRAIN_MODULE, "train_mem.py": WRAPPER})  # fmt: skip
    md = extract_metadata(
        tmp_path,
        "torchrun --nproc_per_node=4 train_mem.py --per_device_train_batch_size 2 --gradient_accumulation_steps 16"
        " --bf16 True --fsdp 'full_shard auto_wrap' --learning_rate 2e-5 --num_train_epochs 3",
    )
    assert md.framework == ["HF Trainer", "PyTorch FSDP"]
    assert (md.distributed, md.num_gpus, md.global_batch_size) == ("fsdp", 4, 128)
    assert md.dataset == "conversations.json"


def test_a_script_that_does_its_own_work_is_not_a_wrapper(tmp_path: Path) -> None:
    """A script that assigns settings and builds things stays the entry even if it calls an imported helper last."""
    write(tmp_path, {"helpers.py": "def setup_logging(cfg):\n    pass\n",
                     "train.py": "from helpers import setup_logging\nlr = 3e-4\nimport torch\n"
                                 "opt = torch.optim.AdamW([], lr=lr)\nsetup_logging(None)\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py")
    assert md.learning_rate == 3e-4


RECIPES_CONFIG = """
from dataclasses import dataclass

@dataclass
class train_config:
    model_name: str = "PATH/to/Model"
    enable_fsdp: bool = False
    batch_size_training: int = 4
    num_epochs: int = 3
    lr: float = 1e-4
    use_fp16: bool = False

@dataclass
class fsdp_config:
    pure_bf16: bool = False
"""
RECIPES_MAIN = """
import fire, torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from recipes.configs import train_config as TRAIN_CONFIG, fsdp_config as FSDP_CONFIG
from recipes.utils import update_config

def main(**kwargs):
    train_config, fsdp_config = TRAIN_CONFIG(), FSDP_CONFIG()
    update_config((train_config, fsdp_config), **kwargs)
    model = torch.nn.Linear(4, 4)
    if train_config.enable_fsdp and fsdp_config.pure_bf16:
        model.to(torch.bfloat16)
    if train_config.enable_fsdp:
        model = FSDP(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=train_config.lr)
    for epoch in range(train_config.num_epochs):
        pass

if __name__ == "__main__":
    fire.Fire(main)
"""


def test_config_class_defaults_under_command_line_overrides(tmp_path: Path) -> None:
    """fire.Fire(main) with config dataclasses from a src-layout package, re-exported by the package __init__: a
    field's default stands unless the command line sets it (plain or ``--class.field``); the FSDP wrapper and the
    bf16 cast run only where their conditions hold."""
    write(tmp_path, {"src/recipes/__init__.py": "",
                     "src/recipes/configs/__init__.py": "from recipes.configs.training import train_config, fsdp_config\n",
                     "src/recipes/configs/training.py": RECIPES_CONFIG,
                     "src/recipes/utils.py": "def update_config(c, **kw):\n    pass\n",
                     "src/recipes/finetuning.py": RECIPES_MAIN,
                     "finetuning.py": "import fire\nfrom recipes.finetuning import main\n\nif __name__ == '__main__':\n"
                                      "    fire.Fire(main)\n"})  # fmt: skip
    cmd = "torchrun --nproc_per_node 4 finetuning.py --enable_fsdp --fsdp_config.pure_bf16 --num_epochs 2"
    md = extract_metadata(tmp_path, cmd)
    assert (md.learning_rate, md.epochs) == (1e-4, 2)
    assert (md.distributed, md.precision) == ("fsdp", "bf16")
    plain = extract_metadata(tmp_path, "torchrun --nproc_per_node 4 finetuning.py")
    assert (plain.distributed, plain.precision, plain.epochs) == ("ddp", "fp32", 3)


ML_DEFAULTS = """
import ml_collections

def get_default_configs():
    config = ml_collections.ConfigDict()
    config.training = training = ml_collections.ConfigDict()
    config.training.batch_size = 128
    training.n_iters = 1300001
    config.eval = evaluate = ml_collections.ConfigDict()
    evaluate.batch_size = 1024
    config.data = data = ml_collections.ConfigDict()
    data.dataset = 'CIFAR10'
    config.optim = optim = ml_collections.ConfigDict()
    optim.lr = 2e-4
    return config
"""
ML_CONFIG = """
from configs.default_configs import get_default_configs

def get_config():
    config = get_default_configs()
    training = config.training
    training.sde = 'vesde'
    return config
"""
ML_MAIN = """
import torch
from absl import app, flags
from ml_collections.config_flags import config_flags
FLAGS = flags.FLAGS
config_flags.DEFINE_config_file("config", None, "Training configuration.")

def main(argv):
    model = torch.nn.DataParallel(torch.nn.Linear(2, 2))

if __name__ == "__main__":
    app.run(main)
"""


def test_ml_collections_config_trees_through_aliases_and_imported_defaults(tmp_path: Path) -> None:
    """`--config configs/ve/x.py` builds on get_default_configs() of another module; `training.x = …` under an alias
    is `training.x`, and the evaluation batch does not pass for the training batch."""
    write(tmp_path, {"configs/__init__.py": "", "configs/default_configs.py": ML_DEFAULTS,
                     "configs/ve/cifar.py": ML_CONFIG, "main.py": ML_MAIN})  # fmt: skip
    md = extract_metadata(tmp_path, "python main.py --config configs/ve/cifar.py --mode train --workdir /out")
    assert (md.global_batch_size, md.max_steps, md.learning_rate) == (128, 1300001, 2e-4)
    assert md.dataset == "CIFAR-10"
    assert md.distributed == "dp"


YACS_DEFAULTS = """
from fvcore.common.config import CfgNode
_C = CfgNode()
_C.TRAIN = CfgNode()
_C.TRAIN.BATCH_SIZE = 64
_C.TRAIN.DATASET = "kinetics"
_C.SOLVER = CfgNode()
_C.SOLVER.BASE_LR = 0.1
_C.SOLVER.MAX_EPOCH = 300
_C.SOLVER.STEPS = [0, 40, 80]
_C.NUM_GPUS = 8
"""
YACS_LOADER = """
def construct_loader(cfg, split):
    batch_size = int(cfg.TRAIN.BATCH_SIZE / max(1, cfg.NUM_GPUS))
    return batch_size
"""
YACS_TRAIN = """
from vision.fair.video.tools.train_net import train
from video.config.defaults import _C

def main():
    train(_C)

if __name__ == "__main__":
    main()
"""


def test_yacs_options_to_the_end_and_a_batch_split_over_gpus(tmp_path: Path) -> None:
    """`KEY VALUE` options include top-level keys (`NUM_GPUS 2`); upper-case keys answer lower-case names, but a
    schedule's `SOLVER.STEPS` is not a step count; the loader divides the batch by the GPU count, in a module
    imported through an internal package prefix that the repository does not have."""
    write(tmp_path, {"video/__init__.py": "", "video/config/__init__.py": "",
                     "video/config/defaults.py": YACS_DEFAULTS, "video/datasets/__init__.py": "",
                     "video/datasets/loader.py": YACS_LOADER,
                     "tools/train_net.py": "from video.datasets import loader\n\ndef train(cfg):\n    pass\n",
                     "tools/run_net.py": YACS_TRAIN,
                     "configs/c2d.yaml": "SOLVER:\n  MAX_EPOCH: 196\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "python tools/run_net.py --cfg configs/c2d.yaml TRAIN.BATCH_SIZE 16 NUM_GPUS 2")
    assert (md.num_gpus, md.distributed) == (2, "ddp")
    assert (md.batch_size_per_device, md.global_batch_size) == (8, 16)
    assert (md.epochs, md.learning_rate, md.max_steps) == (196, 0.1, None)


APEX = """
import argparse, torch
import apex
from apex.parallel.LARC import LARC
p = argparse.ArgumentParser()
p.add_argument('--use_fp16', type=str, default='true')
p.add_argument('--sync_bn', type=str, default='')
args = p.parse_args()
model = torch.nn.Linear(4, 4)
if args.sync_bn == 'apex':
    model = apex.parallel.convert_syncbn_model(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.6)
optimizer = LARC(optimizer=optimizer, trust_coefficient=0.001, clip=False)
if args.use_fp16 == 'true':
    model, optimizer = apex.amp.initialize(model, optimizer, opt_level="O1")
"""


def test_apex_counts_where_it_is_called(tmp_path: Path) -> None:
    """apex AMP O1 under a flag that holds → fp16 and apex; importing apex without calling it is not using it."""
    write(tmp_path, {"main.py": APEX})
    md = extract_metadata(tmp_path, "torchrun --nproc_per_node 8 main.py")
    assert (md.precision, md.framework) == ("fp16", ["PyTorch", "apex"])
    off = extract_metadata(tmp_path, "torchrun --nproc_per_node 8 main.py --use_fp16 false")
    assert off.precision == "fp32"
    imported_only = APEX.split("model = torch.nn", maxsplit=1)[0] + "model = torch.nn.Linear(4, 4)\n"
    write(tmp_path, {"main.py": imported_only})
    assert extract_metadata(tmp_path, "python main.py").framework == ["PyTorch"]


REGISTRY_MODELS = """
import torch.nn as nn

class DiT(nn.Module):
    def __init__(self, depth=28, hidden_size=1152, input_size=32, num_classes=1000):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(hidden_size, hidden_size) for _ in range(depth)])

def DiT_XL_2(**kwargs):
    return DiT(depth=28, hidden_size=1152, **kwargs)

def DiT_S_2(**kwargs):
    return DiT(depth=12, hidden_size=384, **kwargs)

DiT_models = {'DiT-XL/2': DiT_XL_2, 'DiT-S/2': DiT_S_2}
"""
REGISTRY_TRAIN = """
import argparse, torch
from collections import OrderedDict
from models import DiT_models
p = argparse.ArgumentParser()
p.add_argument("--model", type=str, choices=list(DiT_models.keys()), default="DiT-XL/2")
p.add_argument("--image-size", type=int, default=256)
args = p.parse_args()
latent_size = args.image_size // 8
model = DiT_models[args.model](input_size=latent_size, num_classes=1000)
model_params = OrderedDict(model.named_parameters())
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
"""


def test_a_registry_of_constructors_names_the_model_by_its_key(tmp_path: Path) -> None:
    """`DiT_models[args.model](...)`: the model is the key the setting picks, counted through the constructor it
    maps to; `OrderedDict(model.named_parameters())` is no model."""
    write(tmp_path, {"models.py": REGISTRY_MODELS, "train.py": REGISTRY_TRAIN})
    md = extract_metadata(tmp_path, "torchrun --nproc_per_node=8 train.py --model DiT-S/2")
    assert md.model_name == "DiT-S/2"
    assert md.params_millions is not None and abs(md.params_millions - 12 * (384 * 384 + 384) / 1e6) < 0.05


TYPED_ARCH = """
import torch.nn as nn

class TinySR(nn.Module):
    def __init__(self, num_feat=64, num_block=16):
        super().__init__()
        self.body = nn.ModuleList([nn.Conv2d(num_feat, num_feat, 3, 1, 1) for _ in range(num_block)])
"""
TYPED_OPTIONS = """
name: tiny_x4
datasets:
  train:
    name: DIV2K
    batch_size_per_gpu: 16
network_g:
  type: TinySR
  num_feat: 32
  num_block: 4
train:
  total_iter: 1000000
  optim_g:
    type: Adam
    lr: !!float 2e-4
"""


def test_a_model_section_that_names_a_class_of_the_job(tmp_path: Path) -> None:
    """`network_g.type: TinySR` names an nn.Module defined in the job's code (found by a bounded search, built
    with the settings beside it); `total_iter` is the step budget, `datasets.train.name` the data."""
    write(tmp_path, {"sr/archs/tiny_arch.py": TYPED_ARCH, "options/train.yml": TYPED_OPTIONS,
                     "sr/train.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('-opt')\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "python sr/train.py -opt options/train.yml")
    assert md.model_name == "TinySR"
    assert md.params_millions is not None and abs(md.params_millions - 4 * (32 * 32 * 9 + 32) / 1e6) < 0.001
    assert (md.max_steps, md.learning_rate, md.dataset, md.batch_size_per_device) == (1000000, 2e-4, "DIV2K", 16)


def test_a_tensorflow_job_is_not_called_pytorch(tmp_path: Path) -> None:
    """An entry script that imports TensorFlow and not torch trains with TensorFlow."""
    write(tmp_path, {"run_classifier.py": "import tensorflow as tf\nflags = tf.flags\n"})
    assert extract_metadata(tmp_path, "python run_classifier.py --train_batch_size=32").framework == ["TensorFlow"]


WRAPPED_BACKBONE = """
import torch, torchvision
from torch import nn

class BarlowTwins(nn.Module):
    def __init__(self, dim=8192):
        super().__init__()
        self.backbone = torchvision.models.resnet50(zero_init_residual=True)
        self.backbone.fc = nn.Identity()
        self.projector = nn.Sequential(nn.Linear(2048, dim), nn.ReLU(), nn.Linear(dim, dim))

model = BarlowTwins()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""


def test_a_wrapper_around_a_library_backbone_is_that_backbone(tmp_path: Path) -> None:
    """A model class that builds torchvision's resnet50 plus a projection MLP is a CNN named by its backbone, and
    the backbone's parameters count, less the 1000-class head it replaces with ``nn.Identity()`` (torchvision's
    resnet50: 25,557,032 parameters, 2,049,000 of them in ``fc``)."""
    write(tmp_path, {"main.py": WRAPPED_BACKBONE})
    md = extract_metadata(tmp_path, "python main.py")
    assert md.model_type == "cnn"
    assert md.model_name is not None and md.model_name.startswith("resnet50")
    want = (25_557_032 - 2_049_000 + 2048 * 8192 + 8192 + 8192 * 8192 + 8192) / 1e6
    assert md.params_millions is not None and abs(md.params_millions - want) < 0.06


def _vocabulary_job(words: str, times: int) -> dict[str, str]:
    helper = "\n".join(f"def f{i}(x):\n    return x  # {words}" for i in range(times))
    train = "import torch\nfrom losses import f0\nfrom torch import nn\nmodel = nn.Conv2d(3, 8, 3)\n"
    return {"losses.py": helper, "train.py": train}


def test_what_the_code_computes_with_decides_detection_and_diffusion(tmp_path: Path) -> None:
    """A CNN whose own modules compute with boxes throughout (matching, IoU, NMS) is a detector; one whose modules
    are about noise schedules and samplers trains a diffusion model; a few mentions decide nothing."""
    write(tmp_path / "det", _vocabulary_job("boxes bbox_iou nms anchors", 20))
    det = extract_metadata(tmp_path / "det", "python train.py")
    assert (det.model_type, det.task) == ("cnn_detector", "object_detection")
    write(tmp_path / "diff", _vocabulary_job("q_sample alphas_cumprod betas", 25))
    diff = extract_metadata(tmp_path / "diff", "python train.py")
    assert diff.task == "image_generation_diffusion"
    write(tmp_path / "cls", _vocabulary_job("boxes", 3))
    assert extract_metadata(tmp_path / "cls", "python train.py").task != "object_detection"


AMP_SETTING = """
import torch
from config import get_config
from utils import Scaler
config = get_config()
model = torch.nn.Linear(2, 2)
amp_dtype = torch.bfloat16 if config.AMP_DTYPE == "bfloat16" else torch.float16
scaler = Scaler()
for x in range(3):
    with torch.cuda.amp.autocast(enabled=config.AMP_ENABLE, dtype=amp_dtype):
        y = model(x)
    with torch.cuda.amp.autocast(enabled=False):
        loss = y.sum()
"""
AMP_CONFIG = """
from yacs.config import CfgNode as CN
_C = CN()
_C.AMP_ENABLE = True
_C.AMP_DTYPE = "bfloat16"

def get_config():
    return _C.clone()
"""


def test_mixed_precision_is_what_autocast_is_told(tmp_path: Path) -> None:
    """`autocast(enabled=config.AMP_ENABLE, dtype=…)` follows the yacs tree's top-level keys and a dtype chosen by
    a condition; an `enabled=False` region for the loss is no setting; a GradScaler built in a helper module does
    not by itself make the job mixed precision."""
    scaler = "import torch\n\nclass Scaler:\n    def __init__(self):\n        self.s = torch.cuda.amp.GradScaler()\n"
    write(tmp_path, {"train.py": AMP_SETTING, "config.py": AMP_CONFIG, "utils.py": scaler})
    assert extract_metadata(tmp_path, "python train.py").precision == "bf16"
    write(tmp_path, {"config.py": AMP_CONFIG.replace('"bfloat16"', '"float16"')})
    assert extract_metadata(tmp_path, "python train.py").precision == "fp16"
    write(tmp_path, {"config.py": AMP_CONFIG.replace("AMP_ENABLE = True", "AMP_ENABLE = False")})
    assert extract_metadata(tmp_path, "python train.py").precision == "fp32"


def test_data_named_on_the_command_line_and_chat_templates(tmp_path: Path) -> None:
    """A dataset named only by a positional data path or a config file's name, a `train_file` given as a path
    (its file name), and a conversation template marking chat fine-tuning."""
    write(tmp_path, {"main.py": "import torch\nimport sys\nroot = sys.argv[1]\n"})
    assert extract_metadata(tmp_path, "python main.py /datasets/imagenet/").dataset == "ImageNet"
    write(tmp_path, {"configs/lsun_churches-ldm-kl-8.yaml": "model:\n  base_learning_rate: 1.0e-4\n"})
    assert extract_metadata(tmp_path, "python main.py --base configs/lsun_churches-ldm-kl-8.yaml").dataset == (
        "LSUN Churches"
    )
    write(tmp_path, {"run.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--train_file')\n"})
    assert extract_metadata(tmp_path, "python run.py --train_file data/wiki1m.txt").dataset == "wiki1m.txt"
    chat = (
        "from transformers import AutoModelForCausalLM, Trainer\nfrom fastchat.conversation import "
        "get_conversation_template\nconv = get_conversation_template('vicuna')\nroles = {'human': conv.roles[0]}\n"
        "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\n"
    )
    write(tmp_path, {"sft.py": chat})
    assert extract_metadata(tmp_path, "python sft.py").task == "instruction_finetuning"


CLICK_TRAIN = """
import click, torch
from training import loop

@click.command()
@click.option('--data', type=str, required=True)
@click.option('--batch', help='Total batch size', type=click.IntRange(min=1), default=512, show_default=True)
@click.option('--lr', type=click.FloatRange(min=0, min_open=True), default=10e-4)
@click.option('--fp16', type=bool, default=False)
@click.option('-n', '--dry-run', is_flag=True)
def main(**kwargs):
    loop.run(**kwargs)

if __name__ == "__main__":
    main()
"""
CLICK_LOOP = """
import torch
import torch.distributed as dist

def run(batch_size=512, **kw):
    batch_gpu = batch_size // dist.get_world_size()
    loader = torch.utils.data.DataLoader(None, batch_size=batch_gpu)
"""


def test_click_options_are_settings(tmp_path: Path) -> None:
    """click options' defaults and `--opt=value` overrides are read like argparse's; the total batch is split over
    the launcher's ranks where the loop builds its loader."""
    write(tmp_path, {"train.py": CLICK_TRAIN, "training/__init__.py": "", "training/loop.py": CLICK_LOOP})
    md = extract_metadata(tmp_path, "torchrun --standalone --nproc_per_node=8 train.py --data=d.zip --lr=2e-4")
    assert (md.learning_rate, md.global_batch_size, md.batch_size_per_device, md.num_gpus) == (2e-4, 512, 64, 8)


SUBMIT = """
import argparse

def get_args_parser(add_help=True):
    p = argparse.ArgumentParser(add_help=add_help)
    p.add_argument("--ngpus", "--gpus-per-node", default=8, type=int)
    p.add_argument("--nodes", default=1, type=int)
    return p

def submit_jobs(task, args):
    import submitit
    executor = submitit.AutoExecutor(folder=".")
"""
SUBMIT_TRAIN = """
import sys
from pkg.submit import get_args_parser, submit_jobs

def main():
    parser = get_args_parser(add_help=False)
    parser.add_argument("--config-file", default="")
    args = parser.parse_args()
    submit_jobs(None, args)

if __name__ == "__main__":
    sys.exit(main())
"""


def test_a_submitit_launcher_asks_for_nodes_times_gpus(tmp_path: Path) -> None:
    """`--nodes 4` on a launcher whose parser (built by an imported helper) defaults to 8 GPUs per node and submits
    with submitit: 32 GPUs, data-parallel; a `--devices cuda:0 cuda:1` list spawns one process per device."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/submit.py": SUBMIT, "run/train.py": SUBMIT_TRAIN})
    md = extract_metadata(tmp_path, "python run/train.py --nodes 4 --config-file c.yaml")
    assert (md.num_gpus, md.distributed) == (32, "ddp")
    spawn = ("import argparse\nimport torch.multiprocessing as mp\np = argparse.ArgumentParser()\n"
             "p.add_argument('--devices', type=str, nargs='+', default=['cuda:0'])\nargs = p.parse_args()\n"
             "for rank in range(len(args.devices)):\n    mp.Process(target=print).start()\n")  # fmt: skip
    write(tmp_path, {"main.py": spawn})
    md = extract_metadata(tmp_path, "python main.py --devices cuda:0 cuda:1 cuda:2")
    assert (md.num_gpus, md.distributed) == (3, "ddp")


def test_known_architectures_and_imagenet_variants_from_the_data_files(tmp_path: Path) -> None:
    """`--cfg cfg/training/yolov7.yaml` names YOLOv7 (36.9 M from the data file's source table); an `in1k` config
    name is ImageNet-1k, a plain ImageNet path stays ImageNet."""
    write(tmp_path, {"train.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--cfg')\n"
                                 "p.add_argument('--data')\nargs = p.parse_args()\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py --cfg cfg/training/yolov7.yaml --data /data/imagenet")
    assert (md.model_name, md.params_millions, md.model_type) == ("yolov7", 36.9, "cnn_detector")
    assert md.dataset == "ImageNet"
    assert extract_metadata(tmp_path, "python train.py --data configs/in1k_vith14_ep300.yaml").dataset == "ImageNet-1k"
