"""The lines a failure diagnosis needs, kept per job while its log streams by.

A failed job's root cause lies after its last progress line (see :mod:`.locator`), so per job
only the lines since the last progress line (plus a margin before it) are kept. The Metric
Tracker says, per chunk of lines it parsed, which line was the last one to report progress
(:meth:`FailureTails.record`); the diagnosis reads a copy (:meth:`FailureTails.lines`) from
another thread, so the container is thread-safe.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from schedmate.agents._lru import LruMap

__all__ = ["TAIL_MARGIN", "TAIL_MAX", "FailureTail", "FailureTails"]

TAIL_MARGIN: Final = 60
TAIL_MAX: Final = 1000  # lines kept after the last progress line
TAIL_MAX_CHARS: Final = 64 * 1024  # and at most this many characters of them
LINE_CHARS: Final = 1024  # a kept line's size: a job printing 64 KiB lines keeps ~1 KiB of each
_PERSISTED_CHARS: Final = 400


def _keep(raw: str) -> str:
    """A line as kept: its head, or for a line redrawn with ``\\r`` its last redraws (what a terminal shows)."""
    if len(raw) <= LINE_CHARS:
        return raw
    return raw[-LINE_CHARS:] if "\r" in raw[LINE_CHARS:] else raw[:LINE_CHARS]


@dataclass(slots=True)
class FailureTail:
    """One job's tail: since the last progress line (plus a margin before it).

    Bounded: the margin is a ring of ``TAIL_MARGIN`` lines; after the last progress line at
    most ``TAIL_MAX`` lines of at most ``TAIL_MAX_CHARS`` characters in all are kept (the start
    of a cascade matters, not its end); each line is cut to ``LINE_CHARS``.
    """

    ring: deque[tuple[int, str]] = field(default_factory=lambda: deque(maxlen=TAIL_MARGIN))
    tail: list[tuple[int, str]] = field(default_factory=list)
    chars: int = 0  # characters in ``tail``

    def _full(self) -> bool:
        return len(self.tail) >= TAIL_MAX or self.chars >= TAIL_MAX_CHARS

    def _append(self, line_no: int, raw: str) -> None:
        self.tail.append((line_no, raw))
        self.chars += len(raw)

    def add(self, line_no: int, raw: str, progress: bool) -> None:
        """Record one raw line."""
        raw = _keep(raw)
        if progress:
            self.tail = [*self.ring, (line_no, raw)]
            self.chars = sum(len(t) for _, t in self.tail)
        elif not self._full():
            self._append(line_no, raw)
        self.ring.append((line_no, raw))

    def extend(self, first_line_no: int, lines: Sequence[str], last_progress: int | None) -> None:
        """Record consecutive lines; ``last_progress`` is the index of the last progress line among them."""
        start = 0
        if last_progress is not None:
            for i in range(max(0, last_progress - TAIL_MARGIN), last_progress):
                self.ring.append((first_line_no + i, _keep(lines[i])))
            self.add(first_line_no + last_progress, lines[last_progress], progress=True)
            start = last_progress + 1
        i = start
        while i < len(lines) and not self._full():
            self._append(first_line_no + i, _keep(lines[i]))
            i += 1
        margin_from = max(start, len(lines) - TAIL_MARGIN)
        self.ring.extend((first_line_no + i, _keep(lines[i])) for i in range(margin_from, len(lines)))

    def lines(self) -> tuple[int, list[str]]:
        """(line number of the first kept line, the kept raw lines)."""
        kept = self.tail or list(self.ring)
        return (kept[0][0] if kept else 1), [t for _, t in kept]

    def to_state(self) -> list[tuple[int, str]]:
        """Persistable form (the tail, or the margin ring before any progress), each line cut to 400 chars."""
        return [(n, t[:_PERSISTED_CHARS]) for n, t in (self.tail or list(self.ring))]

    @classmethod
    def from_state(cls, rows: Sequence[tuple[int, str]]) -> FailureTail:
        """Inverse of :meth:`to_state`."""
        ft = cls()
        for n, t in rows[:TAIL_MAX]:
            ft._append(int(n), _keep(str(t)))
        ft.ring.extend(ft.tail[-TAIL_MARGIN:])
        return ft


class FailureTails:
    """Every tracked job's :class:`FailureTail` (least recently used jobs evicted); thread-safe."""

    def __init__(self, max_jobs: int = 100_000) -> None:
        self._tails: LruMap[str, FailureTail] = LruMap(max_jobs)
        self._lock = threading.Lock()

    def _get(self, job_id: str) -> FailureTail:
        return self._tails.touch(job_id, FailureTail)

    def record(self, job_id: str, first_line_no: int, lines: Sequence[str], last_progress: int | None) -> None:
        """A chunk of ``job_id``'s raw lines (the Metric Tracker's line sink)."""
        with self._lock:
            self._get(job_id).extend(first_line_no, lines, last_progress)

    def lines(self, job_id: str) -> tuple[int, list[str]]:
        """A copy of ``job_id``'s tail: (line number of its first line, the raw lines)."""
        with self._lock:
            return self._get(job_id).lines()

    def to_state(self, job_id: str) -> list[tuple[int, str]]:
        """``job_id``'s tail in persistable form."""
        with self._lock:
            return self._get(job_id).to_state()

    def restore(self, job_id: str, rows: Sequence[tuple[int, str]]) -> None:
        """Load ``job_id``'s persisted tail."""
        with self._lock:
            self._tails[job_id] = FailureTail.from_state(rows)

    def forget(self, job_id: str) -> None:
        """Drop ``job_id``'s tail."""
        with self._lock:
            self._tails.pop(job_id, None)
