"""The ``diagnose`` agent: a failed jobs.events → one jobs.failures event and one scheduler.actions event.

jobs.events is keyed (and partitioned) like logs.chunks, so the worker that tracks a job's
log also receives its lifecycle events. This runtime owns the ``failures`` part of the job's
state: the failure tail (the lines the Metric Tracker hands to its :class:`FailureTails` sink),
the failures already diagnosed, and whether the job finished. On a failed finish it waits until
the job's log is complete (its EOF chunk arrived, or it has been silent for ``silence_s``, as
the track runtime's :meth:`~schedmate.streams.track.TrackRuntime.log_status` says), diagnoses
the tail, publishes the diagnosis and the recovery action, records the failure as diagnosed in
the job's state, and only then lets the input offset be committed. Ids are derived from the
failure event, so a redelivery after a crash republishes the same ids (consumers de-duplicate).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from schedmate.agents.failures.actions import NODE_ACTIONS
from schedmate.agents.failures.diagnosis import Diagnosis, diagnose_lines, resolve_node
from schedmate.agents.failures.gpu_evidence import corroborate
from schedmate.agents.failures.knn import FailureKnn
from schedmate.agents.failures.tail import FailureTails
from schedmate.infra.logging import get_logger
from schedmate.infra.redact import redact
from schedmate.schemas import InvalidEventError
from schedmate.schemas import jobs_events as events_schema
from schedmate.schemas import jobs_failures as failures_schema
from schedmate.schemas import scheduler_actions as actions_schema
from schedmate.schemas.jobs_failures import JobFailure
from schedmate.schemas.scheduler_actions import SchedulerAction
from schedmate.schemas.track_state import FailurePart, JobState
from schedmate.streams.app import StreamsApp, add_agent
from schedmate.streams.deadletter import send_dead_letter
from schedmate.streams.gpu_health import GpuHealth
from schedmate.streams.runtime import Runtime
from schedmate.streams.state import JobStates
from schedmate.streams.track import LogStatus

__all__ = ["DiagnoseRuntime", "JobLogs", "register_diagnose"]

log = get_logger(__name__)
_KEEP_DIAGNOSED = 20  # failure identities kept per job
_MAX_NODES = 4096  # allocation kept per job
_NO_ERROR = "the job failed with no error in its log"


class JobLogs(Protocol):
    """What the diagnose agent needs to know of a job's log stream."""

    def log_status(self, job_id: str) -> LogStatus | None:
        """How far ``job_id``'s log has arrived (None: not tracked here)."""
        ...


@dataclass(slots=True)
class _FailureJob:
    diagnosed: list[str] = field(default_factory=list)  # failure identities already diagnosed
    finished: bool = False  # a finished (not failed) lifecycle event was seen
    silence_checked: int = 0  # lines when the silence check last ran
    started_at: float = field(default_factory=time.time)  # first seen (bounds GPU evidence in time)
    nodes: list[str] = field(default_factory=list)  # the allocation, from the job's lifecycle events
    last_event_at: float = field(default_factory=time.time)
    busy: bool = False  # a diagnosis is under way


class DiagnoseRuntime(Runtime):
    """Turns failed lifecycle events (and fatal errors followed by silence) into diagnoses."""

    name = "diagnose"
    part = "failures"

    def __init__(
        self,
        sa: StreamsApp,
        states: JobStates,
        tails: FailureTails,
        logs: JobLogs,
        knn: FailureKnn | None = None,
        gpu: GpuHealth | None = None,
        silence_s: float = 2.0,
        max_wait_s: float = 30.0,
    ) -> None:
        super().__init__()
        self.sa = sa
        self.states = states
        self.tails = tails
        self.logs = logs
        self.knn = knn
        self.gpu = gpu
        self.failure_silence_s = sa.settings.failure_silence_s
        self.drain_min_jobs = sa.settings.drain_min_jobs
        self.peer_window_s = 3600.0
        self.silence_s = silence_s
        self.max_wait_s = max_wait_s
        self.jobs: dict[str, _FailureJob] = {}
        self.emitted = 0
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="diagnose")
        states.register(self)

    async def on_stop(self) -> None:
        """Let a diagnosis in progress finish, then release the thread."""
        self._pool.shutdown(wait=True)

    # -- the job state part this runtime owns -------------------------------------------------

    def restore(self, job_id: str, state: JobState | None) -> None:
        """Start (or resume from ``state``) following ``job_id``'s failures."""
        job = self.jobs[job_id] = _FailureJob()
        if state is None:
            return
        job.diagnosed = list(state.failures.diagnosed)
        job.finished = state.failures.finished
        job.nodes = list(state.failures.nodes)
        self.tails.restore(job_id, state.failures.tail)

    def dump(self, job_id: str) -> FailurePart:
        """The ``failures`` part of ``job_id``'s state."""
        job = self.jobs[job_id]
        return FailurePart(
            tail=self.tails.to_state(job_id),
            diagnosed=job.diagnosed[-_KEEP_DIAGNOSED:],
            finished=job.finished,
            nodes=job.nodes,
        )

    def forget(self, job_id: str) -> None:
        """Drop ``job_id`` (its partition moved away, or its state was parked)."""
        self.jobs.pop(job_id, None)
        self.tails.forget(job_id)

    def quiet(self, job_id: str) -> tuple[float, bool]:
        """(last lifecycle event time, whether no diagnosis is under way); the tail is parked with the state."""
        job = self.jobs[job_id]
        return job.last_event_at, not job.busy

    # -- lifecycle events ---------------------------------------------------------------------

    async def handle(self, message: Any) -> None:
        """Process one jobs.events message."""
        try:
            event = events_schema.TOPIC.decode(message.value)
        except InvalidEventError as exc:
            await send_dead_letter(self.sa, message, str(exc), type(exc).__name__, agent="diagnose")
            return
        await self.states.ensure(message.partition)
        self.states.job(event.job_id, message.partition)
        job = self.jobs[event.job_id]
        job.last_event_at = time.time()
        new = [n for n in dict.fromkeys([*([event.node] if event.node else []), *event.nodes]) if n not in job.nodes]
        if new:
            job.nodes = [*job.nodes, *new][:_MAX_NODES]
            if event.kind != "finished":
                await self.states.persist([event.job_id])
        if event.kind != "finished":
            return
        if event.status != "failed":
            job.finished = True
            return
        if event.event_id in job.diagnosed:
            return
        job.busy = True
        try:
            await self._wait_for_log(event.job_id, time.time())
            await self.diagnose(event.job_id, event.event_id)
        finally:
            job.busy = False

    async def _wait_for_log(self, job_id: str, since: float) -> None:
        deadline = time.time() + self.max_wait_s
        while time.time() < deadline:
            st = self.logs.log_status(job_id)
            if st is not None and (st.eof or (st.last_chunk_at and time.time() - st.last_chunk_at >= self.silence_s)):
                return
            if st is None and time.time() - since >= self.silence_s:
                return
            await asyncio.sleep(0.2)

    def allocation(self, job_id: str) -> list[str]:
        """The nodes ``job_id`` ran on, as its lifecycle events and log connectors said (never its log text)."""
        st = self.logs.log_status(job_id)
        job = self.jobs.get(job_id)
        return list(dict.fromkeys([*(job.nodes if job else []), *(st.nodes if st else ())]))

    def _diagnose_tail(self, job_id: str, allocation: list[str]) -> Diagnosis:
        """Diagnose ``job_id`` from its failure tail (line numbers of the whole log); blocking."""
        first, lines = self.tails.lines(job_id)
        d = diagnose_lines(lines, knn=self.knn, allocation=allocation)
        if d.first_error_line is not None:
            d.first_error_line += first - 1
        return d

    async def diagnose(self, job_id: str, identity: str, require_error: bool = False) -> JobFailure | None:
        """Diagnose a job once per failure; publish its failure and action events."""
        job = self.jobs[job_id]
        busy, job.busy = job.busy, True  # not parked while under way
        try:
            return await self._diagnose(job_id, job, identity, require_error)
        finally:
            job.busy = busy

    async def _diagnose(self, job_id: str, job: _FailureJob, identity: str, require_error: bool) -> JobFailure | None:
        allocation = self.allocation(job_id)
        d = await asyncio.get_running_loop().run_in_executor(self._pool, self._diagnose_tail, job_id, allocation)
        line_key = f"line:{d.first_error_line}"
        if require_error and d.first_error_line is None:
            return None
        if d.first_error_line is not None and line_key in job.diagnosed:  # same failure already reported
            job.diagnosed.append(identity)
            await self.states.persist([job_id])
            return None
        node = d.faulty_node or resolve_node(None, allocation)
        since = job.started_at or (time.time() - 3600)
        faults = self.gpu.faults(node, since) if self.gpu is not None else []
        peers = self.gpu.peer_jobs(node, time.time() - self.peer_window_s, job_id) if self.gpu is not None else set()
        corroborate(d, node, faults, peers, self.drain_min_jobs)
        diag_id = hashlib.sha256(f"{job_id}/{line_key if d.first_error_line else identity}".encode()).hexdigest()[:32]
        failure, action = _events(d, job_id, diag_id)
        key = job_id.encode()
        f1 = await self.sa.send(failures_schema.TOPIC, key, failure.to_bytes())
        f2 = await self.sa.send(actions_schema.TOPIC, key, action.to_bytes())
        await asyncio.gather(f1, f2)
        job.diagnosed += [identity, line_key]
        await self.states.persist([job_id])
        self.emitted += 1
        log.info("job diagnosed", job_id=job_id, category=d.category, line=d.first_error_line, action=d.action,
                 trigger=identity.split(":", maxsplit=1)[0], partition=self.states.partition_of(job_id))  # fmt: skip
        return failure

    async def check_silent(self) -> None:
        """Diagnose jobs whose log stopped after a fatal error (no finished event yet)."""
        if self.failure_silence_s <= 0 or self.stopped:
            return
        now = time.time()
        for job_id, job in list(self.jobs.items()):
            if self.jobs.get(job_id) is not job:
                continue  # parked (or moved away) while an earlier diagnosis ran
            st = self.logs.log_status(job_id)
            if job.finished or st is None or not st.last_chunk_at or now - st.last_chunk_at < self.failure_silence_s:
                continue
            if job.silence_checked == st.lines_total:
                continue
            job.silence_checked = st.lines_total
            await self.diagnose(job_id, f"silence:{st.lines_total}", require_error=True)


def _events(d: Diagnosis, job_id: str, diag_id: str) -> tuple[JobFailure, SchedulerAction]:
    """The jobs.failures and scheduler.actions events of a diagnosis."""
    failure = JobFailure(
        diagnosis_id=diag_id,
        job_id=job_id,
        first_error_line=d.first_error_line,
        category=d.category,
        infra_component=d.infra_component,
        faulty_node=d.faulty_node if d.category == "infrastructure" else None,
        confidence=d.confidence,
        explanation=redact(d.explanation)
        if d.first_error_line is not None
        else "the job failed with no error in its log",
        evidence=[redact(e) for e in d.evidence],
        path=d.path,
    )
    action = SchedulerAction(
        action_id=f"{diag_id}-action",
        job_id=job_id,
        action=d.action,
        node=failure.faulty_node if d.action in NODE_ACTIONS else None,
        diagnosis_id=diag_id,
        reason=redact(d.explanation)[:500],
    )
    return failure, action


def register_diagnose(
    sa: StreamsApp,
    states: JobStates,
    tails: FailureTails,
    logs: JobLogs,
    knn: FailureKnn | None,
    gpu: GpuHealth | None,
) -> DiagnoseRuntime:
    """Add the diagnose agent and its silence timer to the app."""
    rt = DiagnoseRuntime(sa, states, tails, logs, knn, gpu)
    add_agent(sa, events_schema.TOPIC, "diagnose", rt.handle)

    async def silent() -> None:
        await rt.check_silent()

    sa.app.timer(interval=1.0, name="diagnose-silence")(silent)
    return rt
