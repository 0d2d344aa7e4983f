"""Round 60's misses, as mechanisms: argbind (a YAML loaded by ``--args.load`` with its ``$include`` list,
``argbind.bind`` filling a callable's keyword arguments and a decorated function's parameters from it, scoped
keys); a library object's ``.autocast()`` is no precision by itself; audiotools' ``prepare_dataloader`` splits the
batch over the ranks; a batch that divides a step count is no per-rank batch; timm's ``amp_autocast =
torch.cuda.amp.autocast``; the time-series benchmarks (ETT, Weather) and their task; a parser default the entry
replaces after parsing names no dataset; ``--amp bf16``; a segmentation head reached through a package's
``__init__`` beside the classifier the job trains; a frozen autoencoder is not the trained model; a setting set
as an attribute of a loaded config; a substring test on a setting; a getter's constructor called by key; a Hub
dataset id given to a data-mixer setting; SFT data; DeepSpeed's ZeRO stage is no training stage."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_ARGBIND_TRAIN = """
import argbind
import torch
import torch.nn as nn
from audiotools import ml

AdamW = argbind.bind(torch.optim.AdamW, "generator")
Accelerator = argbind.bind(ml.Accelerator, without_prefix=True)


class Codec(nn.Module):
    def __init__(self, dim: int = 8, depth: int = 1):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])


Codec = argbind.bind(Codec)


@argbind.bind(without_prefix=True)
def train(args, accel, num_iters: int = 10, batch_size: int = 2):
    model = Codec()
    with argbind.scope(args, "generator"):
        opt = AdamW(model.parameters())
    loader = accel.prepare_dataloader(dataset, batch_size=batch_size)
    for step, batch in enumerate(loader):
        with accel.autocast():
            loss = model(batch)
        if step == num_iters - 1:
            break


if __name__ == "__main__":
    args = argbind.parse_args()
    with argbind.scope(args):
        accel = Accelerator()
        train(args, accel)
"""

_BASE_YML = """
Codec.dim: 64
Codec.depth: 4
AdamW.lr: 0.001
generator/AdamW.lr: 0.0001
amp: false
num_iters: 250000
batch_size: 72
"""


def _argbind_repo(tmp_path: Path) -> Path:
    return write(
        tmp_path,
        {
            "scripts/train.py": _ARGBIND_TRAIN,
            "conf/base.yml": _BASE_YML,
            "conf/1gpu.yml": "$include:\n  - conf/base.yml\nbatch_size: 12\n",
            "conf/final.yml": "$include:\n  - conf/base.yml\n",
        },
    )


def test_argbind_config_fills_bound_callables_and_decorated_parameters(tmp_path: Path) -> None:
    """`--args.load conf/1gpu.yml` includes base.yml first and overrides its batch; `argbind.bind(Codec)` builds the
    model with `Codec.dim`/`Codec.depth`; the scoped `generator/AdamW.lr` beats `AdamW.lr` under
    `argbind.scope(args, "generator")`; `num_iters` bounds the loop; `accel.autocast()` with `amp: false` is fp32."""
    root = _argbind_repo(tmp_path)
    meta = extract_metadata(root, "python scripts/train.py --args.load conf/1gpu.yml --save_path runs/a")
    assert meta.learning_rate == 0.0001
    assert meta.params_millions is not None
    assert abs(meta.params_millions - 4 * (64 * 64 + 64) / 1e6) < 1e-3
    assert meta.batch_size_per_device == 12
    assert meta.precision == "fp32"


def test_audiotools_loader_splits_the_config_batch_over_the_ranks(tmp_path: Path) -> None:
    """`@argbind.bind(without_prefix=True) def train(..., batch_size=2)` reads `batch_size: 72` from the config, and
    audiotools' `accel.prepare_dataloader(batch_size=)` divides it by the world size: 9 per GPU on 8."""
    root = _argbind_repo(tmp_path)
    meta = extract_metadata(
        root, "torchrun --nproc_per_node 8 scripts/train.py --args.load conf/final.yml --save_path runs/b"
    )
    assert (meta.batch_size_per_device, meta.global_batch_size) == (9, 72)


_TIMM_TRAIN = """
import argparse
from contextlib import suppress
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as NativeDDP

has_native_amp = False
try:
    if getattr(torch.cuda.amp, "autocast") is not None:
        has_native_amp = True
except AttributeError:
    pass

parser = argparse.ArgumentParser()
parser.add_argument("-b", "--batch-size", type=int, default=128)
parser.add_argument("--epochs", type=int, default=300)
parser.add_argument("--native-amp", action="store_true", default=False)
parser.add_argument("--world-size", type=int, default=1)


def main():
    args = parser.parse_args()
    use_amp = None
    if args.native_amp and has_native_amp:
        use_amp = "native"
    model = nn.Linear(8, 8)
    model = NativeDDP(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    steps = int(args.epochs * 1281167 // args.batch_size // args.world_size)
    amp_autocast = suppress
    if use_amp == "native":
        amp_autocast = torch.cuda.amp.autocast
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size)
    for epoch in range(args.epochs):
        train_one_epoch(model, loader, amp_autocast=amp_autocast)


def train_one_epoch(model, loader, amp_autocast=suppress):
    for x in loader:
        with amp_autocast():
            model(x)


if __name__ == "__main__":
    main()
"""


def test_timm_native_amp_bound_as_a_context_manager_and_a_step_count_divisor(tmp_path: Path) -> None:
    """`amp_autocast = torch.cuda.amp.autocast` under `use_amp == "native"` (set by `--native-amp`) is fp16; a
    batch that divides the trainset size into steps (`… // args.batch_size // args.world_size`) is not split over
    the ranks."""
    root = write(tmp_path, {"train.py": _TIMM_TRAIN})
    cmd = "python -m torch.distributed.launch --nproc_per_node=8 train.py -b 128"
    meta = extract_metadata(root, f"{cmd} --native-amp")
    assert (meta.batch_size_per_device, meta.global_batch_size) == (128, 1024)
    assert meta.precision == "fp16"
    assert extract_metadata(root, cmd).precision == "fp32"


_INFORMER_MAIN = """
import argparse
from exp.exp_informer import Exp_Informer

parser = argparse.ArgumentParser()
parser.add_argument('--data', type=str, required=True, default='ETTh1')
parser.add_argument('--root_path', type=str, default='./data/ETT/')
parser.add_argument('--data_path', type=str, default='ETTh1.csv')
parser.add_argument('--batch_size', type=int, default=32)
args = parser.parse_args()

data_parser = {
    'ETTh1': {'data': 'ETTh1.csv', 'T': 'OT'},
    'ETTm1': {'data': 'ETTm1.csv', 'T': 'OT'},
    'WTH': {'data': 'WTH.csv', 'T': 'WetBulbCelsius'},
}
if args.data in data_parser.keys():
    data_info = data_parser[args.data]
    args.data_path = data_info['data']

exp = Exp_Informer(args)
exp.train()
"""


def test_time_series_benchmark_and_a_default_replaced_after_parsing(tmp_path: Path) -> None:
    """`--data WTH` selects the data file after parsing (`args.data_path = data_info['data']`): the parser's default
    `ETTh1.csv` is not the data; the Weather benchmark is for forecasting, and so is ETTm1."""
    root = write(tmp_path, {"main_informer.py": _INFORMER_MAIN, "exp/exp_informer.py": "class Exp_Informer:\n  pass\n"})
    meta = extract_metadata(root, "python -u main_informer.py --data WTH")
    assert (meta.dataset, meta.task) == ("Weather", "time_series_forecasting")
    assert extract_metadata(root, "python -u main_informer.py --data ETTm1").dataset == "ETTm1"


_CLS_ENTRY = """
import argparse
import torch
from mypkg.zoo import create_cls_model

parser = argparse.ArgumentParser()
parser.add_argument("config")
parser.add_argument("--amp", type=str, choices=["fp32", "fp16", "bf16"], default="fp32")
args = parser.parse_args()
model = create_cls_model("b1")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
"""
_SEG_HEAD = "\n".join(
    f"class SegHead{i}(nn.Module):\n    '''segmentation head {i}: mIoU, semantic segmentation'''\n" for i in range(12)
)


def test_amp_choice_string_and_a_segmentation_module_only_reached_through_a_package(tmp_path: Path) -> None:
    """`--amp bf16` (a choice of fp32/fp16/bf16) is bf16; a package whose `__init__` also imports a segmentation
    module (all its segmentation words in that one file, none where the job runs) does not make the classifier the
    job trains a segmentation job."""
    root = write(
        tmp_path,
        {
            "train_cls.py": _CLS_ENTRY,
            "mypkg/__init__.py": "",
            "mypkg/zoo.py": "from mypkg.models import *\n\ndef create_cls_model(name):\n    return None\n",
            "mypkg/models/__init__.py": "from mypkg.models.cls import *\nfrom mypkg.models.seg import *\n",
            "mypkg/models/cls.py": "import torch.nn as nn\n\nclass Cls(nn.Module):\n    pass\n",
            "mypkg/models/seg.py": f"import torch.nn as nn\n\n{_SEG_HEAD}",
            "configs/b1.yaml": "net: b1\n",
        },
    )
    meta = extract_metadata(root, "torchrun --nproc_per_node=8 train_cls.py configs/b1.yaml --amp bf16")
    assert meta.precision == "bf16"
    assert meta.task != "semantic_segmentation"


_LATTE_TRAIN = """
import argparse
import torch
from omegaconf import OmegaConf
from diffusers.models import AutoencoderKL
from transformers import T5EncoderModel
from torch.nn.parallel import DistributedDataParallel as DDP
from models import get_models
from diffusion import create_diffusion


def main(args):
    sample_size = args.image_size // 8
    args.latent_size = sample_size
    model = get_models(args)
    diffusion = create_diffusion(timestep_respacing="")
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_path, subfolder="vae").to("cuda")
    model = DDP(model.to("cuda"))
    vae.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0)
    loader = torch.utils.data.DataLoader(dataset, batch_size=int(args.local_batch_size))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default="./configs/sky_train.yaml")
    args = parser.parse_args()
    main(OmegaConf.load(args.config))
"""
_LATTE_MODELS = """
import torch.nn as nn
from timm.models.vision_transformer import Mlp, PatchEmbed
from .latte_t2v import LatteT2V


class Latte(nn.Module):
    def __init__(self, input_size=32, hidden_size=64, depth=2):
        super().__init__()
        self.proj = nn.Linear(input_size, hidden_size)
        self.blocks = nn.ModuleList([nn.Linear(hidden_size, hidden_size) for _ in range(depth)])


def Latte_S_2(**kwargs):
    return Latte(hidden_size=64, depth=2, **kwargs)


Latte_models = {'Latte-S/2': Latte_S_2}


def get_models(args):
    if 'LatteT2V' in args.model:
        return LatteT2V.from_pretrained(args.pretrained_model_path, subfolder="transformer")
    elif 'Latte' in args.model:
        return Latte_models[args.model](input_size=args.latent_size)
    else:
        raise NotImplementedError(args.model)
"""
_LATTE_CONFIG = """
dataset: "sky"
pretrained_model_path: "/path/to/pretrained/Latte/"
model: Latte-S/2
image_size: 256
local_batch_size: 5
"""


def test_frozen_autoencoder_a_substring_arm_and_an_attribute_set_on_a_loaded_config(tmp_path: Path) -> None:
    """`vae.requires_grad_(False)`: the autoencoder loaded `from_pretrained` is not the trained model; `'LatteT2V' in
    args.model` is false for `Latte-S/2`, so the registry arm builds it, with `args.latent_size` set on the loaded
    config before; its module builds from timm's ViT blocks: a vision transformer. `transformers` imported and never
    read is no framework of the job."""
    root = write(
        tmp_path,
        {
            "train.py": _LATTE_TRAIN,
            "models/__init__.py": _LATTE_MODELS,
            "models/latte_t2v.py": "class LatteT2V:\n    pass\n",
            "diffusion/__init__.py": "def create_diffusion(timestep_respacing):\n    return None\n",
            "configs/sky_train.yaml": _LATTE_CONFIG,
        },
    )
    meta = extract_metadata(root, "torchrun --nproc_per_node=2 train.py --config ./configs/sky_train.yaml")
    assert meta.model_name == "Latte-S/2"
    assert meta.params_millions is not None
    assert abs(meta.params_millions - (32 * 64 + 64 + 2 * (64 * 64 + 64)) / 1e6) < 1e-4
    assert meta.model_type == "vision_transformer"
    assert "HF Transformers" not in meta.framework


_GETTER_MAIN = """
import argparse
import torch
from nets import create_by_name

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="Net-B")
args = parser.parse_args()
model = create_by_name(args.arch, deploy=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
_GETTER_NETS = """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width, deploy=False):
        super().__init__()
        self.fc = nn.Linear(width, width)


def create_Net_A(deploy=False):
    return Net(4, deploy)


def create_Net_B(deploy=False):
    return Net(8, deploy)


func_dict = {'Net-A': create_Net_A, 'Net-B': create_Net_B}


def get_func_by_name(name):
    return func_dict[name]


def create_by_name(name, deploy=False):
    if 'plus' in name:
        raise NotImplementedError(name)
    else:
        return get_func_by_name(name)(deploy=deploy)
"""


def test_constructor_a_getter_returns_for_the_key(tmp_path: Path) -> None:
    """`get_func_by_name(name)(deploy=…)` in the arm the setting takes (`'plus' in name` is false): the key names the
    variant built."""
    root = write(tmp_path, {"main.py": _GETTER_MAIN, "nets.py": _GETTER_NETS})
    meta = extract_metadata(root, "python main.py --arch Net-A")
    assert meta.model_name == "Net-A"


_MIXER_SFT = """
from dataclasses import dataclass, field
import torch
from transformers import AutoModelForCausalLM
from utils import ArgumentParserPlus


@dataclass
class FlatArguments:
    model_name_or_path: str = None
    dataset_mixer_list: list = field(default_factory=lambda: ["allenai/tulu-3-sft-olmo-2-mixture", "1.0"])
    learning_rate: float = 2e-5
    per_device_train_batch_size: int = 8


def main(args):
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)


if __name__ == "__main__":
    parser = ArgumentParserPlus((FlatArguments,))
    args = parser.parse()
    main(args)
"""
_DS_CONF = '{"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": "auto"}'


def test_hub_dataset_of_a_mixer_sft_data_and_a_zero_stage(tmp_path: Path) -> None:
    """`--dataset_mixer_list allenai/tulu-3-sft-mixture 1.0`: the Hub id names the data, named as SFT data
    (instruction tuning); a DPO entry (`dpo_tune.py`) under DeepSpeed ZeRO-3: the stage 3 is no training stage, the
    entry's name says DPO."""
    root = write(
        tmp_path,
        {
            "open_instruct/finetune.py": _MIXER_SFT,
            "open_instruct/dpo_tune.py": _MIXER_SFT,
            "open_instruct/utils.py": "class ArgumentParserPlus:\n    pass\n",
            "configs/ds3.conf": _DS_CONF,
        },
    )
    launch = (
        "accelerate launch --mixed_precision bf16 --num_processes 8 --use_deepspeed "
        "--deepspeed_config_file configs/ds3.conf"
    )
    sft = extract_metadata(
        root,
        f"{launch} open_instruct/finetune.py --model_name_or_path meta-llama/Llama-3.1-8B "
        "--dataset_mixer_list allenai/tulu-3-sft-mixture 1.0",
    )
    assert (sft.dataset, sft.task) == ("allenai/tulu-3-sft-mixture", "instruction_finetuning")
    dpo = extract_metadata(
        root,
        f"{launch} open_instruct/dpo_tune.py --model_name_or_path allenai/Llama-3.1-Tulu-3-8B-SFT "
        "--dataset_mixer_list allenai/llama-3.1-tulu-3-8b-preference-mixture 1.0",
    )
    assert dpo.task == "preference_optimization_dpo"


_PLUS_FINETUNE = """
from dataclasses import dataclass, field
import torch
import transformers
from transformers import AutoModelForCausalLM
from peft import LoraConfig, get_peft_model
from utils import ArgumentParserPlus


@dataclass
class FlatArguments:
    model_name_or_path: str = None
    use_lora: bool = field(default=False)
    learning_rate: float = 2e-5


@dataclass
class TokenizerConfig:
    tokenizer_name: str = None


def main(args: FlatArguments, tc: TokenizerConfig):
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    if args.use_lora:
        model = get_peft_model(model, LoraConfig(r=64))
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)


if __name__ == "__main__":
    parser = ArgumentParserPlus((FlatArguments, TokenizerConfig))
    args, tc = parser.parse_args_into_dataclasses()
    main(args, tc)
"""


def test_parser_subclass_dataclasses_unpacked_and_handed_to_main_and_accelerate_value_flags(tmp_path: Path) -> None:
    """`--deepspeed_multinode_launcher standard` takes a value (the script comes after it); a subclass of
    HfArgumentParser given dataclasses (`ArgumentParserPlus((FlatArguments, TokenizerConfig))`), its results unpacked
    and handed to `main(args, tc)`: `args.use_lora` is FlatArguments' default False, so no PEFT adapters are built,
    and `--use_lora` turns them on."""
    root = write(
        tmp_path,
        {
            "open_instruct/finetune.py": _PLUS_FINETUNE,
            "open_instruct/utils.py": "class ArgumentParserPlus:\n    pass\n",
        },
    )
    cmd = (
        "accelerate launch --num_processes 8 --deepspeed_multinode_launcher standard open_instruct/finetune.py "
        "--model_name_or_path meta-llama/Llama-3.1-8B --learning_rate 5e-06"
    )
    meta = extract_metadata(root, cmd)
    assert meta.learning_rate == 5e-06
    assert meta.framework == ["PyTorch", "HF Transformers"]
    assert "PEFT" in extract_metadata(root, f"{cmd} --use_lora").framework
