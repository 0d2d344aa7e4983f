"""Redaction at the edge: what a connector publishes carries no secret the job printed or was given.

Log lines (and the live partial line) of logs.chunks and the command of jobs.submitted are redacted
before they leave the host (see :mod:`schedmate.infra.redact`); a private-key block is hidden line
by line across the chunks of one log source. On by default; ``SCHEDMATE_REDACT=false`` turns it off.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from schedmate.infra.redact import LineRedactor, redact, redact_args
from schedmate.schemas import Event
from schedmate.schemas.jobs_submitted import JobSubmitted
from schedmate.schemas.logs_chunks import LogChunk

__all__ = ["EdgeRedactor"]


class EdgeRedactor:
    """Redacts events on their way to the broker (per-source state for multi-line secrets, LRU-bounded)."""

    def __init__(self, max_sources: int = 10_000) -> None:
        self._streams: OrderedDict[tuple[str, str], LineRedactor] = OrderedDict()
        self.max_sources = max_sources
        self.redacted = 0  # events changed

    def _stream(self, key: tuple[str, str]) -> LineRedactor:
        r = self._streams.pop(key, None) or LineRedactor()
        self._streams[key] = r
        if len(self._streams) > self.max_sources:
            self._streams.popitem(last=False)
        return r

    def event(self, event: Event) -> Event:
        """``event`` with its free text redacted (a copy; other events unchanged)."""
        update: dict[str, Any] = {}
        if isinstance(event, LogChunk):
            r = self._stream((event.job_id, event.source))
            lines = r.lines(event.lines)
            if lines != event.lines:
                update["lines"] = lines
            if event.partial is not None and (p := redact(event.partial)) != event.partial:
                update["partial"] = p
        elif isinstance(event, JobSubmitted):
            command = redact_args(event.command)
            if command != event.command:
                update["command"] = command
        if not update:
            return event
        self.redacted += 1
        return event.model_copy(update=update)
