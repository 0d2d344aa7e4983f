"""Round 53's misses, as mechanisms: the trained network among a config's networks; a click entry's options; an epoch
bound shifted by a resumed start; a list file's dataset named by the folder beside it; ``mixed_precision: true``; a
config's stated task category; an architecture table keyed by ``base_model``; flags with factory defaults
(``define_flags_with_default``) and the section a ``type`` selects; a toolkit's ``model.<task>.name`` registry."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_BASICSR_TRAIN = (
    "from basicsr.train import train_pipeline\nimport archs\n\nif __name__ == '__main__':\n    train_pipeline('.')\n"
)
_OPTIONS = """
name: train_restorer
model_type: RestorerModel
num_gpu: 1
datasets:
  train:
    name: FFHQ
    dataroot_gt: datasets/ffhq/ffhq_512
    batch_size_per_gpu: 3
network_g:
  type: FaceRestorer
  width: 32
network_d:
  type: PatchCritic
network_identity:
  type: ArcFaceNet
path:
  pretrain_network_identity: experiments/arcface.pth
train:
  optim_g:
    type: Adam
    lr: !!float 2e-3
  total_iter: 800000
"""
_ARCHS = """
import torch.nn as nn


class ArcFaceNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(512, 512)


class FaceRestorer(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3)


class PatchCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3)
"""


def test_the_generator_over_a_frozen_helper_network(tmp_path: Path) -> None:
    """BasicSR options with ``network_g``, ``network_d`` and ``network_identity``: the generator is the model, though
    the identity network's class comes first in the file (the commit before named ``ArcFaceNet``)."""
    write(tmp_path, {"train.py": _BASICSR_TRAIN, "archs/__init__.py": "", "archs/nets_arch.py": _ARCHS,
                     "options/train.yml": _OPTIONS})  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py -opt options/train.yml")
    assert md.model_name == "FaceRestorer"
    assert md.params_millions is not None and abs(md.params_millions * 1e6 - (3 * 32 * 9 + 32)) < 1


_CLICK_TRAIN = """
import click
import torch
import yaml


@click.command()
@click.option('-p', '--config_path', default='Configs/config.yml', type=str)
def main(config_path):
    config = yaml.safe_load(open(config_path))
    epochs = config.get('epochs_2nd', 200)
    start_epoch = 0
    net = torch.nn.Linear(4, 4)
    optimizer = torch.optim.AdamW(net.parameters(), lr=float(config['optimizer_params'].get('lr', 1e-4)))
    if config.get('first_stage_path', '') != '':
        start_epoch = load_checkpoint(config['first_stage_path'])
        epochs += start_epoch
    for epoch in range(start_epoch, epochs):
        for x in range(10):
            optimizer.zero_grad()
            net(x).sum().backward()
            optimizer.step()


if __name__ == '__main__':
    main()
"""
_CLICK_CONFIG = """
epochs_2nd: 100
first_stage_path: first_stage.pth
data_params:
  train_data: Data/train_list.txt
  root_path: /local/LJSpeech-1.1/wavs
optimizer_params:
  lr: 0.0001
"""


def test_a_click_entry_a_shifted_epoch_bound_and_a_list_files_dataset(tmp_path: Path) -> None:
    """``@click.command()`` makes ``main``'s parameters the command's options (the config path, so its epochs and
    rate are read); ``epochs += start_epoch`` before ``range(start_epoch, epochs)`` runs the configured count from a
    resumed start; ``train_data: Data/train_list.txt`` is a list, and ``root_path`` beside it names LJSpeech (the
    commit before read none of the three)."""
    write(tmp_path, {"train_second.py": _CLICK_TRAIN, "Configs/config.yml": _CLICK_CONFIG})
    md = extract_metadata(tmp_path, "python train_second.py --config_path ./Configs/config.yml")
    assert (md.epochs, md.learning_rate) == (100, 0.0001)
    assert md.dataset == "LJSpeech"


_CVNETS = """
import argparse
import yaml
import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--common.config-file', dest='config_file')
    opts = p.parse_args()
    cfg = yaml.safe_load(open(opts.config_file))


if __name__ == '__main__':
    main()
"""
_CVNETS_YAML = """
common:
  mixed_precision: true
dataset:
  root_train: /mnt/imagenet/training
  name: imagenet
  category: classification
model:
  classification:
    name: mobilevit_v2
"""
_SEGMENTATION_CODE = "\n".join(f"def seg_{i}(mask, miou, ignore_index):\n    return mask" for i in range(25))


def test_a_toolkits_stated_category_registry_name_and_amp_switch(tmp_path: Path) -> None:
    """A toolkit that also segments (its code full of masks and mIoU) trains a classifier when the config says
    ``category: classification``; ``model.classification.name`` names the registered model; ``mixed_precision:
    true`` is float16 AMP (the commit before said segmentation, no model and fp32)."""
    write(
        tmp_path,
        {"main_train.py": _CVNETS + _SEGMENTATION_CODE, "config/mobilevit_v2.yaml": _CVNETS_YAML},
    )
    md = extract_metadata(tmp_path, "python main_train.py --common.config-file config/mobilevit_v2.yaml")
    assert (md.task, md.model_name, md.precision) == ("image_classification", "mobilevit_v2", "fp16")
    write(tmp_path, {"config/bf16.yaml": _CVNETS_YAML.replace("  mixed_precision: true", "  mixed_precision: true\n"
                                                              "  mixed_precision_dtype: bfloat16")})  # fmt: skip
    assert extract_metadata(tmp_path, "python main_train.py --common.config-file config/bf16.yaml").precision == "bf16"


_EASYLM_TRAIN = """
import mlxu
from transformers import AutoTokenizer
from lm.data import DatasetFactory
from lm.optimizers import OptimizerFactory
from lm.model import LLaMAConfigurator

FLAGS, FLAGS_DEF = mlxu.define_flags_with_default(
    total_steps=10000,
    tokenizer='openlm-research/open_llama_3b_v2',
    train_dataset=DatasetFactory.get_default_config(),
    eval_dataset=DatasetFactory.get_default_config(),
    optimizer=OptimizerFactory.get_default_config(),
    llama=LLaMAConfigurator.get_default_config(),
)


def main(argv):
    tokenizer = AutoTokenizer.from_pretrained(FLAGS.tokenizer)
    dataset = DatasetFactory.load_dataset(FLAGS.train_dataset, tokenizer)


if __name__ == "__main__":
    mlxu.run(main)
"""
_EASYLM_DATA = """
import mlxu


class DatasetFactory(object):
    @staticmethod
    def get_default_config(updates=None):
        config = mlxu.config_dict()
        config.type = 'huggingface'
        config.huggingface_dataset = HuggingfaceDataset.get_default_config()
        config.json_dataset = JsonDataset.get_default_config()
        return config


class HuggingfaceDataset(object):
    @staticmethod
    def get_default_config(updates=None):
        config = mlxu.config_dict()
        config.path = 'c4'
        config.batch_size = 8
        return config


class JsonDataset(object):
    @staticmethod
    def get_default_config(updates=None):
        config = mlxu.config_dict()
        config.path = ''
        config.batch_size = 4
        return config
"""
_EASYLM_OPT = """
import mlxu


class OptimizerFactory(object):
    @staticmethod
    def get_default_config(updates=None):
        config = mlxu.config_dict()
        config.type = 'adamw'
        config.adamw_optimizer = AdamWOptimizerFactory.get_default_config()
        config.palm_optimizer = PalmOptimizerFactory.get_default_config()
        return config


class AdamWOptimizerFactory(object):
    @staticmethod
    def get_default_config(updates=None):
        config = mlxu.config_dict()
        config.lr = 0.01
        return config


class PalmOptimizerFactory(object):
    @staticmethod
    def get_default_config(updates=None):
        config = mlxu.config_dict()
        config.lr = 0.5
        return config
"""
_EASYLM_MODEL = """
import mlxu

LLAMA_STANDARD_CONFIGS = {
    'llama_7b': dict(hidden_size=4096, num_hidden_layers=32),
}


class LLaMAConfigurator(object):
    @staticmethod
    def get_default_config(updates=None):
        config = mlxu.config_dict()
        config.base_model = 'llama_3b'
        return config
"""


def test_flags_with_factory_defaults_and_the_section_a_type_selects(tmp_path: Path) -> None:
    """``define_flags_with_default(train_dataset=DatasetFactory.get_default_config(), …)``: the defaults its factories
    build are settings (C4, batch 8, AdamW's 0.01); ``train_dataset.type=json`` picks ``json_dataset`` and drops the
    other section's batch; the evaluation section is not the training batch; ``llama.base_model=llama_7b`` keys the
    code's table of shapes, so the run trains from scratch (the commit before read no default, and called the run a
    fine-tune)."""
    write(tmp_path, {"train.py": _EASYLM_TRAIN, "lm/__init__.py": "", "lm/data.py": _EASYLM_DATA,
                     "lm/optimizers.py": _EASYLM_OPT, "lm/model.py": _EASYLM_MODEL})  # fmt: skip
    md = extract_metadata(tmp_path, "python train.py")
    assert (md.dataset, md.global_batch_size, md.learning_rate, md.max_steps) == ("C4", 8, 0.01, 10000)
    md = extract_metadata(
        tmp_path,
        "python train.py --train_dataset.type=json --train_dataset.json_dataset.path=/data/redpajama.jsonl "
        "--train_dataset.json_dataset.batch_size=2048 --llama.base_model=llama_7b",
    )
    assert md.global_batch_size == 2048
    assert md.task != "language_model_finetuning"


_STYLETTS_README = "# StyleTTS 2: Towards Human-Level Text-to-Speech\n\nTrain with `python train_first.py`.\n"
_STYLETTS_TRAIN = """
import click
import yaml
import torch
from models import build_model


@click.command()
@click.option('-p', '--config_path', default='Configs/config.yml', type=str)
def main(config_path):
    config = yaml.safe_load(open(config_path))
    model = build_model(config['model_params'])
    optimizer = torch.optim.AdamW([p for m in model.values() for p in m.parameters()], lr=1e-4)


if __name__ == '__main__':
    main()
"""
_STYLETTS_MODELS = """
from Modules.istftnet import Decoder


def build_model(args):
    return {'decoder': Decoder(args['hidden_dim'])}
"""
_ISTFTNET = (
    "import torch.nn as nn\n\n\nclass Decoder(nn.Module):\n    def __init__(self, dim):\n        super().__init__()\n"
)


def test_a_type_setting_of_a_part_names_the_project_with_that_part(tmp_path: Path) -> None:
    """``model_params.decoder.type: istftnet`` (its module ``Modules/istftnet.py``) names the decoder, one part of a
    model that is a dict of modules: the model is the README's project with that decoder, "StyleTTS 2 (istftnet)"
    (the commit before called the whole model "istftnet")."""
    write(tmp_path, {"README.md": _STYLETTS_README, "train_first.py": _STYLETTS_TRAIN, "models.py": _STYLETTS_MODELS,
                     "Modules/__init__.py": "", "Modules/istftnet.py": _ISTFTNET,
                     "Configs/config.yml": "model_params:\n  hidden_dim: 512\n  decoder:\n    type: istftnet\n"})  # fmt: skip
    md = extract_metadata(tmp_path, "python train_first.py --config_path Configs/config.yml")
    assert md.model_name == "StyleTTS 2 (istftnet)"
