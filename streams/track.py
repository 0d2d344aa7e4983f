"""The ``track`` agent: logs.chunks in windowed batches → at most one jobs.metrics per job per interval.

Per job it keeps, on the ``track.state`` topic in the partition that carries the job's log
(see :mod:`schedmate.streams.state`), the last line number applied of every log source and
the tracker's progress state, written before the input offsets are committed. Lines already
applied are skipped, so a redelivery after a crash or rebalance neither loses nor
double-counts lines. Parsing runs in a
worker thread (one batch at a time) so the event loop keeps heart-beating.
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

import faust

from schedmate.agents.embeddings import Embedder
from schedmate.agents.store import Store
from schedmate.agents.templates import TemplateClassifier
from schedmate.agents.tracker import FailureTail, MetricTracker
from schedmate.infra.logging import get_logger
from schedmate.schemas import InvalidEventError
from schedmate.schemas import jobs_metrics as metrics_schema
from schedmate.schemas import logs_chunks as chunks_schema
from schedmate.schemas.jobs_metrics import JobMetrics
from schedmate.schemas.logs_chunks import LogChunk
from schedmate.streams.app import StreamsApp
from schedmate.streams.deadletter import send_dead_letter
from schedmate.streams.state import StateStore

__all__ = ["TrackRuntime", "register_track"]

STATE_TOPIC = "track.state"
log = get_logger(__name__)
_WORKER = f"{socket.gethostname()}:{os.getpid()}"


@dataclass(slots=True)
class _JobWindow:
    partition: int
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
    diagnosed: list[str] = field(default_factory=list)  # failure identities already diagnosed
    finished: bool = False  # a finished (not failed) lifecycle event was seen
    silence_checked: int = 0  # lines_total when the silence check last ran
    started_at: float = field(default_factory=time.time)  # first seen (bounds GPU evidence in time)


class TrackRuntime:
    """State and logic of the track agent on one worker."""

    def __init__(self, sa: StreamsApp, classifier: TemplateClassifier | None) -> None:
        self.sa = sa
        self.interval = sa.settings.metrics_interval_s
        self.classifier = classifier
        self.tracker = MetricTracker(classes=classifier)
        self.jobs: dict[str, _JobWindow] = {}
        self.state = StateStore(sa.bootstrap, STATE_TOPIC, sa.options)
        self._restored: dict[int, dict[str, dict[str, Any]]] = {}
        self.out = sa.topic(metrics_schema.TOPIC)
        self.emitted = 0
        self.dead = 0
        # One thread owns the tracker (parse, settle); another embeds new templates, so
        # a slow model never delays metrics.
        self.parse_pool = ThreadPoolExecutor(1, thread_name_prefix="track-parse")
        self._embed_pool = ThreadPoolExecutor(1, thread_name_prefix="track-embed")
        self._classifying: asyncio.Task[None] | None = None

    # -- batch processing -------------------------------------------------------------------

    async def process(self, events: Sequence[faust.EventT]) -> None:  # type: ignore[type-arg]
        """Decode, de-duplicate, parse (in a thread), persist state, emit due metrics."""
        fresh: list[LogChunk] = []
        for p in {e.message.partition for e in events}:
            await self.ensure_state(p)
        for event in events:
            msg = event.message
            try:
                chunk = chunks_schema.TOPIC.decode(msg.value)
            except InvalidEventError as exc:
                self.dead += 1
                await send_dead_letter(self.sa, msg, str(exc), type(exc).__name__, agent="track")
                continue
            job = self.job_state(chunk.job_id, msg.partition)
            done = job.done.get(chunk.source, 0)
            if chunk.lines and chunk.last_line <= done:
                job.duplicates += 1
                if chunk.partial is None:
                    continue
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
            fresh.append(chunk)
        if not fresh:
            return
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self.parse_pool, self._parse, fresh)
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
        by_partition: dict[int, dict[str, dict[str, Any]]] = {}
        for job_id in touched:
            by_partition.setdefault(self.jobs[job_id].partition, {})[job_id] = self._state_of(job_id)
        await asyncio.gather(*(self.state.put_many(p, states) for p, states in by_partition.items()))
        sends = [self._emit(job_id, now) for job_id in touched if now - self.jobs[job_id].last_emit >= self.interval]
        if sends:
            await asyncio.gather(*sends)

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
                await loop.run_in_executor(self.parse_pool, self.tracker.settle)
        except Exception:  # a broken model must not stop metrics
            log.exception("template classification failed; lines stay unclassified")
        finally:
            self._classifying = None

    async def warm_up(self) -> None:
        """Load the embedding model in the background at start-up."""
        if self.classifier is not None:
            loop = asyncio.get_running_loop()
            with contextlib.suppress(Exception):
                await loop.run_in_executor(self._embed_pool, self.classifier.warm_up)

    def close(self) -> None:
        """Stop the worker threads."""
        self.parse_pool.shutdown(wait=True)
        self._embed_pool.shutdown(wait=False, cancel_futures=True)

    async def ensure_state(self, partition: int) -> None:
        """Wait until ``partition``'s job states are recovered (once per assignment)."""
        if partition not in self._restored:
            self._restored[partition] = await self.state.states(partition)

    async def persist(self, job_id: str) -> None:
        """Write one job's state now (and wait for the broker)."""
        job = self.jobs[job_id]
        await self.state.put_many(job.partition, {job_id: self._state_of(job_id)})

    def job_state(self, job_id: str, partition: int) -> _JobWindow:
        """The job's window and bookkeeping (restored from track.state when first seen here)."""
        job = self.jobs.get(job_id)
        if job is not None:
            return job
        job = self.jobs[job_id] = _JobWindow(partition=partition)
        state: dict[str, Any] | None = self._restored.get(partition, {}).pop(job_id, None)
        if state:
            job.done = {k: int(v) for k, v in state.get("done", {}).items()}
            job.lines_total = int(state.get("lines_total", 0))
            job.last_emit = float(state.get("last_emit", 0.0))
            job.dirty = bool(state.get("dirty", False))  # its last window may not have been emitted
            job.eof = bool(state.get("eof", False))
            job.diagnosed = list(state.get("diagnosed", []))
            job.finished = bool(state.get("finished", False))
            self.tracker.restore(job_id, state.get("progress", {}))
            self.tracker.job(job_id).tail = FailureTail.from_state(state.get("tail", []))
            counts = self.tracker.job(job_id).counts
            counts.error = int(state.get("error", 0))
            counts.warning = int(state.get("warning", 0))
            counts.last_error = state.get("last_error")
            log.info("job state restored", job_id=job_id, partition=partition, lines_total=job.lines_total)
        return job

    def _state_of(self, job_id: str) -> dict[str, Any]:
        job = self.jobs[job_id]
        tj = self.tracker.job(job_id)
        return {
            "done": job.done,
            "lines_total": job.lines_total,
            "last_emit": job.last_emit,
            "dirty": True,  # written before the window is emitted
            "progress": tj.progress.to_state(),
            "tail": tj.tail.to_state(),
            "eof": job.eof,
            "diagnosed": job.diagnosed[-20:],
            "finished": job.finished,
            "error": tj.counts.error,
            "warning": tj.counts.warning,
            "last_error": tj.counts.last_error,
        }

    # -- emission ---------------------------------------------------------------------------

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
            last_error=counts.last_error,
            worker=_WORKER,
        )

    async def _emit(self, job_id: str, now: float) -> None:
        event = self.metrics_of(job_id, now)
        job = self.jobs[job_id]
        job.window_start, job.window_lines, job.window_step = now, 0, event.step
        job.last_emit, job.dirty = now, False
        fut = await self.out.send(key=job_id.encode(), value=event.to_bytes())
        await fut
        self.emitted += 1

    async def flush_due(self) -> None:
        """Emit every job with unreported lines whose interval has passed (the timer)."""
        now = time.time()
        due = [j for j, w in self.jobs.items() if w.dirty and now - w.last_emit >= self.interval]
        if due:
            await asyncio.gather(*(self._emit(j, now) for j in due))

    def on_revoked(self, partitions: set[int]) -> None:
        """Forget jobs whose partitions moved away (their new owner recovers them from track.state)."""
        for job_id in [j for j, w in self.jobs.items() if w.partition in partitions]:
            self.jobs.pop(job_id, None)
            self.tracker.forget(job_id)
        for p in partitions:
            self._restored.pop(p, None)
            self.state.forget(p)

    def on_assigned(self, partitions: set[int]) -> None:
        """Start recovering the state of newly assigned partitions."""
        for p in partitions:
            self._restored.pop(p, None)
            self.state.recover(p)


def register_track(sa: StreamsApp, embedder: Embedder | None, store: Store | None) -> TrackRuntime:
    """Add the track agent, its table and its flush timer to the app."""
    classifier = TemplateClassifier(embedder, store) if embedder is not None else None
    rt = TrackRuntime(sa, classifier)
    source = sa.topic(chunks_schema.TOPIC)
    batch_max = 256

    async def track(stream: faust.StreamT) -> None:  # type: ignore[type-arg]
        async for events in stream.take_events(batch_max, within=0.2):  # type: ignore[attr-defined]
            try:
                await rt.process(events)
            except Exception as exc:
                # Unexpected: stop the worker (without committing this batch) so a supervisor
                # restarts it and it resumes from the committed offsets.
                log.exception("track agent failed; stopping the worker")
                await sa.app.crash(exc)
                raise

    sa.app.agent(source, name="track", concurrency=1)(track)

    async def flush() -> None:
        await rt.flush_due()

    sa.app.timer(interval=min(1.0, rt.interval / 2), name="track-flush")(flush)

    @sa.app.task  # type: ignore[untyped-decorator]
    async def _warm() -> None:
        await rt.warm_up()

    @sa.app.on_partitions_assigned.connect  # type: ignore[untyped-decorator,arg-type]
    async def _assigned(app: faust.App, assigned: set[Any], **kwargs: Any) -> None:
        rt.on_assigned({tp.partition for tp in assigned if tp.topic == chunks_schema.TOPIC.name})

    @sa.app.on_partitions_revoked.connect  # type: ignore[untyped-decorator,arg-type]
    async def _revoked(app: faust.App, revoked: set[Any], **kwargs: Any) -> None:
        rt.on_revoked({tp.partition for tp in revoked if tp.topic == chunks_schema.TOPIC.name})

    return rt
