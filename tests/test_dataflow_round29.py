"""A shell script's own flags after `bash run.sh`, a reinforcement-learning environment as the data, and a
transformers model loaded by the job's own package (round 29's misses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.launch import parse_command
from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

CSWIN_LIKE = {
    "train.sh": """NUM_PROC=$1
shift
python -m torch.distributed.launch --nproc_per_node=$NUM_PROC main.py "$@"
""",
    "main.py": """
import argparse
import torch
from torch.utils.data import DataLoader
p = argparse.ArgumentParser()
p.add_argument('-b', '--batch-size', type=int, default=64)
p.add_argument('--lr', type=float, default=5e-4)
p.add_argument('--amp', action='store_true', default=False)
args = p.parse_args()
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 8).cuda())
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
loader = DataLoader(None, batch_size=args.batch_size)
scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
""",
}


def test_the_flags_after_a_shell_script_are_the_scripts() -> None:
    """`bash train.sh 8 --data d -b 256 --amp`: bash's own options come before the script, everything after it is
    handed to the script (the flags were dropped as if they were bash's)."""
    launch = parse_command("bash train.sh 8 --data /data/imagenet -b 256 --amp")
    assert (launch.script, launch.args) == ("train.sh", ["8", "--data", "/data/imagenet", "-b", "256", "--amp"])
    assert parse_command("bash -x run.sh a --b c").args == ["a", "--b", "c"]


def test_a_launch_script_passes_the_commands_flags_on(tmp_path: Path) -> None:
    """`NUM_PROC=$1; shift; python -m torch.distributed.launch --nproc_per_node=$NUM_PROC main.py "$@"` (CSWin):
    the batch, rate and AMP flags of the command reach main.py; 8 processes."""
    root = write(tmp_path, CSWIN_LIKE)
    meta = extract_metadata(root, "bash train.sh 8 -b 256 --lr 2e-3 --amp")
    assert (meta.batch_size_per_device, meta.global_batch_size, meta.num_gpus) == (256, 2048, 8)
    assert (meta.learning_rate, meta.precision) == (pytest.approx(2e-3), "fp16")


PPO_LIKE = """
import gym
import torch
import torch.nn as nn
import torch.optim as optim

class PPO(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 256)
        self.fc_pi = nn.Linear(256, 2)
        self.optimizer = optim.Adam(self.parameters(), lr=0.0005)

def main():
    env = gym.make('CartPole-v1')
    model = PPO()
    for n_epi in range(10000):
        pass

if __name__ == '__main__':
    main()
"""


def test_a_gym_environment_is_the_data_and_names_no_task(tmp_path: Path) -> None:
    """`gym.make('CartPole-v1')`: the agent's environment is its data; reinforcement learning has no task in the
    vocabulary (an MLP policy is no image classifier)."""
    root = write(tmp_path, {"ppo.py": PPO_LIKE})
    meta = extract_metadata(root, "python ppo.py")
    assert (meta.dataset, meta.task, meta.model_type) == ("CartPole-v1", None, "mlp")


OPENNRE_LIKE = {
    "nre/__init__.py": "from .encoder import BERTEncoder\nfrom .model import SoftmaxNN\n",
    "nre/encoder.py": """
import torch.nn as nn
from transformers import BertModel

class BERTEncoder(nn.Module):
    def __init__(self, pretrain_path):
        super().__init__()
        self.bert = BertModel.from_pretrained(pretrain_path)
""",
    "nre/model.py": """
import torch.nn as nn

class SoftmaxNN(nn.Module):
    def __init__(self, encoder, num_class):
        super().__init__()
        self.encoder = encoder
        self.fc = nn.Linear(768, num_class)
""",
    "example/train.py": """
import argparse
import torch
import nre
p = argparse.ArgumentParser()
p.add_argument('--pretrain_path', default='bert-base-uncased')
args = p.parse_args()
model = nre.SoftmaxNN(nre.BERTEncoder(args.pretrain_path), 80)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
""",
}


def test_a_transformers_model_loaded_by_the_jobs_own_package_is_the_framework(tmp_path: Path) -> None:
    """The entry imports only the job's package, whose encoder calls `BertModel.from_pretrained(...)`: the job runs
    on HF Transformers too."""
    root = write(tmp_path, OPENNRE_LIKE)
    meta = extract_metadata(root, "python example/train.py")
    assert meta.framework == ["PyTorch", "HF Transformers"]


VAE_LIKE = """
import torch
import torch.nn as nn
import torch.nn.functional as F

class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 32, 4, 2, 1)
        self.dec = nn.ConvTranspose2d(32, 3, 4, 2, 1)

model = VAE().cuda()
optim = torch.optim.Adam(model.parameters(), lr=1e-4)
x = torch.zeros(1)
loss = F.binary_cross_entropy_with_logits(model(x), x) + F.mse_loss(model(x), x)
"""

CLASSIFIER_MODULE = {
    "models/net.py": """
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3)
        self.fc = nn.Linear(16, 10)

    def loss(self, out, y):
        return nn.CrossEntropyLoss()(out, y)
""",
    "train.py": """
import torch
from models.net import Net
model = Net()
optim = torch.optim.SGD(model.parameters(), lr=0.1)
""",
}


def test_an_image_model_is_a_classifier_only_where_the_code_trains_against_labels(tmp_path: Path) -> None:
    """A convolutional VAE (reconstruction and KL losses, a binary cross-entropy over pixels) names no task; a CNN
    whose class-label cross-entropy is written in its model's module is an image classifier."""
    vae = write(tmp_path / "vae", {"train.py": VAE_LIKE})
    assert extract_metadata(vae, "python train.py").task is None
    clf = write(tmp_path / "clf", CLASSIFIER_MODULE)
    assert extract_metadata(clf, "python train.py").task == "image_classification"
