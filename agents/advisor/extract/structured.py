"""Hydra structured configs, read statically: ``ConfigStore.store(name=, group=, node=Dataclass)`` calls of the entry
script and the defaults of the dataclasses they store (nested dataclasses, inherited fields, ``field(default=…)`` and
``field(default_factory=…)``), as the nested dicts Hydra composes from them. Nothing is imported or run."""

from __future__ import annotations

import ast
from typing import Any, Final

from schedmate.agents.advisor.extract.syntax import parse, walk
from schedmate.agents.advisor.extract.workspace import Workspace

__all__ = ["structured_configs"]

_MAX_DEPTH: Final = 5
_Found = tuple[str, ast.ClassDef]


def structured_configs(ws: Workspace, script: str, code: str) -> dict[tuple[str, str], tuple[dict[str, Any], str]]:
    """``(group, name) → (the stored dataclass's defaults, the file defining it)``; the primary config has group
    ""."""
    if not script.endswith(".py"):
        return {}
    reader = _Reader(ws)
    out: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}
    for file, tree in _storing_modules(ws, script, code):
        for call in walk(tree):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "store"):
                continue
            kw = {k.arg: k.value for k in call.keywords if k.arg}
            name, group, node = kw.get("name"), kw.get("group"), kw.get("node")
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and isinstance(node, ast.Name)):
                continue
            found = reader.find_class(file, node.id, 0)
            if found is None:
                continue
            if isinstance(group, ast.Name):  # `group=ACCELERATOR_GROUP_NAME`: a module constant
                group = next(
                    (a.value for a in tree.body if isinstance(a, ast.Assign) and len(a.targets) == 1
                     and isinstance(a.targets[0], ast.Name) and a.targets[0].id == group.id),
                    group,
                )  # fmt: skip
            if group is not None and not (isinstance(group, ast.Constant) and isinstance(group.value, str)):
                continue  # a group that cannot be told
            g = group.value if isinstance(group, ast.Constant) and isinstance(group.value, str) else ""
            out.setdefault((g, name.value), (reader.defaults(found, 0), found[0]))
    return out


def _storing_modules(ws: Workspace, script: str, code: str) -> list[tuple[str, ast.Module]]:
    """The entry and the job's modules it reaches (imports followed three hops, 60 files at most) that register
    configs with Hydra's ``ConfigStore``: a package's ``__init__`` storing its group's dataclasses
    (``cs.store(group="optimizer", name="adamw", node=AdamWConfig)``) counts as much as the entry."""
    out: list[tuple[str, ast.Module]] = []
    seen = {script}
    frontier: list[tuple[str, str]] = [(script, code)]
    for _ in range(4):
        following: list[tuple[str, str]] = []
        for file, text in frontier:
            try:
                tree = parse(text)
            except (SyntaxError, ValueError):
                continue
            if "ConfigStore" in text or ".store(" in text:
                out.append((file, tree))
            for node in walk(tree):
                names: list[tuple[str, int]] = []
                if isinstance(node, ast.ImportFrom):
                    names = [(node.module or "", node.level)]
                    names += [(f"{node.module}.{a.name}" if node.module else a.name, node.level) for a in node.names]
                elif isinstance(node, ast.Import):
                    names = [(a.name, 0) for a in node.names]
                names += [  # `import trainer.configs.configs` runs `trainer/__init__` and `trainer/configs/__init__`
                    (mod.rsplit(".", k)[0], level) for mod, level in list(names) for k in (1, 2) if mod.count(".") >= k
                ]
                for mod, level in names:
                    target = ws.module_file(mod, level, file) if mod or level else None
                    if target and target not in seen and len(seen) < 60 and (t := ws.read_text_or_none(target)):
                        seen.add(target)
                        following.append((target, t))
        frontier = following
    return out


class _Reader:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._trees: dict[str, ast.Module | None] = {}

    def _tree(self, file: str) -> ast.Module | None:
        if file not in self._trees:
            text = self.ws.read_text_or_none(file)
            try:
                self._trees[file] = parse(text) if text is not None else None
            except (SyntaxError, ValueError):
                self._trees[file] = None
        return self._trees[file]

    def find_class(self, file: str, name: str, depth: int) -> _Found | None:
        """The class ``name`` as module ``file`` sees it: defined there or imported from the workspace."""
        tree = self._tree(file)
        if tree is None or depth > _MAX_DEPTH:
            return None
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return file, node
        for imp in walk(tree):
            if isinstance(imp, ast.ImportFrom):
                for alias in imp.names:
                    if (alias.asname or alias.name) == name:
                        target = self.ws.module_file(imp.module or "", imp.level, file)
                        return self.find_class(target, alias.name, depth + 1) if target else None
        return None

    def defaults(self, found: _Found, depth: int) -> dict[str, Any]:
        """The fields' defaults of a dataclass and its bases (nested dataclasses as dicts; required fields left out)."""
        file, cls = found
        out: dict[str, Any] = {}
        if depth > _MAX_DEPTH:
            return out
        for base in cls.bases:
            if isinstance(base, ast.Name) and (parent := self.find_class(file, base.id, 0)) is not None:
                out.update(self.defaults(parent, depth + 1))
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                value = self._value(file, stmt.value, depth)
                if value is not _NONE:
                    out[stmt.target.id] = value
        return out

    def _value(self, file: str, node: ast.expr, depth: int) -> Any:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "field":
                kw = {k.arg: k.value for k in node.keywords if k.arg}
                if "default" in kw:
                    return self._value(file, kw["default"], depth)
                factory = kw.get("default_factory")
                if isinstance(factory, ast.Lambda):
                    return self._value(file, factory.body, depth)
                if isinstance(factory, ast.Name):
                    return self._value(file, ast.Call(func=factory, args=[], keywords=[]), depth)
                return _NONE
            if not node.args and (found := self.find_class(file, node.func.id, 0)) is not None:
                nested = self.defaults(found, depth + 1)  # `spect: SpectConfig = SpectConfig()`
                nested.update({k.arg: v for k in node.keywords if k.arg and (v := self._value(file, k.value, depth))
                               is not _NONE})  # fmt: skip
                return nested
            return _NONE
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return node.attr  # an enum member (`RNNType.lstm`): its name, as Hydra writes it
        if isinstance(node, ast.Name):  # a module constant (`field(default_factory=lambda: defaults)`), else MISSING
            tree = self._tree(file)
            for stmt in tree.body if tree is not None else []:
                if (
                    isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and stmt.targets[0].id == node.id and not isinstance(stmt.value, ast.Name)
                ):  # fmt: skip
                    return self._value(file, stmt.value, depth + 1)
            return _NONE
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return _NONE


_NONE: Final = object()
