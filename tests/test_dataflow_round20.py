"""Resumable loops, device tests, re-exported factories, chosen arms and auxiliary loaders (round 20's misses)."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_YOLOP_LIKE = {
    "lib/models/__init__.py": "from .net import get_net\n",
    "lib/models/net.py": """
import torch.nn as nn
class MCnet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.body = nn.Conv2d(3, 8, 3)

def get_net(cfg):
    model = MCnet(cfg)
    return model
""",
    "lib/config.py": "from yacs.config import CfgNode as CN\n_C = CN()\n_C.GPUS = (0, 1)\ncfg = _C\n",
    "lib/core/function.py": """
from torch.cuda import amp
def train(cfg, loader, model, optimizer, scaler, device):
    for x in loader:
        with amp.autocast(enabled=device.type != 'cpu'):
            loss = model(x).sum()
        scaler.scale(loss).backward(); scaler.step(optimizer); optimizer.zero_grad()
""",
    "tools/train.py": """
import argparse, os, torch
from torch.nn.parallel import DistributedDataParallel as DDP
from lib.models import get_net
from lib.core.function import train
from lib.config import cfg
p = argparse.ArgumentParser()
p.add_argument('--local_rank', type=int, default=-1)
p.add_argument('--resume', action='store_true')
args = p.parse_args()
rank = int(os.environ['RANK']) if 'RANK' in os.environ else -1
device = torch.device('cuda')
model = get_net(None).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
begin_epoch = 0
if args.resume:
    begin_epoch = torch.load('last.pth')['epoch']
if rank == -1 and torch.cuda.device_count() > 1:
    model = torch.nn.DataParallel(model, device_ids=cfg.GPUS)
if rank != -1:
    model = DDP(model, device_ids=[args.local_rank])
loader = torch.utils.data.DataLoader(ds, batch_size=24 * len(cfg.GPUS))
for epoch in range(begin_epoch + 1, 240 + 1):
    train(None, loader, model, optimizer, scaler, device)
""",
}


def test_a_resumable_loop_a_device_test_and_a_re_exported_factory(tmp_path: Path) -> None:
    """``range(begin_epoch + 1, 240 + 1)`` runs 240 epochs on a fresh run; ``autocast(enabled=device.type != 'cpu')``
    is on for a GPU job; ``get_net`` re-exported by ``lib/models/__init__.py`` builds an ``MCnet``; the DDP arm for
    ``rank != -1`` needs a launcher, so plain ``python`` runs DataParallel over the two listed GPUs."""
    meta = extract_metadata(write(tmp_path, _YOLOP_LIKE), "python tools/train.py")
    assert (meta.epochs, meta.precision, meta.model_name) == (240, "fp16", "MCnet")
    assert (meta.distributed, meta.num_gpus) == ("dp", 2)


_SOLVER = {
    "network.py": """
import torch.nn as nn
class U_Net(nn.Module):
    def __init__(self, img_ch=3, output_ch=1):
        super().__init__()
        self.c = nn.Conv2d(img_ch, 16, 3)
        self.o = nn.Conv2d(16, output_ch, 1)

class AttU_Net(nn.Module):
    def __init__(self, img_ch=3, output_ch=1):
        super().__init__()
        self.c = nn.Conv2d(img_ch, 32, 3)
        self.o = nn.Conv2d(32, output_ch, 1)
""",
    "solver.py": """
import torch.optim as optim
from network import U_Net, AttU_Net
class Solver:
    def __init__(self, config):
        self.model_type = config.model_type
        self.lr = config.lr
        self.build_model()

    def build_model(self):
        if self.model_type == 'U_Net':
            self.unet = U_Net(img_ch=3, output_ch=1)
        elif self.model_type == 'AttU_Net':
            self.unet = AttU_Net(img_ch=3, output_ch=1)
        self.optimizer = optim.Adam(list(self.unet.parameters()), self.lr)
""",
    "main.py": """
import argparse
from solver import Solver
p = argparse.ArgumentParser()
p.add_argument('--model_type', default='U_Net')
p.add_argument('--lr', type=float, default=2e-4)
config = p.parse_args()
solver = Solver(config)
""",
}


def test_the_arm_a_job_class_takes_builds_the_model_it_counts(tmp_path: Path) -> None:
    """``Solver`` copies ``config.model_type`` and builds ``AttU_Net`` in the ``elif`` arm the command selects (not the
    first arm's ``U_Net``); its literal arguments let it be counted; a U_Net-family name is a U-Net."""
    meta = extract_metadata(write(tmp_path, _SOLVER), "python main.py --model_type AttU_Net")
    assert (meta.model_name, meta.model_type) == ("AttU_Net", "unet")
    assert meta.params_millions is not None
    assert abs(meta.params_millions * 1e6 - ((3 * 32 * 9 + 32) + (32 + 1))) < 5


_FIXMATCH_LIKE = """
import argparse, math, torch
from torch.utils.data import DataLoader

class ModelEMA(object):
    def __init__(self, args, model, decay):
        self.ema = model

def main():
    p = argparse.ArgumentParser()
    p.add_argument('--total-steps', default=2**20, type=int)
    p.add_argument('--eval-step', default=1024, type=int)
    p.add_argument('--batch-size', default=64, type=int)
    p.add_argument('--mu', default=7, type=int)
    p.add_argument('--start-epoch', default=0, type=int)
    p.add_argument('--data_dir', default='../Market/pytorch')
    args = p.parse_args()
    model = WideResNet(28, 2)
    ema_model = ModelEMA(args, model, 0.999)
    labeled_loader = DataLoader(labeled, batch_size=args.batch_size)
    unlabeled_loader = DataLoader(unlabeled, batch_size=args.batch_size * args.mu)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.03)
    args.epochs = math.ceil(args.total_steps / args.eval_step)
    train(args, labeled_loader, unlabeled_loader, model, optimizer)

def train(args, labeled_loader, unlabeled_loader, model, optimizer):
    for epoch in range(args.start_epoch, args.epochs):
        for batch_idx in range(args.eval_step):
            loss = model(next(labeled_loader)).sum()
            loss.backward()
            optimizer.step()
            model.zero_grad()

main()
"""


def test_the_labelled_batch_an_epoch_of_steps_an_ema_copy_and_a_default_data_folder(tmp_path: Path) -> None:
    """The plain ``batch_size=args.batch_size`` loader, not the unlabelled ``args.batch_size * args.mu`` one; the
    inner ``range(eval_step)`` loop is one epoch's steps, the outer loop's ``ceil(2**20 / 1024)`` the epochs;
    ``ModelEMA`` copies the model, it is not the model; the default ``../Market/pytorch`` names the data folder."""
    meta = extract_metadata(write(tmp_path, {"train.py": _FIXMATCH_LIKE}), "python train.py")
    assert (meta.batch_size_per_device, meta.epochs, meta.max_steps) == (64, 1024, None)
    assert meta.model_name != "ModelEMA"
    assert meta.dataset == "Market"


def test_a_basicsr_data_root_in_the_options_file_names_its_folder(tmp_path: Path) -> None:
    """``datasets.train.dataroot_gt: ./Deraining/Datasets/train/Rain13K/target`` in the options YAML: the data is
    the folder past the split and role folders (Rain13K)."""
    root = write(
        tmp_path,
        {
            "options/train.yml": "datasets:\n  train:\n    name: TrainSet\n"
            "    dataroot_gt: ./Deraining/Datasets/train/Rain13K/target\n"
            "    dataroot_lq: ./Deraining/Datasets/train/Rain13K/input\n",
            "basicsr/train.py": "import argparse, yaml\np = argparse.ArgumentParser()\np.add_argument('-opt')\n"
            "args = p.parse_args()\nopt = yaml.safe_load(open(args.opt))\n",
        },
    )
    assert extract_metadata(root, "python basicsr/train.py -opt options/train.yml").dataset == "Rain13K"


_HRNET_CLS = {
    "experiments/w18.yaml": "GPUS: (0,1,2,3)\nTRAIN:\n  BATCH_SIZE_PER_GPU: 32\n  END_EPOCH: 100\n",
    "lib/config.py": "from yacs.config import CfgNode as CN\n_C = CN()\n_C.GPUS = (0,)\n_C.TRAIN = CN()\n"
    "_C.TRAIN.BATCH_SIZE_PER_GPU = 16\n_C.TRAIN.END_EPOCH = 140\nconfig = _C\n",
    "tools/train.py": """
import argparse, torch
from lib.config import config
p = argparse.ArgumentParser()
p.add_argument('--cfg', required=True)
args = p.parse_args()
config.merge_from_file(args.cfg)
model = torch.nn.Linear(4, 4)
gpus = list(config.GPUS)
model = torch.nn.DataParallel(model, device_ids=gpus).cuda()
loader = torch.utils.data.DataLoader(ds, batch_size=config.TRAIN.BATCH_SIZE_PER_GPU * len(gpus))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(0, config.TRAIN.END_EPOCH):
    for x in loader:
        optimizer.zero_grad(); model(x).sum().backward(); optimizer.step()
""",
    "dp_all.py": """
import torch
model = torch.nn.DataParallel(torch.nn.Linear(4, 4)).cuda()
loader = torch.utils.data.DataLoader(ds, batch_size=64)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(3):
    for x in loader:
        optimizer.zero_grad(); model(x).sum().backward(); optimizer.step()
""",
}


def test_a_per_gpu_batch_times_the_listed_gpus_and_an_unknown_gpu_count_stays_dataparallel(tmp_path: Path) -> None:
    """``gpus = list(config.GPUS)`` and a loader of ``BATCH_SIZE_PER_GPU * len(gpus)``: 32 per GPU, 128 in all, over
    four GPUs; ``DataParallel(model)`` where nothing says how many GPUs is DataParallel, not a one-GPU job."""
    root = write(tmp_path, _HRNET_CLS)
    meta = extract_metadata(root, "python tools/train.py --cfg experiments/w18.yaml")
    assert (meta.batch_size_per_device, meta.global_batch_size, meta.num_gpus, meta.distributed) == (32, 128, 4, "dp")
    assert extract_metadata(root, "python dp_all.py").distributed == "dp"


def test_a_dataparallel_wrap_for_several_gpus_is_off_on_the_one_gpu_stated(tmp_path: Path) -> None:
    """``if len(opt.gpu_ids) > 1: model = DataParallel(...)`` with ``--gpu_ids 0`` never wraps: one GPU, no data
    parallelism; the same wrap without the test is DataParallel even on one GPU."""
    job = (
        "import argparse, torch\np = argparse.ArgumentParser()\np.add_argument('--gpu_ids', default='0')\n"
        "opt = p.parse_args()\nmodel = torch.nn.Linear(4, 4)\n{wrap}"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    )
    guarded = "if len(opt.gpu_ids) > 1:\n    model = torch.nn.DataParallel(model)\n"
    root = write(tmp_path / "a", {"train.py": job.format(wrap=guarded)})
    assert extract_metadata(root, "python train.py --gpu_ids 0").distributed == "single_gpu"
    plain = write(tmp_path / "b", {"train.py": job.format(wrap="model = torch.nn.DataParallel(model)\n")})
    assert extract_metadata(plain, "python train.py --gpu_ids 0").distributed == "dp"


def test_the_model_built_in_the_arm_the_settings_select_and_a_lower_case_class(tmp_path: Path) -> None:
    """``if args.sparse: model = SpGAT(...) else: model = GAT(...)`` with ``--sparse`` off builds the ``GAT``;
    ``model = ft_net(...)``, a class of the job's named in lower case, is the model (not the ``PCB`` of an arm
    ``--PCB`` rules out)."""
    layers = (
        "import torch.nn as nn\nclass GAT(nn.Module):\n    pass\nclass SpGAT(nn.Module):\n    pass\n"
        "class ft_net(nn.Module):\n    pass\nclass PCB(nn.Module):\n    pass\n"
    )
    job = (
        "import argparse, torch\nfrom layers import GAT, SpGAT, ft_net, PCB\np = argparse.ArgumentParser()\n"
        "p.add_argument('--sparse', action='store_true')\np.add_argument('--PCB', action='store_true')\n"
        "args = p.parse_args()\n{build}optimizer = torch.optim.Adam(model.parameters(), lr=0.005)\n"
    )
    gat = "if args.sparse:\n    model = SpGAT(nfeat=8)\nelse:\n    model = GAT(nfeat=8)\n"
    root = write(tmp_path / "a", {"layers.py": layers, "train.py": job.format(build=gat)})
    assert extract_metadata(root, "python train.py").model_name == "GAT"
    assert extract_metadata(root, "python train.py --sparse").model_name == "SpGAT"
    reid = "model = ft_net(751)\nif args.PCB:\n    model = PCB(751)\n"
    root = write(tmp_path / "b", {"layers.py": layers, "train.py": job.format(build=reid)})
    assert extract_metadata(root, "python train.py").model_name == "ft_net"
