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

from schedmate.agents.diagnosis import Diagnosis, recovery_action
from schedmate.agents.failure_knn import FailureKnn
from schedmate.infra.logging import get_logger
from schedmate.schemas import InvalidEventError
from schedmate.schemas import jobs_events as events_schema
from schedmate.schemas import jobs_failures as failures_schema
from schedmate.schemas import scheduler_actions as actions_schema
from schedmate.schemas.jobs_failures import JobFailure
from schedmate.schemas.scheduler_actions import SchedulerAction
from schedmate.streams.app import StreamsApp, add_agent
from schedmate.streams.deadletter import send_dead_letter
from schedmate.streams.gpu_health import HARDWARE_XIDS, NVLINK_XIDS, GpuHealth

if TYPE_CHECKING:
    from schedmate.streams.track import TrackRuntime

__all__ = ["DiagnoseRuntime", "register_diagnose"]

log = get_logger(__name__)


class DiagnoseRuntime:
    """Turns failed lifecycle events into diagnoses, using the track runtime's per-job state."""

    def __init__(
        self,
        sa: StreamsApp,
        track: TrackRuntime,
        gpu: GpuHealth | None = None,
        silence_s: float = 2.0,
        max_wait_s: float = 30.0,
    ) -> None:
        self.sa = sa
        self.track = track
        self.gpu = gpu
        embedder = track.classifier.embedder if track.classifier is not None else None
        self.knn = FailureKnn(embedder) if embedder is not None else None
        self.failure_silence_s = sa.settings.failure_silence_s
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
        if event.kind != "finished":
            return
        if event.status != "failed":
            await self.track.ensure_state(message.partition)
            self.track.job_state(event.job_id, message.partition).finished = True
            return
        await self.track.ensure_state(message.partition)
        if event.event_id in self.track.job_state(event.job_id, message.partition).diagnosed:
            return
        await self._wait_for_log(event.job_id, time.time())
        await self.diagnose(event.job_id, message.partition, event.event_id, event.node)

    async def _wait_for_log(self, job_id: str, since: float) -> None:
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

    def _corroborate(self, d: Diagnosis, node: str | None, since: float) -> None:
        if self.gpu is None:
            return
        faults = [(desc, x) for desc, x in self.gpu.faults(node, since) if x is None or x in HARDWARE_XIDS]
        if not faults:
            return
        d.evidence.append("gpu.samples: " + "; ".join(desc for desc, _ in faults[:3]))
        d.path.append("gpu.samples")
        nvlink = any(x in NVLINK_XIDS for _, x in faults if x is not None)
        if d.category == "infrastructure":
            d.confidence = min(0.95, d.confidence + 0.1)
        elif d.confidence < 0.6 or d.category == "other":
            d.category, d.infra_component = "infrastructure", "nvlink" if nvlink else "gpu"
            d.confidence = 0.7
            d.faulty_node = d.faulty_node or node
            d.explanation = f"the job's node reported GPU faults while it ran ({faults[0][0]}); {d.explanation}"
        d.action = recovery_action(d.category, d.infra_component, d.faulty_node, d.confidence)

    async def diagnose(
        self, job_id: str, partition: int, identity: str, node: str | None = None, require_error: bool = False
    ) -> JobFailure | None:
        """Diagnose a job once per failure; publish its failure and action events."""
        job = self.track.job_state(job_id, partition)
        loop = asyncio.get_running_loop()
        d = await loop.run_in_executor(self.track.parse_pool, self.track.tracker.diagnose, job_id, self.knn)
        line_key = f"line:{d.first_error_line}"
        if require_error and d.first_error_line is None:
            return None
        if d.first_error_line is not None and line_key in job.diagnosed:  # same failure already reported
            job.diagnosed.append(identity)
            await self.track.persist(job_id)
            return None
        self._corroborate(d, d.faulty_node or node, job.started_at or (time.time() - 3600))
        diag_id = hashlib.sha256(f"{job_id}/{line_key if d.first_error_line else identity}".encode()).hexdigest()[:32]
        failure = JobFailure(
            diagnosis_id=diag_id,
            job_id=job_id,
            first_error_line=d.first_error_line,
            category=d.category,  # type: ignore[arg-type]
            infra_component=d.infra_component,  # type: ignore[arg-type]
            faulty_node=(d.faulty_node or node) if d.category == "infrastructure" else d.faulty_node,
            confidence=d.confidence,
            explanation=d.explanation if d.first_error_line is not None else "the job failed with no error in its log",
            evidence=d.evidence,
            path=d.path,
        )
        action = SchedulerAction(
            action_id=f"{diag_id}-action",
            job_id=job_id,
            action=d.action,  # type: ignore[arg-type]
            node=failure.faulty_node if d.action in ("requeue_excluding_node", "drain_node_and_requeue") else None,
            diagnosis_id=diag_id,
            reason=d.explanation[:500],
        )
        key = job_id.encode()
        f1 = await self.failures_out.send(key=key, value=failure.to_bytes())
        f2 = await self.actions_out.send(key=key, value=action.to_bytes())
        await asyncio.gather(f1, f2)
        job.diagnosed += [identity, line_key]
        await self.track.persist(job_id)
        self.emitted += 1
        log.info("job diagnosed", job_id=job_id, category=d.category, line=d.first_error_line, action=d.action,
                 trigger=identity.split(":", maxsplit=1)[0], partition=partition)  # fmt: skip
        return failure

    async def check_silent(self) -> None:
        """Diagnose jobs whose log stopped after a fatal error (no finished event yet)."""
        if self.failure_silence_s <= 0:
            return
        now = time.time()
        for job_id, job in list(self.track.jobs.items()):
            if job.finished or not job.last_chunk_at or now - job.last_chunk_at < self.failure_silence_s:
                continue
            if job.silence_checked == job.lines_total:
                continue
            job.silence_checked = job.lines_total
            await self.diagnose(job_id, job.partition, f"silence:{job.lines_total}", require_error=True)


def register_diagnose(sa: StreamsApp, track: TrackRuntime) -> DiagnoseRuntime:
    """Add the diagnose agent, its silence timer and the gpu.samples view to the app."""
    rt = DiagnoseRuntime(sa, track, GpuHealth(sa.bootstrap, sa.options))
    add_agent(sa, events_schema.TOPIC, "diagnose", rt.handle)

    @sa.app.task  # type: ignore[untyped-decorator]
    async def _follow_gpus() -> None:
        if rt.gpu is not None:
            rt.gpu.start()

    async def silent() -> None:
        await rt.check_silent()

    sa.app.timer(interval=1.0, name="diagnose-silence")(silent)
    return rt
