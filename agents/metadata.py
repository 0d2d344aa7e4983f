"""Static workload metadata from a job's code, configs and command (first version, no LLM).

Reads — never runs — the job's working directory through :class:`Workspace`: the launch
command (:func:`parse_command`), the entry script (argparse defaults, module-level literals,
Hydra entry point), the configuration files it is given (Python, YAML, JSON, TOML, Hydra
groups, DeepSpeed JSON) and ``key=value`` overrides; then maps the merged settings onto
:class:`WorkloadMetadata` fields with provenance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from schedmate.agents.config_sources import (
    Value,
    argparse_specs,
    flatten,
    load_structured,
    parse_overrides,
    python_assignments,
    resolve_argparse,
)
from schedmate.agents.launch import Launch, parse_command
from schedmate.agents.workspace import Workspace, WorkspaceError
from schedmate.schemas.jobs_metadata import FieldSource, WorkloadMetadata

__all__ = ["Extraction", "extract_metadata"]

_CONFIG_FLAGS: Final = ("-c", "--config", "--config_file", "--config-file", "--cfg", "--config-path")


@dataclass
class Extraction:
    """Merged settings and what the code says beyond them."""

    launch: Launch
    values: dict[str, Value] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    code: str = ""  # concatenated source of the entry script (for framework/model heuristics)
    per_rank_accum_divided: bool = False
    batch_divided_by_world: bool = False

    def get(self, *keys: str) -> Value | None:
        """The value of the first key that is set (exact dotted key, then leaf name)."""
        for k in keys:
            if k in self.values and self.values[k].value is not None:
                return self.values[k]
        for k in keys:
            hits = [v for key, v in self.values.items() if key.rsplit(".", 1)[-1] == k and v.value is not None]
            if hits:
                return hits[-1]
        return None


def _read(ws: Workspace, rel: str) -> str | None:
    try:
        return ws.read_text(rel)
    except WorkspaceError:
        return None


def _hydra(ws: Workspace, ex: Extraction, code: str, overrides: dict[str, Value]) -> None:
    m = re.search(r"@hydra\.main\(([^)]*)\)", code)
    if not m:
        return
    args = dict(re.findall(r"(\w+)\s*=\s*['\"]([^'\"]+)['\"]", m.group(1)))
    script_dir = Path(ex.launch.script or ".").parent
    base = _norm((script_dir / args.get("config_path", "configs")).as_posix())
    name = args.get("config_name", "config")

    def load(rel: str) -> tuple[dict[str, Any], list[Any], bool, str]:
        text = _read(ws, f"{base}/{rel}.yaml") or ""
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError:
            data = {}
        defaults = data.pop("defaults", []) if isinstance(data, dict) else []
        return (data if isinstance(data, dict) else {}), defaults, "@package _global_" in text, f"{base}/{rel}.yaml"

    groups = {k for k in overrides if "." not in k and _read(ws, f"{base}/{k}/{overrides[k].value}.yaml") is not None}
    composed: dict[str, Value] = {}

    def apply_group(group: str, option: Any, depth: int = 0) -> None:
        if option in (None, "null") or depth > 4:
            return
        data, defaults, is_global, path = load(f"{group}/{option}")
        for d in defaults:
            if isinstance(d, str) and d != "_self_":
                apply_group(group, d, depth + 1)
        prefix = "" if is_global else group
        for k, v in flatten(data, prefix).items():
            composed[k] = Value(v, path)

    root, defaults, _, root_path = load(name)
    for k, v in flatten(root).items():
        composed[k] = Value(v, root_path)
    experiment = None
    for d in defaults:
        if isinstance(d, dict):
            for group, option in d.items():
                g = str(group).replace("optional ", "").strip()
                if g in ("hydra", "paths", "extras", "hparams_search", "debug", "local", "logger", "callbacks"):
                    continue
                chosen = overrides[g].value if g in groups else option
                if g == "experiment":
                    experiment = chosen
                    continue
                apply_group(g, chosen)
    if "experiment" in overrides:
        experiment = overrides["experiment"].value
    if experiment not in (None, "null"):
        data, exp_defaults, _, path = load(f"experiment/{experiment}")
        for d in exp_defaults:
            if isinstance(d, dict):
                for k, opt in d.items():
                    g = str(k).replace("override", "").strip().lstrip("/")
                    if g in ("data", "model", "trainer"):
                        apply_group(g, opt)
        for k, v in flatten(data).items():
            composed[k] = Value(v, path)
    ex.sources.append(root_path)
    ex.values.update(composed)


def _norm(p: str) -> str:
    parts: list[str] = []
    for part in p.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def _collect(ws: Workspace, launch: Launch) -> Extraction:
    ex = Extraction(launch=launch)
    overrides = parse_overrides(launch.args)
    script = launch.script or ""
    if launch.launcher == "llamafactory-cli" and script.endswith((".yaml", ".yml", ".json")):
        text = _read(ws, script)
        if text:
            ex.values.update(load_structured(text, script))
            ex.sources.append(script)
        ex.values.update(overrides)
    elif script.endswith(".py"):
        code = _read(ws, script) or ""
        ex.code = code
        ex.values.update(python_assignments(code, script, arithmetic=True))
        specs = argparse_specs(code)
        if specs:
            ex.values.update(resolve_argparse(specs, launch.args, script))
        for i, a in enumerate(launch.args):  # config files named on the command line
            path = None
            if a in _CONFIG_FLAGS and i + 1 < len(launch.args):
                path = launch.args[i + 1]
            elif not a.startswith("-") and "=" not in a and a.endswith((".py", ".yaml", ".yml", ".json", ".toml")):
                path = a
            if path is None or (i > 0 and launch.args[i - 1] in _CONFIG_FLAGS and path == a):
                continue
            text = _read(ws, path)
            if text is None:
                continue
            ex.sources.append(path)
            ex.values.update(
                python_assignments(text, path, arithmetic=True) if path.endswith(".py") else load_structured(text, path)
            )
        _hydra(ws, ex, code, overrides)
        config_keys = {f.lstrip("-").replace("-", "_") for f in _CONFIG_FLAGS} | {"config-file", "config-path"}
        ex.values.update({k: v for k, v in overrides.items() if k not in config_keys})
        ex.per_rank_accum_divided = bool(re.search(r"gradient_accumulation_steps\s*//=\s*\w*world_size", code))
    ds = ex.get("deepspeed")
    if ds is not None and isinstance(ds.value, str):
        text = _read(ws, ds.value)
        if text:
            ex.values.update({f"deepspeed.{k}": v for k, v in load_structured(text, ds.value).items()})
    return ex


def _from_bash(ws: Workspace, launch: Launch) -> Launch:
    if launch.launcher != "bash" or not launch.script:
        return launch
    text = _read(ws, launch.script) or ""
    joined = re.sub(r"\\\n", " ", text)
    for line in joined.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        inner = parse_command(s)
        if inner.launcher in ("python", "torchrun", "deepspeed", "accelerate", "llamafactory-cli", "mpirun", "srun"):
            inner.env = {**inner.env, **launch.env}
            return inner
    return launch


def _params_from_name(name: str) -> float | None:
    m = re.search(r"(\d+(?:\.\d+)?)([BM])(?![a-z])", name)
    if not m:
        return None
    n = float(m.group(1))
    return n * 1000 if m.group(2) == "B" else n


def _gpt_params(ex: Extraction) -> float | None:
    n_layer, d = ex.get("n_layer"), ex.get("n_embd")
    if n_layer is None or d is None:
        return None
    vocab = 50304
    layers, width = int(n_layer.value), int(d.value)
    block = ex.get("block_size")
    pos = int(block.value) * width if block is not None else 0
    return round((12 * layers * width * width + vocab * width + pos) / 1e6, 1)


def extract_metadata(workdir: Path, command: str) -> WorkloadMetadata:
    """The static pass over ``workdir`` for ``command``."""
    root = Workspace(workdir)
    launch = parse_command(command)
    ws = Workspace(root.resolve(launch.cwd)) if launch.cwd != "." else root
    launch = _from_bash(ws, launch)
    ex = _collect(ws, launch)
    prov: dict[str, FieldSource] = {}

    def take(fieldname: str, *keys: str) -> Any:
        v = ex.get(*keys)
        if v is None:
            return None
        prov[fieldname] = FieldSource(file=v.source, line=v.line, path="command" if v.source == "command" else "static")
        return v.value

    lr = take("learning_rate", "learning_rate", "lr", "model.optimizer.lr", "train.learning_rate")
    bs = take(
        "batch_size_per_device",
        *("per_device_train_batch_size", "batch_size", "train_batch_size", "train.batch_size", "data.batch_size"),
    )
    accum = ex.get("gradient_accumulation_steps")
    epochs = take("epochs", "num_train_epochs", "epochs", "max_epochs", "trainer.max_epochs", "train.epochs")
    max_steps = take("max_steps", "max_steps", "max_iters")
    if isinstance(max_steps, (int, float)) and max_steps <= 0:
        max_steps = None
    # GPUs and the distributed setup
    num_gpus = launch.num_gpus
    devices = ex.get("trainer.devices", "devices")
    if num_gpus is None and devices is not None and isinstance(devices.value, int):
        num_gpus = devices.value
    if num_gpus is None and re.search(r"device_count\(\)", ex.code) and launch.visible_gpus:
        num_gpus = launch.visible_gpus
    if num_gpus is None and launch.visible_gpus:
        num_gpus = launch.visible_gpus
    if (
        num_gpus is None
        and launch.launcher in ("python", "llamafactory-cli")
        and not re.search(r"device_count\(\)", ex.code)
    ):
        num_gpus = 1
    stage = ex.get("deepspeed.zero_optimization.stage")
    strategy = ex.get("trainer.strategy", "strategy")
    if stage is not None:
        distributed = f"deepspeed_zero{int(stage.value)}"
    elif ex.get("fsdp") is not None and ex.get("fsdp").value:  # type: ignore[union-attr]
        distributed = "fsdp"
    elif (num_gpus or 1) > 1 or (strategy is not None and "ddp" in str(strategy.value)):
        distributed = "ddp"
    else:
        distributed = "single_gpu"
    # batch sizes
    if isinstance(bs, int) and ex.batch_divided_by_world and num_gpus:
        bs = bs // num_gpus
    global_bs = None
    if isinstance(bs, int):
        acc = int(accum.value) if accum is not None and isinstance(accum.value, (int, float)) else 1
        ranks = num_gpus or 1
        global_bs = bs * acc if ex.per_rank_accum_divided else bs * acc * ranks
    # precision
    precision = None
    if (v := ex.get("bf16")) is not None and v.value is True:
        precision = "bf16"
    elif (v := ex.get("fp16", "fp16_run", "amp")) is not None and v.value is True:
        precision = "fp16"
    elif (v := ex.get("trainer.precision", "precision", "dtype")) is not None:
        s = str(v.value)
        precision = "bf16" if "bf16" in s or "bfloat16" in s else ("fp16" if "16" in s else "fp32")
    elif re.search(r"autocast|GradScaler", ex.code):
        precision = "fp32"
    else:
        precision = "fp32"
    # frameworks (primary first)
    code = ex.code
    fw: list[str] = []
    if launch.launcher == "llamafactory-cli":
        fw += ["LLaMA-Factory", "HF Trainer"]
        if stage is not None:
            fw.append("DeepSpeed")
        if str((ex.get("finetuning_type") or Value(None, "")).value) == "lora":
            fw.append("PEFT")
        if str((ex.get("stage") or Value(None, "")).value) in ("dpo", "kto", "orpo", "ppo"):
            fw.insert(2, "TRL")
    elif re.search(r"^\s*(?:import|from) (?:lightning|pytorch_lightning)", code, re.M) or ex.get("trainer._target_"):
        fw += ["Lightning"]
        if "@hydra.main" in code:
            fw.append("Hydra")
    else:
        fw.append("PyTorch")
        if re.search(r"from transformers import|import transformers", code):
            fw.append("HF Transformers")
    model_name = take("model_name", "model_name_or_path", "model_name", "init_from", "model.net._target_")
    dataset = take("dataset", "dataset", "dataset_name", "data.dataset")
    task = None
    stage_v = str((ex.get("stage") or Value(None, "")).value)
    if stage_v == "sft":
        task = "instruction_finetuning"
    elif stage_v == "dpo":
        task = "preference_optimization_dpo"
    elif stage_v == "pt":
        task = "language_modeling"
    params = _params_from_name(str(model_name)) if model_name else None
    if params is None:
        params = _gpt_params(ex)
    return WorkloadMetadata(
        model_name=None if model_name is None else str(model_name),
        task=task,
        params_millions=params,
        dataset=None if dataset is None else str(dataset),
        batch_size_per_device=bs if isinstance(bs, int) else None,
        global_batch_size=global_bs,
        epochs=float(epochs) if isinstance(epochs, (int, float)) and max_steps is None else None,
        max_steps=int(max_steps) if isinstance(max_steps, (int, float)) else None,
        learning_rate=float(lr) if isinstance(lr, (int, float)) else None,
        precision=precision,
        framework=fw,
        distributed=distributed,
        num_gpus=num_gpus,
        provenance=prov,
    )
