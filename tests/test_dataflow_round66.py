"""Round 66's misses (measured once at first sight, then worked on), as mechanisms: a launch script's shell functions
run where a `case` arm calls them, after an option loop over `$#` (CvT's `run.sh`); a helper a package's
`__init__.py` re-exports is followed to its optimizer; code that copies a config file's items onto the parsed
options lets the file override them (PVT); a registered builder's layers say the family, a convolution inside an
attention module counting as the attention's projection; a batch divided by `(num_processes * accumulation)` is the
whole job's; weights loaded with `torch_dtype` from a setting (through `**kwargs`) are the precision; a Hydra group
`loss=sft` is the stage (HALOs); Lightning's `--gpus 0,1` stays the string the rate scaling splits, and
`'key' in cfg.section` is told from the config's keys (textual inversion, latent-diffusion)."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.budget import Budget, spending
from schedmate.agents.advisor.extract.launch import follow_shell_script, parse_command
from schedmate.agents.advisor.extract.metadata import extract_metadata
from schedmate.agents.advisor.extract.workspace import Workspace
from tests.repo_files import write

_RUN_SH = """#!/bin/bash

train() {
    python3 -m torch.distributed.launch \\
        --nnodes ${NODE_COUNT} \\
        --nproc_per_node ${GPUS} \\
        tools/train.py ${EXTRA_ARGS}
}

GPUS=`nvidia-smi -L | wc -l`
INSTALL_DEPS=false

while [[ $# -gt 0 ]]
do
key="$1"
case $key in
    -g|--gpus)
    GPUS=$2
    shift
    ;;
    -t|--job-type)
    JOB_TYPE=$2
    shift
    ;;
    -i|--install-deps)
    INSTALL_DEPS=true
    ;;
    *)
    EXTRA_ARGS="$EXTRA_ARGS $1"
    ;;
esac
shift
done

if $INSTALL_DEPS; then
    python -m pip install -r requirements.txt --user -q
fi

NODE_COUNT=1
case $JOB_TYPE in
    train)
    train
    ;;
    *)
    echo "unknown job type"
    ;;
esac
"""


def test_shell_function_called_in_case_arm_after_option_loop(tmp_path: Path) -> None:
    """`bash run.sh -g 4 -t train --cfg x.yaml LR 0.1`: the loop reads every option while `$# -gt 0`, the unset
    `EXTRA_ARGS` starts empty, `if $INSTALL_DEPS` with `false` skips pip, and `train` runs the function's body with
    the variables set by then."""
    root = write(tmp_path, {"run.sh": _RUN_SH, "tools/train.py": "import torch\n"})
    with spending(Budget()):
        launch = follow_shell_script(Workspace(root), parse_command("bash run.sh -g 4 -t train --cfg x.yaml LR 0.1"))
    assert launch.script == "tools/train.py"
    assert launch.nproc_per_node == 4 and launch.nnodes == 1
    assert launch.args == ["--cfg", "x.yaml", "LR", "0.1"]


_CVT_TRAIN = """
import argparse
import torch
import _init_paths
from optim import build_optimizer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.00025)
    args = parser.parse_args()
    model = torch.nn.Linear(4, 4)
    optimizer = build_optimizer(args, model)


if __name__ == "__main__":
    main()
"""

_OPTIM_BUILD = """
import torch.optim as optim


def build_optimizer(cfg, model):
    params = [{"params": list(model.parameters())}]
    return optim.AdamW(params, lr=cfg.lr)
"""


def test_helper_reexported_by_package_init(tmp_path: Path) -> None:
    """`from optim import build_optimizer`, where `optim/__init__.py` re-exports it from `.build`: the optimizer
    the helper builds receives the rate the command gives."""
    root = write(
        tmp_path,
        {
            "tools/train.py": _CVT_TRAIN,
            "tools/_init_paths.py": (
                "import os.path as osp\nimport sys\nsys.path.insert(0, osp.join(osp.dirname(__file__), '..', 'lib'))\n"
            ),
            "lib/optim/__init__.py": "from .build import build_optimizer\n",
            "lib/optim/build.py": _OPTIM_BUILD,
        },
    )
    meta = extract_metadata(root, "python tools/train.py --lr 0.003")
    assert meta.learning_rate == 0.003
    assert meta.provenance["learning_rate"].path == "use"


_PVT_MAIN = """
import argparse
import torch
from timm.models import create_model
import pvt
import utils


def get_args_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", default=128, type=int)
    parser.add_argument("--config", required=True, type=str)
    parser.add_argument("--model", default="pvt_small", type=str)
    return parser


def main(args):
    model = create_model(args.model, pretrained=False, num_classes=1000)
    data_loader_train = torch.utils.data.DataLoader(None, batch_size=args.batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)


if __name__ == "__main__":
    args = get_args_parser().parse_args()
    args = utils.update_from_config(args)
    main(args)
"""

_PVT_UTILS = """
import mmcv


def update_from_config(args):
    cfg = mmcv.Config.fromfile(args.config)
    for _, cfg_item in cfg._cfg_dict.items():
        for k, v in cfg_item.items():
            setattr(args, k, v)
    return args
"""

_PVT_MODEL = """
import torch.nn as nn
from timm.models.registry import register_model


class Attention(nn.Module):
    def __init__(self, dim, sr_ratio):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, dim * 2)
        self.proj = nn.Linear(dim, dim)
        self.sr = nn.Conv2d(dim, dim, kernel_size=sr_ratio, stride=sr_ratio)


class Block(nn.Module):
    def __init__(self, dim, sr_ratio):
        super().__init__()
        self.attn = Attention(dim, sr_ratio)
        self.fc1 = nn.Linear(dim, dim * 4)
        self.fc2 = nn.Linear(dim * 4, dim)


class Pyramid(nn.Module):
    def __init__(self, dims, srs, num_classes=1000):
        super().__init__()
        self.patch = nn.Conv2d(3, dims[0], kernel_size=4, stride=4)
        self.blocks = nn.ModuleList([Block(d, s) for d, s in zip(dims, srs)])
        self.head = nn.Linear(dims[-1], num_classes)


@register_model
def pvt_tiny(pretrained=False, **kwargs):
    return Pyramid([64, 64], [8, 4], **kwargs)


@register_model
def pvt_small(pretrained=False, **kwargs):
    return Pyramid([64, 128, 320, 512], [8, 4, 2, 1], **kwargs)
"""


def test_config_items_copied_onto_options_and_attention_convs(tmp_path: Path) -> None:
    """`--config configs/tiny.py` holding `cfg = dict(model='pvt_tiny')`, copied onto the options by a
    `setattr(args, k, v)` loop: the model is pvt_tiny, not the option's default; its registered builder's network
    attends with linear layers, its spatial-reduction convolutions sit inside the attention module: a ViT."""
    root = write(
        tmp_path,
        {
            "main.py": _PVT_MAIN,
            "utils.py": _PVT_UTILS,
            "pvt.py": _PVT_MODEL,
            "configs/tiny.py": "cfg = dict(\n    model='pvt_tiny',\n    drop_path=0.1,\n)\n",
        },
    )
    meta = extract_metadata(root, "python main.py --config configs/tiny.py")
    assert meta.model_name == "pvt_tiny"
    assert meta.model_type == "vision_transformer"
    assert meta.params_millions == 0.495  # (its spatial-reduction convolutions hold most of it)


_HALOS_LAUNCH = """
import hydra
import torch
from accelerate import Accelerator
from omegaconf import DictConfig
from transformers import AutoModelForCausalLM
from train.dataloader import SFTDataLoader


def main(config: DictConfig):
    accelerator = Accelerator()
    config.model.microbatch_size = config.model.batch_size / (
        accelerator.num_processes * config.model.gradient_accumulation_steps
    )
    loader = SFTDataLoader(
        microbatch_size=config.model.microbatch_size,
        global_batch_size=config.model.batch_size,
        n_epochs=config.n_epochs,
    )
    policy_kwargs = {
        "torch_dtype": getattr(torch, config.model.policy_dtype),
        "attn_implementation": "eager",
    }
    policy = AutoModelForCausalLM.from_pretrained(config.model.name_or_path, **policy_kwargs)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=config.lr)


@hydra.main(version_base=None, config_path="config", config_name="config")
def hydra_main(config: DictConfig):
    main(config)


if __name__ == "__main__":
    hydra_main()
"""


def test_batch_split_over_processes_dtype_from_setting_and_loss_group(tmp_path: Path) -> None:
    """HALOs-style: `batch_size` 32 across all processes (4 from the accelerate config), the policy loaded in the
    `policy_dtype` a setting names through `**policy_kwargs`, and the Hydra group `loss=sft` the stage: per device 8,
    global 32, bf16, instruction tuning (a `loss/dpo.yaml` beside it changes nothing)."""
    root = write(
        tmp_path,
        {
            "launch.py": _HALOS_LAUNCH,
            "train/__init__.py": "",
            "train/dataloader.py": "class SFTDataLoader:\n    def __init__(self, **kw):\n        self.kw = kw\n",
            "config/config.yaml": "lr: 5e-6\nn_epochs: 1\ndefaults:\n- _self_\n- model: ???\n- loss: ???\n",
            "config/model/llama.yaml": (
                "name_or_path: null\npolicy_dtype: bfloat16\nbatch_size: 32\ngradient_accumulation_steps: 1\n"
            ),
            "config/loss/sft.yaml": "trainer: SFTTrainer\n",
            "config/loss/dpo.yaml": "beta: 0.1\ntrainer: DPOTrainer\n",
            "acc.yaml": "distributed_type: MULTI_GPU\nnum_processes: 4\n",
        },
    )
    meta = extract_metadata(
        root, "accelerate launch --config_file acc.yaml launch.py loss=sft model=llama ++model.name_or_path=org/llm-7b"
    )
    assert (meta.batch_size_per_device, meta.global_batch_size) == (8, 32)
    assert meta.precision == "bf16"
    assert meta.task == "instruction_finetuning"


_LDM_MAIN = """
import argparse
from omegaconf import OmegaConf
from pytorch_lightning import Trainer


def nondefault_trainer_args(opt):
    return ["gpus"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", nargs="*", default=[])
    parser.add_argument("--scale_lr", type=bool, default=True)
    parser = Trainer.add_argparse_args(parser)
    opt, unknown = parser.parse_known_args()
    configs = [OmegaConf.load(cfg) for cfg in opt.base]
    config = OmegaConf.merge(*configs)
    lightning_config = config.pop("lightning", OmegaConf.create())
    trainer_config = lightning_config.get("trainer", OmegaConf.create())
    for k in nondefault_trainer_args(opt):
        trainer_config[k] = getattr(opt, k)
    if not "gpus" in trainer_config:
        cpu = True
    else:
        cpu = False
    lightning_config.trainer = trainer_config
    model = instantiate_from_config(config.model)
    trainer = Trainer(**vars(argparse.Namespace(**trainer_config)))
    bs, base_lr = config.data.params.batch_size, config.model.base_learning_rate
    if not cpu:
        ngpu = len(lightning_config.trainer.gpus.strip(",").split(','))
    else:
        ngpu = 1
    if 'accumulate_grad_batches' in lightning_config.trainer:
        accumulate_grad_batches = lightning_config.trainer.accumulate_grad_batches
    else:
        accumulate_grad_batches = 1
    if opt.scale_lr:
        model.learning_rate = accumulate_grad_batches * ngpu * bs * base_lr
    else:
        model.learning_rate = base_lr
    trainer.fit(model, data)
"""


def test_lightning_rate_scaled_by_listed_gpus(tmp_path: Path) -> None:
    """latent-diffusion's `main.py`: `--gpus 0,1` is the string Lightning reads (two ids), the trainer section holds
    no `accumulate_grad_batches`, so the rate is 1 x 2 x 2 x 5e-3 = 0.02."""
    root = write(
        tmp_path,
        {
            "main.py": _LDM_MAIN,
            "cfg.yaml": (
                "model:\n  base_learning_rate: 5.0e-03\n  target: ldm.models.diffusion.ddpm.LatentDiffusion\n"
                "data:\n  params:\n    batch_size: 2\nlightning:\n  trainer:\n    benchmark: True\n    max_steps: 6100\n"
            ),
        },
    )
    meta = extract_metadata(root, "python main.py --base cfg.yaml -t --gpus 0,1")
    assert meta.learning_rate is not None and abs(meta.learning_rate - 0.02) < 1e-12


_CONTRIEVER = """
import argparse
import torch
import transformers


class Options:
    def __init__(self):
        self.parser = argparse.ArgumentParser()
        self.parser.add_argument("--train_data", nargs="+", default=[])
        self.parser.add_argument("--retriever_model_id", type=str, default="bert-base-uncased")
        self.parser.add_argument("--per_gpu_batch_size", default=64, type=int)
        self.parser.add_argument("--lr", type=float, default=1e-4)

    def parse(self):
        opt, _ = self.parser.parse_known_args()
        return opt


if __name__ == "__main__":
    opt = Options().parse()
    model = transformers.AutoModel.from_pretrained(opt.retriever_model_id)
    loader = torch.utils.data.DataLoader(None, batch_size=opt.per_gpu_batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=opt.lr)
"""


def test_data_folders_listed_and_multilingual_bert(tmp_path: Path) -> None:
    """`--train_data encoded/fr_XX encoded/en_XX` (an option taking several folders): the first folder names the
    data; bert-base-multilingual-cased is sized by its own vocabulary (177.9 M), not as bert-base (110 M)."""
    root = write(tmp_path, {"train.py": _CONTRIEVER})
    meta = extract_metadata(
        root,
        "python train.py --retriever_model_id bert-base-multilingual-cased --train_data encoded/fr_XX encoded/en_XX",
    )
    assert meta.dataset == "fr_XX"
    assert meta.params_millions == 177.9


_FACTORY = """
from transformers import AutoModelForCausalLM
from .wrapper import Wrapper


def create_model(lm_path):
    lang_encoder = AutoModelForCausalLM.from_pretrained(lm_path)
    model = Wrapper(lang_encoder, dim=64)
    return model, None
"""

_WRAPPED_TRAIN = """
import argparse
import torch
from pkg import create_model


class Sampler:
    def __init__(self, data, batch_size):
        self.batch_size = batch_size


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lm_path", default="org/lm-1b")
    parser.add_argument("--batch_size", type=int, default=16)
    args = parser.parse_args()
    model, _ = create_model(args.lm_path)
    loader = torch.utils.data.DataLoader(None, batch_size=1, batch_sampler=Sampler(None, batch_size=args.batch_size))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)


if __name__ == "__main__":
    main()
"""


def test_helper_returning_a_wrapper_and_loader_batched_by_its_sampler(tmp_path: Path) -> None:
    """A helper (re-exported by its package) loads a language model and returns a wrapper built around it: the LM is
    a part, not the model trained; a loader given `batch_size=1` beside a `batch_sampler` takes the sampler's batch."""
    root = write(
        tmp_path,
        {
            "train.py": _WRAPPED_TRAIN,
            "pkg/__init__.py": "from .factory import create_model\n",
            "pkg/factory.py": _FACTORY,
            "pkg/wrapper.py": "import torch.nn as nn\n\n\nclass Wrapper(nn.Module):\n    pass\n",
        },
    )
    meta = extract_metadata(root, "python train.py --batch_size 32")
    assert meta.model_name not in {"org/lm-1b", "lm-1b"}
    assert meta.batch_size_per_device == 32


def test_shell_function_calling_itself_ends(tmp_path: Path) -> None:
    """A hostile `run.sh` whose function calls itself (and another that calls it back) is expanded a bounded number
    of times: the launch is still read, and nothing loops or grows without end."""
    script = "go() {\n    go\n    python train.py --lr 0.1\n}\nback() {\n    go\n    back\n}\ngo\nback\n"
    root = write(tmp_path, {"run.sh": script, "train.py": "import torch\n"})
    with spending(Budget()):
        launch = follow_shell_script(Workspace(root), parse_command("bash run.sh"))
    assert launch.script == "train.py"
    assert launch.args == ["--lr", "0.1"]
