"""Round 45's misses, as mechanisms: a dataclass parsed by ``tyro.cli``, a loop whose optimizer steps only every
N-th pass (environment steps are no optimizer steps), Keras' ``multi_gpu_model``, and the facades dataset."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_DQN = '''
import os
from dataclasses import dataclass
import gym
import torch
import torch.nn as nn
import torch.optim as optim
import tyro


@dataclass
class Args:
    exp_name: str = os.path.basename(__file__)[: -len(".py")]
    """the name of this experiment"""
    env_id: str = "BreakoutNoFrameskip-v4"
    total_timesteps: int = 10000000
    learning_rate: float = 1e-4
    batch_size: int = 32
    learning_starts: int = 80000
    train_frequency: int = 4


class QNetwork(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.network = nn.Sequential(nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(), nn.Flatten(), nn.Linear(12800, n))

    def forward(self, x):
        return self.network(x / 255.0)


if __name__ == "__main__":
    args = tyro.cli(Args)
    env = gym.make(args.env_id)
    q_network = QNetwork(4)
    optimizer = optim.Adam(q_network.parameters(), lr=args.learning_rate)
    for global_step in range(args.total_timesteps):
        env.step(env.action_space.sample())
        if global_step > args.learning_starts:
            if global_step % args.train_frequency == 0:
                data = rb.sample(args.batch_size)
                loss = q_network(data.observations).sum()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
'''


def test_a_dataclass_parsed_by_tyro(tmp_path: Path) -> None:
    """cleanrl: `args = tyro.cli(Args)` with `@dataclass class Args` holding the defaults; `--learning-rate` on the
    command line overrides a field (tyro spells fields with dashes)."""
    write(tmp_path, {"dqn_atari.py": _DQN})
    meta = extract_metadata(tmp_path, "python dqn_atari.py --env-id BreakoutNoFrameskip-v4")
    assert meta.learning_rate == pytest.approx(1e-4)
    assert meta.global_batch_size == 32
    assert extract_metadata(tmp_path, "python dqn_atari.py --learning-rate 3e-4").learning_rate == pytest.approx(3e-4)


def test_environment_steps_are_no_optimizer_steps(tmp_path: Path) -> None:
    """The loop runs `total_timesteps` environment steps and steps the optimizer only `if global_step %
    train_frequency == 0` (after a warm-up): its bound is no count of optimizer steps."""
    argparse_version = _DQN.replace("args = tyro.cli(Args)", "args = _parsed()").replace(
        "import tyro",
        "import argparse\n\n\ndef _parsed():\n    p = argparse.ArgumentParser()\n"
        "    p.add_argument('--total-timesteps', type=int, default=10000000)\n"
        "    p.add_argument('--learning-starts', type=int, default=80000)\n"
        "    p.add_argument('--train-frequency', type=int, default=4)\n"
        "    p.add_argument('--batch-size', type=int, default=32)\n"
        "    p.add_argument('--learning-rate', type=float, default=1e-4)\n"
        "    p.add_argument('--env-id', default='BreakoutNoFrameskip-v4')\n"
        "    return p.parse_args()",
    )
    write(tmp_path, {"dqn_atari.py": argparse_version})
    meta = extract_metadata(tmp_path, "python dqn_atari.py")
    assert meta.learning_rate == pytest.approx(1e-4)  # (the settings are read)
    assert meta.max_steps is None


def test_keras_multi_gpu_model_is_data_parallel(tmp_path: Path) -> None:
    """keras-yolo3 (experiencor): `os.environ['CUDA_VISIBLE_DEVICES'] = config['train']['gpus']` ("0,1") and
    `multi_gpu_model(template_model, gpus=2)`: one process, the model replicated on two GPUs (not DDP)."""
    write(
        tmp_path,
        {
            "config.json": '{"train": {"batch_size": 16, "learning_rate": 1e-4, "nb_epochs": 100, "gpus": "0,1"}}',
            "train.py": """
import argparse
import json
import os
from keras.optimizers import Adam
from keras.utils import multi_gpu_model
from yolo import create_yolov3_model
def _main_(args):
    with open(args.conf) as config_buffer:
        config = json.loads(config_buffer.read())
    os.environ['CUDA_VISIBLE_DEVICES'] = config['train']['gpus']
    multi_gpu = len(config['train']['gpus'].split(','))
    template_model = create_yolov3_model(batch_size=config['train']['batch_size'] // multi_gpu)
    train_model = multi_gpu_model(template_model, gpus=multi_gpu)
    train_model.compile(loss=dummy_loss, optimizer=Adam(lr=config['train']['learning_rate']))
    train_model.fit_generator(generator=train_generator, epochs=config['train']['nb_epochs'])
if __name__ == '__main__':
    argparser = argparse.ArgumentParser()
    argparser.add_argument('-c', '--conf', help='path to configuration file')
    _main_(argparser.parse_args())
""",
        },
    )
    meta = extract_metadata(tmp_path, "python train.py -c config.json")
    assert meta.distributed == "dp"


def test_facades_is_a_known_dataset(tmp_path: Path) -> None:
    """pix2pix-tensorflow: `--input_dir facades/train`: the CMP facades of pix2pix's labels-to-photo task."""
    write(
        tmp_path,
        {
            "pix2pix.py": """
import argparse
import tensorflow as tf
parser = argparse.ArgumentParser()
parser.add_argument("--input_dir", help="path to folder containing images")
parser.add_argument("--max_epochs", type=int)
a = parser.parse_args()
paths = tf.gfile.Glob(a.input_dir + "/*.jpg")
""",
        },
    )
    assert extract_metadata(tmp_path, "python pix2pix.py --input_dir facades/train").dataset == "CMP Facades"
