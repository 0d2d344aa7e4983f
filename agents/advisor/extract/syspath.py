"""Folders an entry script puts on ``sys.path`` before its imports (read, never run).

Older research code imports its library folder as top-level packages after ``import _init_paths``, a module
whose only job is ``sys.path.insert(0, osp.join(osp.dirname(__file__), '..', 'lib'))``. Those folders are import
roots for the rest of the analysis. Only path expressions made of ``__file__``, string literals,
``os.path.join/dirname/abspath/realpath/normpath``, ``pathlib.Path`` (``.parent``, ``/``, ``.resolve()``) and names
assigned those at module level are followed; a root must stay inside the workspace.
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath

from schedmate.agents.advisor.extract.syntax import parse, walk
from schedmate.agents.advisor.extract.workspace import Workspace
from schedmate.agents.exceptions import WorkspaceError

__all__ = ["module_paths", "path_value", "sys_path_roots"]

_SAME = frozenset({"abspath", "realpath", "normpath", "resolve", "absolute", "expanduser", "str", "Path", "fspath"})


def sys_path_roots(ws: Workspace, script: str) -> list[str]:
    """Workspace folders (relative paths, ``""`` for the root) that ``script`` or a workspace module it imports
    adds to ``sys.path`` at module level, in the order added."""
    tree = _tree(ws, script, needs_sys_path=False)
    if tree is None:
        return []
    files = [script]
    for node in tree.body:  # `import _init_paths`: a local module run first, for its side effect on sys.path
        if isinstance(node, ast.Import):
            for alias in node.names:
                found = ws.module_file(alias.name, 0, script)
                if found is not None and found not in files:
                    files.append(found)
    roots: list[str] = []
    for file in files[:6]:
        module = tree if file == script else _tree(ws, file)
        if module is not None:
            roots += [r for r in _added(module, file, ws) if r not in roots]
    return [r for r in roots if _folder_within(ws, r)]


def _folder_within(ws: Workspace, rel: str) -> bool:
    """Whether ``rel`` is a folder the workspace may read (inside its boundary: the job's repository, if named)."""
    try:
        return ws.resolve(rel or ".").is_dir()
    except WorkspaceError:
        return False


def _tree(ws: Workspace, file: str, *, needs_sys_path: bool = True) -> ast.Module | None:
    text = ws.read_text_or_none(file)
    if not text or (needs_sys_path and "sys.path" not in text):
        return None
    try:
        return parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _added(tree: ast.Module, file: str, ws: Workspace | None = None) -> list[str]:
    """The folders ``tree`` (the module ``file``) adds: ``sys.path.insert(i, p)`` / ``sys.path.append(p)``, directly
    or through a function of the module that does it with its parameter (``add_path(lib_path)``). An absolute path
    (``/root/deeplabv3/model``: the repository where its author kept it) is the workspace folder its longest tail
    names, given ``ws``."""
    env: dict[str, PurePosixPath] = {}
    adders = {fn.name for fn in tree.body if isinstance(fn, ast.FunctionDef) and _adds_parameter(fn)}
    out: list[str] = []
    for stmt in tree.body:
        _bind(stmt, env, file)
        for node in walk(stmt) if isinstance(stmt, ast.Expr | ast.If) else ():
            if not isinstance(node, ast.Call) or not node.args:
                continue
            arg = node.args[-1] if _sys_path_call(node) else node.args[0] if _name(node.func) in adders else None
            folder = _path(arg, env, file) if arg is not None else None
            if folder is not None and folder.is_absolute() and ws is not None:
                text = _tail_in(ws, folder)
            else:
                text = _inside(folder) if folder is not None else None
            if text is not None and text not in out:
                out.append(text)
    return out


def _bind(stmt: ast.stmt, env: dict[str, PurePosixPath], file: str) -> None:
    """Record ``NAME = <path expression>`` (a module-level statement) in ``env``."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        value = _path(stmt.value, env, file)
        if value is not None:
            env[stmt.targets[0].id] = value


def module_paths(tree: ast.Module, file: str) -> dict[str, PurePosixPath]:
    """The module-level names of ``tree`` (the module ``file``) bound to paths built from ``__file__`` or literals
    (``ROOT = Path(__file__).resolve().parents[0]``), last binding winning."""
    env: dict[str, PurePosixPath] = {}
    for stmt in tree.body:
        _bind(stmt, env, file)
    return env


def path_value(node: ast.expr, env: dict[str, PurePosixPath], file: str) -> str | None:
    """The workspace-relative path ``node`` builds (``ROOT / "data/hyps/hyp.yaml"``), or None."""
    found = _path(node, env, file)
    return _inside(found) if found is not None else None


def _sys_path_call(node: ast.Call) -> bool:
    f = node.func
    return isinstance(f, ast.Attribute) and f.attr in ("insert", "append") and ast.unparse(f.value) == "sys.path"


def _adds_parameter(fn: ast.FunctionDef) -> bool:
    params = {a.arg for a in fn.args.args}
    return any(
        isinstance(n, ast.Call) and _sys_path_call(n) and n.args and isinstance(n.args[-1], ast.Name)
        and n.args[-1].id in params
        for n in walk(fn)
    )  # fmt: skip


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _path(node: ast.expr, env: dict[str, PurePosixPath], file: str, depth: int = 0) -> PurePosixPath | None:
    """The path ``node`` evaluates to, relative to the workspace root (the job runs from it), or None (also past a
    nesting no real path expression reaches)."""
    if depth > 24:
        return None
    depth += 1
    if isinstance(node, ast.Name):
        return PurePosixPath(file) if node.id == "__file__" else env.get(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return PurePosixPath(node.value or ".")
    if isinstance(node, ast.Attribute) and node.attr in ("pardir", "curdir") and ast.unparse(node.value) in (
        "os", "os.path", "path", "osp"
    ):  # fmt: skip
        return PurePosixPath(".." if node.attr == "pardir" else ".")  # `os.path.join(dirname(__file__), os.pardir)`
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        base = _path(node.value, env, file, depth)
        return base.parent if base is not None else None
    if (
        isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents"
        and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int) and node.slice.value >= 0
    ):  # fmt: skip
        base = _path(node.value.value, env, file, depth)  # `FILE.parents[0]`: the file's folder
        return base.parents[node.slice.value] if base is not None and node.slice.value < len(base.parents) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _path(node.left, env, file, depth), _path(node.right, env, file, depth)
        return left / right if left is not None and right is not None else None
    if not isinstance(node, ast.Call):
        return None
    name = _name(node.func)
    if name in ("cwd", "getcwd") and not node.args:
        return PurePosixPath(".")  # `Path.cwd()`: the working folder, which these paths are relative to
    if name == "relpath" and 1 <= len(node.args) <= 2:  # `os.path.relpath(ROOT, Path.cwd())`
        found = [_path(a, env, file, depth) for a in node.args]
        given = [p for p in found if p is not None and not p.is_absolute()]
        if len(given) != len(found) or (len(given) == 2 and _inside(given[1]) != ""):
            return None
        return given[0]
    if name in _SAME and isinstance(node.func, ast.Attribute) and name in ("resolve", "absolute") and not node.args:
        return _path(node.func.value, env, file, depth)  # Path(__file__).resolve()
    if name in _SAME and len(node.args) == 1:
        return _path(node.args[0], env, file, depth)
    if name == "dirname" and len(node.args) == 1:
        base = _path(node.args[0], env, file, depth)
        return base.parent if base is not None else None
    if name == "join" and node.args:
        parts = [_path(a, env, file, depth) for a in node.args]
        if any(p is None for p in parts):
            return None
        out = PurePosixPath()
        for p in parts:
            out = out / p  # type: ignore[operator]
        return out
    return None


def _tail_in(ws: Workspace, path: PurePosixPath) -> str | None:
    """The longest tail of absolute ``path`` (below its first folder) that is a folder of the workspace holding
    Python files, or None."""
    parts = [p for p in path.parts[2:] if p not in (".", "..")]
    for i in range(len(parts)):
        rel = "/".join(parts[i:])
        if _folder_within(ws, rel) and next(ws.sub(rel).files((".py",)), None) is not None:
            return rel  # (a walk of that folder alone, stopped at its first Python file)
    return None


def _inside(path: PurePosixPath) -> str | None:
    """``path`` with ``.`` and ``..`` folded (leading ``..`` kept: the job's repository above its working directory,
    which the workspace's boundary admits or refuses), or None for an absolute path."""
    if path.is_absolute():
        return None
    parts: list[str] = []
    for part in path.parts:
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts)
