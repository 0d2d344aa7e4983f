"""Cutting a byte stream into physical lines and the lines into chunks (by count, bytes and time).

:class:`LineChunkStream` puts the two together for every log connector (runner, push, tailer)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from schedmate.schemas.logs_chunks import LogChunk

__all__ = ["ChunkBuilder", "Cut", "LineChunkStream", "LineSplitter", "compact_line"]

MAX_LINE_BYTES = 64 * 1024


def compact_line(raw: bytes, limit: int = MAX_LINE_BYTES) -> str:
    """Decode one physical line (invalid UTF-8 replaced) and bound its size.

    A line redrawn with ``\\r`` keeps its last redraws (what a terminal shows); any other
    over-long line keeps its head and says how much was cut.
    """
    if len(raw) > limit:
        cr = raw.rfind(b"\r", 0, len(raw) - 1)
        if cr >= 0 and len(raw) - cr <= limit:
            raw = raw[raw.find(b"\r", len(raw) - limit) :]  # the redraws that fit
        else:
            cut = len(raw) - limit
            return raw[:limit].decode("utf-8", errors="replace") + f" …[{cut} bytes cut]"
    return raw.decode("utf-8", errors="replace")


@dataclass
class LineSplitter:
    """Accumulates bytes; yields complete physical lines (``\\n``-terminated, ``\\r`` kept inside).

    Memory is bounded whatever arrives: an unfinished line keeps its latest ``\\r`` redraws that fit,
    and a line with no ``\\r`` and no ``\\n`` keeps its head (``limit`` bytes) and counts the rest.
    """

    limit: int = MAX_LINE_BYTES
    _pending: bytearray = field(default_factory=bytearray)
    _dropped: int = 0  # bytes of the unfinished line already discarded (old redraws)
    _cut: int = 0  # bytes of the unfinished line discarded after its head (no redraws to keep)

    def feed(self, data: bytes) -> list[str]:
        """Complete lines found after adding ``data``."""
        return [text for text, _ in self.feed_sized(data)]

    def feed_sized(self, data: bytes) -> list[tuple[str, int]]:
        """Complete lines with their raw byte length (without the ``\\n``)."""
        self._pending += data
        if b"\n" not in data:
            self._bound_pending()
            return []
        parts = bytes(self._pending).split(b"\n")
        self._pending = bytearray(parts.pop())
        out = [(compact_line(p, self.limit), len(p)) for p in parts]
        if self._cut:
            first = parts[0]
            cut = len(first) - self.limit + self._cut
            out[0] = (compact_line(first[: self.limit], self.limit) + f" …[{cut} bytes cut]", len(first) + self._cut)
            self._cut = 0
        if self._dropped:
            out[0] = (out[0][0], out[0][1] + self._dropped)
            self._dropped = 0
        self._bound_pending()
        return out

    def _bound_pending(self) -> None:
        if len(self._pending) <= 4 * self.limit:
            return
        cr = self._pending.rfind(b"\r", 0, len(self._pending) - self.limit)
        if cr > 0 and not self._cut:
            del self._pending[:cr]
            self._dropped += cr
        if len(self._pending) > 4 * self.limit:  # no redraw to keep: the head stays, the rest is counted
            self._cut += len(self._pending) - self.limit
            del self._pending[self.limit :]

    @property
    def partial(self) -> str | None:
        """The unfinished last line, if any (for live progress bars)."""
        if not self._pending:
            return None
        text = compact_line(bytes(self._pending), self.limit)
        return text + f" …[{self._cut} bytes cut]" if self._cut else text

    def flush(self) -> list[str]:
        """At end of stream: the unfinished line as a last line."""
        if not self._pending:
            return []
        line = self.partial or ""
        self._pending.clear()
        self._dropped = self._cut = 0
        return [line]


@dataclass
class ChunkBuilder:
    """Groups one source's lines into :class:`LogChunk` s with contiguous line numbers and seq."""

    job_id: str
    source: str = "stdout"
    node: str | None = None
    max_lines: int = 500
    max_bytes: int = 256 * 1024
    max_age_s: float = 0.5
    next_line: int = 1
    seq: int = 0
    _lines: list[str] = field(default_factory=list)
    _bytes: int = 0
    _since: float | None = None

    def add(self, lines: list[str]) -> list[LogChunk]:
        """Add lines; return chunks that are full."""
        out: list[LogChunk] = []
        for line in lines:
            if self._since is None:
                self._since = time.monotonic()
            self._lines.append(line)
            self._bytes += len(line) + 1
            if len(self._lines) >= self.max_lines or self._bytes >= self.max_bytes:
                out.append(self._cut())
        return out

    def due(self) -> bool:
        """Whether buffered lines are older than ``max_age_s``."""
        return self._since is not None and time.monotonic() - self._since >= self.max_age_s

    def take(self, partial: str | None = None, eof: bool = False) -> LogChunk | None:
        """A chunk of whatever is buffered (plus the live partial line), or None if nothing."""
        if not self._lines and partial is None and not eof:
            return None
        return self._cut(partial, eof)

    @property
    def buffered(self) -> int:
        """Lines waiting to be cut."""
        return len(self._lines)

    def _cut(self, partial: str | None = None, eof: bool = False) -> LogChunk:
        chunk = LogChunk(
            job_id=self.job_id, source=self.source, seq=self.seq, first_line=self.next_line,
            lines=self._lines, partial=partial, node=self.node, eof=eof,
        )  # fmt: skip
        self.seq += 1
        self.next_line += len(self._lines)
        self._lines, self._bytes, self._since = [], 0, None
        return chunk


@dataclass(frozen=True, slots=True)
class Cut:
    """A chunk ready to publish and the bytes of the stream it covers (``start``..``end``)."""

    chunk: LogChunk
    start: int  # offset of the chunk's first line
    end: int  # offset after its last line (and its newline)


class LineChunkStream:
    """One log source's bytes in, :class:`LogChunk` s out — what every log connector does.

    Physical lines (bounded), chunks cut by count, bytes or age, the live unfinished line sent
    as ``partial`` whenever it changes (never the same one twice), and an EOF chunk at the end.
    Each chunk comes with the byte range it covers, for connectors that checkpoint positions.
    """

    def __init__(
        self,
        job_id: str,
        source: str = "stdout",
        node: str | None = None,
        max_lines: int = 500,
        max_age_s: float = 0.5,
        next_line: int = 1,
        seq: int = 0,
        offset: int = 0,
    ) -> None:
        self.builder = ChunkBuilder(job_id, source=source, node=node, max_lines=max_lines, max_age_s=max_age_s,
                                    next_line=next_line, seq=seq)  # fmt: skip
        self.reset(offset)

    def reset(self, offset: int = 0, next_line: int | None = None, seq: int | None = None) -> None:
        """Continue at byte ``offset`` of a new or truncated file: the unfinished line and buffered lines are dropped;
        line and chunk numbering continue (or restart at ``next_line`` / ``seq``)."""
        self.splitter = LineSplitter()
        self.builder.take()  # nothing buffered survives a reset
        if next_line is not None:
            self.builder.next_line = next_line
        if seq is not None:
            self.builder.seq = seq
        self.pos = self._chunk_start = self._line_end = offset
        self._last_partial: str | None = None

    def _cut(self, chunk: LogChunk) -> Cut:
        cut = Cut(chunk, self._chunk_start, self._line_end)
        self._chunk_start = self._line_end
        return cut

    def feed(self, data: bytes) -> list[Cut]:
        """Chunks that are full after ``data``."""
        self.pos += len(data)
        out: list[Cut] = []
        for text, raw_len in self.splitter.feed_sized(data):
            self._line_end += raw_len + 1
            out.extend(self._cut(c) for c in self.builder.add([text]))
        return out

    def due(self) -> Cut | None:
        """A chunk of lines older than the age limit, or of a live line that changed since it was last sent."""
        partial = self.splitter.partial
        changed = partial is not None and partial != self._last_partial
        if not (self.builder.due() or changed):
            return None
        chunk = self.builder.take(partial=partial if changed else None)
        if chunk is None:
            return None
        self._last_partial = partial
        return self._cut(chunk)

    def finish(self) -> list[Cut]:
        """At end of stream: the unfinished line as a last line, then the EOF chunk."""
        out: list[Cut] = []
        tail = self.splitter.flush()
        if tail:
            self._line_end = self.pos  # an unterminated last line ends where the stream does
            out.extend(self._cut(c) for c in self.builder.add(tail))
        last = self.builder.take(eof=True)
        if last is not None:
            out.append(self._cut(last))
        return out
