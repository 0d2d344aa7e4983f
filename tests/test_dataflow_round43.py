"""Round 43's misses, as mechanisms: a framework imported by the module the entry star-imports, torch's
``BatchSampler`` given its batch by position inside a loader helper, an output softmax that is no attention, a trainer
class whose constructor wraps the model in DataParallel, a settings object configured from a Python file at run time,
and a step counter that ends the process (``quit()``) after a scheduled optimizer's step."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write


def test_a_keras_job_whose_entry_star_imports_the_model_module(tmp_path: Path) -> None:
    """zhixuhao/unet: `main.py` holds `from model import *` and no import of its own; `model.py` imports keras. The
    job trains with Keras, not PyTorch."""
    write(
        tmp_path,
        {
            "main.py": """
from model import *
model = unet()
model.fit_generator(gen, steps_per_epoch=300, epochs=1)
""",
            "model.py": """
from keras.models import *
from keras.layers import *
from keras.optimizers import *
def unet(input_size=(256, 256, 1)):
    inputs = Input(input_size)
    conv = Conv2D(64, 3, padding='same')(inputs)
    out = Conv2D(1, 1, activation='sigmoid')(conv)
    model = Model(input=inputs, output=out)
    model.compile(optimizer=Adam(lr=1e-4), loss='binary_crossentropy')
    return model
""",
        },
    )
    assert extract_metadata(tmp_path, "python main.py").framework == ["Keras"]


def test_a_batch_sampler_built_by_position_in_a_loader_helper(tmp_path: Path) -> None:
    """FixMatch-pytorch: `get_data_loader(dset, batch_size, data_sampler=…)` builds `BatchSampler(data_sampler,
    batch_size, drop_last)` for the training streams and a plain `DataLoader(batch_size=)` only without a sampler (the
    evaluation loader, 1024): the training batch is the one the sampler was given."""
    write(
        tmp_path,
        {
            "data_utils.py": """
from torch.utils.data import DataLoader, BatchSampler, RandomSampler
def get_data_loader(dset, batch_size=None, shuffle=False, data_sampler=None, drop_last=True):
    if data_sampler is None:
        return DataLoader(dset, batch_size=batch_size, shuffle=shuffle)
    else:
        data_sampler = RandomSampler(dset)
        batch_sampler = BatchSampler(data_sampler, batch_size, drop_last)
        return DataLoader(dset, batch_sampler=batch_sampler)
""",
            "train.py": """
import argparse
import torch
from data_utils import get_data_loader
parser = argparse.ArgumentParser()
parser.add_argument('--batch_size', type=int, default=64)
parser.add_argument('--eval_batch_size', type=int, default=1024)
parser.add_argument('--train_sampler', type=str, default='RandomSampler')
args = parser.parse_args()
net = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(net.parameters(), lr=0.03)
train_loader = get_data_loader(dset_train, args.batch_size, data_sampler=args.train_sampler)
eval_loader = get_data_loader(dset_eval, args.eval_batch_size)
for x, y in train_loader:
    loss = net(x).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert meta.global_batch_size == 64


def test_an_output_softmax_over_a_weight_product_is_no_attention(tmp_path: Path) -> None:
    """char-rnn-tensorflow: `tf.nn.softmax(tf.matmul(output, softmax_w) + softmax_b)` is the output layer of a
    `rnn.MultiRNNCell` of LSTM cells, not self-attention (which multiplies queries by transposed keys): an RNN."""
    write(
        tmp_path,
        {
            "model.py": """
import tensorflow as tf
from tensorflow.contrib import rnn
class Model():
    def __init__(self, args):
        cell_fn = rnn.LSTMCell
        cells = [cell_fn(args.rnn_size) for _ in range(args.num_layers)]
        self.cell = cell = rnn.MultiRNNCell(cells, state_is_tuple=True)
        softmax_w = tf.get_variable("softmax_w", [args.rnn_size, args.vocab_size])
        softmax_b = tf.get_variable("softmax_b", [args.vocab_size])
        embedding = tf.get_variable("embedding", [args.vocab_size, args.rnn_size])
        inputs = tf.nn.embedding_lookup(embedding, self.input_data)
        outputs, last_state = tf.contrib.legacy_seq2seq.rnn_decoder(inputs, self.initial_state, cell)
        self.logits = tf.matmul(outputs, softmax_w) + softmax_b
        self.probs = tf.nn.softmax(self.logits)
        self.lr = tf.Variable(0.0, trainable=False)
        optimizer = tf.train.AdamOptimizer(self.lr)
""",
            "train.py": """
import argparse
import tensorflow as tf
from model import Model
parser = argparse.ArgumentParser()
parser.add_argument('--rnn_size', type=int, default=128)
parser.add_argument('--num_layers', type=int, default=2)
parser.add_argument('--num_epochs', type=int, default=50)
args = parser.parse_args()
model = Model(args)
with tf.Session() as sess:
    for e in range(args.num_epochs):
        sess.run(model.train_op)
""",
        },
    )
    assert extract_metadata(tmp_path, "python train.py").model_type == "rnn"


def test_a_trainer_class_that_wraps_the_model_in_data_parallel(tmp_path: Path) -> None:
    """BERT-pytorch: the entry builds `BERTTrainer(bert, …, cuda_devices=args.cuda_devices)`, re-exported by the
    trainer package; its constructor wraps the model in `nn.DataParallel(self.model, device_ids=cuda_devices)` when
    several GPUs are visible. `--cuda_devices` defaults to None: DataParallel over every visible GPU."""
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/trainer/__init__.py": "from .pretrain import BERTTrainer\n",
            "pkg/trainer/pretrain.py": """
import torch
import torch.nn as nn
from torch.optim import Adam
class BERTTrainer:
    def __init__(self, bert, vocab_size, train_dataloader, lr=1e-4, with_cuda=True, cuda_devices=None):
        self.model = nn.Linear(vocab_size, 2)
        if with_cuda and torch.cuda.device_count() > 1:
            self.model = nn.DataParallel(self.model, device_ids=cuda_devices)
        self.optim = Adam(self.model.parameters(), lr=lr)
    def train(self, epoch):
        for data in self.train_data:
            loss = self.model(data).sum()
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
""",
            "pkg/main.py": """
import argparse
import torch
from torch.utils.data import DataLoader
from .trainer import BERTTrainer
def train():
    parser = argparse.ArgumentParser()
    parser.add_argument("-b", "--batch_size", type=int, default=64)
    parser.add_argument("-e", "--epochs", type=int, default=10)
    parser.add_argument("--cuda_devices", type=int, nargs='+', default=None)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()
    loader = DataLoader(dataset, batch_size=args.batch_size)
    bert = torch.nn.Linear(8, 8)
    trainer = BERTTrainer(bert, 100, train_dataloader=loader, lr=args.lr, cuda_devices=args.cuda_devices)
    for epoch in range(args.epochs):
        trainer.train(epoch)
if __name__ == "__main__":
    train()
""",
        },
    )
    meta = extract_metadata(tmp_path, "python -m pkg.main")
    assert meta.distributed == "dp"
    assert meta.num_gpus is None  # every visible GPU: the command does not say how many


def test_a_settings_object_configured_from_a_python_file(tmp_path: Path) -> None:
    """WaveRNN: `from utils import hparams as hp` is an object, not a module; `hp.configure(args.hp_file)` copies the
    names of `hparams.py` (the flag's default) onto it, so `hp.voc_batch_size` is that file's constant."""
    write(
        tmp_path,
        {
            "hparams.py": "voc_batch_size = 32\nvoc_lr = 1e-4\n",
            "utils/__init__.py": """
class __HParams:
    def configure(self, path):
        m = _import_from_file("hparams", path)
        for name, value in m.__dict__.items():
            setattr(self, name, value)
hparams = __HParams()
""",
            "train.py": """
import argparse
import torch
from torch.utils.data import DataLoader
from utils import hparams as hp
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--batch_size', '-b', type=int)
    parser.add_argument('--hp_file', default='hparams.py')
    args = parser.parse_args()
    hp.configure(args.hp_file)
    if args.batch_size is None:
        args.batch_size = hp.voc_batch_size
    net = torch.nn.GRU(8, 8)
    optimizer = torch.optim.Adam(net.parameters())
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    for x in loader:
        loss = net(x)[0].sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
if __name__ == "__main__":
    main()
""",
        },
    )
    assert extract_metadata(tmp_path, "python train.py").global_batch_size == 32


def test_a_step_counter_that_quits_after_a_scheduled_optimizers_step(tmp_path: Path) -> None:
    """FastSpeech2: `while True:` over the loader, `optimizer.step_and_update_lr()` (a Noam wrapper's step) each
    batch, then `if step == total_step: quit()` and `step += 1`: the run ends after `total_step` steps."""
    write(
        tmp_path,
        {
            "train.py": """
import argparse
import torch
from torch.utils.data import DataLoader
from model import ScheduledOptim
def main(args):
    model = torch.nn.Linear(4, 2)
    optimizer = ScheduledOptim(model)
    loader = DataLoader(dataset, batch_size=16, shuffle=True)
    step = 1
    while True:
        for batch in loader:
            loss = model(batch).sum()
            loss.backward()
            optimizer.step_and_update_lr()
            optimizer.zero_grad()
            if step == args.total_step:
                quit()
            step += 1
if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--total_step", type=int, default=900000)
    main(parser.parse_args())
""",
            "model.py": """
import torch
class ScheduledOptim:
    def __init__(self, model):
        self._optimizer = torch.optim.Adam(model.parameters())
    def step_and_update_lr(self):
        self._optimizer.step()
    def zero_grad(self):
        self._optimizer.zero_grad()
""",
        },
    )
    assert extract_metadata(tmp_path, "python train.py").max_steps == 900000


def test_a_helper_reached_through_a_star_import_consumes_its_settings(tmp_path: Path) -> None:
    """zhixuhao/unet: `unet()` comes from `from model import *` and compiles the model with `Adam(lr = 1e-4)`: the
    rate the job trains at."""
    write(
        tmp_path,
        {
            "main.py": "from model import *\nmodel = unet()\nmodel.fit_generator(gen, steps_per_epoch=300, epochs=1)\n",
            "model.py": """
from keras.models import *
from keras.layers import *
from keras.optimizers import *
def unet(input_size=(256, 256, 1)):
    inputs = Input(input_size)
    out = Conv2D(1, 1, activation='sigmoid')(inputs)
    model = Model(input=inputs, output=out)
    model.compile(optimizer=Adam(lr=1e-4), loss='binary_crossentropy')
    return model
""",
        },
    )
    assert extract_metadata(tmp_path, "python main.py").learning_rate == 1e-4


def test_a_long_project_title_names_the_family(tmp_path: Path) -> None:
    """FastSpeech2: the model is built where the interpreter cannot follow (here a module imported by a name built
    at run time), but the README's title, too long to be the model's name, says "FastSpeech 2": a TTS model, and
    its task."""
    write(
        tmp_path,
        {
            "README.md": "# FastSpeech 2 - PyTorch Implementation\n\nThis is a PyTorch implementation.\n",
            "train.py": """
import argparse
import importlib
import torch
def main(args):
    model = importlib.import_module("model." + args.variant).build()
    optimizer = torch.optim.Adam(model.parameters())
    for batch in loader:
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", default="base")
    main(parser.parse_args())
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py")
    assert (meta.model_type, meta.task) == ("vits_tts", "text_to_speech")


def test_intent_benchmarks_are_known_datasets(tmp_path: Path) -> None:
    """JointBERT: `--task atis` / `--task snips` pick the data folder of an intent and slot benchmark."""
    write(
        tmp_path,
        {
            "main.py": """
import argparse
import os
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--task", default=None, required=True, type=str)
parser.add_argument("--data_dir", default="./data", type=str)
args = parser.parse_args()
data = open(os.path.join(args.data_dir, args.task, "train", "seq.in")).read()
""",
        },
    )
    assert extract_metadata(tmp_path, "python main.py --task atis").dataset == "ATIS"
    assert extract_metadata(tmp_path, "python main.py --task snips").dataset == "Snips"


def test_a_settings_file_outside_the_working_directory_is_not_read(tmp_path: Path) -> None:
    """Safety: `hp.configure(args.hp_file)` with `--hp_file ../outside.py` names a file outside the job's working
    directory; the workspace refuses it, so none of its values are taken, while `--hp_file inside.py` is read. (A
    guard: the commit before read a `.py` file named on the command line as a config file, confined the same way.)"""
    write(
        tmp_path,
        {
            "outside.py": "voc_batch_size = 999\n",
            "job/inside.py": "voc_batch_size = 24\n",
            "job/utils/__init__.py": "class _HParams:\n    pass\nhparams = _HParams()\n",
            "job/train.py": """
import argparse
import torch
from torch.utils.data import DataLoader
from utils import hparams as hp
parser = argparse.ArgumentParser()
parser.add_argument('--hp_file', default='hparams.py')
args = parser.parse_args()
hp.configure(args.hp_file)
net = torch.nn.GRU(8, 8)
optimizer = torch.optim.Adam(net.parameters())
loader = DataLoader(dataset, batch_size=hp.voc_batch_size, shuffle=True)
for x in loader:
    loss = net(x)[0].sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        },
    )
    assert extract_metadata(tmp_path / "job", "python train.py --hp_file inside.py").global_batch_size == 24
    meta = extract_metadata(tmp_path / "job", "python train.py --hp_file ../outside.py")
    assert meta.global_batch_size != 999
