"""Gathering a job's settings in the order they override each other, each value with where it came from.

Entry-script literals and argparse defaults, then argv (argparse-resolved, or ``--key value``
as given), then config files named on the command line, then Hydra composition, then
``key=value`` overrides; a DeepSpeed JSON named by the settings is read under ``deepspeed.``.
For ``llamafactory-cli``: its YAML, then flags and overrides.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Final

from schedmate.agents.advisor.extract.config_sources import (
    Value,
    argparse_specs,
    config_tree_assignments,
    flag_values,
    load_structured,
    load_with_bases,
    parse_overrides,
    python_assignments,
    resolve_argparse,
)
from schedmate.agents.advisor.extract.hydra import compose_hydra
from schedmate.agents.advisor.extract.launch import Launch
from schedmate.agents.advisor.extract.usesites import Use, find_uses
from schedmate.agents.advisor.extract.workspace import Workspace

__all__ = ["Extraction", "collect_settings"]

# A leaf under an evaluation/test section ("eval.max_iters") is not the training setting of that name.
_EVAL_SECTION: Final = re.compile(r"(?:^|\.)(?:eval|evaluation|val|valid|validation|test|testing|inference)\.", re.I)
_CONFIG_FLAGS: Final = ("-c", "--config", "--config_file", "--config-file", "--cfg", "--config-path", "--base")
_CONFIG_SUFFIXES: Final = (".py", ".yaml", ".yml", ".json", ".toml")


@dataclass
class Extraction:
    """Merged settings and what the code says beyond them."""

    launch: Launch
    values: dict[str, Value] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    code: str = ""  # concatenated source of the entry script (for framework/model heuristics)
    per_rank_accum_divided: bool = False
    batch_divided_by_world: bool = False
    uses: dict[str, Use] = field(default_factory=dict)  # what consumer APIs receive (see usesites)

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
            hits = [
                (key, v)
                for key, v in self.values.items()
                if key.rsplit(".", 1)[-1] == k and v.value is not None and not _EVAL_SECTION.search(key)
            ]
            if hits:
                return hits[-1]
        return None


def _config_files(args: list[str]) -> list[str]:
    """Config files named on the command line (``--config x.yaml`` or a bare ``x.py``), in order."""
    out = []
    for i, a in enumerate(args):
        path = None
        if a in _CONFIG_FLAGS and i + 1 < len(args):
            path = args[i + 1]
        elif not a.startswith("-") and "=" not in a and a.endswith(_CONFIG_SUFFIXES):
            path = a
        if path is None or (i > 0 and args[i - 1] in _CONFIG_FLAGS and path == a):
            continue
        out.append(path)
    return out


def _read_config_files(ws: Workspace, ex: Extraction, args: list[str]) -> None:
    """Config files the command names, merged in order (each over the bases it names)."""
    for path in _config_files(args):
        text = ws.read_text_or_none(path)
        if text is None:
            continue
        ex.sources.append(path)
        if path.endswith(".py"):
            ex.values.update(python_assignments(text, path, arithmetic=True))
            ex.values.update(config_tree_assignments(text, path))
        else:
            ex.values.update(load_with_bases(ws.read_text_or_none, path))


def _local_imports(ws: Workspace, code: str, script: str) -> list[str]:
    """Workspace modules the entry script imports, and the modules their packages' ``__init__`` import (two
    levels at most, 24 files)."""
    out: list[str] = []
    frontier = [(code, script)]
    for _ in range(2):
        nxt: list[tuple[str, str]] = []
        for text, importer in frontier:
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError):
                continue
            for node in ast.walk(tree):
                mods: list[tuple[str, int]] = []
                if isinstance(node, ast.ImportFrom):
                    mods = [(node.module or "", node.level)] + [
                        (f"{node.module}.{a.name}" if node.module else a.name, node.level) for a in node.names
                    ]
                elif isinstance(node, ast.Import):
                    mods = [(a.name, 0) for a in node.names]
                for mod, level in mods:
                    path = ws.module_file(mod, level, importer)
                    if path and path not in out and path != script and len(out) < 24:
                        out.append(path)
                        if path.endswith("__init__.py") and (t := ws.read_text_or_none(path)):
                            nxt.append((t, path))
        frontier = nxt
    return out


def _llamafactory(ws: Workspace, ex: Extraction, overrides: dict[str, Value]) -> None:
    launch = ex.launch
    script = launch.script or ""
    text = ws.read_text_or_none(script) if script.endswith((".yaml", ".yml", ".json")) else None
    if text:
        ex.values.update(load_structured(text, script))
        ex.sources.append(script)
    ex.values.update(flag_values(launch.args))
    ex.values.update(overrides)


def _python_entry(ws: Workspace, ex: Extraction, overrides: dict[str, Value]) -> None:
    launch = ex.launch
    script = launch.script or ""
    code = ws.read_text_or_none(script) or ""
    ex.code = code
    for module in _local_imports(ws, code, script):  # config trees' defaults (yacs _C.X.Y = ...): lowest priority
        text = ws.read_text_or_none(module)
        if text and re.search(r"\b(?:CfgNode|CN|ConfigDict|ConfigNode|EasyDict|edict)\(", text):
            ex.values.update(config_tree_assignments(text, module))
    ex.values.update(config_tree_assignments(code, script))
    ex.values.update(python_assignments(code, script, arithmetic=True))
    specs = argparse_specs(code)
    if specs:
        ex.values.update(resolve_argparse(specs, launch.args, script))
    else:  # HfArgumentParser / click / fire: no add_argument calls to read, take `--key value` as given
        ex.values.update(flag_values(launch.args))
    _read_config_files(ws, ex, launch.args)
    hydra = compose_hydra(ws, launch.script, code, overrides)
    if hydra is not None:
        root_path, composed = hydra
        ex.sources.append(root_path)
        ex.values.update(composed)
    config_keys = {f.lstrip("-").replace("-", "_") for f in _CONFIG_FLAGS} | {"config-file", "config-path"}
    ex.values.update({k: v for k, v in overrides.items() if k not in config_keys})
    ex.per_rank_accum_divided = bool(re.search(r"gradient_accumulation_steps\s*//=\s*\w*world_size", code))


def _data_module_and_deepspeed(ws: Workspace, ex: Extraction) -> None:
    for key in ("data._target_", "datamodule._target_"):  # a data module that splits the batch across ranks
        v = ex.values.get(key)
        if v is not None and isinstance(v.value, str) and "." in v.value:
            text = ws.read_text_or_none(v.value.rpartition(".")[0].replace(".", "/") + ".py") or ""
            ex.batch_divided_by_world |= bool(re.search(r"batch_size\s*//\s*[\w.]*world_size", text))
    ds = ex.get("deepspeed")
    if ds is not None and isinstance(ds.value, str):
        ds_config = ws.read_text_or_none(ds.value)
        if ds_config:
            ex.values.update({f"deepspeed.{k}": v for k, v in load_structured(ds_config, ds.value).items()})


def _world_size(launch: Launch, code: str) -> int | None:
    """Processes the launcher starts: torchrun/deepspeed/mpirun counts, 1 for a plain python that spawns none."""
    if launch.world_size is not None:
        return launch.world_size
    if launch.nproc_per_node is not None:
        return launch.nproc_per_node * (launch.nnodes or 1)
    if launch.launcher == "python" and not re.search(r"\bspawn\(|\bProcess\(", code):
        return 1
    return None


def collect_settings(ws: Workspace, launch: Launch, ex: Extraction | None = None) -> Extraction:
    """Every setting the launch, the entry script and its configs give, merged in override order.

    Fills ``ex`` (a fresh :class:`Extraction` by default) as it goes, so a caller that catches an
    error or a spent budget half-way keeps the settings found before it.
    """
    ex = ex if ex is not None else Extraction(launch=launch)
    overrides = parse_overrides(launch.args)
    script = launch.script or ""
    if launch.launcher == "llamafactory-cli":
        _llamafactory(ws, ex, overrides)
    elif not script.endswith(".py") and launch.launcher not in ("python", "bash", "sh"):
        _read_config_files(ws, ex, [*([script] if script else []), *launch.args])  # any CLI: `tool --config x.yaml`
        ex.values.update(flag_values(launch.args))
        ex.values.update(overrides)
    elif script.endswith(".py"):
        _python_entry(ws, ex, overrides)
        ex.uses = find_uses(
            ws, ex.code, script, launch.args, ex.values, world_size=_world_size(launch, ex.code),
            visible_gpus=launch.visible_gpus,
        )  # fmt: skip
        ds = ex.uses.get("deepspeed")
        if ds is not None and isinstance(ds.value, str) and ex.get("deepspeed") is None:
            ex.values["deepspeed"] = Value(ds.value, ds.file, ds.line)
    _data_module_and_deepspeed(ws, ex)
    return ex
