"""A model handed to a training function, a GAN whose critic's optimizer comes first, a pyramid of layers built in a
`while` loop, a vocabulary sized by `string.printable`, an RNN's positional layer count, a TF-style `HParams` settings
object, an optimizer that unpacks its settings, a repeating data iterator's epoch counter, a data file named by its
default while the script's loader names the dataset, and next-token targets (round 35's misses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write


def test_a_model_handed_to_a_training_function_is_the_model(tmp_path: Path) -> None:
    """cnn-text-classification: `cnn = model.CNN_Text(args)` in the entry, `train.train(train_iter, dev_iter, cnn,
    args)`, and `train()` builds `Adadelta(model.parameters(), …)` over its third parameter: the model is CNN_Text,
    whatever the entry names its variable."""
    write(
        tmp_path,
        {
            "model.py": """
import torch.nn as nn
class CNN_Text(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.embed = nn.Embedding(100, 16)
        self.convs = nn.ModuleList([nn.Conv2d(1, 8, (k, 16)) for k in (3, 4, 5)])
        self.fc1 = nn.Linear(24, 2)
""",
            "train.py": """
import torch
def train(train_iter, dev_iter, model, args):
    optimizer = torch.optim.Adadelta(model.parameters(), lr=args.lr)
    for epoch in range(1, args.epochs + 1):
        for batch in train_iter:
            optimizer.zero_grad()
            loss = model(batch).sum()
            loss.backward()
            optimizer.step()
""",
            "main.py": """
import argparse
import model
import train
parser = argparse.ArgumentParser()
parser.add_argument('-lr', type=float, default=0.001)
parser.add_argument('-epochs', type=int, default=256)
args = parser.parse_args()
cnn = model.CNN_Text(args)
train.train(None, None, cnn, args)
""",
        },
    )
    meta = extract_metadata(tmp_path, "python main.py -lr 1.0")
    assert meta.model_name == "CNN_Text"
    assert meta.model_type == "cnn"
    assert meta.params_millions == pytest.approx((1600 + 8 * 16 * 12 + 24 + 50) / 1e6, rel=0.01)


_DCGAN = """
import torch.nn as nn
class DCGAN_D(nn.Module):
    def __init__(self, isize, nc, ndf):
        super().__init__()
        main = nn.Sequential()
        main.add_module('initial', nn.Conv2d(nc, ndf, 4, 2, 1, bias=False))
        csize, cndf = isize / 2, ndf
        while csize > 4:
            main.add_module('pyramid{0}'.format(cndf), nn.Conv2d(cndf, cndf * 2, 4, 2, 1, bias=False))
            cndf = cndf * 2
            csize = csize / 2
        main.add_module('final', nn.Conv2d(cndf, 1, 4, 1, 0, bias=False))
        self.main = main
class DCGAN_G(nn.Module):
    def __init__(self, isize, nz, nc, ngf):
        super().__init__()
        cngf, tisize = ngf // 2, 4
        while tisize != isize:
            cngf = cngf * 2
            tisize = tisize * 2
        main = nn.Sequential()
        main.add_module('initial', nn.ConvTranspose2d(nz, cngf, 4, 1, 0, bias=False))
        csize = 4
        while csize < isize // 2:
            main.add_module('pyramid{0}'.format(cngf), nn.ConvTranspose2d(cngf, cngf // 2, 4, 2, 1, bias=False))
            cngf = cngf // 2
            csize = csize * 2
        main.add_module('final', nn.ConvTranspose2d(cngf, nc, 4, 2, 1, bias=False))
        self.main = main
"""
_WGAN = """
import torch
import torch.optim as optim
import dcgan
netG = dcgan.DCGAN_G(64, 100, 3, 64)
netD = dcgan.DCGAN_D(64, 3, 64)
optimizerD = optim.RMSprop(netD.parameters(), lr=5e-5)
optimizerG = optim.RMSprop(netG.parameters(), lr=5e-5)
for epoch in range(25):
    for data in []:
        errD_real = netD(data)
        fake = netG(torch.randn(64, 100, 1, 1)).detach()
        errD_fake = netD(fake)
        optimizerD.step()
        fake = netG(torch.randn(64, 100, 1, 1))
        errG = netD(fake)
        errG.backward()
        optimizerG.step()
"""


def _dcgan_counts() -> tuple[int, int]:
    """Both networks' parameters at 64 pixels, 100 latent channels, 3 colours and width 64, written out."""
    critic = 3 * 64 * 16 + 64 * 128 * 16 + 128 * 256 * 16 + 256 * 512 * 16 + 512 * 16
    generator = 100 * 512 * 16 + 512 * 256 * 16 + 256 * 128 * 16 + 128 * 64 * 16 + 64 * 3 * 16
    return generator, critic


def test_a_critic_handed_the_generators_output_is_not_the_model(tmp_path: Path) -> None:
    """WassersteinGAN builds the critic's optimizer first; the critic is handed the generator's output (`fake =
    netG(noise); netD(fake)`), the generator never the critic's: the model is the generator, whose pyramid of layers
    is built in `while` loops (counted as they run)."""
    write(tmp_path, {"dcgan.py": _DCGAN, "main.py": _WGAN})
    meta = extract_metadata(tmp_path, "python main.py")
    generator, _ = _dcgan_counts()
    assert meta.model_name == "DCGAN_G"
    assert meta.params_millions == pytest.approx(generator / 1e6, rel=0.02)
    captioning = (
        _WGAN.replace("errD_real = netD(data)", "scores = netD(netG(data), data)")
        .replace("errD_fake = netD(fake)", "")
        .replace("errG = netD(fake)", "errG = netD(fake, data)")
    )
    write(tmp_path / "c", {"dcgan.py": _DCGAN, "main.py": captioning})
    assert extract_metadata(tmp_path / "c", "python main.py").model_name == "DCGAN_D"  # (a decoder over an encoder:
    # never handed data alone, it judges nothing; the first optimizer's module stays the model)


def test_a_while_loop_builds_its_layers_and_an_unknown_bound_counts_nothing(tmp_path: Path) -> None:
    """The critic alone, trained alone: its `while csize > 4` pyramid runs three times at 64 pixels; with the image
    size unknown, no count is made rather than a count of the layers outside the loop."""
    main = """
import torch.optim as optim
import dcgan
netD = dcgan.DCGAN_D(64, 3, 64)
optimizerD = optim.RMSprop(netD.parameters(), lr=5e-5)
"""
    write(tmp_path, {"dcgan.py": _DCGAN, "main.py": main})
    _, critic = _dcgan_counts()
    assert extract_metadata(tmp_path, "python main.py").params_millions == pytest.approx(critic / 1e6, rel=0.02)
    unknown = main.replace("DCGAN_D(64, 3, 64)", "DCGAN_D(int(open('size.txt').read()), 3, 64)")
    write(tmp_path / "u", {"dcgan.py": _DCGAN, "main.py": unknown})
    assert extract_metadata(tmp_path / "u", "python main.py").params_millions is None


def test_a_vocabulary_of_printable_characters_and_a_positional_layer_count(tmp_path: Path) -> None:
    """char-rnn.pytorch: `n_characters = len(string.printable)` (100) sizes the embedding and decoder, and
    `nn.GRU(hidden, hidden, n_layers)` stacks two layers given by position; inputs `chunk[:-1]` against targets
    `chunk[1:]` are next-character prediction: language modelling."""
    write(
        tmp_path,
        {
            "train.py": """
import string
import torch
import torch.nn as nn
all_characters = string.printable
n_characters = len(all_characters)
class CharRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size, n_layers=1):
        super().__init__()
        self.encoder = nn.Embedding(input_size, hidden_size)
        self.rnn = nn.GRU(hidden_size, hidden_size, n_layers)
        self.decoder = nn.Linear(hidden_size, output_size)
def random_training_set(chunk):
    inp = chunk[:-1]
    target = chunk[1:]
    return inp, target
decoder = CharRNN(n_characters, 100, n_characters, n_layers=2)
decoder_optimizer = torch.optim.Adam(decoder.parameters(), lr=0.01)
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py shakespeare.txt")
    gru = 2 * 3 * (100 * 200 + 200)
    assert meta.params_millions == pytest.approx((100 * 100 + gru + 100 * 100 + 100) / 1e6, rel=0.02)
    assert meta.model_type == "rnn"
    assert meta.task == "language_modeling"


def test_hparams_settings_object_its_parse_overrides_and_an_unpacked_optimizer_dict(tmp_path: Path) -> None:
    """wavenet_vocoder: `from hparams import hparams`, a module-level `HParams(batch_size=8, optimizer_params={"lr":
    1e-3}, max_train_steps=…)` (whose class stores its keywords through `six.iteritems`), overridden by
    `hparams.parse(args["--hparams"])`; `Optimizer = getattr(optim, hparams.optimizer)` then
    `Optimizer(model.parameters(), **hparams.optimizer_params)`."""
    write(
        tmp_path,
        {
            "hparam.py": """
import six
class HParams(object):
    def __init__(self, **kwargs):
        for name, value in six.iteritems(kwargs):
            setattr(self, name, value)
""",
            "hparams.py": """
from hparam import HParams
hparams = HParams(
    name="vocoder",
    channels=16,
    batch_size=8,
    optimizer="Adam",
    optimizer_params={"lr": 1e-3, "eps": 1e-8},
    max_train_steps=1000000,
)
""",
            "train.py": '''
"""usage: train.py [options]

options:
    --hparams=<parmas>           Hyper parameters [default: ].
"""
from docopt import docopt
import torch
from torch import nn, optim
from torch.utils.data import DataLoader
from hparams import hparams
if __name__ == "__main__":
    args = docopt(__doc__)
    hparams.parse(args["--hparams"])
    model = nn.Conv1d(hparams.channels, hparams.channels, 3)
    Optimizer = getattr(optim, hparams.optimizer)
    optimizer = Optimizer(model.parameters(), **hparams.optimizer_params)
    loader = DataLoader(None, batch_size=hparams.batch_size)
''',
        },
    )
    meta = extract_metadata(tmp_path, 'python train.py --hparams="batch_size=4"')
    assert meta.learning_rate == pytest.approx(1e-3)
    assert meta.batch_size_per_device == 4
    assert meta.max_steps == 1000000
    assert meta.params_millions == pytest.approx((16 * 16 * 3 + 16) / 1e6, rel=0.02)


def test_a_repeating_iterators_epoch_counter_stops_training(tmp_path: Path) -> None:
    """BiDAF-pytorch: `for i, batch in enumerate(iterator): present_epoch = int(iterator.epoch); if present_epoch ==
    args.epoch: break`: torchtext's iterator repeats, and its epoch counter reaching `--epoch` ends the run. The
    default data file `train-v1.1.json` names nothing; the script's `SQuAD(args)` loader names the dataset."""
    write(
        tmp_path,
        {
            "run.py": """
import argparse
import torch
from data import SQuAD
def train(args, data, model):
    optimizer = torch.optim.Adadelta(model.parameters(), lr=args.learning_rate)
    iterator = data.train_iter
    for i, batch in enumerate(iterator):
        present_epoch = int(iterator.epoch)
        if present_epoch == args.epoch:
            break
        loss = model(batch).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
parser = argparse.ArgumentParser()
parser.add_argument('--epoch', default=12, type=int)
parser.add_argument('--learning-rate', default=0.5, type=float)
parser.add_argument('--train-file', default='train-v1.1.json')
args = parser.parse_args()
data = SQuAD(args)
train(args, data, torch.nn.LSTM(4, 4))
""",
            "data.py": "class SQuAD:\n    def __init__(self, args):\n        self.train_iter = []\n",
        },
    )
    meta = extract_metadata(tmp_path, "python run.py")
    assert meta.epochs == 12
    assert meta.dataset == "SQuAD"
    assert extract_metadata(tmp_path, "python run.py --train-file mine.json").dataset == "mine.json"


def test_a_long_loop_over_data_leaves_the_count_to_the_layers(tmp_path: Path) -> None:
    """A constructor that first runs a long `while` loop building nothing (a tokenizer trimming its input, BERT's
    data code) still has its layers counted, and quickly: past a few hundred passes such a loop's names are unknown
    instead of being run out. A loop that keeps building layers past that bound stops the count."""
    model = """
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        n = 0
        while n < 100000:
            n += 1
        self.fc = nn.Linear(10, 10)
net = Net()
"""
    main = "import torch\nfrom model import Net\nnet = Net()\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
    write(tmp_path, {"model.py": model, "train.py": main})
    assert extract_metadata(tmp_path, "python train.py").params_millions == pytest.approx(110 / 1e6, rel=0.02)
    grows = model.replace(
        "            n += 1", "            n += 1\n            setattr(self, f'l{n}', nn.Linear(2, 2))"
    )
    write(tmp_path / "g", {"model.py": grows, "train.py": main})
    assert extract_metadata(tmp_path / "g", "python train.py").params_millions is None
