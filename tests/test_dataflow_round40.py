"""Round 40's misses, as mechanisms: Python 2's ``xrange``, a parser run by an imported function, an architecture
setting that builds a frozen part beside the trained module, and a recurrent net classifying images."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write


def test_python2_xrange_counts_the_generator_iterations(tmp_path: Path) -> None:
    """wgan-gp: a Python 2 script (`print netG`) of module constants; `for iteration in xrange(ITERS):` steps the
    generator's optimizer once per pass: ITERS is the job's step budget."""
    write(
        tmp_path,
        {
            "gan.py": """
import torch
from torch import nn, optim
BATCH_SIZE = 64
ITERS = 200000
netG = nn.Linear(128, 784)
print netG
optimizerG = optim.Adam(netG.parameters(), lr=1e-4, betas=(0.5, 0.9))
for iteration in xrange(ITERS):
    noise = torch.randn(BATCH_SIZE, 128)
    loss = netG(noise).mean()
    netG.zero_grad()
    loss.backward()
    optimizerG.step()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python gan.py")
    assert meta.max_steps == 200000
    assert meta.learning_rate == pytest.approx(1e-4)


def test_options_of_a_parser_an_imported_function_runs(tmp_path: Path) -> None:
    """PyTorch-ENet: `from args import get_arguments` then `args = get_arguments()`, a function of `args.py` that adds
    the options and returns `parser.parse_args()`: its defaults and the command's flags are the job's settings."""
    write(
        tmp_path,
        {
            "args.py": """
from argparse import ArgumentParser
def get_arguments():
    parser = ArgumentParser()
    parser.add_argument("--batch-size", "-b", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--learning-rate", "-lr", type=float, default=5e-4)
    return parser.parse_args()
""",
            "main.py": """
import torch
from args import get_arguments
args = get_arguments()
model = torch.nn.Conv2d(3, 12, 3)
loader = torch.utils.data.DataLoader(range(100), batch_size=args.batch_size)
optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate)
for epoch in range(args.epochs):
    for x in loader:
        loss = model(x).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python main.py -b 4")
    assert meta.batch_size_per_device == 4
    assert meta.epochs == 300
    assert meta.learning_rate == pytest.approx(5e-4)


def test_an_architecture_setting_that_builds_only_a_frozen_encoder_does_not_name_the_trained_decoder(
    tmp_path: Path,
) -> None:
    """Show-Attend-and-Tell: `encoder = Encoder(args.network)` (a pretrained VGG-19, never handed to the optimizer)
    beside `decoder = Decoder(vocabulary_size, encoder.dim)` and `Adam(decoder.parameters())`: `--network vgg19`
    names the frozen encoder, not the model trained (a recurrent decoder)."""
    write(
        tmp_path,
        {
            "encoder.py": """
import torch.nn as nn
from torchvision.models import vgg19
class Encoder(nn.Module):
    def __init__(self, network='vgg19'):
        super().__init__()
        self.net = vgg19(pretrained=True)
        self.dim = 512
""",
            "decoder.py": """
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self, vocabulary_size, encoder_dim):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary_size, 512)
        self.lstm = nn.LSTMCell(512 + encoder_dim, 512)
        self.deep_output = nn.Linear(512, vocabulary_size)
""",
            "train.py": """
import argparse, json
import torch
from encoder import Encoder
from decoder import Decoder
def main(args):
    word_dict = json.load(open(args.data + '/word_dict.json', 'r'))
    vocabulary_size = len(word_dict)
    encoder = Encoder(args.network)
    decoder = Decoder(vocabulary_size, encoder.dim)
    optimizer = torch.optim.Adam(decoder.parameters(), lr=args.lr)
    for epoch in range(1, args.epochs + 1):
        loss = decoder(encoder(torch.zeros(1))).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=10)
    parser.add_argument('--lr', type=float, default=1e-4)
    parser.add_argument('--data', type=str, default='data/coco')
    parser.add_argument('--network', choices=['vgg19', 'resnet152'], default='vgg19')
    main(parser.parse_args())
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.model_name == "Decoder"
    assert meta.model_type == "rnn"


def test_a_recurrent_net_reading_images_against_class_labels_classifies_images(tmp_path: Path) -> None:
    """pytorch-beginner's RNN chapter: an LSTM over MNIST rows (torchvision data) trained with a cross-entropy over
    the digit labels: image classification, not language modelling."""
    write(
        tmp_path,
        {
            "recurrent_network.py": """
import torch
from torch import nn, optim
from torch.utils.data import DataLoader
from torchvision import transforms, datasets
train_dataset = datasets.MNIST(root='./data', train=True, transform=transforms.ToTensor(), download=True)
train_loader = DataLoader(train_dataset, batch_size=100, shuffle=True)
class Rnn(nn.Module):
    def __init__(self, in_dim, hidden_dim, n_layer, n_class):
        super().__init__()
        self.lstm = nn.LSTM(in_dim, hidden_dim, n_layer, batch_first=True)
        self.classifier = nn.Linear(hidden_dim, n_class)
model = Rnn(28, 128, 2, 10)
criterion = nn.CrossEntropyLoss()
optimizer = optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(20):
    for img, label in train_loader:
        loss = criterion(model(img.squeeze(1)), label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python recurrent_network.py")
    assert meta.model_type == "rnn"
    assert meta.task == "image_classification"
