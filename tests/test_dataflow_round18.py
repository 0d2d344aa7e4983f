"""Options, configs, registries and data descriptions read as the code reads them (round 18's misses, generalised)."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_ARGPARSE = """
import argparse, torch
p = argparse.ArgumentParser()
p.add_argument('--batch-size', type=int, default=32)
p.add_argument('--learning-rate', type=float, default=0.1)
p.add_argument('--epochs', type=int, default=10)
p.add_argument('--mode', default='a')
p.set_defaults(epochs=20)
if p.parse_known_args()[0].mode == 'b':
    p.set_defaults(epochs=5)
args = p.parse_args()
model = torch.nn.Linear(10, 10)
opt = torch.optim.SGD(model.parameters(), lr=args.learning_rate)
loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size)
for epoch in range(args.epochs):
    for x in loader:
        opt.zero_grad(); model(x).sum().backward(); opt.step()
"""


def test_option_prefixes_and_unconditional_set_defaults_are_read_as_argparse_reads_them(tmp_path: Path) -> None:
    """``--batch 64`` is ``--batch-size 64`` (one option starts so); ``set_defaults(epochs=20)`` replaces the
    default where it always runs, one under an ``if`` does not; ``allow_abbrev=False`` turns prefixes off."""
    root = write(tmp_path / "a", {"train.py": _ARGPARSE})
    meta = extract_metadata(root, "python train.py --batch 64 --learning 0.5")
    assert (meta.batch_size_per_device, meta.learning_rate, meta.epochs) == (64, 0.5, 20)
    strict = write(
        tmp_path / "b", {"train.py": _ARGPARSE.replace("ArgumentParser()", "ArgumentParser(allow_abbrev=False)")}
    )
    assert extract_metadata(strict, "python train.py --batch 64").batch_size_per_device == 32


_YACS = {
    "config.py": """
from yacs.config import CfgNode as CN
_C = CN()
_C.DATA = CN()
_C.DATA.BATCH_SIZE = 128
_C.MODEL = CN()
_C.MODEL.ARCH = 'Net-L'
_C.TRAIN = CN()
_C.TRAIN.BASE_LR = 5e-4
_C.TRAIN.EPOCHS = 300
_C.TRAIN.ACCUMULATION_STEPS = 0
_C.AMP_OPT_LEVEL = ''

def update_config(config, args):
    config.defrost()
    if args.opts:
        config.merge_from_list(args.opts)
    if args.arch:
        config.MODEL.ARCH = args.arch
    if args.batch_size:
        config.DATA.BATCH_SIZE = args.batch_size
    if args.amp_opt_level:
        config.AMP_OPT_LEVEL = args.amp_opt_level
    config.freeze()

def get_config(args):
    config = _C.clone()
    update_config(config, args)
    return config
""",
    "main.py": """
import argparse, torch
import torch.distributed as dist
from config import get_config
try:
    from apex import amp
except ImportError:
    amp = None
p = argparse.ArgumentParser()
p.add_argument('--arch', type=str)
p.add_argument('--batch-size', type=int)
p.add_argument('--amp-opt-level', type=str, default='O0')
p.add_argument('--opts', default=None, nargs='+')
args, _ = p.parse_known_args()
config = get_config(args)
model = torch.nn.Linear(10, 10).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=config.TRAIN.BASE_LR)
if config.AMP_OPT_LEVEL != "O0":
    model, optimizer = amp.initialize(model, optimizer, opt_level=config.AMP_OPT_LEVEL)
model = torch.nn.parallel.DistributedDataParallel(model)
loader = torch.utils.data.DataLoader(ds, batch_size=config.DATA.BATCH_SIZE)
for epoch in range(config.TRAIN.EPOCHS):
    for x in loader:
        optimizer.zero_grad(); model(x).sum().backward(); optimizer.step()
""",
}


def test_arguments_a_config_function_copies_in_override_the_config_and_zero_accumulation_is_none(
    tmp_path: Path,
) -> None:
    """``if args.batch_size: config.DATA.BATCH_SIZE = args.batch_size`` (Swin's ``update_config``): the command's
    batch and AMP level win over the tree's defaults; ``ACCUMULATION_STEPS = 0`` means no accumulation."""
    root = write(tmp_path, _YACS)
    meta = extract_metadata(
        root, "torchrun --nproc_per_node 8 main.py --batch-size 32 --opts TRAIN.EPOCHS 100 TRAIN.BASE_LR 0.1"
    )
    assert (meta.batch_size_per_device, meta.global_batch_size, meta.epochs) == (32, 256, 100)
    assert (meta.learning_rate, meta.precision) == (0.1, "fp32")
    assert "apex" not in meta.framework


_REGISTRY = {
    "nets.py": """
import torch.nn as nn
class BlockNet(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Linear(width, width)

def create_a0():
    return BlockNet(64)

def create_b1():
    return BlockNet(256)

func_dict = {'BlockNet-A0': create_a0, 'BlockNet-B1': create_b1}

def create_by_name(name):
    return func_dict[name]()
""",
    "train.py": """
import argparse, torch
from nets import create_by_name
p = argparse.ArgumentParser()
p.add_argument('--arch', default='BlockNet-B1')
args = p.parse_args()
model = create_by_name(args.arch)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x in loader:
        opt.zero_grad(); model(x).sum().backward(); opt.step()
""",
}


def test_a_registry_key_that_extends_the_class_name_names_the_variant(tmp_path: Path) -> None:
    """``create_by_name("BlockNet-A0")`` builds a ``BlockNet``: the key says which one (and the count is its)."""
    meta = extract_metadata(write(tmp_path, _REGISTRY), "python train.py --arch BlockNet-A0")
    assert meta.model_name == "BlockNet-A0"
    assert meta.params_millions is not None and abs(meta.params_millions * 1e6 - (64 * 64 + 64)) < 10


_DETECTOR = {
    "configs/det_s.py": "model = dict(type='Det-S', backbone=dict(type='RepBackbone', width=32))\n",
    "det/models/backbone.py": "import torch.nn as nn\nclass RepBackbone(nn.Module):\n    pass\n",
    "data/dataset.yaml": "train: ../custom_dataset/images/train\nval: ../custom_dataset/images/val\nnc: 20\n",
    "tools/train.py": """
import argparse, torch
p = argparse.ArgumentParser()
p.add_argument('--data-path', default='./data/coco.yaml')
p.add_argument('--conf-file', default='./configs/det_n.py')
p.add_argument('--epochs', type=int, default=400)
args = p.parse_args()

class Trainer:
    def __init__(self, args, cfg):
        self.args = args

def main(args):
    if args.resume:
        args = argparse.Namespace(**yaml.safe_load(open('args.yaml')))
    trainer = Trainer(args, cfg)
    trainer.train()

main(args)
""",
}


def test_the_model_section_type_names_the_model_and_a_data_yaml_names_its_folder(tmp_path: Path) -> None:
    """``model.type`` (no class of the job: a builder function makes it) names the model around the backbone class
    the config also names; a YOLO-style ``data.yaml`` names the folder its splits live in; ``Trainer(args, cfg)``
    after ``args = argparse.Namespace(...)`` is not a model."""
    root = write(tmp_path, _DETECTOR)
    meta = extract_metadata(root, "python tools/train.py --conf configs/det_s.py --data data/dataset.yaml")
    assert meta.model_name == "Det-S (RepBackbone)"
    assert meta.dataset == "custom_dataset"


_FLAMINGO = {
    "train/train_utils.py": """
import torch
from contextlib import suppress

def get_autocast(precision):
    if precision == "amp":
        return torch.cuda.amp.autocast
    return suppress

def train_one_epoch(args, model, loader, optimizer):
    autocast = get_autocast(args.precision)
    for x in loader:
        with autocast():
            loss = model(x).sum()
        loss.backward(); optimizer.step(); optimizer.zero_grad()
""",
    "train/train.py": """
import argparse, torch
from train_utils import train_one_epoch
p = argparse.ArgumentParser()
p.add_argument('--lm_path', default='facebook/opt-1.3b')
p.add_argument('--precision', default='fp32', choices=['amp', 'fp32'])
p.add_argument('--laion_shards')
args = p.parse_args()
model = torch.nn.Linear(10, 10)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for epoch in range(10):
    train_one_epoch(args, model, loader, optimizer)
""",
}


def test_an_autocast_bound_by_the_code_is_not_torchs_and_model_paths_name_no_data(tmp_path: Path) -> None:
    """``autocast = get_autocast(args.precision)`` then ``with autocast():`` may be ``suppress`` (fp32 by default);
    ``--lm_path mpt-1b-redpajama-200b`` names what the model was trained on, not this job's data (its own
    ``--laion_shards`` option does)."""
    root = write(tmp_path, _FLAMINGO)
    meta = extract_metadata(root, "torchrun --nproc_per_node=4 train/train.py --lm_path org/mpt-1b-redpajama-200b")
    assert meta.precision == "fp32"
    assert meta.dataset == "LAION"


_VAE = {
    "models/vae.py": """
import torch.nn as nn
class VAE(nn.Module):
    def __init__(self, in_channels, latent_dim, hidden_dims=None):
        super().__init__()
        if hidden_dims is None:
            hidden_dims = [8, 16]
        self.enc = nn.Conv2d(in_channels, hidden_dims[0], 3)
        hidden_dims.reverse()
        self.final = nn.Conv2d(hidden_dims[-1], 3, 1)
""",
    "dataset.py": """
from pytorch_lightning import LightningDataModule
from torchvision.datasets import CelebA
class MyCelebA(CelebA):
    pass
# A second loader for another set: OxfordPets
class Faces(LightningDataModule):
    def setup(self, stage=None):
        self.train = MyCelebA(self.root, split='train')
""",
    "run.py": """
import torch
from pytorch_lightning import Trainer
from models.vae import VAE
from dataset import Faces
model = VAE(3, 16)
data = Faces()
Trainer(max_epochs=3).fit(model, datamodule=data)
""",
}


def test_list_mutations_shape_the_count_and_the_data_module_names_the_data(tmp_path: Path) -> None:
    """``hidden_dims.reverse()`` before the last layer is built: its input width is the reversed list's last
    (8, not 16); ``fit(..., datamodule=data)`` with ``data = Faces()`` whose class builds ``MyCelebA``: CelebA."""
    root = write(tmp_path, _VAE)
    meta = extract_metadata(root, "python run.py")
    assert meta.params_millions is not None
    assert abs(meta.params_millions * 1e6 - ((3 * 8 * 9 + 8) + (8 * 3 + 3))) < 5
    assert meta.dataset == "CelebA"


_SEQ2SEQ = """
import argparse, torch
from tqdm import tqdm
p = argparse.ArgumentParser()
p.add_argument('--train_steps', type=int, default=-1)
p.add_argument('--train_filename')
args = p.parse_args()
model = torch.nn.Linear(10, 10)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
bar = tqdm(range(args.train_steps), total=args.train_steps)
for step in bar:
    batch = next(loader)
    loss = model(batch).sum()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""


def test_a_step_loop_over_a_progress_bar_bound_before_it_is_the_step_budget(tmp_path: Path) -> None:
    """``bar = tqdm(range(train_steps))`` then ``for step in bar:`` stepping each pass: ``train_steps`` steps; the
    training file's folder names the data (``--train_filename …/CodeSearchNet/php/train.jsonl``)."""
    root = write(tmp_path, {"run.py": _SEQ2SEQ})
    meta = extract_metadata(
        root, "python run.py --train_steps 500 --train_filename ../data/CodeSearchNet/php/train.jsonl"
    )
    assert (meta.max_steps, meta.dataset) == (500, "php")


def test_a_model_registered_by_module_name_and_u2net_family(tmp_path: Path) -> None:
    """``--model cut`` read by a ``find_model_using_name`` registry: ``models/cut_model.py`` defines ``CUTModel``;
    U²-Net (``U2NET``) is a U-Net."""
    root = write(
        tmp_path / "a",
        {
            "options.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--model', default='cycle_gan')\n",
            "models/cut_model.py": "from .base_model import BaseModel\nclass CUTModel(BaseModel):\n    pass\n",
            "models/__init__.py": "import importlib\ndef create_model(opt):\n    return find_model_using_name(opt.model)(opt)\n",
            "train.py": "from options import p\nfrom models import create_model\nopt = p.parse_args()\nmodel = create_model(opt)\n",
        },
    )
    assert extract_metadata(root, "python train.py --model cut").model_name == "cut"
    u2 = write(
        tmp_path / "b",
        {
            "model/u2net.py": "import torch.nn as nn\nclass U2NET(nn.Module):\n    def __init__(self, i, o):\n"
            "        super().__init__()\n        self.c = nn.Conv2d(i, o, 3)\n",
            "u2net_train.py": "import torch\nfrom model.u2net import U2NET\nnet = U2NET(3, 1)\n"
            "optimizer = torch.optim.Adam(net.parameters(), lr=0.001)\n",
        },
    )
    assert extract_metadata(u2, "python u2net_train.py").model_type == "unet"


_POSE = {
    "experiments/w32.yaml": "GPUS: (0,1,2,3)\nTRAIN:\n  BATCH_SIZE_PER_GPU: 32\n  END_EPOCH: 210\n  LR: 0.001\n",
    "lib/config.py": """
from yacs.config import CfgNode as CN
_C = CN()
_C.GPUS = (0,)
_C.TRAIN = CN()
_C.TRAIN.BATCH_SIZE_PER_GPU = 32
_C.TRAIN.IMS_PER_BATCH = 1
_C.TRAIN.END_EPOCH = 140
_C.TRAIN.LR = 0.01
cfg = _C
""",
    "tools/train.py": """
import argparse, torch
from lib.config import cfg
p = argparse.ArgumentParser()
p.add_argument('--cfg', required=True)
args = p.parse_args()
cfg.merge_from_file(args.cfg)
model = torch.nn.Linear(10, 10)
model = torch.nn.DataParallel(model, device_ids=cfg.GPUS).cuda()
loader = torch.utils.data.DataLoader(ds, batch_size=cfg.TRAIN.BATCH_SIZE_PER_GPU * len(cfg.GPUS))
optimizer = torch.optim.Adam(model.parameters(), lr=cfg.TRAIN.LR)
for epoch in range(0, cfg.TRAIN.END_EPOCH):
    for x in loader:
        optimizer.zero_grad(); model(x).sum().backward(); optimizer.step()
""",
}


def test_dataparallel_over_listed_devices_counts_them_and_a_smaller_total_is_no_total(tmp_path: Path) -> None:
    """``DataParallel(model, device_ids=cfg.GPUS)`` with ``GPUS: (0,1,2,3)`` (yacs reads the string as a tuple):
    four GPUs in one process, 32 each, 128 in all; a default ``IMS_PER_BATCH = 1`` below the loader's batch is some
    other count, not the total."""
    meta = extract_metadata(write(tmp_path, _POSE), "python tools/train.py --cfg experiments/w32.yaml")
    assert (meta.num_gpus, meta.distributed) == (4, "dp")
    assert (meta.batch_size_per_device, meta.global_batch_size, meta.epochs) == (32, 128, 210)


_GAN = {
    "training/networks.py": "import torch\nclass Generator(torch.nn.Module):\n    pass\n"
    "class Discriminator(torch.nn.Module):\n    pass\n",
    "train.py": """
import click, dnnlib

@click.command()
@click.option('--data', type=str, required=True)
@click.option('--gpus', type=int, required=True)
@click.option('--batch', type=int, required=True)
def main(**kwargs):
    c = dnnlib.EasyDict()
    c.D_kwargs = dnnlib.EasyDict()
    c.G_kwargs = dnnlib.EasyDict()
    c.D_kwargs.class_name = 'training.networks.Discriminator'
    c.G_kwargs.class_name = 'training.networks.Generator'
    c.num_gpus = kwargs['gpus']
    # Example: --data ~/datasets/ffhq-1024x1024.zip
    launch(c)

main()
""",
    "rl/main.py": """
import argparse, torch
p = argparse.ArgumentParser()
p.add_argument('--game', default='space_invaders')
p.add_argument('--batch-size', type=int, default=32)
args = p.parse_args()
""",
}


def test_a_class_path_names_the_network_and_data_options_name_the_data(tmp_path: Path) -> None:
    """``G_kwargs.class_name = "training.networks.Generator"`` (dnnlib's ``construct_class_by_name``) names the
    generator, not the discriminator; the command's ``--data`` path names the data before a comment does; a
    reinforcement-learning job's ``--game`` is what it trains on; a generic folder (``images/``) names nothing."""
    root = write(tmp_path, _GAN)
    meta = extract_metadata(root, "python train.py --data ~/datasets/afhq.zip --gpus 8 --batch 32")
    assert (meta.model_name, meta.dataset) == ("Generator", "afhq.zip")
    assert extract_metadata(root, "python train.py --data images/ --gpus 1 --batch 8").dataset == "FFHQ"
    assert extract_metadata(root / "rl", "python main.py").dataset == "space_invaders"


_AGENT = {
    "model.py": """
import torch.nn as nn
class DQN(nn.Module):
    def __init__(self, args, action_space):
        super().__init__()
        self.convs = nn.Sequential(nn.Conv2d(4, 32, 8, stride=4), nn.ReLU())
        self.fc = nn.Linear(3136, action_space)
""",
    "agent.py": """
import torch.optim as optim
from model import DQN
class Agent:
    def __init__(self, args, env):
        self.online_net = DQN(args, env.action_space()).to(device=args.device)
        self.target_net = DQN(args, env.action_space())
        self.optimiser = optim.Adam(self.online_net.parameters(), lr=args.learning_rate, eps=args.adam_eps)
""",
    "main.py": """
import argparse
from agent import Agent
p = argparse.ArgumentParser()
p.add_argument('--model_name', default='run')
p.add_argument('--learning-rate', type=float, default=6.25e-5)
args = p.parse_args()
log_path = os.path.join("logs", args.model_name)
print("Training model named:", args.model_name)
dqn = Agent(args, env)
""",
}


def test_the_network_a_job_class_trains_is_the_model_and_a_run_name_is_no_model(tmp_path: Path) -> None:
    """``dqn = Agent(args, env)`` whose ``__init__`` builds ``self.online_net = DQN(...)`` and an optimizer over its
    parameters: the model is the DQN (a CNN); ``--model_name my_run`` read only to name a log folder (and printed)
    is the run's name, not a checkpoint."""
    meta = extract_metadata(write(tmp_path, _AGENT), "python main.py --model_name my_run")
    assert (meta.model_name, meta.model_type) == ("DQN", "cnn")
