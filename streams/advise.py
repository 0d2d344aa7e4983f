"""The ``advise`` agent: jobs.submitted → jobs.metadata + jobs.estimates.

Advising reads files and embeds text, so it runs in a bounded thread pool; the event loop only
decodes, hands off and publishes. Both outputs are delivered before the input offset may be
committed. Re-advising a redelivered submission republishes the same job's metadata and
estimate (consumers keep the latest per job id) and leaves a recorded outcome alone.
"""

from __future__ import annotations

import asyncio
import contextlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from typing import Any

from schedmate.agents.advisor.advisor import Advice, Advisor
from schedmate.infra.logging import get_logger
from schedmate.schemas import InvalidEventError
from schedmate.schemas import jobs_estimates as estimates_schema
from schedmate.schemas import jobs_metadata as metadata_schema
from schedmate.schemas import jobs_submitted as submitted_schema
from schedmate.schemas.jobs_estimates import JobEstimate
from schedmate.schemas.jobs_metadata import JobMetadata
from schedmate.streams.app import StreamsApp, add_agent
from schedmate.streams.deadletter import send_dead_letter
from schedmate.streams.runtime import Runtime

__all__ = ["AdviseRuntime", "estimate_event", "metadata_event", "register_advise"]

log = get_logger(__name__)


def metadata_event(advice: Advice) -> JobMetadata:
    """The jobs.metadata event of an advice."""
    return JobMetadata(job_id=advice.job_id, metadata=advice.metadata, resubmission_of=advice.resubmission_of,
                       path=advice.path, elapsed_s=round(advice.elapsed_s, 4))  # fmt: skip


def estimate_event(advice: Advice) -> JobEstimate:
    """The jobs.estimates event of an advice."""
    return JobEstimate.model_validate({"job_id": advice.job_id, **asdict(advice.estimate)})


class AdviseRuntime(Runtime):
    """Holds the advisor, its thread pool and counters."""

    name = "advise"

    def __init__(self, sa: StreamsApp, advisor: Advisor, threads: int = 2) -> None:
        super().__init__()
        self.sa = sa
        self.advisor = advisor
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="advise")
        self.advised = 0
        self._warming: asyncio.Future[None] | None = None

    async def on_start(self) -> None:
        """Load the embedding model and the history's in-memory views before the first job (in the background)."""
        self._warming = asyncio.get_running_loop().run_in_executor(self._pool, self.advisor.warm_up)

    async def on_stop(self) -> None:
        """Let advice in progress finish, then release the threads."""
        if self._warming is not None and not self._warming.done():
            self._warming.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._warming
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.advisor.close()

    async def handle_submitted(self, message: Any) -> None:
        """One jobs.submitted message → metadata and estimate events."""
        try:
            sub = submitted_schema.TOPIC.decode(message.value)
        except InvalidEventError as exc:
            await send_dead_letter(self.sa, message, str(exc), type(exc).__name__, agent="advise")
            return
        advice: Advice = await asyncio.get_running_loop().run_in_executor(self._pool, self.advisor.advise, sub)
        key = sub.job_id.encode()
        f1 = await self.sa.send(metadata_schema.TOPIC, key, metadata_event(advice).to_bytes())
        f2 = await self.sa.send(estimates_schema.TOPIC, key, estimate_event(advice).to_bytes())
        await asyncio.gather(f1, f2)
        self.advised += 1
        log.info("job advised", job_id=sub.job_id, path=advice.path, method=advice.estimate.method,
                 resubmission_of=advice.resubmission_of, elapsed_ms=round(advice.elapsed_s * 1000, 1),
                 partition=message.partition, offset=message.offset)  # fmt: skip


def register_advise(sa: StreamsApp, advisor: Advisor) -> AdviseRuntime:
    """Add the advise agent to the app."""
    rt = AdviseRuntime(sa, advisor)
    add_agent(sa, submitted_schema.TOPIC, "advise", rt.handle_submitted)
    return rt
