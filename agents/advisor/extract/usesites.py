"""Hyper-parameters by where a well-known API consumes them, each value followed back to its source.

The name of a variable says nothing reliable (``bs``, ``micro_batch_size``, ``opt.b``); the call that
uses it does: ``DataLoader(batch_size=…)`` is the per-process batch, ``torch.optim.AdamW(…, lr=…)`` the
learning rate, ``TrainingArguments(num_train_epochs=…)`` the length, ``from_pretrained(…)`` the model.
This module finds those calls in the entry script and evaluates their arguments abstractly:

* literals and arithmetic; ``int()``/``float()``; ``os.environ.get(name, default)`` → the default;
* names through the assignments of their function and module (the last one before the use), and
  through function parameters: the command line for ``fire.Fire(f)`` / ``typer.run(f)`` entry points,
  the arguments of the function's only call site, else the parameter's default;
* ``args.x`` of an argparse namespace: an assignment to ``args.x`` in the code before the use wins
  (a default overridden later), else the parsed command line; an override it cannot evaluate makes
  the value unknown rather than the stale default;
* configuration objects: a ``yaml.safe_load`` / ``json.load`` / ``OmegaConf.load`` of a path (itself
  followed back, e.g. to ``--hyp``), dict literals, and otherwise the merged settings (``cfg.SOLVER.LR``
  → ``SOLVER.LR``, yacs ``merge_from_file`` / ``merge_from_list`` included) by the access path.

Nothing is executed; work is bounded by the extraction budget and a recursion depth.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import functools
import math
import operator
import posixpath
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final, TypeGuard, TypeVar

from schedmate.agents.advisor.extract.budget import charge_nodes
from schedmate.agents.advisor.extract.config_sources import (
    Value,
    cli_entry_functions,
    constant_arithmetic,
    flag_values,
    load_structured,
    nest_flat,
)
from schedmate.agents.advisor.extract.entry import top_level_statements
from schedmate.agents.advisor.extract.evaluator import is_config_singleton, is_number
from schedmate.agents.advisor.extract.syntax import (
    builds_hf_parser,
    callee_name,
    last_names,
    parse,
    searches_tree,
    walk,
)
from schedmate.agents.advisor.extract.workspace import Workspace

__all__ = [
    "CONFIG_CLASS_NAME",
    "NOT_WEIGHTS_LOADERS",
    "OPTIMIZERS",
    "SPLIT_LOADER",
    "Use",
    "find_uses",
    "live_text",
    "passed_for",
    "path_call",
]

# a setting or variable named for a model that judges the trained one (an evaluator, a teacher, a reward or reference
# model): what it loads is not trained
_NOT_TRAINED: Final = re.compile(r"(?i)(?:^|[._])(?:\w+_)?(?:eval|evaluator|teacher|judge|reward|ref|reference)_\w*")

_MAX_DEPTH: Final = 24
_UNKNOWN: Final = object()
_BIN: Final[dict[type, Callable[[Any, Any], Any]]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}  # fmt: skip
OPTIMIZERS: Final = frozenset(
    {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "LAMB", "Lamb", "Lion",
     "AdamW8bit", "Adam8bit", "PagedAdamW", "PagedAdamW8bit", "FusedAdam", "FusedLAMB", "DeepSpeedCPUAdam",
     "Adafactor", "LARS", "SophiaG", "ASGD", "Rprop", "SparseAdam", "DecoupledSGDW", "DecoupledAdamW"}
)  # fmt: skip
_TF_OPTIMIZERS: Final = frozenset(
    {"AdamOptimizer", "GradientDescentOptimizer", "MomentumOptimizer", "RMSPropOptimizer", "AdagradOptimizer",
     "AdadeltaOptimizer", "AdamWOptimizer", "LazyAdamOptimizer"}
)  # fmt: skip
# TensorFlow 1 batchers → the position of their batch size (`tf.train.shuffle_batch(tensors, batch_size, …)`)
_TF_BATCHERS: Final = {"batch": 1, "shuffle_batch": 1, "batch_join": 1, "shuffle_batch_join": 1, "maybe_batch": 1,
                       "bucket_by_sequence_length": 2}  # fmt: skip
_KERAS_FLOWS: Final = frozenset({"flow_from_directory", "flow_from_dataframe", "flow"})
# the methods of a `tf.data.Dataset` that return another dataset: a chain of them ends in the data the job reads
_TF_DATASET_METHODS: Final = frozenset(
    {"from_tensor_slices", "from_tensors", "from_generator", "TFRecordDataset", "TextLineDataset", "list_files",
     "zip", "map", "shuffle", "repeat", "filter", "prefetch", "cache", "interleave", "flat_map", "take", "skip",
     "apply", "shard"}
)  # fmt: skip
# A class whose name declares it holds settings (`PretrainingConfig`, `HParams`, `TrainOptions`)
CONFIG_CLASS_NAME: Final = re.compile(
    r"(?:Config|Configs|Configuration|HParams|Hparams|Hyperparameters|Settings|Options)$"
)
_TORCH_DEFAULT_LR: Final = {"Adam": 1e-3, "AdamW": 1e-3, "RMSprop": 1e-2, "Adagrad": 1e-2, "Adadelta": 1.0,
                             "Adamax": 2e-3, "NAdam": 2e-3, "RAdam": 1e-3, "ASGD": 1e-2, "Rprop": 1e-2}  # fmt: skip
_HF_ARGS: Final = frozenset(
    {"TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "ORPOConfig", "KTOConfig",
     "RewardConfig", "PPOConfig", "GRPOConfig", "CPOConfig"}
)  # fmt: skip
# Libraries' model classes whose first argument names the Hub checkpoint they load (sentence-transformers)
_HUB_MODEL_CLASSES: Final = frozenset({"SentenceTransformer", "CrossEncoder", "SparseEncoder"})
# field ← (keyword names, positional index) per consumer
_HF_KW: Final[dict[str, tuple[str, ...]]] = {
    "batch": ("per_device_train_batch_size",), "lr": ("learning_rate",), "epochs": ("num_train_epochs",),
    "max_steps": ("max_steps",), "grad_accum": ("gradient_accumulation_steps",), "fp16": ("fp16",),
    "bf16": ("bf16",), "deepspeed": ("deepspeed",),
}  # fmt: skip
_PL_KW: Final[dict[str, tuple[str, ...]]] = {
    "epochs": ("max_epochs",), "max_steps": ("max_steps",), "precision": ("precision",), "devices": ("devices", "gpus"),
    "grad_accum": ("accumulate_grad_batches",),
}  # fmt: skip
_FIT_KW: Final[dict[str, tuple[str, ...]]] = {"batch": ("batch_size",), "epochs": ("epochs",)}
# `X.from_pretrained(...)` of these loads a vocabulary, processor or config, never the weights of the model trained
NOT_WEIGHTS_LOADERS: Final = ("Tokenizer", "Processor", "Config", "FeatureExtractor", "ImageProcessor")
_LOADERS: Final = frozenset({"safe_load", "load", "full_load", "unsafe_load", "loads", "from_file", "load_config"})


@dataclass(frozen=True)
class Use:
    """A value a consumer API receives, and where (file, line, the call that consumes it)."""

    value: Any
    file: str
    line: int
    how: str


@dataclass
class _Scope:
    """A function (or the module): its assignments in order and its parameters' bindings."""

    node: ast.AST
    assigns: dict[str, list[tuple[int, ast.expr]]] = field(default_factory=dict)
    attr_assigns: dict[str, list[tuple[int, ast.expr]]] = field(default_factory=dict)  # "args.lr" → [(line, rhs)]
    params: dict[str, Any] = field(default_factory=dict)  # name → value (or _UNKNOWN)
    branches: dict[tuple[str, int], tuple[tuple[int, int], ...]] = field(default_factory=dict)
    attr_conditions: dict[tuple[str, int], list[tuple[ast.expr, int]]] = field(default_factory=dict)
    parent: _Scope | None = None


_callee = callee_name


def passed_for(call: ast.Call, name: str, positional: list[str]) -> ast.expr | None:
    """The expression ``call`` passes for parameter ``name`` (None: it passes none, or through ``*args``)."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    idx = positional.index(name) if name in positional else len(call.args)
    if idx < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: idx + 1]):
        return call.args[idx]
    return None


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


class _Resolver:
    def __init__(
        self,
        ws: Workspace,
        tree: ast.Module,
        file: str,
        argv: list[str],
        settings: dict[str, Value],
        world_size: int | None = None,
        visible_gpus: int | None = None,
    ) -> None:
        self.ws, self.file, self.settings, self.world_size = ws, file, settings, world_size
        self.cli = {k: v.value for k, v in flag_values(argv).items()}
        self.argv = [file, *argv]  # `sys.argv`: the script, then the arguments it was given
        self.module = _Scope(tree)
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.scopes: dict[ast.AST, _Scope] = {}
        self.calls: dict[str, list[tuple[ast.Call, ast.AST]]] = {}  # function name → call sites (call, scope node)
        self.entry_points: set[str] = set()
        self.config_entries: set[str] = set()  # entry functions whose parameters a config file also sets
        self.namespaces: set[str] = {"args", "opt", "opts", "hparams", "FLAGS", "flags", "hps"}
        self.unknown_overrides: set[str] = set()  # "args.batch_size" reassigned by code we cannot evaluate
        self.split_overrides: dict[str, Any] = {}  # "args.batch_size" = whole / (processes we cannot count): whole
        self.per_device_overrides: dict[str, int] = {}  # "args.effective_batch_size" = each * (devices): each
        self.visible_gpus = visible_gpus
        self.self_attrs: dict[str, Value] = {}  # `self.x` literals of the trainer class a setting picked (its chain)
        self.self_split: set[str] = set()  # of those, the attributes a method divides by the process count
        self.config_classes: dict[str, str] = {}  # local name → config class (its defaults: "Class.field" settings)
        self._tests: dict[int, ast.expr] = {}  # id(If) → its test
        self._modules: dict[str, ast.Module | None] = {}  # workspace module path → parsed (once)
        self._helpers: dict[str, ast.FunctionDef | None] = {}  # imported name → its definition (once)
        self._hands_back: dict[tuple[int, int], bool] = {}  # a helper function that returns its first argument
        self._arms: dict[int, dict[int, list[tuple[ast.expr, int]]]] = {}  # caller → call → the `if` arms around it
        self._helper_files: dict[str, str] = {}  # imported name → the workspace file that defines it
        self._imports: dict[str, tuple[str, int, str]] | None = None  # local name → (module, level, name there)
        self._module_files: dict[str, str | None] = {}  # local name → the workspace module it names (once)
        self._scope_lines: dict[int, _Scope] = {}  # line → innermost function scope (once)
        self._loops: list[tuple[int, int]] | None = None  # line spans of the module's loops (once)
        self._filled_dicts: set[str] | None = None  # names of dicts filled under computed keys (once)
        self._index(tree, self.module)
        self.entry_points |= cli_entry_functions(tree)  # `fire.Fire(train)`, or a runner `__main__` hands it to

    def parsed(self, path: str) -> ast.Module | None:
        """A workspace module, read and parsed once per extraction."""
        if path not in self._modules:
            text = self.ws.read_text_or_none(path)
            try:
                self._modules[path] = parse(text) if text else None
            except (SyntaxError, ValueError):
                self._modules[path] = None
        return self._modules[path]

    # --- indexing --------------------------------------------------------------------------------
    def _index(self, node: ast.AST, scope: _Scope) -> None:
        self.scopes[node] = scope
        for child in ast.iter_child_nodes(node):
            self._visit(child, scope, ())

    def _walk(self, node: ast.AST, scope: _Scope, branch: tuple[tuple[int, int], ...] = ()) -> None:
        """Statements nested in blocks belong to the same scope; ``branch`` says which arms of which ``if``."""
        if isinstance(node, ast.If):
            self._tests[id(node)] = node.test
            self._walk(node.test, scope, branch)
            for arm, body in enumerate((node.body, node.orelse)):
                for stmt in body:
                    self._visit(stmt, scope, (*branch, (id(node), arm)))
            return
        if isinstance(node, ast.Try | ast.TryStar):  # `try: import apex; has_apex = True / except: ... = False`:
            self._tests[id(node)] = ast.copy_location(ast.Name(id="__environment__", ctx=ast.Load()), node)
            for stmt in [*node.body, *node.orelse]:  # which ran depends on where the job runs, as two arms of an
                self._visit(stmt, scope, (*branch, (id(node), 0)))  # `if` whose test cannot be told
            for handler in node.handlers:
                for stmt in handler.body:
                    self._visit(stmt, scope, (*branch, (id(node), 1)))
            for stmt in node.finalbody:
                self._visit(stmt, scope, branch)
            return
        for child in ast.iter_child_nodes(node):
            self._visit(child, scope, branch)

    def _visit(self, child: ast.AST, scope: _Scope, branch: tuple[tuple[int, int], ...]) -> None:
        charge_nodes()
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            self.functions.setdefault(child.name, child)
            decorators = [_dotted(d.func if isinstance(d, ast.Call) else d) for d in child.decorator_list]
            if any(d in _CLI_DECORATORS for d in decorators):
                self.entry_points.add(child.name)  # `@click.command()` over `def main(config_path)`: CLI options
            if any(d.rsplit(".", 1)[-1] in _CONFIG_FILE_DECORATORS for d in decorators):
                self.entry_points.add(child.name)  # typer_config's `@use_yaml_config(param_name="config")`: the
                self.config_entries.add(child.name)  # file `--config` names sets the parameters the flags leave
            self._index(child, _Scope(child, parent=scope))
            return
        if isinstance(child, ast.ClassDef):
            return
        if isinstance(child, ast.Assign | ast.AnnAssign | ast.AugAssign):
            self._assignment(child, scope, branch)
        elif isinstance(child, ast.Call):
            self._call(child, scope)
        self._walk(child, scope, branch)

    def _assignment(
        self, node: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: _Scope, branch: tuple[tuple[int, int], ...] = ()
    ) -> None:
        if node.value is None:
            return
        value: ast.expr = node.value
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if isinstance(node, ast.AugAssign):
            value = ast.BinOp(left=_load(node.target), op=node.op, right=node.value)
            ast.copy_location(value, node)
        pairs: list[tuple[ast.expr, ast.expr]] = []
        for t in targets:
            if (
                isinstance(t, ast.Tuple | ast.List)
                and isinstance(value, ast.Tuple | ast.List)
                and len(t.elts) == len(value.elts)
            ):  # "epochs, batch_size = opt.epochs, opt.batch_size"
                pairs += list(zip(t.elts, value.elts, strict=True))
            else:
                pairs.append((t, value))
        for t, value in pairs:
            if isinstance(t, ast.Name):
                scope.assigns.setdefault(t.id, []).append((node.lineno, value))
                scope.branches[(t.id, node.lineno)] = branch
                if isinstance(value, ast.Call) and _callee(value) in ("parse_args", "parse_known_args", "get_args"):
                    self.namespaces.add(t.id)
            elif isinstance(t, ast.Tuple) and isinstance(value, ast.Call) and _callee(value) == "parse_known_args":
                if t.elts and isinstance(t.elts[0], ast.Name):
                    self.namespaces.add(t.elts[0].id)
            elif isinstance(t, ast.Tuple | ast.List):  # `_, _, _, epoch_str = load_checkpoint(...)`: each name is
                for i, elt in enumerate(t.elts):  # bound to that item of what the call returns
                    if isinstance(elt, ast.Name):
                        item = ast.Subscript(value=value, slice=ast.Constant(i), ctx=ast.Load())
                        ast.copy_location(item, node)
                        scope.assigns.setdefault(elt.id, []).append((node.lineno, item))
                        scope.branches[(elt.id, node.lineno)] = branch
            elif isinstance(t, ast.Attribute) and (key := _dotted(t)):
                scope.attr_assigns.setdefault(key, []).append((node.lineno, value))
                scope.attr_conditions[(key, node.lineno)] = [(self._tests[i], arm) for i, arm in branch]

    def _call(self, node: ast.Call, scope: _Scope) -> None:
        name = _callee(node)
        self.calls.setdefault(name, []).append((node, scope.node))

    # --- evaluation ------------------------------------------------------------------------------
    def value(self, node: ast.expr | None, scope: _Scope, line: int, depth: int = 0) -> Any:
        """The value of ``node`` as seen at ``line`` of ``scope`` (``_UNKNOWN`` when it cannot be told)."""
        charge_nodes()
        if node is None or depth > _MAX_DEPTH:
            return _UNKNOWN
        d = depth + 1
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id == "__file__" and self.file.endswith(".py"):
                return self.file  # the script's own path: `Path(Path(__file__).parent, "config/train.yaml")`
            return self._name(node.id, scope, line, d)
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            base = self.value(node.value, scope, line, d)  # `Path(__file__).parent`: the folder of a path
            return posixpath.dirname(base) if isinstance(base, str) else _UNKNOWN
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self.value(node.operand, scope, line, d)
            return -v if isinstance(v, int | float) and not isinstance(v, bool) else _UNKNOWN
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            v = self.value(node.operand, scope, line, d)  # `use_amp = not args.noamp`: a switch turned around
            return not v if v is None or isinstance(v, bool | int | float | str) else _UNKNOWN
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            a, b = self.value(node.left, scope, line, d), self.value(node.right, scope, line, d)
            if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
                try:
                    return _BIN[type(node.op)](a, b)
                except (ArithmeticError, ValueError):
                    return _UNKNOWN
            if isinstance(node.op, ast.Div) and isinstance(a, str) and isinstance(b, str):
                return _joined([a, b])  # `ROOT / "data/hyps/hyp.yaml"`: only a Path divides by a string
            return _UNKNOWN
        if isinstance(node, ast.Attribute):
            if _dotted(node) == "sys.argv":  # `model_name = sys.argv[1] if len(sys.argv) > 1 else "bert-base"`
                return list(self.argv)
            if (dtype := _DTYPES.get(_dotted(node))) is not None:
                return dtype  # `torch.bfloat16`: a dtype by its name, so `x if amp == "bf16" else y` can be told
            return self._attribute(node, scope, line, d)
        if isinstance(node, ast.Subscript):
            if _dotted(node.value) == "os.environ" and isinstance(node.slice, ast.Constant):
                return self.world_size if node.slice.value == "WORLD_SIZE" and self.world_size else _UNKNOWN
            if isinstance(node.value, ast.Attribute) and node.value.attr == "parents":  # `FILE.parents[0]`
                path, key = self.value(node.value.value, scope, line, d), self.value(node.slice, scope, line, d)
                if not isinstance(path, str) or not isinstance(key, int) or isinstance(key, bool) or key < 0:
                    return _UNKNOWN
                for _ in range(key + 1):
                    path = posixpath.dirname(path)
                return path
            if (parsed := self._parsed_dataclass(node, scope, line)) is not None:
                return parsed
            if (item := self._returned_item(node, d)) is not None:
                return item
            base = self.value(node.value, scope, line, d)
            key = self.value(node.slice, scope, line, d)
            if isinstance(base, dict) and isinstance(key, str | int):
                return base.get(key, _UNKNOWN)
            if isinstance(base, str | list | tuple) and isinstance(key, int) and not isinstance(key, bool):
                return base[key] if -len(base) <= key < len(base) else _UNKNOWN  # `args.model[0] == "d"`
            path = _access_path(node, self._config_singleton)
            return self._setting(path) if path else _UNKNOWN
        if isinstance(node, ast.Call):
            return self._call_value(node, scope, line, d)
        if isinstance(node, ast.Dict):
            out = {}
            for k, v in zip(node.keys, node.values, strict=False):
                kk = self.value(k, scope, line, d) if k is not None else _UNKNOWN
                if isinstance(kk, str):
                    out[kk] = self.value(v, scope, line, d)
            return out
        if isinstance(node, ast.BoolOp):  # `a and b`: short-circuits on what is known
            vals = [self.value(v, scope, line, d) for v in node.values]
            stop = isinstance(node.op, ast.Or)
            for v in vals:
                if v is _UNKNOWN or isinstance(v, _Namespace | dict):
                    continue
                if bool(v) is stop:
                    return v
            return _UNKNOWN if any(v is _UNKNOWN or isinstance(v, _Namespace | dict) for v in vals) else vals[-1]
        if isinstance(node, ast.IfExp):
            test = self._truth(node.test, scope, line, d)
            if test is None:
                return _UNKNOWN
            return self.value(node.body if test else node.orelse, scope, line, d)
        if (
            isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn)
            and _dotted(node.comparators[0]) == "os.environ" and isinstance(node.left, ast.Constant)
            and node.left.value == "WORLD_SIZE" and self.world_size is not None and self.world_size > 1
        ):  # fmt: skip
            return isinstance(node.ops[0], ast.In)  # `"WORLD_SIZE" in os.environ`: a launcher of N processes sets it
        if (
            isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn)
            and isinstance(node.comparators[0], ast.List | ast.Tuple | ast.Set)
            and all(isinstance(e, ast.Constant) for e in node.comparators[0].elts)
        ):  # fmt: skip
            a = self.value(node.left, scope, line, d)  # `params.dataset in ['omniglot', 'cross_char']`
            if not isinstance(a, str | int | float) or isinstance(a, bool):
                return _UNKNOWN
            inside = a in [e.value for e in node.comparators[0].elts if isinstance(e, ast.Constant)]
            return inside if isinstance(node.ops[0], ast.In) else not inside
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn):
            a, b = self.value(node.left, scope, line, d), self.value(node.comparators[0], scope, line, d)
            if isinstance(a, str) and isinstance(b, str | list | tuple | set | frozenset | dict):
                inside = a in b  # `'LatteT2V' in args.model`: a substring of the setting, or one of a list's items
                return inside if isinstance(node.ops[0], ast.In) else not inside
            if (
                isinstance(a, str)
                and b is _UNKNOWN
                and (held := self._section_holds(node.comparators[0], a)) is not None
            ):
                return held if isinstance(node.ops[0], ast.In) else not held
            return _UNKNOWN
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            a, b = self.value(node.left, scope, line, d), self.value(node.comparators[0], scope, line, d)
            if isinstance(node.ops[0], ast.Eq | ast.NotEq) and _is_cpu_test(node, a, b):
                return isinstance(node.ops[0], ast.NotEq)  # `device.type != "cpu"`: the job runs on its GPUs
            if a is _UNKNOWN or b is _UNKNOWN or isinstance(a, _Namespace | dict) or isinstance(b, _Namespace | dict):
                return _UNKNOWN
            op = node.ops[0]
            if isinstance(op, ast.Is | ast.IsNot):  # `args.dataset_name is not None`: identity with None or a bool
                if not (b is None or isinstance(b, bool)):
                    return _UNKNOWN
                return (a is b) is isinstance(op, ast.Is)
            try:
                return (
                    {ast.Eq: a == b, ast.NotEq: a != b}.get(type(op), _UNKNOWN)
                    if type(op) in (ast.Eq, ast.NotEq)
                    else (
                        {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le}[
                            type(op)
                        ](a, b)
                        if type(op) in (ast.Gt, ast.GtE, ast.Lt, ast.LtE)
                        else _UNKNOWN
                    )
                )
            except TypeError:
                return _UNKNOWN
        if isinstance(node, ast.JoinedStr | ast.List | ast.Tuple):
            return _UNKNOWN
        return _UNKNOWN

    def _entered_at(self, line: int) -> int:
        """Where module-level code has run to when ``line`` runs: for a line inside a top-level function or class,
        the last module-level call of it (``args.lr = args.lr * n`` in the ``__main__`` block before
        ``Trainer(args)`` has run when ``Trainer.__init__`` reads ``args.lr``); else the line itself."""
        module = self.module.node
        if not isinstance(module, ast.Module):
            return line
        owner = next(
            (d for d in module.body if isinstance(d, ast.FunctionDef | ast.ClassDef)
             and d.lineno < line <= (d.end_lineno or d.lineno)),
            None,
        )  # fmt: skip
        if owner is None:
            return line
        sites = [c.lineno for c, where in self.calls.get(owner.name, []) if where is module]
        return max(sites, default=line)

    def _arm_may_run(self, scope: _Scope, key: str, line: int, depth: int) -> bool:
        """False when the assignment sits in an ``if`` arm whose condition evaluates to the other arm."""
        for test, arm in scope.attr_conditions.get((key, line), ()):
            truth = self._truth(test, scope, line, depth + 1)
            if truth is not None and truth != (arm == 0):
                return False
        return True

    def _branch_may_run(self, scope: _Scope, branch: tuple[tuple[int, int], ...], depth: int) -> bool:
        """False when an ``if`` around an assignment has a condition that can be told and selects the other arm."""
        for if_id, arm in branch:
            test = self._tests.get(if_id)
            truth = self._truth(test, scope, getattr(test, "lineno", 0), depth + 1) if test is not None else None
            if truth is not None and truth != (arm == 0):
                return False
        return True

    def _truth(self, node: ast.expr, scope: _Scope, line: int, depth: int) -> bool | None:
        """A condition's truth when it can be told (constants, flags, comparisons)."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self._truth(node.operand, scope, line, depth)
            return None if inner is None else not inner
        v = self.value(node, scope, line, depth)
        if v is _UNKNOWN and self._asks_for_gpus(node, scope, line):
            return True  # the job is scheduled on GPUs: `if not args.gpus:` after `args.gpus = device_count()` is false
        if v is None:
            return False  # `if train_config.quantization:` with the setting's default None
        return bool(v) if isinstance(v, bool | int | float | str) and v is not _UNKNOWN else None

    def _asks_for_gpus(self, node: ast.expr, scope: _Scope, line: int) -> bool:
        """Whether ``node`` is ``torch.cuda.is_available()`` / ``device_count()``, or a name or attribute last
        assigned one before ``line``."""
        rhs: ast.expr | None = node
        if isinstance(node, ast.Name | ast.Attribute):
            key, rhs = _dotted(node), None
            s: _Scope | None = scope
            while s is not None and rhs is None and key:
                table = s.assigns if isinstance(node, ast.Name) else s.attr_assigns
                hits = [r for ln, r in table.get(key, []) if s is not scope or ln < line]
                rhs = hits[-1] if hits else None
                s = s.parent
        return isinstance(rhs, ast.Call) and _callee(rhs) in ("is_available", "device_count")

    def _name(self, name: str, scope: _Scope, line: int, depth: int) -> Any:
        s: _Scope | None = scope
        while s is not None:
            if s is self.module and (ov := self.settings.get(name)) is not None and ov.source != self.file:
                return ov.value  # a module global a config file or the command line overrides (configurator exec)
            hits = [(ln, rhs) for ln, rhs in s.assigns.get(name, []) if s is not scope or ln < line]
            if len(hits) > 1:  # `if args.dataset == "COCO": cfg = coco / elif ... "VOC": cfg = voc`: arms that ran
                live = [(ln, rhs) for ln, rhs in hits if self._branch_may_run(s, s.branches.get((name, ln), ()), depth)]
                hits = live or hits
            elif (
                hits and isinstance(s.node, ast.FunctionDef | ast.AsyncFunctionDef)
                and (branch := s.branches.get((name, hits[0][0]))) and _is_parameter(s.node, name)
                and not self._branch_may_run(s, branch, depth)
            ):  # fmt: skip
                hits = []  # `if isinstance(hyp, str): hyp = yaml.safe_load(f)` not taken: the parameter as passed
            if hits:
                ln, rhs = hits[-1]
                v = self.value(rhs, s, ln, depth)
                for other_ln, other_rhs in hits[:-1]:  # another arm of the same `if` assigns it too: which ran?
                    if _other_arm(s.branches.get((name, ln), ()), s.branches.get((name, other_ln), ())) and (
                        self.value(other_rhs, s, other_ln, depth) != v
                    ):
                        return _UNKNOWN
                return v
            if isinstance(s.node, ast.FunctionDef | ast.AsyncFunctionDef):
                bound = self._param(s.node, name, depth)
                if bound is not None:
                    return bound
            s = s.parent
        return self._imported_constant(name, self.file, 0) if scope is not None else _UNKNOWN

    def _imported_constant(self, name: str, file: str, depth: int) -> Any:
        """A module-level literal the entry script imports (``from data import *`` → ``data/config.py``'s
        ``voc = {"max_iter": 120000, ...}``), through at most three levels of ``from M import name`` / ``*``.
        Only literals are read: a dict keeps the entries whose values are literals."""
        tree = self.module.node if file == self.file else self.parsed(file)
        if depth > 3 or not isinstance(tree, ast.Module):
            return _UNKNOWN
        if file != self.file:
            for stmt in tree.body:
                if (
                    isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and stmt.targets[0].id == name
                ):  # fmt: skip
                    if (fields := self._config_instance(tree, stmt.value)) is not None:
                        return fields
                    return _literal(stmt.value)
                if isinstance(stmt, ast.ClassDef) and stmt.name == name and (held := _namespace_class(stmt)):
                    return held  # `class Hyperparams: batch_size = 32`, imported and read as `hp.batch_size`
        for stmt in tree.body:
            if not isinstance(stmt, ast.ImportFrom):
                continue
            for alias in stmt.names:
                if alias.name == "*" or (alias.asname or alias.name) == name:
                    path = self.ws.module_file(stmt.module or "", stmt.level, file)
                    real = name if alias.name == "*" else alias.name
                    if path and path != file and (v := self._imported_constant(real, path, depth + 1)) is not _UNKNOWN:
                        return v
        return _UNKNOWN

    def _config_instance(self, tree: ast.Module, value: ast.expr) -> dict[str, Any] | None:
        """``opt = Config()`` of a module whose ``class Config`` holds the settings as class attributes (``lr = 1e-3``):
        those literals. A class that sets its own attributes from what it is given (``setattr(self, k, v)``, as
        ``opt._parse(kwargs)`` does with the command line's ``--lr=...``) takes the command line's flags over them."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and not value.args):
            return None
        cls = next((c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == value.func.id), None)
        if cls is None or (cls.bases and not all(isinstance(b, ast.Name) and b.id == "object" for b in cls.bases)):
            return None  # (a subclass's inherited settings cannot be told from its own body)
        fields = _class_literals(cls)
        if not fields:
            return None
        if any(isinstance(n, ast.Call) and _callee(n) == "setattr" and n.args and _dotted(n.args[0]) == "self"
               for n in walk(cls)):  # fmt: skip
            fields.update({k: v for k, v in self.cli.items() if k in fields})  # `--lr 0.02`
            fields.update({k: v.value for k, v in self.settings.items() if k in fields and v.source == "command"})
        return fields

    def _param(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str, depth: int) -> Any | None:
        a = fn.args
        positional = [*a.posonlyargs, *a.args]
        names = [p.arg for p in positional] + [p.arg for p in a.kwonlyargs]
        if name not in names:
            return None
        if name in self.namespaces:  # the settings, or one of an HfArgumentParser's dataclasses the callers hand on
            handed = [  # (`args, tc = parser.parse_args_into_dataclasses(); main(args, tc)`)
                self._argument(call, caller, name, positional, depth + 1)
                for call, caller in self.calls.get(fn.name, [])[:4] if isinstance(call.func, ast.Name)
            ]  # fmt: skip
            first = handed[0] if handed else None
            if (
                isinstance(first, _Namespace)
                and first.cls
                and all(isinstance(v, _Namespace) and v.cls == first.cls for v in handed)
            ):
                return first
            return _Namespace(name)
        if fn.name in self.entry_points and name in self.cli:
            return self.cli[name]
        bound = self.settings.get(name) if fn.name in self.entry_points else None
        if bound is not None and bound.source == "command":
            return bound.value  # a bare word of the command bound to the entry's parameter (a Typer `Argument`)
        if (
            fn.name in self.config_entries and (given := self.settings.get(name)) is not None
            and given.source.endswith((".yaml", ".yml", ".json", ".toml"))
        ):  # fmt: skip
            return given.value
        if (key := _argbind_key(fn, name)) is not None and (given := self.settings.get(key)) is not None:
            return given.value  # `@argbind.bind(without_prefix=True) def train(..., batch_size=12)`: the config's
        sites = [c for c in self.calls.get(fn.name, []) if isinstance(c[0].func, ast.Name)]
        if len(sites) > 1:  # `if not opt.evolve: train(opt.hyp, …) else: … train(hyp.copy(), …)`: the arm that runs
            sites = [c for c in sites if self._site_may_run(c[0], c[1], depth)] or sites
        if sites:  # every direct call site passes it, and they agree
            seen = [self._argument(call, caller, name, positional, depth) for call, caller in sites[:8]]
            if all(v is not None and v is not _UNKNOWN for v in seen) and all(v == seen[0] for v in seen):
                return seen[0]
            if any(v is not None for v in seen):
                return _UNKNOWN
        defaults = dict(zip([p.arg for p in positional][len(positional) - len(a.defaults) :], a.defaults, strict=False))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=False) if d is not None})
        if name in defaults:
            return self.value(defaults[name], self.module, defaults[name].lineno, depth)
        return _UNKNOWN

    def _site_may_run(self, call: ast.Call, caller: ast.AST, depth: int) -> bool:
        """False when ``call`` sits in an ``if`` arm (of its caller's body) whose condition selects the other arm."""
        key = id(caller)
        if key not in self._arms:
            arms: dict[int, list[tuple[ast.expr, int]]] = {}
            stack: list[tuple[ast.AST, list[tuple[ast.expr, int]]]] = [(caller, [])]
            while stack:
                node, around = stack.pop()
                if isinstance(node, ast.If):
                    stack += [(n, [*around, (node.test, 0)]) for n in node.body]
                    stack += [(n, [*around, (node.test, 1)]) for n in node.orelse]
                    continue
                if isinstance(node, ast.Call) and around:
                    arms[id(node)] = around
                if node is caller or not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    stack += [(n, around) for n in ast.iter_child_nodes(node)]
            self._arms[key] = arms
        scope = self.scopes.get(caller, self.module)
        for test, arm in self._arms[key].get(id(call), ()):
            truth = self._truth(test, scope, call.lineno, depth + 1)
            if truth is not None and truth != (arm == 0):
                return False
        return True

    def _argument(
        self, call: ast.Call, caller: ast.AST, name: str, positional: list[ast.arg], depth: int
    ) -> Any | None:
        """What ``call`` passes for parameter ``name`` (None: it passes nothing for it)."""
        passed = passed_for(call, name, [p.arg for p in positional])
        if passed is None:
            return None
        return self.value(passed, self.scopes.get(caller, self.module), call.lineno, depth)

    def _attribute(self, node: ast.Attribute, scope: _Scope, line: int, depth: int) -> Any:
        key = _dotted(node)
        root = key.split(".", 1)[0] if key else ""
        if key:  # an assignment to this attribute before the use overrides whatever it held
            s: _Scope | None = scope
            while s is not None:
                before = self._entered_at(line) if s is self.module else line
                hits = [
                    (ln, rhs)
                    for ln, rhs in s.attr_assigns.get(key, [])
                    if (s is not scope or ln < before)
                    and self._arm_may_run(s, key, ln, depth)
                    and not self._later_pass_step(s, key, ln, rhs, line)
                ]
                if hits:
                    ln, rhs = hits[-1]
                    v = self.value(rhs, s, ln, depth)
                    if v is _UNKNOWN:
                        self.unknown_overrides.add(key)
                        whole = self._split_per_process(rhs, s, ln, depth)
                        if whole is not None:
                            self.split_overrides[key] = whole
                        each = self._times_devices(rhs, s, ln, depth)
                        if each is not None:
                            self.per_device_overrides[key] = each
                    return v
                s = s.parent
            handed = self._set_by_callers(key, scope, depth)
            if handed is not None:
                return handed
            if key.startswith("self.") and (held := self.self_attrs.get(key[5:])) is not None:
                if key[5:] in self.self_split and isinstance(held.value, int):  # `self.batch_size = int(self.batch_size
                    self.unknown_overrides.add(key)  # / num_processes)` in a method: the whole, split over the ranks
                    self.split_overrides[key] = held.value
                    return _UNKNOWN
                return held.value  # `self.initial_lr` set in the picked trainer class's `__init__` (or a base's)
        base = self.value(node.value, scope, line, depth)
        if isinstance(base, _Namespace) and base.builder is not None and isinstance(node.value, ast.Name):
            built = self._set_after_parsing(base, node.value.id, node.attr, scope, line, depth)
            if built is not None:
                return built
        if isinstance(base, _Namespace) or (base is _UNKNOWN and root in self.namespaces):
            nested = key.split(".", 1)[1] if key and not isinstance(node.value, ast.Name) else ""
            if nested and (hit := self.settings.get(nested)) is not None:
                return hit.value  # `args.train.optimizer.name`: that nested setting, not a top-level `name`
            found = self.settings.get(node.attr)
            if (
                node.attr == "world_size" and self.world_size is not None and self.world_size > 1
                and (found is None or found.source != "command")
            ):  # fmt: skip
                return self.world_size  # `--world-size` defaults to 1; under a launcher of N processes it is N
            if (
                node.attr == "local_rank" and self.world_size is not None and self.world_size > 1
                and (found is None or (found.source != "command" and found.value in (-1, None)))
            ):  # fmt: skip
                return 0  # `--local_rank` defaults to -1; a launcher of N processes gives each its rank (0 here)
            if found is not None:
                return found.value
            if isinstance(base, _Namespace) and base.cls:  # a config class: `--cls.field`, then its default
                for key in (f"{base.cls}.{node.attr}",):
                    if (hit := self.settings.get(key)) is not None:
                        return hit.value
            if isinstance(base, _Namespace) and base.hf and node.attr not in self.cli:
                return _HF_TRAINING_DEFAULTS.get(node.attr, _UNKNOWN)  # `if training_args.fp16:` with no `--fp16`
            return self.cli.get(node.attr, _UNKNOWN)
        if isinstance(base, dict):
            return base.get(node.attr, _UNKNOWN)
        if base is _UNKNOWN and isinstance(node.value, ast.Name) and node.attr == "batch_size":
            built = self._built_with(node.value.id, scope, line)  # `sampler.batch_size` of `Sampler(batch_size=2)`
            kw = _sampler_batch(built) if built is not None else None
            if kw is not None:
                return self.value(kw, scope, line, depth + 1)
        if isinstance(node.value, ast.Name) and (module := self._module_of(node.value.id)) is not None:
            return self._imported_constant(node.attr, module, 1)  # `from conf import settings`: settings.EPOCH
        if isinstance(node.value, ast.Name) and (member := self._str_enum_member(node.value.id, node.attr)) is not None:
            return member
        path = _access_path(node)
        return self._setting(path) if path else _UNKNOWN

    def _set_after_parsing(
        self, ns: _Namespace, caller_name: str, attr: str, scope: _Scope, line: int, depth: int
    ) -> Any | None:
        """The value the builder of ``ns`` gives ``<args>.attr`` after parsing, on its straight-line path (the last
        such assignment, evaluated with the caller's name for the arguments); None where it sets none there."""
        fn = ns.builder
        if fn is None:
            return None
        rhs = None
        local: dict[str, ast.expr] = {}  # the builder's own names set before, on the same path (`bs_per_gpu = …`)
        for stmt in fn.body:  # (statements under an `if` are not known to run)
            if not isinstance(stmt, ast.Assign):
                continue
            if any(
                isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == ns.held_as
                and t.attr == attr for t in stmt.targets
            ):  # fmt: skip
                rhs = _Inline(local).visit(copy.deepcopy(stmt.value))
            for t in stmt.targets:
                if isinstance(t, ast.Name) and t.id != ns.held_as:
                    local[t.id] = _Inline(local).visit(copy.deepcopy(stmt.value))
        if rhs is None:
            return None
        renamed = _Inline({ns.held_as: ast.Name(id=caller_name, ctx=ast.Load())}).visit(rhs)  # the caller's name
        v = self.value(renamed, scope, line, depth + 1)
        return None if v is _UNKNOWN else v

    def _later_pass_step(self, s: _Scope, key: str, ln: int, rhs: ast.expr, line: int) -> bool:
        """``if epoch != 0: args.lr *= 0.1`` in the loop that then builds ``SGD(lr=args.lr)``: a step of a schedule
        under a condition, inside a loop around the use; the first pass (the rate the job starts at) reads the value
        from before the loop."""
        if not (isinstance(rhs, ast.BinOp) and _dotted(rhs.left) == key and s.attr_conditions.get((key, ln))):
            return False
        if self._loops is None:
            loops = [n for n in walk(self.module.node) if isinstance(n, ast.For | ast.While)]
            self._loops = [(n.lineno, n.end_lineno or n.lineno) for n in loops]
        return any(a < ln <= b and a < line <= b for a, b in self._loops)

    def _set_by_callers(self, key: str, scope: _Scope, depth: int) -> Any | None:
        """``args.distributed = …`` in ``main()`` before ``main_worker(gpu, n, args)``: an attribute of a parameter
        that every direct caller sets on the object it passes, before the call (None: no caller sets it)."""
        fn, (root, _, rest) = scope.node, key.partition(".")
        if not rest or not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            return None
        positional = [*fn.args.posonlyargs, *fn.args.args]
        if root not in [p.arg for p in [*positional, *fn.args.kwonlyargs]]:
            return None
        sites = [c for c in self.calls.get(fn.name, []) if isinstance(c[0].func, ast.Name)]
        seen: list[Any] = []
        for call, caller in sites[:8]:
            passed = passed_for(call, root, [p.arg for p in positional])
            if not isinstance(passed, ast.Name):
                return None
            cs, held = self.scopes.get(caller, self.module), f"{passed.id}.{rest}"
            s: _Scope | None = cs
            hit: tuple[_Scope, int, ast.expr] | None = None
            while s is not None and hit is None:
                hits = [
                    (ln, rhs) for ln, rhs in s.attr_assigns.get(held, [])
                    if (s is not cs or ln < call.lineno) and self._arm_may_run(s, held, ln, depth)
                ]  # fmt: skip
                hit = (s, *hits[-1]) if hits else None
                s = s.parent
            seen.append(self.value(hit[2], hit[0], hit[1], depth + 1) if hit is not None else None)
        if not seen or all(v is None for v in seen):
            return None
        return seen[0] if all(v is not _UNKNOWN and v == seen[0] for v in seen) else _UNKNOWN

    def _returned_item(self, node: ast.Subscript, depth: int) -> Any | None:
        """``setup()[0]`` (also ``args, training_args = setup()``) of one of the module's functions that ends with
        ``return args, training_args``: that item, as the function sees it there; None for any other subscript."""
        call, index = node.value, node.slice
        if not (
            isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and isinstance(index, ast.Constant)
            and isinstance(index.value, int) and not isinstance(index.value, bool)
        ):  # fmt: skip
            return None
        fn = self.functions.get(call.func.id)
        last = fn.body[-1] if fn is not None and fn.body else None
        if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Tuple) and fn in self.scopes):
            return None
        items = last.value.elts
        if not -len(items) <= index.value < len(items):
            return None
        return self.value(items[index.value], self.scopes[fn], last.lineno, depth + 1)

    def _parsed_dataclass(self, node: ast.Subscript, scope: _Scope, line: int) -> _Namespace | None:
        """``HfArgumentParser((ModelArguments, …, TrainingArguments)).parse_args_into_dataclasses()[i]``: the i-th
        dataclass's settings (``training_args.use_lora`` is ``TrainingArguments.use_lora``, its default or the
        command's value)."""
        call = node.value
        if not (
            isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name) and call.func.attr in _DATACLASS_PARSES
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, int) and not isinstance(node.slice.value, bool)
        ):  # fmt: skip
            return None
        built = self._built_with(call.func.value.id, scope, line)
        if built is None or not builds_hf_parser(built):
            return None
        classes = built.args[0].elts if isinstance(built.args[0], ast.Tuple | ast.List) else [built.args[0]]
        i = node.slice.value
        cls = classes[i] if -len(classes) <= i < len(classes) else None
        return _Namespace(cls.id, cls.id, hf=True) if isinstance(cls, ast.Name) else None

    def _built_with(self, name: str, scope: _Scope, line: int) -> ast.Call | None:
        """The constructor call ``name`` was last assigned before ``line`` in ``scope`` or a scope around it."""
        s: _Scope | None = scope
        while s is not None:
            hits = [(ln, rhs) for ln, rhs in s.assigns.get(name, []) if ln <= line]
            if hits:
                rhs = hits[-1][1]
                return rhs if isinstance(rhs, ast.Call) and _callee(rhs)[:1].isupper() else None
            s = s.parent
        return None

    def imports(self) -> dict[str, tuple[str, int, str]]:
        """Every name the entry script imports, mapped once (the first wins): ``from M import a as b`` → ``b: (M,
        level, a)``; ``import m as n`` → ``n: ("", -1, m)`` (``import a.b as n``: ``n`` is ``a.b``)."""
        if self._imports is None:
            self._imports = {}
            for node in walk(self.module.node):
                if isinstance(node, ast.ImportFrom):
                    for a in node.names:
                        self._imports.setdefault(a.asname or a.name, (node.module or "", node.level, a.name))
                elif isinstance(node, ast.Import):
                    for a in node.names:
                        if a.asname or "." not in a.name:  # `import cfgs.config as cfg`: cfg is the submodule
                            self._imports.setdefault(a.asname or a.name, ("", -1, a.name))
        return self._imports

    def _str_enum_member(self, cls: str, member: str) -> str | None:
        """``DistributedStrategy.ddp`` of a string enum (``class DistributedStrategy(StrEnum): ddp = "ddp"``) defined in
        the entry script or imported from the job's modules: its value, which a string setting compares equal to."""
        tree: ast.Module | None = self.module.node if isinstance(self.module.node, ast.Module) else None
        name = cls
        if (imported := self.imports().get(cls)) is not None and imported[2] != "*":
            module, level, name = imported
            path = self.ws.module_file(module, max(level, 0), self.file) if module else None
            tree = self.parsed(path) if path else None
        node = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None) if tree else None
        if node is None:
            return None
        bases = last_names(node.bases)
        if not ("StrEnum" in bases or {"str", "Enum"} <= bases):
            return None
        for stmt in node.body:
            if (
                isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == member
            ):  # fmt: skip
                if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                    return stmt.value.value
                if isinstance(stmt.value, ast.Call) and _callee(stmt.value) == "auto" and "StrEnum" in bases:
                    return member.lower()  # StrEnum's auto(): the member's name in lower case
        return None

    def _config_singleton(self, call: ast.Call) -> bool:
        """``C.get()`` with ``from theconf import Config as C``: a config library's one merged config (its keys are
        the job's settings)."""
        if call.args or call.keywords or not isinstance(call.func, ast.Attribute):
            return False
        if not isinstance(call.func.value, ast.Name) or self._module_of(call.func.value.id) is not None:
            return False
        imported = self.imports().get(call.func.value.id)
        return imported is not None and is_config_singleton(f"{imported[0]}.{imported[2]}", call.func.attr)

    def _module_of(self, name: str) -> str | None:
        """The workspace file of a module the entry script imports under ``name`` (``from conf import settings``,
        ``import settings``, ``import config as C``), or None (looked up once)."""
        if name not in self._module_files:
            path = None
            if (imported := self.imports().get(name)) is not None and imported[2] != "*":
                module, level, real = imported
                dotted = f"{module}.{real}" if module else real
                path = self.ws.module_file(dotted, max(level, 0), self.file)
            if path is None and imported is not None:
                path = self._configured_from_file(name)
            self._module_files[name] = path if path != self.file else None
        return self._module_files[name]

    def _configured_from_file(self, name: str) -> str | None:
        """The Python file of the workspace an imported settings object loads its names from at run time
        (WaveRNN's ``from utils import hparams as hp`` then ``hp.configure(args.hp_file)``, ``--hp_file`` defaulting
        to ``hparams.py``): a statement that only calls a method of ``name`` with one argument that is a ``.py``
        path the workspace holds. Its module-level constants are then ``name``'s attributes."""
        tree = self.module.node
        if not isinstance(tree, ast.Module):
            return None
        self._module_files[name] = None  # (no recursion through the argument's value)
        for node in walk(tree):
            if not (
                isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and len(node.value.args) == 1
                and isinstance(node.value.func, ast.Attribute) and isinstance(node.value.func.value, ast.Name)
                and node.value.func.value.id == name
            ):  # fmt: skip
                continue
            arg = node.value.args[0]
            where = self.value(arg, _scope_at(self, tree, node.lineno), node.lineno, 1)
            if isinstance(where, str) and where.endswith(".py") and self.ws.exists(where):
                return where.removeprefix("./")
        return None

    def _split_per_process(self, rhs: ast.expr, scope: _Scope, line: int, depth: int) -> Any:
        """``int(args.batch_size / ngpus_per_node)``: a whole divided by a process count that cannot be told (the
        whole, or None). The divisor must be a count of processes or devices, by what computes it or is named."""
        while isinstance(rhs, ast.Call) and _callee(rhs) in ("int", "ceil", "floor", "round") and len(rhs.args) == 1:
            rhs = rhs.args[0]
        if not (isinstance(rhs, ast.BinOp) and isinstance(rhs.op, ast.Div | ast.FloorDiv)):
            return None
        divisor = ast.unparse(rhs.right)
        if not _DEVICE_COUNT.search(divisor):
            return None
        whole = self.value(rhs.left, scope, line, depth)
        return whole if isinstance(whole, int) and not isinstance(whole, bool) and whole > 0 else None

    def _times_devices(self, rhs: ast.expr, scope: _Scope, line: int, depth: int) -> int | None:
        """``args.batch_size * args.number_gpus``: a per-device batch times a device count that cannot be told (the
        per-device batch, or None). The factor must be a count of devices or processes, by its name or call."""
        if not (isinstance(rhs, ast.BinOp) and isinstance(rhs.op, ast.Mult)):
            return None
        for each, count in ((rhs.left, rhs.right), (rhs.right, rhs.left)):
            if _DEVICE_COUNT.search(ast.unparse(count)):
                v = self.value(each, scope, line, depth)
                if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                    return v
        return None

    def _section_holds(self, section: ast.expr, key: str) -> bool | None:
        """``'accumulate_grad_batches' in lightning_config.trainer``: whether a config section the settings know
        (keys ``….trainer.<leaf>`` exist) holds ``key``, or the command gives it (a runtime merge may add it); for a
        dict the code fills under computed keys, whether the command gives ``key``. None when it cannot be told."""
        given = self.settings.get(key)
        by_command = given is not None and given.source == "command"
        if isinstance(section, ast.Name):  # `"gpus" in trainer_config` after `trainer_config[k] = getattr(opt, k)`
            if self._filled_dicts is None:  # (for the options the command gives: a dict filled under computed keys)
                self._filled_dicts = {
                    t.value.id for n in walk(self.module.node) if isinstance(n, ast.Assign) for t in n.targets
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
                    and not isinstance(t.slice, ast.Constant)
                }  # fmt: skip
            return True if by_command and section.id in self._filled_dicts else None
        path = _access_path(section)
        leaf = path.rsplit(".", 1)[-1] if path and "." in path else ""
        if not leaf or not re.fullmatch(r"\w+", key):
            return None
        if by_command:
            return True
        inside = re.compile(rf"(?:^|\.){re.escape(leaf)}\.(\w+)$")
        leaves = {m[1] for k in self.settings if (m := inside.search(k))}
        return (key in leaves) if leaves else None

    def _setting(self, path: str) -> Any:
        """A merged setting by an access path: ``cfg.SOLVER.BASE_LR`` → ``SOLVER.BASE_LR`` (or a suffix); a setting
        keyed by the whole path first (``train_config.use_fp16`` of a config dataclass the command line updates)."""
        parts = path.split(".")
        if len(parts) > 1 and (whole := self.settings.get(path)) is not None:
            return whole.value
        for i in range(1, len(parts)):
            hit = self.settings.get(".".join(parts[i:]))
            if hit is not None:
                return hit.value
        return _UNKNOWN

    def _call_value(self, node: ast.Call, scope: _Scope, line: int, depth: int) -> Any:
        name, dotted = _callee(node), _dotted(node.func)
        args = node.args
        if dotted in _PATH_CALLS and args and not node.keywords:
            parts = [self.value(a, scope, line, depth) for a in args]
            if not all(isinstance(p, str) for p in parts):
                return _UNKNOWN
            return path_call(dotted, [str(p) for p in parts])  # a path the job builds from its own file's folder
        if dotted in _CWD_CALLS and not args:
            return "."  # `Path.cwd()`: the working folder, which paths here are relative to
        if name in _SAME_PATH_METHODS and isinstance(node.func, ast.Attribute) and not args and not node.keywords:
            base = self.value(node.func.value, scope, line, depth)  # `Path(__file__).resolve()`: the same file
            return posixpath.normpath(base) if isinstance(base, str) and base else _UNKNOWN
        if (name == "copy" and isinstance(node.func, ast.Attribute) and not args) or (
            dotted in ("deepcopy", "copy.deepcopy", "copy.copy") and len(args) == 1
        ):  # `opt.hyp = hyp.copy()`: the same settings
            held = args[0] if args else node.func.value if isinstance(node.func, ast.Attribute) else None
            v = self.value(held, scope, line, depth)
            return v if isinstance(v, dict | list) else _UNKNOWN
        if name == "isinstance" and isinstance(node.func, ast.Name) and len(args) == 2:
            return self._isinstance(args[0], args[1], scope, line, depth)  # `if isinstance(hyp, str):` a path or not
        if name == "str" and isinstance(node.func, ast.Name) and len(args) == 1 and not node.keywords:
            v = self.value(args[0], scope, line, depth)
            return v if isinstance(v, str) else _UNKNOWN
        if name in _STR_METHODS and isinstance(node.func, ast.Attribute) and not node.keywords:
            return self._str_method(node.func.value, name, args, scope, line, depth)
        if name in ("int", "float", "round") and len(args) == 1:
            v = self.value(args[0], scope, line, depth)
            if isinstance(v, int | float | str) and not isinstance(v, bool):
                try:
                    return {"int": int, "float": float, "round": round}[name](v)  # type: ignore[operator]
                except (ValueError, TypeError, OverflowError):
                    return _UNKNOWN
            return _UNKNOWN
        if name in ("list", "tuple") and len(args) == 1 and isinstance(node.func, ast.Name):
            inner = args[0]
            if isinstance(inner, ast.Call) and _callee(inner) == "range" and 1 <= len(inner.args) <= 3:
                bounds = [self.value(a, scope, line, depth) for a in inner.args]  # `list(range(args.ngpu))`
                if all(isinstance(b, int) and not isinstance(b, bool) for b in bounds) and 0 not in bounds[2:]:
                    span = range(*bounds)
                    return (list(span) if name == "list" else tuple(span)) if len(span) <= 4096 else _UNKNOWN
                return _UNKNOWN
            v = self.value(args[0], scope, line, depth)  # `gpus = list(config.GPUS)`
            if isinstance(v, list | tuple):
                return list(v) if name == "list" else tuple(v)
            size = _device_list_size(v) if isinstance(v, str) else None  # yacs reads "(0,1,2,3)" as a tuple
            return [int(x) for x in re.findall(r"\d+", v)] if size is not None and isinstance(v, str) else _UNKNOWN
        if name == "len" and len(args) == 1 and isinstance(node.func, ast.Name):
            v = self.value(args[0], scope, line, depth)  # `nb_gpu = len(opt.gpu_ranks)`
            return len(v) if isinstance(v, list | tuple | dict) else _UNKNOWN  # (a string setting may be a spec: "0-3")
        if dotted in ("math.ceil", "math.floor", "ceil", "floor") and len(args) == 1:
            v = self.value(args[0], scope, line, depth)
            if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
                return math.ceil(v) if name == "ceil" else math.floor(v)
            return _UNKNOWN
        if name in ("get", "getenv") and (dotted.startswith(("os.environ", "os.getenv", "environ"))):
            key = self.value(args[0], scope, line, depth) if args else _UNKNOWN
            if key == "WORLD_SIZE" and self.world_size is not None:
                return self.world_size
            return self.value(args[1], scope, line, depth) if len(args) > 1 else _UNKNOWN
        if name == "get" and isinstance(node.func, ast.Attribute) and args:
            base = self.value(node.func.value, scope, line, depth)
            key = self.value(args[0], scope, line, depth)
            if isinstance(base, dict) and isinstance(key, str):
                if key in base:
                    return base[key]
                return self.value(args[1], scope, line, depth) if len(args) > 1 else _UNKNOWN
        if name in _LOADERS and dotted.split(".")[0] in ("yaml", "json", "OmegaConf", "toml", "tomllib", "omegaconf"):
            return self._load_file(args[0] if args else None, scope, line, depth)
        if name in {"parse_args", "parse_known_args"}:
            return _Namespace("args")
        if name in self.config_classes and (
            (isinstance(node.func, ast.Name) and not args and not node.keywords)
            or CONFIG_CLASS_NAME.search(name)  # a config class built with arguments: its defaults, unless they set it
        ):
            return _Namespace(name, self.config_classes[name])
        if name == "cli" and args and isinstance(args[0], ast.Name) and args[0].id in self.config_classes:
            return _Namespace(args[0].id, self.config_classes[args[0].id])  # `args = tyro.cli(Args)`
        if name == "device_count" and self.visible_gpus is not None:
            return self.visible_gpus  # CUDA_VISIBLE_DEVICES on the command line
        if name in ("min", "max") and len(args) >= 2:
            vals = [self.value(a, scope, line, depth) for a in args]
            if all(isinstance(v, int | float) and not isinstance(v, bool) for v in vals):
                return min(vals) if name == "min" else max(vals)
            return _UNKNOWN
        if name in ("get_world_size", "world_size") and self.world_size is not None:
            return self.world_size  # the processes the launcher starts (torchrun --nproc_per_node x nodes)
        if isinstance(node.func, ast.Name) and args and name not in _BUILTIN_CALLS:  # `check_yaml(opt.hyp)`
            fn = self.functions.get(name) or _imported_function(self.ws, self, name, self.file)
            module = self.file if name in self.functions else self._helper_files.get(name)
            if isinstance(fn, ast.FunctionDef) and _hands_back_first(self, fn, module):
                v = self.value(args[0], scope, line, depth)  # a helper that checks a file and returns its path
                if isinstance(v, str) and v and self.ws.exists(v):
                    return v
                if (
                    isinstance(v, str) and v and "/" not in v
                    and searches_tree(fn, self.parsed(module) if module else None)
                    and (found := self.ws.only_file_named(v)) is not None
                ):  # fmt: skip
                    return found  # YOLO's `check_yaml("hyp.scratch-high.yaml")` globs the repository for a bare name

        if isinstance(node.func, ast.Name):  # `config = get_config()`, `ds_config = get_train_ds_config(offload=…)`
            fn = self.functions.get(name) or _imported_function(self.ws, self, name, self.file)
            if isinstance(fn, ast.FunctionDef) and (returned := _returned_dict(fn)) is not None:
                return returned
        builder = self._job_function(node.func) if not args else None
        if builder is not None and (parsed_as := _parsing_builder(builder)):
            return _Namespace("args", builder=builder, held_as=parsed_as)  # `args = arg_util.init_dist_and_get_args()`
        return _UNKNOWN

    def _job_function(self, func: ast.expr) -> ast.FunctionDef | None:
        """The job's own function a call names: ``f`` of this module or imported, or ``module.f`` of a workspace
        module the entry imports."""
        if isinstance(func, ast.Name):
            fn = self.functions.get(func.id) or _imported_function(self.ws, self, func.id, self.file)
            return fn if isinstance(fn, ast.FunctionDef) else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            module = self._module_of(func.value.id)
            found = _top_level(self, module, ast.FunctionDef, func.attr) if module else None
            return found if isinstance(found, ast.FunctionDef) else None
        return None

    def _isinstance(self, obj: ast.expr, kinds: ast.expr, scope: _Scope, line: int, depth: int) -> Any:
        """``isinstance(x, str)`` (or a tuple of builtin types) of a value that can be told."""
        names = [e.id for e in (kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]) if isinstance(e, ast.Name)]
        if not names or any(n not in _BUILTIN_TYPES for n in names):
            return _UNKNOWN
        v = self.value(obj, scope, line, depth)
        if v is _UNKNOWN or isinstance(v, _Namespace):
            return _UNKNOWN
        return any(isinstance(v, _BUILTIN_TYPES[n]) for n in names)

    def _str_method(
        self, receiver: ast.expr, name: str, args: list[ast.expr], scope: _Scope, line: int, depth: int
    ) -> Any:
        """``args.arch.startswith("resnext")``, ``name.lower()``: a string method on a setting that can be told
        (its arguments strings, or a tuple of them), so the ``if`` arm a flag selects is known."""
        base = self.value(receiver, scope, line, depth)
        vals = [self.value(a, scope, line, depth) for a in args]
        vals = [tuple(v) if isinstance(v, list) else v for v in vals]
        if not isinstance(base, str) or not all(
            isinstance(v, str) or (isinstance(v, tuple) and all(isinstance(x, str) for x in v)) for v in vals
        ):
            return _UNKNOWN
        try:
            return getattr(base, name)(*vals)
        except (TypeError, ValueError):
            return _UNKNOWN

    def _load_file(self, arg: ast.expr | None, scope: _Scope, line: int, depth: int) -> Any:
        if isinstance(arg, ast.Call) and _callee(arg) == "open" and arg.args:
            arg = arg.args[0]
        if isinstance(arg, ast.withitem):
            return _UNKNOWN
        path = self.value(arg, scope, line, depth)
        if isinstance(arg, ast.Name) and path is _UNKNOWN:  # `with open(p) as f: yaml.safe_load(f)`
            path = self._with_target_path(arg.id, scope, line, depth)
        if not isinstance(path, str) or not path:
            return _UNKNOWN
        text = self.ws.read_text_or_none(path)
        if text is None:
            return _UNKNOWN
        flat = load_structured(text, path)
        return nest_flat({k: v.value for k, v in flat.items()})

    def _with_target_path(self, name: str, scope: _Scope, line: int, depth: int) -> Any:
        for node in walk(scope.node):
            if isinstance(node, ast.With | ast.AsyncWith):
                for item in node.items:
                    if (
                        isinstance(item.optional_vars, ast.Name) and item.optional_vars.id == name
                        and isinstance(item.context_expr, ast.Call) and _callee(item.context_expr) == "open"
                        and item.context_expr.args
                    ):  # fmt: skip
                        return self.value(item.context_expr.args[0], scope, line, depth)
        return _UNKNOWN


def _joined(parts: list[str]) -> str:
    return posixpath.normpath(posixpath.join(*[p for p in parts if p])) if any(parts) else ""


_PATH_CALLS: Final[dict[str, Callable[[list[str]], str]]] = {
    **dict.fromkeys(("Path", "pathlib.Path", "PurePath", "os.path.join", "osp.join", "path.join"), _joined),
    **dict.fromkeys(("os.path.dirname", "osp.dirname"), lambda p: posixpath.dirname(p[0]) if len(p) == 1 else ""),
    **dict.fromkeys(
        ("os.path.abspath", "os.path.realpath", "os.path.normpath", "osp.abspath", "osp.realpath", "osp.normpath"),
        lambda p: posixpath.normpath(p[0]) if len(p) == 1 and p[0] else "",
    ),
    **dict.fromkeys(("os.path.relpath", "osp.relpath"), lambda p: _relative(*p) if 1 <= len(p) <= 2 else ""),
}  # (relative to the working directory, where the script's own `__file__` is read from)
_CWD_CALLS: Final = frozenset({"Path.cwd", "pathlib.Path.cwd", "os.getcwd"})
_SAME_PATH_METHODS: Final = frozenset({"resolve", "absolute", "expanduser"})


def _relative(path: str, start: str = ".") -> str:
    """``os.path.relpath(path, start)`` of two paths relative to the working folder."""
    if posixpath.isabs(path) or posixpath.isabs(start):
        return ""
    return posixpath.relpath(path or ".", start or ".")


def path_call(dotted: str, parts: list[str]) -> str | None:
    """The path a path-building call makes of known parts (``os.path.join``, ``Path``, ``os.path.dirname``,
    ``os.path.abspath``, by the callee's dotted name); None for any other call."""
    make = _PATH_CALLS.get(dotted)
    return make(parts) if make is not None and parts else None


_STR_METHODS: Final = frozenset(
    {"startswith", "endswith", "lower", "upper", "strip", "lstrip", "rstrip", "casefold", "split", "replace"}
)


def _returned_dict(fn: ast.FunctionDef) -> dict[str, Any] | None:
    """:func:`_returned_literal_dict`, a copy the caller may change (asked at every call of the job's functions:
    thousands of times per job, so the walk is done once per function)."""
    found = _returned_literal_dict(fn)
    return copy.deepcopy(found, {id(_UNKNOWN): _UNKNOWN}) if found is not None else None  # (the sentinel kept)


@functools.lru_cache(maxsize=512)
def _returned_literal_dict(fn: ast.FunctionDef) -> dict[str, Any] | None:
    """The settings a function returns as its one dict literal (``def get_config(): return {"lr": 10**-4, ...}``):
    its entries whose values are literals or constant arithmetic. A function with parameters (``def
    get_train_ds_config(offload, stage=2): ... return {"fp16": {"enabled": True}, "zero_optimization": zero_opt}``)
    may put them into other entries: those are there but unknown, so a reader's default does not stand in for them."""
    takes = bool(fn.args.args or fn.args.posonlyargs or fn.args.kwonlyargs or fn.args.vararg or fn.args.kwarg)
    returns = [n for n in walk(fn) if isinstance(n, ast.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Dict):
        return None
    out: dict[str, Any] = {}
    for k, v in zip(returns[0].value.keys, returns[0].value.values, strict=False):
        if k is None and takes:
            return None  # `return {**base, ...}`: entries that cannot be listed
        if isinstance(k, ast.Constant) and isinstance(k.value, str):
            if takes:
                out[k.value] = _UNKNOWN
            with contextlib.suppress(ValueError, TypeError, SyntaxError, ArithmeticError, RecursionError, MemoryError):
                out[k.value] = constant_arithmetic(v)
    return out


def _literal(node: ast.expr) -> Any:
    """A literal's value; a dict literal keeps its literal entries (``os.path.join(...)`` values are left out)."""
    if isinstance(node, ast.Dict):
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values, strict=False):
            key, value = _literal(k) if k is not None else _UNKNOWN, _literal(v)
            if isinstance(key, str | int) and value is not _UNKNOWN:
                out[key] = value
        return out
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "dict"
        and not node.args
        and all(k.arg for k in node.keywords)
    ):  # `dict(BATCH_SIZE=512, DEVICE=torch.device(...))` (face.evoLVe's configurations): its literal entries
        return {k.arg: v for k in node.keywords if (v := _literal(k.value)) is not _UNKNOWN}
    if (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "list"
        and len(node.args) == 1 and isinstance(inner := node.args[0], ast.Call)
        and isinstance(inner.func, ast.Name) and inner.func.id == "range" and 1 <= len(inner.args) <= 2
    ):  # fmt: skip
        bounds = [_literal(a) for a in inner.args]  # `DEVICES = list(range(0, 4))`: a device list
        if (
            all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
            and bounds[-1] - (bounds[0] if len(bounds) == 2 else 0) <= 4096
        ):
            return list(range(*bounds))
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN


def _other_arm(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]) -> bool:
    """Whether two assignments sit in different arms of one ``if``."""
    arms = dict(b)
    return any(node in arms and arms[node] != arm for node, arm in a)


@dataclass(frozen=True)
class _Namespace:
    name: str
    cls: str = ""  # a config class instance: its fields' defaults are settings "cls.field"
    builder: ast.FunctionDef | None = field(default=None, compare=False)  # the job's function that parses and returns
    # it, setting attributes after parsing (`args.batch_size = round(args.bs / dist.get_world_size())`)
    held_as: str = ""  # the name the builder holds it by
    hf: bool = False  # one of an HfArgumentParser's dataclasses: TrainingArguments' own fields keep HF's defaults


def _parsing_builder(fn: ast.FunctionDef) -> str | None:
    """The name a function binds to parsed arguments (``args = parser.parse_args()``, ``args =
    Args().parse_args(known_only=True)``, ``args, _ = parser.parse_known_args()``) and returns; None if it does not."""
    held = None
    for node in fn.body:
        if (
            isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            and _callee(node.value) in ("parse_args", "parse_known_args")
        ):  # fmt: skip
            t = node.targets[0]
            t = t.elts[0] if isinstance(t, ast.Tuple) and t.elts else t
            held = t.id if isinstance(t, ast.Name) else held
    last = fn.body[-1] if fn.body else None
    if held and isinstance(last, ast.Return) and isinstance(last.value, ast.Name) and last.value.id == held:
        return held
    return None


class _Inline(ast.NodeTransformer):
    """A copy of an expression with names replaced: a function's locals by what they were set to, or the builder's
    name for the arguments by the caller's (a replacement without a place of its own takes the name's)."""

    def __init__(self, local: dict[str, ast.expr]) -> None:
        self.local = local

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id not in self.local:
            return node
        new = copy.deepcopy(self.local[node.id])
        return new if hasattr(new, "lineno") else ast.copy_location(new, node)


def _load(target: ast.expr) -> ast.expr:
    if isinstance(target, ast.Name):
        return ast.Name(id=target.id, ctx=ast.Load())
    if isinstance(target, ast.Attribute):
        return ast.Attribute(value=target.value, attr=target.attr, ctx=ast.Load())
    return target


def _access_path(node: ast.expr, config_root: Callable[[ast.Call], bool] | None = None) -> str:
    """``cfg.TRAIN["lr"]`` → ``cfg.TRAIN.lr`` (literal keys only); ``C.get()["lr"]`` → ``C.lr`` where
    ``config_root`` says the call returns the job's config."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Call) and config_root is not None and parts and config_root(node):
            parts.append("config")
            break
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            parts.append(str(node.slice.value))
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            break
        else:
            return ""
    return ".".join(reversed(parts))


def _args_of(call: ast.Call, kws: tuple[str, ...], pos: int | None = None) -> ast.expr | None:
    """The argument ``call`` passes for a parameter: by keyword, by position, or as an item of a dict it unpacks
    (``Adam(params, **hparams.optimizer_params)``: ``hparams.optimizer_params["lr"]``, unknown where it lacks one)."""
    for kw in call.keywords:
        if kw.arg in kws:
            return kw.value
    if pos is not None and pos < len(call.args) and not isinstance(call.args[pos], ast.Starred):
        return call.args[pos]
    unpacked = [kw.value for kw in call.keywords if kw.arg is None]
    if len(unpacked) == 1 and isinstance(unpacked[0], ast.Attribute | ast.Name):
        item = ast.Subscript(value=unpacked[0], slice=ast.Constant(kws[0]), ctx=ast.Load())
        return ast.copy_location(item, unpacked[0])
    return None


def _rate_attribute_sites(tree: ast.AST) -> Iterator[tuple[ast.expr, int]]:
    """``model.learning_rate = accumulate_grad_batches * ngpu * bs * base_lr``: the entry script sets the rate a
    Lightning module's ``configure_optimizers`` reads (latent-diffusion, taming, generative-models): the object
    is the one ``trainer.fit()`` trains, not a config being built (``C.learning_rate = 3e-4``)."""
    fitted = {
        n.args[0].id for n in walk(tree)
        if isinstance(n, ast.Call) and _callee(n) == "fit" and n.args and isinstance(n.args[0], ast.Name)
    }  # fmt: skip
    for node in walk(tree):
        if (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute)
            and node.targets[0].attr == "learning_rate" and isinstance(node.targets[0].value, ast.Name)
            and node.targets[0].value.id in fitted
        ):  # fmt: skip
            yield node.value, node.lineno


def _accumulation_sites(tree: ast.AST) -> Iterator[tuple[ast.expr, int]]:
    """``if (i + 1) % N == 0: optimizer.step()``: N micro-batches are accumulated per optimizer step."""
    for node in walk(tree):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1):
            continue
        left, right = node.test.left, node.test.comparators[0]
        if not (isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mod)):
            continue
        if not (isinstance(right, ast.Constant) and right.value == 0 and isinstance(node.test.ops[0], ast.Eq)):
            continue
        calls = [c.func.attr for stmt in node.body for c in walk(stmt)
                 if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                 and not re.search(r"sched", _dotted(c.func.value), re.I)]  # fmt: skip
        # (`scheduler.step(val_loss)` every N steps is a schedule's step after an evaluation, not an optimizer's)
        if any(a in ("step", "zero_grad") for a in calls) and "backward" not in calls:
            # (a block that computes its own loss and backward is another model's update every N steps — a GAN's
            # generator after N critic steps — not the accumulation of the micro-batches' gradients)
            yield left.right, node.lineno


_SCHEDULE_HINT: Final = re.compile(r"\w+\s*=\s*[\w.]*sched\w*\(", re.I)
_SCHEDULE_BASE: Final = ("base_value", "base_lr", "max_lr", "peak_lr", "lr", "learning_rate")


def _writes_rate(node: ast.AST) -> TypeGuard[ast.Assign]:
    """``param_group["lr"] = ...``: an assignment that sets an optimizer group's rate."""
    return isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and t.slice.value == "lr"
        for t in node.targets
    )


def _schedule_names(trees: Iterable[ast.AST]) -> set[str]:
    """Names whose items the training loop writes into the optimizer's rate (``param_group["lr"] =
    lr_schedule[it]``, also scaled by a per-group factor): precomputed per-step schedules."""
    names: set[str] = set()
    for tree in trees:
        for node in walk(tree):
            if not _writes_rate(node):
                continue
            v = node.value
            while isinstance(v, ast.BinOp) and isinstance(v.op, ast.Mult):
                v = v.left  # `lr_schedule[it] * param_group["lr_scale"]`
            if isinstance(v, ast.Subscript) and isinstance(v.value, ast.Name):
                names.add(v.value.id)
    return names


def _schedule_sites(tree: ast.AST, names: set[str]) -> Iterator[tuple[ast.expr, int]]:
    """``lr_schedule = cosine_scheduler(args.lr * batch / 256, ...)`` for a schedule of :func:`_schedule_names`: the
    rate it is built from (its first argument, or a keyword naming the base or peak rate)."""
    for node in walk(tree):
        if (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in names and isinstance(node.value, ast.Call)
        ):  # fmt: skip
            call = node.value
            kw = next((k.value for name in _SCHEDULE_BASE for k in call.keywords if k.arg == name), None)
            arg = kw if kw is not None else (call.args[0] if call.args else None)
            if arg is not None and not isinstance(arg, ast.Starred):
                yield arg, node.lineno


_RATE_NAME: Final = re.compile(r"(?:^|_)lr$|learning_rate$|(?:^|_)lr_", re.I)
_BATCH_NAME: Final = re.compile(r"batch|world_size|get_world_size|num_gpus|n_gpus", re.I)


def _scaled_rate_sites(tree: ast.AST) -> Iterator[tuple[ast.expr, int]]:
    """In a function that writes a local into the optimizer's rate (``param_group["lr"] = lr``), the local it
    scales from a rate setting by the batch (``base_lr = args.base_lr * args.batch_size / 256``, the linear or
    square-root scaling rule): the rate the schedule peaks at."""
    for fn in walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if not any(_writes_rate(n) and isinstance(n.value, ast.Name) for n in walk(fn)):
            continue
        for n in walk(fn):
            if not (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)):
                continue
            leaves = [x.attr if isinstance(x, ast.Attribute) else x.id
                      for x in walk(n.value) if isinstance(x, ast.Attribute | ast.Name)]  # fmt: skip
            if any(_RATE_NAME.search(x) for x in leaves) and any(_BATCH_NAME.search(x) for x in leaves):
                yield n.value, n.lineno
                break


def _kwargs_any(call: ast.Call, names: tuple[str, ...]) -> bool:
    return any(kw.arg in names for kw in call.keywords)


def _trains_parameters(call: ast.Call) -> bool:
    """Whether ``call`` is handed a model's parameters (an optimizer: ``X(model.parameters(), lr=…)``) or is looked
    up in an optimizer module (``getattr(torch.optim, name)``)."""
    first = call.args[0] if call.args else None
    if isinstance(first, ast.Call) and _callee(first) in ("parameters", "named_parameters"):
        return True
    looked_up = call.func.args[0] if isinstance(call.func, ast.Call) and call.func.args else None
    return looked_up is not None and _dotted(looked_up).rsplit(".", 1)[-1] in ("optim", "optimizers")


SPLIT_LOADER: Final = "auto_dataloader(batch_size=), split over the ranks"


def _job_function(ws: Workspace, r: _Resolver, tree: ast.Module, call: ast.Call, file: str) -> bool:
    """Whether ``call`` calls a function of the job's own code: defined in the module, or imported from the workspace
    (``from cldm.model import create_model``, ``import models; models.create_model(...)``)."""
    head = _dotted(call.func).split(".")[0]
    if not head:
        return False
    if any(isinstance(n, ast.FunctionDef) and n.name == head for n in tree.body):
        return True
    imported = r.imports().get(head)
    if imported is None:
        return False
    module, level, name = imported
    dotted = name if level < 0 else module
    return ws.module_file(dotted, max(level, 0), file) is not None


def _names_architecture(value: object) -> bool:
    """Whether a value handed to the job's own ``create_model`` is an architecture's name (``"efficientdet_d0"``)
    rather than a config (a path, a config object): a word, no folder, no file suffix."""
    return (
        isinstance(value, str)
        and re.fullmatch(r"[A-Za-z][\w.-]*", value) is not None
        and not re.search(r"\.(?:ya?ml|json|py|toml|cfg|ini)$", value, re.I)
    )


def _defined_in(ws: Workspace, tree: ast.Module, file: str, call: ast.Call) -> bool:
    """Whether ``call`` (inside the module ``tree`` of ``file``) calls a function of the job's own code: defined in
    that module or imported there from the workspace (``import models.utils as mutils; mutils.create_model(...)``)."""
    head = _dotted(call.func).split(".")[0]
    if not head:
        return False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == head:
            return True
        if isinstance(node, ast.Import):
            for a in node.names:
                if (a.asname or a.name.split(".")[0]) == head:
                    return ws.module_file(a.name if a.asname else head, 0, file) is not None
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                if (a.asname or a.name) == head:
                    return ws.module_file(node.module or "", node.level, file) is not None
    return False


# PyTorch Geometric's loaders and Lightning data modules: `batch_size=` seed nodes, edges or graphs per step
_GRAPH_LOADERS: Final = frozenset({
    "NeighborLoader", "LinkNeighborLoader", "HGTLoader", "LinkLoader", "NodeLoader", "ClusterLoader",
    "ShaDowKHopSampler", "GraphSAINTNodeSampler", "GraphSAINTEdgeSampler", "GraphSAINTRandomWalkSampler",
    "NeighborSampler", "DataListLoader", "RandomNodeLoader", "ZipLoader", "LightningNodeData", "LightningLinkData",
    "LightningDataset",
})  # fmt: skip


def _is_loader(name: str) -> bool:
    """Whether a callee named ``name`` builds a data loader whose ``batch_size`` is the per-process batch."""
    return name.endswith("DataLoader") or name in _GRAPH_LOADERS


def _consumers(call: ast.Call) -> Iterator[tuple[str, ast.expr, str]]:
    """(field, argument expression, how) for every hyper-parameter ``call`` consumes. ``partial(f, k=v)`` binds
    what ``f`` will consume (``partial(torch.autocast, dtype=amp_dtype)``)."""
    if _callee(call) == "partial" and call.args and isinstance(call.args[0], ast.Name | ast.Attribute):
        bound = ast.Call(func=call.args[0], args=call.args[1:], keywords=call.keywords)
        call = ast.copy_location(bound, call)
    name, dotted = _callee(call), _dotted(call.func)
    if (a := _args_of(call, ("param_dtype",))) is not None:  # FSDP's `MixedPrecision(param_dtype=torch.bfloat16)`,
        yield "param_dtype", a, f"{name}(param_dtype=)"  # a loader casting the trained weights (mistral-finetune)
    if _is_loader(name):
        sampled = any(k.arg == "batch_sampler" for k in call.keywords)  # (then torch requires batch_size=1: the sampler
        if (a := _args_of(call, ("batch_size",), 1)) is not None and not sampled:  # makes the batches, cvnets)
            yield "batch", a, f"{name}(batch_size=)"
        elif (
            isinstance(bs := _args_of(call, ("batch_sampler",)), ast.Call)
            and (a := _args_of(bs, ("batch_size",))) is not None
        ):
            yield "batch", a, f"{name}(batch_sampler=...(batch_size=))"
        elif isinstance(bs, ast.Name):  # `sampler = AspectRatioBasedSampler(data, batch_size=2)` handed over by name
            read = ast.copy_location(ast.Attribute(value=bs, attr="batch_size", ctx=ast.Load()), bs)
            yield "batch", read, f"{name}(batch_sampler={bs.id})"
    elif (
        name in _TF_BATCHERS and re.search(r"(?:^|\.)train(?:ing)?\.\w+$", dotted)
        and (a := _args_of(call, ("batch_size",), _TF_BATCHERS[name])) is not None
    ):  # fmt: skip
        yield "batch", a, f"{name}(batch_size=)"  # TensorFlow 1's queue batchers: the batch each training step reads
    elif name in _KERAS_FLOWS and (a := _args_of(call, ("batch_size",))) is not None:
        yield "batch", a, f"{name}(batch_size=)"  # Keras' ImageDataGenerator feeding `fit_generator`
    elif (
        isinstance(call.func, ast.Attribute)
        and (name == "padded_batch" or (name == "batch" and _tf_dataset_chain(call.func.value)))
        and (a := _args_of(call, ("batch_size",), 0)) is not None
    ):  # fmt: skip
        yield "batch", a, f"tf.data.Dataset.{name}()"  # `dataset.shuffle(…).padded_batch(batch_size, …)`
    elif name in ("auto_dataloader", "prepare_dataloader"):  # ignite's idist.auto_dataloader, audiotools'
        # Accelerator.prepare_dataloader: the batch is the total, split over the ranks
        if (a := _args_of(call, ("batch_size",))) is not None:
            yield "batch", a, SPLIT_LOADER
    elif name == "IterationBasedBatchSampler" and (a := _args_of(call, ("num_iterations",), 1)) is not None:
        yield "max_steps", a, f"{name}(num_iterations=)"  # maskrcnn-benchmark's sampler: the loader yields this many
    elif name in _TF_OPTIMIZERS:  # TensorFlow 1's `tf.train.AdamOptimizer(learning_rate, beta1=…)`: the rate first
        if (a := _args_of(call, ("learning_rate",), 0)) is not None:
            yield "lr", a, f"{name}(learning_rate=)"
    elif name in OPTIMIZERS:
        if (a := _args_of(call, ("lr", "learning_rate"), 1)) is not None:
            yield "lr", a, f"{name}(lr=)"
        elif (a := _first_group_rate(call)) is not None:
            yield "lr", a, f"{name}(params=[{{'lr': …}}, …])"
        elif (
            name in _TORCH_DEFAULT_LR
            and _trains_parameters(call)
            and _dotted(call.func) in (name, f"optim.{name}", f"torch.optim.{name}")
        ):
            yield "lr_default", ast.Constant(_TORCH_DEFAULT_LR[name]), f"torch.optim.{name}() without lr: its default"
    elif "optim" in name.lower() and name[:1].isupper() and _trains_parameters(call):
        if (a := _args_of(call, ("lr", "learning_rate"), 1)) is not None:  # `Optimizer = getattr(optim, name)`, then
            yield "lr", a, f"{name}(lr=)"  # `Optimizer(model.parameters(), **params)`: an optimizer picked by name
    elif name == "OneCycleLR" and (a := _args_of(call, ("max_lr",), 1)) is not None:
        yield "lr", a, "OneCycleLR(max_lr=)"  # the peak rate the schedule sets the optimizer's to (its own is replaced)
    elif name == "create_optimizer" and call.args and isinstance(call.args[0], ast.Name):
        yield "lr", ast.Attribute(value=call.args[0], attr="lr", ctx=ast.Load()), "timm create_optimizer(args)"
    elif name == "create_optimizer_v2" and (a := _args_of(call, ("lr",))) is not None:
        yield "lr", a, "timm create_optimizer_v2(lr=)"
    elif name in ("TPUEstimator", "Estimator") and (a := _args_of(call, ("train_batch_size",))) is not None:
        yield "batch", a, f"{name}(train_batch_size=)"  # TensorFlow's Estimator: the batch its input_fn is given
    elif name == "train" and isinstance(call.func, ast.Attribute) and (a := _args_of(call, ("max_steps",))) is not None:
        yield "max_steps", a, "Estimator.train(max_steps=)"  # the global step at which training stops
    elif name in _HF_ARGS or name.endswith("TrainingArguments"):  # (a library's subclass of HF's:
        # sentence-transformers' `SentenceTransformerTrainingArguments`, `CrossEncoderTrainingArguments`)
        for fieldname, kws in _HF_KW.items():
            if (a := _args_of(call, kws)) is not None:
                yield fieldname, a, f"{name}({kws[0]}=)"
    elif name == "Trainer" and any(kw.arg == "max_duration" for kw in call.keywords):  # Composer's Trainer
        yield "max_duration", _args_of(call, ("max_duration",)) or call, "Trainer(max_duration=)"  # `"3ep"`, `"1000ba"`
        if (a := _args_of(call, ("precision",))) is not None:
            yield "precision", a, "Trainer(precision=)"
        else:  # (unset: AMP in float16 on a GPU, Composer's default there)
            yield "amp_dtype", ast.copy_location(ast.Constant("float16"), call), "Composer Trainer(): AMP fp16 on GPU"
        if _args_of(call, ("optimizers",)) is None:  # no optimizer handed: Composer builds DecoupledSGDW(lr=0.1)
            yield "lr_default", ast.copy_location(ast.Constant(0.1), call), "Composer Trainer() without optimizers"
    elif name in ("Trainer", "Fabric") and any(
        kw.arg in ("max_epochs", "max_steps", "precision", "devices", "strategy") for kw in call.keywords
    ):  # Lightning's Trainer and Fabric
        for fieldname, kws in _PL_KW.items():
            if (a := _args_of(call, kws)) is not None:
                yield fieldname, a, f"{name}({kws[0]}=)"
        if (a := _args_of(call, ("strategy",))) is not None:
            yield "strategy", a, f"{name}(strategy=)"
        if name == "Trainer" and any(kw.arg == "use_amp" for kw in call.keywords):
            yield "fp16", _args_of(call, ("use_amp",)) or call, f"{name}(use_amp=)"  # Lightning 0.x's AMP switch
    elif "Trainer" in name and name not in ("Trainer", "Fabric") and (a := _args_of(call, ("max_epochs",))) is not None:
        yield "epochs", a, f"{name}(max_epochs=)"  # another library's trainer or its parameters (Tianshou's
        # `OffPolicyTrainerParams(max_epochs=epoch)`): the epochs it trains
    elif name == "from_argparse_args" and dotted.rsplit(".", 2)[-2:-1] == ["Trainer"] and call.args:
        stated = {kw.arg for kw in call.keywords}  # Lightning 1.x: `Trainer.from_argparse_args(args, **overrides)`
        for fieldname, kws in {**_PL_KW, "strategy": ("strategy",)}.items():  # reads the Trainer's options from args
            for kw in kws:
                value = _args_of(call, (kw,))
                if value is None and kw not in stated:
                    value = ast.copy_location(ast.Attribute(value=call.args[0], attr=kw, ctx=ast.Load()), call)
                if value is not None:
                    yield fieldname, value, f"Trainer.from_argparse_args(): {kw}"
    elif name in ("fit", "fit_generator") and any(kw.arg in ("epochs", "batch_size") for kw in call.keywords):
        for fieldname, kws in _FIT_KW.items():
            if (a := _args_of(call, kws)) is not None:
                yield fieldname, a, f"fit({kws[0]}=)"
    elif name == "from_pretrained" and re.search(r"(?:^|\.)\w*Config$", dotted.rsplit(".", 1)[0]):
        if (a := _args_of(call, ("pretrained_model_name_or_path",), 0)) is not None:
            yield "arch_config", a, f"{dotted}()"  # `AutoConfig.from_pretrained(model_id)`: an architecture's config
    elif name == "from_pretrained" and not any(s in dotted for s in NOT_WEIGHTS_LOADERS):
        if (a := _args_of(call, ("pretrained_model_name_or_path",), 0)) is not None and not _NOT_TRAINED.search(
            ast.unparse(a)
        ):  # (`from_pretrained(self.gen_ppl_eval_model_name_or_path)`: a model scoring samples, not the trained one)
            yield "model", a, f"{dotted or name}()"
    elif name in _HUB_MODEL_CLASSES and (a := _args_of(call, ("model_name_or_path",), 0)) is not None:
        yield "model", a, f"{name}()"  # a library's model class built from a Hub checkpoint by name
    elif name == "create_model" and (a := _args_of(call, ("model_name",), 0)) is not None:
        yield "model", a, "create_model()"
    elif (
        name == "from_name" and dotted.rsplit(".", 1)[0].endswith("Config")
        and (a := _args_of(call, ("name",), 0)) is not None
    ):  # fmt: skip
        # `LLaMAConfig.from_name("7B")`: a named architecture's shape (not its weights)
        family = dotted.rsplit(".", 1)[0].rsplit(".", 1)[-1].removesuffix("Config")
        named: ast.expr = ast.BinOp(left=ast.Constant(f"{family}-" if family else ""), op=ast.Add(), right=a)
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            named = ast.Constant(f"{family}-{a.value}" if family else a.value)
        yield "model_config", ast.copy_location(named, call), f"{dotted}()"
    elif name == "make" and dotted in ("gym.make", "gymnasium.make"):
        if (a := _args_of(call, ("id",), 0)) is not None:  # reinforcement learning: the environment is the data
            yield "dataset", a, f"{dotted}()"
    elif name in ("load", "builder") and dotted in ("tfds.load", "tensorflow_datasets.load", "tfds.builder"):
        if (a := _args_of(call, ("name",), 0)) is not None:  # TensorFlow Datasets: `tfds.load("oxford_iiit_pet")`
            yield "dataset", a, f"{dotted}()"
    elif (
        name == "load_dataset"
        and (isinstance(call.func, ast.Name) or dotted.startswith("datasets."))
        and (a := _args_of(call, ("path",), 0)) is not None
    ):  # HF datasets' loader (not a task object's `task.load_dataset("valid")`)
        yield "dataset", a, "load_dataset()"
        if (c := _args_of(call, ("name",), 1)) is not None:  # the dataset's configuration: glue's "mnli"
            yield "dataset_config", c, "load_dataset(name=)"
    elif name == "autocast" and (a := _args_of(call, ("dtype",))) is not None:
        yield "amp_dtype", a, "autocast(dtype=)"
        if (e := _args_of(call, ("enabled",))) is not None and not _is_false(e):
            yield "amp_enabled", e, "autocast(dtype=, enabled=)"  # on or off; its dtype (maybe unknown) says which
    elif name == "autocast" and (e := _args_of(call, ("enabled",))) is not None and not _is_false(e):
        yield "amp_enabled", e, "autocast(enabled=)"  # mixed precision exactly when the setting says so
    elif name == "initialize" and dotted.endswith("deepspeed.initialize"):
        if (a := _args_of(call, ("config", "config_params"))) is not None:
            yield "deepspeed", a, "deepspeed.initialize(config=)"
    elif (
        isinstance(call.func, ast.Call) and isinstance(call.func.func, ast.Name) and len(call.func.args) == 1
        and not call.func.keywords and not isinstance(call.func.args[0], ast.Starred)
        and call.func.func.id not in _NOT_GETTERS
    ):  # fmt: skip
        yield "registry_key", call.func.args[0], f"{call.func.func.id}(...)()"  # `get_RepVGG_func_by_name(name)(…)`:
        # the constructor a getter returns for the key (its `func_dict[name]`), called
    elif isinstance(call.func, ast.Subscript) and isinstance(call.func.value, ast.Name | ast.Attribute):
        if _dotted(call.func.value).endswith("__dict__") and not _DATA_REGISTRIES.search(_dotted(call.func.value)):
            yield "model", call.func.slice, f"{_dotted(call.func.value)}[...]()"  # a registry: vits.__dict__[arch]()
        elif _dotted(call.func.value).endswith("__dict__"):
            return  # `datasets.__dict__[args.dataset](...)`: a registry of datasets, not of the model's constructors
        yield "registry_key", call.func.slice, f"{_dotted(call.func.value)}[...]()"  # MODELS[args.model](...)
        given = [k for k in call.keywords if k.arg]
        keys: list[ast.expr | None] = [ast.Constant(k.arg) for k in given]
        yield "registry_kwargs", ast.Dict(keys=keys, values=[k.value for k in given]), "keyword arguments"
    elif (
        isinstance(call.func, ast.Call)
        and _callee(call.func) == "getattr"
        and len(call.func.args) >= 2
        and _trains_parameters(call)
    ):  # getattr(optim, args.optim)(model.parameters(), lr=lr): an optimizer chosen by name
        if (a := _args_of(call, ("lr", "learning_rate"), 1)) is not None:
            yield "lr", a, "getattr(optim, name)(lr=)"
    elif (
        isinstance(call.func, ast.Call)
        and _callee(call.func) == "getattr"
        and len(call.func.args) == 2
        and not isinstance(call.func.args[1], ast.Constant)
        and isinstance(call.func.args[0], ast.Name | ast.Attribute)  # a namespace, not `getattr(x.cuda(), dtype)()`
        and not _DATA_REGISTRIES.search(_dotted(call.func.args[0]))  # (`getattr(losses, config['loss'])()`)
    ):  # getattr(models, name)(...): a setting names the constructor (not `getattr(model, "criterion",
        yield "model", call.func.args[1], "getattr(module, name)()"  # CrossEntropyLoss)()`, an attribute's fallback)
    elif (
        name in ("autocast", "GradScaler") and not _kwargs_any(call, ("dtype", "enabled")) and not call.args
        and not any(kw.arg is None for kw in call.keywords)  # `autocast(**kwargs)`: whatever its caller passes
        and _torch_amp(call.func)
    ):  # fmt: skip
        yield "amp_dtype", ast.Constant("float16"), f"{name}()"  # on by default: CUDA autocast is float16
    elif (wrap := _wrap_kind(name)) is not None:  # the model wrapped for data parallelism: which kind (calls in arms
        yield wrap, ast.Constant(value=True), f"{name}()"  # that cannot run skipped)
        if name == "DataParallel" and (ids := _args_of(call, ("device_ids",), 1)) is None:
            yield "dp_all", ast.Constant(value=True), "DataParallel() without device_ids: every visible GPU"
        elif name == "DataParallel" and ids is not None:
            yield "dp_devices", ids, "DataParallel(device_ids=): the GPUs listed"
        elif name == "multi_gpu_model" and (gpus := _args_of(call, ("gpus",), 1)) is not None:
            yield "dp_devices", gpus, "multi_gpu_model(gpus=): the GPUs it replicates the model on"
    elif name == "initialize" and dotted.endswith("amp.initialize"):  # apex AMP: O1/O2 mixed, O3 pure fp16, O0 off
        yield "apex_amp", _args_of(call, ("opt_level",), 2) or ast.Constant("O1"), "apex amp.initialize()"
    elif dotted.startswith("apex.") or name in ("LARC", "FusedAdam", "FusedLAMB", "convert_syncbn_model"):
        yield "apex_use", ast.Constant(value=True), f"{dotted or name}()"
    elif name in ("half", "bfloat16") and not call.args and _model_like(call.func):
        yield "cast", ast.Constant("fp16" if name == "half" else "bf16"), f"model.{name}()"
    elif name == "to" and call.args and _model_like(call.func) and _dotted(call.args[0]) in _CASTS:
        yield "cast", ast.Constant(_CASTS[_dotted(call.args[0])]), f"model.to({_dotted(call.args[0])})"


_HF_TRAINING_DEFAULTS: Final[dict[str, Any]] = {"fp16": False, "bf16": False, "gradient_checkpointing": False,
                                                 "do_train": False, "do_eval": False}  # fmt: skip
_DATACLASS_PARSES: Final = frozenset(
    {"parse_args_into_dataclasses", "parse_yaml_file", "parse_json_file", "parse_dict"}
)
_PEFT_CALLS: Final = frozenset({"get_peft_model", "LoraConfig", "prepare_model_for_kbit_training"})
# Trainers of transformers and TRL: which one a job builds (not a branch its settings rule out) says its stage.
_LIBRARY_TRAINERS: Final = frozenset({
    "Trainer", "Seq2SeqTrainer", "SFTTrainer", "DPOTrainer", "KTOTrainer", "ORPOTrainer", "CPOTrainer", "RewardTrainer",
    "PPOTrainer", "GRPOTrainer", "OnlineDPOTrainer", "RLOOTrainer",
})  # fmt: skip
_WRAPS: Final = {"FullyShardedDataParallel": "fsdp_wrap", "FSDP": "fsdp_wrap", "fully_shard": "fsdp_wrap",
                 "DistributedDataParallel": "ddp_wrap", "DDP": "ddp_wrap", "DataParallel": "dp_wrap",
                 "parallel_apply": "dp_wrap", "multi_gpu_model": "dp_wrap"}  # fmt: skip
# (torch.nn.parallel.parallel_apply: DataParallel taken apart — replicas of the model run on the visible GPUs; Keras'
# `multi_gpu_model(model, gpus=N)`: one process, the model replicated on N GPUs, each batch split between them)


_DEVICE_COUNT: Final = re.compile(  # a count of devices or processes, by what computes it or is named
    r"world_size|gpus|device_count|num_replicas|nprocs|num_processes|ngpu|num_devices", re.I
)
_DATA_REGISTRIES: Final = re.compile(r"data|transform|optim|loss|sched", re.I)  # `datasets.__dict__[name.upper()]`


def data_parallel_subclass(name: str) -> str | None:
    """The kind of a project's own data-parallel wrapper, known by its telling name (``MMDistributedDataParallel``,
    SPADE's ``DataParallelWithCallback``, ``UserScatteredDataParallel``): ``ddp_wrap``, ``dp_wrap`` or None."""
    if name.endswith("DistributedDataParallel"):
        return "ddp_wrap"
    return "dp_wrap" if name.endswith("DataParallel") or name.startswith("DataParallel") else None


def _wrap_kind(name: str) -> str | None:
    """The data-parallel kind of a wrapper: torch's own by name, else a project's subclass."""
    return _WRAPS.get(name) or data_parallel_subclass(name)


_CASTS: Final = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.half": "fp16"}
_DTYPES: Final = {"torch.bfloat16": "bfloat16", "torch.float16": "float16", "torch.half": "float16",
                  "torch.float32": "float32", "torch.float": "float32"}  # fmt: skip


def _is_false(node: ast.expr) -> bool:
    """``autocast(enabled=False)``: a region kept in full precision inside a mixed-precision job, not a setting."""
    return isinstance(node, ast.Constant) and node.value is False


def _model_like(func: ast.expr) -> bool:
    """``model.half()``, ``self.net.to(torch.bfloat16)``: a cast of something named as a model, not of a tensor."""
    receiver = func.value if isinstance(func, ast.Attribute) else None
    name = _dotted(receiver).rsplit(".", 1)[-1].lower() if receiver is not None else ""
    return bool(re.search(r"model|net|module|encoder|decoder|transformer", name))


def _dead_code(r: _Resolver, tree: ast.Module) -> set[int]:
    """Nodes in an ``if`` arm that cannot run: the condition evaluates (``fp16 = False ... if fp16:``); and the
    statements after an arm that always runs and leaves its block (``if not multi_gpus: train(); return``)."""
    dead: set[int] = set()
    after: dict[int, list[ast.stmt]] = {}  # a statement → the statements after it in its block
    for parent in walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list):
                after.update((id(stmt), block[i + 1 :]) for i, stmt in enumerate(block))
    counters = {n.target.id for n in walk(tree) if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)}
    for node in walk(tree):
        if isinstance(node, ast.If) and id(node) not in dead:
            if any(isinstance(n, ast.Name) and n.id in counters for n in walk(node.test)):
                continue  # `if step_count % eval_interval == 0:` over a counter the loop advances: both arms run
            line = node.lineno
            truth = r._truth(node.test, _scope_at(r, tree, line), line, 0)
            if truth is None:
                continue
            taken = node.body if truth else node.orelse
            for stmt in node.orelse if truth else node.body:
                dead.update(id(n) for n in walk(stmt))
            if taken and isinstance(taken[-1], ast.Return | ast.Raise | ast.Continue | ast.Break):
                for stmt in after.get(id(node), []):
                    dead.update(id(n) for n in walk(stmt))
    return dead


def _built_class(arg: ast.expr, scope: _Scope, r: _Resolver | None = None) -> Any:
    """The class an argument is an instance of when it is built right there or bound to one just before
    (``strategy = FSDPStrategy(...)``; of several bindings in ``if`` arms, the last one whose arm can run): its
    name, else unknown."""
    if isinstance(arg, ast.Name) and scope.assigns.get(arg.id):
        bindings = scope.assigns[arg.id]
        live = [
            rhs for ln, rhs in bindings
            if r is None or r._branch_may_run(scope, scope.branches.get((arg.id, ln), ()), 0)
        ]  # fmt: skip
        arg = (live or [rhs for _, rhs in bindings])[-1]
    if not isinstance(arg, ast.Call) or not _callee(arg):
        return _UNKNOWN
    stage = next((k.value for k in arg.keywords if k.arg == "stage"), None)
    if _callee(arg) == "DeepSpeedStrategy" and isinstance(stage, ast.Constant) and isinstance(stage.value, int):
        return f"deepspeed_stage_{stage.value}"  # Lightning's registered name for the same strategy
    return _callee(arg)


def _dead_statement_lines(tree: ast.Module, dead: set[int]) -> tuple[tuple[int, int], ...]:
    """The line spans (first, last) of the outermost dead statements, in order."""
    spans: list[tuple[int, int]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) and id(child) in dead:
                spans.append((child.lineno, child.end_lineno or child.lineno))
            else:
                visit(child)

    visit(tree)
    return tuple(spans)


def live_text(code: str, spans: Any) -> str:
    """``code`` with the lines of ``spans`` (:func:`_dead_statement_lines`) blanked; the text as is otherwise."""
    if not isinstance(spans, tuple) or not spans:
        return code
    lines = code.split("\n")
    for first, last in spans:
        for i in range(first - 1, min(last, len(lines))):
            lines[i] = ""
    return "\n".join(lines)


def _unreached_functions(tree: ast.Module, dead: set[int]) -> set[int]:
    """The bodies of module-level functions every call of which sits in dead code (``init_distributed(...)`` only
    under ``if hparams.distributed_run:`` with distributed_run False), followed through two levels of calls."""
    fns = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    out: set[int] = set()
    for _ in range(2):
        calls: dict[str, list[ast.Call]] = {}
        mentions: dict[str, int] = {}  # every use of the name, called or handed on
        for node in walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in fns:
                calls.setdefault(node.func.id, []).append(node)
            elif isinstance(node, ast.Name) and node.id in fns:
                mentions[node.id] = mentions.get(node.id, 0) + 1
        for name, sites in calls.items():
            if mentions.get(name, 0) > len(sites):
                continue  # handed to something (a callback, mp.spawn): cannot tell
            if all(id(c) in dead or id(c) in out for c in sites):
                out.update(id(n) for n in walk(fns[name]))
    return out


def _tf_dataset_chain(receiver: ast.expr, depth: int = 0) -> bool:
    """Whether ``receiver`` is a ``tf.data.Dataset`` built in the same expression: ``tf.data.Dataset.from_tensor_slices
    (x).shuffle(n)``, a chain of dataset methods over ``tf.data``. (``padded_batch`` is tf.data's alone and needs no
    such proof; a bare ``x.batch(n)`` may be anything's.)"""
    if depth > 12:
        return False
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute):
        dotted = _dotted(receiver.func)
        if ".data." in f".{dotted}" and ("Dataset" in dotted or dotted.endswith(("list_files", "TFRecordDataset"))):
            return True  # `tf.data.Dataset.from_tensor_slices(…)`, `tf.data.TFRecordDataset(files)`
        return receiver.func.attr in _TF_DATASET_METHODS and _tf_dataset_chain(receiver.func.value, depth + 1)
    return False


def _split_rank(call: ast.Call) -> int:
    """How surely a dataset loader reads the training data, by the split it asks for: `load_dataset(…,
    split="train")` (2), a validation or test split (0), else 1. The job's evaluation sets come after its
    training set, so the latest loader alone would name the data it is evaluated on."""
    split = _args_of(call, ("split",))
    if not (isinstance(split, ast.Constant) and isinstance(split.value, str)):
        return 1
    said = split.value.lower()
    if said.startswith("train"):
        return 2
    return 0 if said.startswith(("val", "test", "dev", "eval")) else 1


def _loader_rank(call: ast.Call) -> int:
    """How surely a data loader call is the training loader: shuffled or built on "train" data (2), built on
    validation/test data (0), else 1. (The code's own words for its datasets, not a name convention.)"""
    named = _callee(call).lower()  # a loader helper named for its split (`get_test_loader(...)`)
    if any(w in named for w in ("val", "test", "eval")):
        return 0
    if "train" in named:
        return 2
    first = (
        call.args[0]
        if call.args
        else next((k.value for k in call.keywords if k.arg in ("dataset", "root", "data", "path", "data_dir")), None)
    )
    src = ast.unparse(first).lower() if first is not None else ""
    shuffle = _args_of(call, ("shuffle",))
    split = {
        k.value.value.lower() for k in call.keywords
        if k.arg in ("split", "mode", "subset", "phase") and isinstance(k.value, ast.Constant)
        and isinstance(k.value.value, str)
    }  # fmt: skip
    if split & {"val", "valid", "validation", "test", "eval", "dev"}:
        return 0  # `DataLoader(data_dir, batch_size=b, split="test")`
    if "train" in split:
        return 2
    flag = next(  # `DataLoader(datasets.MNIST(root, train=False, ...))`: torchvision's split flag on the dataset
        (k.value.value for n in walk(first) if isinstance(n, ast.Call) for k in n.keywords
         if k.arg == "train" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, bool)),
        None,
    ) if first is not None else None  # fmt: skip
    if flag is not None:
        return 2 if flag else 0
    if any(w in src for w in ("val", "test", "eval")):
        return 0
    if "train" in src:
        return 2  # (a training loader with a distributed sampler passes shuffle=False)
    if isinstance(shuffle, ast.Constant) and shuffle.value is False:
        return 0
    if (isinstance(shuffle, ast.Constant) and shuffle.value is True) or "train" in ast.unparse(call):
        return 2
    return 1


def _is_count(v: Any) -> bool:
    """Whether ``v`` is a positive int (not a bool)."""
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _per_gpu_factor(expr: ast.expr, tree: ast.AST | None = None) -> ast.expr | None:
    """The per-GPU factor of a loader batch written as ``cfg.TRAIN.BATCH_SIZE_PER_GPU * len(gpus)``, or as
    ``args.batch_size * args.number_gpus`` (a factor that counts devices), also through the one attribute the code
    computes it into (``args.effective_batch_size = args.batch_size * args.number_gpus``)."""
    if tree is not None and isinstance(expr, ast.Attribute):
        key = _dotted(expr)
        rhs = [
            n.value for n in walk(tree)
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and _dotted(n.targets[0]) == key
        ]  # fmt: skip
        expr = rhs[0] if len(rhs) == 1 else expr
    if not (isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult)):
        return None
    named = next(
        (side for side in (expr.left, expr.right) if re.search(r"(?i)per_?gpu|per_?device", _dotted(side))), None
    )
    if named is not None:
        return named
    return next(
        (side for side, other in ((expr.left, expr.right), (expr.right, expr.left))
         if _DEVICE_COUNT.search(ast.unparse(other)) and not _DEVICE_COUNT.search(ast.unparse(side))),
        None,
    )  # fmt: skip


def _scaled_from(expr: ast.expr, base: ast.expr | None) -> bool:
    """Whether ``expr`` is ``base`` multiplied by something (``args.batch_size * args.mu`` of ``args.batch_size``)."""
    if base is None or not (isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult)):
        return False
    return ast.dump(base) in (ast.dump(expr.left), ast.dump(expr.right))


def _is_cpu_test(node: ast.Compare, a: Any, b: Any) -> bool:
    """``device.type != "cpu"`` / ``args.device == 'cpu'`` where the device is not known: a test of the device the
    job runs on, which for a GPU job is not the CPU."""
    sides = [(node.left, a, b), (node.comparators[0], b, a)]
    return any(
        value is _UNKNOWN and other == "cpu" and "device" in _dotted(expr).lower() for expr, value, other in sides
    )


def _device_list_size(v: Any) -> int | None:
    """How many devices ``device_ids`` lists: ``[0, 1]``, ``(0, 1, 2, 3)``, or yacs's ``"(0,1,2,3)"`` string."""
    if isinstance(v, list | tuple) and v and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return len(set(v))
    if isinstance(v, str) and re.fullmatch(r"\s*[(\[]?\s*\d{1,3}(?:\s*,\s*\d{1,3})*\s*,?\s*[)\]]?\s*", v):
        return len(set(re.findall(r"\d+", v)))
    return None


def _first_group_rate(call: ast.Call) -> ast.expr | None:
    """An optimizer given parameter groups with their own rates and no default (``SGD(params=[{'params': …, 'lr':
    1 * LR}, {'params': …, 'lr': 2 * LR}])``): the first group's rate, the base the others scale."""
    groups = _args_of(call, ("params",), 0)
    if not (isinstance(groups, ast.List) and groups.elts and isinstance(first := groups.elts[0], ast.Dict)):
        return None
    return next(
        (v for k, v in zip(first.keys, first.values, strict=False) if isinstance(k, ast.Constant) and k.value == "lr"),
        None,
    )


_WRAP_FIELDS: Final = frozenset({"dp_wrap", "ddp_wrap", "fsdp_wrap", "dp_all", "dp_devices"})


def _gated_by_device_count(arms: dict[int, tuple[tuple[ast.expr, bool], ...]], node: ast.AST) -> bool:
    """Whether every ``if`` around ``node`` tests the visible device count (``if with_cuda and
    torch.cuda.device_count() > 1:``: every visible GPU, whatever they are), or there is none."""
    return all(
        any(isinstance(n, ast.Call) and _callee(n) == "device_count" for n in walk(test))
        for test, _ in arms.get(id(node), ())
    )


def _sampler_batch(built: ast.Call) -> ast.expr | None:
    """The batch a sampler object was built with: its ``batch_size=`` keyword (``AspectRatioBasedSampler(data,
    batch_size=2)``), or the second argument of torch's ``BatchSampler(sampler, batch_size, drop_last)``."""
    kw = next((k.value for k in built.keywords if k.arg == "batch_size"), None)
    if kw is None and _callee(built) == "BatchSampler" and len(built.args) >= 2:
        kw = built.args[1]
    return kw


def _arm_taken(r: _Resolver, tree: ast.Module, where: tuple[ast.IfExp, bool]) -> bool | None:
    """Whether the arm of a conditional expression holding a call is the one its test picks (None when the test
    cannot be told)."""
    expr, arm = where
    truth = r._truth(expr.test, _scope_at(r, tree, expr.lineno), expr.lineno, 0)
    return None if truth is None else truth == arm


def _argbind_bound(tree: ast.Module) -> tuple[dict[str, str], dict[int, str]]:
    """argbind's bindings: module names bound to ``argbind.bind(torch.optim.AdamW, "generator", …)`` → the bound
    callable's name (``AdamW``), whose keyword arguments the config gives (``AdamW.lr: 1e-4``); and the calls made
    under ``with argbind.scope(args, "generator"):`` → that scope (``generator/AdamW.lr`` comes first there)."""
    bound: dict[str, str] = {}
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call) and _dotted(stmt.value.func) == "argbind.bind" and stmt.value.args
            and isinstance(target := stmt.value.args[0], ast.Attribute | ast.Name)
        ):  # fmt: skip
            bound[stmt.targets[0].id] = target.attr if isinstance(target, ast.Attribute) else target.id
    scopes: dict[int, str] = {}
    if bound:
        for w in walk(tree):
            if not isinstance(w, ast.With):
                continue
            for item in w.items:
                c = item.context_expr
                if (
                    isinstance(c, ast.Call) and _dotted(c.func) == "argbind.scope" and len(c.args) >= 2
                    and isinstance(c.args[1], ast.Constant) and isinstance(c.args[1].value, str)
                ):  # fmt: skip
                    scopes.update((id(n), c.args[1].value) for stmt in w.body for n in walk(stmt))
    return bound, scopes


def _argbind_key(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> str | None:
    """The config key argbind fills parameter ``name`` of ``fn`` from when ``fn`` is decorated ``@argbind.bind``:
    the bare name ``without_prefix=True``, else ``fn.name`` (``train.batch_size``); None for an undecorated one."""
    for d in fn.decorator_list:
        call = d if isinstance(d, ast.Call) else None
        if _dotted(call.func if call is not None else d) != "argbind.bind":
            continue
        bare = call is not None and any(
            k.arg == "without_prefix" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in call.keywords
        )
        return name if bare else f"{fn.name}.{name}"
    return None


def _argbind_filled(call: ast.Call, name: str, scope: str | None, settings: dict[str, Value]) -> ast.Call:
    """``AdamW(params)`` of an argbind-bound ``AdamW``, with the keyword arguments the config gives it written in
    (the scope's ``generator/AdamW.lr`` over the plain ``AdamW.lr``), as argbind passes them."""
    given = {kw.arg for kw in call.keywords}
    extra: dict[str, Any] = {}
    for prefix in ([f"{scope}/{name}."] if scope else []) + [f"{name}."]:
        for key, v in settings.items():
            kw = key[len(prefix) :]
            if key.startswith(prefix) and kw.isidentifier() and kw not in given and kw not in extra:
                extra[kw] = v.value
    if not extra:
        return call
    keywords = [*call.keywords, *(ast.keyword(arg=k, value=ast.Constant(value=x)) for k, x in extra.items())]
    return ast.copy_location(ast.Call(func=call.func, args=call.args, keywords=keywords), call)


_NOT_GETTERS: Final = frozenset(dir(builtins)) | {"partial", "deepcopy", "copy"}  # `type(self)(…)`, `iter(x)()`


def _torch_amp(func: ast.expr) -> bool:
    """``autocast`` / ``GradScaler`` of torch (``torch.cuda.amp.autocast``, ``amp.GradScaler``, an imported name),
    not an object's method of that name (audiotools' ``accel.autocast()``, Accelerate's
    ``accelerator.autocast()``: mixed precision only where the object's own setting turns it on)."""
    if not isinstance(func, ast.Attribute):
        return True
    root = func.value
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and root.id in ("torch", "amp", "cuda")


def _names_autocast(value: ast.expr) -> bool:
    """``torch.cuda.amp.autocast`` or ``torch.autocast`` itself, not called: a context manager handed on."""
    return isinstance(value, ast.Attribute) and value.attr == "autocast" and _dotted(value).startswith("torch.")


def _rebound_locally(scope: ast.AST, call: ast.Call) -> bool:
    """``autocast = get_autocast(args.precision)`` then ``with autocast():``: the name called is a local variable
    bound to whatever a function returns (maybe ``contextlib.suppress``), not torch's API."""
    if not isinstance(call.func, ast.Name):
        return False
    name = call.func.id
    return any(
        isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
        for n in walk(scope)
    )


def _helper_consumers(ws: Workspace, r: _Resolver, call: ast.Call, file: str) -> list[tuple[str, ast.expr, str]]:
    """Consumers inside a workspace helper the entry script calls (``smart_optimizer(model, name, lr)``), one
    level deep: a consumer argument that is one of the helper's parameters maps to the caller's argument."""
    name = _callee(call)
    if not name or name in r.functions or not isinstance(call.func, ast.Name | ast.Attribute):
        return []
    fn, key = _imported_function(ws, r, name, file), name
    if fn is None and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
        key = f"{call.func.value.id}.{name}"  # `import data_utils as dp; dp.loaders(args)`
        fn = _module_function(ws, r, call.func.value.id, name, file)
    if fn is None and isinstance(call.func, ast.Name) and name[:1].isupper():
        fn, key = _imported_constructor(ws, r, name, file), f"{name}.__init__"  # `trainer = BERTTrainer(bert, …)`
    if fn is None:
        return []
    helper_file = r._helper_files.get(key, "")
    helper_tree = r.parsed(helper_file) if helper_file else None
    params = [p.arg for p in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]]
    if fn.name == "__init__" and params:
        params = params[1:]  # (`self` is not among the call's arguments)
    out: list[tuple[str, ast.expr, str]] = []
    for expr, _ in _accumulation_sites(fn):
        if isinstance(expr, ast.Name) and expr.id in params:
            idx = params.index(expr.id)
            mapped = _args_of(call, (expr.id,), idx if idx < len(fn.args.posonlyargs) + len(fn.args.args) else None)
            if mapped is not None:
                out.append(("grad_accum", mapped, f"{name}() → step every N micro-batches"))
    caller_tree = r.parsed(file)
    shared = _shared_imports(helper_tree, caller_tree) if helper_tree is not None and caller_tree is not None else set()
    sub = _HelperSubstitution(fn, call, params, bound_self=fn.name == "__init__", shared=shared)
    arms = _if_arms(fn)
    parts = _returned_parts(fn)  # `lang_encoder = AutoModel…from_pretrained(…)` handed to the `Flamingo(…)` returned
    loader_ranks: dict[int, int] = {}  # index in out → how surely that loader is the training loader
    for node in walk(fn):
        charge_nodes()
        if not isinstance(node, ast.Call):
            continue
        consumers = [
            c
            for c in _consumers(node)
            if not (c[2] == "create_model()" and helper_tree and _defined_in(ws, helper_tree, helper_file, node))
            and not (c[0] in ("amp_dtype", "amp_enabled") and (_rebound_locally(fn, node) or _without_grad(fn)))
            and not (fn.name == "__init__" and c[0] in ("amp_dtype", "amp_enabled", "cast"))
            and not (fn.name == "__init__" and c[0] in _WRAP_FIELDS and not _gated_by_device_count(arms, node))
        ]  # (the job's own `create_model(config)` builds from a config; it names no architecture; an autocast in a
        # `@torch.no_grad()` helper, an evaluation, says nothing of the precision the model is trained in; nor does a
        # `GradScaler()` a class builds when constructed (ConvNeXt's `NativeScaler()`, used only under `--use_amp`);
        # a constructor's wrap under a test of its own settings (`if len(gpu_ids) > 0:`) decides nothing either)
        if not consumers or not _arms_may_run(r, sub, arms.get(id(node), ()), call):
            continue
        for fieldname, arg, how in consumers:
            if fieldname == "model" and id(node) in parts:
                continue  # a part of the model the helper builds and returns, not the model trained
            mapped = sub.expr(arg, node.lineno)
            if mapped is not None:
                mapped = ast.copy_location(copy.copy(mapped), call)  # a call's own argument: the tree stays as parsed
                ast.fix_missing_locations(mapped)
                out.append((fieldname, mapped, f"{name}() → {how}"))
                if fieldname == "batch":
                    loader_ranks[len(out) - 1] = _loader_rank(node)
    if loader_ranks:  # the helper builds train and test loaders: the batch is the surest training loader's
        best = max(loader_ranks.values())
        out = [c for i, c in enumerate(out) if loader_ranks.get(i, best) == best]
    return out


def _returned_parts(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """Ids of the calls whose results a helper hands to the constructor of the object it returns (OpenFlamingo's
    ``lang_encoder = AutoModelForCausalLM.from_pretrained(…)`` then ``model = Flamingo(vision_encoder,
    lang_encoder, …)``, ``return model, …``): parts of the returned model, not the model itself."""
    bound: dict[str, ast.Call] = {}
    for n in walk(fn):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.value, ast.Call):
            target = n.targets[0]
            if isinstance(target, ast.Name):
                bound[target.id] = n.value
            elif isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
                bound.setdefault(target.elts[0].id, n.value)  # `enc, _, proc = open_clip.create_model_and_…(…)`
    returned: list[ast.Call] = []
    for n in walk(fn):
        if isinstance(n, ast.Return) and n.value is not None:
            first = n.value.elts[0] if isinstance(n.value, ast.Tuple) and n.value.elts else n.value
            call = bound.get(first.id) if isinstance(first, ast.Name) else first
            if isinstance(call, ast.Call):
                returned.append(call)
    handed = {
        a.id for call in returned for a in [*call.args, *(k.value for k in call.keywords)] if isinstance(a, ast.Name)
    }
    return {id(bound[name]) for name in handed if name in bound}


def _without_grad(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``fn`` runs without gradients (``@torch.no_grad()``, ``@torch.inference_mode()``): an evaluation."""
    return any(
        _callee(d) in ("no_grad", "inference_mode") if isinstance(d, ast.Call) else _dotted(d).endswith("no_grad")
        for d in fn.decorator_list
    )


def _shared_imports(helper: ast.Module, caller: ast.Module) -> set[str]:
    """The names two modules bind by the same module-level import (``from hyperparams import Hyperparams as hp`` in
    both): in either file the name is the same object, so a helper's ``hp.batch_size`` means the caller's."""

    def imported(tree: ast.Module) -> dict[str, tuple[str, int, str]]:
        out: dict[str, tuple[str, int, str]] = {}
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    if a.name != "*":
                        out[a.asname or a.name] = (node.module, node.level, a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    out[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], 0, "")
        return out

    mine, theirs = imported(helper), imported(caller)
    return {name for name, origin in mine.items() if theirs.get(name) == origin and origin[1] == 0}


def _namespace_class(cls: ast.ClassDef) -> dict[str, Any] | None:
    """The literals of a class used as a namespace of settings, never instantiated to hold state: no bases but
    ``object``, no methods, only class attributes (``class Hyperparams: lr = 0.001``); None for any other class."""
    if cls.bases and not all(isinstance(b, ast.Name) and b.id == "object" for b in cls.bases):
        return None
    if any(isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for stmt in cls.body):
        return None
    return _class_literals(cls) or None


def _class_literals(cls: ast.ClassDef) -> dict[str, Any]:
    """The class attributes of ``cls`` bound to literals (``lr = 1e-3``, ``batch_size: int = 32``)."""
    fields: dict[str, Any] = {}
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, rhs = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, rhs = stmt.target, stmt.value
        else:
            continue
        if isinstance(target, ast.Name) and (v := _literal(rhs)) is not _UNKNOWN:
            fields[target.id] = v
    return fields


class _HelperSubstitution:
    """A helper's expression rewritten in its caller's terms: parameters become the call's arguments, locals
    assigned once before the use become their values (``learning_rate = 0.3 * args.batch_size / 256``), literals
    stay; anything else cannot be told (None)."""

    def __init__(
        self,
        fn: ast.FunctionDef | ast.AsyncFunctionDef,
        call: ast.Call,
        params: list[str],
        *,
        bound_self: bool = False,
        shared: Collection[str] = (),
    ) -> None:
        self.call = call
        self.params = params
        self.shared = shared  # names both files import from the same place (`from hyperparams import Hparams as hp`)
        self.n_positional = len(fn.args.posonlyargs) + len(fn.args.args) - int(bound_self)
        self.locals: dict[str, list[tuple[int, ast.expr]]] = {}
        for node in walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.locals.setdefault(node.targets[0].id, []).append((node.lineno, node.value))

    def expr(self, node: ast.expr, line: int, depth: int = 0) -> ast.expr | None:
        if depth > 6:
            return None
        if isinstance(node, ast.Constant):
            return ast.Constant(node.value)
        if isinstance(node, ast.Name):
            if node.id in self.params:
                idx = self.params.index(node.id)
                return _args_of(self.call, (node.id,), idx if idx < self.n_positional else None)
            earlier = [(ln, v) for ln, v in self.locals.get(node.id, []) if ln < line]
            if len(self.locals.get(node.id, [])) == 1 and earlier:
                return self.expr(earlier[0][1], earlier[0][0], depth + 1)
            if node.id in self.shared and node.id not in self.locals:
                return ast.Name(id=node.id, ctx=ast.Load())  # the same module's object in the caller as in the helper
            return None
        if isinstance(node, ast.Attribute) and node.attr == "batch_size" and isinstance(node.value, ast.Name):
            built = [(ln, v) for ln, v in self.locals.get(node.value.id, []) if ln < line]
            if len(built) == 1 and isinstance(built[0][1], ast.Call) and (b := _sampler_batch(built[0][1])) is not None:
                return self.expr(b, built[0][0], depth + 1)  # `batch_sampler = BatchSampler(sampler, batch_size, …)`
        if isinstance(node, ast.Attribute):  # config.TRAIN.BASE_LR where config is a parameter
            base = self.expr(node.value, line, depth + 1)
            return None if base is None else ast.Attribute(value=base, attr=node.attr, ctx=ast.Load())
        if isinstance(node, ast.BinOp):
            left, right = self.expr(node.left, line, depth + 1), self.expr(node.right, line, depth + 1)
            return None if left is None or right is None else ast.BinOp(left=left, op=node.op, right=right)
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand, line, depth + 1)
            return None if operand is None else ast.UnaryOp(op=node.op, operand=operand)
        if isinstance(node, ast.Compare) and len(node.comparators) == 1:
            left, right = self.expr(node.left, line, depth + 1), self.expr(node.comparators[0], line, depth + 1)
            if left is None or right is None:
                return None
            return ast.Compare(left=left, ops=node.ops, comparators=[right])
        return None


def _if_arms(fn: ast.AST) -> dict[int, tuple[tuple[ast.expr, bool], ...]]:
    """For every node inside an ``if`` of ``fn``: the tests around it and whether it sits in the true arm."""
    out: dict[int, tuple[tuple[ast.expr, bool], ...]] = {}

    def visit(node: ast.AST, around: tuple[tuple[ast.expr, bool], ...]) -> None:
        if isinstance(node, ast.If):
            for stmt in node.body:
                visit(stmt, (*around, (node.test, True)))
            for stmt in node.orelse:
                visit(stmt, (*around, (node.test, False)))
            return
        out[id(node)] = around
        for child in ast.iter_child_nodes(node):
            visit(child, around)

    visit(fn, ())
    return out


def _arms_may_run(
    r: _Resolver, sub: _HelperSubstitution, around: tuple[tuple[ast.expr, bool], ...], call: ast.Call
) -> bool:
    """False when a test around a consumer, told in the caller's terms, picks the other arm
    (``if args.optimizer == "Adam":`` with ``optimizer: LARS`` in the job's config)."""
    tree = r.module.node
    if not isinstance(tree, ast.Module):
        return True
    scope = _scope_at(r, tree, call.lineno)
    for test, arm in around:
        mapped = sub.expr(test, test.lineno)
        if mapped is None:
            continue
        mapped = ast.copy_location(copy.copy(mapped), call)
        ast.fix_missing_locations(mapped)
        truth = r._truth(mapped, scope, call.lineno, 1)
        if truth is not None and truth != arm:
            return False
    return True


def _imported_trees(ws: Workspace, r: _Resolver, file: str) -> Iterator[tuple[str, ast.Module]]:
    """The workspace modules the entry script imports from (one level), parsed."""
    seen: set[str] = set()
    for node in walk(r.module.node):
        if isinstance(node, ast.ImportFrom | ast.Import):
            mods = (
                [(node.module or "", node.level)]
                if isinstance(node, ast.ImportFrom)
                else [(a.name, 0) for a in node.names]
            )
            for mod, level in mods:
                path = ws.module_file(mod, level, file)
                if not path or path in seen or len(seen) >= 12:
                    continue
                seen.add(path)
                if (tree := r.parsed(path)) is not None:
                    yield path, tree


_Def = TypeVar("_Def", ast.FunctionDef, ast.ClassDef)


def _top_level(r: _Resolver, path: str | None, kind: type[_Def], name: str) -> _Def | None:
    """The module-level function or class ``name`` of the workspace module at ``path`` (None: no such definition)."""
    mod = r.parsed(path) if path else None
    return next((d for d in (mod.body if mod else []) if isinstance(d, kind) and d.name == name), None)


def _is_parameter(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    a = fn.args
    return name in [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]]


_CONFIG_FILE_DECORATORS: Final = frozenset({"use_yaml_config", "use_json_config", "use_toml_config", "use_config"})
_CLI_DECORATORS: Final = frozenset({"click.command", "click.group", "command"})  # a click entry's parameters are
# its options (`@click.option('-p', '--config_path', default=…)`), read as the command line gives them


_BUILTIN_TYPES: Final[dict[str, type | tuple[type, ...]]] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "dict": dict,
    "list": list,
    "tuple": tuple,
    "Sequence": (list, tuple, str),
    "Mapping": dict,
    "ListConfig": (list, tuple),
    "DictConfig": dict,
}  # fmt: skip  (the abstract kinds a config value is tested against: `isinstance(n_devices, Sequence)`)
_BUILTIN_CALLS: Final = frozenset({"open", "print", "len", "str", "int", "float", "list", "tuple", "dict", "set"})


def _hands_back_first(r: _Resolver, fn: ast.FunctionDef, module: str | None, hops: int = 1) -> bool:
    """Whether ``fn`` returns its first parameter as it came (``return file``, after at most ``file = str(file)``),
    or what a function of its module that does so makes of it (``return check_file(file, suffix)``): a helper that
    checks or fetches a file and hands back its path."""
    if not fn.args.args:
        return False
    if (key := (id(fn), hops)) in r._hands_back:
        return r._hands_back[key]
    first = fn.args.args[0].arg
    ret = min(
        (n for n in walk(fn) if isinstance(n, ast.Return) and n.value is not None), key=lambda n: n.lineno, default=None
    )  # the first return in the text: the path where the file is there as given
    rebound = [
        n for n in walk(fn)
        if isinstance(n, ast.Assign) and ret is not None and n.lineno < ret.lineno
        and any(isinstance(t, ast.Name) and t.id == first for t in n.targets)
    ]  # fmt: skip
    passes = ret is not None and all(
        isinstance(n.value, ast.Call)
        and _callee(n.value) == "str"
        and len(n.value.args) == 1
        and isinstance(n.value.args[0], ast.Name)
        and n.value.args[0].id == first
        for n in rebound
    )  # fmt: skip  (`file = download(file)` before it: what comes back is something else)
    found = False
    if passes and ret is not None and isinstance(ret.value, ast.Name):
        found = ret.value.id == first
    elif passes and ret is not None and isinstance(call := ret.value, ast.Call) and (
        hops > 0 and isinstance(call.func, ast.Name) and call.args
        and isinstance(call.args[0], ast.Name) and call.args[0].id == first
    ):  # fmt: skip
        inner = _top_level(r, module, ast.FunctionDef, call.func.id)
        found = inner is not None and inner is not fn and _hands_back_first(r, inner, module, hops - 1)
    r._hands_back[key] = found
    return found


def _imported_function(ws: Workspace, r: _Resolver, name: str, file: str) -> ast.FunctionDef | None:
    """The definition of ``name`` imported into the entry script from a workspace module (looked up once)."""
    if name not in r._helpers:
        r._helpers[name] = None
        if (imported := r.imports().get(name)) is not None and imported[1] >= 0:
            module, level, real = imported
            path = ws.module_file(module, level, file)
            for _ in range(2):  # the module, then the sibling a package's `__init__.py` re-exports it from
                r._helpers[name] = _top_level(r, path, ast.FunctionDef, real)
                r._helper_files[name] = path or ""
                if r._helpers[name] is not None or path is None or (again := _reexport(r, path, real)) is None:
                    break
                path = ws.module_file(again.module or "", again.level, path)  # (`from .build import build_optimizer`)
        elif imported is None and isinstance(r.module.node, ast.Module):  # `from model import *` then `unet()`
            for node in r.module.node.body:
                if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                    path = ws.module_file(node.module or "", node.level, file)
                    if (fn := _top_level(r, path, ast.FunctionDef, name)) is not None:
                        r._helpers[name], r._helper_files[name] = fn, path or ""
                        break
    return r._helpers[name]


def _imported_constructor(ws: Workspace, r: _Resolver, name: str, file: str) -> ast.FunctionDef | None:
    """The ``__init__`` of a class of the job's the entry script imports from a workspace module (a trainer class
    that wraps the model and builds its optimizer), also where that module re-exports it from a sibling
    (``from .pretrain import BERTTrainer`` in a package's ``__init__.py``); looked up once."""
    key = f"{name}.__init__"
    if key not in r._helpers:
        r._helpers[key] = None
        if (imported := r.imports().get(name)) is not None and imported[1] >= 0:
            module, level, real = imported
            path = ws.module_file(module, level, file)
            for _ in range(2):  # the module, then the sibling it re-exports the class from
                cls = _top_level(r, path, ast.ClassDef, real)
                if cls is not None:
                    r._helpers[key] = next(
                        (d for d in cls.body if isinstance(d, ast.FunctionDef) and d.name == "__init__"), None
                    )
                    r._helper_files[key] = path or ""
                    break
                again = _reexport(r, path, real) if path else None
                if again is None or path is None:
                    break
                path = ws.module_file(again.module or "", again.level, path)
    return r._helpers[key]


def _reexport(r: _Resolver, path: str, real: str) -> ast.ImportFrom | None:
    """The ``from .sibling import real`` by which the module at ``path`` re-exports ``real`` (a package's
    ``__init__.py``), or None."""
    mod = r.parsed(path)
    return next(
        (
            d
            for d in (mod.body if mod else [])
            if isinstance(d, ast.ImportFrom) and any(a.name == real for a in d.names)
        ),
        None,
    )


def _module_function(ws: Workspace, r: _Resolver, alias: str, name: str, file: str) -> ast.FunctionDef | None:
    """The definition of ``alias.name`` where ``alias`` is a workspace module the entry script imports whole
    (``import dlrm_data_pytorch as dp``), looked up once."""
    key = f"{alias}.{name}"
    if key not in r._helpers:
        r._helpers[key] = None
        if (imported := r.imports().get(alias)) is not None and imported[1] < 0:
            path = ws.module_file(imported[2], 0, file)
            r._helpers[key] = _top_level(r, path, ast.FunctionDef, name)
            r._helper_files[key] = path or ""
    return r._helpers[key]


_PER_EPOCH: Final = re.compile(r"iter|step|batch|size|len")  # `epoch_iters`, `steps_per_epoch`, `epoch_size`


_EP_WORD: Final = re.compile(r"(?i)(?:\w+_)?ep|(?:n|num|max|total)_?ep")  # `ep`, `max_ep`, `n_ep`, `args.ep`


def _epoch_loops(tree: ast.AST) -> Iterator[tuple[ast.Call, int]]:
    """``for epoch in range(…, N)``: the loop the code itself names the epoch loop."""
    for node in walk(tree):
        if not (
            isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and _callee(node.iter) == "range"
            and node.iter.args
        ):  # fmt: skip
            continue
        named = isinstance(node.target, ast.Name) and "epoch" in node.target.id.lower()
        bound = node.iter.args[-1] if len(node.iter.args) <= 2 else node.iter.args[1]
        words = [
            (n.id if isinstance(n, ast.Name) else n.attr)
            for n in walk(bound)
            if isinstance(n, ast.Name | ast.Attribute)
        ]
        named = named or (  # `for ep in range(start_ep, args.ep)`: "ep" for the epoch on both sides (not episodes)
            isinstance(node.target, ast.Name) and _EP_WORD.fullmatch(node.target.id) is not None
            and any(_EP_WORD.fullmatch(w) for w in words) and not any("episode" in w.lower() for w in words)
        )  # fmt: skip
        bounded = any(  # `for i in range(n_epoch)`, `range(args.epochs)`: the bound is the epoch count
            "epoch" in (word := w.lower())
            and not _PER_EPOCH.search(word)  # `range(cfg.TRAIN.epoch_iters)` counts the steps of one epoch
            for w in words
        )
        start_known = len(node.iter.args) == 1 or isinstance(node.iter.args[0], ast.Constant)
        if named or (bounded and start_known and not _trains_each_pass(node)):
            yield node.iter, node.lineno


_DEVICE_WORD: Final = re.compile(r"(?i)gpu|device|rank|world|nproc")


def _process_loops(tree: ast.AST, dead: set[int]) -> Iterator[tuple[ast.expr, int]]:
    """``for device_id in range(nb_gpu): mp.Process(target=…, args=(…, device_id, …)).start()``: a worker process
    per device the loop counts (the bound or the loop variable names devices or ranks, not data workers)."""
    for node in walk(tree):
        if not (
            isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and _callee(node.iter) == "range"
            and len(node.iter.args) == 1
        ):  # fmt: skip
            continue
        words = [_dotted(n) for n in walk(node.iter.args[0]) if isinstance(n, ast.Name | ast.Attribute)]
        if isinstance(node.target, ast.Name):
            words.append(node.target.id)
        if any(_DEVICE_WORD.search(w) for w in words) and any(
            isinstance(n, ast.Call) and _callee(n) == "Process" and id(n) not in dead
            and any(k.arg == "target" for k in n.keywords)
            for n in _own_body(node)
        ):  # fmt: skip
            yield node.iter.args[0], node.lineno


def _own_body(loop: ast.For | ast.While) -> Iterator[ast.AST]:
    """The nodes of a loop's body that run once per pass of this loop (not inside a loop nested in it)."""
    stack: list[ast.AST] = list(loop.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.For | ast.While | ast.AsyncFor | ast.FunctionDef | ast.AsyncFunctionDef):
            stack.extend(ast.iter_child_nodes(node))


def _trains_each_pass(loop: ast.For | ast.While) -> bool:
    """Whether each pass of the loop is one optimisation step: it calls ``.backward()`` and ``.step()`` itself (a
    gradient-accumulation loop only back-propagates; an epoch loop does both in the loop over batches it holds)."""
    called = {n.func.attr for n in _own_body(loop) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    if any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and "backward" in n.func.id for n in _own_body(loop)
    ):  # fmt: skip
        called.add("backward")  # Megatron's `forward_backward_func(...)` back-propagates the micro-batches
    plus_one = any(  # `range(N + 1)`: a last pass that evaluates or saves, not a step (llm.c's last_step)
        isinstance(a, ast.BinOp) and isinstance(a.op, ast.Add) and isinstance(a.right, ast.Constant)
        for a in (loop.iter.args if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) else [])
    )
    if "step" in called and "backward" not in called and not plus_one:  # accumulation: backward per micro-batch
        called |= {n.func.attr for n in walk(loop) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    if any(c.startswith("step_") for c in called):
        called.add("step")  # a scheduled optimizer's `optimizer.step_and_update_lr()` (the Transformer's Noam wrapper)
    return {"backward", "step"} <= called and not _steps_every_nth_pass(loop)


def _steps_every_nth_pass(loop: ast.For | ast.While) -> bool:
    """Whether the loop's backward passes and optimizer steps all sit under a test with a modulo (``if global_step %
    train_frequency == 0:``): a pass is an environment step, and only every N-th pass learns. (Gradient accumulation
    back-propagates every pass and gates only the step: its passes are micro-batches, counted as before.)"""
    gated: set[int] = set()  # (one pass: `_own_body` yields an `if` before the nodes under it)
    learns = 0
    for node in _own_body(loop):
        if isinstance(node, ast.If) and any(
            isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in walk(node.test)
        ):
            gated.update(id(n) for stmt in node.body for n in walk(stmt))
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("step", "backward") and not node.args
        ):  # fmt: skip
            if id(node) not in gated:
                return False
            learns += 1
    return learns > 0


def _step_loops(tree: ast.AST, tf_ops: Collection[str] = ()) -> Iterator[tuple[ast.Call, int]]:
    """``for it in range(start, N)`` (or ``trange``, ``tqdm(range())``) whose every pass back-propagates and steps
    the optimizer, or runs a TF1 training op (``tf_ops``): an iteration loop, N - start optimisation steps (a loop
    named for epochs is the epoch loop)."""
    bound: dict[str, list[tuple[int, ast.Call]]] = {}  # `bar = tqdm(range(n))` then `for step in bar:`
    for node in walk(tree):
        if (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call) and _callee(node.value) in ("tqdm", "range", "trange")
        ):  # fmt: skip
            bound.setdefault(node.targets[0].id, []).append((node.lineno, node.value))
        if isinstance(node, ast.With):  # `with tqdm(range(args.iter)) as pbar: for i in pbar:`
            for item in node.items:
                if (
                    isinstance(item.context_expr, ast.Call) and _callee(item.context_expr) in ("tqdm", "trange")
                    and isinstance(item.optional_vars, ast.Name)
                ):  # fmt: skip
                    bound.setdefault(item.optional_vars.id, []).append((node.lineno, item.context_expr))
    epoch_loops = [
        outer for outer in walk(tree)
        if isinstance(outer, ast.For) and isinstance(outer.target, ast.Name) and "epoch" in outer.target.id.lower()
    ]  # fmt: skip
    called = {_callee(c) for loop in epoch_loops for c in walk(loop) if isinstance(c, ast.Call)}
    per_epoch_functions = [  # `for epoch in range(E): train(...)` with `def train(...): for it in range(n): step`
        f for f in walk(tree) if isinstance(f, ast.FunctionDef) and f.name in called
    ]
    in_epochs = {  # a loop inside the epoch loop (or a function it calls) counts one epoch's steps, not the budget
        id(inner) for outer in [*epoch_loops, *per_epoch_functions] for inner in walk(outer) if inner is not outer
    }
    for node in walk(tree):
        if not isinstance(node, ast.For) or id(node) in in_epochs:
            continue
        if not (_trains_each_pass(node) or _runs_train_op(node, tf_ops)):
            continue
        if isinstance(node.target, ast.Name) and "epoch" in node.target.id.lower():
            continue
        if isinstance(node.iter, ast.Name) and (
            earlier := [c for ln, c in bound.get(node.iter.id, []) if ln < node.lineno]
        ):
            rng = earlier[-1]
        elif isinstance(node.iter, ast.Call):
            rng = node.iter
        else:
            continue
        if _callee(rng) == "tqdm" and rng.args and isinstance(rng.args[0], ast.Call):
            rng = rng.args[0]
        if _callee(rng) in ("range", "trange") and rng.args:
            yield rng, node.lineno


def _splatted_dict_filled(call: ast.Call, scope: _Scope) -> ast.Call:
    """``create_model(**create_model_args)`` with ``create_model_args = dict(model_name=args.model, …)`` (or a
    ``{"model_name": …}`` literal) bound before it: the call with those keyword arguments written out (timm's
    train.py), keywords given explicitly winning; the call itself when no ``**`` name is bound so."""
    splats = [k for k in call.keywords if k.arg is None]
    if not splats or not all(isinstance(k.value, ast.Name) for k in splats):
        return call  # (`**vars(args)`, `**cfg.kwargs`: not a dict bound by name here)
    keywords = [k for k in call.keywords if k.arg is not None]
    stated = {k.arg for k in keywords}
    for splat in splats:
        name = splat.value.id if isinstance(splat.value, ast.Name) else ""
        hit = _assigned(scope, name, call.lineno)
        rhs = hit[2] if hit is not None else None
        pairs: list[tuple[str, ast.expr]] = []
        if isinstance(rhs, ast.Call) and isinstance(rhs.func, ast.Name) and rhs.func.id == "dict" and not rhs.args:
            pairs = [(k.arg, k.value) for k in rhs.keywords if k.arg is not None]
        elif isinstance(rhs, ast.Dict):
            pairs = [
                (k.value, v) for k, v in zip(rhs.keys, rhs.values, strict=False)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            ]  # fmt: skip
        else:
            return call  # a dict we cannot read: the call as written
        keywords += [ast.keyword(arg=k, value=v) for k, v in pairs if k not in stated]
    return ast.copy_location(ast.Call(func=call.func, args=call.args, keywords=keywords), call)


def _assigned(scope: _Scope, name: str, line: int) -> tuple[_Scope, int, ast.expr] | None:
    """The last assignment of ``name`` before ``line`` in ``scope`` or a scope around it."""
    s: _Scope | None = scope
    while s is not None:
        hits = [(ln, rhs) for ln, rhs in s.assigns.get(name, []) if s is not scope or ln < line]
        if hits:
            return (s, *hits[-1])
        s = s.parent
    return None


def _per_epoch(node: ast.expr, scope: _Scope, line: int) -> bool:
    """Whether ``node`` counts the steps of one epoch: ``len(loader)``, ``ceil(len(dataset) / batch_size)``, or a
    name bound to one (``epoch_size``, ``steps_per_epoch``)."""
    if isinstance(node, ast.Name) and (hit := _assigned(scope, node.id, line)) is not None:
        node = hit[2]
    if isinstance(node, ast.Attribute) and _EPOCH_LENGTH.fullmatch(node.attr):
        return True  # `imdb.batch_per_epoch`: a loader object's own count of one epoch's batches
    return any(isinstance(n, ast.Call) and _callee(n) == "len" for n in walk(node))


_EPOCH_LENGTH: Final = re.compile(r"(?i)\w*(?:per_epoch|epoch_(?:size|len|length|iters?|steps|batches))")


def _epochs_of_budget(r: _Resolver, stop: ast.expr, scope: _Scope, line: int) -> int | None:
    """The epochs in a step budget written as their product with the steps of one epoch (``max_iter = max_epoch *
    epoch_size``, ``range(args.epochs * len(loader))``): the factor that is not the epoch's length."""
    at_scope, at_line = scope, line
    if isinstance(stop, ast.Name) and (hit := _assigned(scope, stop.id, line)) is not None:
        at_scope, at_line, stop = hit
    if not (isinstance(stop, ast.BinOp) and isinstance(stop.op, ast.Mult)):
        return None
    for each, count in ((stop.left, stop.right), (stop.right, stop.left)):
        if _per_epoch(each, at_scope, at_line) and not _per_epoch(count, at_scope, at_line):
            n = r.value(count, at_scope, at_line)
            if isinstance(n, int) and not isinstance(n, bool) and 0 < n < 1_000_000:
                return n
    return None


def _iterator_epoch_limits(tree: ast.AST) -> Iterator[tuple[ast.expr, int]]:
    """``for i, batch in enumerate(iterator): … if int(iterator.epoch) == args.epoch: break``: a loop over a data
    iterator that repeats itself (torchtext's ``BucketIterator``), stopped when the epoch counter it keeps reaches a
    bound: that bound is the epoch count."""
    for loop in walk(tree):
        if not isinstance(loop, ast.For) or not _trains_each_pass(loop):
            continue
        source = loop.iter
        if isinstance(source, ast.Call) and _callee(source) == "enumerate" and source.args:
            source = source.args[0]
        if not isinstance(source, ast.Name | ast.Attribute):
            continue
        held = _dotted(source)

        def reads_epoch(expr: ast.expr, held: str = held) -> bool:
            return any(
                isinstance(n, ast.Attribute) and n.attr == "epoch" and _dotted(n.value) == held for n in walk(expr)
            )

        body = list(_own_body(loop))
        counters = {
            t.id for n in body if isinstance(n, ast.Assign) and reads_epoch(n.value)
            for t in n.targets if isinstance(t, ast.Name)
        }  # fmt: skip
        for n in body:
            if (
                isinstance(n, ast.If) and isinstance(n.test, ast.Compare) and len(n.test.ops) == 1
                and isinstance(n.test.ops[0], ast.GtE | ast.Eq)
                and (reads_epoch(n.test.left) or (isinstance(n.test.left, ast.Name) and n.test.left.id in counters))
                and any(isinstance(b, ast.Return | ast.Break) for b in n.body)
            ):  # fmt: skip
                yield n.test.comparators[0], n.lineno


def _counter_limits(tree: ast.AST, tf_ops: Collection[str] = ()) -> Iterator[tuple[ast.expr, int]]:
    """``for batch in loader: … it += 1 … if it >= N: return``: a counter the training loop advances once per batch,
    and the bound at which it stops training. ``tf_ops``: the names TF1 code binds its training ops to (a ``while``
    loop whose pass runs one, ``sess.run([model.opt_op, …])``, is a training loop too)."""
    for loop in walk(tree):
        if not (
            (isinstance(loop, ast.For) and _trains_each_pass(loop))
            or (isinstance(loop, ast.For | ast.While) and _runs_train_op(loop, tf_ops))
        ):
            continue
        body = list(_own_body(loop))
        counted = {
            _dotted(n.target) for n in body
            if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add)
            and isinstance(n.target, ast.Name | ast.Attribute) and isinstance(n.value, ast.Constant)
            and n.value.value == 1
        } - {""}  # fmt: skip
        for n in body:
            if (
                isinstance(n, ast.If) and isinstance(n.test, ast.Compare) and len(n.test.ops) == 1
                and isinstance(n.test.ops[0], ast.GtE | ast.Gt | ast.Eq) and _dotted(n.test.left) in counted
                and any(_stops(b) for b in n.body)
            ):  # fmt: skip
                yield n.test.comparators[0], n.lineno


def _tf1_train_ops(trees: Iterable[ast.AST]) -> set[str]:
    """The names TF1 code binds its training ops to: the target of ``optimizer.minimize(loss)`` or
    ``optimizer.apply_gradients(grads)`` (``train_op = …``, ``self.opt_op = …``)."""
    out: set[str] = set()
    for tree in trees:
        for n in walk(tree):
            if (
                isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                and _callee(n.value) in ("minimize", "apply_gradients")
            ):  # fmt: skip
                out |= {
                    t.id if isinstance(t, ast.Name) else t.attr
                    for t in n.targets
                    if isinstance(t, ast.Name | ast.Attribute)
                }
    return out


def _runs_train_op(loop: ast.For | ast.While, tf_ops: Collection[str]) -> bool:
    """Whether each pass of ``loop`` runs a TF1 training op: ``sess.run([merged, model.opt_op, …], feed_dict=…)``."""
    if not tf_ops:
        return False
    for n in _own_body(loop):
        if isinstance(n, ast.Call) and _callee(n) == "run" and isinstance(n.func, ast.Attribute) and n.args:
            names = {
                x.id if isinstance(x, ast.Name) else x.attr
                for x in walk(n.args[0])
                if isinstance(x, ast.Name | ast.Attribute)
            }
            if names & set(tf_ops):
                return True
    return False


def _stops(stmt: ast.stmt) -> bool:
    """Whether a statement ends the training loop: ``return``, ``break``, or ending the process (``quit()``,
    ``exit()``, ``sys.exit()``, ``os._exit()``)."""
    if isinstance(stmt, ast.Return | ast.Break):
        return True
    return (
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
        and _dotted(stmt.value.func) in ("quit", "exit", "sys.exit", "os._exit")
    )  # fmt: skip


def _divided_by_devices(rhs: ast.expr, attr: str) -> bool:
    """Whether ``rhs`` is ``self.<attr>`` divided by a count of processes or devices (``int(self.batch_size /
    num_processes)``)."""
    while isinstance(rhs, ast.Call) and _callee(rhs) in ("int", "ceil", "floor", "round") and len(rhs.args) == 1:
        rhs = rhs.args[0]
    return (
        isinstance(rhs, ast.BinOp) and isinstance(rhs.op, ast.Div | ast.FloorDiv)
        and _dotted(rhs.left) == f"self.{attr}" and _DEVICE_COUNT.search(ast.unparse(rhs.right)) is not None
    )  # fmt: skip


def find_uses(
    ws: Workspace,
    code: str,
    file: str,
    argv: list[str],
    settings: dict[str, Value],
    world_size: int | None = None,
    visible_gpus: int | None = None,
    config_classes: dict[str, str] | None = None,
    self_attrs: dict[str, Value] | None = None,
) -> dict[str, Use]:
    """Every hyper-parameter a consumer API in ``code`` receives whose value can be told, by field.

    Fields: ``batch`` (per process), ``lr``, ``epochs``, ``max_steps``, ``grad_accum``, ``model``,
    ``dataset``, ``fp16``, ``bf16``, ``precision``, ``amp_dtype``, ``devices``, ``deepspeed``.
    The latest use in the file wins (training comes after setup).
    """
    try:
        tree = parse(code)
    except (SyntaxError, ValueError):
        return {}
    r = _Resolver(ws, tree, file, argv, settings, world_size, visible_gpus)
    r.config_classes = config_classes or {}
    r.self_attrs = self_attrs or {}
    if r.self_attrs:
        r.self_split = {
            t.attr for n in walk(tree)
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(t := n.targets[0], ast.Attribute)
            and _dotted(t.value) == "self" and t.attr in r.self_attrs and _divided_by_devices(n.value, t.attr)
        }  # fmt: skip
    out: dict[str, Use] = {}
    if visible_gpus is None and (narrowed := _visible_set_here(r, tree)) is not None:
        r.visible_gpus = narrowed[0]  # `os.environ['CUDA_VISIBLE_DEVICES'] = config.GPU`: what device_count() sees
        out["visible_gpus"] = Use(narrowed[0], file, narrowed[1], "os.environ['CUDA_VISIBLE_DEVICES'] = …")
    ranks: dict[str, int] = {}
    batch_args: dict[int, ast.expr] = {}  # line → the batch expression of the loader kept there
    dead = _dead_code(r, tree)
    dead |= _unreached_functions(tree, dead)
    if spans := _dead_statement_lines(tree, dead):  # the entry's lines that cannot run (wording there says nothing)
        out["dead_lines"] = Use(spans, file, spans[0][0], "statements in arms the settings rule out")
    binds, bind_scopes = _argbind_bound(tree)
    load_dtypes: dict[int, str] = {}  # line of a `from_pretrained(…)` → the dtype it loads the weights in
    training_loader = any(  # a loader on training data exists: an evaluation loader's batch is never the job's
        isinstance(n, ast.Call) and id(n) not in dead and _is_loader(_callee(n)) and _loader_rank(n) > 0
        for n in walk(tree)
    )
    cast_in_loop = {  # `for mod in self.modules(): mod.half()`: the model's layers cast one by one (airbench)
        loop.target.id for loop in walk(tree)
        if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and isinstance(loop.iter, ast.Call)
        and _callee(loop.iter) in ("modules", "children") and not loop.iter.args
    }  # fmt: skip
    frozen = _frozen_modules(tree) | _loaded_not_optimized(tree)
    in_ifexp = {  # a call in an arm of a conditional expression → (the expression, whether in its true arm)
        id(n): (e, arm) for e in walk(tree) if isinstance(e, ast.IfExp)
        for arm, part in ((True, e.body), (False, e.orelse)) for n in walk(part)
    }  # fmt: skip
    held_by = {  # a call → the name its statement binds (`vae = AutoencoderKL.from_pretrained(…).to(device)`)
        id(c): stmt.targets[0].id for stmt in walk(tree)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
        for c in walk(stmt.value) if isinstance(c, ast.Call)
    } if frozen else {}  # fmt: skip
    for node in walk(tree):
        charge_nodes()
        if isinstance(node, ast.Call) and (
            _callee(node) in _PEFT_CALLS
            or (  # `PeftModel.from_pretrained(model, peft_path)`: adapters trained before, loaded onto the model
                _callee(node) == "from_pretrained"
                and isinstance(node.func, ast.Attribute)
                and re.fullmatch(r"(?:\w+\.)*(?:PeftModel\w*|AutoPeftModel\w*)", ast.unparse(node.func.value))
                is not None
            )
        ):  # adapters built where the code runs, or only
            live = id(node) not in dead  # in an arm the settings rule out (`if training_args.use_lora:`, off)
            if live or "peft" not in out:
                out["peft"] = Use(live, file, node.lineno, f"{_callee(node)}() {'runs' if live else 'in dead code'}")
        if (
            isinstance(node, ast.Assign) and id(node) not in dead and _names_autocast(node.value)
            and "amp_dtype" not in out
        ):  # fmt: skip
            said = f"{_dotted(node.value)} bound where the code runs (called later as a context manager)"
            out["amp_dtype"] = Use("float16", file, node.lineno, said)  # (timm's `amp_autocast = torch.cuda.amp.
            # autocast` under `use_amp == "native"`): CUDA autocast with no dtype is float16
        if not isinstance(node, ast.Call) or id(node) in dead:
            continue
        scope, callee = _scope_at(r, tree, node.lineno), _callee(node)
        if callee == "from_pretrained" and (dtype := _load_dtype(r, tree, node, scope)) is not None:
            load_dtypes[node.lineno] = dtype  # `from_pretrained(path, **{'torch_dtype': getattr(torch, cfg.dtype)})`
        if callee == "from_pretrained" and "device_map" not in out:  # `device_map="auto"`: HF places the layers over
            spread = next((k.value for k in node.keywords if k.arg == "device_map"), None)  # every GPU one process
            how = r.value(spread, scope, node.lineno) if spread is not None else None  # sees (model parallel)
            if how in ("auto", "balanced", "balanced_low_0", "sequential"):
                out["device_map"] = Use(how, file, node.lineno, f"from_pretrained(device_map={how!r})")
        built_with_arguments = bool(node.args or node.keywords)  # (a bare `Trainer` reference builds nothing)
        if (
            re.fullmatch(r"[A-Z]\w*Trainer", callee) and callee not in _LIBRARY_TRAINERS and built_with_arguments
            and "own_trainer" not in out
        ):  # fmt: skip
            out["own_trainer"] = Use(callee, file, node.lineno, f"{callee}(...) where the code runs")
        if callee in _LIBRARY_TRAINERS and built_with_arguments:  # the trainer built where the code runs; two
            prior = out.get("trainer_built")  # different ones that may both run say nothing
            built = callee if prior is None or prior.value == callee else None
            out["trainer_built"] = Use(built, file, node.lineno, f"{callee}(...) where the code runs")
        if (
            _callee(node) in ("half", "bfloat16") and not node.args and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id in cast_in_loop and "cast" not in out
        ):  # fmt: skip
            said = f"{node.func.value.id}.{_callee(node)}() for each of a module's layers"
            out["cast"] = Use("fp16" if _callee(node) == "half" else "bf16", file, node.lineno, said)
        if _callee(node) in ("spawn", "start_processes") and "spawn" not in out:
            out["spawn"] = Use(True, file, node.lineno, "starts worker processes (not in a dead branch)")
            procs = next((k.value for k in node.keywords if k.arg == "nprocs"), None)
            n = r.value(procs, scope, node.lineno) if procs is not None else None
            if isinstance(n, int) and not isinstance(n, bool) and 1 < n <= 4096:  # (one per node: a multi-node
                out["processes"] = Use(n, file, node.lineno, "mp.spawn(fn, nprocs=N): one worker process each")
                # job's nodes multiply it; a single process says nothing of the others)
        if _callee(node) == "device_count" and "device_count" not in out:
            out["device_count"] = Use(True, file, node.lineno, "reads the visible GPU count where it runs")
        seen = (  # (an argbind-bound callable, called with the keyword arguments its config gives it)
            _argbind_filled(node, binds[node.func.id], bind_scopes.get(id(node)), settings)
            if isinstance(node.func, ast.Name) and node.func.id in binds
            else _splatted_dict_filled(node, scope)
        )
        found = [(c, False) for c in _consumers(seen)] + [(c, True) for c in _helper_consumers(ws, r, seen, file)]
        for (fieldname, arg, said), in_helper in found:
            how = said
            if fieldname == "batch" and training_loader and in_helper:
                continue  # the script builds its own training loader: a helper's loader (a scan for few-shot
                # indices, an evaluation) does not say its batch, even where the script's own cannot be told
            if fieldname.endswith("_wrap") or fieldname in ("dp_all", "dp_devices"):
                wrapped = _unwrapped_name(node)
                if wrapped is not None and wrapped in frozen:
                    continue  # `teacher = nn.DataParallel(teacher)`: a network only run for its outputs
            if fieldname == "model" and held_by.get(id(node)) in frozen:
                if "frozen_pretrained" not in out and callee == "from_pretrained":
                    out["frozen_pretrained"] = Use(
                        _dotted(node.func), file, node.lineno, "a checkpoint loaded and not trained (frozen)"
                    )
                continue  # `vae = AutoencoderKL.from_pretrained(…)` then `vae.requires_grad_(False)`: not trained
            if fieldname == "amp_dtype" and id(node) in in_ifexp and _arm_taken(r, tree, in_ifexp[id(node)]) is False:
                continue  # `GradScaler() if args.fp16 else None` with fp16 off: not built
            if fieldname in ("amp_dtype", "amp_enabled") and (
                _rebound_locally(scope.node, node)
                or (isinstance(scope.node, ast.FunctionDef | ast.AsyncFunctionDef) and _without_grad(scope.node))
            ):
                continue  # (an autocast in `@torch.no_grad() def validate()`: the evaluation's precision)
            v = r.value(arg, scope, node.lineno)
            if fieldname == "dp_devices" and v is None:  # `DataParallel(model, device_ids=args.cuda_devices)` with
                out.setdefault("dp_all", Use(True, file, node.lineno, f"{how}: None, every visible GPU"))  # its
                continue  # setting's default None
            if how == "create_model()" and not _names_architecture(v) and _job_function(ws, r, tree, node, file):
                continue  # the job's own `create_model('./models/cldm_v15.yaml')` builds from a config, names nothing
            if fieldname == "strategy" and v is _UNKNOWN:
                v = _built_class(arg, scope, r)  # `strategy=FSDPStrategy(...)`, or a name bound to one
            if v is _UNKNOWN and any(
                _dotted(n) in r.unknown_overrides for n in walk(arg) if isinstance(n, ast.Attribute)
            ):
                v = None  # the code reassigns it in a way we cannot follow: unknown, not the stale default
                whole = next(
                    (r.split_overrides[_dotted(n)] for n in walk(arg)
                     if isinstance(n, ast.Attribute) and _dotted(n) in r.split_overrides),
                    None,
                )  # fmt: skip
                if fieldname == "batch" and whole is not None and "global_batch" not in out:
                    out["global_batch"] = Use(whole, file, node.lineno, "the loader gets this batch split over ranks")
                each = next(
                    (r.per_device_overrides[_dotted(n)] for n in walk(arg)
                     if isinstance(n, ast.Attribute) and _dotted(n) in r.per_device_overrides),
                    None,
                )  # fmt: skip
                if fieldname == "batch" and each is not None:  # `batch_size * number_gpus` over the GPUs it sees
                    v, how = each, f"{how}: a per-GPU batch times the GPUs"
            elif fieldname == "registry_kwargs" and isinstance(v, dict):
                v = {k: x for k, x in v.items() if isinstance(x, int | float | str | bool)}  # what can be told
            elif (
                fieldname == "batch" and (per := _per_gpu_factor(arg, tree)) is not None
                and _is_count(each := r.value(per, scope, node.lineno))
            ):  # fmt: skip
                # `BATCH_SIZE_PER_GPU * len(gpus)`, the GPU list known here or not: DataParallel splits it
                v, how = each, f"{how}: a per-GPU batch times the GPUs"
            elif (
                v is _UNKNOWN
                or v is None
                or isinstance(v, _Namespace)
                or (isinstance(v, dict) and fieldname != "deepspeed")
            ):
                continue  # (a dict DeepSpeed is handed is its config)
            if fieldname == "lr" and v == 0:
                continue  # an optimizer built at lr 0: a scheduler sets the rate
            if fieldname in ("epochs", "max_steps") and is_number(v) and v <= 0:
                continue  # Lightning's `max_epochs=-1` / `max_steps=-1`: no limit of that kind
            if fieldname == "dp_devices":
                v = v if "multi_gpu_model" in how and _is_count(v) and v > 1 else _device_list_size(v)  # (a count)
                if v is None:
                    continue
            rank = _loader_rank(node) if fieldname == "batch" else _split_rank(node) if fieldname == "dataset" else 1
            if rank == 0 and training_loader and fieldname == "batch":
                continue
            prev = out.get(fieldname)
            later = node.lineno >= prev.line if prev is not None else True
            if fieldname == "model":  # the trained model is built first (teachers, EMA copies come later)
                later = prev is None or node.lineno < prev.line
            if fieldname == "batch" and prev is not None and _scaled_from(arg, batch_args.get(prev.line)):
                later = (
                    False  # `batch_size=args.batch_size * args.mu` (FixMatch's unlabelled stream) after the plain one
                )
            if prev is None or rank > ranks.get(fieldname, 1) or (rank == ranks.get(fieldname, 1) and later):
                out[fieldname] = Use(v, file, node.lineno, how)
                ranks[fieldname] = rank
                if fieldname == "batch":
                    batch_args[node.lineno] = arg
    for bound, line in _process_loops(tree, dead):
        n = r.value(bound, _scope_at(r, tree, line), line)
        if isinstance(n, int) and not isinstance(n, bool) and 0 < n <= 4096 and "processes" not in out:
            out["processes"] = Use(n, file, line, "starts one worker process per device: Process(target=…) per pass")
            out.setdefault("spawn", Use(True, file, line, "starts worker processes (not in a dead branch)"))
    _rates_from_schedules(ws, r, tree, file, code, dead, out)
    for expr, line in _accumulation_sites(tree):
        v = r.value(expr, _scope_at(r, tree, line), line)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0 and "grad_accum" not in out:
            out["grad_accum"] = Use(v, file, line, "step every N micro-batches")
    if "amp_dtype" not in out:
        for mod_file, mod_tree in _imported_trees(ws, r, file):
            conditional = {id(n) for i in walk(mod_tree) if isinstance(i, ast.If) for n in walk(i)}
            conditional |= {  # an evaluation (`@torch.no_grad() def evaluate(...)`) says nothing of training
                id(n) for f in walk(mod_tree)
                if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and _without_grad(f) for n in walk(f)
            }  # fmt: skip
            for node in walk(mod_tree):
                if id(node) in conditional:
                    continue  # `if fp16: with autocast():` — whether it runs is the caller's setting
                if (
                    isinstance(node, ast.Call) and _callee(node) == "autocast" and not node.args
                    and not _kwargs_any(node, ("dtype", "enabled")) and not _rebound_locally(mod_tree, node)
                    and _torch_amp(node.func)
                ):  # fmt: skip
                    out["amp_dtype"] = Use("float16", mod_file, node.lineno, f"{_callee(node)}() in {mod_file}")
                    break
    tf_ops = _tf1_train_ops([tree, *(t for _, t in _imported_trees(ws, r, file))]) if "tensorflow" in code else set()
    for rng, line in _step_loops(tree, tf_ops):  # every pass is one step: range(start, N) is the step budget
        scope = _scope_at(r, tree, line)
        stop = r.value(rng.args[-1] if len(rng.args) <= 2 else rng.args[1], scope, line)
        start = r.value(rng.args[0], scope, line) if len(rng.args) >= 2 else 0
        start = start if isinstance(start, int) and not isinstance(start, bool) else 0  # a resume point: a fresh run
        if isinstance(stop, int) and not isinstance(stop, bool) and stop > start and "max_steps" not in out:
            out["max_steps"] = Use(stop - start, file, line, "for it in range(): one optimizer step per pass")
        elif stop is _UNKNOWN and "epochs" not in out:  # `max_iter = max_epoch * epoch_size`: epochs x steps each
            n = _epochs_of_budget(r, rng.args[-1] if len(rng.args) <= 2 else rng.args[1], scope, line)
            if n is not None:
                out["epochs"] = Use(n, file, line, "the step loop runs epochs x the steps of one epoch")
    for bound, line in _counter_limits(tree, tf_ops):
        n = r.value(bound, _scope_at(r, tree, line), line)
        if isinstance(n, int | float) and not isinstance(n, bool) and 0 < n < 1e9 and "max_steps" not in out:
            out["max_steps"] = Use(int(n), file, line, "training stops when its step counter reaches this")
            # (a bound of 10**10 or sys.maxsize is "no limit": the loop's other bound ends the training)
    for bound, line in _iterator_epoch_limits(tree):
        n = r.value(bound, _scope_at(r, tree, line), line)
        if isinstance(n, int) and not isinstance(n, bool) and 0 < n < 1_000_000 and "epochs" not in out:
            out["epochs"] = Use(n, file, line, "training stops when its data iterator's epoch counter reaches this")
    chained: int | None = None  # where the last epoch loop read ended (a later loop may carry on from it)
    for rng, line in _epoch_loops(tree):  # range(stop) or range(start, stop): stop - start epochs
        scope = _scope_at(r, tree, line)
        args = rng.args[:2]
        if (
            len(args) == 2
            and isinstance(args[1], ast.BinOp)
            and isinstance(args[1].op, ast.Add)
            and ast.dump(args[1].left) == ast.dump(args[0])
        ):  # range(start, start + N): N epochs whatever start is (a resumed run)
            n = r.value(args[1].right, scope, line)
            if isinstance(n, int) and not isinstance(n, bool) and "epochs" not in out:
                out["epochs"] = Use(n, file, line, "for epoch in range(start, start + N)")
            continue
        if (
            len(args) == 2 and isinstance(args[0], ast.Name) and isinstance(args[1], ast.Name)
            and (hit := _assigned(scope, args[1].id, line)) is not None and isinstance(hit[2], ast.BinOp)
            and isinstance(hit[2].op, ast.Add) and ast.dump(hit[2].right) == ast.dump(args[0])
            and ast.dump(hit[2].left) == ast.dump(args[1])
        ):  # fmt: skip
            n = r.value(args[1], hit[0], hit[1])  # `epochs += start_epoch` then range(start_epoch, epochs): as given
            if isinstance(n, int) and not isinstance(n, bool) and "epochs" not in out:
                out["epochs"] = Use(n, file, line, "epochs += start; for epoch in range(start, epochs)")
            continue
        last = args[-1]
        if (
            len(args) == 1 and isinstance(last, ast.Call) and _dotted(last.func) in ("math.ceil", "ceil")
            and len(last.args) == 1 and "epochs" not in out
        ):  # fmt: skip
            n = r.value(last.args[0], scope, line)  # `range(math.ceil(train_epochs))`: 12.1 epochs, the last partial
            if isinstance(n, float) and 0 < n < 1e6:
                out["epochs"] = Use(n, file, line, "for epoch in range(ceil(E)): E epochs, the last one partial")
                continue
        bounds = [r.value(a, scope, line) for a in args]
        if len(bounds) == 1:
            bounds.insert(0, 0)
        if not isinstance(bounds[0], int) and isinstance(bounds[1], int) and not isinstance(bounds[1], bool):
            first = args[0]  # range(<resume point>, N): a fresh run starts at epoch 0 (`begin_epoch + 1`: at 1)
            offset = (
                first.right.value if isinstance(first, ast.BinOp) and isinstance(first.op, ast.Add)
                and isinstance(first.right, ast.Constant) and isinstance(first.right.value, int) else 0
            )  # fmt: skip
            given = scope.assigns.get(first.id, []) if isinstance(first, ast.Name) else []
            fresh = [v for _, rhs in given if isinstance(v := _literal(rhs), int) and not isinstance(v, bool)]
            if fresh and 0 <= fresh[0] <= 1:  # `epoch_str = 1` where no checkpoint is resumed (before the `try:`
                offset = fresh[0]  # that loads one, or in its `except:`): a fresh run starts there
            bounds[0] = offset
        if all(isinstance(b, int) and not isinstance(b, bool) for b in bounds) and "epochs" not in out:
            out["epochs"] = Use(bounds[1] - bounds[0], file, line, "for epoch in range()")
            chained = bounds[1]
        elif (
            all(isinstance(b, int) and not isinstance(b, bool) for b in bounds) and chained is not None
            and bounds[0] == chained and len(rng.args) == 2 and (e := out.get("epochs")) is not None
            and isinstance(e.value, int)
        ):  # fmt: skip
            out["epochs"] = Use(e.value + bounds[1] - bounds[0], file, line, "epoch loops run one after another")
            chained = bounds[1]  # (`for epoch in range(5): …` with the base frozen, then `range(5, args.epochs)`)
    if (m := out.get("model")) is not None and m.file == file and m.line in load_dtypes:
        out["load_dtype"] = Use(load_dtypes[m.line], file, m.line, "the trained model's from_pretrained(torch_dtype=)")
    if "model" not in out and (shaped := out.get("arch_config")) is not None and "from_config(" in code:
        said = f"{shaped.how}, then a model built from that config at random (from_config)"
        out["model_shape"] = Use(shaped.value, shaped.file, shaped.line, said)  # (Chronos' `random_init`: the
        # checkpoint names the architecture trained from scratch: its name, not its weights)
    if rewritten := _settings_rewritten(r, tree, settings, dead):
        out["rewritten"] = Use(rewritten, file, min(line for _, line in rewritten.values()), "settings the entry sets")
    return out


def _settings_rewritten(
    r: _Resolver, tree: ast.Module, settings: dict[str, Value], dead: set[int]
) -> dict[str, tuple[Any, int]]:
    """Numeric settings the entry computes anew before training (Swin/InternImage's ``__main__``:
    ``config.TRAIN.BASE_LR = config.TRAIN.BASE_LR * config.DATA.BATCH_SIZE * world_size / 512``), as
    key → (value, line): where no consumer of the setting can be read, the stale configured value is not the job's."""
    out: dict[str, tuple[Any, int]] = {}
    for stmt in top_level_statements(tree):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1) or id(stmt) in dead:
            continue
        path = _access_path(stmt.targets[0])
        key = path.partition(".")[2]
        given = settings.get(key)
        if not key or given is None or not is_number(given.value) or isinstance(given.value, bool):
            continue
        v = r.value(stmt.value, _scope_at(r, tree, stmt.lineno), stmt.lineno)
        if is_number(v) and not isinstance(v, bool) and v > 0:
            out[key] = (v, stmt.lineno)
    return out


def _load_dtype(r: _Resolver, tree: ast.Module, call: ast.Call, scope: _Scope) -> str | None:
    """The dtype ``from_pretrained`` loads the weights in ("bfloat16", "float16", "float32"): its ``torch_dtype``
    (or ``dtype``) keyword, given directly or in a dict literal handed as ``**kwargs`` (HALOs' ``policy_kwargs``), as
    ``torch.bfloat16``, a string, or ``getattr(torch, cfg.policy_dtype)`` with the setting's value; None if untold."""
    given = next((k.value for k in call.keywords if k.arg in ("torch_dtype", "dtype")), None)
    for k in call.keywords if given is None else ():
        if k.arg is None and isinstance(k.value, ast.Name):
            bound = [
                n for n in walk(tree)
                if isinstance(n, ast.Assign) and n.lineno < call.lineno and isinstance(n.value, ast.Dict)
                and any(isinstance(t, ast.Name) and t.id == k.value.id for t in n.targets)
            ]  # fmt: skip
            if bound:
                d = max(bound, key=lambda n: n.lineno).value
                assert isinstance(d, ast.Dict)
                given = next(
                    (v for key, v in zip(d.keys, d.values, strict=True)
                     if isinstance(key, ast.Constant) and key.value in ("torch_dtype", "dtype")),
                    None,
                )  # fmt: skip
    if given is None:
        return None
    if (mapped := _DTYPES.get(_dotted(given))) is not None:
        return mapped
    if isinstance(given, ast.Call) and _callee(given) == "getattr" and len(given.args) == 2:
        if _dotted(given.args[0]) != "torch":
            return None
        given = given.args[1]
    said = r.value(given, scope, call.lineno)
    said = said.removeprefix("torch.") if isinstance(said, str) else None
    return {"bfloat16": "bfloat16", "bf16": "bfloat16", "float16": "float16", "half": "float16", "fp16": "float16",
            "float32": "float32", "float": "float32"}.get(said or "")  # fmt: skip


def _frozen_modules(tree: ast.AST) -> set[str]:
    """Names of modules the code only runs: put in eval mode (``teacher_model.eval()``), never back in train mode,
    and never handed to an optimizer (no ``.parameters()`` read): a distillation teacher, a frozen feature net. Its
    data-parallel wrapper says nothing of how the trained model runs."""
    modes: dict[str, set[str]] = {}
    for n in walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
            method = n.func.attr
            if method == "requires_grad_" and n.args and _is_false(n.args[0]):
                method = "freeze"  # `vae.requires_grad_(False)`: a latent-diffusion job's frozen autoencoder
            modes.setdefault(n.func.value.id, set()).add(method)
    return {
        name for name, called in modes.items()
        if called & {"eval", "freeze"} and not called & {"train", "parameters", "named_parameters", "requires_grad_"}
    }  # fmt: skip


def _loaded_not_optimized(tree: ast.AST) -> set[str]:
    """Names bound to a loaded checkpoint (``model_lm = AutoModelForCausalLM.from_pretrained(...).get_decoder()``)
    whose parameters no optimizer receives while another module's do (``AdamW(model.parameters(), ...)``), and
    that are never read for their parameters or put in train mode: a frozen encoder feeding the trained model."""
    optimized: set[str] = set()
    touched: set[str] = set()
    for n in walk(tree):
        if not isinstance(n, ast.Call):
            continue
        if _callee(n) in OPTIMIZERS and n.args:
            first = n.args[0]
            if (
                isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute)
                and first.func.attr in ("parameters", "named_parameters") and isinstance(first.func.value, ast.Name)
            ):  # fmt: skip
                optimized.add(first.func.value.id)
            else:
                return set()  # a parameter list built elsewhere: which modules it holds is not told here
        elif (
            isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
            and n.func.attr in ("parameters", "named_parameters", "train", "requires_grad_")
        ):  # fmt: skip
            touched.add(n.func.value.id)
    if not optimized:
        return set()
    loaded = {
        stmt.targets[0].id for stmt in walk(tree)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
        and any(isinstance(c, ast.Call) and _callee(c) == "from_pretrained" for c in walk(stmt.value))
    }  # fmt: skip
    return loaded - optimized - touched


def _unwrapped_name(call: ast.Call) -> str | None:
    """The variable a wrapper call wraps: ``nn.DataParallel(teacher_model).cuda()`` → ``teacher_model``."""
    first = call.args[0] if call.args else None
    return first.id if isinstance(first, ast.Name) else None


def _plausible_rate(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and 0 < v < 10


def _rates_from_schedules(
    ws: Workspace, r: _Resolver, tree: ast.Module, file: str, code: str, dead: set[int], out: dict[str, Use]
) -> None:
    """The rate in effect where the code sets it beside the optimizer: a per-step schedule written into
    ``param_group["lr"]`` (its base wins over the optimizer's), a batch-scaled base in a schedule function, the
    module's ``learning_rate`` set by the entry script; torch's default rate only where the code writes none."""
    imported: list[ast.Module] | None = None

    def engine_trees() -> list[ast.Module]:  # the modules the entry imports (read once, only when needed)
        nonlocal imported
        if imported is None:
            imported = [t for _, t in _imported_trees(ws, r, file)]
        return imported

    schedules = _schedule_names([tree])
    if not schedules and _SCHEDULE_HINT.search(code):
        schedules = _schedule_names(engine_trees())  # the loop lives in an engine module
    for expr, line in _schedule_sites(tree, schedules) if schedules else ():
        v = r.value(expr, _scope_at(r, tree, line), line)
        if _plausible_rate(v):
            out["lr"] = Use(v, file, line, "the per-step schedule the loop writes into param_group['lr'] starts here")
    if "lr_default" in out and any(
        _writes_rate(n) and (t is not tree or id(n) not in dead) for t in [tree, *engine_trees()] for n in walk(t)
    ):  # the code writes the rate into the param groups itself (a schedule, a Noam wrapper), unless only in an arm
        del out["lr_default"]  # the settings rule out (`def adjust_opt(optAlg, …): if optAlg == 'sgd': …` with adam)
    for expr, line in _scaled_rate_sites(tree) if "lr" not in out else ():
        v = r.value(expr, _scope_at(r, tree, line), line)
        if _plausible_rate(v):
            out["lr"] = Use(v, file, line, "the rate the schedule writes into param_group['lr'], scaled by the batch")
    rated = [
        (r.value(expr, _scope_at(r, tree, line), line), line)
        for expr, line in (_rate_attribute_sites(tree) if "lr" not in out else ())
        if id(expr) not in dead
    ]  # every live one must be told: one the code computes in a way we cannot follow may be the one that runs
    if rated and all(_plausible_rate(v) for v, _ in rated):
        v, line = rated[-1]
        out["lr"] = Use(v, file, line, "the entry script sets the module's learning_rate")


def _visible_set_here(r: _Resolver, tree: ast.Module) -> tuple[int, int] | None:
    """The devices a script makes visible to itself at module level or in its main function
    (``os.environ['CUDA_VISIBLE_DEVICES'] = config.GPU`` with ``GPU = '0'`` in its config module): how many, and
    where; None when it sets none, or a value that cannot be told."""
    for node in walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript)):
            continue
        target = node.targets[0]
        if not (
            _dotted(target.value) in ("os.environ", "environ") and isinstance(target.slice, ast.Constant)
            and target.slice.value == "CUDA_VISIBLE_DEVICES"
        ):  # fmt: skip
            continue
        v = r.value(node.value, _scope_at(r, tree, node.lineno), node.lineno)
        return _visible_count(v, node.lineno)
    setters: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, str] | None] = {}  # helper → (its definition,
    # the parameter it makes visible): each helper read once
    for call in walk(tree):  # `device = select_device(opt.device)`: a helper of the job's sets it from its argument
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.args):
            continue
        if call.func.id not in setters:
            fn = r.functions.get(call.func.id) or _imported_function(r.ws, r, call.func.id, r.file)
            param = _sets_visible_from(fn) if fn is not None else None
            setters[call.func.id] = (fn, param) if fn is not None and param is not None else None
        if (found := setters[call.func.id]) is None:
            continue
        fn, param = found
        passed = passed_for(call, param, [a.arg for a in fn.args.args])
        if passed is not None:
            v = r.value(passed, _scope_at(r, tree, call.lineno), call.lineno)
            return _visible_count(v, call.lineno)
    return None


def _visible_count(v: Any, line: int) -> tuple[int, int] | None:
    """How many devices a ``CUDA_VISIBLE_DEVICES`` value makes visible ("0,1" → 2), and where it was set."""
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 4096:
        return 1, line
    if isinstance(v, str) and re.fullmatch(r"\s*\d{1,4}(?:\s*,\s*\d{1,4})*\s*,?\s*", v):
        return len([x for x in v.split(",") if x.strip()]), line
    return None


def _sets_visible_from(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The parameter a helper puts into ``os.environ['CUDA_VISIBLE_DEVICES']`` (YOLO's ``select_device(device)``:
    ``os.environ['CUDA_VISIBLE_DEVICES'] = device``, after only reformatting it), or None."""
    params = {a.arg for a in fn.args.args}
    for node in walk(fn):
        if (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript)
            and _dotted(node.targets[0].value) in ("os.environ", "environ")
            and isinstance(node.targets[0].slice, ast.Constant)
            and node.targets[0].slice.value == "CUDA_VISIBLE_DEVICES"
            and isinstance(node.value, ast.Name) and node.value.id in params
        ):  # fmt: skip
            name = node.value.id
            rebound = [
                a.value for a in walk(fn) if isinstance(a, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in a.targets)
            ]  # fmt: skip
            if all(_reformats(v, name) for v in rebound):
                return name
    return None


_REFORMATS: Final = frozenset({"strip", "lstrip", "rstrip", "lower", "upper", "casefold", "replace"})


def _reformats(value: ast.expr, name: str) -> bool:
    """Whether ``value`` is ``name`` only passed through string methods (``str(device).strip().lower()``)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _REFORMATS:
        value = value.func.value
    if isinstance(value, ast.Call) and _callee(value) == "str" and len(value.args) == 1:
        value = value.args[0]
    return isinstance(value, ast.Name) and value.id == name


def _scope_at(r: _Resolver, tree: ast.Module, line: int) -> _Scope:
    """The innermost function scope around ``line`` (computed once per line)."""
    if line in r._scope_lines:
        return r._scope_lines[line]
    best: _Scope = r.module
    for fn_node, scope in r.scopes.items():
        if isinstance(fn_node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = getattr(fn_node, "end_lineno", fn_node.lineno) or fn_node.lineno
            if fn_node.lineno <= line <= end and (
                not isinstance(best.node, ast.FunctionDef | ast.AsyncFunctionDef) or fn_node.lineno >= best.node.lineno
            ):
                best = scope
    r._scope_lines[line] = best
    return best
