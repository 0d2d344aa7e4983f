"""Parsers built from dictionaries of defaults, consumers inside the job's helpers, and processes a script starts
only under settings it does not have (round-4 corpus idioms, written here as small synthetic workspaces)."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.test_usesites import write

YAML_HOOK_MAIN = """
import argparse
import torch
import torch.multiprocessing as mp
from torch.nn.parallel import DataParallel
from utils import yaml_config_hook
from model import load_optimizer
from net import Projector, get_resnet

def main(gpu, args):
    encoder = get_resnet(args.resnet)
    model = Projector(encoder, args.projection_dim)
    optimizer = load_optimizer(args, model)
    loader = torch.utils.data.DataLoader(None, batch_size=args.batch_size, shuffle=True)
    if args.dataparallel:
        model = DataParallel(model)
    for epoch in range(args.start_epoch, args.epochs):
        pass

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    config = yaml_config_hook("./config/config.yaml")
    for k, v in config.items():
        parser.add_argument(f"--{k}", default=v, type=type(v))
    args = parser.parse_args()
    args.num_gpus = torch.cuda.device_count()
    if args.nodes > 1:
        mp.spawn(main, args=(args,), nprocs=args.gpus, join=True)
    else:
        main(0, args)
"""
YAML_HOOK_CONFIG = """
nodes: 1
gpus: 1
dataparallel: 0
batch_size: 128
start_epoch: 0
epochs: 100
resnet: "resnet18"
projection_dim: 64
optimizer: "Adam"
"""
YAML_HOOK_UTILS = """
import yaml
def yaml_config_hook(config_file):
    with open(config_file) as f:
        return yaml.safe_load(f)
"""
YAML_HOOK_MODEL = """
import torch
def load_optimizer(args, model):
    if args.optimizer == "Adam":
        optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    elif args.optimizer == "LARS":
        learning_rate = 0.3 * args.batch_size / 256
        optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
    return optimizer
"""
YAML_HOOK_NET = """
import torch.nn as nn
import torchvision
def get_resnet(name):
    return {"resnet18": torchvision.models.resnet18(), "resnet50": torchvision.models.resnet50()}[name]

class Projector(nn.Module):
    def __init__(self, encoder, dim):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Sequential(nn.Linear(512, 512, bias=False), nn.ReLU(), nn.Linear(512, dim, bias=False))
"""


def _hook_workspace(tmp_path: Path) -> None:
    write(tmp_path, {"main.py": YAML_HOOK_MAIN, "config/config.yaml": YAML_HOOK_CONFIG, "utils.py": YAML_HOOK_UTILS,
                     "model.py": YAML_HOOK_MODEL, "net.py": YAML_HOOK_NET})  # fmt: skip


def test_flags_made_from_a_yaml_file_carry_its_values_and_take_the_command_line(tmp_path: Path) -> None:
    """`for k, v in yaml_config_hook("./config/config.yaml").items(): add_argument(f"--{k}", default=v)`: the file's
    values are the defaults, `--batch_size 256 --epochs 200` overrides them."""
    _hook_workspace(tmp_path)
    md = extract_metadata(tmp_path, "python main.py")
    assert (md.batch_size_per_device, md.global_batch_size, md.epochs) == (128, 128, 100)
    md = extract_metadata(tmp_path, "python main.py --batch_size 256 --epochs 200")
    assert (md.batch_size_per_device, md.epochs) == (256, 200)


def test_a_rate_written_in_a_helper_and_chosen_by_a_setting_is_the_rate(tmp_path: Path) -> None:
    """The optimizer is built in the job's own helper: a literal rate in the arm the config selects (Adam), a
    computed one (0.3 x batch / 256) when the command line selects the other arm."""
    _hook_workspace(tmp_path)
    assert extract_metadata(tmp_path, "python main.py").learning_rate == 3e-4
    md = extract_metadata(tmp_path, "python main.py --optimizer LARS --batch_size 512")
    assert md.learning_rate == 0.6


def test_a_spawn_only_under_a_setting_the_job_does_not_have_means_one_gpu(tmp_path: Path) -> None:
    """`if args.nodes > 1: mp.spawn(...)` with nodes 1: one process on one GPU, although the script reads
    device_count(); with `--nodes 2` the GPU count is no longer one."""
    _hook_workspace(tmp_path)
    md = extract_metadata(tmp_path, "python main.py")
    assert (md.num_gpus, md.distributed) == (1, "single_gpu")
    assert extract_metadata(tmp_path, "python main.py --nodes 2").num_gpus != 1


def test_a_wrapper_named_after_a_known_backbone_takes_its_family(tmp_path: Path) -> None:
    """The model class only holds linear heads; the encoder it receives is a ResNet named by the settings, so
    the family is a CNN (not an MLP) and the size is the ResNet's."""
    _hook_workspace(tmp_path)
    md = extract_metadata(tmp_path, "python main.py --resnet resnet50")
    assert md.model_type == "cnn"
    assert md.params_millions is not None and 24 < md.params_millions < 30


HELPER_MAIN = """
import argparse
from pkg.script_util import add_dict_to_argparser, model_defaults
import torch

def create_argparser():
    defaults = dict(lr=1e-4, batch_size=1, use_fp16=False)
    defaults.update(model_defaults())
    parser = argparse.ArgumentParser()
    add_dict_to_argparser(parser, defaults)
    return parser

def main():
    args = create_argparser().parse_args()
    loader = torch.utils.data.DataLoader(None, batch_size=args.batch_size, shuffle=True)
    opt = torch.optim.AdamW([], lr=args.lr)

if __name__ == "__main__":
    main()
"""
HELPER_UTIL = """
def model_defaults():
    return dict(image_size=64, num_channels=128, dropout=0.0)

def add_dict_to_argparser(parser, default_dict):
    for k, v in default_dict.items():
        v_type = type(v)
        if v is None:
            v_type = str
        parser.add_argument(f"--{k}", default=v, type=v_type)
"""


def test_a_helper_that_adds_a_flag_per_key_of_a_merged_dict(tmp_path: Path) -> None:
    """`add_dict_to_argparser(parser, defaults)` over `dict(lr=1e-4, batch_size=1)` updated with a defaults
    function: the command line's `--lr 3e-4 --batch_size 128` are typed by the defaults and reach the consumers."""
    write(tmp_path, {"scripts/train.py": HELPER_MAIN, "pkg/__init__.py": "", "pkg/script_util.py": HELPER_UTIL})
    md = extract_metadata(tmp_path, "python scripts/train.py --lr 3e-4 --batch_size 128 --image_size 32")
    assert (md.learning_rate, md.batch_size_per_device) == (3e-4, 128)
    assert extract_metadata(tmp_path, "python scripts/train.py").batch_size_per_device == 1


HPARAMS_FACTORY = """
import tensorflow as tf
from symbols import symbols

def create_hparams(hparams_string=None, verbose=False):
    hparams = tf.contrib.training.HParams(
        n_symbols=len(symbols),
        epochs=500,
        fp16_run=False,
        distributed_run=False,
        learning_rate=1e-3,
        batch_size=64,
        training_files='filelists/ljs_audio_text_train_filelist.txt',
    )
    if hparams_string:
        hparams.parse(hparams_string)
    return hparams
"""
HPARAMS_TRAIN = """
import argparse
import torch
from hparams import create_hparams

class Net(torch.nn.Module):
    def __init__(self, hparams):
        super().__init__()
        self.embedding = torch.nn.Embedding(hparams.n_symbols, 512)
        self.cell = torch.nn.LSTMCell(512, 1024)

def init_distributed(hparams, n_gpus, rank):
    torch.cuda.set_device(rank % torch.cuda.device_count())

def train(n_gpus, rank, hparams):
    if hparams.distributed_run:
        init_distributed(hparams, n_gpus, rank)
    model = Net(hparams)
    optimizer = torch.optim.Adam(model.parameters(), lr=hparams.learning_rate)
    if hparams.fp16_run:
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    loader = torch.utils.data.DataLoader(None, batch_size=hparams.batch_size, shuffle=True)
    for epoch in range(0, hparams.epochs):
        pass

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--hparams', type=str, required=False, help='comma separated name=value pairs')
    parser.add_argument('--n_gpus', type=int, default=1)
    parser.add_argument('--rank', type=int, default=0)
    args = parser.parse_args()
    hparams = create_hparams(args.hparams)
    train(args.n_gpus, args.rank, hparams)
"""
MULTIPROC = """
import sys, subprocess, torch
argslist = list(sys.argv)[1:]
num_gpus = torch.cuda.device_count()
argslist.append('--n_gpus={}'.format(num_gpus))
for i in range(num_gpus):
    argslist.append('--rank={}'.format(i))
    p = subprocess.Popen([str(sys.executable)] + argslist)
    argslist = argslist[:-1]
"""


def _hparams_workspace(tmp_path: Path) -> None:
    symbols = "_pad = '_'\n_letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'\nsymbols = [_pad] + list(_letters) + ['@' + s for s in ('AA', 'AE')]\n"
    write(tmp_path, {"hparams.py": HPARAMS_FACTORY, "train.py": HPARAMS_TRAIN, "multiproc.py": MULTIPROC,
                     "symbols.py": symbols})  # fmt: skip


def test_a_config_factory_s_keywords_are_the_settings_and_its_parse_string_overrides_them(tmp_path: Path) -> None:
    """`create_hparams(args.hparams)` returns `HParams(epochs=500, batch_size=64, ...)`: those are the defaults (a
    computed one, `len(symbols)`, too); `--hparams=fp16_run=True,batch_size=32` is parsed into them (so apex runs)."""
    _hparams_workspace(tmp_path)
    md = extract_metadata(tmp_path, "python train.py")
    assert (md.batch_size_per_device, md.epochs, md.learning_rate) == (64, 500, 1e-3)
    assert (md.precision, md.num_gpus, md.distributed) == ("fp32", 1, "single_gpu")
    want = (29 * 512 + 4 * (1024 * (512 + 1024) + 2 * 1024)) / 1e6  # `n_symbols=len(symbols)` over symbols.py: 29
    assert md.params_millions is not None and abs(md.params_millions - want) < 0.05
    md = extract_metadata(tmp_path, "python train.py --hparams=fp16_run=True,batch_size=32")
    assert (md.batch_size_per_device, md.precision) == (32, "fp16")
    assert "apex" in md.framework


def test_a_module_that_relaunches_its_arguments_per_gpu_runs_the_script_on_every_gpu(tmp_path: Path) -> None:
    """`python -m multiproc train.py ...` starts one `train.py` per visible GPU: the settings are train.py's, the
    job is data-parallel on an unstated number of GPUs, so the global batch is not known either."""
    _hparams_workspace(tmp_path)
    md = extract_metadata(tmp_path, "python -m multiproc train.py --hparams=distributed_run=True")
    assert (md.batch_size_per_device, md.epochs) == (64, 500)
    assert (md.distributed, md.num_gpus, md.global_batch_size) == ("ddp", None, None)


SPLIT_MAIN = """
import argparse
import torch
import torch.multiprocessing as mp

parser = argparse.ArgumentParser()
parser.add_argument('-b', '--batch-size', default=512, type=int, help='total over all GPUs')
parser.add_argument('--multiprocessing-distributed', action='store_true')

def main_worker(gpu, ngpus_per_node, args):
    model = torch.nn.Linear(4, 4)
    args.batch_size = int(args.batch_size / ngpus_per_node)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
    loader = torch.utils.data.DataLoader(None, batch_size=args.batch_size, shuffle=True)

def main():
    args = parser.parse_args()
    ngpus_per_node = torch.cuda.device_count()
    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))

if __name__ == '__main__':
    main()
"""


def test_a_batch_split_over_uncounted_gpus_is_the_global_batch(tmp_path: Path) -> None:
    """`args.batch_size = int(args.batch_size / ngpus_per_node)` before the loader, on every visible GPU: the
    setting (512, or the command's 256) is the global batch; the per-GPU share is unknown."""
    write(tmp_path, {"main.py": SPLIT_MAIN})
    md = extract_metadata(tmp_path, "python main.py --multiprocessing-distributed")
    assert (md.batch_size_per_device, md.global_batch_size, md.num_gpus) == (None, 512, None)
    assert extract_metadata(tmp_path, "python main.py -b 256 --multiprocessing-distributed").global_batch_size == 256


LIGHTNING_MAIN = """
import argparse
import torch
from pytorch_lightning import Trainer

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", nargs="*", default=[])
    parser.add_argument("--batch_size", type=int, default=5)
    parser = Trainer.add_argparse_args(parser)
    opt, unknown = parser.parse_known_args()
    trainer = Trainer.from_argparse_args(opt)
    loader = torch.utils.data.DataLoader(None, batch_size=opt.batch_size, shuffle=True)
    trainer.fit(None, loader)
"""


def test_lightning_device_ids_on_the_command_line_count_gpus(tmp_path: Path) -> None:
    """`--gpus 0,1` (a flag the script's own parser does not declare, Lightning's does) is two GPUs, so the job is
    data-parallel with a global batch of 2 x 5; `--gpus 0,` is one GPU."""
    write(tmp_path, {"main.py": LIGHTNING_MAIN})
    md = extract_metadata(tmp_path, "python main.py --base cfg.yaml --gpus 0,1")
    assert (md.num_gpus, md.distributed, md.global_batch_size) == (2, "ddp", 10)
    assert extract_metadata(tmp_path, "python main.py --gpus 0,").num_gpus == 1


def test_environment_runners_and_poetry_scripts_reach_the_training_module(tmp_path: Path) -> None:
    """`poetry run yolo-train ...` is the `[tool.poetry.scripts]` entry `pkg.train:run`; `nice -n 5 uv run python
    ...` is the python command it wraps. A Darknet `.cfg` named by a default flag names a known detector."""
    train = (
        "import argparse\nimport torch\n"
        "def run():\n"
        "    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('-m', '--model', type=str, default='config/yolov3.cfg')\n"
        "    parser.add_argument('-e', '--epochs', type=int, default=300)\n"
        "    args = parser.parse_args()\n"
        "    for epoch in range(args.epochs):\n"
        "        pass\n"
    )
    pyproject = '[tool.poetry]\nname = "pkg"\n\n[tool.poetry.scripts]\nyolo-train = "pkg.train:run"\n'
    write(tmp_path, {"pyproject.toml": pyproject, "pkg/__init__.py": "", "pkg/train.py": train,
                     "config/yolov3.cfg": "[net]\nbatch=16\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "poetry run yolo-train --data config/coco.data")
    assert (md.epochs, md.num_gpus, md.model_type) == (300, 1, "cnn_detector")
    assert md.model_name == "yolov3" and md.params_millions == 61.9
    assert extract_metadata(tmp_path, "nice -n 5 uv run python pkg/train.py --epochs 5").epochs == 5


FABRIC_MAIN = """
import lightning as L
import torch
from lightning.fabric.strategies import FSDPStrategy
from model import GPT, GPTConfig

def main(devices: int = 4, data_dir: str = "data/shakespeare", epochs_from: int = 0):
    strategy = FSDPStrategy(auto_wrap_policy=None)
    fabric = L.Fabric(accelerator="cuda", devices=devices, precision="bf16-mixed", strategy=strategy)
    config = GPTConfig.from_name("pythia-160m")
    model = GPT(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    for epoch in range(epochs_from + resume_offset(), 3):
        pass

if __name__ == "__main__":
    from jsonargparse import CLI
    CLI(main)
"""


def test_fabric_settings_a_named_config_and_a_resumed_epoch_loop(tmp_path: Path) -> None:
    """Fabric(precision="bf16-mixed", strategy=FSDPStrategy(...), devices=) decide precision, sharding and GPUs
    (the CLI function's default or `--devices 2`); `GPTConfig.from_name("pythia-160m")` names a known shape; an
    epoch loop from an unknown resume point runs its stop's epochs on a fresh start."""
    write(tmp_path, {"train.py": FABRIC_MAIN, "model.py": "class GPTConfig:\n    pass\nclass GPT:\n    pass\n"})
    md = extract_metadata(tmp_path, "python train.py")
    assert (md.precision, md.distributed, md.num_gpus) == ("bf16", "fsdp", 4)
    assert md.model_name == "pythia-160m" and md.params_millions is not None and 140 < md.params_millions < 180
    assert md.epochs == 3 and md.learning_rate == 6e-4
    assert extract_metadata(tmp_path, "python train.py --devices 2").num_gpus == 2


FACTORY_MAIN = """
import argparse
import torch
from pkg.script_util import add_dict_to_argparser, args_to_dict, create_model_and_diffusion, model_defaults

def main():
    defaults = dict(lr=1e-4, batch_size=8, use_fp16=False)
    defaults.update(model_defaults())
    parser = argparse.ArgumentParser()
    add_dict_to_argparser(parser, defaults)
    args = parser.parse_args()
    model, diffusion = create_model_and_diffusion(**args_to_dict(args, model_defaults().keys()))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    if args.use_fp16:
        model.half()

if __name__ == "__main__":
    main()
"""
FACTORY_UTIL = """
import torch.nn as nn

def model_defaults():
    return dict(width=64, depth=2, learn_sigma=False)

def str2bool(v):
    return v.lower() in ("yes", "true", "1")

def add_dict_to_argparser(parser, default_dict):
    for k, v in default_dict.items():
        v_type = str2bool if isinstance(v, bool) else type(v)
        parser.add_argument(f"--{k}", default=v, type=v_type)

def args_to_dict(args, keys):
    return {k: getattr(args, k) for k in keys}

class TinyUNet(nn.Module):
    def __init__(self, width, depth, out_channels):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Conv2d(width, width, 3) for _ in range(depth)])
        self.out = nn.Conv2d(width, out_channels, 1)

def create_model(width, depth, learn_sigma):
    return TinyUNet(width, depth, 6 if learn_sigma else 3)

def create_model_and_diffusion(width, depth, learn_sigma):
    model = create_model(width, depth, learn_sigma)
    return model, None
"""


def test_a_model_a_factory_builds_from_a_dict_of_the_settings(tmp_path: Path) -> None:
    """`model, diffusion = create_model_and_diffusion(**args_to_dict(args, keys))`: the factories are followed to
    the class they build (named by it), and `{k: getattr(args, k) for k in keys}` carries the command line into the
    count; `--learn_sigma True` / `--use_fp16 True` through a str2bool type are booleans."""
    write(tmp_path, {"train.py": FACTORY_MAIN, "pkg/__init__.py": "", "pkg/script_util.py": FACTORY_UTIL})
    md = extract_metadata(tmp_path, "python train.py --width 32 --depth 3")
    assert md.model_name is not None and "TinyUNet" in md.model_name
    assert md.params_millions is not None and abs(md.params_millions * 1e6 - (3 * (32 * 32 * 9 + 32) + 32 * 3 + 3)) < 50
    md = extract_metadata(tmp_path, "python train.py --width 32 --depth 3 --learn_sigma True --use_fp16 True")
    assert md.params_millions is not None and abs(md.params_millions * 1e6 - (3 * (32 * 32 * 9 + 32) + 32 * 6 + 6)) < 50
    assert md.precision == "fp16"
