"""Command-line parsers built from a dictionary of defaults.

Many training scripts do not write one ``add_argument`` per setting; they loop over a dictionary and
add a flag per key::

    config = yaml_config_hook("./config/config.yaml")
    for k, v in config.items():
        parser.add_argument(f"--{k}", default=v, type=type(v))

or hand the dictionary to a helper of their own modules that does (``add_dict_to_argparser(parser,
defaults)`` over ``defaults = dict(lr=1e-4, ...)`` merged with ``defaults.update(model_defaults())``).
This module finds such loops — in the entry script or in a helper it calls — and resolves the
dictionary where it is built: a literal, ``dict(...)``, a function of the job's modules that returns
one, a YAML/JSON/TOML file whose path is written in the call, merged by ``.update`` in order. Each
key becomes an :class:`ArgSpec` with the value as its default, so the command line overrides it the
way the script's parser would. Nothing is executed.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Final

from schedmate.agents.advisor.extract.config_sources import ArgSpec, load_structured, parse_literal
from schedmate.agents.advisor.extract.param_count import ParamCounter
from schedmate.agents.advisor.extract.syntax import callee_name, parse, walk
from schedmate.agents.advisor.extract.values import UNKNOWN, AbortError
from schedmate.agents.advisor.extract.workspace import Workspace

__all__ = ["FunctionResolver", "dict_parser_specs", "factory_settings", "flag_factory_defaults", "parse_pairs"]

_FILE_SUFFIXES: Final = (".yaml", ".yml", ".json", ".toml")
_MAX_DEPTH: Final = 4
_TYPES: Final = {int: "int", float: "float", str: "str"}


def _parse(text: str | None) -> ast.Module | None:
    if not text:
        return None
    try:
        return parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _scope_statements(scope: ast.AST) -> list[ast.stmt]:
    """The statements of a module or function body in order, descending into if/for/with/try but not into nested
    definitions (their names are their own)."""
    out: list[ast.stmt] = []
    todo: list[ast.stmt] = list(getattr(scope, "body", []))
    while todo:
        stmt = todo.pop(0)
        out.append(stmt)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        inner: list[ast.stmt] = []
        for field in ("body", "orelse", "finalbody"):
            inner += getattr(stmt, field, []) or []
        for handler in getattr(stmt, "handlers", []) or []:
            inner += handler.body
        todo[:0] = inner
    return out


def _flag_loop_param(loop: ast.For) -> tuple[str, str] | None:
    """``for k, v in D.items(): ...add_argument(f"--{k}", default=v...)``: (D's name, the default's name)."""
    if not (isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2):
        return None
    key, val = loop.target.elts
    it = loop.iter
    if not (
        isinstance(key, ast.Name) and isinstance(val, ast.Name) and isinstance(it, ast.Call)
        and isinstance(it.func, ast.Attribute) and it.func.attr == "items" and isinstance(it.func.value, ast.Name)
    ):  # fmt: skip
        return None
    for node in walk(ast.Module(body=loop.body, type_ignores=[])):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "add_argument" or not node.args or not isinstance(node.args[0], ast.JoinedStr):
            continue
        names = {n.id for n in walk(node.args[0]) if isinstance(n, ast.Name)}
        if key.id in names:
            return it.func.value.id, val.id
    return None


_STAR_IMPORTS_FOLLOWED: Final = 8


class FunctionResolver:
    """Dictionaries built from literals, ``dict(...)``, ``.update``, functions of the job's modules and config files."""

    def __init__(self, ws: Workspace, script: str, tree: ast.Module) -> None:
        self.ws = ws
        self.script = script
        self.trees: dict[str, ast.Module] = {script: tree}

    def functions(self, file: str) -> dict[str, ast.FunctionDef]:
        tree = self.trees.get(file)
        if tree is None:
            return {}
        return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}

    def classes(self, file: str) -> dict[str, ast.ClassDef]:
        tree = self.trees.get(file)
        if tree is None:
            return {}
        return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def imported_function(self, name: str, file: str, depth: int = 0) -> tuple[ast.FunctionDef, str] | None:
        """A function ``name`` defined in ``file`` or imported into it from the job's own modules (``from x import
        name``), through a package that re-exports it (``lib/models/__init__.py``: ``from .YOLOP import get_net``)."""
        found = self._imported(name, file, depth, classes=False)
        return (found[0], found[1]) if found is not None and isinstance(found[0], ast.FunctionDef) else None

    def imported_class(self, name: str, file: str) -> tuple[ast.ClassDef, str] | None:
        """A class ``name`` defined in ``file`` or imported into it from the job's own modules."""
        found = self._imported(name, file, 0, classes=True)
        return (found[0], found[1]) if found is not None and isinstance(found[0], ast.ClassDef) else None

    def _imported(
        self, name: str, file: str, depth: int, *, classes: bool
    ) -> tuple[ast.FunctionDef | ast.ClassDef, str] | None:
        def own(path: str) -> ast.FunctionDef | ast.ClassDef | None:
            return self.classes(path).get(name) if classes else self.functions(path).get(name)

        if (here := own(file)) is not None:
            return here, file
        tree = self.trees.get(file)
        if tree is None or depth > 3:
            return None
        stars = 0
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                for alias in node.names:
                    star = alias.name == "*"  # `from replknet import *`: every public name of the module (a few
                    if (alias.asname or alias.name) != name and not star:  # such modules per file: a package that
                        continue  # star-imports hundreds is not searched module by module)
                    if star and (stars := stars + 1) > _STAR_IMPORTS_FOLLOWED:
                        continue
                    path = self.ws.module_file(node.module, node.level, file)
                    if path is None:
                        continue
                    if path not in self.trees and (t := _parse(self.ws.read_text_or_none(path))) is not None:
                        self.trees[path] = t
                    if path in self.trees and path != file:
                        found = self._imported(name if star else alias.name, path, depth + 1, classes=classes)
                        if found is not None:
                            return found
        return None

    def module_function(self, alias: str, name: str, file: str) -> tuple[ast.FunctionDef, str] | None:
        """``alias.name`` where ``alias`` is a module of the job's own imported into ``file`` whole (``import
        nets.factory as alias``, ``from retinanet import model``)."""
        tree = self.trees.get(file)
        if tree is None:
            return None
        for node in tree.body:
            candidates: list[tuple[str, int]] = []
            if isinstance(node, ast.Import):
                candidates = [(a.name, 0) for a in node.names if (a.asname or a.name) == alias]
            elif isinstance(node, ast.ImportFrom):
                candidates = [(f"{node.module}.{a.name}" if node.module else a.name, node.level)
                              for a in node.names if (a.asname or a.name) == alias]  # fmt: skip
            for module, level in candidates:
                path = self.ws.module_file(module, level, file)
                if path is None:
                    continue
                if path not in self.trees and (t := _parse(self.ws.read_text_or_none(path))) is not None:
                    self.trees[path] = t
                fn = self.functions(path).get(name)
                if fn is not None:
                    return fn, path
        return None

    def dict_of(self, node: ast.expr | None, scope: ast.AST, file: str, depth: int = 0) -> dict[str, Any] | None:
        if node is None or depth > _MAX_DEPTH:
            return None
        if isinstance(node, ast.Dict):
            out: dict[str, Any] = {}
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:  # {**other}
                    out.update(self.dict_of(v, scope, file, depth + 1) or {})
                elif isinstance(k, ast.Constant) and isinstance(k.value, str):
                    out[k.value] = _literal(v)
            return out
        if isinstance(node, ast.Name):
            return self.named(node.id, scope, file, depth)
        if isinstance(node, ast.Call):
            return self.called(node, scope, file, depth)
        return None

    def called(self, node: ast.Call, scope: ast.AST, file: str, depth: int) -> dict[str, Any] | None:
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
        if name == "dict":
            out: dict[str, Any] = {}
            for a in node.args:
                out.update(self.dict_of(a, scope, file, depth + 1) or {})
            for kw in node.keywords:
                if kw.arg is None:
                    out.update(self.dict_of(kw.value, scope, file, depth + 1) or {})
                else:
                    out[kw.arg] = _literal(kw.value)
            return out
        for a in node.args:  # a loader given the file: yaml_config_hook("./config/config.yaml")
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.endswith(_FILE_SUFFIXES):
                text = self.ws.read_text_or_none(a.value.removeprefix("./"))
                if text is not None:
                    flat = load_structured(text, a.value)
                    return {k: v.value for k, v in flat.items() if "." not in k}
        if isinstance(node.func, ast.Name) and (found := self.imported_function(node.func.id, file)) is not None:
            fn, fn_file = found
            for stmt in _scope_statements(fn):
                if isinstance(stmt, ast.Return):
                    return self.dict_of(stmt.value, fn, fn_file, depth + 1)
        return None

    def named(self, name: str, scope: ast.AST, file: str, depth: int) -> dict[str, Any] | None:
        out: dict[str, Any] | None = None
        for stmt in _scope_statements(scope):
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                out = self.dict_of(stmt.value, scope, file, depth + 1)
            elif out is not None and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                call = stmt.value
                if (
                    isinstance(call.func, ast.Attribute) and call.func.attr == "update"
                    and isinstance(call.func.value, ast.Name) and call.func.value.id == name and call.args
                ):  # fmt: skip
                    out.update(self.dict_of(call.args[0], scope, file, depth + 1) or {})
            elif (
                out is not None and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Subscript) and isinstance(stmt.targets[0].value, ast.Name)
                and stmt.targets[0].value.id == name and isinstance(stmt.targets[0].slice, ast.Constant)
            ):  # fmt: skip
                out[str(stmt.targets[0].slice.value)] = _literal(stmt.value)
        return out


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = _literal(node.operand)
            return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        return None


def _specs(values: dict[str, Any], line: int) -> list[ArgSpec]:
    return [
        ArgSpec(flags=(f"--{k}",), dest=k, default=v, type=_TYPES.get(type(v)), action=None, line=line)
        for k, v in values.items()
        if k.isidentifier()
    ]


def _enclosing_functions(tree: ast.Module) -> dict[int, ast.AST]:
    """For every node of ``tree`` (by id): the innermost function whose body holds it, or the module."""
    out: dict[int, ast.AST] = {}

    def visit(node: ast.AST, scope: ast.AST) -> None:
        out[id(node)] = scope
        inner = node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else scope
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, tree)
    return out


def dict_parser_specs(ws: Workspace, code: str, script: str) -> list[ArgSpec]:
    """Flags the entry script's parser gets from dictionaries (see the module docstring)."""
    tree = _parse(code)
    if tree is None:
        return []
    res = FunctionResolver(ws, script, tree)
    enclosing = _enclosing_functions(tree)
    specs: list[ArgSpec] = []
    for node in walk(tree):
        if isinstance(node, ast.For) and (found := _flag_loop_param(node)) is not None:
            specs += _specs(res.named(found[0], enclosing[id(node)], script, 0) or {}, node.lineno)
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        helper = res.imported_function(node.func.id, script)
        if helper is None or helper[0] is enclosing[id(node)]:
            continue
        fn, _ = helper
        params = [a.arg for a in fn.args.args]
        for loop in walk(fn):
            if not (isinstance(loop, ast.For) and (found := _flag_loop_param(loop)) is not None):
                continue
            if found[0] not in params:
                continue
            i = params.index(found[0])
            arg = next((k.value for k in node.keywords if k.arg == found[0]), None)
            if arg is None and i < len(node.args):
                arg = node.args[i]
            specs += _specs(res.dict_of(arg, enclosing[id(node)], script) or {}, node.lineno)
    return specs


_MIN_FACTORY_KEYWORDS: Final = 4


def _factory_call(fn: ast.FunctionDef) -> tuple[ast.Call, str | None] | None:
    """The call a config factory returns (``return HParams(epochs=500, ...)`` or ``h = HParams(...); ...; return h``)
    when it sets enough literal keywords, and the name it is bound to."""
    bound: dict[str, ast.Call] = {}
    for stmt in _scope_statements(fn):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            if isinstance(stmt.value, ast.Call):
                bound[stmt.targets[0].id] = stmt.value
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            if isinstance(stmt.value, ast.Call):
                call, name = stmt.value, None
            elif isinstance(stmt.value, ast.Name) and stmt.value.id in bound:
                call, name = bound[stmt.value.id], stmt.value.id
            else:
                return None
            return (call, name) if _literal_keywords(call) >= _MIN_FACTORY_KEYWORDS else None
    return None


def parse_pairs(text: str) -> dict[str, Any]:
    """``"a=1,b=True,c=[1,2]"`` (TensorFlow ``HParams.parse``) as values."""
    out: dict[str, Any] = {}
    depth, start, parts = 0, 0, []
    for i, ch in enumerate(text):
        depth += ch in "[({"
        depth -= ch in "])}"
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    for part in parts:
        key, eq, value = part.partition("=")
        if eq and key.strip().isidentifier():
            out[key.strip()] = parse_literal(value)
    return out


def _computed(counter: ParamCounter, node: ast.expr, file: str) -> Any:
    """A keyword's value computed over its module's constants (``n_symbols=len(symbols)``), or None."""
    try:
        v = counter.evaluate(node, file)
    except (AbortError, RecursionError, ValueError, TypeError, ArithmeticError):
        return None
    if v is UNKNOWN or not isinstance(v, int | float | str | bool) or (isinstance(v, str) and len(v) > 200):
        return None
    return v


def factory_settings(ws: Workspace, code: str, script: str) -> tuple[dict[str, tuple[Any, str, int]], list[str]]:
    """Settings of a config factory the entry calls from the job's modules (``hparams = create_hparams(args.hparams)``
    whose body returns ``HParams(epochs=500, batch_size=64, ...)``): its keyword defaults (value, file, line), and
    the names of the caller's settings the factory parses as ``name=value`` overrides (``hparams.parse(hparams_string)``
    given ``args.hparams``: ``["hparams"]``; see :func:`parse_pairs`)."""
    tree = _parse(code)
    if tree is None:
        return {}, []
    res = FunctionResolver(ws, script, tree)
    enclosing = _enclosing_functions(tree)
    counter = ParamCounter(ws, max_steps=20_000)
    defaults: dict[str, tuple[Any, str, int]] = {}
    parsed_from: list[str] = []
    for node in walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        found = res.imported_function(node.func.id, script)
        if found is None or (found[1] == script and found[0] is enclosing[id(node)]):
            continue
        fn, file = found
        made = _factory_call(fn)
        if made is None:
            continue
        call, bound = made
        _keyword_defaults(call, file, counter, defaults)
        params = [a.arg for a in fn.args.args]
        for sub in walk(fn):
            if not (
                bound and isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "parse"
                and isinstance(sub.func.value, ast.Name) and sub.func.value.id == bound and sub.args
                and isinstance(sub.args[0], ast.Name) and sub.args[0].id in params
            ):  # fmt: skip
                continue
            i = params.index(sub.args[0].id)
            arg = node.args[i] if i < len(node.args) else None
            name = arg.attr if isinstance(arg, ast.Attribute) else arg.id if isinstance(arg, ast.Name) else None
            if name:
                parsed_from.append(name)
    for name, (call, file) in _imported_instances(ws, tree, script).items():
        _keyword_defaults(call, file, counter, defaults)
        for sub in walk(tree):  # `hparams.parse(args["--hparams"])`: the option's `a=1,b=2` string overrides them
            if (
                isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "parse"
                and isinstance(sub.func.value, ast.Name) and sub.func.value.id == name and len(sub.args) == 1
            ):  # fmt: skip
                arg = sub.args[0]
                if isinstance(arg, ast.Subscript) and isinstance(arg.slice, ast.Constant):
                    key = arg.slice.value  # docopt's `args["--hparams"]`
                    if isinstance(key, str):
                        parsed_from.append(key.lstrip("-"))
                elif isinstance(arg, ast.Attribute):
                    parsed_from.append(arg.attr)
    return defaults, parsed_from


_SETTINGS_CLASS: Final = re.compile(r"(?i)h?params|config|conf|args|options|opts|settings|namespace|dict")


def _imported_instances(ws: Workspace, tree: ast.Module, script: str) -> dict[str, tuple[ast.Call, str]]:
    """Settings objects the entry imports from the job's modules, built there at module level from literal keywords:
    ``from hparams import hparams`` where ``hparams.py`` holds ``hparams = HParams(batch_size=8, …)`` (a settings
    class: HParams, ConfigDict, EasyDict, SimpleNamespace, dict). Name → (the call, its file)."""
    out: dict[str, tuple[ast.Call, str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        file = ws.module_file(node.module or "", node.level, script)
        module = _parse(ws.read_text_or_none(file)) if file else None
        if module is None or file is None:
            continue
        for alias in node.names:
            for stmt in module.body:
                if not (
                    isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
                    and any(isinstance(t, ast.Name) and t.id == alias.name for t in stmt.targets)
                ):  # fmt: skip
                    continue
                func = stmt.value.func
                callee = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                literal = sum(1 for k in stmt.value.keywords if k.arg and _literal(k.value) is not None)
                if _SETTINGS_CLASS.search(callee) and literal >= _MIN_FACTORY_KEYWORDS:
                    out[alias.asname or alias.name] = (stmt.value, file)
    return out


def _literal_keywords(call: ast.Call, depth: int = 0) -> int:
    """Literal keywords of a settings call, counting those of the settings calls it nests (``TRLConfig(train=
    TrainConfig(batch_size=32, …), optimizer=OptimizerConfig(kwargs=dict(lr=3e-5)))``)."""
    n = 0
    for k in call.keywords:
        if k.arg and _literal(k.value) is not None:
            n += 1
        elif k.arg and depth < 3 and _settings_call(k.value):
            n += _literal_keywords(k.value, depth + 1)  # type: ignore[arg-type]
    return n


def _settings_call(node: ast.expr) -> bool:
    """A nested settings call: a class built with keywords only (``TrainConfig(batch_size=32)``) or ``dict(...)``."""
    if not (isinstance(node, ast.Call) and node.keywords and not node.args):
        return False
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    return name == "dict" or name[:1].isupper()


def _keyword_defaults(
    call: ast.Call, file: str, counter: ParamCounter, defaults: dict[str, tuple[Any, str, int]], prefix: str = ""
) -> None:
    """A settings call's keywords as defaults (value, file, line): literals, or values computed over the module's
    constants (``n_symbols=len(symbols)``); a nested settings call's under its keyword (``train.batch_size``)."""
    for kw in call.keywords:
        if not kw.arg:
            continue
        if _settings_call(kw.value) and len(prefix) < 200:
            _keyword_defaults(kw.value, file, counter, defaults, f"{prefix}{kw.arg}.")  # type: ignore[arg-type]
            continue
        v = _literal(kw.value)
        if v is None and not isinstance(kw.value, ast.Constant):
            v = _computed(counter, kw.value, file)
        if v is not None:
            defaults[f"{prefix}{kw.arg}"] = (v, file, kw.value.lineno)


def flag_factory_defaults(ws: Workspace, code: str, script: str) -> dict[str, tuple[Any, str, int]]:
    """Defaults of flags an entry defines with ``define_flags_with_default(total_steps=10000, optimizer=
    OptimizerFactory.get_default_config(), …)`` (mlxu, over absl): literal keywords, and the nested config a class's
    ``get_default_config()`` builds (``config.lr = 0.01``; ``config.adamw_optimizer = AdamWOptimizerFactory.
    get_default_config()``) as dotted settings (``optimizer.adamw_optimizer.lr``) with (value, file, line)."""
    tree = _parse(code)
    if tree is None or "define_flags_with_default" not in code:
        return {}
    res = FunctionResolver(ws, script, tree)
    out: dict[str, tuple[Any, str, int]] = {}
    for node in walk(tree):
        if not (isinstance(node, ast.Call) and callee_name(node) == "define_flags_with_default"):
            continue
        for kw in node.keywords:
            if kw.arg is None:
                continue
            value = _plain_literal(kw.value)
            if value is not UNKNOWN:
                out[kw.arg] = (value, script, kw.value.lineno)
            else:
                _factory_config(res, kw.value, script, kw.arg, out, 0)
    return out


def _factory_config(
    res: FunctionResolver, call: ast.expr, file: str, prefix: str, out: dict[str, tuple[Any, str, int]], depth: int
) -> None:
    """``Cls.get_default_config()`` (a static method of a class of the job's): its ``config.x = literal`` lines."""
    if not (
        depth <= 4 and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name) and not call.args
    ):  # fmt: skip
        return
    found = res.imported_class(call.func.value.id, file)
    if found is None:
        return
    cls, where = found
    method = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == call.func.attr), None)
    if method is None:
        return
    for stmt in method.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target = stmt.targets[0]
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
            continue
        key = f"{prefix}.{target.attr}"
        value = _plain_literal(stmt.value)
        if value is not UNKNOWN:
            out[key] = (value, where, stmt.lineno)
        else:
            _factory_config(res, stmt.value, where, key, out, depth + 1)


def _plain_literal(node: ast.expr) -> Any:
    value = _literal(node)  # (a scalar: a nested config's literals are its own settings)
    return value if isinstance(value, str | int | float | bool) else UNKNOWN
