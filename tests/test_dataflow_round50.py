"""Round 50's misses, as mechanisms: an unexpanded shell variable names no dataset; a settings file given to an
option of any name; an ``if`` arm that always runs and returns makes what follows it dead (a spawn); a spawned DDP
wrap in a module the entry calls; the README paragraph that introduces the very command; TensorFlow Estimator
consumers; settings classes built with arguments (their ``__init__`` defaults, the construction's keywords over
them)."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.collect import collect_settings
from schedmate.agents.advisor.extract.launch import parse_command
from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.advisor.extract.workspace import Workspace
from tests.repo_files import write

_PRETRAIN = """
import argparse
import torch
from torch.utils.data import DataLoader
from data import Corpus

parser = argparse.ArgumentParser()
parser.add_argument('--data-dir', required=True)
parser.add_argument('--batch-size', type=int, default=128)
args = parser.parse_args()
net = torch.nn.Linear(8, 8)
optimizer = torch.optim.Adam(net.parameters(), lr=5e-4)
for x in DataLoader(Corpus(args.data_dir), batch_size=args.batch_size):
    optimizer.zero_grad()
    net(x).sum().backward()
    optimizer.step()
"""
_DATA = (
    "from torch.utils.data import Dataset\n\n\nclass Corpus(Dataset):\n    def __init__(self, root):\n        pass\n"
)


def test_an_unexpanded_shell_variable_names_no_dataset(tmp_path: Path) -> None:
    """``--data-dir $DATA_DIR`` as the README writes it: the folder is whatever the user's shell holds, so the job
    names no dataset (this fails on the commit before, which reported the dataset "$DATA_DIR"); a folder under it
    still names one."""
    write(tmp_path, {"run_pretraining.py": _PRETRAIN, "data.py": _DATA})
    assert extract_metadata(tmp_path, "python3 run_pretraining.py --data-dir $DATA_DIR").dataset is None
    assert extract_metadata(tmp_path, "python3 run_pretraining.py --data-dir ${DATA}").dataset is None
    md = extract_metadata(tmp_path, "python3 run_pretraining.py --data-dir $DATA_DIR/wikitext103")
    assert md.dataset is not None and "wikitext" in md.dataset.lower().replace("-", "")


_NMT = """
import argparse
import json
import torch
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument('--hparams_path', type=str, default=None)
parser.add_argument('--train_prefix', type=str, default=None)
parser.add_argument('--batch_size', type=int, default=64)
parser.add_argument('--num_train_steps', type=int, default=12000)
parser.add_argument('--learning_rate', type=float, default=1.0)
flags = parser.parse_args()
hparams = vars(flags)
if flags.hparams_path:
    with open(flags.hparams_path) as f:
        hparams.update(json.load(f))
net = torch.nn.LSTM(8, 8)
optimizer = torch.optim.SGD(net.parameters(), lr=hparams['learning_rate'])
loader = DataLoader(list(range(100)), batch_size=hparams['batch_size'])
step = 0
while step < hparams['num_train_steps']:
    for x in loader:
        optimizer.zero_grad()
        optimizer.step()
        step += 1
"""


def test_a_settings_file_given_to_an_option_of_any_name(tmp_path: Path) -> None:
    """``--hparams_path standard_hparams/gnmt.json``, a JSON whose keys are the script's own options: its values
    replace the options' defaults (this fails on the commit before, which read only files given to config-named
    flags); a data file given to an option is not read as settings."""
    std = '{"batch_size": 128, "num_train_steps": 340000, "learning_rate": 1.0, "unit_type": "lstm"}'
    write(
        tmp_path, {"nmt.py": _NMT, "standard_hparams/gnmt.json": std, "data/train.json": '[{"src": "x", "tgt": "y"}]'}
    )
    md = extract_metadata(tmp_path, "python nmt.py --hparams_path=standard_hparams/gnmt.json --train_prefix=/tmp/x")
    assert (md.max_steps, md.global_batch_size) == (340000, 128)
    md = extract_metadata(tmp_path, "python nmt.py --train_prefix data/train.json")
    assert (md.max_steps, md.global_batch_size) == (12000, 64)


_SPAWNING_CLI = """
import fire
import torch
import torch.multiprocessing as mp
from trainer import Trainer


def run(rank, world_size, batch_size):
    Trainer(rank, world_size, batch_size).train()


def main(batch_size=10, multi_gpus=False):
    world_size = torch.cuda.device_count()
    if world_size == 1 or not multi_gpus:
        run(0, 1, batch_size)
        return
    mp.spawn(run, args=(world_size, batch_size), nprocs=world_size, join=True)


if __name__ == '__main__':
    fire.Fire(main)
"""
_TRAINER = """
import math
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, rank, world_size, batch_size):
        self.net = torch.nn.Linear(4, 4)
        if world_size > 1:
            self.net = DDP(self.net, device_ids=[rank])
        self.opt = torch.optim.Adam(self.net.parameters(), lr=2e-4)
        self.batch = math.ceil(batch_size / world_size)

    def train(self):
        for x in DataLoader(list(range(100)), batch_size=self.batch):
            self.opt.zero_grad()
            self.net(x).sum().backward()
            self.opt.step()
"""


def test_a_spawn_after_an_arm_that_returns_is_dead_and_a_live_one_runs_ddp(tmp_path: Path) -> None:
    """``if world_size == 1 or not multi_gpus: run(...); return`` always returns with the flag off, so the
    ``mp.spawn`` after it cannot run: one process on one GPU (this fails on the commit before, which counted the
    spawn and so every visible GPU). With the flag on, the spawn starts one process per visible GPU, and the DDP
    wrap in the trainer module the entry calls makes it DDP (the commit before looked for the wrap in the entry
    only and said single_gpu)."""
    write(tmp_path, {"train.py": _SPAWNING_CLI, "trainer.py": _TRAINER})
    md = extract_metadata(tmp_path, "python train.py")
    assert (md.distributed, md.num_gpus) == ("single_gpu", 1)
    md = extract_metadata(tmp_path, "python train.py --multi_gpus")
    assert (md.distributed, md.num_gpus) == ("ddp", None)


_README = """# Style-Based GAN

Prepare an lmdb dataset first. Samples from the model trained on FFHQ are below.

for celebA

> python train.py --mixing LMDB_PATH

for FFHQ

> python train.py --mixing --loss r1 --sched LMDB_PATH

![Sample of the model trained on FFHQ](doc/sample.png)
"""


def test_the_readme_paragraph_that_introduces_the_command_names_its_dataset(tmp_path: Path) -> None:
    """Nothing in the code names the data (an lmdb path); the README introduces each command with its dataset. The
    paragraph right above the submitted command decides (this fails on the commit before, which took the README's
    one dataset in lines about training, FFHQ, for both); a command the README does not show falls back to that."""
    write(tmp_path, {"train.py": _PRETRAIN.replace("--data-dir", "path"), "data.py": _DATA, "README.md": _README})
    assert extract_metadata(tmp_path, "python train.py --mixing LMDB_PATH").dataset == "CelebA"
    assert extract_metadata(tmp_path, "python train.py --mixing --loss r1 --sched LMDB_PATH").dataset == "FFHQ"
    assert extract_metadata(tmp_path, "python train.py /data/lmdb").dataset == "FFHQ"


_ESTIMATOR = """
import tensorflow as tf

SIZE = 96
UNTIL = 5000


def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features, 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.AdamOptimizer(1e-4).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)


def input_fn(params):
    return tf.data.TFRecordDataset("train.tfrecord").batch(params["batch_size"])


estimator = tf.estimator.tpu.TPUEstimator(model_fn=model_fn, use_tpu=False, train_batch_size=SIZE)
estimator.train(input_fn=input_fn, max_steps=UNTIL)
"""


def test_an_estimator_takes_the_batch_and_the_last_step(tmp_path: Path) -> None:
    """TensorFlow's ``TPUEstimator(train_batch_size=)`` is the batch its ``input_fn`` gets, and
    ``estimator.train(max_steps=)`` the global step training stops at (this fails on the commit before, which knew
    neither consumer, and the constants' names say nothing)."""
    write(tmp_path, {"run.py": _ESTIMATOR})
    md = extract_metadata(tmp_path, "python run.py")
    assert (md.global_batch_size, md.max_steps) == (96, 5000)


_CONFIGURE = """
class PretrainingConfig(object):
    def __init__(self, model_name, data_dir, **kwargs):
        self.model_name = model_name
        self.debug = False
        self.learning_rate = 5e-4
        self.train_batch_size = 128
        self.num_train_steps = 1000000
        self.update(kwargs)
        if self.debug:
            self.train_batch_size = 8
            self.num_train_steps = 20

    def update(self, kwargs):
        for k, v in kwargs.items():
            self.__dict__[k] = v
"""
_RUN_PRETRAINING = """
import argparse
import json
import tensorflow as tf
import configure_pretraining


def model_fn(features, labels, mode, params):
    loss = tf.reduce_sum(tf.layers.dense(features, 2))
    return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=tf.no_op())


def train(config):
    estimator = tf.estimator.tpu.TPUEstimator(model_fn=model_fn, use_tpu=False, train_batch_size=config.train_batch_size)
    estimator.train(input_fn=lambda params: None, max_steps=config.num_train_steps)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--model-name", required=True)
    parser.add_argument("--hparams", default="{}")
    args = parser.parse_args()
    train(configure_pretraining.PretrainingConfig(args.model_name, args.data_dir, **json.loads(args.hparams)))


if __name__ == "__main__":
    main()
"""


def test_a_settings_class_built_with_arguments_gives_its_init_defaults(tmp_path: Path) -> None:
    """``configure_pretraining.PretrainingConfig(args.model_name, args.data_dir, **hparams)``: a class its name calls a
    config, whose ``__init__`` states the defaults (``self.train_batch_size = 128``; the ``if self.debug:`` arm is
    not the default). What the estimator reads from it is known (this fails on the commit before, which took config
    classes only when built bare, by ``from`` imports, and with class-level fields)."""
    write(tmp_path, {"run_pretraining.py": _RUN_PRETRAINING, "configure_pretraining.py": _CONFIGURE})
    md = extract_metadata(tmp_path, "python3 run_pretraining.py --data-dir $DATA_DIR --model-name small")
    assert (md.global_batch_size, md.max_steps, md.learning_rate) == (128, 1000000, 5e-4)


_CORE_LOOP = """
import torch
from dataclasses import dataclass


@dataclass
class TransformerConfig:
    num_layers: int = 0
    hidden_size: int = 0
    num_attention_heads: int = 0


def model_provider():
    config = TransformerConfig(num_layers=2, hidden_size=12, num_attention_heads=4)
    return torch.nn.Linear(config.hidden_size, config.hidden_size)


model = model_provider()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
"""


def test_a_config_built_with_keywords_holds_them_not_its_defaults(tmp_path: Path) -> None:
    """``TransformerConfig(num_layers=2, hidden_size=12, …)``: the construction's literal keywords are the settings,
    not the dataclass's placeholder defaults of 0 (a config built with arguments is read at all only from this
    commit on; taking its defaults alone would report zero layers)."""
    write(tmp_path, {"train.py": _CORE_LOOP})
    md = extract_metadata(tmp_path, "python train.py")
    assert md.params_millions is None or md.params_millions > 0
    ex = collect_settings(Workspace(tmp_path), parse_command("python train.py"))
    assert ex.values["TransformerConfig.num_layers"].value == 2
    assert ex.values["TransformerConfig.hidden_size"].value == 12
