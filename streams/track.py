"""The ``track`` agent: logs.chunks in windowed batches → at most one jobs.metrics per job per interval.

Per job it owns the ``track`` part of the job's state (see :mod:`schedmate.streams.state`): the
last line number applied of every log source and the tracker's progress state, written before
the input offsets are committed. Lines already applied are skipped, so a redelivery after a
crash or rebalance neither loses nor double-counts lines. Parsing runs in a worker thread (one
batch at a time) so the event loop keeps heart-beating; new templates are embedded in another
thread, so a slow model never delays metrics.

Other runtimes of the worker read, through :meth:`TrackRuntime.log_status`, how far a job's log
has arrived (the diagnose agent waits for a failed job's complete log).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from schedmate.agents.logtext.templates import TemplateClassifier
from schedmate.agents.tracker.metric_tracker import LineSink, MetricTracker
from schedmate.infra.logging import get_logger
from schedmate.infra.redact import redact
from schedmate.schemas import InvalidEventError
from schedmate.schemas import jobs_metrics as metrics_schema
from schedmate.schemas import logs_chunks as chunks_schema
from schedmate.schemas.jobs_metrics import JobMetrics
from schedmate.schemas.logs_chunks import LogChunk
from schedmate.schemas.track_state import JobState, TrackPart
from schedmate.streams.app import StreamsApp, add_batch_agent
from schedmate.streams.deadletter import send_dead_letter
from schedmate.streams.runtime import Runtime
from schedmate.streams.state import JobStates

__all__ = ["LogStatus", "TrackRuntime", "register_track"]

log = get_logger(__name__)
_WORKER = f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True, slots=True)
class LogStatus:
    """How far a job's log has arrived on this worker."""

    lines_total: int
    last_chunk_at: float  # 0.0: no chunk yet
    eof: bool
    nodes: tuple[str, ...] = ()  # nodes the log connectors said they read the job's log on


@dataclass(slots=True)
class _JobWindow:
    done: dict[str, int] = field(default_factory=dict)  # source → last line number applied
    lines_total: int = 0
    window_start: float = field(default_factory=time.time)
    window_lines: int = 0
    window_step: int | None = None
    last_emit: float = 0.0
    dirty: bool = False
    duplicates: int = 0
    gaps: int = 0
    last_chunk_at: float = 0.0
    eof: bool = False
    nodes: list[str] = field(default_factory=list)


_MAX_NODES = 256  # log-connector nodes kept per job


class TrackRuntime(Runtime):
    """State and logic of the track agent on one worker."""

    name = "track"
    part = "track"

    def __init__(
        self, sa: StreamsApp, states: JobStates, classifier: TemplateClassifier | None, line_sink: LineSink | None
    ) -> None:
        super().__init__()
        self.sa = sa
        self.states = states
        self.interval = sa.settings.metrics_interval_s
        self.classifier = classifier
        self.tracker = MetricTracker(classes=classifier, line_sink=line_sink)
        self.jobs: dict[str, _JobWindow] = {}
        self.emitted = 0
        self.dead = 0
        # One thread owns the tracker (parse, settle); another embeds new templates.
        self._parse_pool = ThreadPoolExecutor(1, thread_name_prefix="track-parse")
        self._embed_pool = ThreadPoolExecutor(1, thread_name_prefix="track-embed")
        self._classifying: asyncio.Task[None] | None = None
        self._warming: asyncio.Task[None] | None = None
        states.register(self)

    # -- lifecycle ----------------------------------------------------------------------------

    async def on_start(self) -> None:
        """Load the embedding model in the background."""
        if self.classifier is not None:
            self._warming = asyncio.ensure_future(self._warm_up())

    async def _warm_up(self) -> None:
        assert self.classifier is not None
        with contextlib.suppress(Exception):
            await asyncio.get_running_loop().run_in_executor(self._embed_pool, self.classifier.warm_up)

    async def on_stop(self) -> None:
        """Stop classifying and the worker threads (the parse thread finishes its batch)."""
        for task in (self._classifying, self._warming):
            if task is not None:
                task.cancel()
        self._parse_pool.shutdown(wait=True)
        self._embed_pool.shutdown(wait=False, cancel_futures=True)

    # -- the job state part this runtime owns -------------------------------------------------

    def restore(self, job_id: str, state: JobState | None) -> None:
        """Start (or resume from ``state``) tracking ``job_id``."""
        job = self.jobs[job_id] = _JobWindow()
        if state is None:
            return
        t = state.track
        job.done = dict(t.done)
        job.lines_total = t.lines_total
        job.last_emit = t.last_emit
        job.dirty = t.dirty  # its last window may not have been emitted
        job.eof = t.eof
        job.nodes = list(t.nodes)
        self.tracker.restore(job_id, t.progress)
        counts = self.tracker.job(job_id).counts
        counts.error, counts.warning, counts.last_error = t.error, t.warning, t.last_error

    def dump(self, job_id: str) -> TrackPart:
        """The ``track`` part of ``job_id``'s state (``dirty``: written before its window is emitted)."""
        job = self.jobs[job_id]
        tj = self.tracker.job(job_id)
        return TrackPart(
            done=job.done, lines_total=job.lines_total, last_emit=job.last_emit, dirty=True, eof=job.eof,
            nodes=job.nodes, progress=tj.progress.to_state(), error=tj.counts.error, warning=tj.counts.warning,
            last_error=tj.counts.last_error,
        )  # fmt: skip

    def forget(self, job_id: str) -> None:
        """Drop ``job_id`` (its partition moved away)."""
        self.jobs.pop(job_id, None)
        self.tracker.forget(job_id)

    def quiet(self, job_id: str) -> tuple[float, bool]:
        """(last chunk time, whether the log ended and its last window was published)."""
        job = self.jobs[job_id]
        return (job.last_chunk_at or job.window_start), job.eof and not job.dirty

    def log_status(self, job_id: str) -> LogStatus | None:
        """How far ``job_id``'s log has arrived (None: not tracked here)."""
        job = self.jobs.get(job_id)
        return None if job is None else LogStatus(job.lines_total, job.last_chunk_at, job.eof, tuple(job.nodes))

    # -- batch processing ---------------------------------------------------------------------

    async def process(self, messages: Sequence[Any]) -> None:
        """Decode, de-duplicate, parse (in a thread), persist state, emit due metrics."""
        for p in {m.partition for m in messages}:
            await self.states.ensure(p)
        fresh: list[LogChunk] = []
        for msg in messages:
            try:
                chunk = chunks_schema.TOPIC.decode(msg.value)
            except InvalidEventError as exc:
                self.dead += 1
                await send_dead_letter(self.sa, msg, str(exc), type(exc).__name__, agent="track")
                continue
            self.states.job(chunk.job_id, msg.partition)
            nodes = self.jobs[chunk.job_id].nodes
            if chunk.node and chunk.node not in nodes and len(nodes) < _MAX_NODES:
                nodes.append(chunk.node)  # set by the connector that read the log, not by the job
            unseen = self._unseen(chunk, msg)
            if unseen is not None:
                fresh.append(unseen)
        if not fresh:
            return
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._parse_pool, self._parse, fresh)
        if self.classifier is not None and self.classifier.pending and self._classifying is None:
            self._classifying = loop.create_task(self._classify())
        now = time.time()
        touched: dict[str, None] = {}
        for chunk in fresh:
            job = self.jobs[chunk.job_id]
            job.last_chunk_at = now
            job.eof = job.eof or chunk.eof
            job.lines_total += len(chunk.lines)
            job.window_lines += len(chunk.lines)
            job.dirty = True
            touched[chunk.job_id] = None
        await self.states.persist(touched)
        sends = [self._emit(job_id, now) for job_id in touched if now - self.jobs[job_id].last_emit >= self.interval]
        if sends:
            await asyncio.gather(*sends)

    def _unseen(self, chunk: LogChunk, msg: Any) -> LogChunk | None:
        """The part of ``chunk`` not applied yet (None: nothing new); notes duplicates and gaps."""
        job = self.jobs[chunk.job_id]
        done = job.done.get(chunk.source, 0)
        if chunk.lines and chunk.last_line <= done:
            job.duplicates += 1
            if chunk.partial is None:
                return None
            chunk = chunk.model_copy(update={"lines": [], "first_line": chunk.last_line + 1})
        elif chunk.lines and chunk.first_line <= done:  # overlaps lines already applied
            skip = done - chunk.first_line + 1
            chunk = chunk.model_copy(update={"lines": chunk.lines[skip:], "first_line": done + 1})
        elif chunk.lines and chunk.first_line > done + 1:
            job.gaps += 1
            log.warning(
                "log lines missing", job_id=chunk.job_id, source=chunk.source,
                expected=done + 1, got=chunk.first_line, topic=msg.topic, partition=msg.partition,
                offset=msg.offset,
            )  # fmt: skip
        if chunk.lines:
            job.done[chunk.source] = chunk.last_line
        return chunk

    def _parse(self, chunks: list[LogChunk]) -> None:
        feed = self.tracker.feed
        for chunk in chunks:
            if chunk.lines:
                feed(chunk.job_id, chunk.first_line, chunk.lines)
            if chunk.partial is not None:
                self.tracker.feed_partial(chunk.job_id, chunk.first_line + len(chunk.lines), chunk.partial)

    async def _classify(self) -> None:
        """Decide pending templates in the embedding thread, then credit the lines waiting on them."""
        assert self.classifier is not None
        loop = asyncio.get_running_loop()
        try:
            while self.classifier.pending:
                await loop.run_in_executor(self._embed_pool, self.classifier.classify_pending)
                await loop.run_in_executor(self._parse_pool, self.tracker.settle)
        except Exception:  # a broken model must not stop metrics
            log.exception("template classification failed; lines stay unclassified")
        finally:
            self._classifying = None

    # -- emission -----------------------------------------------------------------------------

    def metrics_of(self, job_id: str, now: float) -> JobMetrics:
        """The jobs.metrics event for ``job_id`` over its current window."""
        job = self.jobs[job_id]
        snap = self.tracker.snapshot(job_id)
        counts = self.tracker.job(job_id).counts
        span = max(1e-6, now - job.window_start)
        steps_per_s = None
        if snap.step is not None and job.window_step is not None and snap.step >= job.window_step:
            steps_per_s = round((snap.step - job.window_step) / span, 6)
        progress = snap.as_dict()
        return JobMetrics(
            job_id=job_id,
            window_start=job.window_start,
            window_end=now,
            **{k: v for k, v in progress.items() if k != "line"},
            steps_per_s=steps_per_s,
            progress_line=progress["line"],
            lines_in_window=job.window_lines,
            lines_total=job.lines_total,
            error_lines=counts.error,
            warning_lines=counts.warning,
            last_error=None if counts.last_error is None else redact(counts.last_error),
            worker=_WORKER,
        )

    async def _emit(self, job_id: str, now: float) -> None:
        event = self.metrics_of(job_id, now)
        job = self.jobs[job_id]
        job.window_start, job.window_lines, job.window_step = now, 0, event.step
        job.last_emit, job.dirty = now, False
        fut = await self.sa.send(metrics_schema.TOPIC, job_id.encode(), event.to_bytes())
        await fut
        self.emitted += 1

    async def flush_due(self) -> None:
        """Emit every job with unreported lines whose interval has passed (the timer)."""
        if self.stopped:
            return
        now = time.time()
        due = [j for j, w in self.jobs.items() if w.dirty and now - w.last_emit >= self.interval]
        if due:
            await asyncio.gather(*(self._emit(j, now) for j in due))


def register_track(
    sa: StreamsApp, states: JobStates, classifier: TemplateClassifier | None, line_sink: LineSink | None = None
) -> TrackRuntime:
    """Add the track agent and its flush timer to the app."""
    rt = TrackRuntime(sa, states, classifier, line_sink)
    add_batch_agent(sa, chunks_schema.TOPIC, "track", rt.process)

    async def flush() -> None:
        await rt.flush_due()

    sa.app.timer(interval=min(1.0, rt.interval / 2), name="track-flush")(flush)
    return rt
