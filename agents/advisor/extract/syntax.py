"""Small readings of Python syntax shared by the extraction passes (read, never run)."""

from __future__ import annotations

import ast
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable

__all__ = ["builds_hf_parser", "callee_name", "last_names", "parse", "walk"]

# Parsed modules are shared by the passes of one extraction and by later extractions of files with the same text
# (a resubmitted job, the variants of one repository): read-only — no pass may change a tree it did not build.
_CACHE_CHARS = 2_000_000  # source characters kept parsed (a tree takes some 50 bytes per character: ~100 MB)
_MAX_CACHED_FILE = 1_000_000
_MAX_REPAIRED_LINES = 20  # lines of older syntax given up to read the rest of a module
_MAX_REPAIRED_FILE = 300_000  # characters: larger files that do not parse are not repaired
_SECTION = re.compile(r"\s*\[?[\w.-]+\]?:?\s*(?:#.*)?$")
_ASYNC_KEYWORD = re.compile(r"(?<=[(,\s])async\s*=(?!=)")  # `x.cuda(async=True)`: torch < 0.4's keyword


class _Parsed:
    __slots__ = ("nodes", "tree")

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.nodes: tuple[ast.AST, ...] | None = None


_lock = threading.Lock()
_by_text: OrderedDict[str, _Parsed] = OrderedDict()
_by_tree: dict[int, _Parsed] = {}  # id of a cached tree (kept alive by the cache) → its entry
_chars = 0


def _parse_legacy(text: str) -> ast.Module:
    """``ast.parse(text)``; for code older than this Python (``x.cuda(async=True)``, a Python 2 ``print "..."``),
    each line the parser stops at becomes ``pass`` at its indentation, so the rest of the module is still read
    (line numbers kept). At most a tenth of the non-blank lines (20 at most) are given up; past that, or when a
    line gives way without progress, the first error is raised: text that is not Python stays not Python."""
    try:
        return ast.parse(text)
    except SyntaxError as first:
        if len(text) > _MAX_REPAIRED_FILE:
            raise  # each repair parses the file again: only for files of ordinary size
        err: SyntaxError = first
        renamed = _ASYNC_KEYWORD.sub("non_blocking=", text)  # torch 0.4 renamed `async=` (a keyword since 3.7)
        if renamed != text:
            try:
                return ast.parse(renamed)
            except SyntaxError as other:
                text, err = renamed, other
        lines = text.split("\n")
        budget = min(_MAX_REPAIRED_LINES, max(1, sum(1 for line in lines if line.strip()) // 10))
        for _ in range(budget):
            n = err.lineno
            if (
                n is None
                or not 1 <= n <= len(lines)
                or lines[n - 1].strip() in ("", "pass")
                or _SECTION.match(lines[n - 1])
            ):
                break  # (`train:` alone on a line: a YAML or INI section, not older Python)
            line = lines[n - 1]
            lines[n - 1] = line[: len(line) - len(line.lstrip())] + "pass"
            while line.rstrip().endswith("\\") and n < len(lines):  # its continuation lines go with it
                n, line = n + 1, lines[n]
                lines[n - 1] = ""
            try:
                return ast.parse("\n".join(lines))
            except SyntaxError as again:
                err = again
        raise first from None


def _read_xrange_as_range(tree: ast.Module) -> None:
    """Python 2's ``xrange`` (also ``from six.moves import xrange``) is ``range`` to whoever reads the loop, unless the
    module defines its own: ``for iteration in xrange(ITERS)`` runs ``ITERS`` passes. Done once, before the tree is
    shared."""
    if any(isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == "xrange" for n in ast.walk(tree)):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "xrange" and isinstance(node.ctx, ast.Load):
            node.id = "range"


def parse(text: str) -> ast.Module:
    """``ast.parse(text)``, cached by text (least recently used out past a few million characters), lenient to a
    few lines of older Python (see :func:`_parse_legacy`); raises what ``ast.parse`` raises. The tree is shared:
    read it, never change it."""
    global _chars
    with _lock:
        got = _by_text.get(text)
        if got is not None:
            _by_text.move_to_end(text)
            return got.tree
    tree = _parse_legacy(text)
    if "xrange" in text:
        _read_xrange_as_range(tree)
    if len(text) > _MAX_CACHED_FILE:
        return tree
    with _lock:
        if text not in _by_text:
            entry = _Parsed(tree)
            _by_text[text], _by_tree[id(tree)] = entry, entry
            _chars += len(text)
            while _chars > _CACHE_CHARS and len(_by_text) > 1:
                old_text, old = _by_text.popitem(last=False)
                del _by_tree[id(old.tree)]
                _chars -= len(old_text)
        return _by_text[text].tree


def walk(node: ast.AST) -> Iterable[ast.AST]:
    """``ast.walk(node)`` (the same nodes in the same order); a whole module from :func:`parse` is walked once and
    its nodes remembered."""
    entry = _by_tree.get(id(node)) if isinstance(node, ast.Module) else None
    if entry is None or entry.tree is not node:
        return ast.walk(node)
    if entry.nodes is None:
        entry.nodes = tuple(ast.walk(node))
    return entry.nodes


def callee_name(call: ast.Call) -> str:
    """The called name's last part: ``torch.optim.SGD(...)`` → "SGD", ``train(...)`` → "train" ("" otherwise)."""
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")


def last_names(nodes: Iterable[ast.expr]) -> set[str]:
    """The last part of each name among decorators or bases, calls unwrapped: ``@functools.cached_property`` →
    "cached_property", ``@dataclass(frozen=True)`` → "dataclass", ``(nn.Module, Enum)`` → {"Module", "Enum"}."""
    out: set[str] = set()
    for node in nodes:
        target = node.func if isinstance(node, ast.Call) else node
        out.add(target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", ""))
    return out


def builds_hf_parser(call: ast.Call) -> bool:
    """``HfArgumentParser((ModelArguments, TrainingArguments))``, or a parser subclass given dataclasses the same way
    (open-instruct's ``ArgumentParserPlus((FlatArguments, TokenizerConfig))``); not argparse's
    ``ArgumentParser(description=…)``."""
    name = callee_name(call)
    if name == "HfArgumentParser":
        return bool(call.args)
    first = call.args[0] if call.args else None
    return (
        re.fullmatch(r"\w*ArgumentParser\w*", name) is not None
        and isinstance(first, ast.Tuple | ast.List)
        and bool(first.elts)
        and all(isinstance(e, ast.Name) for e in first.elts)
    )


def searches_tree(fn: ast.FunctionDef, module: ast.Module | None, hops: int = 1) -> bool:
    """Whether ``fn``, or a function of ``module`` it calls (``hops`` deep), looks a file up by name in the folders
    below: ``glob.glob(str(ROOT / d / "**" / file), recursive=True)`` (YOLO's ``check_file``), ``Path(d).rglob(file)``.
    """
    for n in walk(fn):
        if not isinstance(n, ast.Call):
            continue
        name = callee_name(n)
        if name == "rglob" or (
            name in ("glob", "iglob")
            and any(k.arg == "recursive" and not (isinstance(k.value, ast.Constant) and not k.value.value)
                    for k in n.keywords)
        ):  # fmt: skip
            return True
        if hops > 0 and isinstance(n.func, ast.Name) and module is not None:
            inner = next((d for d in module.body if isinstance(d, ast.FunctionDef) and d.name == n.func.id), None)
            if inner is not None and inner is not fn and searches_tree(inner, module, hops - 1):
                return True
    return False
