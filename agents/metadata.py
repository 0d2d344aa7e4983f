"""Static workload metadata from a job's code, configs and command (first version, no LLM).

Reads — never runs — the job's working directory through :class:`Workspace`: the launch
command (:func:`parse_command`), the entry script (argparse defaults, module-level literals,
Hydra entry point), the configuration files it is given (Python, YAML, JSON, TOML, Hydra
groups, DeepSpeed JSON) and ``key=value`` overrides; then maps the merged settings onto
:class:`WorkloadMetadata` fields with provenance.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from schedmate.agents.config_sources import (
    Value,
    argparse_specs,
    flag_values,
    flatten,
    load_structured,
    parse_overrides,
    python_assignments,
    resolve_argparse,
)
from schedmate.agents.launch import Launch, parse_command
from schedmate.agents.param_count import ParamCounter, namespace
from schedmate.agents.workload_identity import (
    ModelClass,
    canonical_dataset,
    find_class,
    inline_model,
    model_type_of,
    readme_title,
    task_of,
)
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
        found = self.find(*keys)
        return found[1] if found else None

    def find(self, *keys: str) -> tuple[str, Value] | None:
        """The (key, value) of the first key that is set (exact dotted key, then leaf name)."""
        for k in keys:
            if k in self.values and self.values[k].value is not None:
                return k, self.values[k]
        for k in keys:
            hits = [(key, v) for key, v in self.values.items() if key.rsplit(".", 1)[-1] == k and v.value is not None]
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
    name = args.get("config_name", "config").removesuffix(".yaml")

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
    if launch.launcher == "llamafactory-cli":
        text = _read(ws, script) if script.endswith((".yaml", ".yml", ".json")) else None
        if text:
            ex.values.update(load_structured(text, script))
            ex.sources.append(script)
        ex.values.update(flag_values(launch.args))
        ex.values.update(overrides)
    elif script.endswith(".py"):
        code = _read(ws, script) or ""
        ex.code = code
        ex.values.update(python_assignments(code, script, arithmetic=True))
        specs = argparse_specs(code)
        if specs:
            ex.values.update(resolve_argparse(specs, launch.args, script))
        else:  # HfArgumentParser / click / fire: no add_argument calls to read, take `--key value` as given
            ex.values.update(flag_values(launch.args))
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
    for key in ("data._target_", "datamodule._target_"):  # a data module that splits the batch across ranks
        v = ex.values.get(key)
        if v is not None and isinstance(v.value, str) and "." in v.value:
            text = _read(ws, v.value.rpartition(".")[0].replace(".", "/") + ".py") or ""
            ex.batch_divided_by_world |= bool(re.search(r"batch_size\s*//\s*[\w.]*world_size", text))
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
    variables: dict[str, str] = {f"{i}": a for i, a in enumerate(launch.args, start=1)}
    for line in joined.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        s = re.sub(
            r"\$\{(\w+)(?::-([^}]*))?\}|\$(\w+)",
            lambda m: variables.get(m.group(1) or m.group(3), m.group(2) or m.group(0)),
            s,
        )
        if m := re.fullmatch(r"(?:export\s+)?(\w+)=(\S*)", s):
            variables[m.group(1)] = m.group(2).strip("'\"")
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


def _gpt_params(ex: Extraction, *, char_level: bool = False) -> float | None:
    n_layer, d = ex.get("n_layer"), ex.get("n_embd")
    if n_layer is None or d is None:
        return None
    vocab = 256 if char_level else 50304  # a character vocabulary is built from the text (< 256 symbols)
    layers, width = int(n_layer.value), int(d.value)
    block = ex.get("block_size")
    pos = int(block.value) * width if block is not None else 0
    return round((12 * layers * width * width + vocab * width + pos) / 1e6, 1)


@dataclass
class _Identity:
    model_name: str | None = None
    model_type: str | None = None
    task: str | None = None
    params_millions: float | None = None
    dataset: str | None = None


_ACTIVATIONS: Final = frozenset({"ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Dropout", "Softmax", "LeakyReLU"})
_SCRATCH: Final = ("scratch", "resume", "none", "")
# Sizes of well-known checkpoints whose names do not carry them (millions of parameters).
_KNOWN_SIZES: Final = {"gpt2": 124.4, "gpt2-medium": 354.8, "gpt2-large": 774.0, "gpt2-xl": 1557.6,
                       "bert-base": 110.0, "bert-large": 340.0, "roberta-base": 125.0, "roberta-large": 355.0,
                       "distilbert": 66.0, "t5-small": 60.5, "t5-base": 223.0, "t5-large": 738.0,
                       "vit-base": 86.0, "vit-large": 304.0}  # fmt: skip
_MODEL_VAR: Final = re.compile(
    r"^\s*(?P<var>\w*(?i:model|net|generator|_g)\w*)\s*=\s*(?:\w+\.)*(?P<cls>[A-Z]\w*)\(", re.M
)


def _pretrained(ex: Extraction) -> tuple[str, Value] | None:
    for key in ("model_name_or_path", "pretrained_model_name_or_path", "model_name", "base_model", "init_from",
                "model.pretrained_model_name_or_path"):  # fmt: skip
        found = ex.find(key)
        if found is not None and isinstance(found[1].value, str) and found[1].value.strip().lower() not in _SCRATCH:
            return found
    m = re.search(r"from_pretrained\(\s*['\"]([\w./-]+)['\"]", ex.code)
    if m:
        return "from_pretrained", Value(m.group(1), ex.launch.script or "", ex.code[: m.start()].count("\n") + 1)
    return None


def _known_size(name: str) -> float | None:
    low = name.lower().rsplit("/", 1)[-1]
    for key in sorted(_KNOWN_SIZES, key=len, reverse=True):
        if (
            low == key
            or low.startswith((f"{key}-", f"{key}_"))
            or (low.startswith(key) and key.endswith(("-base", "-large")))
        ):
            return _KNOWN_SIZES[key]
    return None


def _model_call(ex: Extraction) -> tuple[str, ast.Call] | None:
    """The constructor call that builds the model in the entry script (``model = UNet(...)``)."""
    try:
        tree = ast.parse(ex.code)
    except SyntaxError:
        return None
    for m in _MODEL_VAR.finditer(ex.code):
        line = ex.code[: m.start("cls")].count("\n") + 1
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or node.lineno != line:
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name == m.group("cls"):
                return m.group("cls"), node
    return None


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _gpt_shape(ex: Extraction) -> str | None:
    parts = [(ex.get(k), s) for k, s in (("n_layer", "L"), ("n_head", "H"), ("n_embd", "d"))]
    if all(v is not None for v, _ in parts):
        return "/".join(f"{v.value}{s}" for v, s in parts if v is not None)
    return None


def _identify(ws: Workspace, ex: Extraction, prov: dict[str, FieldSource]) -> _Identity:
    ident = _Identity()
    script = ex.launch.script or ""
    found_pretrained = _pretrained(ex)
    pretrained = found_pretrained[1] if found_pretrained else None
    title = readme_title(ws)
    counter = ParamCounter(ws)
    mc: ModelClass | None = None
    count: int | None = None
    call = _model_call(ex) if script.endswith(".py") else None
    found_target = ex.find("model.net._target_", "model._target_", "net._target_")
    target = found_target[1] if found_target else None
    if found_target is not None and target is not None and isinstance(target.value, str) and "." in target.value:
        module, _, cls = target.value.rpartition(".")
        file = f"{module.replace('.', '/')}.py"
        if ws.exists(file):
            mc = find_class(ws, cls, ws.read_text(file), file)
            prefix = found_target[0].rsplit(".", 1)[0] if "." in found_target[0] else ""
            kwargs = {
                k[len(prefix) + 1 :]: v.value
                for k, v in ex.values.items()
                if prefix
                and k.startswith(prefix + ".")
                and "." not in k[len(prefix) + 1 :]
                and not k.endswith("_target_")
            }
            count = counter.count_class(file, cls, kwargs)
            sizes = [str(v) for k, v in kwargs.items() if isinstance(v, int) and not isinstance(v, bool)]
            ident.model_name = f"{cls} ({'-'.join(sizes)})" if sizes else cls
            prov["model_name"] = FieldSource(file=target.source, line=target.line)
    elif call is not None:
        cls, node = call
        mc = find_class(ws, cls, ex.code, script)
        if mc is None and cls in ("Sequential", "ModuleList", "ModuleDict"):  # a model built inline
            mc = inline_model(node, script)
            cls = f"{cls} ({', '.join(dict.fromkeys(c for c in mc.layer_calls if c not in _ACTIVATIONS))})"
        env: dict[str, Any] = {}
        ns = namespace({k: v.value for k, v in ex.values.items()})
        for name in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - set(dir(builtins)):
            env.setdefault(name, ns)  # `args.classes`, `hps.data.hop_length`, `cfg.model`: the merged settings
        module_env = counter.module_env(script)
        env = {k: v for k, v in env.items() if k not in module_env}
        count = counter.count_call(node, env, script)
        prov["model_name"] = FieldSource(file=script, line=node.lineno)
        ident.model_name = cls
    if pretrained is not None:
        name = str(pretrained.value)
        suffix = ""
        ft = ex.get("finetuning_type")
        if (ft is not None and ft.value == "lora") or ex.get("lora_rank", "lora_r") is not None:
            suffix = " + LoRA"
        elif ft is not None and ft.value == "full":
            suffix = " (full fine-tune)"
        ident.model_name = (
            name.rsplit("/", 1)[-1]
            + suffix
            + (" (pretrained)" if found_pretrained and found_pretrained[0] == "init_from" else "")
        )
        prov["model_name"] = FieldSource(file=pretrained.source, line=pretrained.line,
                                         path="command" if pretrained.source == "command" else "static")  # fmt: skip
    family = title.split(":")[0].strip() if title and len(title.split(":")[0]) <= 24 else ""
    if pretrained is None and ident.model_name:
        details = [ident.model_name]
        if family and model_type_of([family], None) and _squash(family) not in _squash(ident.model_name):
            details.insert(0, family)  # the README names the architecture (VITS, nanoGPT, U-Net, ...)
        if shape := _gpt_shape(ex):
            details.append(shape)
        if len(details) > 1:
            ident.model_name = f"{details[0]} ({', '.join(details[1:])})"
    names = [str(pretrained.value) if pretrained else "", ident.model_name or "", mc.name if mc else ""]
    ident.model_type = model_type_of(names, mc) or model_type_of([family], None)
    # dataset
    for key in ("dataset", "dataset_name", "data.dataset", "data_name", "data.name", "data._target_",
                "data.training_files", "training_files", "train_files", "data_path", "data_dir"):  # fmt: skip
        v = ex.get(key)
        if v is None or not isinstance(v.value, str) or "${" in v.value:
            continue
        canon = canonical_dataset(v.value)
        if canon is None and key.endswith(("_target_", "_files", "_path", "_dir")):
            continue
        ident.dataset = canon or v.value.replace(",", " + ")
        prov["dataset"] = FieldSource(file=v.source, line=v.line, path="command" if v.source == "command" else "static")
        break
    if ident.dataset is None:
        canon = canonical_dataset(ex.code) or canonical_dataset(title)
        if canon:
            ident.dataset = canon
            prov["dataset"] = FieldSource(file=script or "README.md")
    # parameters
    if pretrained is not None:
        ident.params_millions = _params_from_name(str(pretrained.value)) or _known_size(str(pretrained.value))
    if ident.params_millions is None and ex.get("n_layer") is not None:
        ident.params_millions = _gpt_params(ex, char_level="char" in (ident.dataset or "").lower())
    if ident.params_millions is None and count:
        ident.params_millions = float(f"{count / 1e6:.3g}") if count < 1e6 else round(count / 1e6, 1)
    if ident.params_millions is not None:
        prov["params_millions"] = prov.get("model_name", FieldSource(file=script))
    stage = ex.get("stage")
    ident.task = task_of(
        ident.model_type,
        code=ex.code,
        hints=f"{title} {ident.dataset or ''} {ident.model_name or ''}",
        pretrained=pretrained is not None,
        stage=str(stage.value) if stage is not None else None,
    )
    return ident


def extract_metadata(workdir: Path, command: str, reads: dict[str, str] | None = None) -> WorkloadMetadata:
    """The static pass over ``workdir`` for ``command``; ``reads`` collects real path → sha1 of every file read."""
    root = Workspace(workdir, reads=reads)
    launch = parse_command(command)
    ws = root.sub(launch.cwd) if launch.cwd != "." else root
    launch = _from_bash(ws, launch)
    if launch.script and Path(launch.script).is_absolute():  # `python /abs/path/train.py`: fine if it is inside
        with contextlib.suppress(ValueError, OSError):
            launch.script = Path(launch.script).resolve().relative_to(ws.root).as_posix()
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
        *(
            "per_device_train_batch_size",
            "batch_size",
            "train_batch_size",
            "train.batch_size",
            "data.batch_size",
            "batch",
        ),
    )
    accum = ex.get("gradient_accumulation_steps")
    epochs = take("epochs", "num_train_epochs", "epochs", "max_epochs", "trainer.max_epochs", "train.epochs")
    max_steps = take("max_steps", "max_steps", "max_iters", "num_steps", "total_steps", "train_steps", "steps")
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
    ident = _identify(ws, ex, prov)
    return WorkloadMetadata(
        model_name=ident.model_name,
        model_type=ident.model_type,
        task=ident.task,
        params_millions=ident.params_millions,
        dataset=ident.dataset,
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
