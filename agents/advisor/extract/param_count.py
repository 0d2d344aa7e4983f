"""Parameter count of a PyTorch model from its source, by abstract interpretation of ``__init__``.

Nothing is imported or executed: the constructor bodies of the model class and of the local
classes it builds are walked with a tiny evaluator (:mod:`.evaluator`) that knows Python
arithmetic, containers, loops and branches, and the sizes of ``torch.nn`` layers
(:mod:`.torch_layers`). Anything it cannot evaluate becomes ``UNKNOWN``; a layer whose size is
unknown makes the count fail (``None``) rather than guess. Work is bounded (steps, recursion, files).
"""

from __future__ import annotations

import ast
from typing import Any

from schedmate.agents.advisor.extract.evaluator import Callee, Evaluator
from schedmate.agents.advisor.extract.known import known_model
from schedmate.agents.advisor.extract.torch_layers import torch_call
from schedmate.agents.advisor.extract.values import UNKNOWN, AbortError, Layer, Obj, namespace
from schedmate.agents.advisor.extract.workspace import Workspace
from schedmate.agents.exceptions import WorkspaceError

__all__ = ["UNKNOWN", "ParamCounter", "namespace"]


class ParamCounter(Evaluator):
    """Counts the parameters a constructor call would create, from the sources in a workspace."""

    def __init__(self, ws: Workspace, max_steps: int = 200_000) -> None:
        super().__init__(ws, max_steps)
        self._total = 0
        self._modules: dict[str, tuple[ast.Module, dict[str, Any]]] = {}

    def _snapshot(self) -> Any:
        return self._total

    def _restore(self, saved: Any) -> None:
        self._total = int(saved)

    # --- module loading -------------------------------------------------------------------------
    def _module(self, file: str) -> tuple[ast.Module, dict[str, Any]]:
        if file not in self._modules:
            try:
                tree = ast.parse(self.ws.read_text(file))
            except (WorkspaceError, SyntaxError, ValueError) as exc:
                raise AbortError(f"cannot read {file}") from exc
            env: dict[str, Any] = {"__file__": file}
            self._modules[file] = (tree, env)
            saved = self._total  # layers built at module level (a training script's own model) are not counted
            for node in tree.body:  # module-level imports, classes, functions and constants
                try:
                    self._stmt(node, env, file, module_level=True)
                except AbortError:
                    continue
            self._total = saved
        return self._modules[file]

    # --- public API -----------------------------------------------------------------------------
    def evaluate(self, node: ast.expr, file: str) -> Any:
        """An expression over the names module ``file`` defines (``len(symbols)``); ``UNKNOWN`` if it cannot be
        told. Raises :class:`AbortError` when the module cannot be read or the step budget is spent."""
        return self._expr(node, dict(self._module(file)[1]), file)

    def module_env(self, file: str) -> dict[str, Any]:
        """Names a source file defines or imports at module level (empty if unreadable)."""
        try:
            return dict(self._module(file)[1])
        except AbortError:
            return {}

    def count_call(self, call: ast.Call, env: dict[str, Any], file: str) -> int | None:
        """Parameters created by evaluating ``call`` (a constructor call in ``file``) under ``env``."""
        self._total, self._steps = 0, 0
        try:
            module_env = dict(self._module(file)[1])
            module_env.update(env)
            self._expr(call, module_env, file)
        except (AbortError, RecursionError, ArithmeticError, TypeError, ValueError, IndexError, KeyError):
            return None
        return self._total if self._total > 0 else None

    def _layer(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        value, params = torch_call(name, args, kwargs)
        if value is UNKNOWN and (size := _library_model(name, args)) is not None:
            value, params = Layer(size, 0), size  # `torchvision.models.resnet50()` inside the job's model
        self._total += params
        return value

    # --- user classes and functions -------------------------------------------------------------
    def _invoke(self, callee: Callee, args: list[Any], kwargs: dict[str, Any]) -> Any:
        _, node, file = callee
        if isinstance(node, ast.ClassDef):
            obj = Obj(cls=node.name, origin=callee)
            init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
            if init is None:
                base = self._base_of(node, file)
                if base is not None:
                    return self._invoke(base, args, kwargs)
                return obj
            env = dict(self._module(file)[1])
            env["__class__"] = callee
            self._bind(init, [obj, *args], kwargs, env, file)
            self._body(init.body, env, file)
            return obj
        if isinstance(node, ast.FunctionDef):
            env = dict(self._module(file)[1])
            self._bind(node, args, kwargs, env, file)
            self._body(node.body, env, file)
            return env.get("__return__", UNKNOWN)
        return UNKNOWN

    def _base(self, origin: Callee) -> Callee | None:
        return self._base_of(origin[1], origin[2]) if isinstance(origin[1], ast.ClassDef) else None

    def _base_of(self, node: ast.ClassDef, file: str) -> Callee | None:
        for b in node.bases:
            name = b.attr if isinstance(b, ast.Attribute) else b.id if isinstance(b, ast.Name) else ""
            found = self._module(file)[1].get(name)
            if isinstance(found, tuple) and found[0] == "def" and isinstance(found[1], ast.ClassDef):
                return found
        return None

    def _super_init(self, env: dict[str, Any], args: list[Any], kwargs: dict[str, Any], file: str) -> Any:
        cls = env.get("__class__")
        if not (isinstance(cls, tuple) and isinstance(cls[1], ast.ClassDef)):
            return None
        base = self._base_of(cls[1], cls[2])
        if base is None:
            return None
        init = next((s for s in base[1].body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is None:
            return None
        benv = dict(self._module(base[2])[1])
        benv["__class__"] = base
        self._bind(init, [env.get("self", Obj()), *args], kwargs, benv, base[2])
        self._body(init.body, benv, base[2])
        return None

    def _bind(
        self, fn: ast.FunctionDef, args: list[Any], kwargs: dict[str, Any], env: dict[str, Any], file: str
    ) -> None:
        a = fn.args
        positional = [*a.posonlyargs, *a.args]
        defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        extra: dict[str, Any] = dict(kwargs)
        for i, (p, d) in enumerate(zip(positional, defaults, strict=False)):
            if i < len(args):
                env[p.arg] = args[i]
            elif p.arg in extra:
                env[p.arg] = extra.pop(p.arg)
            else:
                env[p.arg] = self._expr(d, env, file) if d is not None else UNKNOWN
            extra.pop(p.arg, None)
        for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=False):
            env[p.arg] = extra.pop(p.arg) if p.arg in extra else (self._expr(d, env, file) if d else UNKNOWN)
        if a.vararg:
            env[a.vararg.arg] = list(args[len(positional) :])
        if a.kwarg:
            env[a.kwarg.arg] = extra

    def count_class(self, file: str, name: str, kwargs: dict[str, Any]) -> int | None:
        """Parameters of ``name(**kwargs)`` for a class defined in (or imported by) ``file``."""
        self._total, self._steps = 0, 0
        try:
            callee = self._module(file)[1].get(name)
            if not (isinstance(callee, tuple) and callee[0] == "def"):
                return None
            self._invoke(callee, [], dict(kwargs))
        except (AbortError, RecursionError, ArithmeticError, TypeError, ValueError, IndexError, KeyError):
            return None
        return self._total if self._total > 0 else None


def _library_model(name: str, args: list[Any]) -> int | None:
    """Parameters of a well-known architecture a library builds: ``resnet50(...)``, ``create_model("vit_…")``."""
    if name == "create_model" and args and isinstance(args[0], str):
        name = args[0]
    elif not (name.islower() and name.replace("_", "").isalnum()):
        return None
    hit = known_model(name)
    return int(hit[0] * 1e6) if hit is not None else None
