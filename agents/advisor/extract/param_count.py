"""Parameter count of a PyTorch model from its source, by abstract interpretation of ``__init__``.

Nothing is imported or executed: the constructor bodies of the model class and of the local
classes it builds are walked with a tiny evaluator (:mod:`.evaluator`) that knows Python
arithmetic, containers, loops and branches, and the sizes of ``torch.nn`` layers
(:mod:`.torch_layers`). Anything it cannot evaluate becomes ``UNKNOWN``; a layer whose size is
unknown makes the count fail (``None``) rather than guess. Work is bounded (steps, recursion, files).
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterable, Iterator
from typing import Any, Final

from schedmate.agents.advisor.extract.evaluator import Callee, Evaluator, builds_nothing, is_module_value, is_number
from schedmate.agents.advisor.extract.known import known_model
from schedmate.agents.advisor.extract.library_modules import library_module
from schedmate.agents.advisor.extract.syntax import last_names, parse, searches_tree, walk
from schedmate.agents.advisor.extract.torch_layers import PARALLEL_WRAPPERS, torch_call
from schedmate.agents.advisor.extract.values import UNKNOWN, AbortError, Layer, Obj, Weight, namespace
from schedmate.agents.advisor.extract.workspace import Workspace
from schedmate.agents.exceptions import WorkspaceError

__all__ = ["UNKNOWN", "ParamCounter", "namespace"]

# A call whose result is the job's settings object: `parser.parse_args()`, `get_config()`, `option.parse(path)`
_SETTINGS_CALL: Final = re.compile(r"parse|args|config|cfg|opt|option|hparams|settings|flags", re.I)
# Attributes holding a copy of the model that the optimizer does not train: EMA weights, a teacher, a target network
_NOT_TRAINED: Final = re.compile(r"(?:^|_)(?:ema|teacher|momentum)(?:_|$)|^net_?E$|(?i:^ema)", re.I)
_LOSS_ATTR: Final = re.compile(r"^criterion|(?:^|_)loss(?:_|$)", re.I)  # `self.criterionVGG`, `self.perceptual_loss`
_SLICE_ERRORS: Final = (AbortError, RecursionError, ArithmeticError, TypeError, ValueError, IndexError, KeyError)


# Classes named as layers or networks: called with sizes, they hold parameters
_UNSEEN_LAYER: Final = re.compile(
    r"(?:Conv\w*|Linear|Block|Layer|Generator|Discriminator|Encoder|Decoder|Mamba\w*|Attention|Embedding)$"
)
_TORCH_ROOTS: Final = ("torch", "nn.", "F.", "tf.", "keras", "flax", "jax", "math", "numpy", "np.")


class ParamCounter(Evaluator):
    """Counts the parameters a constructor call would create, from the sources in a workspace."""

    def __init__(self, ws: Workspace, max_steps: int = 200_000) -> None:
        super().__init__(ws, max_steps)
        self._total = 0
        self._modules: dict[str, tuple[ast.Module, dict[str, Any]]] = {}
        self._sizes: dict[int, tuple[Obj, int]] = {}  # id → (instance of a job's class, parameters it built)
        self._pure: dict[int, bool] = {}  # id of a function's node → whether it builds nothing
        self._templates: dict[int, tuple[Any, int]] = {}  # id → (a module deep-copied, its parameters)
        self.arguments: dict[str, dict[str, Any]] = {}  # class → the arguments its first construction received
        self.last_built: Any = None  # what :meth:`count_class` built last
        self.built: Any = None  # what the last count_call's expression evaluated to
        self._handed: dict[int, tuple[Any, int]] = {}  # modules built before the call (values_at) → parameters
        self._globals: dict[str, dict[str, Any]] = {}  # file → module globals the command line or a config sets
        self._dropped: list[tuple[Obj, Any]] = []  # (owner, module) an attribute held before it was reassigned
        self._libraries: dict[int, Obj] = {}  # library models built (torchvision's), which a job may take apart
        self.library_builders: list[str] = []  # the library builders the last count called (`resnet50`), in order
        self._module_built: dict[int, tuple[Obj, int]] = {}  # modules of the job's built at module level → parameters

    def _snapshot(self) -> Any:
        return self._total

    def _restore(self, saved: Any) -> None:
        self._total = int(saved)

    # --- module loading -------------------------------------------------------------------------
    def _module(self, file: str) -> tuple[ast.Module, dict[str, Any]]:
        if file not in self._modules:
            self._check_share()  # parsing a large model package is most of the time an evaluation takes
            try:
                tree = parse(self.ws.read_text(file))
            except (WorkspaceError, SyntaxError, ValueError) as exc:
                raise AbortError(f"cannot read {file}") from exc
            env: dict[str, Any] = {"__file__": file}
            self._modules[file] = (tree, env)
            saved = self._total  # layers built at module level (a training script's own model) are not counted
            for node in tree.body:  # module-level imports, classes, functions and constants
                try:
                    self._stmt(node, env, file, module_level=True)
                except _SLICE_ERRORS:
                    continue  # (`X = -SOME_TUPLE`: a constant it cannot evaluate is skipped, not fatal)
            self._total = saved
            for v in _members(env.values()):  # `all_classifiers = {"resnet18": resnet18(), ...}`: built on import
                if isinstance(v, Obj) and id(v) in self._sizes and len(self._module_built) < 10_000:
                    self._module_built[id(v)] = self._sizes[id(v)]
        return self._modules[file]

    # --- public API -----------------------------------------------------------------------------
    def evaluate(self, node: ast.expr, file: str) -> Any:
        """An expression over the names module ``file`` defines (``len(symbols)``); ``UNKNOWN`` if it cannot be
        told. Raises :class:`AbortError` when the module cannot be read or the step budget is spent."""
        return self._expr(node, dict(self._module(file)[1]), file)

    def main_env(self, file: str, argv: list[str]) -> dict[str, Any]:
        """The names script ``file`` holds after running as ``__main__`` with ``sys.argv`` = ``argv``: each top-level
        statement evaluated in order (branches and loops included; one that cannot be told is skipped), nothing it
        builds counted. Raises :class:`AbortError` when the script cannot be read."""
        tree = self._module(file)[0]
        env: dict[str, Any] = {"__file__": file, "__name__": "__main__"}
        self.argv, self._steps, saved = list(argv), 0, self._total
        for node in tree.body:
            try:
                self._stmt(node, env, file)
            except _SLICE_ERRORS:
                continue
        self._total = saved
        return env

    def evaluate_in(self, node: ast.expr, env: dict[str, Any], file: str) -> Any:
        """``node`` over ``env`` (from :meth:`main_env`); ``UNKNOWN`` if it cannot be told."""
        try:
            return self._expr(node, env, file)
        except _SLICE_ERRORS:
            return UNKNOWN

    def module_env(self, file: str) -> dict[str, Any]:
        """Names a source file defines or imports at module level (empty if unreadable)."""
        try:
            return dict(self._module(file)[1])
        except AbortError:
            return {}

    def count_call(
        self, call: ast.Call, env: dict[str, Any], file: str, after: tuple[str, list[ast.stmt]] | None = None
    ) -> int | None:
        """Parameters created by evaluating ``call`` (a constructor call in ``file``) under ``env``; with ``env``
        from :meth:`values_at`, modules built before the call that the model holds count too. ``after``: the name
        the model is bound to and the statements after its construction, whose changes to it count
        (``model.fc = nn.Linear(model.fc.in_features, 2)``)."""
        passed = {id(v) for v in _members(env.values())}
        self._handed = {k: entry for k, entry in self._handed.items() if k in passed}
        self._total, self._steps = 0, 0
        self._sizes.clear()
        self._templates.clear()
        self._dropped = []
        self._libraries = {k: v for k, v in self._libraries.items() if k in self._handed}
        self.library_builders = []
        self.arguments = {}
        self.built = None
        try:
            module_env = dict(self._module(file)[1])
            module_env.update(env)
            self.built = built = self._expr(call, module_env, file)
            if after is not None and is_module_value(built):
                self._changes(after, built, module_env, file)
        except _SLICE_ERRORS as exc:
            self._note(exc)
            return None
        return self._result(built)

    def _changes(self, after: tuple[str, list[ast.stmt]], built: Any, env: dict[str, Any], file: str) -> None:
        """The statements after a model's construction that change it: assignments into it (``model.fc = …``,
        ``model.classifier[6] = …``) count; assignments of other names that read it (``n = model.fc.in_features``)
        are evaluated without counting what they build; a statement that cannot be told leaves its names unknown."""
        name, stmts = after
        env[name] = built
        for stmt in stmts:
            if not isinstance(stmt, ast.Assign):
                continue
            roots = [_root(t) for t in stmt.targets]
            into = all(isinstance(t, ast.Attribute | ast.Subscript) for t in stmt.targets) and set(roots) == {name}
            reads = name in {n.id for n in walk(stmt.value) if isinstance(n, ast.Name)}
            if roots == [name] and isinstance(stmt.targets[0], ast.Name):
                wrapper = stmt.value.func if isinstance(stmt.value, ast.Call) else None
                if isinstance(wrapper, ast.Attribute | ast.Name) and (
                    (wrapper.attr if isinstance(wrapper, ast.Attribute) else wrapper.id) in PARALLEL_WRAPPERS
                ):
                    return  # `model = nn.DataParallel(model)`: attributes set after it are the wrapper's own
                saved = self._total
                try:
                    same = self._expr(stmt.value, env, file) is built  # `model = model.to(device)`: the same module
                except _SLICE_ERRORS:
                    same = False
                self._total = saved
                if not same:
                    return  # `model = nn.DataParallel(model)`: what follows changes the wrapper, not followed
                continue
            if not into and not (reads and all(isinstance(t, ast.Name) for t in stmt.targets)):
                continue
            saved = self._total
            try:
                self._stmt(stmt, env, file)
            except _SLICE_ERRORS:
                _forget_assigned(stmt, env)
                self._total = saved
                continue
            if not into:
                self._total = saved

    def count_call_or_defaults(
        self, call: ast.Call, env: dict[str, Any], file: str, after: tuple[str, list[ast.stmt]] | None = None
    ) -> int | None:
        """:meth:`count_call`; when that cannot count, once more with the keyword arguments whose values cannot be
        told left out, so the constructor's defaults stand in for them (``DeepLab(num_classes=self.nclass, …)``,
        the class count a data loader returns: the layers it does not shape are still counted)."""
        count = self.count_call(call, env, file, after)
        if count is None and (positional := self._positional_class_count(call, env, file)) is not None:
            count = self.count_call(positional, env, file, after)  # `ENet(num_classes)` with the count read from
            if count is not None:  # the data at run time: a small stand-in, as for a keyword below
                self.cuts.append(f"parameter count: the class count known only at run time, counted as "
                                 f"{_STAND_IN_CLASSES}")  # fmt: skip
                return count
        if count is not None or not call.keywords:
            return count
        try:
            scope = {**self._module(file)[1], **env}
            unknown = [
                kw
                for kw in call.keywords
                if kw.arg
                and (
                    (v := self._expr(kw.value, dict(scope), file)) is UNKNOWN
                    or (isinstance(kw.value, ast.Name) and v is self.parsed_settings and v is not None)
                )
            ]  # (a bare name that stood in for the settings: `num_classes=num_classes`, computed at run time)
        except _SLICE_ERRORS:
            return None
        if not unknown:
            return None
        told = ast.copy_location(
            ast.Call(func=call.func, args=call.args, keywords=[kw for kw in call.keywords if kw not in unknown]), call
        )
        count = self.count_call(told, env, file, after)
        heads = [kw for kw in unknown if kw.arg and _CLASS_COUNT.fullmatch(kw.arg)]
        if count is not None or not heads:
            return count
        # The constructor needs the class count, which the job reads from its data at run time (`num_classes=
        # njoints`): counted with a small stand-in, since output heads are a small share of a model, and said so.
        stand_in = ast.copy_location(
            ast.Call(
                func=call.func, args=call.args,
                keywords=[ast.keyword(kw.arg, ast.Constant(_STAND_IN_CLASSES)) if kw in heads else kw
                          for kw in call.keywords if kw in heads or kw not in unknown],
            ),
            call,
        )  # fmt: skip
        count = self.count_call(stand_in, env, file, after)
        if count is not None:
            self.cuts.append(
                f"parameter count: {', '.join(str(kw.arg) for kw in heads)} known only at run time, counted as "
                f"{_STAND_IN_CLASSES}"
            )
        return count

    def size_of(self, value: Any) -> int | None:
        """The parameters a value the interpreter built holds (a module of the job's, or a layer), or None."""
        if isinstance(value, Obj) and id(value) in self._sizes:
            return self._sizes[id(value)][1]
        return value.params if isinstance(value, Layer) else None

    def dominant_part(self, built: Any) -> str | None:
        """The class of the job's modules that holds most of ``built``'s parameters (at least half), as attributes of
        it: a LightningModule's ``self.nerf_coarse = NeRF()`` and ``self.nerf_fine = NeRF()`` → "NeRF"."""
        if not isinstance(built, Obj) or id(built) not in self._sizes:
            return None
        by_class: dict[str, int] = {}
        for value in built.attrs.values():  # (a model built when its module was imported counts as it holds it)
            known = self._sizes.get(id(value)) or self._module_built.get(id(value))
            if isinstance(value, Obj) and value.cls and known is not None:
                by_class[value.cls] = by_class.get(value.cls, 0) + known[1]
        whole = max(self._sizes[id(built)][1], sum(by_class.values()))
        if not by_class or whole <= 0:
            return None
        cls, size = max(by_class.items(), key=lambda kv: kv[1])
        return cls if 2 * size >= whole else None

    @staticmethod
    def kinds(built: Any) -> dict[str, int]:
        """Parameters of the layers ``built`` holds, by family (linear, conv, rnn, attention, embedding, norm). A
        convolution inside a module of a class named for attention projects its queries, keys or values (PVT's
        spatial reduction, CvT's convolutional projections): it counts with the linear layers, as the attention's."""
        out: dict[str, int] = {}
        graph = list(_graph(built)) if isinstance(built, Obj) else []
        projecting = {
            id(v) for o in graph if isinstance(o, Obj) and _ATTENTION_CLASS.search(o.cls)
            for v in _graph(o, limit=20_000) if isinstance(v, Layer) and v.kind in ("conv", "patch")
        }  # fmt: skip
        for value in graph:
            if isinstance(value, Layer):
                kind = "linear" if id(value) in projecting else value.kind
                out[kind] = out.get(kind, 0) + value.params
        return out

    def _positional_class_count(self, call: ast.Call, env: dict[str, Any], file: str) -> ast.Call | None:
        """``call`` with its positional class-count names whose values cannot be told (``num_classes`` computed from
        the data) replaced by a small stand-in; None when it has none."""
        try:
            scope = {**self._module(file)[1], **env}
            unknown = {
                i for i, a in enumerate(call.args)
                if isinstance(a, ast.Name) and _CLASS_COUNT.fullmatch(a.id)
                and ((v := self._expr(a, dict(scope), file)) is UNKNOWN or v is self.parsed_settings)
            }  # fmt: skip
        except _SLICE_ERRORS:
            return None
        if not unknown:
            return None
        args = [ast.Constant(_STAND_IN_CLASSES) if i in unknown else a for i, a in enumerate(call.args)]
        return ast.copy_location(ast.Call(func=call.func, args=args, keywords=call.keywords), call)

    def _note(self, exc: BaseException) -> None:
        """Say why a count stopped when it ran out of recursion or of its step budget (not merely unknown)."""
        if isinstance(exc, RecursionError) or self._steps > self.max_steps:
            self.cuts.append(f"parameter count: {type(exc).__name__}: {str(exc)[:120]}")

    def _result(self, built: Any) -> int | None:
        """The total, less the templates that were only copied: ``block = Block(…)`` then ``nn.ModuleList([copy.
        deepcopy(block) for _ in range(n)])`` trains the copies, not ``block`` (unless the model holds it too)."""
        total = self._total
        if isinstance(built, Obj) and self._module_built:  # a model a module built when imported, held by this one
            held = _reachable(built)  # (`self.model = all_classifiers[hparams.classifier]`): its parameters count
            found = [(k, o, n) for k, (o, n) in self._module_built.items() if k in held and k not in self._handed]
            inner = {i for _, o, _ in found for i in _reachable(o) if i != id(o)}  # (a part of another counts in it)
            total += sum(n for k, _, n in found if k not in inner)
        takes_apart = bool(self._dropped or self._libraries or self._sizes)
        if not (isinstance(built, Obj) and (self._templates or self._handed)) and not (
            takes_apart and isinstance(built, Obj | list | tuple | dict)
        ):
            return total if total > 0 else None
        kept = _reachable(built if isinstance(built, Obj) else Obj(attrs={"_": built}))  # what the model holds
        if (self._templates or self._handed) and isinstance(built, Obj):
            total -= sum(size for key, (_, size) in self._templates.items() if key not in kept)
            total += sum(size for key, (_, size) in self._handed.items() if key in kept)  # `Projector(encoder)`
        if takes_apart:
            still_held = set(kept)  # (and what the owners of dropped modules hold)
            for owner, _ in self._dropped:
                still_held |= _reachable(owner)
            gone: dict[int, int] = {}
            for _, old in self._dropped:  # `backbone.features = None` after its slices were taken: the rest goes
                for v in _graph(old) if isinstance(old, Obj) else _graph(Obj(attrs={"_": old})):
                    if isinstance(v, Layer) and id(v) not in still_held:
                        gone[id(v)] = v.params
            registered = _reachable(built, plain_dicts=False) if isinstance(built, Obj) and self._libraries else kept
            instances = [(k, o, False) for k, (o, _) in self._sizes.items() if k not in self._libraries]
            for key, model, library in [*((k, o, True) for k, o in self._libraries.items()), *instances]:
                # a model taken apart (`list(resnet.children())[:-1]`, `vgg16().features`): what is kept of it counts
                held = registered if library else kept
                if key in held:
                    continue
                parts = [v for v in _graph(model) if isinstance(v, Layer)]
                own = [v for v in parts if id(v) in held]
                if own and key in self._handed:  # built before the call (`backbone = resnet50()`, then `Net(backbone)`)
                    total += sum(v.params for v in own if id(v) not in gone)
                elif own or (library and key in kept and key not in self._handed):  # (a plain dict attribute)
                    gone.update({id(v): v.params for v in parts if id(v) not in held})
                # (neither kept nor held: held where the count cannot follow it, so it is counted)
            total -= sum(gone.values())
        return total if total > 0 else None

    def _stmt(self, node: ast.stmt, env: dict[str, Any], file: str, module_level: bool = False) -> None:
        if (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript)
            and isinstance(node.targets[0].value, ast.Attribute)
            and node.targets[0].value.attr in ("data", "weight", "bias")
        ):  # fmt: skip
            return  # `self.conv.weight.data[:] = nn.Parameter(torch.arange(c1)…)`: values written into a layer's
            # existing weights (YOLO's DFL), no parameter added
        if (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute)
            and _NOT_TRAINED.search(node.targets[0].attr)
        ):  # fmt: skip
            saved = self._total  # `self.netE = define_G(opt).eval()`, `self.model_ema = …`: a copy kept, not trained
            super()._stmt(node, env, file, module_level)
            self._total = saved
            return
        if (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute)
            and _LOSS_ATTR.search(node.targets[0].attr)
        ):  # fmt: skip
            saved, builders, libraries = self._total, len(self.library_builders), set(self._libraries)
            super()._stmt(node, env, file, module_level)
            if len(self.library_builders) > builders:  # `self.criterionVGG = VGGLoss()` around torchvision's VGG-19:
                self._total = saved  # a pretrained network a perceptual loss runs the outputs through, not trained
                for key in set(self._libraries) - libraries:  # with the model (a loss of the job's own layers —
                    del self._libraries[key]  # a learned margin — stays counted)
                    self._sizes.pop(key, None)
            return
        super()._stmt(node, env, file, module_level)

    def _set_attr(self, owner: Obj, attr: str, value: Any) -> None:
        old = owner.attrs.get(attr)
        if old is not None and old is not value and value is not UNKNOWN and is_module_value(old):
            self._dropped.append((owner, old))  # `setattr(base, "fc", nn.Dropout(p))`: unless still held, not trained
        super()._set_attr(owner, attr, value)

    def _assign(self, target: ast.expr, value: Any, env: dict[str, Any], file: str) -> None:
        if isinstance(target, ast.Attribute) and target.attr == "weight" and isinstance(value, Weight):
            owner = self._expr(target.value, env, file)
            if isinstance(owner, Layer) and owner.weight == value.numel:  # tied weights: one tensor, counted once
                self._total -= owner.weight
                owner.params -= owner.weight
                owner.weight = 0
            return
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name | ast.Attribute):
            owner = self._expr(target.value, env, file)
            old = owner.attrs.get(target.attr) if isinstance(owner, Obj) else None
            if old is not None and old is not value and value is not UNKNOWN and is_module_value(old):
                self._dropped.append((owner, old))  # `backbone.classifier = None`: unless still held, not trained
        if isinstance(target, ast.Subscript) and is_module_value(value):  # `vgg.classifier[6] = nn.Linear(4096, 2)`
            held = self._expr(target.value, env, file)
            key = self._expr(target.slice, env, file)
            if isinstance(held, list) and _in_range(key, held):
                old, held[key] = held[key], value
            elif isinstance(held, dict) and isinstance(key, str):
                old, held[key] = held.get(key), value
            else:
                return
            if old is not None and old is not value and is_module_value(old):
                self._dropped.append((Obj(attrs={"_": held}), old))
            return
        super()._assign(target, value, env, file)

    # --- values that reach a call --------------------------------------------------------------
    def bind_settings(self, file: str, settings: Obj, overrides: dict[str, Any] | None = None) -> None:
        """Module-level names of ``file`` that hold the job's settings (``opt = parser.parse_args()``) become the
        merged settings ``settings``, so the classes the module defines read them (``nn.Linear(opt.latent_dim, …)``);
        a module global the command line or a config file sets (``overrides``: nanoGPT's configurator ``exec``)
        holds that value."""
        self.parsed_settings = settings
        try:
            tree, env = self._module(file)
        except AbortError:
            return
        for node in tree.body:
            for name in _settings_targets(node):
                if env.get(name, UNKNOWN) is UNKNOWN or _absl_flags(node):  # (`flags.FLAGS` evaluates to an object
                    env[name] = settings  # of the library's: the flags' values are the settings)
            if overrides and isinstance(node, ast.Assign | ast.AnnAssign):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Name) and target.id in overrides:
                        env[target.id] = overrides[target.id]
                        self._globals.setdefault(file, {})[target.id] = overrides[target.id]

    def bind_main_block(self, file: str, call: ast.Call, env: dict[str, Any]) -> None:
        """Names the script's ``if __name__ == "__main__":`` block binds before ``call`` are module globals when it
        runs as a script, so the classes it defines read them (nlp-tutorial's ``d_model = 512`` after
        ``class Transformer``): plain values from ``env`` (from :meth:`values_at`) the module leaves unknown."""
        try:
            tree, module_env = self._module(file)
        except AbortError:
            return
        block = next(
            (n for n in tree.body if isinstance(n, ast.If) and _is_main_test(n.test)
             and n.lineno <= call.lineno <= (n.end_lineno or n.lineno)),
            None,
        )  # fmt: skip
        if block is None:
            return
        bound = {t.id for s in block.body if isinstance(s, ast.Assign) for t in s.targets if isinstance(t, ast.Name)}
        for name in bound:
            value = env.get(name, UNKNOWN)
            if isinstance(value, int | float | str | tuple | list | dict) and module_env.get(name, UNKNOWN) is UNKNOWN:
                module_env[name] = value
                self._globals.setdefault(file, {})[name] = value

    def values_at(self, call: ast.Call, file: str, settings: Obj) -> dict[str, Any]:
        """What the names hold where ``call`` (a statement of ``file``) runs: the statements before it, in its
        function and in the blocks around it, are evaluated in order. A branch whose test is known is followed;
        names a branch with an unknown test or a loop assigns are unknown. The job's settings object
        (``args = parser.parse_args()``, a parameter used as a record: ``def main(args): … args.lr``) is
        ``settings``. Budgeted like a count; what cannot be evaluated stays unknown."""
        return self._values_at(call, file, settings, 0)

    def _values_at(self, call: ast.Call, file: str, settings: Obj, depth: int) -> dict[str, Any]:
        self._total, self._steps = 0, 0
        self.parsed_settings = settings
        env: dict[str, Any] = {}
        try:
            tree, module_env = self._module(file)
            env = dict(module_env)
            self._slice(tree, tree.body, call, env, file, (settings, depth))
        except _SLICE_ERRORS:
            pass
        self._total = 0
        held = list(_members(env.values()))  # (`network_dict = nn.ModuleDict({...})`: the modules inside count too)
        self._handed = {id(v): (v, self._sizes[id(v)][1]) for v in held if id(v) in self._sizes}
        self._handed.update({id(v): (v, v.params) for v in held if isinstance(v, Layer)})
        return env

    def _parameters(
        self, tree: ast.Module, fn: ast.FunctionDef, file: str, settings: Obj, depth: int
    ) -> dict[str, Any]:
        """A function's parameters where it runs: the arguments of its one call in the file (``main(args, config)``
        after ``config = yaml.safe_load(open(args.config))``), followed two calls deep; a parameter still unknown
        that the function uses as a record (``args.lr``, ``opt["netG"]``) is the job's settings."""
        env: dict[str, Any] = {}
        sites = [c for c in walk(tree) if isinstance(c, ast.Call) and getattr(c.func, "id", None) == fn.name]
        if len(sites) == 1 and depth < 2 and not (fn.lineno <= sites[0].lineno <= (fn.end_lineno or fn.lineno)):
            caller = self._values_at(sites[0], file, settings, depth + 1)
            try:
                args = [self._expr(a, caller, file) for a in sites[0].args if not isinstance(a, ast.Starred)]
                kwargs = {k.arg: self._expr(k.value, caller, file) for k in sites[0].keywords if k.arg}
                self._bind(fn, args, kwargs, env, file)
            except _SLICE_ERRORS:
                env = {}
        records = {
            n.value.id for n in walk(fn)
            if isinstance(n, ast.Attribute | ast.Subscript) and isinstance(n.value, ast.Name)
        }  # fmt: skip
        cli = any(  # `@click.command()` / `@click.option(...)` over `def main(hidden_dim=256, ...)`: the options
            re.match(r"(?:click|typer|app)\.(?:command|option|argument)\b|(?:command|option)\b", ast.unparse(d))
            for d in fn.decorator_list
        )  # the command line gives, not the signature's defaults
        for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs] if cli else ():
            if a.arg in settings.attrs and not isinstance(settings.attrs[a.arg], Obj):
                env[a.arg] = settings.attrs[a.arg]
        for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]:
            if isinstance(env.get(a.arg), Obj) and env[a.arg].cls:
                env[a.arg] = UNKNOWN  # an instance of the job's class (`AttrDict(json_config)`): its settings are read
            if env.get(a.arg, UNKNOWN) is UNKNOWN:
                env[a.arg] = settings if a.arg in records and a.arg not in ("self", "cls") else UNKNOWN
        return env

    def _slice(
        self, tree: ast.Module, body: list[ast.stmt], call: ast.Call, env: dict[str, Any], file: str,
        where: tuple[Obj, int],
    ) -> None:  # fmt: skip
        settings, depth = where
        for stmt in body:
            if not (stmt.lineno <= call.lineno <= (stmt.end_lineno or stmt.lineno)):
                if stmt.lineno > call.lineno:
                    return
                self._run(stmt, env, file, settings)
                if body is tree.body:  # a module global the command line sets keeps that value
                    env.update(self._globals.get(file, {}))
                continue
            if isinstance(stmt, ast.FunctionDef):
                env.update(self._parameters(tree, stmt, file, settings, depth))
                self._slice(tree, stmt.body, call, env, file, where)
            elif isinstance(stmt, ast.If):
                in_body = bool(stmt.body) and call.lineno <= (stmt.body[-1].end_lineno or stmt.body[-1].lineno)
                self._slice(tree, stmt.body if in_body else stmt.orelse, call, env, file, where)
            elif isinstance(stmt, ast.For | ast.While | ast.With | ast.AsyncWith | ast.AsyncFor):
                self._slice(tree, stmt.body, call, env, file, where)
            elif isinstance(stmt, ast.Try):
                for block in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                    if block and block[0].lineno <= call.lineno <= (block[-1].end_lineno or block[-1].lineno):
                        self._slice(tree, block, call, env, file, where)
            return

    def _run(self, stmt: ast.stmt, env: dict[str, Any], file: str, settings: Obj) -> None:
        """One statement before the call, for the values it gives names."""
        if isinstance(stmt, ast.If):
            try:
                test = self._expr(stmt.test, env, file)
            except _SLICE_ERRORS:
                test = UNKNOWN
            if test is UNKNOWN:
                _forget_assigned(stmt, env)
                return
            for s in stmt.body if test else stmt.orelse:
                self._run(s, env, file, settings)
        elif isinstance(stmt, ast.With | ast.AsyncWith | ast.Try):
            if isinstance(stmt, ast.With):
                try:
                    self.bind_with(stmt, env, file)
                except _SLICE_ERRORS:
                    _forget_assigned(stmt, env)
            for s in stmt.body:
                self._run(s, env, file, settings)
        elif isinstance(stmt, ast.For | ast.While | ast.AsyncFor):
            _forget_assigned(stmt, env)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Import | ast.ImportFrom):
            try:
                self._stmt(stmt, env, file)
            except _SLICE_ERRORS:
                _forget_assigned(stmt, env)
            for name in _settings_targets(stmt):
                if env.get(name, UNKNOWN) is UNKNOWN:
                    env[name] = settings
        elif isinstance(stmt, ast.FunctionDef | ast.ClassDef):
            env[stmt.name] = ("def", stmt, file)
        elif (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and isinstance(stmt.value.func.value, ast.Name)
            and isinstance(env.get(stmt.value.func.value.id), list | dict)
        ):  # fmt: skip
            try:  # `skips.append(4)`: a method of a container the slice holds
                self._expr(stmt.value, env, file)
            except _SLICE_ERRORS:
                env[stmt.value.func.value.id] = UNKNOWN

    def _layer(self, name: str, args: list[Any], kwargs: dict[str, Any], dotted: str = "") -> Any:
        if name == "deepcopy" and len(args) == 1:  # `nn.ModuleList([copy.deepcopy(block) for _ in range(n)])`
            return self._copy(args[0])
        value, params = torch_call(name, args, kwargs)
        if (
            value is UNKNOWN and dotted and not dotted.startswith(_TORCH_ROOTS) and _UNSEEN_LAYER.search(name)
            and any(is_number(a) and not isinstance(a, bool) and a > 1 for a in [*args, *kwargs.values()])
            and library_module(name, kwargs) is None and _library_model(name, args) is None
        ):  # fmt: skip
            # `ConvLayer(512, 512, 3)` of an uninstalled package (basicsr, a vendored mamba_ssm): sized layers out of
            # sight, so a count without them would be wrong
            raise AbortError(f"{dotted} builds layers this workspace does not define")
        if value is UNKNOWN and (library := library_module(name, kwargs)) is not None:
            value, params = library  # `torchvision.models.resnet50()`: its children, which the job may take apart
            self._sizes[id(value)] = (value, params)
            self._libraries[id(value)] = value
            self.library_builders.append(name)
        elif value is UNKNOWN and (size := _library_model(name, args)) is not None:
            value, params = Layer(size, 0), size  # `torchvision.models.resnet50()` inside the job's model
        self._total += params
        return value

    def _copy(self, value: Any) -> Any:
        """A deep copy of a module holds parameters of its own, as many as the original."""
        if isinstance(value, Layer):
            self._total += value.params
            self._templates[id(value)] = (value, value.params)
            return Layer(value.params, value.out, value.width)
        if isinstance(value, Obj) and id(value) in self._sizes:
            size = self._sizes[id(value)][1]
            self._templates[id(value)] = (value, size)
            self._total += size
            copied = Obj(attrs=dict(value.attrs), cls=value.cls, origin=value.origin)
            self._sizes[id(copied)] = (copied, size)
            return copied
        if value is None or isinstance(value, int | float | str | bytes):
            return value  # `copy.deepcopy(init_cfg)` of a plain setting
        if isinstance(value, dict | list) and _plain_data(value):
            return copy.deepcopy(value)  # settings as nested data (a YOLO model YAML's layer lists)
        raise AbortError("copy of a module of unknown size")

    # --- user classes and functions -------------------------------------------------------------
    def _invoke(self, callee: Callee, args: list[Any], kwargs: dict[str, Any]) -> Any:
        before = self._total
        value = self._invoke_body(callee, args, kwargs)
        if isinstance(value, Obj) and isinstance(callee[1], ast.ClassDef):
            self._sizes[id(value)] = (value, self._total - before)  # (the object is kept so its id stays its own)
        return value

    def _record(self, node: ast.ClassDef, callee: Callee, args: list[Any], kwargs: dict[str, Any]) -> Obj:
        """An instance of a dataclass / NamedTuple: its annotated fields in order, defaults under the arguments."""
        env = dict(self._module(callee[2])[1])
        fields: dict[str, Any] = {}
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                name = stmt.target.id
                default = stmt.value
                if isinstance(default, ast.Call) and getattr(default.func, "id", "") == "field":
                    default = next((k.value for k in default.keywords if k.arg == "default"), None)
                fields[name] = self._expr(default, env, callee[2]) if default is not None else UNKNOWN
        for name, value in zip(list(fields), args, strict=False):
            fields[name] = value
        fields.update({k: v for k, v in kwargs.items() if k in fields})
        return Obj(attrs=fields, cls=node.name, origin=callee)

    def _invoke_body(self, callee: Callee, args: list[Any], kwargs: dict[str, Any]) -> Any:
        _, node, file = callee
        if isinstance(node, ast.ClassDef):
            obj = Obj(cls=node.name, origin=callee)
            init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
            if init is None and _is_record_class(node):  # `ModelArgs(**model_args)`, `GPTConfig(n_layer=12)`
                return self._record(node, callee, args, kwargs)
            if init is None:
                base = self._base_of(node, file)
                if base is not None:
                    built = self._invoke(base, args, kwargs)
                    if isinstance(built, Obj) and built.cls == base[1].name:
                        built.cls, built.origin = node.name, callee  # the subclass's instance: its own methods
                    return built
                return obj
            env = dict(self._module(file)[1])
            env["__class__"] = callee
            self._bind(init, [obj, *args], kwargs, env, file)
            named = [*init.args.posonlyargs, *init.args.args[1:], *init.args.kwonlyargs]
            if node.name not in self.arguments:  # what the model's constructor received (`depth=50`)
                self.arguments[node.name] = {a.arg: env.get(a.arg, UNKNOWN) for a in named}
            if any(
                isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "save_hyperparameters"
                for c in walk(init)
            ):  # Lightning's `self.save_hyperparameters()`: `self.hparams.hidden_dim` reads the constructor's arguments
                obj.attrs["hparams"] = Obj(attrs={a.arg: env.get(a.arg, UNKNOWN) for a in named})
            self._function_body(init.body, env, file)
            return obj
        if isinstance(node, ast.FunctionDef) and node.name == "forward":
            return UNKNOWN  # a dummy forward pass in __init__ (strides from `self.forward(zeros)`) builds nothing
        if (
            isinstance(node, ast.FunctionDef) and args and isinstance(args[0], str) and args[0]
            and searches_tree(node, self._module(file)[0])
        ):  # fmt: skip
            if self.ws.exists(args[0]):
                return args[0]  # a file-finding helper given a file that is there hands it back as it is
            if (found := self.ws.only_file_named(args[0])) is not None:
                return found  # `check_yaml("hyp.scratch-high.yaml")`: the one file of that name below
        if isinstance(node, ast.FunctionDef):
            env = dict(self._module(file)[1])
            if (closure := self.closures.get(id(callee))) is not None and closure[0] is callee:
                env.update(closure[1])  # the names of the function it was defined in (timm's `to_2tuple`)
            self._bind(node, args, kwargs, env, file)
            if id(node) not in self._pure:
                self._pure[id(node)] = builds_nothing(node)
            if not self._pure[id(node)]:
                self._function_body(node.body, env, file)
                return env.get("__return__", UNKNOWN)
            saved = self._total
            try:  # `is_dist_avail_and_initialized()`, `get_rank()`: a function that builds nothing adds nothing
                self._function_body(node.body, env, file)
            except AbortError:
                if self._steps > self.max_steps:
                    raise  # the budget is spent: that ends the count, whatever the function is
                self._total = saved
                return UNKNOWN
            return env.get("__return__", UNKNOWN)
        return UNKNOWN

    def _base(self, origin: Callee) -> Callee | None:
        return self._base_of(origin[1], origin[2]) if isinstance(origin[1], ast.ClassDef) else None

    def _base_of(self, node: ast.ClassDef, file: str) -> Callee | None:
        for b in node.bases:
            if isinstance(b, ast.Attribute):  # `models.Base` of a job's package; `nn.GroupNorm` is a library's
                found = self._expr(b, dict(self._module(file)[1]), file)
            else:
                found = self._module(file)[1].get(b.id) if isinstance(b, ast.Name) else None
            if (
                isinstance(found, tuple)
                and found[0] == "def"
                and isinstance(found[1], ast.ClassDef)
                and found[1] is not node
            ):  # fmt: skip  (`class GroupNorm(nn.GroupNorm)` is not its own base)
                return found
        return None

    def _super_init(self, env: dict[str, Any], args: list[Any], kwargs: dict[str, Any], file: str) -> Any:
        cls = env.get("__class__")
        if not (isinstance(cls, tuple) and isinstance(cls[1], ast.ClassDef)):
            return None
        base = self._base_of(cls[1], cls[2])
        if base is None:
            return self._library_base_init(cls[1], env, args, kwargs)
        init = next((s for s in base[1].body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is None:
            return None
        benv = dict(self._module(base[2])[1])
        benv["__class__"] = base
        self._bind(init, [env.get("self", Obj()), *args], kwargs, benv, base[2])
        self._function_body(init.body, benv, base[2])
        return None

    def _named_base_init(self, base: str, this: Obj, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """``nn.Linear.__init__(self, in_features, out_features)`` in a class that extends the torch layer: the layer's
        parameters, as ``super().__init__`` would create them."""
        try:
            value, params = torch_call(base, list(args), dict(kwargs))
        except _SLICE_ERRORS:
            return None
        if isinstance(value, Layer):
            self._total += params
            this.attrs.setdefault("weight", value)  # the layer's own parameters, reachable from the instance
        return None

    def _library_base_init(
        self, node: ast.ClassDef, env: dict[str, Any], args: list[Any], kwargs: dict[str, Any]
    ) -> None:
        """``class Conv(nn.Conv2d)`` whose ``__init__`` calls ``super().__init__(*args, **kwargs)``: the torch layer
        it extends holds the parameters (a base of no known size adds none, as before)."""
        this = env.get("self")
        for b in node.bases:
            name = b.attr if isinstance(b, ast.Attribute) else (b.id if isinstance(b, ast.Name) else "")
            if not name or name in ("Module", "object"):
                continue
            try:
                value, params = torch_call(name, list(args), dict(kwargs))
            except _SLICE_ERRORS:
                continue
            if isinstance(value, Layer) and isinstance(this, Obj):
                self._total += params
                this.attrs.setdefault("weight", value)  # the layer's own parameters, reachable from the instance
            return

    def _fresh_count(self) -> None:
        """Forget what an earlier count built, for a count of a class on its own (no handed modules kept)."""
        self._total, self._steps = 0, 0
        self._sizes.clear()
        self._templates.clear()
        self._handed = {}
        self.arguments = {}
        self.last_built = None

    def count_class(self, file: str, name: str, kwargs: dict[str, Any]) -> int | None:
        """Parameters of ``name(**kwargs)`` for a class defined in (or imported by) ``file``."""
        self._fresh_count()
        try:
            callee = self._module(file)[1].get(name)
            if not (isinstance(callee, tuple) and callee[0] == "def"):
                return None
            built = self._invoke(callee, [], dict(kwargs))
        except _SLICE_ERRORS as exc:
            self._note(exc)
            return None
        self.last_built = built  # (its layers say the family: :meth:`kinds`)
        return self._result(built)

    def count_injected(self, name: str, sections: dict[str, dict[str, Any]], where: dict[str, str]) -> int | None:
        """Parameters of class ``name`` built the way a YAML registry injects modules (RT-DETR, PaddleDetection):
        its constructor's arguments are the settings of the section named after it, and an argument naming a class
        of ``where`` (class → the file defining it) is that class, built the same way first."""
        self._fresh_count()

        def build(cls: str, depth: int) -> Any:
            callee = self._module(where[cls])[1].get(cls)
            if not (isinstance(callee, tuple) and callee[0] == "def" and isinstance(callee[1], ast.ClassDef)):
                raise AbortError(f"{cls}: not a class of the job's")
            kwargs = {
                k: build(v, depth + 1) if isinstance(v, str) and v in where and depth < 6 else v
                for k, v in sections.get(cls, {}).items()
            }
            return self._invoke(callee, [], kwargs)

        try:
            built = build(name, 0)
        except _SLICE_ERRORS as exc:
            self._note(exc)
            return None
        return self._result(built)


_CLASS_COUNT: Final = re.compile(r"(?:num_|n_|n)?(?:classes|class|joints|keypoints|labels)", re.I)
_STAND_IN_CLASSES: Final = 10


def _is_main_test(test: ast.expr) -> bool:
    """``__name__ == "__main__"``."""
    return (
        isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
        and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )  # fmt: skip


def _in_range(key: Any, items: list[Any]) -> bool:
    return isinstance(key, int) and not isinstance(key, bool) and -len(items) <= key < len(items)


def _root(target: ast.expr) -> str:
    """The name an assignment target hangs from: ``model`` of ``model.classifier[6]``."""
    while isinstance(target, ast.Attribute | ast.Subscript):
        target = target.value
    return target.id if isinstance(target, ast.Name) else ""


def _members(values: Iterable[Any], depth: int = 3) -> Iterator[Any]:
    """The values, and what the dicts, lists and tuples among them hold (``depth`` levels down)."""
    for v in values:
        yield v
        if depth > 0 and isinstance(v, dict | list | tuple):
            yield from _members(v.values() if isinstance(v, dict) else v, depth - 1)


def _is_record_class(node: ast.ClassDef) -> bool:
    """A class whose constructor takes its annotated fields: ``@dataclass`` or a ``NamedTuple``."""
    return "dataclass" in last_names(node.decorator_list) or "NamedTuple" in last_names(node.bases)


_ATTENTION_CLASS: Final = re.compile(r"Attention|Attn")


def _graph(root: Obj, limit: int = 200_000, plain_dicts: bool = True) -> Iterator[Any]:
    """The layers and objects a built model holds (its attributes, lists and dicts, transitively), each once; without
    ``plain_dicts``, not through a plain dict attribute (``self.resnet_dict = {"resnet18": …}``: PyTorch registers
    the modules of an ``nn.ModuleDict`` only)."""
    seen: set[int] = set()
    stack: list[Any] = [root]
    while stack and len(seen) < limit:
        value = stack.pop()
        if id(value) in seen or not isinstance(value, Obj | Layer | list | tuple | dict):
            continue
        if not plain_dicts and type(value) is dict:
            continue
        seen.add(id(value))
        yield value
        if isinstance(value, Obj):
            stack.extend(value.attrs.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())


def _reachable(root: Obj, plain_dicts: bool = True) -> set[int]:
    """Ids of what a built model holds (see :func:`_graph`)."""
    return {id(v) for v in _graph(root, plain_dicts=plain_dicts)}


def _absl_flags(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` binds absl's / TensorFlow's parsed flags: ``FLAGS = flags.FLAGS``, ``tf.app.flags.FLAGS``."""
    if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Attribute) and stmt.value.attr == "FLAGS"):
        return False
    owner = stmt.value.value
    name = owner.id if isinstance(owner, ast.Name) else owner.attr if isinstance(owner, ast.Attribute) else ""
    return name == "flags"


def _settings_targets(stmt: ast.stmt) -> list[str]:
    """Names a statement binds to the result of a settings call (``args = parser.parse_args()``), or to absl's /
    TensorFlow's flag values (``FLAGS = flags.FLAGS``, ``FLAGS = tf.app.flags.FLAGS``)."""
    if isinstance(stmt, ast.Assign) and _absl_flags(stmt):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)):
        return []
    call = stmt.value
    while isinstance(call.func, ast.Subscript) and isinstance(call.func.value, ast.Call):
        call = call.func.value  # `parser.parse_known_args()[0]`
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if not _SETTINGS_CALL.search(name):
        return []
    return [t.id for t in stmt.targets if isinstance(t, ast.Name)]


def _forget_assigned(stmt: ast.stmt, env: dict[str, Any]) -> None:
    """Names ``stmt`` may assign hold unknowns afterwards (a branch not known to run, a loop)."""
    for node in walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            env[node.id] = UNKNOWN


def _library_model(name: str, args: list[Any]) -> int | None:
    """Parameters of a well-known architecture a library builds: ``resnet50(...)``, ``create_model("vit_…")``."""
    if name == "create_model" and args and isinstance(args[0], str):
        name = args[0]
    elif not (name.islower() and name.replace("_", "").isalnum()):
        return None
    hit = known_model(name)
    return int(hit[0] * 1e6) if hit is not None else None


def _plain_data(value: object, depth: int = 0) -> bool:
    """Whether ``value`` is settings only: numbers, strings, None, and dicts/lists/tuples of them (bounded depth)."""
    if value is None or isinstance(value, int | float | str | bool):
        return True
    if depth > 8 or not isinstance(value, dict | list | tuple):
        return False
    items = value.values() if isinstance(value, dict) else value
    return all(_plain_data(x, depth + 1) for x in items)
