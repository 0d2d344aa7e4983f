"""Small readings of Python syntax shared by the extraction passes (read, never run)."""

from __future__ import annotations

import ast
import threading
from collections import OrderedDict
from collections.abc import Iterable

__all__ = ["last_names", "parse", "walk"]

# Parsed modules are shared by the passes of one extraction and by later extractions of files with the same text
# (a resubmitted job, the variants of one repository): read-only — no pass may change a tree it did not build.
_CACHE_CHARS = 2_000_000  # source characters kept parsed (a tree takes some 50 bytes per character: ~100 MB)
_MAX_CACHED_FILE = 1_000_000


class _Parsed:
    __slots__ = ("nodes", "tree")

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.nodes: tuple[ast.AST, ...] | None = None


_lock = threading.Lock()
_by_text: OrderedDict[str, _Parsed] = OrderedDict()
_by_tree: dict[int, _Parsed] = {}  # id of a cached tree (kept alive by the cache) → its entry
_chars = 0


def parse(text: str) -> ast.Module:
    """``ast.parse(text)``, cached by text (least recently used out past a few million characters); raises what
    ``ast.parse`` raises. The tree is shared: read it, never change it."""
    global _chars
    with _lock:
        got = _by_text.get(text)
        if got is not None:
            _by_text.move_to_end(text)
            return got.tree
    tree = ast.parse(text)
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


def last_names(nodes: Iterable[ast.expr]) -> set[str]:
    """The last part of each name among decorators or bases, calls unwrapped: ``@functools.cached_property`` →
    "cached_property", ``@dataclass(frozen=True)`` → "dataclass", ``(nn.Module, Enum)`` → {"Module", "Enum"}."""
    out: set[str] = set()
    for node in nodes:
        target = node.func if isinstance(node, ast.Call) else node
        out.add(target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", ""))
    return out
