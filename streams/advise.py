"""The ``advise`` agent (jobs.submitted → jobs.metadata + jobs.estimates) and the history writer (jobs.events).

Advising reads files and embeds text, so it runs in a bounded thread pool; the event loop only
decodes, hands off and publishes. Both outputs are delivered before the input offset may be
committed. Re-advising a redelivered submission republishes the same job's metadata and
estimate (consumers keep the latest per job id) and leaves a recorded outcome alone.

The history writer notes starts and fills in outcomes (status, duration, the job's mean GPU
utilisation and peak memory seen on gpu.samples); outcome writes are idempotent upserts.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from schedmate.agents.advisor import FACETS, Advisor
from schedmate.agents.embeddings import Embedder
from schedmate.agents.history import History
from schedmate.agents.versions import VersionCache
from schedmate.infra.logging import get_logger
from schedmate.schemas import InvalidEventError
from schedmate.schemas import jobs_estimates as estimates_schema
from schedmate.schemas import jobs_events as events_schema
from schedmate.schemas import jobs_metadata as metadata_schema
from schedmate.schemas import jobs_submitted as submitted_schema
from schedmate.streams.app import StreamsApp, add_agent
from schedmate.streams.deadletter import send_dead_letter
from schedmate.streams.gpu_health import GpuHealth

__all__ = ["AdviseRuntime", "register_advise"]

log = get_logger(__name__)


class AdviseRuntime:
    """Holds the advisor, its thread pool and counters."""

    def __init__(self, sa: StreamsApp, advisor: Advisor, gpu: GpuHealth | None = None, threads: int = 2) -> None:
        self.sa = sa
        self.advisor = advisor
        self.gpu = gpu
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="advise")
        self.metadata_out = sa.topic(metadata_schema.TOPIC)
        self.estimates_out = sa.topic(estimates_schema.TOPIC)
        self.advised = 0
        self.outcomes = 0

    async def _run(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    async def warm_up(self) -> None:
        """Load the embedding model and the history's in-memory views before the first job."""
        await self._run(self.advisor.warm_up)

    async def handle_submitted(self, message: Any) -> None:
        """One jobs.submitted message → metadata and estimate events."""
        try:
            sub = submitted_schema.TOPIC.decode(message.value)
        except InvalidEventError as exc:
            await send_dead_letter(self.sa, message, str(exc), type(exc).__name__, agent="advise")
            return
        advice = await self._run(self.advisor.advise, sub)
        key = sub.job_id.encode()
        f1 = await self.metadata_out.send(key=key, value=advice.metadata_event().to_bytes())
        f2 = await self.estimates_out.send(key=key, value=advice.estimate_event().to_bytes())
        await asyncio.gather(f1, f2)
        self.advised += 1
        log.info("job advised", job_id=sub.job_id, path=advice.path, method=advice.estimate.method,
                 resubmission_of=advice.resubmission_of, elapsed_ms=round(advice.elapsed_s * 1000, 1),
                 partition=message.partition, offset=message.offset)  # fmt: skip

    async def handle_event(self, message: Any) -> None:
        """One jobs.events message → history (start time, or outcome)."""
        try:
            event = events_schema.TOPIC.decode(message.value)
        except InvalidEventError:
            return  # the diagnose agent on the same topic dead-letters it once
        if event.kind == "started":
            await self._run(self.advisor.history.record_start, event.job_id, event.ts)
            return
        util, mem = self.gpu.job_usage(event.job_id) if self.gpu is not None else (None, None)
        assert event.status is not None
        await self._run(self.advisor.history.record_outcome, event.job_id, event.status, event.ts, None, util, mem)
        self.outcomes += 1
        log.debug("job outcome recorded", job_id=event.job_id, status=event.status, partition=message.partition)

    def close(self) -> None:
        """Stop the thread pool."""
        self.pool.shutdown(wait=True, cancel_futures=True)


def build_advisor(sa: StreamsApp, embedder: Embedder) -> Advisor:
    """The advisor over the configured data folder."""
    settings = sa.settings
    history = History(settings.store_dir, dim=FACETS * embedder.dim)
    versions = VersionCache(settings.data_dir / "advisor" / "versions.jsonl")
    return Advisor(history, embedder, versions, k=settings.advise_top_k, threshold=settings.advise_threshold)


def register_advise(sa: StreamsApp, embedder: Embedder, gpu: GpuHealth | None) -> AdviseRuntime:
    """Add the advise agent and the history writer to the app."""
    rt = AdviseRuntime(sa, build_advisor(sa, embedder), gpu)

    add_agent(sa, submitted_schema.TOPIC, "advise", rt.handle_submitted)
    add_agent(sa, events_schema.TOPIC, "history", rt.handle_event)

    @sa.app.task  # type: ignore[untyped-decorator]
    async def _warm_advisor() -> None:
        await rt.warm_up()

    return rt
