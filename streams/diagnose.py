"""The ``diagnose`` agent: a failed jobs.events → one jobs.failures event and one scheduler.actions event.

jobs.events is keyed (and partitioned) like logs.chunks, so the worker that tracks a job's
log also receives its lifecycle events and holds the job's failure tail (persisted with the
track state). On a failed finish the agent waits until the job's log is complete (its EOF
chunk arrived, or it has been silent for ``silence_s``), diagnoses the tail, publishes the
diagnosis and the recovery action, records the failure event as diagnosed in the job's
state, and only then lets the input offset be committed. Ids are derived from the failure
event, so a redelivery after a crash republishes the same ids (consumers de-duplicate).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import TYPE_CHECKING, Any

import faust

from schedmate.infra.logging import get_logger
from schedmate.schemas import InvalidEventError
from schedmate.schemas import jobs_events as events_schema
from schedmate.schemas import jobs_failures as failures_schema
from schedmate.schemas import scheduler_actions as actions_schema
from schedmate.schemas.jobs_events import JobEvent
from schedmate.schemas.jobs_failures import JobFailure
from schedmate.schemas.scheduler_actions import SchedulerAction
from schedmate.streams.app import StreamsApp
from schedmate.streams.deadletter import send_dead_letter

if TYPE_CHECKING:
    from schedmate.streams.track import TrackRuntime

__all__ = ["DiagnoseRuntime", "register_diagnose"]

log = get_logger(__name__)


class DiagnoseRuntime:
    """Turns failed lifecycle events into diagnoses, using the track runtime's per-job state."""

    def __init__(self, sa: StreamsApp, track: TrackRuntime, silence_s: float = 2.0, max_wait_s: float = 30.0) -> None:
        self.sa = sa
        self.track = track
        self.silence_s = silence_s
        self.max_wait_s = max_wait_s
        self.failures_out = sa.topic(failures_schema.TOPIC)
        self.actions_out = sa.topic(actions_schema.TOPIC)
        self.emitted = 0

    async def handle(self, message: Any) -> None:
        """Process one jobs.events message."""
        try:
            event = events_schema.TOPIC.decode(message.value)
        except InvalidEventError as exc:
            await send_dead_letter(self.sa, message, str(exc), type(exc).__name__, agent="diagnose")
            return
        if event.kind != "finished" or event.status != "failed":
            return
        await self.diagnose(event, message.partition)

    async def _wait_for_log(self, job_id: str, partition: int, since: float) -> None:
        deadline = time.time() + self.max_wait_s
        while time.time() < deadline:
            job = self.track.jobs.get(job_id)
            if job is not None and (
                job.eof or (job.last_chunk_at and time.time() - job.last_chunk_at >= self.silence_s)
            ):
                return
            if job is None and time.time() - since >= self.silence_s:
                return
            await asyncio.sleep(0.2)

    async def diagnose(self, event: JobEvent, partition: int) -> JobFailure | None:
        """Diagnose a failed job once; publish its failure and action events."""
        await self.track.ensure_state(partition)
        job = self.track.job_state(event.job_id, partition)
        if event.event_id in job.diagnosed:
            return None
        await self._wait_for_log(event.job_id, partition, time.time())
        loop = asyncio.get_running_loop()
        d = await loop.run_in_executor(self.track.parse_pool, self.track.tracker.diagnose, event.job_id)
        diag_id = hashlib.sha256(f"{event.job_id}/{event.event_id}".encode()).hexdigest()[:32]
        failure = JobFailure(
            diagnosis_id=diag_id,
            job_id=event.job_id,
            first_error_line=d.first_error_line,
            category=d.category,  # type: ignore[arg-type]
            infra_component=d.infra_component,  # type: ignore[arg-type]
            faulty_node=(d.faulty_node or event.node) if d.category == "infrastructure" else d.faulty_node,
            confidence=d.confidence,
            explanation=d.explanation if d.first_error_line is not None else "the job failed with no error in its log",
            evidence=d.evidence,
            path=d.path,
        )
        action = SchedulerAction(
            action_id=f"{diag_id}-action",
            job_id=event.job_id,
            action=d.action,  # type: ignore[arg-type]
            node=failure.faulty_node if d.action in ("requeue_excluding_node", "drain_node_and_requeue") else None,
            diagnosis_id=diag_id,
            reason=d.explanation[:500],
        )
        key = event.job_id.encode()
        f1 = await self.failures_out.send(key=key, value=failure.to_bytes())
        f2 = await self.actions_out.send(key=key, value=action.to_bytes())
        await asyncio.gather(f1, f2)
        job.diagnosed.append(event.event_id)
        await self.track.persist(event.job_id)
        self.emitted += 1
        log.info("job diagnosed", job_id=event.job_id, category=d.category, line=d.first_error_line,
                 action=d.action, partition=partition)  # fmt: skip
        return failure


def register_diagnose(sa: StreamsApp, track: TrackRuntime) -> DiagnoseRuntime:
    """Add the diagnose agent to the app."""
    rt = DiagnoseRuntime(sa, track)
    source = sa.topic(events_schema.TOPIC)

    async def diagnose(stream: faust.StreamT) -> None:  # type: ignore[type-arg]
        async for event in stream.events():
            try:
                await rt.handle(event.message)
            except Exception as exc:
                log.exception("diagnose agent failed; stopping the worker")
                await sa.app.crash(exc)
                raise

    sa.app.agent(source, name="diagnose", concurrency=1)(diagnose)
    return rt
