"""Round 48's misses, as mechanisms: shell launch scripts with trailing comments and arithmetic expansions, Keras'
``multi_gpu_model(gpus=N)`` as the GPU count, a TF1 ``while`` loop whose pass runs the training op and stops at a
step counter's bound (a bound of 10**10 is no limit), and the graph datasets (Cora, Citeseer, PubMed, PPI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_TRAIN = """
import argparse
import torch
from torch.utils.data import DataLoader
from data import Pairs

parser = argparse.ArgumentParser()
parser.add_argument('--dataroot', required=True)
parser.add_argument('--display_id', type=int, default=1)
parser.add_argument('--batch_size', type=int, default=2)
parser.add_argument('--niter', type=int, default=100)
parser.add_argument('--niter_decay', type=int, default=100)
parser.add_argument('--epoch_count', type=int, default=1)
opt = parser.parse_args()
netG = torch.nn.Conv2d(3, 3, 3)
optimizer = torch.optim.Adam(netG.parameters(), lr=2e-4)
loader = DataLoader(Pairs(opt.dataroot), batch_size=opt.batch_size, shuffle=True)
for epoch in range(opt.epoch_count, opt.niter + opt.niter_decay + 1):
    for a, b in loader:
        loss = (netG(a) - b).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
_DATA = "from torch.utils.data import Dataset\n\n\nclass Pairs(Dataset):\n    def __init__(self, root):\n        pass\n"
_SCRIPT = """set -ex
CLASS='edges2shoes'  # facades, day2night, edges2shoes, edges2handbags, maps
NITER=30
NITER_DECAY=30  # then decay linearly
GPU_ID=0
DISPLAY_ID=$((GPU_ID*10+1))
python ./train.py \\
  --display_id ${DISPLAY_ID} \\
  --dataroot ./datasets/${CLASS} \\
  --niter ${NITER} \\
  --niter_decay ${NITER_DECAY}
"""


def test_shell_script_with_comments_and_arithmetic(tmp_path: Path) -> None:
    """``CLASS='edges2shoes'  # facades, ...`` sets CLASS (the comment is not part of the value) and
    ``$((GPU_ID*10+1))`` is 1: the python command gets ``--niter 30 --niter_decay 30`` and the edges2shoes folder (this
    fails on the commit before, which dropped the commented assignments and split the arithmetic into stray words, so
    that every flag kept its default)."""
    write(tmp_path, {"train.py": _TRAIN, "data.py": _DATA, "scripts/train.sh": _SCRIPT})
    md = extract_metadata(tmp_path, "bash scripts/train.sh")
    assert md.epochs == 60
    assert md.dataset == "edges2shoes"


def test_keras_multi_gpu_model_counts_its_gpus(tmp_path: Path) -> None:
    """``multi_gpu_model(model, gpus=multi_gpu)`` in the helper that builds the models, called with ``--multi-gpu 2``:
    two GPUs (this fails on the commit before, which said data parallel on one GPU)."""
    train = """
import argparse
import keras
from keras.layers import Conv2D, Input


def create_models(num_classes, multi_gpu=0):
    inputs = Input(shape=(None, None, 3))
    model = keras.models.Model(inputs, Conv2D(num_classes, 3)(inputs))
    if multi_gpu > 1:
        from keras.utils import multi_gpu_model
        training_model = multi_gpu_model(model, gpus=multi_gpu)
    else:
        training_model = model
    training_model.compile(loss='mse', optimizer=keras.optimizers.Adam(lr=1e-5))
    return model, training_model


parser = argparse.ArgumentParser()
parser.add_argument('--multi-gpu', type=int, default=0)
parser.add_argument('--batch-size', type=int, default=1)
parser.add_argument('--epochs', type=int, default=50)
args = parser.parse_args()
model, training_model = create_models(20, multi_gpu=args.multi_gpu)
training_model.fit(x=None, y=None, batch_size=args.batch_size, epochs=args.epochs)
"""
    write(tmp_path, {"train.py": train})
    md = extract_metadata(tmp_path, "python train.py --multi-gpu 2 --batch-size 4")
    assert (md.distributed, md.num_gpus) == ("dp", 2)
    assert extract_metadata(tmp_path, "python train.py").num_gpus == 1


_TF1_MODEL = """
import tensorflow as tf


class SampleAndAggregate(object):
    def __init__(self, features, lr):
        self.loss = tf.reduce_mean(tf.layers.dense(features, 1))
        self.optimizer = tf.train.AdamOptimizer(learning_rate=lr)
        self.opt_op = self.optimizer.minimize(self.loss)
"""
_TF1_TRAIN = """
import tensorflow as tf
from .models import SampleAndAggregate

flags = tf.app.flags
FLAGS = flags.FLAGS
flags.DEFINE_integer('epochs', 1, 'number of epochs to train.')
flags.DEFINE_integer('batch_size', 512, 'minibatch size.')
flags.DEFINE_integer('max_total_steps', 10**10, 'Maximum total number of iterations')


def train(minibatch):
    model = SampleAndAggregate(minibatch.features, 0.01)
    sess = tf.Session()
    total_steps = 0
    for epoch in range(FLAGS.epochs):
        minibatch.shuffle()
        while not minibatch.end():
            outs = sess.run([model.opt_op, model.loss], feed_dict=minibatch.next_minibatch_feed_dict())
            total_steps += 1
            if total_steps > FLAGS.max_total_steps:
                break
        if total_steps > FLAGS.max_total_steps:
            break


def main(argv=None):
    train(None)


if __name__ == '__main__':
    tf.app.run()
"""


@pytest.mark.parametrize(("flags", "steps", "epochs"), [("--max_total_steps 1000", 1000, None), ("", None, 1)])
def test_tf1_while_loop_stops_at_a_step_counter(
    tmp_path: Path, flags: str, steps: int | None, epochs: int | None
) -> None:
    """A ``while`` loop that runs ``model.opt_op`` (what ``optimizer.minimize`` built) each pass and breaks when its
    counter passes ``--max_total_steps``: that bound is the step budget; its default 10**10 means no limit, and the
    epoch loop ends the training (this fails on the commit before, which knew step counters only in ``for`` loops
    that call ``backward()`` and ``step()``)."""
    write(tmp_path, {"gs/__init__.py": "", "gs/models.py": _TF1_MODEL, "gs/train.py": _TF1_TRAIN})
    md = extract_metadata(tmp_path, f"python -m gs.train --train_prefix ./example_data/ppi {flags}".strip())
    assert (md.max_steps, md.epochs) == (steps, epochs)
    assert md.dataset == "PPI (protein-protein interaction)"


@pytest.mark.parametrize(
    ("name", "want"), [("cora", "Cora"), ("citeseer", "Citeseer"), ("pubmed", "PubMed (Planetoid)")]
)
def test_planetoid_citation_graphs_are_known(tmp_path: Path, name: str, want: str) -> None:
    """The Planetoid citation graphs a GCN script loads by name (``load_data(FLAGS.dataset)``) are well-known datasets
    (this fails on the commit before, which knew none of them)."""
    train = f"""
import tensorflow as tf
from utils import load_data

flags = tf.app.flags
FLAGS = flags.FLAGS
flags.DEFINE_string('dataset', '{name}', 'Dataset string.')
flags.DEFINE_integer('epochs', 200, 'Number of epochs to train.')
adj, features, labels = load_data(FLAGS.dataset)
"""
    write(tmp_path, {"train.py": train, "utils.py": "def load_data(name):\n    return None, None, None\n"})
    assert extract_metadata(tmp_path, "python train.py").dataset == want
