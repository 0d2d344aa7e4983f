"""Round 44's misses, as mechanisms: absl / ``tf.app.flags`` definitions, TensorFlow 1 optimizers, INI files read by
configparser, a parser an imported class builds, parameter groups with their own rates, a device list built with
``range``, the shell script's command that trains, apex's DDP behind an alias, and a resume point read from a
checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write


def test_tensorflow_flags_and_a_tf1_optimizer(tmp_path: Path) -> None:
    """DCGAN-tensorflow: `flags.DEFINE_integer("batch_size", 64, …)` and friends are the job's options (the command
    overrides them, `--train` sets a boolean flag); `tf.train.AdamOptimizer(config.learning_rate, beta1=…)` takes the
    rate first."""
    write(
        tmp_path,
        {
            "main.py": """
import tensorflow as tf
from model import DCGAN
flags = tf.app.flags
flags.DEFINE_integer("epoch", 25, "Epoch to train [25]")
flags.DEFINE_float("learning_rate", 0.0002, "Learning rate of for adam [0.0002]")
flags.DEFINE_integer("batch_size", 64, "The size of batch images [64]")
flags.DEFINE_string("dataset", "celebA", "The name of dataset [celebA, mnist, lsun]")
flags.DEFINE_boolean("train", False, "True for training, False for testing [False]")
FLAGS = flags.FLAGS
def main(_):
    with tf.Session() as sess:
        dcgan = DCGAN(sess, batch_size=FLAGS.batch_size, dataset_name=FLAGS.dataset)
        if FLAGS.train:
            dcgan.train(FLAGS)
if __name__ == '__main__':
    tf.app.run()
""",
            "model.py": """
import tensorflow as tf
class DCGAN(object):
    def __init__(self, sess, batch_size=64, dataset_name='default'):
        self.batch_size = batch_size
    def train(self, config):
        d_optim = tf.train.AdamOptimizer(config.learning_rate, beta1=0.5).minimize(self.d_loss)
""",
        },
    )
    meta = extract_metadata(tmp_path, "python main.py --dataset mnist --batch_size=32 --train")
    assert meta.global_batch_size == 32
    assert meta.learning_rate == pytest.approx(2e-4)
    assert meta.dataset == "MNIST"


def test_an_ini_file_read_by_configparser(tmp_path: Path) -> None:
    """cnn-lstm-bilstm…-in-pytorch: `--config ./Config/config.cfg` is an INI file whose `[Train]` and `[Optimizer]`
    sections hold the batch, the epochs and the rate (a class reads them with `getint('Train', 'batch_size')`)."""
    write(
        tmp_path,
        {
            "Config/config.cfg": (
                "[Model]\nBiGRU = True\nembed_dim = 300\n\n[Optimizer]\nlearning_rate = 0.001\nAdam = True\n\n"
                "[Train]\nepochs = 500\nbatch_size = 16\n"
            ),
            "main.py": """
import argparse
import torch
from config import Configurable
parser = argparse.ArgumentParser()
parser.add_argument('--config_file', default='./Config/config.cfg')
args = parser.parse_args()
config = Configurable(args.config_file)
model = torch.nn.GRU(config.embed_dim, 300, bidirectional=True)
optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
loader = torch.utils.data.DataLoader(data, batch_size=config.batch_size, shuffle=True)
for epoch in range(1, config.epochs + 1):
    for x in loader:
        loss = model(x)[0].sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            "config.py": """
from configparser import ConfigParser
class Configurable(object):
    def __init__(self, config_file):
        self._config = ConfigParser()
        self._config.read(config_file)
    @property
    def batch_size(self):
        return self._config.getint('Train', 'batch_size')
""",
        },
    )
    meta = extract_metadata(tmp_path, "python main.py --config ./Config/config.cfg")
    assert (meta.global_batch_size, meta.epochs, meta.learning_rate) == (16, 500, 0.001)


def test_a_parser_an_imported_class_builds(tmp_path: Path) -> None:
    """Kyubyong's transformer: `hparams = Hparams(); parser = hparams.parser; hp = parser.parse_args()` with
    `class Hparams: parser = argparse.ArgumentParser(); parser.add_argument('--batch_size', default=128, …)` in
    `hparams.py`; the checkpoints it writes are named for IWSLT 2016, its data."""
    write(
        tmp_path,
        {
            "hparams.py": """
import argparse
class Hparams:
    parser = argparse.ArgumentParser()
    parser.add_argument('--train1', default='iwslt2016/segmented/train.de.bpe')
    parser.add_argument('--batch_size', default=128, type=int)
    parser.add_argument('--num_epochs', default=20, type=int)
""",
            "train.py": """
import tensorflow as tf
from hparams import Hparams
hparams = Hparams()
parser = hparams.parser
hp = parser.parse_args()
total_steps = hp.num_epochs * 100
with tf.Session() as sess:
    for i in range(total_steps):
        sess.run(train_op)
        model_output = "iwslt2016_E%02d" % (i // 100)
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py --batch_size 256")
    assert meta.global_batch_size == 256
    assert meta.dataset == "IWSLT 2016"


def test_parameter_groups_with_their_own_rates_over_a_listed_device_range(tmp_path: Path) -> None:
    """EMANet: `SGD(params=[{'params': …, 'lr': 1 * settings.LR}, {…, 'lr': 2 * settings.LR}])` trains at the first
    group's rate; `DataParallel(net, device_ids=settings.DEVICES)` with `DEVICES = list(range(0, 4))`: four GPUs."""
    write(
        tmp_path,
        {
            "settings.py": "BATCH_SIZE = 16\nLR = 9e-3\nDEVICES = list(range(0, 4))\n",
            "train.py": """
import torch
from torch.nn import DataParallel
from torch.optim import SGD
from torch.utils.data import DataLoader
import settings
net = torch.nn.Conv2d(3, 21, 1).cuda()
opt = SGD(params=[{'params': net.weight, 'lr': 1 * settings.LR}, {'params': net.bias, 'lr': 2 * settings.LR}],
          momentum=0.9)
net = DataParallel(net, device_ids=settings.DEVICES)
loader = DataLoader(dataset, batch_size=settings.BATCH_SIZE, shuffle=True)
for image, label in loader:
    loss = net(image).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.learning_rate == pytest.approx(9e-3)
    assert (meta.distributed, meta.num_gpus) == ("dp", 4)


def test_the_shell_scripts_command_that_trains_and_apex_ddp_behind_an_alias(tmp_path: Path) -> None:
    """Glow-TTS: `train_ddi.sh` runs `python init.py …` (a data-dependent initialisation: no backward pass, no
    optimizer step) and then `python train.py …`, which spawns one process per GPU (`mp.spawn`) around apex's
    `DistributedDataParallel` imported `as DDP`; `epoch_str = 1`, and a `try:` that resumes from a checkpoint
    rebinds it, so a fresh run trains epochs 1 … N."""
    write(
        tmp_path,
        {
            "train_ddi.sh": "config=$1\nmodeldir=$2\n\npython init.py -c $config -m $modeldir\n"
            "python train.py -c $config -m $modeldir\n",
            "init.py": """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument('-c', '--config')
parser.add_argument('-m', '--model')
args = parser.parse_args()
generator = torch.nn.Linear(4, 4)
generator.train()
torch.save(generator.state_dict(), 'ddi_G.pth')
""",
            "train.py": """
import argparse
import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader
from apex.parallel import DistributedDataParallel as DDP
def main():
    n_gpus = torch.cuda.device_count()
    mp.spawn(train_and_eval, nprocs=n_gpus, args=(n_gpus,))
def train_and_eval(rank, n_gpus):
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    generator = torch.nn.Linear(4, 4).cuda(rank)
    optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
    generator = DDP(generator)
    epoch_str = 1
    try:
        _, _, epoch_str = load_checkpoint('G_latest.pth', generator, optimizer)
        epoch_str += 1
    except Exception:
        pass
    for epoch in range(epoch_str, 100 + 1):
        for x in loader:
            loss = generator(x).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
if __name__ == "__main__":
    main()
""",
        },
    )
    meta = extract_metadata(tmp_path, "sh train_ddi.sh configs/base.json base")
    assert meta.distributed == "ddp"
    assert meta.epochs == 100
