"""Round 47's misses, as mechanisms: absl flag files and repeated flags (and absl's ``FLAGS`` read by the parameter
count), ``int(1e5)`` constants, a per-GPU batch times a device list the code builds, a U-Net trained to denoise, a
library dataset imported by a helper module, the object whose loss a TF1 optimizer minimizes, and a layer census that
reads TensorFlow's functional layers and attention over recurrent states."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.identity import layer_census
from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_UNET = """
import torch.nn as nn


class UNet(nn.Module):
    def __init__(self, ch, ch_mult, num_res_blocks):
        super().__init__()
        self.head = nn.Conv2d(3, ch, 3, padding=1)
        layers = []
        now = ch
        for mult in ch_mult:
            for _ in range(num_res_blocks):
                layers.append(nn.Conv2d(now, ch * mult, 3, padding=1))
                now = ch * mult
        self.blocks = nn.ModuleList(layers)
        self.tail = nn.Conv2d(now, 3, 3, padding=1)
"""

_DIFFUSION = """
import torch
import torch.nn as nn


class GaussianDiffusionTrainer(nn.Module):
    def __init__(self, model, T):
        super().__init__()
        self.model = model
        self.T = T

    def forward(self, x_0):
        noise = torch.randn_like(x_0)
        return ((self.model(x_0 + noise) - noise) ** 2).mean()
"""

_MAIN_ABSL = """
import torch
from absl import app, flags
from torch.utils.data import DataLoader
from torchvision.datasets import CIFAR10
from diffusion import GaussianDiffusionTrainer
from model import UNet

FLAGS = flags.FLAGS
flags.DEFINE_bool('train', False, help='train from scratch')
flags.DEFINE_integer('ch', 32, help='base channel')
flags.DEFINE_multi_integer('ch_mult', [1, 2], help='channel multiplier')
flags.DEFINE_integer('num_res_blocks', 1, help='blocks per level')
flags.DEFINE_integer('batch_size', 16, help='batch size')
flags.DEFINE_float('lr', 1e-3, help='learning rate')
flags.DEFINE_integer('total_steps', 1000, help='total training steps')


def train():
    loader = DataLoader(CIFAR10('./data', train=True, download=True), batch_size=FLAGS.batch_size, shuffle=True)
    net_model = UNet(ch=FLAGS.ch, ch_mult=FLAGS.ch_mult, num_res_blocks=FLAGS.num_res_blocks)
    optim = torch.optim.Adam(net_model.parameters(), lr=FLAGS.lr)
    trainer = GaussianDiffusionTrainer(net_model, 1000)
    data = iter(loader)
    for step in range(FLAGS.total_steps):
        loss = trainer(next(data)[0])
        optim.zero_grad()
        loss.backward()
        optim.step()


def main(argv):
    if FLAGS.train:
        train()


if __name__ == '__main__':
    app.run(main)
"""

_FLAGFILE = "--train\n# the paper's model\n--ch=64\n--ch_mult=1\n--ch_mult=2\n--ch_mult=2\n--batch_size=128\n"


def _unet_params(ch: int, mults: list[int], blocks: int) -> int:
    total, now = 3 * ch * 9 + ch, ch
    for mult in mults:
        for _ in range(blocks):
            total += now * ch * mult * 9 + ch * mult
            now = ch * mult
    return total + now * 3 * 9 + 3


def test_absl_flagfile_and_repeated_flags(tmp_path: Path) -> None:
    """``--flagfile ./config/base.txt`` reads the flags the file lists, in its place on the command line; repeated
    ``--ch_mult=`` flags make the list that replaces the default; the parameter count reads ``FLAGS.ch`` as the
    settings (this fails on the commit before, which read neither the file nor a multi flag, and counted nothing)."""
    write(
        tmp_path,
        {"main.py": _MAIN_ABSL, "model.py": _UNET, "diffusion.py": _DIFFUSION, "config/base.txt": _FLAGFILE},
    )
    md = extract_metadata(tmp_path, "python main.py --flagfile ./config/base.txt --batch_size=64")
    assert md.batch_size_per_device == 64  # the command's flag after the file's
    assert md.params_millions is not None
    assert abs(md.params_millions * 1e6 - _unet_params(64, [1, 2, 2], 1)) < 0.01e6
    assert md.max_steps == 1000


def test_a_unet_trained_to_denoise_is_a_diffusion_unet(tmp_path: Path) -> None:
    """A class named UNet handed to a diffusion process the script builds (``GaussianDiffusionTrainer(net_model,
    …)``) is a diffusion U-Net generating images, not a segmentation network (this fails on the commit before, which
    said unet and semantic segmentation)."""
    write(tmp_path, {"main.py": _MAIN_ABSL, "model.py": _UNET, "diffusion.py": _DIFFUSION})
    md = extract_metadata(tmp_path, "python main.py --train")
    assert (md.model_type, md.task) == ("diffusion_unet", "image_generation_diffusion")


def test_readme_spelled_readme_md_is_read(tmp_path: Path) -> None:
    """``Readme.md`` is a README too: its title names the family when the code does not (this fails on the commit
    before, which read only README.md, readme.md, README.rst and README)."""
    train = _MAIN_ABSL.replace("GaussianDiffusionTrainer(net_model, 1000)", "Wrapper(net_model, 1000)").replace(
        "from diffusion import GaussianDiffusionTrainer", "from diffusion import GaussianDiffusionTrainer as Wrapper"
    )
    write(
        tmp_path,
        {
            "main.py": train,
            "model.py": _UNET,
            "diffusion.py": _DIFFUSION,
            "Readme.md": "# Denoising Diffusion Models\n",
        },
    )
    assert extract_metadata(tmp_path, "python main.py --train").model_type == "diffusion_unet"


def test_int_of_a_float_literal_is_a_constant(tmp_path: Path) -> None:
    """``NUM_STEPS = int(1e5)`` as an argparse default is 100,000 steps (this fails on the commit before, which left
    the default unknown)."""
    train = """
import argparse
import torch

NUM_STEPS = int(1e5)
parser = argparse.ArgumentParser()
parser.add_argument('--num_steps', type=int, default=NUM_STEPS)
args = parser.parse_args()
model = torch.nn.Linear(4, 4)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(0, args.num_steps):
    loss = model(torch.zeros(2, 4)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
    write(tmp_path, {"train.py": train})
    assert extract_metadata(tmp_path, "python train.py").max_steps == 100_000


def test_per_gpu_batch_times_a_device_list_the_code_builds(tmp_path: Path) -> None:
    """``batch_size=config.BATCH_SIZE * len(gpus)`` where ``gpus`` is parsed from a string the command sets: the
    per-GPU batch is the setting, the global batch that times the GPUs (this fails on the commit before, which gave
    the global batch as the per-GPU one)."""
    train = """
import argparse
import torch
from torch.utils.data import DataLoader
from data import Poses

BATCH_SIZE = 32
parser = argparse.ArgumentParser()
parser.add_argument('--gpus', type=str, default='0')
args = parser.parse_args()
gpus = [int(i) for i in args.gpus.split(',')]
model = torch.nn.DataParallel(torch.nn.Conv2d(3, 17, 3), device_ids=gpus).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = DataLoader(Poses('train'), batch_size=BATCH_SIZE * len(gpus), shuffle=True)
for epoch in range(0, 140):
    for x, y in loader:
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
    data = "from torch.utils.data import Dataset\n\n\nclass Poses(Dataset):\n    def __init__(self, split):\n        pass\n"
    write(tmp_path, {"train.py": train, "data.py": data})
    md = extract_metadata(tmp_path, "python train.py --gpus 0,1,2,3")
    assert (md.batch_size_per_device, md.global_batch_size, md.num_gpus) == (32, 128, 4)


def test_a_library_dataset_imported_by_the_loading_helper(tmp_path: Path) -> None:
    """``from torchtext.datasets import Multi30k`` in the helper module that builds the iterators names the data,
    when the entry names none (this fails on the commit before, which read only the entry's text)."""
    utils = """
from torchtext.data import Field, BucketIterator
from torchtext.datasets import Multi30k


def load_dataset(batch_size):
    DE, EN = Field(), Field()
    train, val, test = Multi30k.splits(exts=('.de', '.en'), fields=(DE, EN))
    return BucketIterator.splits((train, val, test), batch_size=batch_size), DE, EN
"""
    train = """
import torch
from utils import load_dataset

(train_iter, val_iter, test_iter), DE, EN = load_dataset(32)
model = torch.nn.GRU(256, 512)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for e in range(1, 101):
    for batch in train_iter:
        loss = model(batch.src)[0].sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
    write(tmp_path, {"train.py": train, "utils.py": utils})
    assert extract_metadata(tmp_path, "python train.py").dataset == "Multi30k"


_TEXT_CNN = """
import tensorflow as tf


class TextCNN(object):
    def __init__(self, sequence_length, num_classes, vocab_size, embedding_size, num_filters):
        self.input_x = tf.placeholder(tf.int32, [None, sequence_length], name="input_x")
        self.input_y = tf.placeholder(tf.float32, [None, num_classes], name="input_y")
        W = tf.Variable(tf.random_uniform([vocab_size, embedding_size], -1.0, 1.0))
        embedded = tf.expand_dims(tf.nn.embedding_lookup(W, self.input_x), -1)
        F = tf.Variable(tf.truncated_normal([3, embedding_size, 1, num_filters], stddev=0.1))
        conv = tf.nn.conv2d(embedded, F, strides=[1, 1, 1, 1], padding="VALID")
        pooled = tf.reduce_max(tf.nn.relu(conv), axis=1)
        scores = tf.layers.dense(tf.reshape(pooled, [-1, num_filters]), num_classes)
        losses = tf.nn.softmax_cross_entropy_with_logits(logits=scores, labels=self.input_y)
        self.loss = tf.reduce_mean(losses)
        self.accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(scores, 1), tf.argmax(self.input_y, 1)), "float"))
"""
_TEXT_TRAIN = """
import tensorflow as tf
from text_cnn import TextCNN

tf.flags.DEFINE_integer("batch_size", 64, "Batch Size")
tf.flags.DEFINE_integer("num_epochs", 200, "Number of training epochs")
FLAGS = tf.flags.FLAGS

with tf.Graph().as_default():
    sess = tf.Session()
    with sess.as_default():
        cnn = TextCNN(sequence_length=56, num_classes=2, vocab_size=18000, embedding_size=128, num_filters=128)
        optimizer = tf.train.AdamOptimizer(1e-3)
        grads_and_vars = optimizer.compute_gradients(cnn.loss)
        train_op = optimizer.apply_gradients(grads_and_vars)
        for epoch in range(FLAGS.num_epochs):
            sess.run(train_op)
"""


def test_the_object_whose_loss_tf1_minimizes_is_the_model(tmp_path: Path) -> None:
    """``cnn = TextCNN(...)`` then ``optimizer.compute_gradients(cnn.loss)``: the TF1 model is that object, a CNN (its
    ``tf.nn.conv2d``), and over token embeddings it classifies text, not images (this fails on the commit before,
    which found no model, no type, and said image classification)."""
    write(tmp_path, {"train.py": _TEXT_TRAIN, "text_cnn.py": _TEXT_CNN})
    md = extract_metadata(tmp_path, "python train.py")
    assert (md.model_name, md.model_type, md.task) == ("TextCNN", "cnn", None)


def test_census_reads_tensorflow_functional_layers() -> None:
    """``tf.nn.conv2d(x, W)`` and ``tf.layers.conv2d(x, 64, 3)`` are convolutions for the census; ``tf.layers.dense``
    alone is an MLP; an activation with one argument is no layer (this fails on the commit before, whose census read
    only PyTorch's ``F.*`` functions)."""
    conv = "import tensorflow as tf\n\ndef net(x, W):\n    h = tf.nn.conv2d(x, W, [1, 1, 1, 1], 'SAME')\n" + (
        "    return tf.layers.conv2d(tf.nn.relu(h), 64, 3)\n"
    )
    assert layer_census([conv]) == "cnn"
    assert layer_census(["import tensorflow as tf\n\ndef net(x):\n    return tf.layers.dense(x, 10)\n"]) == "mlp"


def test_census_attention_over_recurrent_states_is_an_rnn() -> None:
    """A seq2seq model: GRUs and an ``Attention`` module scoring the decoder state against the encoder's outputs is
    a recurrent model; a function that computes self-attention (TF1's ``multihead_attention``) beside dense layers is
    no answer, not an MLP (this fails on the commit before, which refused the first and called the second an MLP)."""
    seq2seq = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.attn = nn.Linear(hidden * 2, hidden)

    def forward(self, hidden, outputs):
        energy = F.relu(self.attn(torch.cat([hidden, outputs], 2))).transpose(1, 2)
        return F.softmax(torch.bmm(hidden, energy), dim=1)


class Decoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.attention = Attention(hidden)
        self.gru = nn.GRU(hidden * 2, hidden)
        self.out = nn.Linear(hidden, vocab)
"""
    assert layer_census([seq2seq]) == "rnn"
    tf_transformer = """
import tensorflow as tf


def multihead_attention(queries, keys, num_units):
    Q = tf.layers.dense(queries, num_units)
    K = tf.layers.dense(keys, num_units)
    weights = tf.nn.softmax(tf.matmul(Q, tf.transpose(K, [0, 2, 1])))
    return tf.matmul(weights, keys)
"""
    assert layer_census([tf_transformer]) is None
