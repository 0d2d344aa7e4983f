"""The budget one job's static extraction runs under: time, files, bytes read, nodes visited, value sizes.

A job's working directory is untrusted input: a 721-byte YAML of anchors, a ``run.sh`` doubling a
variable forty times or a list doubled by ``.extend`` in a loop describe terabytes. Every place
that reads a file, walks a parsed structure or builds a value charges the budget of the
extraction in progress (a context variable, so concurrent extractions in threads do not share
one); exceeding it raises :class:`ExtractionCutError`, which the extraction's stage boundary catches,
keeping what earlier stages found. Memory and wall time are also bounded from outside, by the
process the extraction runs in (:mod:`.sandbox`).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from schedmate.agents.exceptions import AgentError

__all__ = [
    "Budget",
    "ExtractionCutError",
    "charge_file",
    "charge_nodes",
    "check_size",
    "check_time",
    "past_share",
    "spending",
]


class ExtractionCutError(AgentError):
    """The extraction ran out of its budget; what it found so far stands."""


@dataclass
class Budget:
    """Limits of one extraction (defaults fit real repositories with a wide margin)."""

    time_s: float = 5.0
    max_files: int = 400
    max_bytes: int = 16_000_000
    max_nodes: int = 1_000_000  # parsed/walked structure nodes (YAML entries, evaluator steps, composed keys)
    max_value: int = 1_200_000  # length of one built string or container (a file's text, 1 MB at most, and its lines)
    started: float = field(default_factory=time.monotonic)
    files: int = 0
    bytes: int = 0
    nodes: int = 0

    def over_time(self) -> bool:
        """Whether the time budget is spent."""
        return time.monotonic() - self.started > self.time_s


_current: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("schedmate_extract_budget", default=None)


@contextmanager
def spending(budget: Budget) -> Iterator[Budget]:
    """Make ``budget`` the one charged by extraction code in this context."""
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)


def past_share(share: float) -> bool:
    """Whether more than ``share`` of any of the extraction's limits (time, files, bytes, nodes) is spent.

    A part that may take long (the parameter interpreter on a large model package) stops at its share, so
    the parts after it (names, tables, datasets) still run inside the budget instead of losing a whole stage.
    Never true outside an extraction.
    """
    b = _current.get()
    if b is None:
        return False
    return (
        time.monotonic() - b.started > share * b.time_s
        or b.files > share * b.max_files
        or b.bytes > share * b.max_bytes
        or b.nodes > share * b.max_nodes
    )


def check_time() -> None:
    """Raise :class:`ExtractionCutError` if the extraction in progress is out of time."""
    b = _current.get()
    if b is not None and b.over_time():
        raise ExtractionCutError(f"time budget of {b.time_s:g} s spent")


def charge_file(nbytes: int) -> None:
    """One more file of ``nbytes`` read."""
    b = _current.get()
    if b is None:
        return
    b.files += 1
    b.bytes += nbytes
    if b.files > b.max_files:
        raise ExtractionCutError(f"more than {b.max_files} file reads")
    if b.bytes > b.max_bytes:
        raise ExtractionCutError(f"more than {b.max_bytes} bytes read")
    if b.over_time():
        raise ExtractionCutError(f"time budget of {b.time_s:g} s spent")


def charge_nodes(n: int = 1) -> None:
    """``n`` more structure nodes visited (checks the clock every 4096 nodes)."""
    b = _current.get()
    if b is None:
        return
    before = b.nodes
    b.nodes += n
    if b.nodes > b.max_nodes:
        raise ExtractionCutError(f"more than {b.max_nodes} nodes visited")
    if (before >> 12) != (b.nodes >> 12) and b.over_time():
        raise ExtractionCutError(f"time budget of {b.time_s:g} s spent")


def check_size(n: int, what: str = "value") -> None:
    """A built string or container of length ``n`` (refused over the budget's ``max_value``)."""
    b = _current.get()
    limit = b.max_value if b is not None else Budget.max_value
    if n > limit:
        raise ExtractionCutError(f"a {what} of {n} items/characters is over the {limit} limit")
