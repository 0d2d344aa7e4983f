"""Gathering a job's settings in the order they override each other, each value with where it came from.

Entry-script literals and argparse defaults, then argv (argparse-resolved, or ``--key value``
as given), then config files named on the command line, then Hydra composition, then
``key=value`` overrides; a DeepSpeed JSON named by the settings is read under ``deepspeed.``.
For ``llamafactory-cli``: its YAML, then flags and overrides.
"""

from __future__ import annotations

import ast
import configparser
import contextlib
import functools
import json
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from schedmate.agents.advisor.extract.config_sources import (
    ArgSpec,
    Value,
    argparse_specs,
    argument_wrappers,
    class_defaults,
    cli_function_defaults,
    config_tree_assignments,
    flag_values,
    flatten,
    gin_values,
    init_attribute_assignments,
    load_structured,
    load_with_bases,
    parse_literal,
    parse_overrides,
    python_assignments,
    python_config,
    resolve_argparse,
    set_defaults_values,
    settings_from_args,
    tap_specs,
)
from schedmate.agents.advisor.extract.dict_parsers import (
    dict_parser_specs,
    factory_settings,
    flag_factory_defaults,
    parse_pairs,
)
from schedmate.agents.advisor.extract.hydra import compose_hydra, interpolated
from schedmate.agents.advisor.extract.launch import Launch, small_count
from schedmate.agents.advisor.extract.syntax import builds_hf_parser, callee_name, parse, walk
from schedmate.agents.advisor.extract.syspath import sys_path_roots
from schedmate.agents.advisor.extract.usesites import CONFIG_CLASS_NAME, SPLIT_LOADER, Use, find_uses, path_call
from schedmate.agents.advisor.extract.workspace import Workspace

__all__ = ["Extraction", "collect_settings"]

# A leaf under an evaluation/test section ("eval.max_iters") is not the training setting of that name.
_EVAL_SECTION: Final = re.compile(
    r"(?:^|\.)(?:eval|evaluation|evaluate|val|valid|validation|test|testing|inference|benchmark|demo|debug|sampler\w*|"
    r"generate|generation|"  # (audiocraft's `dataset.generate.batch_size`: the samples it writes, not training)
    r"(?:eval|val|valid|validation|test)_\w+|"  # (`eval_dataset.huggingface_dataset.batch_size`)
    r"sampling\w*|"
    r"tensorboard|visuali[sz]ation)\.",
    re.I,
)
_CONFIG_FLAGS: Final = ("-c", "--config", "--config_file", "--config-file", "--cfg", "--config-path", "--base",
                        "--gin_file", "--gin_files")  # fmt: skip
_CONFIG_SUFFIXES: Final = (".py", ".yaml", ".yml", ".json", ".toml", ".gin")
_CONFIG_OPTION: Final = re.compile(r"(?:^|_)(?:config|cfg|conf)(?:_|$)(?!.*deepspeed)", re.I)


@dataclass
class Extraction:
    """Merged settings and what the code says beyond them."""

    launch: Launch
    values: dict[str, Value] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    code: str = ""  # concatenated source of the entry script (for framework/model heuristics)
    per_rank_accum_divided: bool = False
    batch_divided_by_world: bool = False
    batch_split_in_code: bool = False  # the code divides a batch setting by the process count somewhere
    uses: dict[str, Use] = field(default_factory=dict)  # what consumer APIs receive (see usesites)
    config_classes: dict[str, str] = field(default_factory=dict)  # local name → config class it instantiates
    modules: list[tuple[str, str]] = field(default_factory=list)  # the job's modules the entry reaches (path, text)
    training_modules: list[str] = field(default_factory=list)  # job modules a thin entry calls to train (at most 2)

    def get(self, *keys: str) -> Value | None:
        """The value of the first key that is set (exact dotted key, then leaf name)."""
        found = self.find(*keys)
        return found[1] if found else None

    def find(self, *keys: str) -> tuple[str, Value] | None:
        """The (key, value) of the first key that is set (exact dotted key, then leaf name)."""
        for k in keys:
            if k in self.values and self.values[k].value is not None:
                return k, self.values[k]
        for fold in (False, True):  # a leaf of the same case first; then yacs' upper-case keys (``TRAIN.BATCH_SIZE``)
            for k in keys:
                want = k.lower() if fold else k
                hits = [
                    (key, v)
                    for key, v in self.values.items()
                    if ((leaf := key.rsplit(".", 1)[-1]) == want or (fold and leaf.isupper() and leaf.lower() == want))
                    and v.value is not None and not _EVAL_SECTION.search(key)
                ]  # fmt: skip
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
        elif a.partition("=")[0] in _CONFIG_FLAGS and a.partition("=")[2]:
            path = a.partition("=")[2]  # `--gin_file=base.gin`
        elif not a.startswith("-") and "=" not in a and a.endswith(_CONFIG_SUFFIXES):
            path = a
        elif (
            not a.startswith("-") and a.partition("=")[0] in ("config", "cfg", "config_file", "config_path")
            and a.partition("=")[2].endswith(_CONFIG_SUFFIXES)
        ):  # fmt: skip
            path = a.partition("=")[2]  # OmegaConf's dot-list: `config=apps/main/configs/llama_1B.yaml` (lingua)
        if path is None or (i > 0 and args[i - 1] in _CONFIG_FLAGS and path == a):
            continue
        if i > 0 and args[i - 1].lstrip("-").replace("-", "_") in ("deepspeed", "deepspeed_config") and path == a:
            continue  # DeepSpeed's own config (`--deepspeed ds_config.json`): read as DeepSpeed's, not the job's
        out.append(path)
    return out


_JOINED_FOLDER: Final = re.compile(r"""os\.path\.join\(\s*["']([\w.-]{1,64})["']\s*,\s*[\w.]+\s*\)""")
# A config file's name the code joins to a folder it is given: `args.work_path + "/config.yaml"`,
# `os.path.join(args.exp_dir, "config.yaml")`, `f"{args.work_path}/config.yaml"`
_JOINED_FILE: Final = re.compile(
    r"""(?:\+\s*|os\.path\.join\([\w.\[\]'"]+,\s*|\}/?)["']?/?([\w-]{1,64}\.(?:ya?ml|json|toml))["']"""
)


def _files_in_folders(ws: Workspace, args: list[str], code: str) -> list[str]:
    """Config files in folders the command names, where the entry joins that name to the folder it is given
    (CIFAR-ZOO's ``--work-path experiments/cifar10/preresnet1202`` and ``open(args.work_path + "/config.yaml")``)."""
    names = dict.fromkeys(_JOINED_FILE.findall(code))
    out = []
    for a in args:
        if a.startswith("-") or "=" in a or a.endswith(_CONFIG_SUFFIXES):
            continue
        folder = a.rstrip("/").removeprefix("./")
        out += [f"{folder}/{n}" for n in names if ws.exists(f"{folder}/{n}")]
    return out[:4]


_SPEC: Final = re.compile(r"[A-Za-z_][\w.-]*(?:,[A-Za-z_]\w*=[^,=]+)+")  # "adam,lr=0.0001,beta1=0.9"
_SETTINGS_NAME: Final = re.compile(r"(?i)^(?:config|cfg|conf|opts?|args|hparams|hps|params|settings)$")
_LOADS_FILE: Final = frozenset({"load", "safe_load", "full_load"})


def _fixed_path(node: ast.expr, script: str) -> str | None:
    """A path the entry spells out, relative to the working directory: a literal, or one joined to the script's own
    folder (``Path(Path(__file__).parent, "config/train.yaml")``, ``os.path.join(os.path.dirname(__file__), …)``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id == "__file__":
        return script
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _fixed_path(node.value, script)
        return posixpath.dirname(inner) if inner is not None else None
    if isinstance(node, ast.Call) and node.args and not node.keywords:
        parts = [_fixed_path(a, script) for a in node.args]
        if any(p is None for p in parts):
            return None
        return path_call(ast.unparse(node.func), [str(p) for p in parts]) or None  # (the resolver's path calls)
    return None


def _read_fixed_config(ws: Workspace, ex: Extraction, code: str, script: str) -> None:
    """A config file the entry opens at a path it spells out and binds to a settings name (BYOL's ``config =
    yaml.safe_load(f)`` after ``with open(Path(Path(__file__).parent, 'config/train_config.yaml')) as f``): its values
    are the job's settings, below anything the command line or a named config file sets."""
    try:
        tree = parse(code)
    except SyntaxError:
        return
    opened: dict[str, str] = {}  # `with open(path) as f`: f → path
    for node in walk(tree):
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if (
                    isinstance(item.optional_vars, ast.Name) and isinstance(call, ast.Call) and call.args
                    and getattr(call.func, "id", "") == "open" and (path := _fixed_path(call.args[0], script))
                ):  # fmt: skip
                    opened[item.optional_vars.id] = path
    for node in walk(tree):
        if not (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and _SETTINGS_NAME.match(node.targets[0].id) and isinstance(node.value, ast.Call) and node.value.args
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in _LOADS_FILE
        ):  # fmt: skip
            continue
        arg = node.value.args[0]
        if isinstance(arg, ast.Name):
            path = opened.get(arg.id)
        elif isinstance(arg, ast.Call) and getattr(arg.func, "id", "") == "open" and arg.args:
            path = _fixed_path(arg.args[0], script)
        else:
            path = _fixed_path(arg, script)
        if not path or not path.endswith((".yaml", ".yml", ".json", ".toml")):
            continue
        loaded = load_with_bases(ws.read_text_or_none, posixpath.normpath(path))
        if loaded:
            ex.sources.append(posixpath.normpath(path))
            ex.values.update({k: v for k, v in loaded.items() if k not in ex.values})
        return


def _one_dict_file(values: dict[str, Value], path: str) -> dict[str, Value]:
    """A Python config file that binds one name to one dict (BiSeNet's ``cfg = dict(model_type=…, …)``, read back
    as ``cfg_file.cfg``): its keys are the settings, as the job reads them (``cfg.ims_per_gpu``)."""
    own = {k: v for k, v in values.items() if v.source == path}
    roots = {k.split(".", 1)[0] for k in own}
    if len(roots) != 1 or not all("." in k for k in own):
        return {}
    return {k.split(".", 1)[1]: v for k, v in own.items()}


def _sets_attributes_from_items(text: str | None) -> bool:
    """Whether code copies a mapping's items onto an object's attributes (``for k, v in cfg_item.items():
    setattr(args, k, v)``, PVT's ``update_from_config``): the loaded config then overrides the parsed options."""
    if not text or "setattr" not in text:
        return False
    try:
        tree = parse(text)
    except (SyntaxError, ValueError):
        return False
    for loop in walk(tree):
        if not (
            isinstance(loop, ast.For) and isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2
            and all(isinstance(e, ast.Name) for e in loop.target.elts) and isinstance(loop.iter, ast.Call)
            and isinstance(loop.iter.func, ast.Attribute) and loop.iter.func.attr == "items"
        ):  # fmt: skip
            continue
        k, v = (e.id for e in loop.target.elts if isinstance(e, ast.Name))
        for call in walk(loop):
            if (
                isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "setattr"
                and len(call.args) == 3 and [ast.unparse(a) for a in call.args[1:]] == [k, v]
            ):  # fmt: skip
                return True
    return False


def _read_config_files(
    ws: Workspace,
    ex: Extraction,
    args: list[str],
    code: str = "",
    loose: dict[str, Value] | None = None,
    copied_onto_args: bool = False,
) -> None:
    """Config files the command names, merged in order (each over the bases it names). A name that is not a file
    as given is looked up in a folder the entry joins it to (``os.path.join("configs", args.config)``). A ``--key
    value`` of the command that no option of the script defines (``loose``) but a key of the file does wins over
    the file: the parser is the config's own (theconf's ``ConfigArgumentParser``), or the command would fail.
    ``copied_onto_args``: the job copies the config's items onto the parsed options (``setattr(args, k, v)``), so a
    Python config binding one dict (``cfg = dict(model='pvt_v2_b2', ...)``) overrides the options it names."""
    for named in [*_config_files(args), *_files_in_folders(ws, args, code)]:
        path, text = named, ws.read_text_or_none(named)
        for folder in _JOINED_FOLDER.findall(code) if text is None else ():
            if (text := ws.read_text_or_none(f"{folder}/{named}")) is not None:
                path = f"{folder}/{named}"
                break
        if text is None and "/" in named.strip("./"):  # `-c configs/x/run.yaml` found by the job's config search
            # path (Hydra's `initialize_config_module("sam2")`): the one workspace file whose path ends with it
            found = ws.only_file_named(posixpath.basename(named))
            if found is not None and found.endswith("/" + named.removeprefix("./")):
                path, text = found, ws.read_text_or_none(found)
        if text is None:
            continue
        ex.sources.append(path)
        if path.endswith((".cfg", ".ini", ".conf")) and (pairs := _ini_file(text, path)):
            ex.values.update(pairs)  # configparser sections: `[Train] batch_size = 16`
        elif not path.endswith(_CONFIG_SUFFIXES) and (pairs := _key_value_file(text, path)):
            given = set(flag_values(args))  # ConfigArgParse: the command line wins over its config file
            ex.values.update({k: v for k, v in pairs.items() if k not in given})
        elif path.endswith(".gin"):
            ex.values.update(gin_values(ws.read_text_or_none, path))
        elif path.endswith(".py"):
            for base in _local_imports(ws, text, path)[:8]:  # ml_collections: `get_default_configs()` of a module
                if base_text := ws.read_text_or_none(base):
                    ex.values.update(config_tree_assignments(base_text, base))
            ex.values.update(python_assignments(text, path, arithmetic=True))
            nested = flatten(python_config(ws.read_text_or_none, path))  # mmcv / MMEngine: dict(...) over _base_
            ex.values.update({k: Value(v, path, None) for k, v in nested.items() if k not in ex.values or "." in k})
            ex.values.update(config_tree_assignments(text, path))
            ex.values.update(_config_class_settings(ws, text, path))
            one = _one_dict_file(ex.values, path)
            ex.values.update({k: v for k, v in one.items() if k not in ex.values or copied_onto_args})
        else:
            loaded = load_with_bases(ws.read_text_or_none, path)
            if path.endswith((".yaml", ".yml")):  # OmegaConf's `${a.b}` references (and arithmetic resolvers)
                loaded = interpolated(loaded, {})
            ex.values.update(loaded)
            ex.values.update({k: v for k, v in (loose or {}).items() if k in loaded})


def _read_settings_files(ws: Workspace, ex: Extraction, options: dict[str, Value], args: list[str]) -> None:
    """A structured file an option of any name is given (``--hparams_path standard_hparams/gnmt.json``) whose keys
    are the script's own options (two at least): a settings file, as a config flag's would be. Its values replace
    the options' defaults, never what the command line sets."""
    named = set(_config_files(args))
    for option, given in list(options.items())[:200]:
        path = given.value
        if (
            given.source != "command" or not isinstance(path, str) or path in named
            or not path.endswith((".json", ".yaml", ".yml", ".toml")) or not ws.exists(path.removeprefix("./"))
        ):  # fmt: skip
            continue
        loaded = load_with_bases(ws.read_text_or_none, posixpath.normpath(path))
        if len((set(loaded) & set(options)) - {option}) < 2:
            continue  # a data file (`--train_file train.json`), or a config of something else
        ex.sources.append(posixpath.normpath(path))
        for key, value in loaded.items():
            held = ex.values.get(key)
            if held is None or held.source != "command":
                ex.values[key] = value


def _config_class_settings(ws: Workspace, text: str, path: str) -> dict[str, Value]:
    """A config file that is one class setting ``self.x = ...`` in ``__init__`` (YOLOX ``class Exp(MyExp)``): its
    attributes over those of the workspace base classes it derives from (three levels), as settings."""
    try:
        tree = parse(text)
    except (SyntaxError, ValueError):
        return {}
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    return _class_chain_settings(ws, tree, classes[0], path, 0) if len(classes) == 1 else {}


def _class_chain_settings(
    ws: Workspace,
    tree: ast.Module,
    node: ast.ClassDef,
    file: str,
    depth: int,
    *,
    class_fields: bool = False,
    own: bool = True,
) -> dict[str, Value]:
    """``node``'s ``__init__`` attributes over its bases' (each found by :func:`_class_def` as ``file`` sees it); with
    ``class_fields``, its class-level fields too (``batch_size = 512`` of a settings class), over the attributes;
    without ``own``, only what it inherits."""
    out: dict[str, Value] = {}
    for base in node.bases if depth < 3 else []:
        if not isinstance(base, ast.Name) or base.id in ("object", node.name):
            continue
        found = _class_def(ws, tree, base.id, file, hops=3)
        if found is None:
            continue
        base_node, base_file = found
        base_tree = tree if base_file == file else _parsed(ws, base_file)
        if base_tree is not None:
            out.update(_class_chain_settings(ws, base_tree, base_node, base_file, depth + 1, class_fields=class_fields))
    if own:
        out.update(init_attribute_assignments(node, file))
    if own and class_fields:
        out.update(class_defaults(node, file))
    return out


def _parsed(ws: Workspace, path: str) -> ast.Module | None:
    text = ws.read_text_or_none(path)
    try:
        return parse(text) if text is not None else None
    except (SyntaxError, ValueError):
        return None


_KEY_VALUE_LINE: Final = re.compile(r"^\s*([A-Za-z_][\w.-]*)\s*[=:]\s*(.*?)\s*$")


def _key_value_file(text: str, path: str) -> dict[str, Value]:
    """A ConfigArgParse-style ``key = value`` file (``--config configs/lego.txt``): one setting per line, ``#``
    comments; a file with ``[sections]`` (INI, Darknet ``.cfg``) or a line of anything else is not one."""
    out: dict[str, Value] = {}
    for n, raw in enumerate(text.splitlines()[:2000], start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _KEY_VALUE_LINE.match(line)
        if m is None or line.startswith("["):
            return {}
        out[m.group(1).replace("-", "_")] = Value(parse_literal(m.group(2)), path, n)
    return out


def _ini_file(text: str, path: str) -> dict[str, Value]:
    """An INI file as Python's ``configparser`` reads it (``[Train]`` then ``batch_size = 16``): each key as
    ``Section.key`` and, where no other section has it, as ``key`` alone. A file configparser refuses (Darknet's
    ``.cfg`` repeats its ``[convolutional]`` sections) is no INI file: nothing."""
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # (keys keep their case, as the job reads them)
    try:
        parser.read_string(text[:200_000], source=path)
    except (configparser.Error, UnicodeError):
        return {}
    lines = {m.group(1): n for n, raw in enumerate(text.splitlines()[:4000], start=1)
             if (m := re.match(r"\s*([\w.-]+)\s*[=:]", raw))}  # fmt: skip
    out: dict[str, Value] = {}
    seen: dict[str, int] = {}
    for section in parser.sections():
        for key, raw in parser.items(section, raw=True):
            value = Value(parse_literal(raw) if raw.strip() else None, path, lines.get(key))
            out[f"{section}.{key}"] = value
            seen[key] = seen.get(key, 0) + 1
            out.setdefault(key, value)
    return {k: v for k, v in out.items() if "." in k or seen.get(k, 0) == 1}


def _imported_names(text: str) -> Iterator[tuple[str, int]]:
    """(module, level) of every import in ``text``: ``from a.b import c`` gives ``a.b`` and ``a.b.c``."""
    try:
        tree = parse(text)
    except (SyntaxError, ValueError):
        return
    for node in walk(tree):
        if isinstance(node, ast.ImportFrom):
            yield node.module or "", node.level
            for a in node.names:
                yield (f"{node.module}.{a.name}" if node.module else a.name), node.level
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, 0
    if "import_module(" in text:  # `importlib.import_module("src.training.main")`, or a dotted "module.function"
        for node in walk(tree):  # string it splits first (submitit's `main_func = "src.training.main.main"`)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _DOTTED.fullmatch(node.value):
                yield node.value, 0
                yield node.value.rsplit(".", 1)[0], 0


_DOTTED: Final = re.compile(r"[A-Za-z_]\w{0,40}(?:\.[A-Za-z_]\w{0,40}){1,5}")


def _flagfiles_expanded(ws: Workspace, launch: Launch) -> list[str]:
    """absl's ``--flagfile=PATH``: the flags the file lists (one per line, ``#`` comments), in its place on the
    command line, as absl reads them; a file outside the workspace, or missing, adds nothing."""
    return _expand_flagfiles(ws, launch.cwd or ".", launch.args, 0)


def _expand_flagfiles(ws: Workspace, cwd: str, args: list[str], depth: int) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(args):
        tok = args[i]
        path = tok.partition("=")[2] if tok.startswith("--flagfile=") else None
        if tok == "--flagfile" and i + 1 < len(args):
            path, i = args[i + 1], i + 1
        if path is None:
            out.append(tok)
        elif depth < 3:
            rel = posixpath.normpath(posixpath.join(cwd, path))
            text = ws.read_text_or_none(rel) if not rel.startswith("..") else None
            lines = [ln.strip() for ln in (text or "").splitlines()[:2000]]
            out += _expand_flagfiles(ws, cwd, [ln for ln in lines if ln and not ln.startswith("#")], depth + 1)
        i += 1
    return out


def _local_imports(ws: Workspace, code: str, script: str) -> list[str]:
    """Workspace modules the entry script imports, and the modules their packages' ``__init__`` import (two
    levels at most, 24 files)."""
    out: list[str] = []
    frontier = [(code, script)]
    for _ in range(2):
        nxt: list[tuple[str, str]] = []
        for text, importer in frontier:
            for mod, level in _imported_names(text):
                path = ws.module_file(mod, level, importer)
                if path and path not in out and path != script and len(out) < 24:
                    out.append(path)
                    if path.endswith("__init__.py") and (t := ws.read_text_or_none(path)):
                        nxt.append((t, path))
        frontier = nxt
    return out


def _imported_parser_specs(ws: Workspace, code: str, script: str) -> list[ArgSpec]:
    """The arguments of a parser the entry builds with a function of the job's own modules
    (``from pkg.run.submit import get_args_parser``): its ``add_argument`` / ``click.option`` calls."""
    try:
        tree = parse(code)
    except (SyntaxError, ValueError):
        return []
    specs: list[ArgSpec] = []
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        named = any(re.search(r"pars|args?\b|_args|options", a.name, re.I) for a in node.names)
        called = [
            a.asname or a.name
            for a in node.names
            if re.search(rf"\b{re.escape(a.asname or a.name)}\s*\(\)\s*\.\s*parse", code)
        ]
        path = ws.module_file(node.module, node.level, script)
        text = ws.read_text_or_none(path) if path else None
        if not named and not called and text:  # `from parameter import *` / `from args import get_arguments`, then
            parsers = _parsing_functions_called(text, code)  # `args = get_arguments()`: a function of that module
            called = parsers if any(a.name == "*" or a.name in parsers for a in node.names) else []  # runs the parser
        if not named and not called and text and _runs_foreign_parser(code, text):
            called = [a.asname or a.name for a in node.names]  # `hparams = Hparams(); hp = hparams.parser.parse_args()`
        if not named and not called:
            continue  # (`opt = opts().parse()`: an options class whose method builds and runs the parser)
        if path and path != script and text:
            specs += _base_class_specs(ws, text, path) + argparse_specs(text)
    return specs


def _runs_foreign_parser(code: str, module_text: str) -> bool:
    """Whether the entry parses a command line with a parser it does not define: it calls ``parse_args()`` and adds
    no argument itself, while the imported module builds an ``ArgumentParser`` and adds arguments (Kyubyong's
    transformer: ``class Hparams: parser = argparse.ArgumentParser(); parser.add_argument(...)``)."""
    return (
        re.search(r"\.parse(?:_known)?_args\(", code) is not None
        and ".add_argument(" not in code
        and "ArgumentParser(" in module_text
        and ".add_argument(" in module_text
    )


def _parsing_functions_called(module_text: str, code: str) -> list[str]:
    """Functions of ``module_text`` that run a parser (``parse_args``) and that ``code`` calls by name."""
    try:
        tree = parse(module_text)
    except (SyntaxError, ValueError):
        return []
    return [
        fn.name for fn in tree.body
        if isinstance(fn, ast.FunctionDef) and not fn.name.startswith("_")
        and any(isinstance(c, ast.Call) and getattr(c.func, "attr", "") in ("parse_args", "parse_known_args")
                for c in walk(fn))
        and re.search(rf"\b{re.escape(fn.name)}\s*\(", code)
    ]  # fmt: skip


def _base_class_specs(ws: Workspace, text: str, path: str, hops: int = 2) -> list[ArgSpec]:
    """Arguments an options class inherits: ``class TrainOptions(BaseOptions)`` whose ``initialize`` calls the base
    class's, which adds the shared ``--dataroot``, ``--fp16``, ... (pix2pix-style option classes), base first."""
    try:
        tree = parse(text)
    except (SyntaxError, ValueError):
        return []
    bases = {b.id for c in tree.body if isinstance(c, ast.ClassDef) for b in c.bases if isinstance(b, ast.Name)}
    specs: list[ArgSpec] = []
    for node in tree.body:
        if hops <= 0 or not isinstance(node, ast.ImportFrom) or not any(a.name in bases for a in node.names):
            continue
        base = ws.module_file(node.module or "", node.level, path)
        if base and base != path and (base_text := ws.read_text_or_none(base)):
            specs += _base_class_specs(ws, base_text, base, hops - 1) + argparse_specs(base_text)
    return specs


def _class_def(ws: Workspace, tree: ast.Module, name: str, file: str, hops: int = 2) -> tuple[ast.ClassDef, str] | None:
    """The definition of class ``name`` as ``file`` sees it: its own, or one it imports from the job's modules (a
    package ``__init__`` that re-exports it is followed)."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node, file
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or hops <= 0:
            continue
        for alias in node.names:
            star = alias.name == "*"  # `from .training_args import *` in a package's `__init__`
            if (alias.asname or alias.name) != name and not star:
                continue
            whole = f"{node.module}.{alias.name}" if node.module else alias.name
            for mod in [node.module or ""] if star else [whole, node.module or ""]:
                path = ws.module_file(mod, node.level, file) if mod else None
                text = ws.read_text_or_none(path) if path else None
                if not path or not text:
                    continue
                try:
                    sub = parse(text)
                except (SyntaxError, ValueError):
                    continue
                found = _class_def(ws, sub, name if star else alias.name, path, hops - 1)
                if found is not None:
                    return found
    return None


_IDENTIFIER: Final = re.compile(r"[A-Za-z_]\w{2,63}")
_READS_POSITIONAL: Final = re.compile(r"""\bsys\.argv\[\s*[1-9]|\.add_argument\(\s*['"][A-Za-z_]""")


def _config_class_named_on_command(ws: Workspace, ex: Extraction, args: list[str]) -> None:
    """``python submit.py b32_400m``: a bare word of the command that is the name of a settings class of the job's
    own (``class b32_400m(Config): batch_size = 512 …``, looked up by name by the entry, MetaCLIP's
    ``search_config(sys.argv[1])``). Its fields over those of its bases are the run's settings: they replace the
    script's defaults, never what the command sets. A class that is a network, or holds fewer than three literal
    settings, is none."""
    words = [
        a for i, a in enumerate(args[:12])
        if _IDENTIFIER.fullmatch(a) and (i == 0 or not args[i - 1].startswith("-") or "=" in args[i - 1])
    ]  # fmt: skip
    if not words or not _READS_POSITIONAL.search(ex.code):
        return  # (only an entry that reads a positional argument: `sys.argv[1]`, `add_argument("config_name")`)
    wanted = re.compile(r"^class (" + "|".join(map(re.escape, words)) + r")\b[^\n]*:", re.M)
    found: tuple[ast.ClassDef, str, ast.Module] | None = None
    for n, file in enumerate(ws.files((".py",))):
        if n >= 600 or found is not None:
            break
        text = ws.read_text_or_none(file)
        if not text or not (m := wanted.search(text)):
            continue
        try:
            tree = parse(text)
        except (SyntaxError, ValueError):
            continue
        cls = next((c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == m[1]), None)
        if cls is not None and not any(re.search(r"Module|Net|Model", ast.unparse(b)) for b in cls.bases):
            found = (cls, file, tree)
    if found is None:
        return
    cls, file, tree = found
    fields = _class_chain_settings(ws, tree, cls, file, 0, class_fields=True)
    if len([v for v in fields.values() if v.value is not None]) < 3:
        return
    ex.sources.append(file)
    ex.config_classes[cls.name] = (
        cls.name
    )  # (a registry call that builds it, `getattr(module, name)()`, builds no model)
    for key, value in fields.items():
        held = ex.values.get(key)
        if held is None or held.source != "command":
            ex.values[key] = value


def _config_classes(ws: Workspace, ex: Extraction, code: str, script: str) -> None:
    """Config classes the entry instantiates bare (``train_config = TRAIN_CONFIG()``), a class its name calls a config
    built with arguments (``TransformerConfig(num_layers=2, …)``, ``configure.PretrainingConfig(name, data_dir)``), or
    those it hands to ``HfArgumentParser`` or ``tyro.cli``: their field defaults (and ``self.x = literal`` in
    ``__init__``), with the literal keywords of the construction over them, become the lowest-priority settings
    (``Class.field``)."""
    try:
        tree = parse(code)
    except (SyntaxError, ValueError):
        return
    names: set[str] = set()
    in_modules: dict[str, str] = {}  # `configure_pretraining.PretrainingConfig(name, data_dir)`: class → module
    built: dict[str, list[ast.Call]] = {}  # a config class → its constructions
    for node in walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and (
            not (node.args or node.keywords) or CONFIG_CLASS_NAME.search(node.func.id)
        ):
            names.add(node.func.id)  # built bare, or a class its name calls a config built with arguments
            built.setdefault(node.func.id, []).append(node)
        elif (
            isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and CONFIG_CLASS_NAME.search(node.func.attr)
        ):  # fmt: skip
            in_modules[node.func.attr] = node.func.value.id
            built.setdefault(node.func.attr, []).append(node)
        elif (
            getattr(node.func, "id", getattr(node.func, "attr", "")) == "cli" and node.args
            and isinstance(node.args[0], ast.Name) and re.search(r"^\s*(?:import tyro|from tyro\b)", code, re.M)
        ):  # fmt: skip
            names.add(node.args[0].id)  # `args = tyro.cli(Args)`: a dataclass whose fields are the options
        elif builds_hf_parser(node):
            arg = node.args[0]
            names.update(e.id for e in (arg.elts if isinstance(arg, ast.Tuple | ast.List) else [arg])
                         if isinstance(e, ast.Name))  # fmt: skip
    for fn in walk(tree):  # `@draccus.wrap()` / lerobot's `@parser.wrap()` over `def train(cfg: TrainPipelineConfig)`:
        if (  # the dataclass the decorator parses the command line into
            isinstance(fn, ast.FunctionDef) and fn.args.args and isinstance(fn.args.args[0].annotation, ast.Name)
            and any(isinstance(d, ast.Call) and callee_name(d) == "wrap" for d in fn.decorator_list)
        ):  # fmt: skip
            names.add(fn.args.args[0].annotation.id)
    defaults: dict[str, Value] = {}
    for name in sorted([*names, *in_modules])[:16]:
        found = (
            _class_def(ws, tree, name, script)
            if name in names
            else _module_class(ws, tree, in_modules[name], name, script)
        )
        if found is None:
            continue
        cls, file = found
        inherited = _inherited_fields(ws, tree if file == script else _parsed(ws, file), cls, file)
        declared = {**inherited, **class_defaults(cls, file)}  # (`class Tacotron2Config(TacotronConfig)`: `lr` there)
        fields = {**_init_literals(cls, file), **declared}
        decorated = any("dataclass" in ast.unparse(d) for d in cls.decorator_list)
        calls = built.get(name, [])
        for call in calls:  # what a construction passes replaces the defaults
            for gone in list(declared)[: len(call.args)] if decorated else []:
                fields.pop(gone, None)  # a dataclass's fields in order, given positionally: not told here
            for kw in call.keywords:
                if kw.arg is None:
                    continue  # `**hparams`: overrides that cannot be told; the defaults stand
                fields.pop(kw.arg, None)  # `TransformerConfig(num_layers=args.layers)`: not the default; and a
                if len(calls) == 1:  # class built in several places (`if args.model_card == 'gpt2.md':`): which?
                    with contextlib.suppress(ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                        fields[kw.arg] = Value(ast.literal_eval(kw.value), script, call.lineno)
        if not fields or not (decorated or len(fields) >= 2) or any("Module" in ast.unparse(b) for b in cls.bases):
            continue
        ex.config_classes[name] = cls.name
        defaults.update({f"{cls.name}.{k}": v for k, v in fields.items()})
    ex.values = {**defaults, **ex.values}


def _inherited_fields(ws: Workspace, tree: ast.Module | None, cls: ast.ClassDef, file: str) -> dict[str, Value]:
    """The settings ``cls`` inherits: its job-defined bases' class fields and ``__init__`` literals, nearest last."""
    return {} if tree is None else _class_chain_settings(ws, tree, cls, file, 0, class_fields=True, own=False)


def _module_class(ws: Workspace, tree: ast.Module, alias: str, name: str, file: str) -> tuple[ast.ClassDef, str] | None:
    """Class ``name`` of the job's module that ``file`` imports as ``alias`` (``import configure_pretraining``)."""
    for node in tree.body:
        if not isinstance(node, ast.Import):
            continue
        for a in node.names:
            if (a.asname or a.name) != alias:
                continue
            path = ws.module_file(a.name, 0, file)
            sub = _parsed(ws, path) if path else None
            return _class_def(ws, sub, name, path, hops=0) if sub is not None and path else None
    return None


def _init_literals(cls: ast.ClassDef, file: str) -> dict[str, Value]:
    """``self.x = <literal>`` said directly in ``__init__`` (not under an ``if``: ``if self.debug: self.batch = 8`` is
    not the default), the way a settings class without fields gives its defaults."""
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    out: dict[str, Value] = {}
    for stmt in init.body if init is not None else []:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            t = stmt.targets[0]
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                try:
                    v = ast.literal_eval(stmt.value)
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    continue
                if isinstance(v, int | float | str | bool):
                    out[t.attr] = Value(v, file, stmt.lineno)
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


_REGISTERED: Final = re.compile(
    r"""^@\w+\.register_subclass\(\s*["']([\w.-]{1,64})["']\s*\)\s*\n(?:@[^\n]*\n)*class (\w+)\(""", re.M
)


def _registered_choices(ws: Workspace, ex: Extraction) -> None:
    """``--policy.type=act`` on the command line picks the config class registered as "act" (draccus' choice
    registries: ``@PreTrainedConfig.register_subclass("act") class ACTConfig``): its field defaults become the
    section's settings (``policy.optimizer_lr``), under anything the command says, and the model class that declares
    it as its ``config_class`` (``class ACTPolicy: config_class = ACTConfig``) is noted as ``policy._model_class``."""
    given = {**parse_overrides(ex.launch.args), **flag_values(ex.launch.args)}  # (read before they are merged)
    chosen = {
        k.removesuffix(".type"): str(v.value) for k, v in given.items()
        if k.endswith(".type") and k.count(".") == 1 and isinstance(v.value, str)
    }  # fmt: skip
    if not chosen:
        return
    reads = 0
    for n, file in enumerate(ws.files((".py",))):
        if n >= 3000 or reads >= 200 or not chosen:
            break
        if "config" not in file.rsplit("/", 1)[-1].lower():
            continue
        reads += 1
        text = ws.read_text_or_none(file) or ""
        for m in _REGISTERED.finditer(text) if "register_subclass" in text else ():
            section = next((s for s, name in chosen.items() if name == m[1]), None)
            if section is None:
                continue
            del chosen[section]
            tree = _parsed(ws, file)
            cls = (
                next((c for c in walk(tree) if isinstance(c, ast.ClassDef) and c.name == m[2]), None) if tree else None
            )
            for key, v in (class_defaults(cls, file) if cls is not None else {}).items():
                ex.values.setdefault(f"{section}.{key}", v)
            model = _class_declaring_config(ws, file, m[2])
            if model is not None:
                ex.values.setdefault(f"{section}._model_class", model)


def _class_declaring_config(ws: Workspace, config_file: str, config_cls: str) -> Value | None:
    """The class beside ``config_file`` (its folder's modules) that declares ``config_class = <config_cls>``."""
    folder = config_file.rsplit("/", 1)[0] if "/" in config_file else "."
    pattern = re.compile(
        rf"^class (\w+)\([^)]*\):(?:\n[^\n]*){{0,40}}?\n[ \t]+config_class\s*=\s*{re.escape(config_cls)}\b", re.M
    )
    for name in sorted(p.name for p in ws.resolve(folder).iterdir())[:60] if ws.is_dir(folder) else []:
        if name.endswith(".py") and (text := ws.read_text_or_none(f"{folder}/{name}")) and (m := pattern.search(text)):
            dotted = f"{folder}/{name}".removesuffix(".py").replace("/", ".")  # (a class path, as Hydra's targets)
            return Value(f"{dotted}.{m[1]}", f"{folder}/{name}", text[: m.start()].count("\n") + 1)
    return None


def _swift(ex: Extraction) -> None:
    """ms-swift's ``swift sft|pt|rlhf --model … --dataset … --tuner_type lora``: transformers' Trainer run on a Hub
    (or ModelScope) checkpoint, in its own words: ``--model`` is the checkpoint, the first ``--dataset`` (less its
    ``#500`` sample count) the data, ``--tuner_type``/``--train_type`` the adapters, ``--deepspeed zero3`` its
    bundled ZeRO config, and ``--torch_dtype bfloat16`` the precision it trains in when no flag says otherwise."""
    launch = ex.launch
    given = flag_values(launch.args)
    ex.values.update(given)
    stage = (launch.module or "").rpartition(".")[2]
    ex.values["stage"] = Value("dpo" if stage == "rlhf" else stage, "command")
    if (model := given.get("model")) is not None:
        ex.values["model_name_or_path"] = model
    datasets = [a for a in _after_flag(launch.args, "--dataset") if not a.startswith("-")]
    if datasets:
        ex.values["dataset"] = Value(datasets[0].split("#", 1)[0], "command")
    kind = given.get("tuner_type") or given.get("train_type")
    if kind is not None:
        ex.values["finetuning_type"] = Value(str(kind.value), "command")
    zero = given.get("deepspeed")
    if zero is not None and (m := re.fullmatch(r"zero(\d)(?:_offload)?", str(zero.value))) is not None:
        ex.values["deepspeed.zero_optimization.stage"] = Value(int(m[1]), "command")
    dtype = str((given.get("torch_dtype") or Value(None, "")).value)
    if given.get("bf16") is None and given.get("fp16") is None and dtype in ("bfloat16", "float16"):
        ex.values["bf16" if dtype == "bfloat16" else "fp16"] = Value(True, "command")


def _after_flag(args: list[str], flag: str) -> list[str]:
    """The words after ``flag`` up to the next option (a flag taking several values: ``--dataset a#500 b#500``)."""
    if flag not in args:
        return []
    rest = args[args.index(flag) + 1 :]
    cut = next((i for i, a in enumerate(rest) if a.startswith("--")), len(rest))
    return rest[:cut]


def _python_entry(ws: Workspace, ex: Extraction, overrides: dict[str, Value]) -> None:
    launch = ex.launch
    script = launch.script or ""
    code = (ws.read_text_or_none(script) or "") + launch.entry_suffix
    ex.code = code
    from_args: list[tuple[str, str, str]] = []  # `if args.batch_size: config.DATA.BATCH_SIZE = args.batch_size`
    imported = [(module, ws.read_text_or_none(module)) for module in _local_imports(ws, code, script)]  # read once
    for module, text in imported:  # config trees' defaults (yacs _C.X.Y = ...): lowest priority
        if text and re.search(r"\b(?:CfgNode|CN|ConfigDict|ConfigNode|EasyDict|edict)\(", text):
            ex.values.update(config_tree_assignments(text, module))
            from_args += settings_from_args(text)
    ex.values.update(config_tree_assignments(code, script))
    ex.values.update(python_assignments(code, script, arithmetic=True))
    ex.values.update(cli_function_defaults(code, script, launch.args))  # fire / typer: the entry function's defaults
    _config_classes(ws, ex, code, script)
    factory_defaults, parsed_from = factory_settings(ws, code, script)  # `HParams(epochs=500, ...)` a factory returns
    ex.values.update({k: Value(v, f, ln) for k, (v, f, ln) in factory_defaults.items()})
    ex.values.update({k: Value(v, f, ln) for k, (v, f, ln) in flag_factory_defaults(ws, code, script).items()})
    wrappers = argument_wrappers(code)  # `py.arg("--epochs", ...)`: a function of the job forwarding to add_argument
    for _, text in imported:
        if text and ".add_argument(*" in text:
            wrappers |= argument_wrappers(text)
    specs = (
        argparse_specs(code, wrappers, script)
        + _imported_parser_specs(ws, code, script)
        + dict_parser_specs(ws, code, script)
        + tap_specs(code, script)
    )
    for module, text in imported:  # typed-argument-parser classes the entry's modules define
        if text and "Tap" in text:
            specs += tap_specs(text, module)
    loose: dict[str, Value] = {}  # flags no option of the script defines
    options: dict[str, Value] = {}  # the script's own options, as the command sets them
    if specs:
        abbrev = "allow_abbrev=False" not in code
        argv = _flagfiles_expanded(ws, launch) if any(sp.absl for sp in specs) else launch.args
        parsed = resolve_argparse(specs, argv, script, abbreviations=abbrev)
        for dest, (value, line) in set_defaults_values(code).items():  # on destinations another file's options
            if (given := parsed.get(dest)) is None or given.source != "command":  # define, or none does
                parsed[dest] = Value(value, script, line)
        ex.values.update(parsed)
        options = parsed
        for key, value in flag_values(launch.args).items():  # flags another parser takes (Trainer.add_argparse_args)
            if abbrev and key not in parsed and len([d for d in parsed if d.startswith(key)]) == 1:
                continue  # `--epoch 300`: argparse's abbreviation of `--epochs`, already read as that option
            ex.values.setdefault(key, value)
            if key not in parsed:
                loose[key] = value
    else:  # HfArgumentParser / click / fire: no add_argument calls to read, take `--key value` as given
        ex.values.update({d: Value(v, script, ln) for d, (v, ln) in set_defaults_values(code).items()})
        ex.values.update(flag_values(launch.args))
    for name in parsed_from:  # `--hparams=fp16_run=True,...` the factory parses
        given = ex.values.get(name) or overrides.get(name)  # (`--hparams=a=1` reads as an override `key=value`)
        if given is not None and isinstance(given.value, str):
            ex.values.update({k: Value(v, "command") for k, v in parse_pairs(given.value).items()})
    copied = any(_sets_attributes_from_items(t) for t in [code, *(t for _, t in imported)])
    named = [  # an option named for a config (`-d/--config-downstream x.yaml`), however it is spelled on the line
        str(v.value) for dest, v in options.items()
        if v.source == "command" and _CONFIG_OPTION.search(dest) and isinstance(v.value, str)
        and v.value.endswith(_CONFIG_SUFFIXES) and v.value not in launch.args
    ]  # fmt: skip
    _read_config_files(ws, ex, [*launch.args, *named], code, loose, copied_onto_args=copied)
    _read_settings_files(ws, ex, options, launch.args)
    _read_fixed_config(ws, ex, code, script)
    _config_class_named_on_command(ws, ex, launch.args)
    _registered_choices(ws, ex)
    for key, given in list(ex.values.items()):  # `--optimizer adam_inverse_sqrt,lr=0.0001,warmup_updates=4000`
        if isinstance(given.value, str) and _SPEC.fullmatch(given.value):  # (XLM, fairseq: a name, then its options)
            for k, v in parse_pairs(given.value.partition(",")[2]).items():
                ex.values.setdefault(f"{key}.{k}", Value(v, given.source, given.line))
    hydra = compose_hydra(ws, launch.script, code, overrides, launch.args)
    if hydra is not None:
        root_path, composed = hydra
        ex.sources.append(root_path)
        ex.values.update(composed)
    config_keys = {f.lstrip("-").replace("-", "_") for f in _CONFIG_FLAGS} | {"config-file", "config-path"}
    ex.values.update({k: v for k, v in overrides.items() if k not in config_keys})
    for key, arg, when in from_args:  # the config function copies these arguments in last (over files and --opts)
        given = ex.values.get(arg)
        if key in ex.values and given is not None and given.value is not None and (when != "truthy" or given.value):
            ex.values[key] = given
    ex.per_rank_accum_divided = bool(re.search(r"gradient_accumulation_steps\s*//=\s*\w*world_size", code))
    _drop_unselected_alternatives(ex.values)
    if isinstance(given := ex.values.get("config"), Value) and str(given.value).endswith(".py"):
        for key, v in list(ex.values.items()):  # ml_collections' `--config file.py --config.total_epochs 300`: the
            if key.startswith("config.") and v.source == "command":  # flag overrides the file's field
                ex.values[key[len("config.") :]] = v


def _drop_unselected_alternatives(values: dict[str, Value]) -> None:
    """``train_dataset.type: json`` beside ``train_dataset.json_dataset.*`` and ``train_dataset.huggingface_dataset.*``
    (``optimizer.type: adamw`` beside ``adamw_optimizer`` and ``palm_optimizer``): the type picks one of the sections
    named ``<type>_<kind>``; the others' settings are never read, so they name nothing (a batch size among them)."""
    for key, v in list(values.items()):
        if not key.endswith(".type") or not isinstance(v.value, str) or not re.fullmatch(r"\w+", v.value):
            continue
        parent = key[: -len("type")]
        chosen = f"{parent}{v.value}_"
        sections = {
            k[len(parent) :].split(".", 1)[0] for k in values if k.startswith(parent) and k.count(".") > key.count(".")
        }
        kinds = {sec[len(v.value) + 1 :] for sec in sections if f"{parent}{sec}".startswith(chosen)}
        for sec in sections:
            if not f"{parent}{sec}".startswith(chosen) and any(sec.endswith(f"_{kind}") for kind in kinds if kind):
                for k in [k for k in values if k.startswith(f"{parent}{sec}.")]:
                    del values[k]


_BATCH_PER_RANK: Final = re.compile(
    r"batch_size\w*(?:['\"]\])?\s*/{1,2}\s*(?:max\(\s*1\s*,\s*|\(\s*)?(?:\w+\[['\"])?[\w.]*"
    r"(?:world_size|num_gpus?|n_gpus?|ngpus|num_replicas|num_processes|get_world_size\(\))",  # (`opt['batch_size']//
    # opt['num_gpu']`, HALOs' `batch_size / (accelerator.num_processes * gradient_accumulation_steps)`)
    re.I,
)


def _splits_batch(text: str) -> bool:
    """Whether ``text`` divides a batch setting by the number of ranks (``batch_size // world_size``); a batch
    that is itself a divisor (``epochs * trainset_size // args.batch_size // args.world_size``: a step count) is
    not split."""
    return any(
        not re.search(r"/\s*[\w.\[\]'\"]*$", text[max(0, m.start() - 200) : m.start()])
        for m in _BATCH_PER_RANK.finditer(text)
    )


def job_modules(ws: Workspace, script: str, code: str, depth: int = 3, cap: int = 40) -> list[tuple[str, str]]:
    """The job's own modules the entry script reaches through imports (breadth first, ``depth`` hops, ``cap`` files),
    with their text."""
    seen = {script}
    out: list[tuple[str, str]] = []
    frontier = [(script, code)]
    for _ in range(depth):
        nxt: list[tuple[str, str]] = []
        while frontier:
            importer, text = frontier.pop(0)
            for mod, level in _imported_names(text):
                path = ws.module_file(mod, level, importer) if mod or level else None
                if path and path not in seen and len(out) < cap and (t := ws.read_text_or_none(path)):
                    seen.add(path)
                    out.append((path, t))
                    # a package's `__init__.py` re-exports its modules (`from .rtdetr import *`): what it imports
                    # is reached in the same hop as the package itself
                    (frontier if path.endswith("__init__.py") else nxt).append((path, t))
        frontier = nxt
    return out


_TRAINS: Final = re.compile(r"\.backward\(|\boptimizer\.step\(|\bscaler\.step\(")
_FITS: Final = re.compile(r"\btrainer\.fit\(")  # a module that hands its model to Lightning's Trainer trains too


def _training_callees(ws: Workspace, code: str, script: str) -> list[str]:
    """The job's modules whose function the entry script calls to train when the entry itself does not: a thin
    launcher (``from src.train import main as app_main; app_main(args=params)``) hands its settings to a training
    loop elsewhere. At most two modules, in the order the entry calls them; only those that step an optimizer."""
    if _TRAINS.search(code):
        return []  # the entry trains itself: its own uses are the job's
    try:
        tree = parse(code)
    except (SyntaxError, ValueError):
        return []
    imported: dict[str, str] = {}
    for node in walk(tree):
        if isinstance(node, ast.ImportFrom):
            path = ws.module_file(node.module or "", node.level, script)
            for alias in node.names:
                if path is not None:
                    imported[alias.asname or alias.name] = path
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if (path := ws.module_file(alias.name, 0, script)) is not None:
                    imported[alias.asname or alias.name] = path
    out: list[str] = []
    calls = sorted((n for n in walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    for call in calls:
        func = call.func
        base = func.id if isinstance(func, ast.Name) else func.value.id if (
            isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)) else None  # fmt: skip
        handed = [a.id for a in [*call.args, *(k.value for k in call.keywords)] if isinstance(a, ast.Name)]
        for name in [base, *handed]:  # (a function handed to a launcher: `launch_job(cfg=cfg, func=train)`)
            path = imported.get(name) if name else None
            text = ws.read_text_or_none(path) or "" if path else ""
            if path and path not in out and path != script and (_TRAINS.search(text) or _FITS.search(text)):
                out.append(path)
    return out[:2]


def _lightning_cli(ws: Workspace, ex: Extraction, script: str) -> dict[str, Value]:
    """``LightningCLI(ImageNetLightningModel, MyDataModule, trainer_defaults={"max_epochs": 90})``: the command line
    is ``--model.x`` / ``--data.x`` / ``--trainer.x`` over the classes' ``__init__`` defaults and the trainer
    defaults, which become the ``model.x`` / ``data.x`` / ``trainer.x`` settings (the command's own stay over them).
    Returns what the classes keep of them (``self.lr = lr``; ``self.hparams.x`` after ``save_hyperparameters()``),
    for the use sites in their methods."""
    try:
        tree = parse(ex.code)
    except (SyntaxError, ValueError):
        return {}
    call = next((n for n in walk(tree) if isinstance(n, ast.Call) and callee_name(n) == "LightningCLI"), None)
    if call is None:
        return {}
    kept: dict[str, Value] = {}
    classes = [  # (the model class, then the data module's)
        (prefix, node) for prefix, node in zip(("model", "data"), call.args[:2], strict=False)
    ] + [(("model" if k.arg == "model_class" else "data"), k.value) for k in call.keywords
         if k.arg in ("model_class", "datamodule_class")]  # fmt: skip
    for k in call.keywords:
        if k.arg == "trainer_defaults" and isinstance(k.value, ast.Dict):
            for key, item in zip(k.value.keys, k.value.values, strict=True):
                with contextlib.suppress(ValueError, TypeError, SyntaxError):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        ex.values.setdefault(f"trainer.{key.value}", Value(ast.literal_eval(item), script, k.lineno))
    for prefix, node in classes:
        found = _class_def(ws, tree, node.id, script) if isinstance(node, ast.Name) else None
        init = next((f for f in found[0].body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None) if (
            found) else None  # fmt: skip
        if found is None or init is None:
            continue
        a = init.args
        params = [*a.args[1:], *a.kwonlyargs]
        named = [p.arg for p in a.args[1:]]  # (past `self`)
        defaults = dict(zip(named[len(named) - len(a.defaults) :], a.defaults, strict=False))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=False) if d is not None})
        for name, d in defaults.items():
            with contextlib.suppress(ValueError, TypeError, SyntaxError):
                ex.values.setdefault(f"{prefix}.{name}", Value(ast.literal_eval(d), found[1], d.lineno))
        values = {p.arg: ex.values[f"{prefix}.{p.arg}"] for p in params if f"{prefix}.{p.arg}" in ex.values}
        saves = any(isinstance(n, ast.Call) and callee_name(n) == "save_hyperparameters" for n in walk(init))
        for name, setting in values.items() if saves else ():
            kept[f"hparams.{name}"] = setting
        for stmt in walk(init):
            if (
                isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Attribute)
                and isinstance(stmt.targets[0].value, ast.Name) and stmt.targets[0].value.id == "self"
                and isinstance(stmt.value, ast.Name) and stmt.value.id in values
            ):  # fmt: skip
                kept[stmt.targets[0].attr] = values[stmt.value.id]  # `self.lr = lr`
    return kept


_CLASS_NAME: Final = re.compile(r"[A-Za-z_]*[A-Z]\w{2,62}")


def _trainer_class_named(ws: Workspace, ex: Extraction) -> tuple[str, dict[str, Value]] | None:
    """A setting's value that names a class of the job's which trains, looked up by name at run time (nnU-Net's
    ``-tr nnUNetTrainer`` or ``-tr nnUNetTrainer_250epochs``, found in its trainer folder): the module that trains
    (the class's own or a base's, where ``.backward()`` or an optimizer step is) and the literal ``self.x`` settings
    of the class chain's ``__init__`` (the chosen subclass's over its bases': ``self.num_epochs = 250``)."""
    looked_up = (  # the command's or the entry's own flags; a class the entry builds or defines is not looked up
        v.value for v in ex.values.values()
        if v.source in ("command", ex.launch.script) and isinstance(v.value, str) and _CLASS_NAME.fullmatch(v.value)
        and re.search(r"[a-z]", v.value) and v.value not in ("True", "False", "None")
        and not re.search(rf"\b{re.escape(v.value)}\(|^class {re.escape(v.value)}\b", ex.code, re.M)
    )  # fmt: skip
    names = sorted(set(looked_up))[:8]
    if not names:
        return None
    pattern = re.compile(r"^class (" + "|".join(map(re.escape, names)) + r")\(", re.M)
    stems = {re.sub(r"(?:_\w*|\d+)$", "", name) or name for name in names}  # `nnUNetTrainer_250epochs`: its family
    near = [  # modules whose path carries the name or its family (`training/nnUNetTrainer/variants/…`): at most 40
        f for n, f in enumerate(ws.files((".py",)))
        if n < 2000 and not f.endswith("__init__.py") and any(stem in f for stem in stems)
    ][:40]  # fmt: skip
    for file in near:
        text = ws.read_text_or_none(file)
        if not text or (m := pattern.search(text)) is None:
            continue
        tree = _parsed(ws, file)
        cls = next((c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == m[1]), None) if tree else None
        if tree is None or cls is None:
            continue
        chain: list[tuple[ast.ClassDef, str, ast.Module]] = [(cls, file, tree)]
        while len(chain) < 5:  # the class and its bases, as each module sees them
            node, where, module = chain[-1]
            base = next((b.id for b in node.bases if isinstance(b, ast.Name) and b.id != "object"), None)
            found = _class_def(ws, module, base, where, hops=3) if base else None
            parsed = (module if found[1] == where else _parsed(ws, found[1])) if found else None
            if found is None or parsed is None:
                break
            chain.append((found[0], found[1], parsed))
        trains = next((where for _, where, _ in chain if _TRAINS.search(ws.read_text_or_none(where) or "")), None)
        if trains is not None:
            return trains, _class_chain_settings(ws, tree, cls, file, 0)
    return None


def _data_module_and_deepspeed(ws: Workspace, ex: Extraction) -> None:
    for key in ("data._target_", "datamodule._target_"):  # a data module that splits the batch across ranks
        v = ex.values.get(key)
        if v is not None and isinstance(v.value, str) and "." in v.value:
            text = ws.read_text_or_none(v.value.rpartition(".")[0].replace(".", "/") + ".py") or ""
            ex.batch_divided_by_world |= _splits_batch(text)
    script = ex.launch.script or ""
    if script.endswith(".py"):
        ex.modules = job_modules(ws, script, ex.code)
    ex.batch_split_in_code = any(_splits_batch(t) for t in [ex.code, *(t for _, t in ex.modules)])
    loader = ex.uses.get("batch")
    ex.batch_divided_by_world |= loader is not None and loader.how == SPLIT_LOADER
    if not ex.batch_divided_by_world and "batch" not in ex.uses:
        # the batch setting is the whole job's, split over the ranks where the loader is built (yacs
        # `TRAIN.BATCH_SIZE / NUM_GPUS`, `batch_size // world_size`)
        ex.batch_divided_by_world = ex.batch_split_in_code
    ds = ex.get("deepspeed")
    if ds is None or not isinstance(ds.value, str):  # DeepSpeed's own `--deepspeed --deepspeed_config ds.json`
        ds = ex.get("deepspeed_config")
    if ds is not None and isinstance(ds.value, str):
        ds_config, ds_path = ws.read_text_or_none(ds.value), ds.value
        if ds_config is None and ds.source.endswith(_CONFIG_SUFFIXES) and "/" in ds.source:
            ds_path = posixpath.join(posixpath.dirname(ds.source), ds.value)  # `deepspeed: ds_zero_3.json` in
            ds_config = ws.read_text_or_none(ds_path)  # configs/sft.yaml, beside it (the user sets the path there)
        if ds_config:
            ex.values.update(
                {f"deepspeed.{k}": v for k, v in load_structured(ds_config, ds_path).items() if v.value != "auto"}
            )  # ("auto": the HF Trainer fills it from its own arguments, which then hold the value)
            zero = ex.values.get("deepspeed.zero_optimization")
            if zero is not None and isinstance(zero.value, bool):  # the legacy `"zero_optimization": true`: stage 1
                ex.values["deepspeed.zero_optimization.stage"] = Value(int(zero.value), zero.source, zero.line)


def _world_size(launch: Launch, code: str) -> int | None:
    """Processes the launcher starts: torchrun/deepspeed/mpirun counts, 1 for a plain python that spawns none."""
    if launch.world_size is not None:
        return launch.world_size
    if launch.nproc_per_node is not None:
        return launch.nproc_per_node * (launch.nnodes or 1)
    if launch.launcher == "python" and not re.search(r"\bspawn\(|\bProcess\(", code):
        return 1
    return None


_ACCELERATE_TYPES: Final = {"DEEPSPEED": "deepspeed", "FSDP": "fsdp"}  # MULTI_GPU: ddp, from the process count


def _accelerate_setup(ws: Workspace, ex: Extraction) -> None:
    """``accelerate launch [--config_file f.yaml] [--use_deepspeed --zero_stage N | --use_fsdp] [--mixed_precision
    bf16]``: what Accelerate starts the script with. Its config file gives the process count (unless the command
    does), the distribution (``distributed_type``, ZeRO stage or a DeepSpeed JSON) and the mixed precision; flags on
    the command line override the file. Values are kept under ``accelerate.`` and ``deepspeed.`` below the script's
    own settings."""
    launch = ex.launch
    args = launch.launcher_args
    flags: dict[str, str | bool] = {}
    for i, a in enumerate(args):
        if not a.startswith("--"):
            continue
        name, _, inline = a[2:].replace("-", "_").partition("=")
        nxt = args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("--") else None
        flags[name] = inline or nxt or True
    conf: dict[str, Value] = {}
    path = flags.get("config_file")
    if isinstance(path, str) and (text := ws.read_text_or_none(path)) is not None:
        conf = load_structured(text, path)
        ex.sources.append(path)

    def setting(flag: str, key: str) -> Value | None:
        given = flags.get(flag)
        if given is not None:
            return Value(given, "command")
        return conf.get(key)

    procs = setting("num_processes", "num_processes")
    if launch.world_size is None and procs is not None and isinstance(procs.value, int) and 0 < procs.value < 1 << 20:
        launch.world_size = procs.value  # Accelerate's num_processes counts every process on every machine
    elif procs is None and path is None and launch.world_size is None and launch.nproc_per_node is None:
        launch.count_unknown = True  # no count and no config named: the user's own default config, or without one
        # a process per visible GPU (Accelerate's "defaults used instead"): several, how many the job does not say
    kind = conf.get("distributed_type")
    dist = _ACCELERATE_TYPES.get(str(kind.value)) if kind is not None else None
    dist = "deepspeed" if flags.get("use_deepspeed") else "fsdp" if flags.get("use_fsdp") else dist
    where = (kind.source, kind.line) if kind is not None else ("command", None)
    if dist == "deepspeed":
        ds_file = setting("deepspeed_config_file", "deepspeed_config.deepspeed_config_file")
        stage = setting("zero_stage", "deepspeed_config.zero_stage")
        if ds_file is not None and isinstance(ds_file.value, str):
            ex.values.setdefault("deepspeed", ds_file)  # its JSON is read with the script's own
        elif stage is not None:
            n = small_count(str(stage.value))
            ex.values["deepspeed.zero_optimization.stage"] = Value(n if n is not None else stage.value, stage.source,
                                                                   stage.line)  # fmt: skip
    elif dist == "fsdp":
        ex.values["accelerate.fsdp"] = Value(True, *where)
    mp = setting("mixed_precision", "mixed_precision")
    if mp is not None and str(mp.value) in ("bf16", "fp16", "fp8", "no"):
        ex.values["accelerate.mixed_precision"] = mp


@functools.cache
def _cli_table() -> dict[str, Any]:
    table: dict[str, Any] = json.loads((Path(__file__).parent / "cli_defaults.json").read_text(encoding="utf-8"))
    return dict(table["clis"])


def _installed_cli(ex: Extraction) -> None:
    """An installed package's training CLI (Ultralytics' ``yolo train data=coco8.yaml``): its defaults under what
    the command says, the processes its device list starts (the batch then divided among them), and no rate where
    the CLI picks one itself (``optimizer=auto`` ignores ``lr0``)."""
    cli = _cli_table().get(ex.launch.launcher or "")
    if cli is None:
        return
    for key, value in cli["defaults"].items():
        ex.values.setdefault(key, Value(value, f"{cli['package']} default", None))
    devices = ex.values.get(cli.get("devices", ""))
    ids = devices.value if devices is not None else None
    if isinstance(ids, str):
        ids = [x for x in re.split(r"[\s,\[\]]+", ids) if x]
    if isinstance(ids, int) and not isinstance(ids, bool):
        ids = [ids]
    if ids == ["cpu"] and "amp" in cli["defaults"]:
        ex.values["amp"] = Value(False, "command", None)  # no mixed precision on the CPU
    if ids is None or (isinstance(ids, list | tuple) and ids and all(re.fullmatch(r"\d{1,3}", str(x)) for x in ids)):
        n = len(ids) if ids else 1  # one process per listed device (DDP); none listed: the first GPU
        ex.launch.world_size = n
        ex.batch_divided_by_world = bool(cli.get("batch_total")) and n > 1
    ignored = cli.get("rate_ignored_when", {})
    if ignored and all((h := ex.values.get(k)) is not None and str(h.value) == v for k, v in ignored.items()):
        ex.values.pop(cli["rate"], None)  # the CLI chooses the optimizer and its rate at run time
    elif (rate := ex.values.get(cli.get("rate", ""))) is not None:
        ex.values.setdefault("learning_rate", rate)


def collect_settings(ws: Workspace, launch: Launch, ex: Extraction | None = None) -> Extraction:
    """Every setting the launch, the entry script and its configs give, merged in override order.

    Fills ``ex`` (a fresh :class:`Extraction` by default) as it goes, so a caller that catches an
    error or a spent budget half-way keeps the settings found before it.
    """
    ex = ex if ex is not None else Extraction(launch=launch)
    if launch.launcher == "accelerate":
        _accelerate_setup(ws, ex)
    overrides = parse_overrides(launch.args)
    script = launch.script or ""
    if launch.launcher == "llamafactory-cli":
        _llamafactory(ws, ex, overrides)
    elif launch.launcher == "swift" and launch.module:
        _swift(ex)
    elif not script.endswith(".py") and launch.launcher not in ("python", "bash", "sh"):
        _read_config_files(ws, ex, [*([script] if script else []), *launch.args])  # any CLI: `tool --config x.yaml`
        ex.values.update(flag_values(launch.args))
        ex.values.update(overrides)
    elif script.endswith(".py"):
        ws.add_import_roots(sys_path_roots(ws, script))  # `import _init_paths` puts lib/ on sys.path
        _python_entry(ws, ex, overrides)
        cli_attrs = _lightning_cli(ws, ex, script)  # `LightningCLI(Model, DataModule, trainer_defaults={...})`
        ex.uses = find_uses(
            ws, ex.code, script, launch.args, ex.values, world_size=_world_size(launch, ex.code),
            visible_gpus=launch.visible_gpus, config_classes=ex.config_classes, self_attrs=cli_attrs,
        )  # fmt: skip
        if (rewritten := ex.uses.pop("rewritten", None)) is not None:  # computed anew by the entry before training
            for key, (value, line) in rewritten.value.items():
                ex.values[key] = Value(value, script, line)
        ex.training_modules = _training_callees(ws, ex.code, script)
        picked = _trainer_class_named(ws, ex) if not ex.training_modules and not _TRAINS.search(ex.code) else None
        if picked is not None:  # `-tr nnUNetTrainer`: the class a setting names trains in its (or a base's) module
            ex.training_modules.append(picked[0])
        for module in ex.training_modules:  # `from src.train import main; main(args=params)`
            found = find_uses(
                ws, ws.read_text_or_none(module) or "", module, launch.args, ex.values,
                world_size=_world_size(launch, ex.code), visible_gpus=launch.visible_gpus,
                self_attrs=picked[1] if picked is not None and module == picked[0] else None,
            )  # fmt: skip
            if (on := found.get("amp_enabled")) is None or on.value is not True:
                found.pop("amp_dtype", None)  # `if fp16: with autocast():` there: the entry's flag decides, unseen
            if "epochs" in ex.uses:  # the entry loops over epochs and calls this per batch: a step loop there is
                found.pop("max_steps", None)  # one iteration's inner steps (BigGAN's D steps), not the budget
            if "lr_default" in ex.uses:  # the entry builds its optimizer at the default rate: another module's
                found.pop("lr", None)  # optimizer (a method the settings do not pick) is not the job's
            for name, use in found.items():  # the entry's own uses come first
                ex.uses.setdefault(name, use)
        ds = ex.uses.get("deepspeed")
        if ds is not None and isinstance(ds.value, str) and ex.get("deepspeed") is None:
            ex.values["deepspeed"] = Value(ds.value, ds.file, ds.line)
        elif ds is not None and isinstance(ds.value, dict):  # a config dict the code builds and hands DeepSpeed
            for k, v in flatten(ds.value, "deepspeed").items():
                if isinstance(v, bool | int | float | str) and v != "auto":
                    ex.values.setdefault(k, Value(v, ds.file, ds.line))
    _data_module_and_deepspeed(ws, ex)
    _library_defaults(ex)
    _installed_cli(ex)
    return ex


# What HF's TrainingArguments and TRL's configs train with when the job does not say (recent releases' defaults).
_TRAINING_ARGUMENTS: Final = {"per_device_train_batch_size": 8, "num_train_epochs": 3.0, "learning_rate": 5e-5}
_TRL_CONFIGS: Final = {
    "SFTConfig": {"learning_rate": 2e-5, "bf16": True}, "DPOConfig": {"learning_rate": 1e-6, "bf16": True},
    "KTOConfig": {"learning_rate": 1e-6, "bf16": True}, "GRPOConfig": {"learning_rate": 1e-6, "bf16": True},
    "ORPOConfig": {"learning_rate": 1e-6, "bf16": True}, "RLOOConfig": {"learning_rate": 1e-6, "bf16": True},
}  # fmt: skip
_TRL_CONFIG_OF: Final = {"sft": "SFTConfig", "dpo": "DPOConfig", "kto": "KTOConfig", "grpo": "GRPOConfig",
                         "orpo": "ORPOConfig", "rloo": "RLOOConfig"}  # fmt: skip


def _library_defaults(ex: Extraction) -> None:
    """The defaults of the training-argument class the job parses (HF ``TrainingArguments``, TRL's ``SFTConfig``,
    ``DPOConfig``, ...), at the lowest priority: a setting, a use site or the command always wins."""
    code = ex.code
    launch = ex.launch  # `trl dpo` runs the module trl.scripts.dpo: its last part is the objective
    trl = _TRL_CONFIG_OF.get(launch.module.rsplit(".", 1)[-1]) if launch.launcher == "trl" and launch.module else None
    found = [name for name in _TRL_CONFIGS if re.search(rf"\b{name}\b", code)]
    config = trl or (found[0] if len(found) == 1 else None)
    if config is None and not re.search(r"\b\w*TrainingArguments\b", code):
        return
    defaults = {**_TRAINING_ARGUMENTS, **(_TRL_CONFIGS.get(config, {}) if config else {})}
    if ex.get("fp16", "mixed_precision", "precision") is not None:
        defaults.pop("bf16", None)  # a precision the job sets (an accelerate config's fp16) is not overridden
    declared = {k.split(".", 1)[1] for k in ex.values if "." in k and k.split(".", 1)[0] in ex.config_classes}
    for key, value in defaults.items():
        if key in declared:
            continue  # the job's own subclass declares its default (xtuner's `DefaultTrainingArguments`)
        ex.values.setdefault(key, Value(value, f"{config or 'TrainingArguments'} default", None))
