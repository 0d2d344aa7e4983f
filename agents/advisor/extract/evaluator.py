"""A tiny abstract interpreter of the Python a model's ``__init__`` is written in.

It knows arithmetic, containers, comprehensions, loops (bounded), branches, attribute access on
objects under construction and on config namespaces, module imports inside the workspace and
a few safe builtins and methods. Calls it cannot resolve go to :meth:`Evaluator._layer`; user
classes and functions to :meth:`Evaluator._invoke`. Work is bounded by a step budget; anything
it cannot evaluate is ``UNKNOWN``, and branching or looping on one aborts.
"""

from __future__ import annotations

import ast
import contextlib
import itertools
import json
import math
import operator
import posixpath
import re
import string
from collections.abc import Callable
from typing import Any, Final, TypeGuard

from schedmate.agents.advisor.extract.budget import ExtractionCutError, charge_nodes, check_size, past_share
from schedmate.agents.advisor.extract.config_sources import load_structured, nest_flat
from schedmate.agents.advisor.extract.syntax import callee_name, last_names, walk
from schedmate.agents.advisor.extract.values import UNKNOWN, AbortError, Layer, Obj, Tensor, TextFile, Weight
from schedmate.agents.advisor.extract.workspace import Workspace
from schedmate.agents.exceptions import WorkspaceError

__all__ = ["SPAWNS", "Callee", "Evaluator", "builds_nothing", "is_config_singleton", "is_module_value", "is_number"]

# ("def", class or function node, file), ("module", file or None) or ("ext", dotted name)
Callee = tuple[str, Any, str]

_BIN: Final[dict[type, Callable[[Any, Any], Any]]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}  # fmt: skip
_CMP: Final[dict[type, Callable[[Any, Any], Any]]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
}  # fmt: skip
_MAX_ITEMS: Final = 100_000  # longest sequence the evaluator will build
_MAX_LOOP_PASSES: Final = 256  # a `while` loop that builds layers runs a few times (DCGAN's pyramid: log2 of a size)
_MISSING: Final = object()


_IS_FUNCTION: Final = (("ext", "inspect.isfunction"),)


def _callable(value: Any, functions_only: bool) -> Any:
    """``inspect.isfunction(v)`` / ``callable(v)`` on an interpreted value; unknown for what could be either."""
    if isinstance(value, int | float | str | bytes | list | dict | type(None)) or value is True or value is False:
        return False
    if isinstance(value, tuple) and len(value) == 3 and value[0] == "def":
        return isinstance(value[1], ast.FunctionDef | ast.Lambda) or not functions_only
    return UNKNOWN


def is_module_value(value: Any) -> bool:
    """Whether an attribute holds a submodule: a job's module, a torch layer, or a container of them."""
    if isinstance(value, Layer):
        return True
    if isinstance(value, Obj):
        if isinstance(value.origin, tuple) and value.origin[:1] == ("lib",):
            return True  # a library's model (`torchvision.models.resnet50()`), or a part of one
        return isinstance(value.origin, tuple) and len(value.origin) == 3 and isinstance(value.origin[1], ast.ClassDef)
    if isinstance(value, list | tuple) and value:
        return all(is_module_value(v) for v in value)
    if isinstance(value, dict) and value:
        return all(is_module_value(v) for v in value.values())
    return False


def _is_ext(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and value[0] == "ext"


def _is_partial(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 4 and value[0] == "partial"


def _opens(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open"


def _is_module(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and value[0] == "module"


_STDLIB_CONSTANTS: Final[dict[str, Any]] = {
    **{f"string.{n}": getattr(string, n) for n in (
        "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits", "octdigits", "punctuation",
        "printable", "whitespace",
    )},
    "math.pi": math.pi, "math.e": math.e, "math.tau": math.tau,
}  # fmt: skip
_MARKERS: Final = frozenset({"ext", "module", "def", "spec", "partial"})


def _external(dotted: str) -> Any:
    """A name of a library: ``string.printable`` (a character set a job sizes its vocabulary by) is its value, any
    other stays a reference, ``("ext", dotted)``."""
    return _STDLIB_CONSTANTS.get(dotted, ("ext", dotted))


def _is_marker(value: Any) -> bool:
    """Whether ``value`` is one of the interpreter's own references (a library name, a module, a definition), which
    Python's builtins cannot measure: ``len(string.printable)`` must not be the length of ``("ext", …)``."""
    return isinstance(value, tuple) and 2 <= len(value) <= 4 and value[0] in _MARKERS


def _getattr(obj: Any, name: Any, *default: Any) -> Any:
    """``getattr`` on what the interpreter holds: a namespace's or instance's attributes (``getattr(args, k)``)."""
    fallback = default[0] if default else UNKNOWN
    if isinstance(obj, Obj) and isinstance(name, str):
        return obj.attrs.get(name, fallback)
    if isinstance(obj, dict) and isinstance(name, str):
        return obj.get(name, fallback)
    if isinstance(obj, tuple) and len(obj) == 2 and obj[0] == "ext" and isinstance(name, str) and name.isidentifier():
        return _external(f"{obj[1]}.{name}")  # `getattr(torchvision.models, args.backbone)`
    return UNKNOWN


_SAME_PATH: Final = frozenset({"to_absolute_path", "normpath", "expanduser"})  # a path of the job, as given
_DATA_FILE_BYTES: Final = 4_000_000  # a text file the job opens (its class list, its corpus for a vocabulary)
_UNKNOWN_MAP: Final = UNKNOWN
_PLAIN: Final = (int, float, str, bool, list, dict, tuple, type(None))  # values whose ``type()`` is Python's own
_BUILTINS: Final[dict[str, Callable[..., Any]]] = {
    "len": len, "int": int, "float": float, "min": min, "max": max, "range": range, "list": list, "tuple": tuple,
    "sum": sum, "abs": abs, "zip": lambda *a: list(zip(*a, strict=False)),
    "enumerate": lambda a, start=0: list(enumerate(a, start)),
    "reversed": lambda a: list(reversed(a)), "str": str, "bool": bool, "dict": dict, "round": round,
    "getattr": _getattr, "hasattr": lambda o, n: _getattr(o, n, _MISSING) is not _MISSING,
    "type": lambda v: type(v) if isinstance(v, _PLAIN) else UNKNOWN, "set": set, "sorted": sorted, "all": all,
    "any": any,
    "map": lambda f, xs: [f(x) for x in xs] if f in (int, float, str, len, abs) else _UNKNOWN_MAP,
}  # fmt: skip


_SAFE_METHODS: Final = frozenset({"append", "extend", "get", "keys", "values", "items", "index", "count", "upper",
                                  "lower", "split", "strip", "startswith", "endswith", "copy", "insert", "replace",
                                  "lstrip", "rstrip", "rsplit", "partition", "rpartition", "join", "pop",
                                  "setdefault", "splitlines", "update", "reverse", "sort", "remove"})  # fmt: skip


# Calls made for their side effects on weights, not to build layers: one that cannot be followed is skipped.
_HOUSEKEEPING: Final = re.compile(r"init|weight|reset|freeze|load|apply|print|log|register|seed", re.I)


_FILE_FORMATS: Final = frozenset({"yaml", "json", "toml", "tomllib", "ruamel_yaml", "OmegaConf"})
_LOADS: Final = frozenset({"load", "safe_load", "full_load"})
_SIX_ITER: Final = {"iteritems": "items", "iterkeys": "keys", "itervalues": "values", "viewitems": "items"}
_ITERTOOLS: Final[dict[str, Callable[..., Any]]] = {
    "product": itertools.product, "chain": itertools.chain, "combinations": itertools.combinations,
    "combinations_with_replacement": itertools.combinations_with_replacement,
    "permutations": itertools.permutations, "accumulate": itertools.accumulate,
}  # fmt: skip


def _itertools(name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``list(itertools.product(range(r), range(r)))``: the standard library's combinators over known sequences,
    bounded at ``_MAX_ITEMS`` results (a pair grid of attention offsets, LeViT's ``points``); UNKNOWN otherwise."""
    if name == "repeat" and len(args) == 2 and isinstance(args[1], int) and 0 <= args[1] <= _MAX_ITEMS:
        return [args[0]] * args[1]  # timm's `to_2tuple`: `tuple(repeat(x, n))`
    if name not in _ITERTOOLS or not args or not all(isinstance(a, list | tuple | range | str) for a in args):
        return UNKNOWN
    if any(v is UNKNOWN for v in kwargs.values()) or set(kwargs) - {"repeat", "r", "initial"}:
        return UNKNOWN
    items = list(itertools.islice(_ITERTOOLS[name](*args, **kwargs), _MAX_ITEMS + 1))
    return items if len(items) <= _MAX_ITEMS else UNKNOWN


_MATH: Final[dict[str, Callable[..., Any]]] = {
    "log": math.log, "log2": math.log2, "sqrt": math.sqrt, "ceil": math.ceil, "floor": math.floor, "gcd": math.gcd,
}  # fmt: skip


def _is_property(fn: ast.FunctionDef) -> bool:
    """``@property`` / ``@cached_property`` (``functools.cached_property``) on a method."""
    return bool(last_names(fn.decorator_list) & {"property", "cached_property"})


def _members_of(value: Any) -> list[Any]:
    """The values a ``%`` format takes from ``value``: a tuple's items, a dict's values, or the value itself."""
    if isinstance(value, tuple):
        return list(value)
    return list(value.values()) if isinstance(value, dict) else [value]


def is_number(v: Any) -> bool:
    """A finite-looking int or float, not a bool."""
    return isinstance(v, int | float) and not isinstance(v, bool) and abs(v) < 1e300


_RETURNS_SELF: Final = frozenset({"cuda", "to", "cpu", "half", "float", "double", "bfloat16", "train", "eval",
                                   "requires_grad_", "to_empty"})  # fmt: skip
SPAWNS: Final = frozenset(
    {
        "subprocess.call",
        "subprocess.run",
        "subprocess.Popen",
        "subprocess.check_call",
        "subprocess.check_output",
        "os.system",
    }
)  # fmt: skip  (calls that start another process: recorded while a launcher script is evaluated, never made)
_NEW_TENSOR: Final = frozenset({"new_zeros", "new_ones", "new_empty", "new_full"})  # a tensor shaped like its args
_SAME_SHAPE: Final = frozenset({"contiguous", "float", "double", "half", "detach", "clone", "cpu", "cuda"})
_DATA_TYPES: Final = frozenset({"Tensor", "FloatTensor", "LongTensor", "IntTensor", "BoolTensor", "Variable", "Path"})
_RAISED: Final = ("Error", "Exception", "Warning")  # `raise RuntimeError(...)` builds no layer
_GROWS: Final = frozenset({"append", "extend", "insert", "add_module", "register_parameter", "update", "setattr"})
_WIDTHS: Final = frozenset({"out_channels", "out_features", "num_features", "embedding_dim", "embed_dim"})
_CONTAINERS: Final = ("Sequential", "ModuleList", "ModuleDict")
_PY_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "int": (int,), "float": (float,), "str": (str,), "bool": (bool,), "list": (list,), "tuple": (tuple,),
    "dict": (dict,), "Sequence": (list, tuple, str), "Iterable": (list, tuple, str, dict), "Number": (int, float),
    "Mapping": (dict,),
}  # fmt: skip


def _isinstance(value: Any, types: ast.expr) -> Any:
    """``isinstance`` on an interpreted value, from the names of the types (``(list, tuple)``, ``nn.Module``)."""
    nodes = types.elts if isinstance(types, ast.Tuple) else [types]
    names = [n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) else "" for n in nodes]
    if value is UNKNOWN or "" in names:
        return UNKNOWN
    if isinstance(value, Layer) and value.cls:  # a layer whose torch class is known: `isinstance(m, nn.Linear)`
        if any(n in (value.cls, "Module") for n in names):
            return True
        return False if all(n in _PY_TYPES or n in _CONTAINERS or n[:1].isupper() for n in names) else UNKNOWN
    if isinstance(value, Obj | Layer):  # a module built by the job or a layer: a Module, not a python value
        if any(n.endswith("Module") or (isinstance(value, Obj) and n == value.cls) for n in names):
            return True
        bases = _base_names(value)
        if any(n in bases for n in names):
            return True
        container = isinstance(value, Layer) or bases == {"Module"}  # a torch layer, or a class on nn.Module only
        others = (*_PY_TYPES, "OrderedDict", *(_CONTAINERS if container else ()))
        return False if all(n in others for n in names) else UNKNOWN
    if isinstance(value, list | dict) and any(n in (*_CONTAINERS, "Module") for n in names):
        return True  # the interpreter holds `nn.Sequential(…)` and `nn.ModuleList` as lists, `nn.ModuleDict` as dicts
    if isinstance(value, list | dict) and all(n[:1].isupper() and n not in (*_PY_TYPES, "OrderedDict") for n in names):
        return False  # neither a list nor a container of layers is a layer: `isinstance(layer1, nn.Linear)`
    if not all(n in _PY_TYPES or n == "OrderedDict" for n in names):
        return False if isinstance(value, int | float | str | bool | type(None)) else UNKNOWN
    if _is_marker(value):  # a class, function or module reference (`mlps=Mlp`): no list, tuple or number, though
        return UNKNOWN if value[0] in ("ext", "module") else False  # the interpreter holds it as a tuple
    return any(n in _PY_TYPES and isinstance(value, _PY_TYPES[n]) for n in names)


def _base_names(value: Any) -> set[str]:
    """The names of the bases a job's class is declared on (``class ResBlock(nn.Module)`` → {"Module"})."""
    origin = value.origin if isinstance(value, Obj) else None
    if not (isinstance(origin, tuple) and len(origin) == 3 and isinstance(origin[1], ast.ClassDef)):
        return set()
    return last_names(origin[1].bases)


class _Returned(Exception):  # noqa: N818 - control flow, not an error
    """A ``return`` ran: the function's remaining statements do not."""


class _Continue(Exception):  # noqa: N818
    """A ``continue`` ran in a loop body."""


class _Suppressed(Exception):  # noqa: N818 - control flow: an error a `with suppress(...)` block ends at
    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def _suppressed(node: ast.With) -> set[str]:
    """The exception names ``with contextlib.suppress(NameError, ...):`` suppresses in its block."""
    out: set[str] = set()
    for item in node.items:
        c = item.context_expr
        if isinstance(c, ast.Call) and callee_name(c) == "suppress":
            out |= {
                a.id if isinstance(a, ast.Name) else a.attr for a in c.args if isinstance(a, ast.Name | ast.Attribute)
            }
    return out


class _Break(Exception):  # noqa: N818
    """A ``break`` ran in a loop body."""


def _builds_nothing(node: ast.If | ast.For | ast.While) -> bool:
    """Whether neither branch of ``node`` can build a layer or decide what is returned: no class is called, no
    attribute, container item or result is set (a runtime check such as ``if not dist.is_initialized(): …``)."""
    return not any(isinstance(sub, ast.Return | ast.Yield) for sub in walk(node)) and builds_nothing(node)


def _runs_forward(node: ast.AST) -> bool:
    """Whether an expression runs a module's forward pass (``lambda x: self.forward(x)[0]``, YOLO's stride probe):
    called, it is a dummy pass that builds nothing (the forward method is never interpreted)."""
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "forward" for n in walk(node)
    )


def builds_nothing(node: ast.AST) -> bool:
    """Whether code can build no layer: it calls no class and sets no attribute or container item (of a function,
    none of what it is handed: writing into its own locals, ``state_dict[k] = v``, changes no model)."""
    handed: set[str] | None = None
    indices = _loop_indices(node)
    if isinstance(node, ast.FunctionDef):
        a = node.args
        handed = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]} | {"self", "cls"}
        handed |= {name for g in walk(node) if isinstance(g, ast.Global | ast.Nonlocal) for name in g.names}
    for sub in walk(node):
        if isinstance(sub, ast.Attribute | ast.Subscript) and isinstance(sub.ctx, ast.Store):
            root = sub.value
            while isinstance(root, ast.Attribute | ast.Subscript):
                root = root.value
            if handed is None or not isinstance(root, ast.Name) or root.id in handed:
                return False
        if isinstance(sub, ast.Call):
            func = sub.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if (name[:1].isupper() and name not in _DATA_TYPES and not name.endswith(_RAISED)) or (
                name in _GROWS and not _grows_by_data(sub, indices)
            ):
                return False
    return True


def _loop_indices(node: ast.AST) -> set[str]:
    """Names that count in ``node``'s loops: ``for i in range(n)``, the ``i`` of ``for i, x in enumerate(xs)``."""
    out: set[str] = set()
    for loop in walk(node):
        if not (isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name)):
            continue
        if loop.iter.func.id == "range" and isinstance(loop.target, ast.Name):
            out.add(loop.target.id)
        elif loop.iter.func.id == "enumerate" and isinstance(loop.target, ast.Tuple) and loop.target.elts:
            first = loop.target.elts[0]
            if isinstance(first, ast.Name):
                out.add(first.id)
    return out


def _grows_by_data(call: ast.Call, indices: set[str]) -> bool:
    """Whether ``xs.append(…)`` adds only numbers or text (``betas.append(1 - a / b)``, ``steps.append(i)`` of a
    counter), never a module: arithmetic, constants, f-strings and loop counters, with no call inside."""
    if not call.args or call.keywords or not (isinstance(call.func, ast.Attribute) and call.func.attr == "append"):
        return False
    for arg in call.args:
        if any(isinstance(n, ast.Call | ast.Subscript | ast.Attribute | ast.Starred) for n in walk(arg)):
            return False
        if isinstance(arg, ast.Name) and arg.id not in indices:
            return False  # the item itself could be a module (`for m in blocks: layers.append(m)`)
        if not isinstance(arg, ast.Name | ast.Constant | ast.JoinedStr | ast.BinOp | ast.UnaryOp):
            return False
    return True


def _assigned_names(node: ast.AST) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _builds_a_class(expr: ast.expr) -> bool:
    """Whether an expression calls a capitalised name (a class: ``nn.BatchNorm2d(planes)``)."""
    return any(
        isinstance(n, ast.Call)
        and (n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", ""))[:1].isupper()
        for n in walk(expr)
    )


def _is_lambda(value: Any) -> TypeGuard[tuple[Any, ...]]:
    return isinstance(value, tuple) and len(value) == 4 and value[0] == "lambda" and isinstance(value[1], ast.Lambda)


def _literal_text(text: str) -> Any:
    """``ast.literal_eval`` of a setting's text (short, literals only; anything else is unknown)."""
    if len(text) > 4000:
        return UNKNOWN
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return UNKNOWN


def is_config_singleton(dotted: str, method: str) -> bool:
    """Whether ``dotted.method()`` (no arguments) reads a config library's one process-wide config, as theconf's
    ``Config.get()`` does: the class's path names a config and the method is a getter of the instance."""
    return method in ("get", "get_instance", "instance") and bool(re.search(r"conf|cfg", dotted, re.I))


def _walks_own_modules(it: ast.expr) -> bool:
    return (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Attribute)
        and it.func.attr
        in (
            "modules",
            "named_modules",
            "parameters",
            "named_parameters",
            "children",
            "named_children",
            "buffers",
            "named_buffers",
            "state_dict",
        )
    )  # (`for key in self.state_dict(): init(...)` too: it walks what is built)


class Evaluator:
    """Statements and expressions; subclasses say what calls and modules mean."""

    budget_share: float = 0.6  # of the extraction's budget, after which evaluation stops (see budget.past_share)

    def __init__(self, ws: Workspace, max_steps: int) -> None:
        self.ws = ws
        self.max_steps = max_steps
        self._steps = 0
        self.out_of_share = False  # stopped at its share of the extraction's budget
        self.closures: dict[int, tuple[Callee, dict[str, Any]]] = {}  # id of a nested def → (it, its scope)
        self.cuts: list[str] = []  # why evaluation stopped early (recursion, the step budget, its share of the budget)
        self.parsed_settings: Obj | None = None  # what `parser.parse_args()` returns: the job's merged settings
        self._suppressing: set[str] = set()  # exception names a `with suppress(...)` being run ends its block at
        self.argv: list[str] | None = None  # `sys.argv` of the script evaluated as `__main__` (None: not known)
        self.spawned: list[tuple[str, list[Any], dict[str, Any]]] = []  # processes that script would start
        self._registering: set[str] = set()  # modules imported for their decorators' registrations

    # --- hooks ------------------------------------------------------------------------------------
    def _module(self, file: str) -> tuple[ast.Module, dict[str, Any]]:
        """The parsed module ``file`` and the names it defines at module level."""
        raise NotImplementedError

    def _invoke(self, callee: Callee, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Call a user class or function."""
        raise NotImplementedError

    def _call_lambda(self, fn: tuple[Any, ...], args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Call a lambda: its parameters bound over the scope it was made in, its one expression evaluated."""
        _, node, closure, file = fn
        local = dict(closure)
        self._bind(node, args, kwargs, local, file)
        return self._expr(node.body, local, file)

    def _bind(
        self, fn: ast.FunctionDef | ast.Lambda, args: list[Any], kwargs: dict[str, Any], env: dict[str, Any], file: str
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

    def _super_init(self, env: dict[str, Any], args: list[Any], kwargs: dict[str, Any], file: str) -> Any:
        """``super().__init__(...)`` inside the class being built."""
        raise NotImplementedError

    def _named_base_init(self, base: str, this: Obj, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """``nn.Linear.__init__(self, ...)``: a library base class initialised by name (LoRA's layers)."""
        return None

    def _layer(self, name: str, args: list[Any], kwargs: dict[str, Any], dotted: str = "") -> Any:
        """A call to something outside the workspace (``nn.Linear(...)``, ``torch.zeros(...)``); ``dotted``: its
        full name where the import says it (``basicsr.archs.stylegan2_arch.ConvLayer``)."""
        raise NotImplementedError

    # --- statements -------------------------------------------------------------------------------
    def _tick(self) -> None:
        charge_nodes()
        self._steps += 1
        if self._steps > self.max_steps:
            raise AbortError("step budget exhausted")
        if not self._steps & 255:
            self._check_share()

    def _check_size(self, n: int, what: str) -> None:
        """A value over the budget's size limit stops this evaluation (said in the cuts), not the whole stage."""
        try:
            check_size(n, what)
        except ExtractionCutError as exc:
            self.cuts.append(f"interpreter: {exc}")
            raise AbortError(str(exc)) from exc

    def _check_share(self) -> None:
        """Stop once this evaluation's share of the extraction's budget is spent."""
        if not self.out_of_share and past_share(self.budget_share):
            self.out_of_share = True
            self.cuts.append(f"interpreter: stopped at its share ({self.budget_share:.0%}) of the extraction budget")
        if self.out_of_share:
            raise AbortError(f"its share ({self.budget_share:.0%}) of the extraction budget is spent")

    def _body(self, body: list[ast.stmt], env: dict[str, Any], file: str) -> None:
        for stmt in body:
            self._stmt(stmt, env, file)

    def _member(self, origin: Any, name: str) -> Callee | None:
        """A method or class attribute ``name`` of the class ``origin`` (a Callee) or its local bases."""
        seen = 0
        while isinstance(origin, tuple) and len(origin) == 3 and isinstance(origin[1], ast.ClassDef) and seen < 8:
            for stmt in origin[1].body:
                if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                    return ("def", stmt, origin[2])
                if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                    return ("def", stmt, origin[2])
            origin, seen = self._base(origin), seen + 1
        return None

    def _base(self, origin: Callee) -> Callee | None:
        """The local base class of a class (subclasses know how modules are found)."""
        return None

    def _class_constant(self, origin: Any, name: str) -> Any:
        """A class-level constant (``expansion = 4``) read through an instance or the class."""
        found = self._member(origin, name)
        if found is not None and isinstance(found[1], ast.Assign):
            return self._expr(found[1].value, dict(self._module(found[2])[1]), found[2])
        return UNKNOWN

    def _load_file(self, arg: ast.expr | None, env: dict[str, Any], file: str) -> Any:
        """The settings a YAML / JSON / TOML file of the workspace holds, as nested dicts (read, never run)."""
        if isinstance(arg, ast.Call) and getattr(arg.func, "id", "") == "open" and arg.args:
            arg = arg.args[0]
        path = self._expr(arg, env, file) if arg is not None else UNKNOWN
        if isinstance(path, TextFile):  # `with open(p) as f: cfg = yaml.safe_load(f)`
            text, path = path.text, path.path
        elif isinstance(path, str) and path:
            text = self.ws.read_text_or_none(path) or ""
        else:
            return UNKNOWN
        if not text:
            return UNKNOWN
        if text.lstrip().startswith("["):  # a JSON/YAML list (a label set, a vocabulary): the list itself
            try:
                items = json.loads(text)
            except ValueError:
                return UNKNOWN
            self._check_size(len(items), "list loaded from a file")
            return items if isinstance(items, list) else UNKNOWN
        return nest_flat({k: v.value for k, v in load_structured(text, path).items()})

    def _snapshot(self) -> Any:
        """What a subclass accumulates, to restore after a housekeeping call it could not follow."""
        return None

    def _restore(self, saved: Any) -> None:
        """Undo what a housekeeping call added (see :meth:`_snapshot`)."""

    def _stmt(self, node: ast.stmt, env: dict[str, Any], file: str, module_level: bool = False) -> None:
        self._tick()
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            env[node.name] = defined = ("def", node, file)
            if isinstance(node, ast.FunctionDef) and not module_level and len(self.closures) < 10_000:
                self.closures[id(defined)] = (defined, env)  # a closure: `def _ntuple(n): def parse(x): … n …`
            if module_level and node.decorator_list:
                self._decorate(node, defined, env, file)
        elif isinstance(node, ast.ImportFrom):
            target = self.ws.module_file(node.module or "", node.level, file)
            for alias in node.names:
                name = alias.asname or alias.name
                if target is None:
                    sub = self.ws.module_file(f"{node.module or ''}.{alias.name}", node.level, file)
                    env[name] = ("module", sub) if sub else _external(f"{node.module or ''}.{alias.name}")
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
                    if sub and module_level:
                        self._run_for_registrations(sub)  # `from . import resnet`: its decorators run
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = self.ws.module_file(alias.name, 0, file)
                env[alias.asname or alias.name.split(".")[0]] = ("module", local) if local else ("ext", alias.name)
                if local and module_level and "." in alias.name:
                    self._run_for_registrations(local)  # `import pkg.models.few_shot` in a package's __init__
        elif isinstance(node, ast.Try | ast.TryStar):
            self._try(node, env, file, module_level)
        elif isinstance(node, ast.With) and module_level:
            self.bind_with(node, env, file)  # `with open('input.txt') as f: text = f.read()` at module level
            for stmt in node.body:
                self._stmt(stmt, env, file, module_level)
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
            if isinstance(node.value, ast.Call) and _HOUSEKEEPING.search(ast.unparse(node.value.func)):
                saved = self._snapshot()  # `default_init_weights(...)`, `self.apply(init)`: builds no layers
                try:
                    self._expr(node.value, env, file)
                except AbortError:
                    self._restore(saved)
            else:
                self._expr(node.value, env, file)
        elif isinstance(node, ast.If):
            test = self._expr(node.test, env, file)
            if test is UNKNOWN and _builds_nothing(node):
                for name in _assigned_names(node):  # `if not dist.is_available(): return False`: housekeeping
                    env[name] = UNKNOWN
                return
            if test is UNKNOWN:
                raise AbortError("branch on an unknown")
            self._body(node.body if test else node.orelse, env, file)
        elif isinstance(node, ast.For) and _walks_own_modules(node.iter) and not self._apart(node.iter, env, file):
            return  # `for m in self.modules(): init(m)`: initialises what is built, builds nothing
        elif isinstance(node, ast.For):
            it = self._expr(node.iter, env, file)
            if (it is UNKNOWN or isinstance(it, Obj)) and _builds_nothing(node):
                for name in _assigned_names(node):  # `for i, j in product(range(f), repeat=2): mean += …`
                    env[name] = UNKNOWN
                return
            if it is UNKNOWN or isinstance(it, Obj):
                raise AbortError("loop over an unknown")
            for item in itertools.islice(it, 10_000):
                self._assign(node.target, item, env, file)
                try:
                    self._body(node.body, env, file)
                except _Continue:
                    continue
                except _Break:
                    break
        elif isinstance(node, ast.While):
            self._while(node, env, file)
        elif isinstance(node, ast.Return):
            env["__return__"] = self._expr(node.value, env, file) if node.value else None
            raise _Returned
        elif isinstance(node, ast.Continue):
            raise _Continue
        elif isinstance(node, ast.Break):
            raise _Break
        elif isinstance(node, ast.With):
            self.bind_with(node, env, file)
            suppressed = _suppressed(node)  # `with contextlib.suppress(NameError):` ends the block at that error
            self._suppressing |= suppressed
            try:
                self._body(node.body, env, file)  # `with torch.no_grad(): ...`: its statements run
            except _Suppressed as stop:
                if stop.kind not in suppressed:
                    raise
            finally:
                self._suppressing -= suppressed
        # other statements (assert, raise, try, pass, ...) create no layers we can size

    def _decorate(self, node: ast.ClassDef | ast.FunctionDef, defined: Callee, env: dict[str, Any], file: str) -> None:
        """A module-level definition's decorators of the job's own code run, innermost first, as Python runs them:
        ``@register_model("protonet_conv")`` puts the function into the job's registry dict, which a factory then
        looks up by a setting (``MODEL_REGISTRY[name](**opt)``). A library's decorator (``@torch.jit.script``,
        ``@dataclass``) and one that cannot be followed leave the definition as it is; one that returns another
        function of the job (a wrapper) binds that, as Python does; no decorator builds layers."""
        current: Any = defined
        for decorator in reversed(node.decorator_list):
            saved = self._snapshot()
            try:
                fn = self._expr(decorator, env, file)
                if not (isinstance(fn, tuple) and len(fn) == 3 and fn[0] == "def"):
                    continue
                out = self._invoke(fn, [current], {})
            except (AbortError, ArithmeticError, TypeError, ValueError, IndexError, KeyError):
                self._restore(saved)
                continue
            self._restore(saved)
            if isinstance(out, tuple) and len(out) == 3 and out[0] == "def":
                current = out
        env[node.name] = current

    def _run_for_registrations(self, file: str) -> None:
        """Importing a module runs it: one that decorates module-level definitions (a registry's entries) is run on
        import, so the registry holds them before a factory looks a setting up; other modules stay lazy."""
        if file in self._registering:
            return
        self._registering.add(file)
        text = self.ws.read_text_or_none(file)
        if text is None or not re.search(r"^@[\w.]+\(", text, re.M):
            return
        with contextlib.suppress(AbortError):
            self._module(file)

    def _while(self, node: ast.While, env: dict[str, Any], file: str) -> None:
        """``while csize > 4: main.add_module(...); csize = csize / 2`` (DCGAN's pyramid): the body runs while its
        test holds, at most ``_MAX_LOOP_PASSES`` times; a test that cannot be told, or a loop past that bound, stops the
        count, unless the loop builds nothing (``while not done: step()``), whose names are then unknown."""
        for _ in range(_MAX_LOOP_PASSES):
            test = self._expr(node.test, env, file)
            if test is UNKNOWN or isinstance(test, Obj):
                if _builds_nothing(node):
                    for name in _assigned_names(node):
                        env[name] = UNKNOWN
                    return
                raise AbortError("loop on an unknown")
            if not test:
                return
            try:
                self._body(node.body, env, file)
            except _Continue:
                continue
            except _Break:
                return
        if _builds_nothing(node):  # a long loop over data (a tokenizer's `while len(tokens) > n`): its names are
            for name in _assigned_names(node):  # unknown, as before loops were run at all
                env[name] = UNKNOWN
            return
        raise AbortError("a loop that builds layers past its bound")

    def _set_attr(self, owner: Obj, attr: str, value: Any) -> None:
        """``setattr(owner, attr, value)``."""
        owner.attrs[attr] = value

    def _apart(self, it: ast.expr, env: dict[str, Any], file: str) -> bool:
        """``for name, m in resnet50().named_children()``: a loop over the children of a library's model, which the
        job keeps some of (SimCLR's encoders), not over what the module itself built."""
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute)):
            return False
        if it.func.attr not in ("children", "named_children") or it.args:
            return False
        saved = self._snapshot()  # (looked at, not built: the loop builds it)
        owner = self._expr(it.func.value, env, file)
        self._restore(saved)
        return isinstance(owner, Obj) and isinstance(owner.origin, tuple) and owner.origin[:1] == ("lib",)

    def bind_with(self, node: ast.With, env: dict[str, Any], file: str) -> None:
        """``with open("classes.txt") as f:`` binds the file; what other context managers give is unknown."""
        for item in node.items:
            if item.optional_vars is not None:
                value = self._expr(item.context_expr, env, file) if _opens(item.context_expr) else UNKNOWN
                self._assign(item.optional_vars, value if isinstance(value, TextFile) else UNKNOWN, env, file)

    def _try(self, node: ast.Try | ast.TryStar, env: dict[str, Any], file: str, module_level: bool) -> None:
        """``try:`` runs its body, as the job does when nothing fails (``try: import xformers; XFORMERS = True``); a
        body the interpreter cannot follow leaves what it assigns unknown and counts nothing, as if skipped."""
        saved = self._snapshot()
        try:
            for stmt in [*node.body, *node.orelse, *node.finalbody]:
                self._stmt(stmt, env, file, module_level)
        except (AbortError, ArithmeticError, TypeError, ValueError, IndexError, KeyError):
            self._restore(saved)
            for name in _assigned_names(node):
                env[name] = UNKNOWN

    def _function_body(self, body: list[ast.stmt], env: dict[str, Any], file: str) -> None:
        """A function's statements, up to the first ``return`` that runs."""
        with contextlib.suppress(_Returned):
            self._body(body, env, file)

    def _assign(self, target: ast.expr, value: Any, env: dict[str, Any], file: str) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, ast.Subscript):
            container = self._expr(target.value, env, file)
            if isinstance(container, dict):  # `REGISTRY[name] = fn`, `cfg["lr"] = 0.1`: the dict the name holds
                key = self._expr(target.slice, env, file)
                if isinstance(key, str | int) and not isinstance(key, bool):
                    self._check_size(len(container) + 1, "dict filled by item assignment")
                    container[key] = value
            elif isinstance(container, list):  # `args[j] = eval(a)`: an item of a list replaced
                key = self._expr(target.slice, env, file)
                if isinstance(key, int) and not isinstance(key, bool) and -len(container) <= key < len(container):
                    container[key] = value
        elif isinstance(target, ast.Attribute):
            obj = self._expr(target.value, env, file)
            if isinstance(obj, Obj) and target.attr == "__dict__" and isinstance(value, dict):
                obj.attrs.clear()  # `self.__dict__ = d`: an object whose attributes are a dict's items
                obj.attrs.update({k: v for k, v in value.items() if isinstance(k, str)})
            elif isinstance(obj, Obj):
                obj.attrs[target.attr] = value
            elif isinstance(obj, dict):  # `args.latent_size = 32` on a loaded config: an attribute-access dict
                obj[target.attr] = value  # (OmegaConf's DictConfig, EasyDict): the attribute is its key
        elif isinstance(target, ast.Tuple | ast.List):
            if value is UNKNOWN or isinstance(value, Obj):
                for elt in target.elts:
                    self._assign(elt, UNKNOWN, env, file)
                return
            for elt, v in zip(target.elts, list(value), strict=False):
                self._assign(elt, v, env, file)

    def _binop(self, op: type, a: Any, b: Any) -> Any:
        if isinstance(a, Tensor) or isinstance(b, Tensor):  # scaling an initial value keeps its size
            return a if isinstance(a, Tensor) else b
        if a is UNKNOWN or b is UNKNOWN or op not in _BIN or isinstance(a, Obj) or isinstance(b, Obj):
            return UNKNOWN
        if op is ast.Pow and (not isinstance(b, int | float) or abs(b) > 64 or (isinstance(a, int) and abs(a) > 2**64)):
            return UNKNOWN  # no 10**10**10 from hostile code
        if op is ast.Mult and any(isinstance(x, list | tuple | str) for x in (a, b)):
            n = b if isinstance(b, int) else a
            if not isinstance(n, int) or n > _MAX_ITEMS:
                return UNKNOWN  # no [0] * 10**9
        if op is ast.Add and isinstance(a, list | tuple | str) and isinstance(b, list | tuple | str):
            self._check_size(len(a) + len(b), "sequence built by +")
        if op is ast.Mod and isinstance(a, str) and any(not isinstance(x, _PLAIN) for x in _members_of(b)):
            return UNKNOWN  # `'%s %d' % (task, gpu)` with a value not known: no "UNKNOWN" inside a string
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
            return {
                "True": True,
                "False": False,
                "None": None,
                "int": int,
                "float": float,
                "str": str,
                "len": len,
                "abs": abs,
            }.get(node.id, UNKNOWN)  # (`map(int, spec.split("-"))`, `map(len, vocabularies)`)
        if isinstance(node, ast.Attribute):
            obj = self._expr(node.value, env, file)
            if isinstance(obj, Obj):
                if node.attr in obj.attrs:
                    return obj.attrs[node.attr]
                if node.attr == "__dict__":  # `self.__dict__.update(kwargs)`: a record's fields
                    return obj.attrs
                prop = self._member(obj.origin, node.attr)
                if prop is not None and isinstance(prop[1], ast.FunctionDef) and _is_property(prop[1]):
                    return self._invoke(prop, [obj], {})  # `self.act.output_multiplier`, `config.head_dim`
                return self._class_constant(obj.origin, node.attr)
            if isinstance(obj, tuple) and obj and obj[0] == "def" and isinstance(obj[1], ast.ClassDef):
                return self._class_constant(obj, node.attr)  # `block.expansion`
            if isinstance(obj, tuple) and obj and obj[0] == "module" and obj[1] and node.attr == "__dict__":
                return dict(self._module(obj[1])[1])  # `resnet.__dict__[args.arch]`: the module's names
            if _is_module(obj) and obj[1]:  # a package's submodule is its attribute too (`network.modeling`)
                return self._module_attr(obj, node.attr, UNKNOWN)
            if obj == ("ext", "sys") and self.argv is not None and node.attr in ("argv", "executable"):
                return list(self.argv) if node.attr == "argv" else "python"  # the command line the job was given
            if isinstance(obj, tuple) and obj and obj[0] == "ext":
                return _external(f"{obj[1]}.{node.attr}")
            if isinstance(obj, dict) and node.attr in obj:
                return obj[node.attr]
            if isinstance(obj, Layer) and obj.width and node.attr in _WIDTHS:
                return obj.width  # `nn.Conv2d(vgg[v].out_channels, …)`
            if isinstance(obj, Layer) and obj.inp and node.attr in ("in_features", "in_channels"):
                return obj.inp  # `nn.Linear(model.fc.in_features, 2)`
            if isinstance(obj, Layer) and obj.weight and node.attr == "weight":
                return Weight(obj.weight)
            return UNKNOWN
        if isinstance(node, ast.BinOp):
            return self._binop(type(node.op), self._expr(node.left, env, file), self._expr(node.right, env, file))
        if isinstance(node, ast.UnaryOp):
            v = self._expr(node.operand, env, file)
            if v is UNKNOWN:
                return UNKNOWN
            if isinstance(node.op, ast.Not):
                return not v
            if not isinstance(v, int | float):
                return UNKNOWN
            return (
                -v
                if isinstance(node.op, ast.USub)
                else (~v if isinstance(node.op, ast.Invert) and isinstance(v, int) else v)
            )
        if isinstance(node, ast.BoolOp):  # short-circuits as Python does: `not exists(x) or n < x[i]`
            unknown, out = False, None
            for operand in node.values:
                out = self._expr(operand, env, file)
                if out is UNKNOWN:
                    unknown = True
                elif bool(out) == isinstance(node.op, ast.Or):
                    break  # decided: the rest is not evaluated
            return UNKNOWN if unknown else out
        if isinstance(node, ast.Compare):
            left = self._expr(node.left, env, file)
            for op, comp in zip(node.ops, node.comparators, strict=False):
                right = self._expr(comp, env, file)
                if left is UNKNOWN or right is UNKNOWN or type(op) not in _CMP:
                    return UNKNOWN
                if isinstance(op, ast.In | ast.NotIn) and isinstance(right, Obj) and isinstance(left, str):
                    right = right.attrs  # `'dropout' not in self.args`: an argparse Namespace holds its settings
                member = isinstance(op, ast.In | ast.NotIn) and _is_marker(left) and isinstance(right, list | tuple)
                if not (isinstance(op, ast.Is | ast.IsNot | ast.Eq | ast.NotEq) or member) and (
                    _is_marker(left) or _is_marker(right)
                ):  # (`m in {Conv, Bottleneck}`: a definition among definitions, by identity)
                    return UNKNOWN  # `torch.__version__ >= '1.5.0'`: a library's value, not known here
                if not _CMP[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            test = self._expr(node.test, env, file)
            if test is UNKNOWN and builds_nothing(node.body) and builds_nothing(node.orelse):
                try:  # `tensor.cuda() if use_cuda else tensor`: the same module either way
                    body = self._expr(node.body, env, file)
                    same = body is self._expr(node.orelse, env, file)
                except (AbortError, TypeError, ValueError, ArithmeticError):
                    return UNKNOWN  # (an arm that cannot be told leaves the value unknown, as before)
                return body if same else UNKNOWN
            if test is UNKNOWN:
                return UNKNOWN
            return self._expr(node.body if test else node.orelse, env, file)
        if isinstance(node, ast.Lambda) and (_builds_a_class(node.body) or _runs_forward(node.body)):
            # `self.norm = lambda planes: nn.BatchNorm2d(planes) if g is None else …` (its body sees the scope it was
            return ("lambda", node, env, file)  # made in, as a closure does; arithmetic lambdas stay unknown: a
            # noise schedule's `lambda t: math.cos(t)` builds no layer and would only spend the budget)
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
            merged: dict[Any, Any] = {}
            for k, v in zip(node.keys, node.values, strict=False):
                if k is not None:
                    merged[self._expr(k, env, file)] = self._expr(v, env, file)
                    continue
                inner = self._expr(v, env, file)  # `{**default_conv_kwargs, **kwargs}`: merged in order
                if not isinstance(inner, dict):
                    return UNKNOWN
                merged.update(inner)
            return merged
        if isinstance(node, ast.Subscript):
            obj, idx = self._expr(node.value, env, file), self._expr(node.slice, env, file)
            if isinstance(obj, Obj) and isinstance(idx, str) and not obj.cls:  # `opt["netG"]`: a settings record
                return obj.attrs.get(idx, UNKNOWN)
            if (
                isinstance(obj, tuple) and len(obj) == 2 and obj[0] == "ext" and str(obj[1]).endswith(".__dict__")
                and isinstance(idx, str) and idx.isidentifier()
            ):  # fmt: skip
                return ("ext", f"{str(obj[1]).removesuffix('.__dict__')}.{idx}")  # `models.__dict__[args.arch]`
            if obj is UNKNOWN or idx is UNKNOWN or (isinstance(obj, Obj | tuple) and not isinstance(idx, int | slice)):
                return UNKNOWN
            try:
                return obj[idx]
            except (KeyError, IndexError, TypeError):
                return UNKNOWN
        if isinstance(node, ast.Slice):
            parts = [self._expr(p, env, file) if p else None for p in (node.lower, node.upper, node.step)]
            return UNKNOWN if UNKNOWN in parts else slice(*parts)
        if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.DictComp) and len(node.generators) == 1:
            gen = node.generators[0]
            it = self._expr(gen.iter, env, file)
            if it is UNKNOWN or isinstance(it, Obj):
                return UNKNOWN
            built: list[Any] = []
            local = dict(env)
            for item in itertools.islice(it, 10_000):
                self._assign(gen.target, item, local, file)
                if all(self._expr(c, local, file) for c in gen.ifs):
                    if isinstance(node, ast.DictComp):  # `{k: getattr(args, k) for k in keys}`
                        built.append((self._expr(node.key, local, file), self._expr(node.value, local, file)))
                    else:
                        built.append(self._expr(node.elt, local, file))
            if isinstance(node, ast.DictComp):
                keys = [k for k, _ in built]
                return UNKNOWN if any(k is UNKNOWN or isinstance(k, list | dict | Obj) for k in keys) else dict(built)
            return built
        if isinstance(node, ast.Call):
            return self._call(node, env, file)
        if isinstance(node, ast.JoinedStr):  # f"{embedding}-{args.mlp}": every part known, the string
            pieces: list[str] = []
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    v = self._expr(value.value, env, file) if not value.format_spec and value.conversion == -1 else None
                else:
                    v = value.value if isinstance(value, ast.Constant) else None
                if not isinstance(v, str | int | float) or isinstance(v, bool):
                    return UNKNOWN
                pieces.append(str(v))
            self._check_size(sum(len(p) for p in pieces), "f-string")
            return "".join(pieces)
        return UNKNOWN

    def _call_value(self, fn: Any, args: list[Any], kwargs: dict[str, Any], file: str) -> Any:
        """Call what a name holds: a job's class or function, a library's callable (a layer), a partial of one."""
        if isinstance(fn, tuple) and fn and fn[0] == "def":
            return self._invoke(fn, args, kwargs)
        if isinstance(fn, tuple) and len(fn) == 2 and fn[0] == "ext":
            return self._layer(str(fn[1]).rsplit(".", 1)[-1], args, kwargs, str(fn[1]))
        if _is_partial(fn):
            return self._call_value(fn[1], [*fn[2], *args], {**dict(fn[3]), **kwargs}, file)
        return UNKNOWN

    def _open(self, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """``open(path)`` of a text file of the workspace for reading (the job's class list, its vocabulary): read,
        never run, within the workspace's size limit; anything else (writing, binary, outside, missing) unknown."""
        path, mode = args[0], args[1] if len(args) > 1 else kwargs.get("mode", "r")
        if not isinstance(path, str) or not path or not isinstance(mode, str) or set(mode) - {"r", "t"}:
            return UNKNOWN
        try:  # (a character-level corpus is often a little over the 1 MB read for source files: tiny shakespeare)
            return TextFile(path, self.ws.read_text(path, max_bytes=_DATA_FILE_BYTES))
        except WorkspaceError:
            return UNKNOWN

    def _job_isinstance(self, value: Any, types: Any) -> bool | None:
        """``isinstance(m, (Detect, DDetect))`` where every type is a class of the job's and ``m`` an instance of one:
        whether its class or a base it derives from (followed through the job's code) is one of them. None when
        that cannot be told."""
        wanted = [types] if isinstance(types, tuple) and types[:1] == ("def",) else types
        if not (
            isinstance(wanted, list | tuple) and wanted
            and all(isinstance(t, tuple) and len(t) == 3 and isinstance(t[1], ast.ClassDef) for t in wanted)
            and isinstance(value, Obj) and isinstance(value.origin, tuple) and len(value.origin) == 3
            and isinstance(value.origin[1], ast.ClassDef)
        ):  # fmt: skip
            return None
        targets = {id(t[1]) for t in wanted}
        origin: Any = value.origin
        for _ in range(10):
            if id(origin[1]) in targets:
                return True
            origin = self._base(origin)
            if not (isinstance(origin, tuple) and len(origin) == 3 and isinstance(origin[1], ast.ClassDef)):
                return False  # the chain reached a library's class (`nn.Module`): none of the job's
        return None

    def _eval_name(self, text: str, env: dict[str, Any], file: str) -> Any:
        """``eval(text)`` of a name, a dotted name or a literal (YOLO's model YAML names its layer classes and
        constants: ``eval("nn.Upsample")``, ``eval("nc")``); anything else is code, never run: unknown. A name
        defined nowhere raises NameError in Python: under ``suppress(NameError)`` the text stays as it was."""
        try:
            tree = ast.parse(text.strip(), mode="eval").body
        except (SyntaxError, ValueError):
            return UNKNOWN
        if not all(isinstance(n, ast.Name | ast.Attribute | ast.Constant | ast.Load) for n in ast.walk(tree)):
            return UNKNOWN
        root = tree
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id not in env and root.id not in ("True", "False", "None"):
            if "NameError" in self._suppressing:
                raise _Suppressed("NameError")
            return UNKNOWN
        return self._expr(tree, env, file)

    def _imported(self, dotted: str, file: str) -> Any:
        """What ``importlib.import_module(dotted)`` returns: a module of the workspace, or a library's by name."""
        if not all(part.isidentifier() for part in dotted.split(".")):
            return UNKNOWN
        local = self.ws.module_file(dotted, 0, file)
        return ("module", local) if local else ("ext", dotted)

    def _by_path(self, target: Any, name: str, args: list[Any]) -> Any:
        """A Python file of the workspace loaded by its path, not imported: ``importlib.util.spec_from_file_location(
        n, path)`` then ``module_from_spec(spec)`` is the module (``spec.loader.exec_module(m)`` runs it: its names
        are what the file defines); ``runpy.run_path(path)`` is its names. None for any other call."""
        if target == ("ext", "importlib.util") and name == "spec_from_file_location" and len(args) >= 2:
            path = args[1]
            if isinstance(path, str) and path.endswith(".py"):
                file = posixpath.normpath(path)
                return ("spec", file) if self.ws.exists(file) else UNKNOWN
            return UNKNOWN
        if target == ("ext", "importlib.util") and name == "module_from_spec" and args:
            spec = args[0]
            return ("module", spec[1]) if isinstance(spec, tuple) and spec[:1] == ("spec",) else UNKNOWN
        if target == ("ext", "runpy") and name == "run_path" and args and isinstance(args[0], str):
            file = posixpath.normpath(args[0])
            return dict(self._module(file)[1]) if file.endswith(".py") and self.ws.exists(file) else UNKNOWN
        return None

    def _module_attr(self, module: tuple[str, Any], name: Any, default: Any) -> Any:
        """``getattr(module, name)`` on a module of the workspace: what the module defines under that name."""
        if not isinstance(name, str) or not module[1]:
            return UNKNOWN
        found = self._module(module[1])[1].get(name, _MISSING)
        if found is _MISSING:
            sub = self.ws.module_file(name, 1, f"{module[1].rsplit('/', 1)[0]}/__init__.py") if module[1].endswith(
                "__init__.py") else None  # fmt: skip
            return ("module", sub) if sub else default
        return found

    def _argbind_partial(self, bound: Any, expr: ast.expr) -> Any:
        """``DAC = argbind.bind(dac.model.DAC)``: the callable with the keyword arguments the job's config gives it
        under its name (``DAC.encoder_dim: 64`` in the YAML ``--args.load`` reads); argbind fills them at the call."""
        name = expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else ""
        held = self.parsed_settings.attrs.get(name) if self.parsed_settings is not None and name else None
        given = tuple(held.attrs.items()) if isinstance(held, Obj) else ()
        return ("partial", bound, (), given) if given else bound

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
                elif isinstance(v, Obj):
                    kwargs.update(v.attrs)
            else:
                kwargs[kw.arg] = v
        name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
        # methods on values we hold
        if isinstance(fn, ast.Attribute):
            if name == "__init__" and isinstance(fn.value, ast.Call) and getattr(fn.value.func, "id", "") == "super":
                return self._super_init(env, args, kwargs, file)
            target = self._expr(fn.value, env, file)
            if self.argv is not None and _is_ext(target) and f"{target[1]}.{name}" in SPAWNS:
                self.spawned.append((f"{target[1]}.{name}", args, kwargs))  # `subprocess.call([...], cwd=...)`
                return UNKNOWN
            if name == "__init__" and _is_ext(target) and args and isinstance(args[0], Obj):
                return self._named_base_init(str(target[1]).rsplit(".", 1)[-1], args[0], args[1:], kwargs)
            if name in _NEW_TENSOR and isinstance(target, Layer | Tensor | Weight) and args:
                shape = args[0] if len(args) == 1 or name == "new_full" else args
                sizes = list(shape) if isinstance(shape, list | tuple) else [shape]  # `w.new_zeros((r, n))`
                return Tensor(math.prod(sizes)) if sizes and all(is_number(s) for s in sizes) else UNKNOWN
            if name in _SAME_SHAPE and isinstance(target, Tensor) and not args:
                return target  # `A.contiguous()`, `x.float()`: the same elements
            if name in ("parse_args", "parse_known_args") and self.parsed_settings is not None:
                parsed = Obj(attrs=dict(self.parsed_settings.attrs))  # `opt = parse_opts()`, then `opt.x = 3`
                return parsed if name == "parse_args" else (parsed, [])
            if isinstance(target, list | dict) and name == "children" and not args:  # a container's members
                return list(target.values() if isinstance(target, dict) else target)
            if (
                isinstance(target, tuple) and target[:1] == ("ext",) and name in _LOADS
                and str(target[1]).rsplit(".", 1)[-1] in _FILE_FORMATS
            ):  # fmt: skip
                return self._load_file(node.args[0] if node.args else None, env, file)  # `yaml.load(open(p))`
            if isinstance(target, tuple) and target[:1] == ("ext",) and name in ("from_json_file", "from_yaml_file"):
                loaded = self._load_file(node.args[0] if node.args else None, env, file)  # `BertConfig.from_json_file`
                return Obj(attrs=loaded) if isinstance(loaded, dict) else UNKNOWN
            if target == ("ext", "six") and name in _SIX_ITER and len(args) == 1 and isinstance(args[0], dict):
                return list(getattr(args[0], _SIX_ITER[name])())  # `six.iteritems(kwargs)`: Python 2 compatibility
            if target == ("ext", "functools") and name == "partial" and args:
                return ("partial", args[0], tuple(args[1:]), tuple(kwargs.items()))
            if target == ("ext", "argbind") and name == "bind" and args and node.args:
                return self._argbind_partial(args[0], node.args[0])
            if (
                _is_ext(target) and is_config_singleton(str(target[1]), name) and not args and not kwargs
                and self.parsed_settings is not None
            ):  # fmt: skip
                return self.parsed_settings  # theconf's `C.get()`: the library's one merged config of the job
            if isinstance(target, TextFile) and not args:
                if name == "read":
                    return target.text
                if name == "readlines":
                    return list(target)
                return UNKNOWN if name != "close" else None
            if target == ("ext", "importlib") and name == "import_module" and args and isinstance(args[0], str):
                return self._imported(args[0], file)  # `getattr(importlib.import_module("pkg.mod"), "Cls")`
            if (loaded := self._by_path(target, name, args)) is not None:
                return loaded  # a Python file loaded by its path (a config file: BiSeNet's `cfg_file.cfg`)
            if _is_ext(target) and name in _SAME_PATH and len(args) == 1 and isinstance(args[0], str):
                return args[0]  # `hydra.utils.to_absolute_path(p)`, `os.path.normpath(p)`
            if (
                target in (("ext", "os.path"), ("ext", "osp"))
                and name == "join"
                and args
                and all(isinstance(a, str) for a in args)
            ):
                return posixpath.join(*args)
            if target == ("ext", "itertools"):
                return _itertools(name, args, kwargs)
            if target == ("ext", "math") and name in _MATH and args and all(is_number(a) for a in args):
                try:  # `int(math.log(scale, 2))` upsampling stages, `math.sqrt(dim)`
                    return _MATH[name](*args)
                except (ValueError, OverflowError, TypeError):
                    return UNKNOWN
            if isinstance(target, list | dict | str) and name in _SAFE_METHODS and hasattr(target, name):
                grows = sum(len(a) for a in args if isinstance(a, list | tuple | str | dict)) + len(args)
                if name == "replace" and len(args) > 1 and isinstance(args[1], str):
                    grows += len(target) * len(args[1])  # every character could be replaced
                self._check_size(len(target) + grows, f"{type(target).__name__} built by .{name}()")
                return getattr(target, name)(*args, **kwargs)
            method = self._member(target.origin, name) if isinstance(target, Obj) else None
            if method is not None and isinstance(method[1], ast.FunctionDef):  # `self._make_layer(...)`
                return self._invoke(method, [target, *args], kwargs)
            if isinstance(target, Obj) and name in target.attrs:  # a callable the object holds: `self.norm(64)`
                held = target.attrs[name]  # after `self.norm = lambda …`, `self.conv = nn.Conv2d`
                if _is_lambda(held):
                    return self._call_lambda(held, args, kwargs)
                if isinstance(held, tuple) and len(held) == 3 and held[0] == "def":
                    return self._invoke(held, args, kwargs)
                if isinstance(held, tuple) and len(held) == 2 and held[0] == "ext":
                    return self._layer(str(held[1]).rsplit(".", 1)[-1], args, kwargs)
            if (
                isinstance(target, tuple)
                and len(target) == 3
                and target[0] == "def"
                and isinstance(target[1], ast.ClassDef)
            ):
                static = self._member(target, name)  # `GPT.get_default_config()`: a static or class method
                if static is not None and isinstance(static[1], ast.FunctionDef):
                    kinds = last_names(static[1].decorator_list)
                    if "staticmethod" in kinds:
                        return self._invoke(static, args, kwargs)
                    if "classmethod" in kinds:
                        return self._invoke(static, [target, *args], kwargs)
                    if args and isinstance(args[0], Obj):  # `LoRALayer.__init__(self, r=r)`: a method called on
                        return self._invoke(static, args, kwargs)  # an instance through its class
                if static is not None and isinstance(static[1], ast.Assign):  # `cfg.base(...)`, `base = WideResNet`:
                    held = self._expr(fn, env, file)  # a class attribute that holds a class or function
                    if isinstance(held, tuple) and len(held) == 3 and held[0] == "def":
                        return self._invoke(held, args, kwargs)
                return UNKNOWN
            if isinstance(target, Obj) and name in ("children", "named_children") and not args:
                kids = [(k, v) for k, v in target.attrs.items() if is_module_value(v)]  # in registration order
                return kids if name == "named_children" else [v for _, v in kids]
            if isinstance(target, Obj | Layer) and name in _RETURNS_SELF:
                return target  # `net = net.cuda()`: nn.Module's device and mode methods return the module
            if isinstance(target, tuple) and target and target[0] == "module":
                callee = self._module(target[1])[1].get(name, UNKNOWN) if target[1] else UNKNOWN
                if isinstance(callee, tuple) and callee[0] == "def":
                    return self._invoke(callee, args, kwargs)
                return UNKNOWN
            if not (isinstance(target, tuple) and target and target[0] == "ext"):
                return UNKNOWN
        elif isinstance(fn, ast.Subscript | ast.Call):  # a registry: `MODELS["name"](...)`, `getattr(models, a)(...)`
            callee = self._expr(fn, env, file)
            if isinstance(callee, tuple) and callee and callee[0] == "def":
                return self._invoke(callee, args, kwargs)
            if isinstance(callee, tuple) and len(callee) == 2 and callee[0] == "ext":
                return self._layer(str(callee[1]).rsplit(".", 1)[-1], args, kwargs, str(callee[1]))
            return UNKNOWN
        else:
            callee = env.get(name)
            if isinstance(callee, tuple) and callee and callee[0] == "def":
                return self._invoke(callee, args, kwargs)
            if self.argv is not None and isinstance(callee, tuple) and _is_ext(callee) and callee[1] in SPAWNS:
                self.spawned.append((str(callee[1]), args, kwargs))  # `from subprocess import call`
                return UNKNOWN
            if _is_lambda(callee):  # `norm(depth, momentum)` with `norm=self.norm` handed in
                return self._call_lambda(callee, args, kwargs)
            if callee is UNKNOWN and name in env:
                raise AbortError(f"call of {name}, which holds an unknown (a layer class chosen at run time?)")
            if (callee in _IS_FUNCTION or (name == "callable" and callee is None)) and len(args) == 1:
                return _callable(args[0], functions_only=callee in _IS_FUNCTION)  # `d() if isfunction(d) else d`
            if callee == ("ext", "importlib.import_module") and args and isinstance(args[0], str):
                return self._imported(args[0], file)  # `from importlib import import_module` (EDSR's model loader)
            if isinstance(callee, tuple) and _is_ext(callee) and str(callee[1]).startswith("itertools."):
                return _itertools(str(callee[1]).rsplit(".", 1)[-1], args, kwargs)  # `from itertools import repeat`
            if callee == ("ext", "functools.partial") and args:  # `partial(nn.LayerNorm, eps=1e-6)`
                return ("partial", args[0], tuple(args[1:]), tuple(kwargs.items()))
            if _is_partial(callee):  # `norm_layer(embed_dim)`
                return self._call_value(callee, args, kwargs, file)
            if name == "open" and callee is None and args:
                return self._open(args, kwargs)
            if name == "eval" and callee is None and len(args) == 1 and isinstance(args[0], str):
                return self._eval_name(args[0], env, file)  # YOLO's `m = eval("Conv")`: a name in the YAML
            if callee == ("ext", "ast.literal_eval") and len(args) == 1 and isinstance(args[0], str):
                return _literal_text(args[0])  # `dict(cfg, **literal_eval(args.model_config))`: a literal, not code
            if _is_ext(callee) and name in _SAME_PATH and len(args) == 1 and isinstance(args[0], str):
                return args[0]  # hydra's `to_absolute_path(cfg.data.labels_path)`: the job's relative path
            if name == "getattr" and callee is None and len(args) >= 2 and _is_module(args[0]):
                return self._module_attr(args[0], args[1], args[2] if len(args) > 2 else UNKNOWN)
            if name == "globals" and callee is None and not args and not kwargs:
                return dict(self._module(file)[1])  # `globals()[config.architecture](…)`: the module's names
            if (
                name == "setattr"
                and callee is None
                and len(args) == 3
                and isinstance(args[0], Obj)
                and isinstance(args[1], str)
            ):
                self._set_attr(args[0], args[1], args[2])  # `setattr(self.base_model, "fc", nn.Dropout(p))`
                return None
            if name == "isinstance" and callee is None and len(node.args) == 2 and args:
                decided = self._job_isinstance(args[0], args[1]) if len(args) == 2 else None
                return decided if decided is not None else _isinstance(args[0], node.args[1])
            if name in _BUILTINS and callee is None:
                if any(a is UNKNOWN for a in args):
                    return UNKNOWN
                if name not in ("getattr", "hasattr") and any(map(_is_marker, args)):
                    return UNKNOWN  # `len(string.whatever)`: not the length of the interpreter's reference
                if any(isinstance(a, range) and len(a) > _MAX_ITEMS for a in args):
                    return UNKNOWN  # no list(range(10**12))
                try:
                    return _BUILTINS[name](*args, **kwargs)
                except TypeError:
                    return UNKNOWN
        dotted = ""
        if isinstance(fn, ast.Name) and _is_ext(held := env.get(fn.id)) and isinstance(held, tuple):
            name = str(held[1]).rsplit(".", 1)[-1]  # `conv(3, 64, 7)` with `conv=nn.Conv2d` handed in: that class
            dotted = str(held[1])
        return self._layer(name, args, kwargs, dotted)
