"""Small readings of Python syntax shared by the extraction passes (read, never run)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

__all__ = ["last_names"]


def last_names(nodes: Iterable[ast.expr]) -> set[str]:
    """The last part of each name among decorators or bases, calls unwrapped: ``@functools.cached_property`` →
    "cached_property", ``@dataclass(frozen=True)`` → "dataclass", ``(nn.Module, Enum)`` → {"Module", "Enum"}."""
    out: set[str] = set()
    for node in nodes:
        target = node.func if isinstance(node, ast.Call) else node
        out.add(target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", ""))
    return out
