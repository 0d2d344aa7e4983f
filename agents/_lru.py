"""A bounded map of per-job state: get-or-create, least recently used entries evicted."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

__all__ = ["LruMap"]

K = TypeVar("K")
V = TypeVar("V")


class LruMap(OrderedDict[K, V]):
    """An ``OrderedDict`` of at most ``max_entries``; :meth:`touch` gets (or makes) an entry and marks it used."""

    def __init__(self, max_entries: int) -> None:
        super().__init__()
        self.max_entries = max_entries

    def touch(self, key: K, factory: Callable[[], V]) -> V:
        """The entry of ``key`` (made with ``factory`` on first use), now the most recently used."""
        value = self.get(key)
        if value is None:
            value = self[key] = factory()
            if len(self) > self.max_entries:
                self.popitem(last=False)
        else:
            self.move_to_end(key)
        return value
