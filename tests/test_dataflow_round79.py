"""Round 79's misses (measured once at first sight, then worked on), as mechanisms: a Slurm batch script
(``sbatch job.sh``: its ``#SBATCH`` allocation, ``srun`` tasks, the GPUs each node sees); a settings class named by a
bare word of the command (``python submit.py b32_400m``) with a submitit launcher's nodes and GPUs, a module reached
through a dotted string handed to ``importlib``, and a CLIP factory's model size; Kaldi's ``parse_options.sh`` in a
speech recipe, a launcher's process count set at run time, a recipe folder naming its corpus and a registry dict of
model classes behind a symlinked package; a model that scores the trained one (``gen_ppl_eval_model``) is not it, a
diffusion model of text is a language model, Hydra's absolute group paths and a ``strategy`` group; detectors named
for their family; a template checkpoint path names its family; adapters loaded with ``PeftModel.from_pretrained``; a
random-number ``Generator`` is no model."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.advisor.extract.slurm import allocation
from tests.repo_files import write

_HYDRA_MAIN = """
import hydra
import lightning as L
import torch

import diffusion


@hydra.main(version_base=None, config_path="configs", config_name="config")
def main(config):
    model = diffusion.Diffusion(config)
    trainer = hydra.utils.instantiate(config.trainer, strategy=hydra.utils.instantiate(config.strategy))
    trainer.fit(model)


if __name__ == "__main__":
    main()
"""

_DIFFUSION = """
import lightning as L
import torch
import transformers


class Diffusion(L.LightningModule):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.backbone = torch.nn.Linear(8, 8)
        self.gen_ppl_eval_model_name_or_path = config.eval.gen_ppl_eval_model_name_or_path

    def eval_ppl(self):
        eval_model = transformers.AutoModelForCausalLM.from_pretrained(self.gen_ppl_eval_model_name_or_path).eval()
        return eval_model

    def configure_optimizers(self):
        return torch.optim.AdamW(self.backbone.parameters(), lr=self.config.optim.lr)

    def training_step(self, batch, i):
        noise = torch.randn_like(batch)  # masked diffusion over tokens: q_xt, sample noise levels
        return self.backbone(noise).mean()
"""

_HYDRA_CONFIG = """
defaults:
  - _self_
  - /data: openwebtext
  - /strategy: ddp
loader:
  global_batch_size: 512
  batch_size: 64
optim:
  lr: 3e-4
eval:
  gen_ppl_eval_model_name_or_path: gpt2-large
trainer:
  _target_: lightning.Trainer
  accelerator: cuda
  num_nodes: 1
  devices: ${device_count:}
  precision: bf16
  max_steps: 1000000
"""

_SBATCH = """#!/bin/bash
#SBATCH -J mdlm                       # job name
#SBATCH -N 1                          # nodes
#SBATCH --ntasks-per-node=4
#SBATCH --gres=gpu:4                  # GPUs per node
#SBATCH --partition=gpu

srun python -u -m main \\
  loader.batch_size=16 \\
  data=lm1b
"""


def _mdlm(tmp_path: Path) -> Path:
    return write(
        tmp_path,
        {
            "main.py": _HYDRA_MAIN,
            "diffusion.py": _DIFFUSION,
            "configs/config.yaml": _HYDRA_CONFIG,
            "configs/data/openwebtext.yaml": "train: openwebtext-train\ntokenizer_name_or_path: gpt2\n",
            "configs/data/lm1b.yaml": "train: lm1b\ntokenizer_name_or_path: bert-base-uncased\n",
            "configs/strategy/ddp.yaml": "_target_: lightning.pytorch.strategies.DDPStrategy\n",
            "scripts/train.sh": _SBATCH,
        },
    )


def test_a_slurm_batch_script_runs_its_tasks_on_the_gpus_it_allocates(tmp_path: Path) -> None:
    """`sbatch scripts/train.sh`: its `#SBATCH` lines allocate one node of four tasks and four GPUs; `srun python -m
    main` starts a process per task, each with the per-device batch the command sets (the global batch stays)."""
    m = extract_metadata(_mdlm(tmp_path), "sbatch scripts/train.sh")
    assert (m.num_gpus, m.distributed, m.batch_size_per_device) == (4, "ddp", 16)
    assert (m.max_steps, m.learning_rate, m.precision) == (1000000, 3e-4, "bf16")


def test_slurm_options_override_the_scripts_directives() -> None:
    """`sbatch -N 2 --gpus-per-node=8 job.sh` over the script's `-N 1 --gres=gpu:4`; a total `--gpus` spread over
    the nodes; a `gres` of another resource is no GPU."""
    script = (
        "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --gres=gpu:a100:4\n#SBATCH --ntasks-per-node=4\necho hi\n#SBATCH -N 9\n"
    )
    assert allocation(script, []).gpus_per_node == 4 and allocation(script, []).nodes == 1  # (after a command: none)
    over = allocation(script, ["-N", "2", "--gpus-per-node=8"])
    assert (over.nodes, over.tasks, over.gpus_per_node) == (2, 8, 8)
    assert allocation("#SBATCH --nodes=2 --gpus=16\n", []).gpus_per_node == 8
    assert allocation("#SBATCH --gres=mps:100\n", []).gpus_per_node is None


def test_a_text_diffusion_model_its_evaluator_and_hydra_groups(tmp_path: Path) -> None:
    """The model that scores samples (`from_pretrained(self.gen_ppl_eval_model_name_or_path)`, an `eval.` setting)
    is not the trained one; noise and diffusion words over OpenWebText make a language model, not an image
    generator; `- /strategy: ddp` is the `strategy` group (a DDP strategy), and `data=lm1b` replaces `/data`."""
    root = _mdlm(tmp_path)
    m = extract_metadata(root, "python main.py loader.batch_size=16 data=openwebtext")
    assert m.model_name != "gpt2-large" and m.params_millions != 774.0
    assert (m.task, m.dataset, m.distributed) == ("language_modeling", "OpenWebText", "ddp")
    assert extract_metadata(root, "python main.py data=lm1b").dataset == "LM1B"


_SUBMIT = """
import argparse
import submitit


class Trainer:
    def __init__(self, args):
        self.args = args

    def __call__(self):
        import importlib
        main_func_str = "src.training.main.main"
        module_name, func_name = main_func_str.rsplit(".", 1)
        module = importlib.import_module(module_name)
        getattr(module, func_name)(self.args.config)


def submit():
    parser = argparse.ArgumentParser()
    parser.add_argument("config_name", type=str)
    parser.add_argument("--ngpus", default=None, type=int)
    parser.add_argument("--nodes", default=None, type=int)
    args = parser.parse_args()
    from configs import search_config
    config = search_config(args.config_name)
    args.ngpus = args.ngpus or config.ngpus
    args.nodes = args.nodes or config.nodes
    executor = submitit.AutoExecutor(folder="logs")
    executor.update_parameters(gpus_per_node=args.ngpus, tasks_per_node=args.ngpus, nodes=args.nodes)
    executor.submit(Trainer(args))


if __name__ == "__main__":
    submit()
"""

_CONFIGS_INIT = """
class Config:
    batch_size = 64
    epochs = 32
    lr = 5.0e-4
    precision = "amp"
    model = "RN50"
    train_data = None


def search_config(config_name):
    import importlib
    module = importlib.import_module("configs.runs")
    return getattr(module, config_name)()
"""

_RUNS = """
from dataclasses import dataclass
from configs import Config


@dataclass
class b32_400m(Config):
    train_data = "data/400m/{0..60800}.tar"
    batch_size = 512
    model = "ViT-B-32-quickgelu"
    nodes = 16
    ngpus = 4


@dataclass
class l14_400m(b32_400m):
    model = "ViT-L-14-quickgelu"
    lr = 0.0004
    batch_size = 256
    ngpus = 8
"""

_CLIP_MAIN = """
import sys
import torch
from src.open_clip.factory import create_model_and_transforms


def main(args):
    model, _, _ = create_model_and_transforms(args.model, precision=args.precision)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        loss = model(torch.zeros(args.batch_size)).mean()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    from configs import search_config
    main(search_config(sys.argv[1]))
"""


def test_a_settings_class_named_on_the_command_line(tmp_path: Path) -> None:
    """`python submit.py l14_400m`: the class of that name (over its bases) sets batch, rate, epochs, model and the
    submitit allocation (16 nodes x 8 GPUs); the CLIP factory the dotted `main_func` string reaches sizes the model
    as a CLIP (image and text towers); the WebDataset shards name their folder."""
    root = write(
        tmp_path,
        {
            "submit.py": _SUBMIT,
            "configs/__init__.py": _CONFIGS_INIT,
            "configs/runs.py": _RUNS,
            "src/__init__.py": "",
            "src/training/__init__.py": "",
            "src/training/main.py": _CLIP_MAIN,
            "src/open_clip/__init__.py": "",
            "src/open_clip/factory.py": "def create_model_and_transforms(name, precision='fp32'):\n    pass\n",
        },
    )
    m = extract_metadata(root, "python submit.py l14_400m")
    assert (m.batch_size_per_device, m.learning_rate, m.epochs, m.precision) == (256, 4e-4, 32, "fp16")
    assert (m.num_gpus, m.global_batch_size, m.distributed) == (128, 32768, "ddp")
    assert m.params_millions == 427.6 and m.dataset == "400m"
    small = extract_metadata(root, "torchrun --nproc_per_node=8 src/training/main.py b32_400m")
    assert (small.batch_size_per_device, small.global_batch_size, small.params_millions) == (512, 4096, 151.3)


_RUN_SH = """#!/bin/bash
. ./path.sh || exit 1;
if command -v nvidia-smi &> /dev/null; then
  num_gpus=$(nvidia-smi -L | wc -l)
  gpu_list=$(seq -s, 0 $((num_gpus-1)))
else
  num_gpus=-1
  gpu_list="-1"
fi
export CUDA_VISIBLE_DEVICES="${gpu_list}"
stage=0
stop_stage=5
train_config=conf/train_conformer.yaml
dir=exp/conformer
. tools/parse_options.sh || exit 1;
if [ ${stage} -le 4 ] && [ ${stop_stage} -ge 4 ]; then
  torchrun --nnodes=1 --nproc_per_node=$num_gpus \\
    wenet/bin/train.py \\
      --config $train_config \\
      --train_data data/train/data.list \\
      --model_dir $dir
fi
"""

_WENET_TRAIN = """
import argparse
import torch
import yaml
from wenet.utils.init_model import init_model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--train_data", required=True)
    parser.add_argument("--model_dir", required=True)
    args = parser.parse_args()
    with open(args.config) as fin:
        configs = yaml.load(fin, Loader=yaml.FullLoader)
    model = init_model(configs)
    generator = torch.Generator()
    generator.manual_seed(777)
    model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=configs["optim_conf"]["lr"])
    for epoch in range(configs["max_epoch"]):
        loss = model(torch.zeros(1))
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
"""

_INIT_MODEL = """
from wenet.transformer.asr import ASRModel

WENET_MODEL_CLASSES = {
    "asr_model": ASRModel,
}


def init_model(configs):
    return WENET_MODEL_CLASSES[configs["model"]](configs)
"""

_ASR_CONFIG = """
encoder: conformer
model: asr_model
dataset: asr
dataset_conf:
  batch_conf:
    batch_size: 16
max_epoch: {epochs}
optim: adam
optim_conf:
  lr: {lr}
"""


def test_a_speech_recipe_with_kaldi_options_and_a_symlinked_package(tmp_path: Path) -> None:
    """`bash run.sh --stage 4 --train_config conf/b.yaml` in `examples/aishell/s0`: `parse_options.sh` sets the
    script's variables; `--nproc_per_node=$num_gpus` is several processes, how many unknown (not the `-1` of a CPU
    arm); the package is a symlink to the repository's `wenet/`; the registry keys `asr_model` to `ASRModel` (a
    `torch.Generator` is no model); `dataset: asr` is a loader's kind, the recipe folder names the corpus."""
    write(
        tmp_path,
        {
            "wenet/__init__.py": "",
            "wenet/bin/train.py": _WENET_TRAIN,
            "wenet/utils/__init__.py": "",
            "wenet/utils/init_model.py": _INIT_MODEL,
            "wenet/transformer/__init__.py": "",
            "wenet/transformer/asr.py": "import torch\n\n\nclass ASRModel(torch.nn.Module):\n    pass\n",
            "tools/parse_options.sh": "#!/bin/bash\n",
            "examples/aishell/s0/path.sh": "export PYTHONPATH=../../../:$PYTHONPATH\n",
            "examples/aishell/s0/run.sh": _RUN_SH,
            "examples/aishell/s0/conf/train_conformer.yaml": _ASR_CONFIG.format(epochs=240, lr=0.002),
            "examples/aishell/s0/conf/train_u2.yaml": _ASR_CONFIG.format(epochs=360, lr=0.001),
        },
    )
    recipe = tmp_path / "examples/aishell/s0"
    (recipe / "wenet").symlink_to("../../../wenet")
    (recipe / "tools").symlink_to("../../../tools")
    m = extract_metadata(recipe, "bash run.sh --stage 4 --stop_stage 4", repo=tmp_path)
    assert (m.epochs, m.learning_rate, m.batch_size_per_device) == (240, 0.002, 16)
    assert (m.distributed, m.num_gpus, m.model_name, m.dataset) == ("ddp", None, "ASRModel", "AISHELL-1")
    other = extract_metadata(recipe, "bash run.sh --stage 4 --train_config conf/train_u2.yaml", repo=tmp_path)
    assert (other.epochs, other.learning_rate) == (360, 0.001)


_DETR_MAIN = """
import argparse
import torch
import torchvision
from models.detector import ConditionalDETR


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", default=1e-4, type=float)
    parser.add_argument("--batch_size", default=2, type=int)
    parser.add_argument("--epochs", default=50, type=int)
    parser.add_argument("--coco_path", type=str)
    args = parser.parse_args()
    model = ConditionalDETR(num_queries=300)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loader = torch.utils.data.DataLoader(torchvision.datasets.CocoDetection(args.coco_path, ""), args.batch_size)
    for epoch in range(args.epochs):
        for images, targets in loader:
            loss = model(images, targets)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
"""

_DETECTOR = """
import torch
import torchvision
from scipy.optimize import linear_sum_assignment


class ConditionalDETR(torch.nn.Module):
    def __init__(self, num_queries):
        super().__init__()
        self.backbone = torchvision.models.resnet50()
        self.query_embed = torch.nn.Embedding(num_queries, 256)
        self.bbox_embed = torch.nn.Linear(256, 4)

    def forward(self, images, targets):
        boxes = self.bbox_embed(self.query_embed.weight)  # predicted boxes, matched to the target boxes
        pred_boxes = box_cxcywh_to_xyxy(boxes)
        tgt_boxes = box_cxcywh_to_xyxy(targets["boxes"])
        row, col = linear_sum_assignment(-torchvision.ops.generalized_box_iou(pred_boxes, tgt_boxes).detach())
        loss_bbox = torch.nn.functional.l1_loss(pred_boxes[row], tgt_boxes[col])
        loss_giou = 1 - torch.diag(torchvision.ops.generalized_box_iou(pred_boxes[row], tgt_boxes[col]))
        keep = torchvision.ops.nms(pred_boxes, boxes[:, 0], iou_threshold=0.5)
        return loss_bbox + loss_giou.sum() + keep.numel() * 0


def box_cxcywh_to_xyxy(x):
    cx, cy, w, h = x.unbind(-1)
    return torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1)
"""


def test_a_detector_named_for_its_family_leads_its_backbone(tmp_path: Path) -> None:
    """A detector class over a ResNet-50 (`ConditionalDETR`) is named first, its backbone after it, in a module
    named for detection."""
    root = write(tmp_path, {"main.py": _DETR_MAIN, "models/__init__.py": "", "models/detector.py": _DETECTOR})
    m = extract_metadata(root, "python main.py --coco_path /data/coco")
    assert m.model_name is not None and m.model_name.startswith("ConditionalDETR (")


_SFT = """
from dataclasses import dataclass, field
from typing import Optional
import transformers
from transformers import HfArgumentParser, Trainer, TrainingArguments, AutoModelForCausalLM
from peft import LoraConfig, PeftModel, get_peft_model


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None)


@dataclass
class MyTrainingArguments(TrainingArguments):
    peft_path: Optional[str] = field(default=None)


def main():
    parser = HfArgumentParser((ModelArguments, MyTrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    if training_args.peft_path is not None:
        model = PeftModel.from_pretrained(model, training_args.peft_path)
    else:
        model = get_peft_model(model, LoraConfig(r=8))
    trainer = Trainer(model=model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    main()
"""


def test_a_template_checkpoint_path_and_loaded_adapters(tmp_path: Path) -> None:
    """`--model_name_or_path path/to/hf/llama/dir`: the path's only name is the family (not `dir`); adapters loaded
    by `PeftModel.from_pretrained` (the `get_peft_model` arm ruled out) are PEFT all the same."""
    root = write(tmp_path, {"sft.py": _SFT})
    m = extract_metadata(
        root,
        "torchrun --nproc_per_node 1 sft.py --model_name_or_path path/to/hf/llama/dir --peft_path path/to/peft "
        "--per_device_train_batch_size 1 --learning_rate 1e-4 --output_dir out",
    )
    assert m.model_name is not None and m.model_name.lower().startswith("llama")
    assert "PEFT" in m.framework
