"""logs.chunks: a job's log lines, batched at the source, ordered by a per-source sequence number."""

from __future__ import annotations

from pydantic import Field, model_validator

from schedmate.schemas._base import Event, TopicSpec, now

__all__ = ["MAX_CHUNK_LINES", "TOPIC", "LogChunk"]

MAX_CHUNK_LINES = 20_000


class LogChunk(Event):
    """Consecutive physical lines of one log source of one job.

    ``seq`` counts chunks of ``(job_id, source)`` from 0 without gaps; ``first_line``
    is the 1-based number of the first line in that source, so every line has a stable
    identity ``(job_id, source, line number)`` that consumers de-duplicate on.
    ``partial`` is the current text of the source's unfinished last line (a progress bar
    redrawn with ``\r``): a state, not a line; it is delivered again, complete, in ``lines``.
    """

    job_id: str = Field(min_length=1, max_length=256)
    source: str = Field(default="stdout", max_length=1024)
    seq: int = Field(ge=0)
    first_line: int = Field(ge=1)
    lines: list[str] = Field(default_factory=list, max_length=MAX_CHUNK_LINES)
    partial: str | None = Field(default=None, max_length=1_000_000)
    node: str | None = None
    ts: float = Field(default_factory=now)
    eof: bool = False

    @model_validator(mode="after")
    def _no_newlines(self) -> LogChunk:
        if any("\n" in line for line in self.lines):
            raise ValueError("lines must not contain '\\n' (one physical line per item)")
        if not self.lines and self.partial is None and not self.eof:
            raise ValueError("a chunk needs lines, a partial line or eof")
        return self

    @property
    def chunk_id(self) -> str:
        """Stable identity of this chunk."""
        return f"{self.job_id}/{self.source}/{self.seq}"

    @property
    def last_line(self) -> int:
        """1-based number of the chunk's last line."""
        return self.first_line + len(self.lines) - 1


TOPIC = TopicSpec("logs.chunks", LogChunk, "job_id", description=LogChunk.__doc__ or "", producer="connector")
