"""Hyper-parameters from code and configuration files, read statically (nothing is executed).

Every value carries its provenance (file and line, or ``command``). Sources:

- argparse: ``add_argument(...)`` calls found in a script's AST give flags, ``dest``,
  defaults and types; the submitted argv is then parsed against an equivalent parser built
  from literals only (no user code, no ``type=`` callables beyond int/float/str/bool).
- Python config files (nanoGPT style): top-level ``name = <literal>`` assignments.
- YAML / JSON / TOML files, flattened to dotted keys.
- ``--key=value`` and Hydra/OmegaConf ``a.b=value`` overrides on the command line.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import itertools
import json
import math
import operator
import posixpath
import re
import tomllib
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

import yaml

from schedmate.agents.advisor.extract.budget import charge_nodes, check_size
from schedmate.agents.advisor.extract.syntax import callee_name, parse, walk
from schedmate.agents.advisor.extract.syspath import module_paths, path_value

__all__ = [
    "ArgSpec",
    "Value",
    "argparse_specs",
    "argument_wrappers",
    "cli_targets",
    "constant_arithmetic",
    "flag_values",
    "flatten",
    "gin_values",
    "init_attribute_assignments",
    "load_structured",
    "nest_flat",
    "parse_literal",
    "parse_overrides",
    "python_assignments",
    "python_config",
    "resolve_argparse",
    "set_defaults_values",
    "settings_from_args",
    "tap_specs",
]


@dataclass(frozen=True)
class Value:
    """A configuration value and where it came from."""

    value: Any
    source: str  # file path, or "command"
    line: int | None = None


@dataclass(frozen=True)
class ArgSpec:
    """One ``add_argument`` call, reduced to literals."""

    flags: tuple[str, ...]
    dest: str
    default: Any
    type: str | None  # int, float, str, bool or None
    action: str | None
    line: int
    nargs: Any = None
    absl_bool: bool = False  # an absl / tf.app.flags boolean: `--name`, `--noname`, `--name=false`
    absl: bool = False  # defined by absl / tf.app.flags (`--flagfile=` reads more flags from a file)


# absl's (and tf.app.flags', tf.compat.v1.flags') flag definitions: DEFINE_<kind>(name, default, help)
_ABSL_KINDS: Final = {"DEFINE_integer": "int", "DEFINE_float": "float", "DEFINE_string": "str", "DEFINE_enum": "str",
                      "DEFINE_boolean": "bool", "DEFINE_bool": "bool"}  # fmt: skip
# absl's repeated flags: `--ch_mult=1 --ch_mult=2` is the list [1, 2], which replaces the default list
_ABSL_MULTI: Final = {"DEFINE_multi_integer": "int", "DEFINE_multi_float": "float", "DEFINE_multi_string": "str",
                      "DEFINE_multi_enum": "str"}  # fmt: skip


def _absl_spec(node: ast.Call, constants: dict[str, Any]) -> ArgSpec | None:
    """A flag an absl / TensorFlow ``flags.DEFINE_integer("batch_size", 64, "…")`` call defines, as an option."""
    callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    kind = _ABSL_KINDS.get(callee) or _ABSL_MULTI.get(callee)
    if kind is None:
        return None
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    name_node = node.args[0] if node.args else kw.get("name")
    default_node = node.args[1] if len(node.args) > 1 else kw.get("default")
    name = _literal(name_node) if name_node is not None else None
    if not isinstance(name, str) or not name.isidentifier():
        return None
    default = _default(default_node, constants) if default_node is not None else None
    if kind == "bool":
        return ArgSpec(flags=(f"--{name}",), dest=name, default=default, type=None, action=None,
                       line=node.lineno, absl_bool=True, absl=True)  # fmt: skip
    if callee in _ABSL_MULTI:
        return ArgSpec(flags=(f"--{name}",), dest=name, default=default, type=kind, action="append",
                       line=node.lineno, absl=True)  # fmt: skip
    return ArgSpec(
        flags=(f"--{name}",), dest=name, default=default, type=kind, action=None, line=node.lineno, absl=True
    )


def _absl_booleans(specs: list[ArgSpec], argv: list[str]) -> list[str]:
    """absl's boolean forms written as values: ``--train`` → ``--train=true``, ``--notrain`` → ``--train=false``."""
    names = {s.dest for s in specs if s.absl_bool}
    if not names:
        return argv
    out: list[str] = []
    for tok in argv:
        flag = tok[2:] if tok.startswith("--") and "=" not in tok else ""
        if flag in names:
            out.append(f"--{flag}=true")
        elif flag.startswith("no") and flag[2:] in names:
            out.append(f"--{flag[2:]}=false")
        else:
            out.append(tok)
    return out


class _Yaml12Loader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no type stubs here
    """PyYAML's safe loader with YAML 1.2's floats: ``lr: 5e-7`` is a number (as OmegaConf, Hydra and ruamel read
    it), not the string PyYAML's YAML 1.1 rules make of an exponent without a decimal point."""


_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _tagged(loader: Any, suffix: str, node: Any) -> Any:
    """An application tag (HyperPyYAML's ``!new:pkg.Class``, ``!name:``, ``!ref <x>``, ``!PLACEHOLDER``) read as
    data, never constructed: a mapping gets the tagged class as its ``_target_``, a scalar stays text."""
    if isinstance(node, yaml.MappingNode):
        out = loader.construct_mapping(node, deep=True)
        target = suffix.split(":", 1)[1] if ":" in suffix else ""
        return {**out, "_target_": target} if target else out
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    value = loader.construct_scalar(node)
    if suffix.startswith(("new:", "name:", "apply:")) and not value:
        return {"_target_": suffix.split(":", 1)[1]}
    return value if value != "" else None


_Yaml12Loader.add_multi_constructor("!", _tagged)


def _python_tagged(loader: Any, suffix: str, node: Any) -> Any:
    """PyYAML's Python tags (detectron2 configs' ``!!python/object/apply:eval ["[int(x * 0.1 * 512) …]"]``): the
    node read as plain data, never constructed or evaluated, so the rest of the file still loads."""
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_Yaml12Loader.add_multi_constructor("tag:yaml.org,2002:python/", _python_tagged)

_REF: Final = re.compile(r"^<([A-Za-z_]\w*)>$")


def _resolve_refs(data: Any, top: dict[str, Any], depth: int = 0) -> Any:
    """HyperPyYAML's ``<name>`` references (what ``!ref <lr>`` leaves) replaced by the top-level value they name
    (every node charged to the budget: YAML aliases can make a small file an exponential tree)."""
    charge_nodes()
    if depth > 20:
        return data
    if isinstance(data, dict):
        return {k: _resolve_refs(v, top, depth + 1) for k, v in data.items()}
    if isinstance(data, list):
        return [_resolve_refs(v, top, depth + 1) for v in data]
    if isinstance(data, str) and (m := _REF.match(data)) and m.group(1) in top and top[m.group(1)] is not data:
        ref = top[m.group(1)]
        return ref if not isinstance(ref, str) or not _REF.match(ref) else _resolve_refs(ref, top, depth + 1)
    return data


def load_yaml(text: str) -> Any:
    """A YAML document with the safe loader and YAML 1.2 floats (raises ``yaml.YAMLError`` on bad input);
    application tags are read as data and ``<name>`` references resolved."""
    try:
        data = yaml.load(text, Loader=_Yaml12Loader)  # noqa: S506 -- a SafeLoader subclass: no object construction
    except yaml.composer.ComposerError:  # several `---` documents: merged in order, as their loaders read them
        docs = list(yaml.load_all(text, Loader=_Yaml12Loader))  # (MelGAN's HParam: yaml.load_all, later keys win)
        if not all(isinstance(d, dict) or d is None for d in docs):
            raise
        data = {k: v for d in docs if d for k, v in d.items()}
    return _resolve_refs(data, data) if isinstance(data, dict) and "!ref" in text else data


def parse_literal(text: str) -> Any:
    """A command-line string as the value a config system would see (int, float, bool, None, list, str)."""
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null", "~"):
        return None
    try:
        v = ast.literal_eval(t)
    except (ValueError, SyntaxError):
        pass
    else:  # (no command-line parser makes a tuple of `--gpus 0,`: Lightning keeps the string "0," and counts its ids)
        return t if isinstance(v, tuple) else v
    with contextlib.suppress(yaml.YAMLError):
        v = yaml.safe_load(t)
        if isinstance(v, (int, float, list, dict)):
            return v
    return t


def _literal(node: ast.AST | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        if isinstance(node, ast.Name):
            return {"int": "int", "float": "float", "str": "str", "bool": "bool"}.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = _literal(node.operand)
            return -v if isinstance(v, (int, float)) else None
        return None


def _default(node: ast.AST | None, constants: dict[str, Any] | None = None) -> Any:
    """An argument's default: a literal, constant arithmetic (``default=2**20``), or a module-level name bound once
    to a literal (``default=default_dataset``); anything else is None."""
    if isinstance(node, ast.Name) and constants:
        return constants.get(node.id)
    value = _literal(node)
    if value is None and isinstance(node, ast.BinOp | ast.Call):  # (`2**20`, `int(1e5)`)
        with contextlib.suppress(*_NOT_CONSTANT):
            return constant_arithmetic(node)
    return value


def argument_wrappers(source: str) -> set[str]:
    """Functions of a module that add an argument to a parser with what they are given (``def argument(*args,
    **kwargs): ...; return PARSER.add_argument(*args, **kwargs)``) and the names the module binds them to
    (``arg = argument``): a call of one is an ``add_argument`` call."""
    try:
        tree = parse(source)
    except SyntaxError:
        return set()
    found: set[str] = set()
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or fn.args.vararg is None:
            continue
        rest = fn.args.vararg.arg
        if any(
            isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "add_argument"
            and any(isinstance(a, ast.Starred) and isinstance(a.value, ast.Name) and a.value.id == rest for a in c.args)
            for c in walk(fn)
        ):  # fmt: skip
            found.add(fn.name)
    for stmt in tree.body:  # `arg = argument`
        if (
            isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Name) and stmt.value.id in found
        ):  # fmt: skip
            found.add(stmt.targets[0].id)
    return found


def argparse_specs(source: str, wrappers: Collection[str] = (), file: str | None = None) -> list[ArgSpec]:
    """Every ``<anything>.add_argument(...)`` call with literal arguments, and every call of a function that forwards
    its arguments to one (``wrappers``: ``py.arg("--epochs", type=int, default=25)``). Given the script's ``file``,
    a default built from its own folder (``default=ROOT / "data/hyps/hyp.yaml"``) is that path."""
    try:
        tree = parse(source)
    except SyntaxError:
        return []
    paths = module_paths(tree, file) if file and "__file__" in source else None
    specs: list[ArgSpec] = []
    constants: dict[str, Any] = {}  # `default_dataset = 'omniglot'` then `add_argument(..., default=default_dataset)`
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            constants[stmt.targets[0].id] = _default(stmt.value)  # (`NUM_STEPS = int(1e5)`, `STEPS = 2**20`)
    for found in walk(tree):
        if not isinstance(found, ast.Call):
            continue
        if (absl := _absl_spec(found, constants)) is not None:
            specs.append(absl)
            continue
        node = found
        wrapper = found.func.id if isinstance(found.func, ast.Name) else getattr(found.func, "attr", None)
        if wrapper in wrappers:  # read as `<parser>.add_argument(...)`
            node = ast.Call(func=ast.Attribute(value=found.func, attr="add_argument"), args=found.args,
                            keywords=found.keywords, lineno=found.lineno)  # fmt: skip
        if not isinstance(node.func, ast.Attribute):
            continue
        is_click = node.func.attr == "option" and ast.unparse(node.func.value) == "click"  # @click.option(...)
        if node.func.attr != "add_argument" and not is_click:
            continue
        flags = tuple(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
        if is_click:
            flags = tuple(f for f in flags if f.startswith("-"))
        if not flags:
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        long = next((f for f in flags if f.startswith("--")), flags[0])
        dest = _literal(kw.get("dest")) or long.lstrip("-").replace("-", "_")
        typ = kw.get("type")
        type_name = typ.id if isinstance(typ, ast.Name) and typ.id in ("int", "float", "str", "bool") else None
        if is_click:
            type_name = _click_type(typ)
            if _literal(kw.get("is_flag")) is True:
                kw["action"] = ast.Constant("store_true")
        default = _default(kw.get("default"), constants)
        if is_click and type_name is None and typ is None and type(default) in (int, float):
            type_name = type(default).__name__  # click infers an option's type from its default (`default=3e-3`)
        if default is None and paths and file and isinstance(kw.get("default"), ast.BinOp | ast.Call):
            default = path_value(kw["default"], paths, file)
        specs.append(
            ArgSpec(
                flags=flags,
                dest=str(dest),
                default=default,
                type=type_name,
                action=_literal(kw.get("action")),
                line=node.lineno,
                nargs=_literal(kw.get("nargs")),
            )
        )
    defaults = _unconditional_set_defaults(tree)
    return [
        dataclasses.replace(sp, default=defaults[sp.dest][0], line=defaults[sp.dest][1]) if sp.dest in defaults else sp
        for sp in specs
    ]


def set_defaults_values(source: str) -> dict[str, tuple[Any, int]]:
    """:func:`_unconditional_set_defaults` of a script's text (empty when it does not parse)."""
    try:
        return _unconditional_set_defaults(parse(source))
    except SyntaxError:
        return {}


def _unconditional_set_defaults(tree: ast.Module) -> dict[str, tuple[Any, int]]:
    """``parser.set_defaults(epochs=20)`` where it always runs (at module level or in a function's body, not under an
    ``if``, a loop or a ``try``): the new defaults of those destinations, whether or not an option of this file
    defines them (argparse sets them on the namespace either way). A value may be a local constant of the same body
    (``batch_size = 1`` … ``set_defaults(batch_size=batch_size)``), also one chosen by a test of such constants
    (``num_gpus = 2 if backend == "ddp" else 1``)."""
    out: dict[str, tuple[Any, int]] = {}
    bodies: list[list[ast.stmt]] = [tree.body]
    while bodies:
        local: dict[str, Any] = {}  # the body's unconditional constants so far
        for stmt in bodies.pop():
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                bodies.append(stmt.body)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                value = _local_constant(stmt.value, local)
                if value is _NOT_KNOWN:
                    local.pop(stmt.targets[0].id, None)
                else:
                    local[stmt.targets[0].id] = value
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if (
                isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "set_defaults" and not call.args
            ):  # fmt: skip
                for k in call.keywords:
                    value = _local_constant(k.value, local)
                    if k.arg and value is not _NOT_KNOWN:
                        out[k.arg] = (value, call.lineno)
    return out


_NOT_KNOWN: Final = object()


def _local_constant(node: ast.expr, local: dict[str, Any]) -> Any:
    """A literal, a local constant by name, or ``A if <comparison of those> else B``; else ``_NOT_KNOWN``."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return local.get(node.id, _NOT_KNOWN)
    if isinstance(node, ast.IfExp) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1:
        left, right = _local_constant(node.test.left, local), _local_constant(node.test.comparators[0], local)
        op = node.test.ops[0]
        if left is _NOT_KNOWN or right is _NOT_KNOWN or not isinstance(op, ast.Eq | ast.NotEq):
            return _NOT_KNOWN
        return _local_constant(node.body if (left == right) is isinstance(op, ast.Eq) else node.orelse, local)
    value = _literal(node)
    return value if value is not None and not isinstance(node, ast.Name) else _NOT_KNOWN


def _click_type(typ: ast.expr | None) -> str | None:
    """click's types as argparse casts: IntRange/INT → int, FloatRange/FLOAT → float (bool: parsed later)."""
    text = ast.unparse(typ) if typ is not None else ""
    if re.search(r"\bclick\.(?:IntRange|INT)\b|^int$", text):
        return "int"
    if re.search(r"\bclick\.(?:FloatRange|FLOAT)\b|^float$", text):
        return "float"
    return None


def _expand_prefixes(specs: list[ArgSpec], argv: list[str]) -> list[str]:
    """argparse's abbreviations: ``--batch 256`` is ``--batch-size 256`` when exactly one option starts so (an exact
    option, or a prefix of two, stays as given: argparse would take the one or refuse both)."""
    flags = {f: sp.dest for sp in specs for f in sp.flags if f.startswith("--")}
    out = []
    for tok in argv:
        name, eq, rest = tok.partition("=")
        if name.startswith("--") and len(name) > 3 and name not in flags:
            dests = {d for f, d in flags.items() if f.startswith(name)}
            if len(dests) == 1:
                name = next(f for f, d in flags.items() if f.startswith(name))
        out.append(f"{name}{eq}{rest}" if eq else name)
    return out


def resolve_argparse(
    specs: list[ArgSpec], argv: list[str], script: str, abbreviations: bool = True
) -> dict[str, Value]:
    """Values of every argument for ``argv`` (defaults from the script, overrides from the command; unique prefixes
    of long options stand for them, as argparse reads them, unless the script turns that off)."""
    argv = _absl_booleans(specs, argv)
    if abbreviations:
        argv = _expand_prefixes(specs, argv)
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    casts = {"int": int, "float": float, "str": str}
    for s in specs:
        kwargs: dict[str, Any] = {"dest": s.dest, "default": argparse.SUPPRESS}
        if s.action in ("store_true", "store_false", "count", "append", "store_const"):
            kwargs["action"] = s.action if s.action != "store_const" else "store_true"
            if s.action == "append" and s.type in casts:
                kwargs["type"] = casts[s.type]  # (absl's multi flags: each occurrence a number)
        else:
            if s.type in casts:
                kwargs["type"] = casts[s.type]
            if s.nargs is not None:
                kwargs["nargs"] = s.nargs
        if not s.flags[0].startswith("-"):  # a positional: argparse takes its name as the destination, and one the
            kwargs.pop("dest")  # command leaves out must not fail the parse of every other option
            kwargs.setdefault("nargs", "?")
            flags: tuple[str, ...] = (s.dest,)
        else:
            flags = s.flags
        with contextlib.suppress(argparse.ArgumentError, ValueError, TypeError):
            parser.add_argument(*flags, **kwargs)
    try:
        parsed, _ = parser.parse_known_args(argv)
    except (argparse.ArgumentError, SystemExit):
        parsed = argparse.Namespace()
    out: dict[str, Value] = {}
    for s in specs:
        default = s.default
        if s.action == "store_true" and default is None:
            default = False
        if s.action == "store_false" and default is None:
            default = True
        if isinstance(default, str) and s.type in ("int", "float") and s.action is None and s.nargs is None:
            with contextlib.suppress(ValueError):  # `type=int, default='200'`: argparse converts a string default
                default = casts[s.type](default)  # as if the command had given it
        out[s.dest] = Value(default, script, s.line)
    bool_defaults = {s.dest for s in specs if isinstance(s.default, bool) and s.action is None}
    for k, raw in vars(parsed).items():
        v = raw
        if k in bool_defaults and isinstance(v, str) and v.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
            v = v.strip().lower() in ("true", "1", "yes")  # `type=str2bool` and the like: the flag is a boolean
        out[k] = Value(v, "command")
    return out


_OPS: Final = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
               ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}  # fmt: skip


_NOT_CONSTANT: Final = (ValueError, TypeError, SyntaxError, ZeroDivisionError, OverflowError, RecursionError)


def constant_arithmetic(node: ast.AST) -> Any:
    """A literal or constant arithmetic expression (5 * 8, 6e-4 / 10); anything else raises ValueError."""
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = constant_arithmetic(node.left), constant_arithmetic(node.right)
        if isinstance(left, (int, float)) and isinstance(right, (int, float)) and abs(right) < 1e6:
            if isinstance(node.op, ast.Pow) and abs(left) > 1 and abs(right) * math.log2(abs(left)) > 1024:
                raise ValueError("a power too large for a setting")  # `99999**999999`: seconds of CPU, megabytes
            return _OPS[type(node.op)](left, right)
        raise ValueError("not arithmetic")
    if isinstance(node, ast.IfExp):  # `a if <capability test> else b`: the preferred branch
        return constant_arithmetic(node.body)
    if (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "float")
        and len(node.args) == 1 and not node.keywords
    ):  # fmt: skip
        v = constant_arithmetic(node.args[0])  # `NUM_STEPS = int(1e5)`: a number written in float notation
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and abs(v) < 1e18:
            return int(v) if node.func.id == "int" else float(v)
        raise ValueError("not a number")
    return ast.literal_eval(node)


def python_assignments(source: str, path: str, arithmetic: bool = False) -> dict[str, Value]:
    """Top-level ``name = <literal>`` assignments of a Python file (later ones win).

    With ``arithmetic``, constant arithmetic (``5 * 8``) is evaluated too; nothing else is.
    """
    try:
        tree = parse(source)
    except SyntaxError:
        return {}
    out: dict[str, Value] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.AST | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        for t in targets:
            if not isinstance(t, ast.Name) or value is None:
                continue
            if arithmetic:
                with contextlib.suppress(
                    ValueError, TypeError, SyntaxError, ZeroDivisionError, OverflowError, RecursionError
                ):
                    out[t.id] = Value(constant_arithmetic(value), path, node.lineno)
                continue
            v = _literal(value)
            if v is not None or (isinstance(value, ast.Constant) and value.value is None):
                out[t.id] = Value(v, path, node.lineno)
    return out


def init_attribute_assignments(cls: ast.ClassDef, path: str) -> dict[str, Value]:
    """``self.name = <constant arithmetic>`` in class ``cls``'s ``__init__`` (an experiment class as a config:
    YOLOX ``Exp``); the class's bases are the caller's to merge under it."""
    out: dict[str, Value] = {}
    for fn in cls.body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "__init__"):
            continue
        for stmt in walk(fn):
            if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                continue
            t = stmt.targets[0]
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                with contextlib.suppress(*_NOT_CONSTANT):
                    out[t.attr] = Value(constant_arithmetic(stmt.value), path, stmt.lineno)
    return out


def _without_hasattr_guards(test: ast.expr) -> ast.expr:
    """``hasattr(args, 'batch_size') and args.batch_size`` → ``args.batch_size`` (InternImage's ``update_config``):
    a guard that the argument exists says nothing more than reading it."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        rest = [
            v for v in test.values
            if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "hasattr")
        ]  # fmt: skip
        if len(rest) == 1:
            return rest[0]
    return test


def settings_from_args(source: str) -> list[tuple[str, str, str]]:
    """``if args.batch_size: config.DATA.BATCH_SIZE = args.batch_size`` (Swin/RepVGG ``update_config``): the config
    keys the command-line arguments set, as (key, argument, when): ``when`` is "truthy" under ``if args.x:``,
    "given" under ``if args.x is not None:``, "always" for a plain assignment in such a function."""
    try:
        tree = parse(source)
    except SyntaxError:
        return []
    out: list[tuple[str, str, str]] = []
    for fn in walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        params = {a.arg for a in fn.args.args}
        for stmt in fn.body:
            when, body = "always", [stmt]
            if isinstance(stmt, ast.If) and not stmt.orelse:
                test = _without_hasattr_guards(stmt.test)
                if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name):
                    when, body = "truthy", stmt.body
                elif (
                    isinstance(test, ast.Compare) and isinstance(test.left, ast.Attribute)
                    and isinstance(test.ops[0], ast.IsNot) and isinstance(test.comparators[0], ast.Constant)
                    and test.comparators[0].value is None
                ):  # fmt: skip
                    when, body = "given", stmt.body
                else:
                    continue
            for inner in body:
                if not (isinstance(inner, ast.Assign) and len(inner.targets) == 1):
                    continue
                chain, value = _attr_chain(inner.targets[0]), inner.value
                if (
                    chain is not None and len(chain[1]) >= 1 and chain[0] in params
                    and isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
                    and value.value.id in params and value.value.id != chain[0]
                ):  # fmt: skip
                    out.append((".".join(chain[1]), value.attr, when))
    return out


def config_tree_assignments(source: str, path: str) -> dict[str, Value]:
    """``ROOT.a.b = <literal>`` assignments anywhere in a Python file, as settings ``a.b`` (yacs ``_C.SOLVER.LR``,
    minGPT ``C.trainer.learning_rate``, ml_collections ``config.model.dim``): a config tree's defaults.

    Aliases of a subtree count as the subtree (ml_collections ``training = config.training``,
    ``config.eval = evaluate = ConfigDict()``; then ``training.batch_size`` is ``training.batch_size``)."""
    try:
        tree = parse(source)
    except SyntaxError:
        return {}
    aliases: dict[str, str] = {}
    roots: set[str] = set()  # `_C = CN()`: a config tree whose top-level keys are settings too (`_C.AMP_ENABLE`)
    # Module level, and the body of a module-level `get_config()` (the function ml_collections' config_flags call in a
    # `--config=file.py`), only: a class's default-config function builds its own small tree.
    bodies = [s for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "get_config" for s in f.body]
    for stmt in [*tree.body, *bodies]:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) in _TREE_TYPES:
                roots.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    for node in walk(tree):
        if isinstance(node, ast.Assign):
            chains = [c for c in (_attr_chain(t) for t in node.targets) if c is not None and len(c[1]) >= 1]
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if isinstance(node.value, ast.Attribute) and (c := _attr_chain(node.value)) and c[1]:
                chains.append(c)
            for name in names:
                if chains and name not in ("self", "cls"):
                    aliases[name] = ".".join(chains[0][1])
    out: dict[str, Value] = {}
    for node in walk(tree):
        charge_nodes()
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        chain = _attr_chain(node.targets[0])
        if chain is None or chain[0] in ("self", "cls"):
            continue
        root, parts = chain
        if root in aliases:
            parts = [*aliases[root].split("."), *parts]
        if len(parts) < 2 and not (root in roots and root not in aliases):
            continue
        value = node.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "dict"
            and not value.args
        ):
            for kw in value.keywords:  # `config.input.data = dict(name='imagenet2012', split='train[:99%]')`
                if kw.arg is not None:
                    with contextlib.suppress(*_NOT_CONSTANT):
                        out[".".join([*parts, kw.arg])] = Value(constant_arithmetic(kw.value), path, node.lineno)
            continue
        with contextlib.suppress(ValueError, TypeError, SyntaxError, ZeroDivisionError, OverflowError, RecursionError):
            out[".".join(parts)] = Value(constant_arithmetic(node.value), path, node.lineno)
    return out


_TREE_TYPES: Final = frozenset({"CfgNode", "CN", "ConfigDict", "ConfigNode", "EasyDict", "edict", "AttrDict"})


def _attr_chain(t: ast.expr) -> tuple[str, list[str]] | None:
    """``a.b.c`` → (``a``, [``b``, ``c``]); None for anything but a name's attributes."""
    parts: list[str] = []
    while isinstance(t, ast.Attribute):
        parts.append(t.attr)
        t = t.value
    return (t.id, list(reversed(parts))) if isinstance(t, ast.Name) and parts else None


_BASE_KEYS: Final = ("_BASE_", "_base_", "defaults_base", "$include", "__include__")


def load_with_bases(read: Any, path: str, depth: int = 0) -> dict[str, Value]:
    """A structured config with the files its ``_BASE_`` / ``_base_`` key names merged under it first
    (detectron2, MMEngine), or its ``$include`` list (argbind: paths from where the job runs, in order);
    ``read(path)`` gives a file's text or None."""
    text = read(path)
    if text is None:
        return {}
    own = load_structured(text, path)
    out: dict[str, Value] = {}
    for key in _BASE_KEYS:
        base = own.get(key)
        if base is None or depth >= 5:
            continue
        for rel in base.value if isinstance(base.value, list) else [base.value]:
            if isinstance(rel, str):
                parent = path.rsplit("/", 1)[0] if "/" in path else "."
                beside = posixpath.normpath(f"{parent}/{rel}")
                at = posixpath.normpath(rel) if key == "$include" and read(beside) is None else beside
                out.update(load_with_bases(read, at, depth + 1))
    out.update({k: v for k, v in own.items() if k not in _BASE_KEYS})
    return out


class _NotConstantError(ValueError):
    """An expression of a Python config that is not built from literals, ``dict(...)`` and earlier names."""


def _config_expr(node: ast.AST, names: dict[str, Any]) -> Any:
    """The value of an OpenMMLab-style config expression: literals, ``dict(k=v)``, displays, earlier names and
    constant arithmetic. Nothing is executed."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        raise _NotConstantError(node.id)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
        return _told_items([(ast.Constant(kw.arg), kw.value) for kw in node.keywords if kw.arg is not None], names)
    if isinstance(node, ast.Dict):
        return _told_items([(k, v) for k, v in zip(node.keys, node.values, strict=True) if k is not None], names)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        held = _config_expr(node.value, names)  # `codec['input_size']`: an item of a dict set above
        key = node.slice.value
        if isinstance(held, dict) and key in held:
            return held[key]
        if isinstance(held, list | tuple) and isinstance(key, int) and -len(held) <= key < len(held):
            return held[key]
    if isinstance(node, ast.List | ast.Tuple):
        items = [_config_expr(e, names) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _config_expr(node.operand, names)
        if isinstance(v, int | float):
            return -v
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _config_expr(node.left, names), _config_expr(node.right, names)
        if isinstance(a, int | float) and isinstance(b, int | float) and abs(b) < 1e6:
            with contextlib.suppress(*_NOT_CONSTANT):
                return _OPS[type(node.op)](a, b)
    raise _NotConstantError(ast.dump(node)[:40])


def _told_items(pairs: list[tuple[ast.expr, ast.expr]], names: dict[str, Any]) -> dict[Any, Any]:
    """A dict of a config from its items, leaving out those whose value cannot be told (``pipeline=train_pipeline``
    built by code): the others still stand (``train_dataloader.batch_size``). A key that cannot be told fails it."""
    out: dict[Any, Any] = {}
    for k, v in pairs:
        key = _config_expr(k, names)
        with contextlib.suppress(_NotConstantError, TypeError, ValueError):
            out[key] = _config_expr(v, names)
    return out


def _merge_config(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """MMEngine's merge: dicts merge key by key unless the child's says ``_delete_=True``; anything else replaces."""
    out = dict(base)
    for k, v in child.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict) and not v.get("_delete_"):
            out[k] = _merge_config(out[k], v)
        else:
            out[k] = {kk: vv for kk, vv in v.items() if kk != "_delete_"} if isinstance(v, dict) else v
    return out


def python_config(read: Any, path: str, depth: int = 0) -> dict[str, Any]:
    """An OpenMMLab-style Python config (mmcv / MMEngine): its top-level assignments of literals and ``dict(...)``,
    over the files its ``_base_`` names (merged in order, ``_delete_`` honoured); ``read(path)`` gives a file's text
    or None. A value that is not built from literals is left out; nothing is executed."""
    text = read(path)
    if text is None or depth > 5:
        return {}
    try:
        tree = parse(text)
    except SyntaxError:
        return {}
    names: dict[str, Any] = {}
    for node in tree.body:
        charge_nodes()
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            with contextlib.suppress(_NotConstantError, TypeError, ValueError, RecursionError):
                names[node.targets[0].id] = _config_expr(node.value, names)
    out: dict[str, Any] = {}
    bases = names.pop("_base_", [])
    parent = path.rsplit("/", 1)[0] if "/" in path else "."
    for rel in bases if isinstance(bases, list | tuple) else [bases]:
        if isinstance(rel, str) and rel.endswith(".py"):
            out = _merge_config(out, python_config(read, posixpath.normpath(f"{parent}/{rel}"), depth + 1))
    return _merge_config(out, names)


_GIN_INCLUDE: Final = re.compile(r"""^include\s+["']([^"']+)["']""")
_GIN_BINDING: Final = re.compile(r"^([A-Za-z_][\w./]*)\s*=\s*(.+)$")
_GIN_BLOCK: Final = re.compile(r"^([A-Za-z_][\w./]*):\s*$")


def gin_values(read: Any, path: str, depth: int = 0) -> dict[str, Value]:
    """A gin-config file (T5X, many Google research repos) as settings, over the files it ``include``s: macros
    (``TRAIN_STEPS = 50000``) under their names, bindings (``utils.DatasetConfig.batch_size = 128``, or indented
    under ``utils.DatasetConfig:``) under their dotted names; ``%MACRO`` references resolved; only literals are
    read. Bindings scoped to evaluation or inference (``infer_eval/...``) are left out."""
    text = read(path)
    if text is None or depth > 6:
        return {}
    out: dict[str, Value] = {}
    block: str | None = None
    for n, raw in enumerate(text.splitlines()[:5000], start=1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if (m := _GIN_INCLUDE.match(line)) is not None:
            for cand in (m.group(1), posixpath.normpath(posixpath.join(posixpath.dirname(path), m.group(1)))):
                if (got := gin_values(read, cand, depth + 1)) or read(cand) is not None:
                    out.update(got)
                    break
            continue
        indented = raw[:1] in (" ", "\t")
        if not indented and (m := _GIN_BLOCK.match(line)) is not None:
            block = m.group(1)
            continue
        m = _GIN_BINDING.match(line.strip())
        if m is None:
            continue
        name = f"{block}.{m.group(1)}" if indented and block else m.group(1)
        if not indented:
            block = None
        scope, _, key = name.rpartition("/")
        if re.search(r"eval|infer|val|test", scope, re.I):
            continue
        expr = m.group(2).strip()
        if expr.startswith("%") and expr[1:] in out:
            out[key] = Value(out[expr[1:]].value, path, n)
            continue
        v = parse_literal(expr)
        if not (isinstance(v, str) and v == expr and expr[:1] not in ("'", '"')):
            out[key] = Value(v, path, n)  # (a bare word is a reference to a configurable, not a value)
    return out


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested mappings as dotted keys."""
    if not isinstance(data, dict):
        return {prefix: data} if prefix else {}
    out: dict[str, Any] = {}
    for k, v in data.items():
        charge_nodes()  # aliases make a 1 KiB YAML a tree of billions of paths: the budget stops the walk
        key = f"{prefix}.{k}" if prefix else str(k)
        check_size(len(key), "dotted key")
        if isinstance(v, dict) and v:
            out.update(flatten(v, key))
        else:
            out[key] = v
    return out


def _line_of(text: str, key: str) -> int | None:
    leaf = key.rsplit(".", 1)[-1]
    for i, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip().lstrip("{").lstrip()
        if stripped.startswith((f"{leaf}:", f'"{leaf}"', f"'{leaf}'", f"{leaf} =", f"{leaf}=")):
            return i
    return None


def _without_comments(text: str) -> str:
    """JSON text without ``//`` / ``/* */`` comments outside strings, and without trailing commas."""
    out: list[str] = []
    i, n, in_str = 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        else:
            out.append(c)
        i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def nest_flat(flat: dict[str, Any]) -> dict[str, Any]:
    """Dotted keys as nested dicts (``{"model.dim": 8}`` → ``{"model": {"dim": 8}}``)."""
    out: dict[str, Any] = {}
    for key, v in flat.items():
        cur = out
        parts = key.split(".")
        for p in parts[:-1]:
            nxt = cur.setdefault(p, {})
            if not isinstance(nxt, dict):
                break
            cur = nxt
        else:
            cur[parts[-1]] = v
    return out


def load_structured(text: str, path: str) -> dict[str, Value]:
    """A YAML, JSON or TOML file flattened to dotted keys, each with its line."""
    try:
        if path.endswith(".json"):
            try:
                data = json.loads(text)
            except ValueError:
                data = json.loads(_without_comments(text))  # JSON with // and /* */ comments (KAIR, VS Code)
        elif path.endswith(".toml"):
            data = tomllib.loads(text)
        else:
            data = load_yaml(text)
    except (ValueError, yaml.YAMLError, tomllib.TOMLDecodeError):
        return {}
    return {k: Value(v, path, _line_of(text, k)) for k, v in flatten(data).items()}


def flag_values(args: list[str]) -> dict[str, Value]:
    """``--key value`` and bare ``--flag`` words (HfArgumentParser style, no parser at hand)."""
    out: dict[str, Value] = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--") and "=" not in a and len(a) > 2:
            key = a[2:].replace("-", "_")
            if i + 1 < len(args) and not args[i + 1].startswith(("--", "$")):  # "$@" is the shell's, not a value
                out[key] = Value(parse_literal(args[i + 1]), "command")
                i += 2
                continue
            out[key] = Value(True, "command")
        i += 1
    return out


_YACS_KEY: Final = re.compile(r"^[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)+$")
_YACS_TOP: Final = re.compile(r"^[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*$")


def parse_overrides(args: list[str]) -> dict[str, Value]:
    """``--key=value``, ``--key value`` pairs are argparse's business; this reads ``key=value`` and
    ``--key=value`` words (Hydra / OmegaConf / nanoGPT configurator style) and yacs ``KEY.SUB value`` pairs."""
    out: dict[str, Value] = {}
    for i, a in enumerate(args[:-1]):
        if _YACS_KEY.match(a) and "=" not in args[i + 1]:
            out[a] = Value(parse_literal(args[i + 1]), "command")
    first = next((i for i, a in enumerate(args[:-1]) if _YACS_KEY.match(a)), None)
    if first is not None:  # yacs `opts`: KEY VALUE pairs to the end, top-level keys too (`NUM_GPUS 2`)
        for i in range(first, len(args) - 1, 2):
            if not _YACS_TOP.match(args[i]):
                break
            out[args[i]] = Value(parse_literal(args[i + 1]), "command")
    for a in args:
        if "=" not in a:
            continue
        key, _, raw = a.partition("=")
        key = key.lstrip("+~").lstrip("-")
        if not key or not all(part.replace("_", "").replace("-", "").isalnum() for part in re.split(r"[./]", key)):
            continue  # (`model/lm/model_scale=medium`: a Hydra group given by its path)
        out[key] = Value(parse_literal(raw), "command")
    return out


def class_defaults(cls: ast.ClassDef, path: str) -> dict[str, Value]:
    """A config class's field defaults (``lr: float = 1e-4``, ``x: int = field(default=3)``, ``n = 8``), by name."""
    out: dict[str, Value] = {}
    for node in cls.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        if not isinstance(target, ast.Name) or value is None or target.id.startswith("_"):
            continue
        if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) == "field":
            value = next((k.value for k in value.keywords if k.arg == "default"), None)
            if value is None:
                continue
        if isinstance(value, ast.Name) and value.id in out:  # `default=default_learning_rate`: a class constant above
            out[target.id] = Value(out[value.id].value, path, node.lineno)
            continue
        v = _literal(value)
        if v is not None or (isinstance(value, ast.Constant) and value.value is None):
            out[target.id] = Value(v, path, node.lineno)
    return out


def tap_specs(source: str, path: str) -> list[ArgSpec]:
    """The options of a typed-argument-parser class (``class Args(Tap): bs: int = 768``): one ``--name`` per
    annotated field, with its default and type (a ``bool`` field defaulting to False is a switch)."""
    if not re.search(r"\(\s*(?:tap\.)?Tap\s*\)", source):
        return []
    try:
        tree = parse(source)
    except (SyntaxError, ValueError):
        return []
    specs: list[ArgSpec] = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or not any(ast.unparse(b) in ("Tap", "tap.Tap") for b in cls.bases):
            continue
        for node in cls.body:
            if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
                continue
            name, kind = node.target.id, ast.unparse(node.annotation)
            default = _literal(node.value) if node.value is not None else None
            typ = kind if kind in ("int", "float", "str", "bool") else None
            switch = typ == "bool" and default is False
            action = "store_true" if switch else None
            specs.append(ArgSpec((f"--{name}",), name, default, None if switch else typ, action, node.lineno))
    return specs


def cli_targets(arg: ast.expr) -> list[str]:
    """The functions a CLI call exposes: ``fire.Fire(train)``, or each command of ``fire.Fire({"run": run})``."""
    if isinstance(arg, ast.Name):
        return [arg.id]
    if isinstance(arg, ast.Dict):
        return [v.id for v in arg.values if isinstance(v, ast.Name)]
    return []


_CLI_CALLS: Final = ("fire.Fire", "Fire", "typer.run", "CLI", "jsonargparse.CLI", "auto_cli", "jsonargparse.auto_cli")


def cli_entry_functions(tree: ast.Module) -> set[str]:
    """The functions a script exposes as its command line: those ``fire.Fire(f)`` / ``typer.run(f)`` / jsonargparse
    ``CLI(f)`` are handed, and — in a script that builds no argument parser of its own — a function of the script
    its ``__main__`` block hands, uncalled, to some runner (sensai's ``logging.run_cli(main)``, a ``cli(main)`` of
    the job's): its parameters are what the command line sets."""
    out = {
        name for n in walk(tree)
        if isinstance(n, ast.Call) and n.args and ast.unparse(n.func) in _CLI_CALLS
        for name in cli_targets(n.args[0])
    }  # fmt: skip
    typer_app = {  # `app = typer.Typer()` then `@app.command() def main(...)`: a Typer app's commands
        t.id for n in walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
        and ast.unparse(n.value.func) in ("typer.Typer", "Typer") for t in n.targets if isinstance(t, ast.Name)
    }  # fmt: skip
    out |= {
        d.name for d in tree.body if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(isinstance(x, ast.Call) and ast.unparse(x.func) in {f"{a}.command" for a in typer_app}
                for x in d.decorator_list)
    } if typer_app else set()  # fmt: skip
    if out:
        return out
    defined = {
        d.name for d in tree.body
        if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef) and (d.args.defaults or any(d.args.kw_defaults))
    }  # fmt: skip
    handed = {
        n.args[0].id for block in tree.body
        if isinstance(block, ast.If) and "__name__" in ast.unparse(block.test)
        for n in walk(block)
        if isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id in defined
        and ast.unparse(n.func) not in ("print", "len", "list", "map", "asyncio.run")
    }  # fmt: skip
    parses = handed and any(
        isinstance(n, ast.Call) and callee_name(n) in ("ArgumentParser", "HfArgumentParser", "parse_args",
                                                       "parse_known_args")
        for n in walk(tree)
    )  # fmt: skip
    return set() if parses else handed  # (a script with its own parser reads its options from it)


def cli_function_defaults(source: str, path: str, argv: list[str] | None = None) -> dict[str, Value]:
    """Parameter defaults of the functions ``fire.Fire(f)`` / ``typer.run(f)`` / a Typer app's ``@app.command()`` /
    jsonargparse ``CLI(f)`` (and other runners, see :func:`cli_entry_functions`) expose as the command line; with
    ``argv``, the command's leading bare words bind the one such function's parameters without defaults, in order
    (``python finetune_hf.py data/AdvertiseGen/ THUDM/chatglm3-6b configs/lora.yaml`` for ``main(data_dir,
    model_dir, config_file)``)."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError):
        return {}
    targets = cli_entry_functions(tree)
    out: dict[str, Value] = {}
    words = list(itertools.takewhile(lambda t: not t.startswith("-"), argv or []))
    entries = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in targets]
    for node in entries:
        if len(entries) == 1 and words:
            a = node.args
            required = [*a.posonlyargs, *a.args][: len([*a.posonlyargs, *a.args]) - len(a.defaults)]
            for p, word in zip(required, words, strict=False):
                out[p.arg] = Value(word, "command", None)
    for node in entries:
        a = node.args
        positional = [*a.posonlyargs, *a.args]
        pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=False))
        pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=False) if d is not None]
        for p, d in pairs:
            v = _literal(d)
            if v is not None or (isinstance(d, ast.Constant) and d.value is None):
                out[p.arg] = Value(v, path, d.lineno)
    return out
