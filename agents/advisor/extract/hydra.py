"""Hydra composition, read statically: the entry point's primary config, its defaults list, the config
groups chosen on the command line, and an ``experiment=`` config with its overrides."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

import yaml

from schedmate.agents.advisor.extract.budget import check_time
from schedmate.agents.advisor.extract.config_sources import Value, flatten, load_yaml
from schedmate.agents.advisor.extract.structured import structured_configs
from schedmate.agents.advisor.extract.workspace import Workspace

__all__ = ["compose_hydra"]

# Groups that never carry workload settings (logging, paths, sweeps, ...).
_IGNORED_GROUPS: Final = frozenset(
    {"hydra", "paths", "extras", "hparams_search", "debug", "local", "logger", "callbacks"}
)
_EXPERIMENT_GROUPS: Final = ("data", "model", "trainer")
_MAX_DEPTH: Final = 4


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


class _Composer:
    """Loads YAML configs under the config folder and merges groups into one flat settings dict."""

    def __init__(self, ws: Workspace, base: str) -> None:
        self.ws = ws
        self.base = base
        self.composed: dict[str, Value] = {}
        self.stored: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}  # ConfigStore (group, name) → defaults
        self.legacy = False  # Hydra 0.11 (`config_path` names the file): every config merges at the root

    def load(self, rel: str) -> tuple[dict[str, Any], list[Any], bool, str]:
        """(config without its defaults, its defaults list, whether it is @package _global_, its path)."""
        path = f"{self.base}/{rel}.yaml" if self.base else f"{rel}.yaml"
        text = self.ws.read_text_or_none(path) or ""
        try:
            data = load_yaml(text) or {}
        except yaml.YAMLError:
            data = {}
        defaults = data.pop("defaults", []) if isinstance(data, dict) else []
        return (data if isinstance(data, dict) else {}), defaults, "@package _global_" in text, path

    def exists(self, group: str, option: object) -> bool:
        """Whether ``group/option.yaml`` is a config of this project."""
        if self.stored.get((group, str(option))) is not None:
            return True
        path = f"{self.base}/{group}/{option}.yaml" if self.base else f"{group}/{option}.yaml"
        return self.ws.read_text_or_none(path) is not None

    def merge(self, data: dict[str, Any], path: str, prefix: str = "") -> None:
        """Flatten ``data`` (under ``prefix``) into the composed settings; later wins."""
        for k, v in flatten(data, prefix).items():
            self.composed[k] = Value(v, path)

    def apply_group(self, group: str, option: Any, depth: int = 0) -> None:
        """Merge config ``group/option`` and, first, the group's own defaults (``group@_global_``: at the root)."""
        group, _, package = group.partition("@")
        if option in (None, "null") or depth > _MAX_DEPTH:
            return
        check_time()
        if (stored := self.stored.get((group, str(option)))) is not None:  # `cs.store(group=, name=, node=Cls)`
            self.merge(stored[0], stored[1], group)
            return
        data, defaults, is_global, path = self.load(f"{group}/{option}")
        is_global = is_global or self.legacy or group.rsplit("/", 1)[-1] in data or package == "_global_"
        for d in defaults:
            if isinstance(d, str) and d != "_self_":  # (`- medium` in task/quadruped_walk.yaml: the same group)
                self.apply_group(f"{group}@{package}" if package else group, d, depth + 1)
        self.merge(data, path, "" if is_global else group)


def compose_hydra(
    ws: Workspace, script: str | None, code: str, overrides: dict[str, Value]
) -> tuple[str, dict[str, Value]] | None:
    """(path of the primary config, the composed settings) of a ``@hydra.main`` entry point, else None."""
    m = re.search(r"@hydra\.main\(([^)]*)\)", code)
    if not m:
        return None
    args = dict(re.findall(r"(\w+)\s*=\s*['\"]([^'\"]+)['\"]", m.group(1)))
    script_dir = Path(script or ".").parent
    config_path = args.get("config_path", "configs")
    legacy = config_path.endswith((".yaml", ".yml")) and "config_name" not in args  # Hydra 0.11's file path
    c = _Composer(ws, _norm((script_dir / (Path(config_path).parent if legacy else config_path)).as_posix()))
    c.legacy = legacy
    name = Path(config_path).stem if legacy else args.get("config_name", "config").removesuffix(".yaml")
    c.stored = structured_configs(ws, script or "", code)
    groups = {k for k in overrides if "." not in k and c.exists(k, overrides[k].value)}
    root, defaults, _, root_path = c.load(name)
    if not root and ("", name) in c.stored:  # `cs.store(name="config", node=TrainConfig)`: a dataclass tree
        root, root_path = c.stored[("", name)]
        found = root.pop("defaults", [])
        defaults = found if isinstance(found, list) else []
    c.merge(root, root_path)
    listed = {str(g).replace("optional ", "").strip() for d in defaults if isinstance(d, dict) for g in d}
    packaged = {g.partition("@")[0] for g in listed}  # `- task@_global_: quadruped_walk` is the group `task`
    experiment = None
    for d in defaults:
        if not isinstance(d, dict):
            continue
        for group, option in d.items():
            g = str(group).replace("optional ", "").strip()
            if g in _IGNORED_GROUPS:
                continue
            base = g.partition("@")[0]
            chosen = overrides[base].value if base in groups else option
            if g == "experiment":
                experiment = chosen
                continue
            c.apply_group(g, chosen)
    for g in sorted(groups - packaged - listed - {"experiment"} - _IGNORED_GROUPS):
        c.apply_group(g, overrides[g].value)  # `+configs=an4`: a group the command line adds to the defaults
    if "experiment" in overrides:
        experiment = overrides["experiment"].value
    if experiment not in (None, "null"):
        data, exp_defaults, _, path = c.load(f"experiment/{experiment}")
        for d in exp_defaults:
            if isinstance(d, dict):
                for k, opt in d.items():
                    g = str(k).replace("override", "").strip().lstrip("/")
                    if g in _EXPERIMENT_GROUPS:
                        c.apply_group(g, opt)
        c.merge(data, path)
    return root_path, c.composed
