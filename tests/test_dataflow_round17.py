"""Values followed across calls, worker loops, step budgets and model parts (round 17's misses, generalised)."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_IMAGENET_EXAMPLE = """
import argparse, torch, torch.nn as nn, torch.multiprocessing as mp
import torchvision.models as models
p = argparse.ArgumentParser()
p.add_argument('-a', '--arch', default='resnet18')
p.add_argument('-b', '--batch-size', type=int, default=256)
p.add_argument('--lr', type=float, default=0.1)
p.add_argument('--world-size', type=int, default=-1)
p.add_argument('--dist-url', default='tcp://224.66.41.62:23456')
p.add_argument('--gpu', type=int, default=None)
p.add_argument('--multiprocessing-distributed', action='store_true')

def main():
    args = p.parse_args()
    if args.dist_url == "env://" and args.world_size == -1:
        args.world_size = int(os.environ["WORLD_SIZE"])
    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    ngpus_per_node = torch.cuda.device_count()
    if args.multiprocessing_distributed:
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        main_worker(args.gpu, ngpus_per_node, args)

def main_worker(gpu, ngpus_per_node, args):
    model = models.__dict__[args.arch]()
    if args.distributed:
        if args.gpu is not None:
            args.batch_size = int(args.batch_size / ngpus_per_node)
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        else:
            model = torch.nn.parallel.DistributedDataParallel(model)
    elif args.gpu is not None:
        model = model.cuda(args.gpu)
    else:
        model = torch.nn.DataParallel(model).cuda()
    optimizer = torch.optim.SGD(model.parameters(), args.lr)
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch_size)
    for epoch in range(90):
        for x, y in loader:
            optimizer.zero_grad(); model(x).sum().backward(); optimizer.step()

if __name__ == '__main__':
    main()
"""


def test_an_attribute_the_caller_sets_reaches_the_function_it_calls(tmp_path: Path) -> None:
    """``args.distributed`` is set in ``main()`` and read in ``main_worker(gpu, n, args)``: false for a one-GPU run,
    so the DDP arm (and its per-GPU batch split) is dead and the command's batch is the device's."""
    root = write(tmp_path, {"main.py": _IMAGENET_EXAMPLE})
    one = extract_metadata(root, "python main.py /data/imagenet -a resnet50 --gpu 0 -b 128")
    assert (one.batch_size_per_device, one.distributed, one.num_gpus) == (128, "single_gpu", 1)
    every = extract_metadata(root, "python main.py /data/imagenet -a resnet50 -b 256")  # no --gpu: DataParallel
    assert (every.batch_size_per_device, every.distributed) == (256, "dp")


_ONMT_LIKE = {
    "train.py": """
import argparse, yaml, torch

def train(opt):
    nb_gpu = len(opt.gpu_ranks)
    if opt.world_size > 1:
        mp = torch.multiprocessing.get_context("spawn")
        procs = []
        for device_id in range(nb_gpu):
            procs.append(mp.Process(target=run, args=(opt, device_id), daemon=False))
            procs[device_id].start()
        for p in procs:
            p.join()
    else:
        run(opt, 0)

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('-config')
    parser.add_argument('--world_size', type=int, default=1)
    parser.add_argument('--gpu_ranks', type=int, nargs='*', default=[])
    parser.add_argument('--train_steps', type=int, default=100000)
    opt = parser.parse_args()
    train(opt)

main()
""",
    "config/base.yml": "train_steps: 2000\nworld_size: 4\ngpu_ranks:\n- 0\n- 1\n- 2\n- 3\n",
    "config/one.yml": "train_steps: 2000\nworld_size: 1\ngpu_ranks:\n- 0\n",
}


def test_a_worker_process_per_counted_device_is_the_gpu_count(tmp_path: Path) -> None:
    """``for device_id in range(len(opt.gpu_ranks)): Process(target=…).start()``: one DDP process per listed device;
    the branch that starts them is dead when ``world_size`` is 1."""
    root = write(tmp_path, _ONMT_LIKE)
    four = extract_metadata(root, "python train.py -config config/base.yml")
    assert (four.num_gpus, four.distributed) == (4, "ddp")
    one = extract_metadata(root, "python train.py -config config/one.yml")
    assert (one.num_gpus, one.distributed) == (1, "single_gpu")


_ITERATION_LOOP = """
import argparse, math, torch
from torch.utils import data
p = argparse.ArgumentParser()
p.add_argument('--lr', type=float, default=1e-3)
args = p.parse_args()
cfg = {'batch_size': 24, 'epoch': 100}
net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=args.lr)
def train():
    dataset = Faces('./data/train/label.txt')
    epoch_size = math.ceil(len(dataset) / cfg['batch_size'])
    max_iter = cfg['epoch'] * epoch_size
    for iteration in range(0, max_iter):
        if iteration % epoch_size == 0:
            batch_iterator = iter(data.DataLoader(dataset, cfg['batch_size'], shuffle=True))
        images, targets = next(batch_iterator)
        optimizer.zero_grad()
        loss = net(images).sum()
        loss.backward()
        optimizer.step()
train()
"""


def test_a_step_budget_of_epochs_times_an_epochs_steps_gives_the_epochs(tmp_path: Path) -> None:
    """``max_iter = max_epoch * epoch_size`` with ``epoch_size = ceil(len(dataset) / batch)``: the loop runs
    ``max_epoch`` epochs (the step count depends on the data and stays unknown)."""
    root = write(tmp_path, {"train.py": _ITERATION_LOOP})
    meta = extract_metadata(root, "python train.py")
    assert (meta.epochs, meta.max_steps) == (100, None)


_HLB_LIKE = """
import math, torch, torch.nn as nn
hyp = {'misc': {'train_epochs': 12.1}, 'net': {'base_depth': 64}}
default_conv_kwargs = {'kernel_size': 3, 'padding': 'same', 'bias': False}

class Conv(nn.Conv2d):
    def __init__(self, *args, **kwargs):
        kwargs = {**default_conv_kwargs, **kwargs}
        super().__init__(*args, **kwargs)

class Block(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv1 = Conv(c_in, c_out)
        self.conv2 = Conv(c_out, c_out)

class SpeedyNet(nn.Module):
    def __init__(self, network_dict):
        super().__init__()
        self.net_dict = network_dict

    def forward(self, x):
        return self.net_dict['linear'](self.net_dict['block'](x).amax(dim=(2, 3)))

def make_net():
    network_dict = nn.ModuleDict({
        'block': Block(3, hyp['net']['base_depth']),
        'linear': nn.Linear(hyp['net']['base_depth'], 10, bias=False),
    })
    net = SpeedyNet(network_dict)
    net = net.to('cuda')
    return net

def main():
    net = make_net()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    for epoch in range(math.ceil(hyp['misc']['train_epochs'])):
        for x, y in batches:
            opt.zero_grad(); net(x).sum().backward(); opt.step()

main()
"""


def test_a_module_built_from_a_module_dict_holds_it_and_torch_layer_subclasses_count(tmp_path: Path) -> None:
    """``net = SpeedyNet(network_dict)`` after ``network_dict = nn.ModuleDict({...})``: the dict is a part, the class
    is the model, and the layers in the dict count; ``class Conv(nn.Conv2d)`` holds a 3x3 convolution's parameters
    (its defaults merged with ``{**a, **b}``); ``range(math.ceil(12.1))`` runs 12.1 epochs, the last partial."""
    root = write(tmp_path, {"main.py": _HLB_LIKE})
    meta = extract_metadata(root, "python main.py")
    assert meta.model_name == "SpeedyNet"
    conv = 3 * 64 * 9 + 64 * 64 * 9  # two bias-free 3x3 convolutions
    assert meta.params_millions is not None
    assert abs(meta.params_millions * 1e6 - (conv + 64 * 10)) < 1e3
    assert meta.epochs == 12.1


_DEFAULTS = {
    "modeling/net.py": """
import torch.nn as nn
class SegNet(nn.Module):
    def __init__(self, backbone='small', num_classes=21):
        super().__init__()
        width = 64 if backbone == 'small' else 128
        self.body = nn.Conv2d(3, width, 3)
        self.head = nn.Conv2d(width, num_classes, 1)
""",
    "train.py": """
import argparse, torch
from modeling.net import SegNet
p = argparse.ArgumentParser()
p.add_argument('--backbone', default='small')
p.add_argument('--training_dataset', default='./data/widerface/train/label.txt')
args = p.parse_args()

class Trainer:
    def __init__(self, args):
        # Adapted from the PyTorch ImageNet example
        self.loader, self.nclass = make_data_loader(args)
        model = SegNet(num_classes=self.nclass, backbone=args.backbone)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

Trainer(args)
""",
}


def test_an_argument_that_cannot_be_told_takes_the_constructors_default(tmp_path: Path) -> None:
    """``SegNet(num_classes=self.nclass, …)`` where the class count comes from a data loader: counted with the
    constructor's default for it rather than not at all; the dataset a data setting's path names comes before one a
    comment names."""
    root = write(tmp_path, _DEFAULTS)
    meta = extract_metadata(root, "python train.py --backbone small")
    assert meta.params_millions is not None
    assert abs(meta.params_millions * 1e6 - ((3 * 64 * 9 + 64) + (64 * 21 + 21))) < 100
    assert meta.dataset == "WIDER FACE"
