"""Parameter count of a PyTorch model from its source, by abstract interpretation of ``__init__``.

Nothing is imported or executed: the constructor bodies of the model class and of the local
classes it builds are walked with a tiny evaluator that knows Python arithmetic, containers,
loops and branches, and the sizes of ``torch.nn`` layers (Linear, Conv*, ConvTranspose*, norms,
Embedding, LSTM/GRU, ``nn.Parameter(torch.zeros(…))``). Anything it cannot evaluate becomes
``UNKNOWN``; a layer whose size is unknown makes the count fail (``None``) rather than guess.
Work is bounded (steps, recursion, files).
"""

from __future__ import annotations

import ast
import itertools
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from schedmate.agents.workspace import Workspace, WorkspaceError

__all__ = ["UNKNOWN", "ParamCounter", "namespace"]


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        raise _AbortError("truth value of an unknown")


UNKNOWN: Final = _Unknown()


class _AbortError(Exception):
    """Counting cannot be completed faithfully."""


@dataclass
class _Obj:
    """An instance under construction (``self``) or a namespace of config values."""

    attrs: dict[str, Any] = field(default_factory=dict)
    cls: str = ""


@dataclass
class _Layer:
    params: int
    out: int = 0  # output features/channels (weight_norm adds one gain per output)


@dataclass
class _Tensor:
    numel: int


_BIN: Final[dict[type, Callable[[Any, Any], Any]]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}  # fmt: skip
_CMP: Final[dict[type, Callable[[Any, Any], Any]]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
}  # fmt: skip
_MAX_ITEMS: Final = 100_000  # longest sequence the evaluator will build
_ZERO_PARAM: Final = frozenset(
    {"ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "LeakyReLU", "Dropout", "Dropout2d", "Identity", "MaxPool1d",
     "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool2d", "AdaptiveAvgPool1d", "Upsample", "Flatten",
     "Softmax", "LogSoftmax", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "Mish", "ELU", "Hardtanh"}
)  # fmt: skip
_BUILTINS: Final[dict[str, Callable[..., Any]]] = {
    "len": len, "int": int, "float": float, "min": min, "max": max, "range": range, "list": list, "tuple": tuple,
    "sum": sum, "abs": abs, "zip": lambda *a: list(zip(*a, strict=False)), "enumerate": lambda a: list(enumerate(a)),
    "reversed": lambda a: list(reversed(a)), "str": str, "bool": bool, "dict": dict, "round": round,
}  # fmt: skip
_SAFE_METHODS: Final = frozenset({"append", "extend", "get", "keys", "values", "items", "index", "count", "upper",
                                  "lower", "split", "strip", "startswith", "endswith", "copy", "insert"})  # fmt: skip


def _prod(xs: Any) -> int:
    if isinstance(xs, int):
        return xs
    return math.prod(int(x) for x in xs)


class ParamCounter:
    """Counts the parameters a constructor call would create, from the sources in a workspace."""

    def __init__(self, ws: Workspace, max_steps: int = 200_000) -> None:
        self.ws = ws
        self.max_steps = max_steps
        self._steps = 0
        self._total = 0
        self._modules: dict[str, tuple[ast.Module, dict[str, Any]]] = {}

    # --- module loading -------------------------------------------------------------------------
    def _module(self, file: str) -> tuple[ast.Module, dict[str, Any]]:
        if file not in self._modules:
            try:
                tree = ast.parse(self.ws.read_text(file))
            except (WorkspaceError, SyntaxError, ValueError) as exc:
                raise _AbortError(f"cannot read {file}") from exc
            env: dict[str, Any] = {"__file__": file}
            self._modules[file] = (tree, env)
            saved = self._total  # layers built at module level (a training script's own model) are not counted
            for node in tree.body:  # module-level imports, classes, functions and constants
                try:
                    self._stmt(node, env, file, module_level=True)
                except _AbortError:
                    continue
            self._total = saved
        return self._modules[file]

    # --- public API -----------------------------------------------------------------------------
    def module_env(self, file: str) -> dict[str, Any]:
        """Names a source file defines or imports at module level (empty if unreadable)."""
        try:
            return dict(self._module(file)[1])
        except _AbortError:
            return {}

    def count_call(self, call: ast.Call, env: dict[str, Any], file: str) -> int | None:
        """Parameters created by evaluating ``call`` (a constructor call in ``file``) under ``env``."""
        self._total, self._steps = 0, 0
        try:
            module_env = dict(self._module(file)[1])
            module_env.update(env)
            self._expr(call, module_env, file)
        except (_AbortError, RecursionError, ArithmeticError, TypeError, ValueError, IndexError, KeyError):
            return None
        return self._total if self._total > 0 else None

    # --- statements -----------------------------------------------------------------------------
    def _tick(self) -> None:
        self._steps += 1
        if self._steps > self.max_steps:
            raise _AbortError("step budget exhausted")

    def _body(self, body: list[ast.stmt], env: dict[str, Any], file: str) -> None:
        for stmt in body:
            self._stmt(stmt, env, file)

    def _stmt(self, node: ast.stmt, env: dict[str, Any], file: str, module_level: bool = False) -> None:
        self._tick()
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            env[node.name] = ("def", node, file)
        elif isinstance(node, ast.ImportFrom):
            target = self.ws.module_file(node.module or "", node.level, file)
            for alias in node.names:
                name = alias.asname or alias.name
                if target is None:
                    sub = self.ws.module_file(f"{node.module or ''}.{alias.name}", node.level, file)
                    env[name] = ("module", sub) if sub else ("ext", f"{node.module or ''}.{alias.name}")
                    continue
                if alias.name == "*":
                    env.update({k: v for k, v in self._module(target)[1].items() if not k.startswith("_")})
                    continue
                menv = self._module(target)[1]
                if alias.name in menv:
                    env[name] = menv[alias.name]
                else:
                    sub = self.ws.module_file(f"{node.module or ''}.{alias.name}", node.level, file)
                    env[name] = ("module", sub) if sub else UNKNOWN
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = self.ws.module_file(alias.name, 0, file)
                env[alias.asname or alias.name.split(".")[0]] = ("module", local) if local else ("ext", alias.name)
        elif module_level and not isinstance(node, ast.Assign | ast.AnnAssign):
            return
        elif isinstance(node, ast.Assign):
            value = self._expr(node.value, env, file)
            for t in node.targets:
                self._assign(t, value, env, file)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._assign(node.target, self._expr(node.value, env, file), env, file)
        elif isinstance(node, ast.AugAssign):
            cur = self._expr(node.target, env, file) if not isinstance(node.target, ast.Name) else env.get(
                node.target.id, UNKNOWN)  # fmt: skip
            rhs = self._expr(node.value, env, file)
            self._assign(node.target, self._binop(type(node.op), cur, rhs), env, file)
        elif isinstance(node, ast.Expr):
            self._expr(node.value, env, file)
        elif isinstance(node, ast.If):
            test = self._expr(node.test, env, file)
            if test is UNKNOWN:
                raise _AbortError("branch on an unknown")
            self._body(node.body if test else node.orelse, env, file)
        elif isinstance(node, ast.For):
            it = self._expr(node.iter, env, file)
            if it is UNKNOWN or isinstance(it, _Obj):
                raise _AbortError("loop over an unknown")
            for item in itertools.islice(it, 10_000):
                self._assign(node.target, item, env, file)
                self._body(node.body, env, file)
        elif isinstance(node, ast.Return):
            env["__return__"] = self._expr(node.value, env, file) if node.value else None
        # other statements (assert, raise, with, try, pass, ...) create no layers we can size

    def _assign(self, target: ast.expr, value: Any, env: dict[str, Any], file: str) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, ast.Attribute):
            obj = self._expr(target.value, env, file)
            if isinstance(obj, _Obj):
                obj.attrs[target.attr] = value
        elif isinstance(target, ast.Tuple | ast.List):
            if value is UNKNOWN or isinstance(value, _Obj):
                for elt in target.elts:
                    self._assign(elt, UNKNOWN, env, file)
                return
            for elt, v in zip(target.elts, list(value), strict=False):
                self._assign(elt, v, env, file)

    # --- expressions ----------------------------------------------------------------------------
    def _binop(self, op: type, a: Any, b: Any) -> Any:
        if isinstance(a, _Tensor) or isinstance(b, _Tensor):  # scaling an initial value keeps its size
            return a if isinstance(a, _Tensor) else b
        if a is UNKNOWN or b is UNKNOWN or op not in _BIN or isinstance(a, _Obj) or isinstance(b, _Obj):
            return UNKNOWN
        if op is ast.Pow and (not isinstance(b, int | float) or abs(b) > 64 or (isinstance(a, int) and abs(a) > 2**64)):
            return UNKNOWN  # no 10**10**10 from hostile code
        if op is ast.Mult and any(isinstance(x, list | tuple | str) for x in (a, b)):
            n = b if isinstance(b, int) else a
            if not isinstance(n, int) or n > _MAX_ITEMS:
                return UNKNOWN  # no [0] * 10**9
        try:
            out = _BIN[op](a, b)
        except (TypeError, ValueError, ArithmeticError):
            return UNKNOWN
        if isinstance(out, int) and abs(out) > 2**80:
            return UNKNOWN
        return out

    def _expr(self, node: ast.expr | None, env: dict[str, Any], file: str) -> Any:
        self._tick()
        if node is None:
            return None
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            return {"True": True, "False": False, "None": None}.get(node.id, UNKNOWN)
        if isinstance(node, ast.Attribute):
            obj = self._expr(node.value, env, file)
            if isinstance(obj, _Obj):
                return obj.attrs.get(node.attr, UNKNOWN)
            if isinstance(obj, tuple) and obj and obj[0] == "module" and obj[1]:
                return self._module(obj[1])[1].get(node.attr, UNKNOWN)
            if isinstance(obj, tuple) and obj and obj[0] == "ext":
                return ("ext", f"{obj[1]}.{node.attr}")
            if isinstance(obj, dict) and node.attr in obj:
                return obj[node.attr]
            return UNKNOWN
        if isinstance(node, ast.BinOp):
            return self._binop(type(node.op), self._expr(node.left, env, file), self._expr(node.right, env, file))
        if isinstance(node, ast.UnaryOp):
            v = self._expr(node.operand, env, file)
            if v is UNKNOWN:
                return UNKNOWN
            if isinstance(node.op, ast.Not):
                return not v
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BoolOp):
            vals = [self._expr(v, env, file) for v in node.values]
            if any(v is UNKNOWN for v in vals):
                return UNKNOWN
            out = vals[0]
            for v in vals[1:]:
                out = (out and v) if isinstance(node.op, ast.And) else (out or v)
            return out
        if isinstance(node, ast.Compare):
            left = self._expr(node.left, env, file)
            for op, comp in zip(node.ops, node.comparators, strict=False):
                right = self._expr(comp, env, file)
                if left is UNKNOWN or right is UNKNOWN or type(op) not in _CMP:
                    return UNKNOWN
                if not _CMP[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            test = self._expr(node.test, env, file)
            if test is UNKNOWN:
                return UNKNOWN
            return self._expr(node.body if test else node.orelse, env, file)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            items: list[Any] = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    v = self._expr(elt.value, env, file)
                    if v is UNKNOWN:
                        return UNKNOWN
                    items.extend(v)
                else:
                    items.append(self._expr(elt, env, file))
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Dict):
            pairs = zip(node.keys, node.values, strict=False)
            return {self._expr(k, env, file): self._expr(v, env, file) for k, v in pairs if k is not None}
        if isinstance(node, ast.Subscript):
            obj, idx = self._expr(node.value, env, file), self._expr(node.slice, env, file)
            if obj is UNKNOWN or idx is UNKNOWN or (isinstance(obj, _Obj | tuple) and not isinstance(idx, int | slice)):
                return UNKNOWN
            try:
                return obj[idx]
            except (KeyError, IndexError, TypeError):
                return UNKNOWN
        if isinstance(node, ast.Slice):
            parts = [self._expr(p, env, file) if p else None for p in (node.lower, node.upper, node.step)]
            return UNKNOWN if UNKNOWN in parts else slice(*parts)
        if isinstance(node, ast.ListComp | ast.GeneratorExp) and len(node.generators) == 1:
            gen = node.generators[0]
            it = self._expr(gen.iter, env, file)
            if it is UNKNOWN or isinstance(it, _Obj):
                return UNKNOWN
            out = []
            local = dict(env)
            for item in itertools.islice(it, 10_000):
                self._assign(gen.target, item, local, file)
                if all(self._expr(c, local, file) for c in gen.ifs):
                    out.append(self._expr(node.elt, local, file))
            return out
        if isinstance(node, ast.Call):
            return self._call(node, env, file)
        if isinstance(node, ast.JoinedStr):
            return UNKNOWN
        return UNKNOWN

    def _call(self, node: ast.Call, env: dict[str, Any], file: str) -> Any:
        fn = node.func
        args: list[Any] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                v = self._expr(a.value, env, file)
                args.extend(v if isinstance(v, list | tuple) else [UNKNOWN])
            else:
                args.append(self._expr(a, env, file))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            v = self._expr(kw.value, env, file)
            if kw.arg is None:
                if isinstance(v, dict):
                    kwargs.update({str(k): x for k, x in v.items()})
                elif isinstance(v, _Obj):
                    kwargs.update(v.attrs)
            else:
                kwargs[kw.arg] = v
        name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
        # methods on values we hold
        if isinstance(fn, ast.Attribute):
            if name == "__init__" and isinstance(fn.value, ast.Call) and getattr(fn.value.func, "id", "") == "super":
                return self._super_init(env, args, kwargs, file)
            target = self._expr(fn.value, env, file)
            if isinstance(target, list | dict | str) and name in _SAFE_METHODS:
                return getattr(target, name)(*args, **kwargs)
            if isinstance(target, tuple) and target and target[0] == "module":
                callee = self._module(target[1])[1].get(name, UNKNOWN) if target[1] else UNKNOWN
                if isinstance(callee, tuple) and callee[0] == "def":
                    return self._invoke(callee, args, kwargs)
                return UNKNOWN
            if not (isinstance(target, tuple) and target and target[0] == "ext"):
                return UNKNOWN
        else:
            callee = env.get(name)
            if isinstance(callee, tuple) and callee and callee[0] == "def":
                return self._invoke(callee, args, kwargs)
            if name in _BUILTINS and callee is None:
                if any(a is UNKNOWN for a in args):
                    return UNKNOWN
                if any(isinstance(a, range) and len(a) > _MAX_ITEMS for a in args):
                    return UNKNOWN  # no list(range(10**12))
                try:
                    return _BUILTINS[name](*args, **kwargs)
                except TypeError:
                    return UNKNOWN
        return self._torch(name, args, kwargs)

    def _torch(self, name: str, args: list[Any], kw: dict[str, Any]) -> Any:
        def arg(i: int, key: str, default: Any = UNKNOWN) -> Any:
            v = args[i] if i < len(args) else kw.get(key, default)
            if v is UNKNOWN:
                raise _AbortError(f"{name}: unknown {key}")
            return v

        if name in ("weight_norm", "spectral_norm", "remove_weight_norm"):
            layer = args[0] if args else UNKNOWN
            if name == "weight_norm" and isinstance(layer, _Layer):
                self._total += layer.out  # weight_g: one gain per output (dim=0)
            return layer
        if name in ("zeros", "ones", "randn", "rand", "empty", "Tensor", "FloatTensor"):
            shape = args[0] if len(args) == 1 and isinstance(args[0], list | tuple) else args
            return _Tensor(_prod(shape)) if all(isinstance(s, int) for s in shape) else UNKNOWN
        if name == "Parameter":
            t = args[0] if args else UNKNOWN
            if isinstance(t, _Tensor):
                self._total += t.numel
                return _Layer(t.numel)
            raise _AbortError("parameter of unknown size")
        if name in ("ModuleList", "Sequential", "ParameterList"):  # containers: members were counted when built
            return list(args[0]) if name != "Sequential" and args and isinstance(args[0], list | tuple) else list(args)
        if name == "ModuleDict":
            return dict(args[0]) if args and isinstance(args[0], dict) else {}
        n, out = 0, 0
        if name == "Linear":
            out = arg(1, "out_features")
            n = arg(0, "in_features") * arg(1, "out_features") + (
                arg(1, "out_features") if arg(99, "bias", True) else 0
            )
        elif name in ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"):
            dims = int(name[-2])
            k = arg(2, "kernel_size")
            ksize = _prod(k) if isinstance(k, list | tuple) else k**dims
            groups = kw.get("groups", args[6] if len(args) > 6 and "Transpose" not in name else 1)
            cin, cout = arg(0, "in_channels"), arg(1, "out_channels")
            out = cin if "Transpose" in name else cout  # weight_norm's dim 0 of a transposed conv is its input
            n = cin * cout * ksize // groups + (cout if kw.get("bias", True) else 0)
        elif name.startswith(("BatchNorm", "InstanceNorm", "SyncBatchNorm")):
            affine = kw.get("affine", not name.startswith("InstanceNorm"))
            n = 2 * arg(0, "num_features") if affine else 0
        elif name == "LayerNorm":
            shape = arg(0, "normalized_shape")
            n = 2 * _prod(shape) if kw.get("elementwise_affine", True) else 0
        elif name == "GroupNorm":
            n = 2 * arg(1, "num_channels")
        elif name == "Embedding":
            n = arg(0, "num_embeddings") * arg(1, "embedding_dim")
        elif name in ("LSTM", "GRU", "RNN"):
            gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[name]
            inp, hid = arg(0, "input_size"), arg(1, "hidden_size")
            layers, bidir = kw.get("num_layers", 1), 2 if kw.get("bidirectional", False) else 1
            per = gates * (hid * (inp + hid) + 2 * hid)
            n = (per + (layers - 1) * gates * (hid * (hid * bidir + hid) + 2 * hid)) * bidir
        elif name in _ZERO_PARAM:
            return _Layer(0)
        else:
            return UNKNOWN
        self._total += int(n)
        return _Layer(int(n), int(out))

    # --- user classes and functions -------------------------------------------------------------
    def _invoke(self, callee: tuple[str, Any, str], args: list[Any], kwargs: dict[str, Any]) -> Any:
        _, node, file = callee
        if isinstance(node, ast.ClassDef):
            obj = _Obj(cls=node.name)
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

    def _base_of(self, node: ast.ClassDef, file: str) -> tuple[str, Any, str] | None:
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
        self._bind(init, [env.get("self", _Obj()), *args], kwargs, benv, base[2])
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
        except (_AbortError, RecursionError, ArithmeticError, TypeError, ValueError, IndexError, KeyError):
            return None
        return self._total if self._total > 0 else None


def namespace(values: dict[str, Any]) -> _Obj:
    """Dotted config keys as nested attribute namespaces (``hps.data.hop_length``, ``args.classes``)."""
    root = _Obj()
    for key, value in values.items():
        node = root
        parts = key.split(".")
        for p in parts[:-1]:
            nxt = node.attrs.get(p)
            if not isinstance(nxt, _Obj):
                nxt = _Obj()
                node.attrs[p] = nxt
            node = nxt
        if not isinstance(node.attrs.get(parts[-1]), _Obj):
            node.attrs[parts[-1]] = value
    return root
