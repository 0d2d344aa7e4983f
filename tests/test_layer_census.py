"""The layer census: when no model was found to name the family, the layers the job's own modules build decide the
model type — only when they are unambiguous, and never the task."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.identity import layer_census
from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_TRAIN = """
import argparse
import importlib
import torch
import torch.nn.functional as F
from torch import optim
from nets import small  # noqa: F401


def build(name, **kwargs):
    module = importlib.import_module("nets." + name.split(":")[0])
    return module.create(**kwargs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="small:v1")
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args()
    net = build(args.arch, width=16)
    optimizer = optim.SGD(net.parameters(), lr=0.05)
    for epoch in range(args.epochs):
        loss = F.mse_loss(net(torch.zeros(4, 3, 32, 32)), torch.zeros(4, 16, 30, 30))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
"""
_NETS = {
    "nets/__init__.py": "",
    "nets/small.py": """
import torch.nn as nn
from nets.blocks import Block


def create(width):
    return nn.Sequential(Block(3, width), nn.ReLU())
""",
    "nets/blocks.py": """
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return self.bn(self.conv(x))
""",
}


def test_a_model_built_by_a_dynamic_import_is_typed_by_the_layers_the_job_defines(tmp_path: Path) -> None:
    """The network comes from `importlib.import_module("nets." + name)` (no model to follow), but the modules the
    entry imports build only convolutions: a CNN. The task stays open: a CNN alone says nothing of what it learns."""
    write(tmp_path, {"train.py": _TRAIN, **_NETS})
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.model_type == "cnn"
    assert meta.task is None


def test_a_name_that_says_transformer_keeps_the_census_out(tmp_path: Path) -> None:
    """fairseq: `--arch transformer_iwslt_de_en` names an attention model the reached modules do not show; the
    convolutions they hold must not call it a CNN."""
    write(tmp_path, {"train.py": _TRAIN, **_NETS})
    meta = extract_metadata(tmp_path, "python train.py --arch transformer_base")
    assert meta.model_name == "transformer_base"
    assert meta.model_type is None


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("import torch.nn as nn\nnet = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))", "cnn"),
        ("from keras.layers import Conv2D, Dense\nx = Conv2D(64, 3)(inp)\ny = Dense(10)(x)", "cnn"),
        (
            "import torch.nn.functional as F\ndef f(x, params):\n    return F.conv2d(x, params['conv0'], stride=1)",
            "cnn",
        ),
        ("import torch.nn as nn\nrnn = nn.LSTM(128, 256, 2)\nout = nn.Linear(256, 65)", "rnn"),
        ("import torch.nn as nn\nenc = nn.Conv1d(80, 256, 5)\ndec = nn.GRU(256, 256)", "rnn"),  # CRNN, DeepSpeech2
        (  # ELMo: a character CNN under biLSTMs, in TensorFlow's functional layers
            "import tensorflow as tf\nc = tf.nn.conv2d(chars, w, [1, 1, 1, 1], 'VALID')\n"
            "cell = tf.nn.rnn_cell.LSTMCell(4096, num_proj=512)",
            "rnn",
        ),
        (  # Show, Attend and Tell: a CNN encoder, an LSTM decoder attending over its features
            "import torch.nn as nn\nenc = nn.Conv2d(3, 64, 3)\natt = Attention(512, 512, 512)\n"
            "dec = nn.LSTMCell(512, 512)",
            "rnn",
        ),
        ("import torch.nn as nn\nnet = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 2))", "mlp"),
    ],
)
def test_an_unambiguous_census_names_the_family(code: str, kind: str) -> None:
    """Convolutions without recurrent or attention layers (PyTorch, Keras, or functional `F.conv2d(x, weight)`), a
    recurrent net (alone, under a convolutional front end, or attending over its states by hand), linear layers
    alone."""
    assert layer_census([code]) == kind


@pytest.mark.parametrize(
    "code",
    [
        "import torch.nn as nn\nenc = nn.LSTM(80, 256)\natt = nn.MultiheadAttention(256, 4)",  # self-attention
        "import torch.nn as nn\nconv = nn.Conv2d(3, 8, 3)\nattn = nn.MultiheadAttention(8, 2)",  # attention
        "import torch.nn as nn\nemb = nn.Embedding(100, 16)\nout = nn.Linear(16, 100)",  # tokens: no MLP
        "import torch.nn.functional as F\ny = F.relu(x)\nz = F.linear(x)",  # activations, a one-argument call
        "def broken(:\n    pass",  # unparsable text says nothing
    ],
)
def test_an_ambiguous_census_says_nothing(code: str) -> None:
    """Self-attention (beside convolutions or recurrent layers), embeddings with linear layers, or no layers at all."""
    assert layer_census([code]) is None
