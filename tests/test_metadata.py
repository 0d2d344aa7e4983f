"""The first static metadata pass on small real-looking repositories written by the test (nothing executed)."""

from __future__ import annotations

from pathlib import Path

from schedmate.agents.advisor.extract.metadata import extract_metadata

TRAIN = """
import argparse
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
p = argparse.ArgumentParser()
p.add_argument('--config', '-c', type=str, required=True)
p.add_argument('--lr', type=float, default=1e-3)
args = p.parse_args()
"""


def test_argparse_json_config_and_launcher(tmp_path: Path) -> None:
    """torchrun + argparse + a JSON config: batch sizes, lr override, precision, GPUs, provenance."""
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "cfg.json").write_text(
        '{"train": {"batch_size": 32, "epochs": 7, "fp16_run": true,\n "gradient_accumulation_steps": 2}}'
    )
    md = extract_metadata(tmp_path, "torchrun --nproc_per_node=4 train.py -c cfg.json --lr 5e-4")
    assert (md.batch_size_per_device, md.global_batch_size, md.epochs) == (32, 32 * 2 * 4, 7)
    assert (md.learning_rate, md.precision, md.num_gpus, md.distributed) == (5e-4, "fp16", 4, "ddp")
    assert md.provenance["learning_rate"].file == "command"
    assert md.provenance["batch_size_per_device"].file == "cfg.json"


def test_yaml_llamafactory_style_with_overrides_and_deepspeed(tmp_path: Path) -> None:
    """A YAML recipe with key=value overrides and a DeepSpeed ZeRO-3 JSON."""
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 3}}')
    (tmp_path / "sft.yaml").write_text(
        "model_name_or_path: Qwen/Qwen3-4B\nstage: sft\nfinetuning_type: full\ndeepspeed: ds.json\n"
        "per_device_train_batch_size: 1\ngradient_accumulation_steps: 2\nlearning_rate: 1.0e-5\n"
        "num_train_epochs: 3.0\nbf16: true\n"
    )
    md = extract_metadata(
        tmp_path, "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 llamafactory-cli train sft.yaml learning_rate=2e-5"
    )
    assert (md.distributed, md.num_gpus, md.global_batch_size) == ("deepspeed_zero3", 8, 16)
    assert (md.learning_rate, md.precision, md.task, md.params_millions) == (
        2e-5,
        "bf16",
        "instruction_finetuning",
        4000,
    )
    assert md.framework[:2] == ["LLaMA-Factory", "HF Trainer"] and "DeepSpeed" in md.framework


def test_overrides_starting_with_c_are_kept(tmp_path: Path) -> None:
    """Only config-file arguments are set aside; other key=value overrides (even ones starting with c) apply."""
    from schedmate.agents.advisor.extract.collect import collect_settings  # noqa: PLC0415
    from schedmate.agents.advisor.extract.launch import parse_command  # noqa: PLC0415
    from schedmate.agents.advisor.extract.workspace import Workspace  # noqa: PLC0415

    (tmp_path / "train.py").write_text("batch_size = 8\ncompile = True\n")
    (tmp_path / "cfg.py").write_text("batch_size = 16\n")
    ex = collect_settings(
        Workspace(tmp_path), parse_command("python train.py cfg.py --batch_size=32 --compile=False --config=x.py")
    )
    assert ex.values["batch_size"].value == 32
    assert (ex.values["compile"].value, ex.values["compile"].source) == (False, "command")
    assert "config" not in ex.values
