"""Hydra composition, read statically: the entry point's primary config, its defaults list, the config
groups chosen on the command line, and an ``experiment=`` config with its overrides."""

from __future__ import annotations

import ast
import posixpath
import re
from pathlib import Path
from typing import Any, Final

import yaml

from schedmate.agents.advisor.extract.budget import check_time
from schedmate.agents.advisor.extract.config_sources import Value, constant_arithmetic, flatten, load_yaml
from schedmate.agents.advisor.extract.structured import structured_configs
from schedmate.agents.advisor.extract.workspace import Workspace

__all__ = ["compose_hydra", "hydra_entry", "interpolated"]

# Groups that never carry workload settings (logging, paths, sweeps, ...).
_IGNORED_GROUPS: Final = frozenset(
    {"hydra", "paths", "extras", "hparams_search", "debug", "local", "logger", "callbacks"}
)
_EXPERIMENT_GROUPS: Final = ("data", "datamodule", "dataset", "model", "trainer")
_MAX_DEPTH: Final = 4
_GLOBAL_PACKAGE: Final = re.compile(r"@package\s+_{1,2}global_{1,2}(?!\w)")  # (`__global__`: audiocraft's spelling)
_DECORATOR: Final = re.compile(r"@hydra\.main\(|@(?:dora\.)?hydra_main\(")
_DORA_IMPORT: Final = re.compile(r"^\s*(?:from dora\b[^\n]*\bimport\b[^\n]*\bhydra_main\b|import dora\b)", re.M)


def hydra_entry(code: str) -> re.Match[str] | None:
    """Where ``code`` decorates a function as a Hydra entry point: ``@hydra.main(...)``, or Dora's ``@hydra_main(...)``
    (the same decorator with Dora's experiment folders: audiocraft's ``train.py``)."""
    for m in _DECORATOR.finditer(code):
        if m[0].startswith("@hydra.") or _DORA_IMPORT.search(code):
            return m
    return None


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
        self.choices: dict[str, Any] = {}  # group → the option the command line chooses (it wins everywhere)
        self.applied: set[str] = set()  # groups a config's own defaults list applied

    def load(self, rel: str) -> tuple[dict[str, Any], list[Any], bool, str]:
        """(config without its defaults, its defaults list, whether it is @package _global_, its path)."""
        path = f"{self.base}/{rel}.yaml" if self.base else f"{rel}.yaml"
        text = self.ws.read_text_or_none(path) or ""
        try:
            data = load_yaml(text) or {}
        except yaml.YAMLError:
            data = {}
        defaults = data.pop("defaults", []) if isinstance(data, dict) else []
        return (data if isinstance(data, dict) else {}), defaults, _GLOBAL_PACKAGE.search(text) is not None, path

    def exists(self, group: str, option: object) -> bool:
        """Whether ``group/option.yaml`` is a config of this project."""
        return self.stored.get((group, str(option))) is not None or self.has_file(group, option)

    def has_file(self, group: str, option: object) -> bool:
        """Whether ``group/option.yaml`` is a file of the config folder (not only a stored dataclass)."""
        rel = f"{group}/{option}" if group else str(option)
        path = f"{self.base}/{rel}.yaml" if self.base else f"{rel}.yaml"
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
        at = package if package and package != "_global_" else group.replace("/", ".")  # `group@model.lora`
        for d in defaults:
            if isinstance(d, str) and d.startswith("/"):  # `- /solver/default`: a config named from the root
                parent, _, name = d.strip("/").rpartition("/")
                if parent and self.has_file(parent, name):
                    self.apply_group(parent, name, depth + 1)
            elif isinstance(d, str) and d != "_self_":  # (`- medium` in task/quadruped_walk.yaml: the same group)
                self.apply_group(f"{group}@{package}" if package else group, d, depth + 1)
            elif isinstance(d, dict):  # `- /model: lm/musicgen_lm`, `- override /dset: audio/default`
                for key, opt in d.items():
                    self._apply_nested(group, str(key), opt, depth + 1, "" if is_global else at)
        self.merge(data, path, "" if is_global else at)

    def _apply_nested(self, within: str, key: str, option: Any, depth: int, parent: str = "") -> None:
        """A group chosen in a group config's own defaults list: ``/model`` from the config root, ``db`` relative to
        the config's group (``solver/db``); the command line's choice of that group wins. A package it names is
        relative to the package of the config holding the list (verl's ``critic@critic: dp_critic`` lists
        ``../optim@optim: fsdp``: ``critic.optim``)."""
        name = re.sub(r"^(?:override|optional)\s+", "", key.strip()).strip()
        if name.startswith("/"):
            target = name.strip("/")
        else:
            target = f"{within}/{name}" if self.exists(f"{within}/{name.partition('@')[0]}", option) else name
        group_part, _, package = target.partition("@")
        if package and parent and not package.startswith("_"):
            target = f"{group_part}@{parent}.{package}"
        base = target.partition("@")[0]
        if base in _IGNORED_GROUPS:
            return
        chosen = self.choices.get(base, option)
        if self.exists(base, chosen):
            self.applied.add(base)
            self.apply_group(target, chosen, depth)


def _decorator_args(code: str, script: str, ws: Workspace) -> dict[str, str] | None:
    """The ``@hydra.main(...)`` arguments the entry gives, as strings (``config_path`` as a path from the workspace
    root when it is built from the package or the script's place: ``str(files("pkg").joinpath("configs"))``); None
    without the decorator."""
    m = hydra_entry(code)
    if not m:
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        tree = None
    calls = [
        d for n in (ast.walk(tree) if tree is not None else ())
        if isinstance(n, ast.FunctionDef) for d in n.decorator_list
        if isinstance(d, ast.Call) and ast.unparse(d.func) in ("hydra.main", "main", "hydra_main", "dora.hydra_main")
    ]  # fmt: skip
    if not calls:  # (an entry that does not parse: the literal arguments, read from the text)
        tail = code[m.end() : m.end() + 400].split(")", 1)[0]
        return dict(re.findall(r"(\w+)\s*=\s*['\"]([^'\"]+)['\"]", tail))
    out: dict[str, str] = {}
    for kw in calls[0].keywords:
        if kw.arg is None:
            continue
        value = _path_expr(kw.value, script, ws)
        if value is not None:
            out[kw.arg] = value
        if kw.arg == "config_path" and value is not None and not isinstance(kw.value, ast.Constant):
            out["config_path_from_root"] = "1"  # (computed from the workspace root, not the script's folder)
    return out


def _path_expr(node: ast.expr, script: str, ws: Workspace, depth: int = 0) -> str | None:
    """A path-valued expression's value: a string literal; ``str(x)``; ``files("pkg")`` (the package's folder in
    the workspace); ``x.joinpath("a")`` / ``x / "a"`` / ``os.path.join(x, "a")``; ``__file__`` and its parent."""
    if depth > 8:
        return None
    d = depth + 1
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name) and node.id == "__file__":
        return script
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _path_expr(node.value, script, ws, d)
        return posixpath.dirname(inner) if inner is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        a, b = _path_expr(node.left, script, ws, d), _path_expr(node.right, script, ws, d)
        return posixpath.join(a, b) if a is not None and b is not None else None
    if not isinstance(node, ast.Call):
        return None
    name = ast.unparse(node.func)
    args = [_path_expr(a, script, ws, d) for a in node.args]
    if name in ("str", "Path", "pathlib.Path", "os.fspath") and len(args) == 1:
        return args[0]
    if name.endswith("files") and len(args) == 1 and args[0] is not None:  # importlib.resources.files("f5_tts")
        return _package_folder(args[0], script, ws)
    if name in ("os.path.dirname", "dirname") and len(args) == 1 and args[0] is not None:
        return posixpath.dirname(args[0])
    if name in ("os.path.abspath", "os.path.realpath", "os.path.normpath") and len(args) == 1:
        return args[0]
    if isinstance(node.func, ast.Attribute) and node.func.attr == "joinpath":
        base = _path_expr(node.func.value, script, ws, d)
        return posixpath.join(base, *args) if base is not None and None not in args else None  # type: ignore[arg-type]
    if name in ("os.path.join", "join", "posixpath.join") and args and None not in args:
        return posixpath.join(*args)  # type: ignore[arg-type]
    return None


def _package_folder(package: str, script: str, ws: Workspace) -> str | None:
    """The workspace folder of an importable package: its ``__init__.py``'s, or (a namespace package) the folder
    of that name on the entry's own path or at the root or under ``src``."""
    init = ws.module_file(package, 0, script)
    if init is not None and init.endswith("/__init__.py"):
        return posixpath.dirname(init)
    rel = package.replace(".", "/")
    parts = script.split("/")
    on_path = ["/".join(parts[: i + 1]) for i, p in enumerate(parts[:-1]) if p == rel.rsplit("/", 1)[-1]]
    return next((c for c in [*on_path, rel, f"src/{rel}"] if ws.is_dir(c)), None)


def _command_choice(argv: list[str], long: str, short: str) -> str | None:
    """Hydra's own options on the command line: ``--config-name x`` / ``-cn x`` / ``--config-name=x``."""
    for i, a in enumerate(argv):
        if a in (long, short) and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith((f"{long}=", f"{short}=")):
            return a.partition("=")[2]
    return None


_PACKAGED_GROUP: Final = re.compile(r"\+?\+?([\w/]+)@([\w.]+)=([\w./-]+)")


def compose_hydra(
    ws: Workspace, script: str | None, code: str, overrides: dict[str, Value], argv: list[str] | None = None
) -> tuple[str, dict[str, Value]] | None:
    """(path of the primary config, the composed settings) of a ``@hydra.main`` entry point, else None. ``argv``:
    the command's arguments (Hydra's ``--config-name``/``--config-path``, ``group@package=option`` choices)."""
    args = _decorator_args(code, script or "", ws)
    if args is None:
        return None
    argv = argv or []
    script_dir = Path(script or ".").parent
    config_path = args.get("config_path", "configs")
    if (given := _command_choice(argv, "--config-path", "-cp")) is not None:
        config_path, args["config_path_from_root"] = given, ""  # (relative to the entry, as the decorator's)
    if (name_given := _command_choice(argv, "--config-name", "-cn")) is not None:
        args["config_name"] = name_given
    legacy = config_path.endswith((".yaml", ".yml")) and "config_name" not in args  # Hydra 0.11's file path
    folder = Path(config_path).parent if legacy else Path(config_path)
    c = _Composer(ws, _norm((folder if args.get("config_path_from_root") else script_dir / folder).as_posix()))
    c.legacy = legacy
    name = Path(config_path).stem if legacy else args.get("config_name", "config").removesuffix(".yaml")
    c.stored = structured_configs(ws, script or "", code)
    groups = {k for k in overrides if "." not in k and c.exists(k, overrides[k].value)}
    c.choices = {g: overrides[g].value for g in groups}
    root, defaults, _, root_path = c.load(name)
    if not root and ("", name) in c.stored:  # `cs.store(name="config", node=TrainConfig)`: a dataclass tree
        root, root_path = c.stored[("", name)]
        found = root.pop("defaults", [])
        defaults = found if isinstance(found, list) else []
    stored_groups: list[Any] = []  # the group choices of a stored config beside the primary one
    for d in defaults:  # `defaults: [base, _self_]`: a config beside the primary one, merged under it
        if (
            isinstance(d, str) and ("", d) in c.stored and not c.has_file("", d)
        ):  # fmt: skip  (`- base_config`, a dataclass stored in a ConfigStore: its fields, then its own defaults list)
            beside_data = dict(c.stored[("", d)][0])
            chosen = beside_data.pop("defaults", [])
            stored_groups += [g for g in chosen if isinstance(g, dict)] if isinstance(chosen, list) else []
            c.merge(beside_data, c.stored[("", d)][1])
            continue
        if isinstance(d, str) and d != "_self_" and not d.startswith("/") and c.exists("", d):
            beside, beside_defaults, _, beside_path = c.load(d)
            for bd in beside_defaults:  # (one level of that config's own plain defaults)
                if isinstance(bd, str) and bd not in ("_self_", d) and c.exists("", bd):
                    nested, _, _, nested_path = c.load(bd)
                    c.merge(nested, nested_path)
            c.merge(beside, beside_path)
    c.merge(root, root_path)
    defaults = [*stored_groups, *defaults]
    # (`- /data: openwebtext`: a leading slash names the group from the config root, as the primary config does)
    listed = {str(g).replace("optional ", "").strip().lstrip("/") for d in defaults if isinstance(d, dict) for g in d}
    packaged = {g.partition("@")[0] for g in listed}  # `- task@_global_: quadruped_walk` is the group `task`
    experiment = None
    for d in defaults:
        if not isinstance(d, dict):
            continue
        for group, option in d.items():
            g = str(group).replace("optional ", "").strip().lstrip("/")
            if g in _IGNORED_GROUPS:
                continue
            base = g.partition("@")[0]
            chosen = overrides[base].value if base in groups else option
            if g == "experiment":
                experiment = chosen
                continue
            c.apply_group(g, chosen)
    for g in sorted(groups - packaged - listed - c.applied - {"experiment"} - _IGNORED_GROUPS):
        c.apply_group(g, overrides[g].value)  # `+configs=an4`: a group the command line adds to the defaults
    for a in argv:  # `+lora@model.model.lora_config=r_8_alpha_16`: a group's option placed at a package
        if (pm := _PACKAGED_GROUP.fullmatch(a)) is not None and c.exists(pm[1], pm[3]):
            c.apply_group(f"{pm[1]}@{pm[2]}", pm[3])
    if "experiment" in overrides:
        experiment = overrides["experiment"].value
    if experiment not in (None, "null"):
        _apply_experiment(c, f"experiment/{experiment}")
    return root_path, interpolated(c.composed, overrides)


def _apply_experiment(c: _Composer, rel: str, depth: int = 0) -> None:
    """An experiment config over the composed settings: first the configs its defaults list names by path
    (``- /experiment/owt/base.yaml``: flash-attention's experiments build on a base one, itself with defaults),
    then the groups it overrides (``override /model: gpt2``), then its own settings."""
    data, exp_defaults, _, path = c.load(rel)
    for d in exp_defaults:
        if isinstance(d, str) and d.startswith("/") and depth < _MAX_DEPTH:
            _apply_experiment(c, d.strip("/").removesuffix(".yaml"), depth + 1)
        elif isinstance(d, dict):
            for k, opt in d.items():
                g = str(k).replace("override", "").strip().lstrip("/")
                if g in _EXPERIMENT_GROUPS or (g.partition("@")[0] not in _IGNORED_GROUPS and c.exists(g, opt)):
                    c.apply_group(g, opt)  # (safari's `- /pipeline: cifar`: a group that itself lists groups)
    c.merge(data, path)


_INTERPOLATION: Final = re.compile(r"\$\{([\w.]+)\}")
_INNERMOST: Final = re.compile(r"\$\{\w+:[^${}]*\}")  # a resolver call with no other inside it
_NUMBER: Final = r"\s*(-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*"
_RESOLVER: Final = re.compile(rf"\$\{{(\w+):{_NUMBER},{_NUMBER}\}}")
_EVAL: Final = re.compile(r"""\$\{eval:\s*["']?([\d\s.eE+\-*/()%]{1,200}?)["']?\s*\}""")
_BINARY: Final = {
    "times": lambda a, b: a * b, "mul": lambda a, b: a * b, "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b, "div": lambda a, b: a / b, "div_up": lambda a, b: -(-a // b),
    "ceil_div": lambda a, b: -(-a // b), "add": lambda a, b: a + b, "sum": lambda a, b: a + b,
    "plus": lambda a, b: a + b, "sub": lambda a, b: a - b, "minus": lambda a, b: a - b,
}  # fmt: skip


def _arithmetic_resolver(text: str) -> int | float | None:
    """A resolver call over numbers only (``${times:40,1}``, ``${eval:8 * 16}``): its value, or None."""
    if (m := _RESOLVER.fullmatch(text.strip())) is not None and m[1] in _BINARY:
        a, b = (float(x) if re.search(r"[.eE]", x) else int(x) for x in (m[2], m[3]))
        try:
            return _BINARY[m[1]](a, b)  # type: ignore[no-any-return]
        except (ZeroDivisionError, OverflowError):
            return None
    if (e := _EVAL.fullmatch(text.strip())) is not None:
        try:
            v = constant_arithmetic(ast.parse(e[1], mode="eval").body)
        except (ValueError, TypeError, SyntaxError, ArithmeticError, RecursionError, MemoryError):
            return None
        return v if isinstance(v, int | float) and not isinstance(v, bool) else None
    return None


def _absolute(ref: str, key: str) -> str:
    """An interpolation's target as a full key: ``${.d_model}`` in ``model.d_inner`` is ``model.d_model`` (a leading
    dot names a sibling, each further dot one level up)."""
    if not ref.startswith("."):
        return ref
    ups = len(ref) - len(ref.lstrip("."))
    parents = key.split(".")[:-ups] if ups <= key.count(".") else []
    return ".".join([*parents, ref.lstrip(".")])


def interpolated(composed: dict[str, Value], overrides: dict[str, Value]) -> dict[str, Value]:
    """OmegaConf interpolations resolved where they point at another setting (``path: ${pretrained_ckpt_path}``,
    ``batch_size: ${data.batch_size}``, ``dir: ckpts/${model.name}``), the command line's values first; arithmetic
    resolvers over numbers (``${times:${scratch.num_epochs},${scratch.phases_per_epoch}}``, ``${div_up:512,128}``,
    ``${eval:8 * 16}``: computed from the numbers, never run) too; other resolvers (``${oc.env:HOME}``,
    ``${now:%H}``) and references to nothing are left as written."""
    known = {**composed, **overrides}

    def value_of(ref: str) -> Any:
        v = known.get(ref)
        return None if v is None or (isinstance(v.value, str) and "${" in v.value) else v.value

    out = dict(composed)
    for _ in range(3):  # (a reference to a reference resolves on a later pass)
        changed = False
        for key, v in out.items():
            if not isinstance(v.value, str) or "${" not in v.value:
                continue
            whole = _INTERPOLATION.fullmatch(v.value)
            if whole is not None and (target := value_of(_absolute(whole[1], key))) is not None:
                out[key] = Value(target, v.source, v.line)
            else:
                parts = {m[1]: value_of(_absolute(m[1], key)) for m in _INTERPOLATION.finditer(v.value)}
                if not parts or any(p is None or isinstance(p, dict | list) for p in parts.values()):
                    continue
                text = v.value
                for ref, part in parts.items():
                    text = text.replace(f"${{{ref}}}", str(part))
                for _ in range(4):  # `${div_up:256, ${eval:8 * 16}}`: the inner resolver first
                    inner = [m for m in _INNERMOST.finditer(text) if m.start() > 0 or m.end() < len(text)]
                    values = [(m, _arithmetic_resolver(m[0])) for m in inner]
                    if not values or any(r is None for _, r in values):
                        break
                    for m, r in reversed(values):
                        text = text[: m.start()] + str(r) + text[m.end() :]
                computed = _arithmetic_resolver(text)
                out[key] = Value(text if computed is None else computed, v.source, v.line)
            known[key] = out[key]
            changed = True
        if not changed:
            break
    return out
