"""The ``advise`` agent: jobs.submitted → jobs.metadata + jobs.estimates.

Advising reads files and embeds text, so it runs in a bounded thread pool; the event loop only
decodes, hands off and publishes. Both outputs are delivered before the input offset may be
committed. Re-advising a redelivered submission republishes the same job's metadata and
estimate (consumers keep the latest per job id) and leaves a recorded outcome alone.

With an LLM configured, the static advice is published at once and the ReAct agent then fills the
fields the static pass left open, in the background (bounded: ``react_concurrency`` at a time, at
most ``react_backlog`` waiting, beyond that a job keeps its static advice). A refinement that proves
a value republishes the job's metadata and estimate (path ``…+react``) and updates its history row.
Refinement is best effort: a restart drops refinements in flight, never the static advice.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from schedmate.agents.advisor.advisor import Advice, Advisor, command_text
from schedmate.agents.advisor.react import OPEN_FIELDS, react_fill
from schedmate.agents.ml.llm import LLMClient
from schedmate.infra.logging import get_logger
from schedmate.infra.redact import redact_args
from schedmate.schemas import InvalidEventError
from schedmate.schemas import jobs_estimates as estimates_schema
from schedmate.schemas import jobs_metadata as metadata_schema
from schedmate.schemas import jobs_submitted as submitted_schema
from schedmate.schemas.jobs_estimates import JobEstimate
from schedmate.schemas.jobs_metadata import JobMetadata, WorkloadMetadata
from schedmate.schemas.jobs_submitted import JobSubmitted
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

    def __init__(
        self,
        sa: StreamsApp,
        advisor: Advisor,
        threads: int = 2,
        llm: LLMClient | None = None,
        react_concurrency: int = 1,
        react_backlog: int = 16,
    ) -> None:
        super().__init__()
        self.sa = sa
        self.advisor = advisor
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="advise")
        self.advised = 0
        self.refined = 0
        self.refine_skipped = 0
        self._warming: asyncio.Future[None] | None = None
        self._llm = llm
        self._react_slots = asyncio.Semaphore(react_concurrency)
        self._react_backlog = react_backlog
        self._refining: set[asyncio.Task[None]] = set()

    async def on_start(self) -> None:
        """Load the embedding model and the history's in-memory views before the first job (in the background)."""
        self._warming = asyncio.get_running_loop().run_in_executor(self._pool, self.advisor.warm_up)

    async def on_stop(self) -> None:
        """Drop refinements in flight (the static advice is out), let advice in progress finish, release threads."""
        if self._warming is not None and not self._warming.done():
            self._warming.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._warming
        for task in list(self._refining):
            task.cancel()
        if self._refining:
            await asyncio.gather(*self._refining, return_exceptions=True)
        if self._llm is not None:
            await self._llm.close()
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
        self._maybe_refine(sub, advice)

    def _maybe_refine(self, sub: JobSubmitted, advice: Advice) -> None:
        """Hand the job to the ReAct agent when an LLM is configured and the static pass left fields open."""
        if self._llm is None or not sub.workdir or advice.path in ("resubmission", "unavailable"):
            return
        if not any(getattr(advice.metadata, f) is None for f in OPEN_FIELDS):
            return
        if len(self._refining) >= self._react_backlog:
            self.refine_skipped += 1
            log.warning("react backlog full; job keeps its static advice", job_id=sub.job_id,
                        backlog=len(self._refining))  # fmt: skip
            return
        task = asyncio.get_running_loop().create_task(self._refine(sub, advice.metadata, advice.path))
        self._refining.add(task)
        task.add_done_callback(self._refining.discard)

    async def _refine(self, sub: JobSubmitted, static: WorkloadMetadata, static_path: str) -> None:
        assert self._llm is not None
        try:
            async with self._react_slots:
                command = command_text(redact_args(sub.command))  # no secret of the command goes to the LLM
                refined, report = await react_fill(
                    Path(sub.workdir or "."),
                    command,
                    static,
                    self._llm,
                    repo=Path(sub.repo_root) if sub.repo_root and sub.workdir else None,
                )
            if refined == static:
                log.info("react found nothing to add", job_id=sub.job_id, calls=report.calls)
                return
            advice: Advice = await asyncio.get_running_loop().run_in_executor(
                self._pool, lambda: self.advisor.advise(sub, record=True, refine=lambda _static: refined)
            )
            advice = dataclasses.replace(advice, path=f"{static_path}+react")  # (its re-read hit the version cache)
            key = sub.job_id.encode()
            f1 = await self.sa.send(metadata_schema.TOPIC, key, metadata_event(advice).to_bytes())
            f2 = await self.sa.send(estimates_schema.TOPIC, key, estimate_event(advice).to_bytes())
            await asyncio.gather(f1, f2)
            self.refined += 1
            log.info("job refined", job_id=sub.job_id, path=advice.path, fields=sorted(report.accepted),
                     calls=report.calls, tokens=report.prompt_tokens + report.completion_tokens)  # fmt: skip
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 -- an LLM or a job's files failing never takes the worker down
            log.warning("react refinement failed; job keeps its static advice", job_id=sub.job_id,
                        error=f"{type(exc).__name__}: {exc}"[:300])  # fmt: skip


def register_advise(
    sa: StreamsApp, advisor: Advisor, llm: LLMClient | None = None, react_concurrency: int = 1, react_backlog: int = 16
) -> AdviseRuntime:
    """Add the advise agent to the app (with ``llm``, ReAct refines open fields in the background)."""
    rt = AdviseRuntime(sa, advisor, llm=llm, react_concurrency=react_concurrency, react_backlog=react_backlog)
    add_agent(sa, submitted_schema.TOPIC, "advise", rt.handle_submitted)
    return rt
