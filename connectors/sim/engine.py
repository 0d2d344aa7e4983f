"""The discrete-event loop: arrivals, completions, policy timers and node faults over one :class:`Cluster`.

A job's work is its trace duration at full speed; it runs at ``rate`` 1 alone and below 1 when a
policy packs two jobs on the same GPUs. A preempted job keeps what it did (checkpointed) and pays a
restore overhead when it runs again. A job's completion time is its end minus its submission.

Node faults (:class:`Faults`): a node that goes bad stops the jobs running on it — they hold their GPUs without
progress until their collectives time out ``hang_s`` later, then fail — and fails every job placed on it later
``fail_after_s`` after it starts (an Xid at the first kernels, an NCCL timeout), or just
before it would have ended if sooner — nothing completes on a bad node — until it is repaired
``repair_s`` after the fault began. A failed job loses the work since its last checkpoint and is
submitted again when the policy's :class:`~schedmate.connectors.sim.policies.Recovery` says: by its
user after a delay — possibly onto the same bad node — or, with SchedMate's Failure Handler, at once,
with the node drained from scheduling as soon as the failure is diagnosed.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schedmate.connectors.sim.cluster import Allocation, Cluster
from schedmate.connectors.sim.trace import TraceJob

if TYPE_CHECKING:
    from collections.abc import Callable

    from schedmate.connectors.sim.policies import Policy

__all__ = ["Faults", "JobResult", "SimJob", "Simulation"]

_FINISH = 0
_TIMER = 1
_REQUEUE = 2
_JOB_FAIL = 3
_FAULT = 4
_REPAIR = 5
_DRAIN = 6
_NODE = -1  # the version of node events (never stale)


@dataclass(frozen=True)
class Faults:
    """Node faults to inject: ``(start_s, node)`` pairs, and how they play out."""

    events: tuple[tuple[float, int], ...]
    repair_s: float = 6 * 3600.0  # until operators notice and fix a node nobody flagged
    fail_after_s: float = 300.0  # a job started on a bad node fails this long after it starts
    checkpoint_s: float = 3600.0  # a failed job loses at most this much work
    # A job running on a node when it goes bad stops making progress but holds its GPUs until its collectives time
    # out (PyTorch's default NCCL timeout is 30 minutes); only then does it fail and its failure become visible.
    hang_s: float = 1800.0

    @classmethod
    def poisson(cls, nodes: int, horizon_s: float, mtbf_days: float, seed: int, **kw: float) -> Faults:
        """Faults arriving on each node as a Poisson process with mean time between faults ``mtbf_days``."""
        import random  # noqa: PLC0415

        rng = random.Random(f"{seed}:faults")
        out: list[tuple[float, int]] = []
        rate = 1.0 / (mtbf_days * 86400.0)
        for node in range(nodes):
            t = rng.expovariate(rate)
            while t < horizon_s:
                out.append((t, node))
                t += rng.expovariate(rate)
        return cls(tuple(sorted(out)), **kw)


@dataclass(eq=False, slots=True)
class SimJob:
    """A trace job inside the simulation."""

    idx: int
    trace: TraceJob
    gpus: int
    work_s: float  # seconds of work at full speed (the trace duration)
    submit_s: float
    remaining_s: float = 0.0
    rate: float = 1.0
    last_s: float = 0.0  # when remaining_s was last brought up to date
    start_s: float | None = None  # first start
    end_s: float | None = None
    alloc: Allocation | None = None
    version: int = 0
    attained_gpu_s: float = 0.0  # GPU-seconds run before the current run
    run_since_s: float = 0.0
    preemptions: int = 0
    failures: int = 0
    priority: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)  # what the policy keeps about the job

    @property
    def running(self) -> bool:
        """Whether the job holds GPUs now."""
        return self.alloc is not None

    def attained(self, now: float) -> float:
        """GPU-seconds of service so far."""
        return self.attained_gpu_s + ((now - self.run_since_s) * self.gpus if self.alloc is not None else 0.0)


@dataclass(frozen=True, slots=True)
class JobResult:
    """How one job fared."""

    job_id: str
    submit_s: float
    start_s: float
    end_s: float
    duration_s: float
    gpus: int
    preemptions: int
    failures: int = 0

    @property
    def jct_s(self) -> float:
        """Job completion time: end - submission."""
        return self.end_s - self.submit_s

    @property
    def queue_s(self) -> float:
        """Time before the first start."""
        return self.start_s - self.submit_s


class Simulation:
    """One policy over one trace on one cluster."""

    def __init__(
        self,
        jobs: list[TraceJob],
        cluster: Cluster,
        policy: Policy,
        restore_overhead_s: float = 62.0,
        progress: Callable[[int], None] | None = None,
        faults: Faults | None = None,
    ) -> None:
        self.cluster = cluster
        self.faults = faults
        self.faulty: set[int] = set()
        self.fault_count = 0
        self.drains = 0
        self._on_node: dict[int, set[int]] = {}
        self.policy = policy
        self.restore_overhead_s = restore_overhead_s  # Tiresias §5.2.4: 62 s average preemption overhead
        self.progress = progress
        self.jobs = [
            SimJob(i, j, j.gpus, j.duration_s, j.submit_s, remaining_s=j.duration_s) for i, j in enumerate(jobs)
        ]
        self.jobs.sort(key=lambda j: (j.submit_s, j.idx))
        self.now = 0.0
        self.finished = 0
        self._events: list[tuple[float, int, int, int, int, str]] = []
        self._seq = 0
        self.results: list[JobResult] = []

    # --- actions a policy takes -------------------------------------------------------------------
    def _push(self, t: float, kind: int, job: SimJob, tag: str = "") -> None:
        if t < self.now:
            raise AssertionError(f"an event for job {job.trace.job_id} at {t:.1f} s, before now ({self.now:.1f} s)")
        self._seq += 1
        heapq.heappush(self._events, (t, kind, self._seq, job.idx, job.version, tag))

    def _push_node(self, t: float, kind: int, node: int) -> None:
        self._seq += 1
        heapq.heappush(self._events, (t, kind, self._seq, node, _NODE, ""))

    def _settle(self, job: SimJob) -> None:
        job.remaining_s = max(0.0, job.remaining_s - (self.now - job.last_s) * job.rate)
        job.last_s = self.now

    def _arm(self, job: SimJob) -> None:
        job.version += 1
        self._push(self.now + job.remaining_s / job.rate, _FINISH, job)

    def start(self, job: SimJob, alloc: Allocation | None = None, cluster: Cluster | None = None) -> None:
        """Run ``job`` on new GPUs of ``cluster`` (default: the cluster; ``fits`` must hold) or alongside the jobs of
        ``alloc``."""
        if job.alloc is not None or job.end_s is not None:
            raise AssertionError(f"job {job.trace.job_id} started twice")
        if alloc is None:
            alloc = (cluster or self.cluster).allocate(job.gpus)
        elif alloc.gpus != job.gpus or not alloc.jobs:
            raise AssertionError("a packed job must share a running job's GPUs of the same count")
        alloc.jobs.append(job.idx)
        job.alloc = alloc
        if job.start_s is None:
            job.start_s = self.now
        job.last_s = self.now
        job.run_since_s = self.now
        job.rate = 1.0
        self._arm(job)
        if self.faults is not None and alloc.owner is self.cluster:
            for node, _ in alloc.parts:
                self._on_node.setdefault(node, set()).add(job.idx)
            if any(node in self.faulty for node, _ in alloc.parts):  # it fails, even if it would end sooner
                self._push(self.now + min(self.faults.fail_after_s, 0.999 * job.remaining_s), _JOB_FAIL, job)

    def set_rate(self, job: SimJob, rate: float) -> None:
        """Change a running job's speed (packing, unpacking); a job hung on a bad node stays stopped."""
        if "hang" in job.info:
            return
        self._settle(job)
        job.rate = max(1e-3, rate)
        self._arm(job)

    def preempt(self, job: SimJob, overhead: bool = True) -> None:
        """Stop ``job`` (checkpointed: it keeps its progress, pays the restore overhead on its next run unless
        ``overhead`` is false, as after profiling)."""
        alloc = job.alloc
        if alloc is None:
            raise AssertionError("preempting a job that is not running")
        self._settle(job)
        job.attained_gpu_s += (self.now - job.run_since_s) * job.gpus
        hung = job.info.pop("hang", None)
        if hung is not None and self.faults is not None:  # a hung job writes no checkpoint: its work since is lost
            job.remaining_s += min((hung[0] - job.run_since_s) * hung[1], self.faults.checkpoint_s)
        if overhead:
            job.remaining_s += self.restore_overhead_s
            job.preemptions += 1
        job.version += 1  # its completion event is void
        self._leave(job, alloc)

    def _leave(self, job: SimJob, alloc: Allocation) -> None:
        alloc.jobs.remove(job.idx)
        job.alloc = None
        if self.faults is not None and alloc.owner is self.cluster:
            for node, _ in alloc.parts:
                self._on_node.get(node, set()).discard(job.idx)
        if not alloc.jobs:
            (alloc.owner or self.cluster).release(alloc)
        else:
            for other in alloc.jobs:
                self.policy.on_unpacked(self.by_idx[other], self.now)

    def _hang(self, job: SimJob, node: int) -> None:
        """``job`` runs on ``node`` as it goes bad: it makes no progress from now on, holds its GPUs, and fails when
        its collectives time out (``Faults.hang_s``)."""
        assert self.faults is not None
        if self.faults.hang_s <= 0:
            self._fail(job, node)
            return
        self._settle(job)
        job.info["hang"] = (self.now, job.rate, node)  # progress stops here; the rate it ran at counts the lost work
        job.rate = 0.0
        job.version += 1  # its completion event is void; the failure below is its next event
        self._push(self.now + self.faults.hang_s, _JOB_FAIL, job)

    def _fail(self, job: SimJob, node: int) -> None:
        """``job`` failed on bad ``node``: it loses the work since its last checkpoint and is resubmitted when the
        policy's recovery says; a diagnosed failure also drains the node."""
        alloc = job.alloc
        assert alloc is not None and self.faults is not None
        self._settle(job)
        ran = self.now - job.run_since_s
        job.attained_gpu_s += ran * job.gpus
        hung = job.info.pop("hang", None)
        progressed = (hung[0] - job.run_since_s) * hung[1] if hung is not None else ran * job.rate
        job.remaining_s += min(progressed, self.faults.checkpoint_s)
        job.failures += 1
        job.version += 1  # its completion event is void
        self._leave(job, alloc)
        self.policy.on_failed(job)
        delay, diagnosed = self.policy.recovery.after_failure(job)
        if diagnosed:
            self._push_node(self.now + self.policy.recovery.diagnosis_s, _DRAIN, node)
        self._push(self.now + delay, _REQUEUE, job)

    def _node_event(self, kind: int, node: int) -> None:
        assert self.faults is not None
        if kind == _FAULT:
            if node in self.faulty:
                return
            self.faulty.add(node)
            self.fault_count += 1
            self._push_node(self.now + self.faults.repair_s, _REPAIR, node)
            for idx in sorted(self._on_node.get(node, ())):
                if "hang" not in self.by_idx[idx].info:
                    self._hang(self.by_idx[idx], node)
        elif kind == _REPAIR:
            self.faulty.discard(node)
            self.cluster.resume(node)
        elif node in self.faulty and node not in self.cluster.drained:  # _DRAIN
            self.cluster.drain(node)
            self.drains += 1

    def timer(self, job: SimJob, at: float, tag: str) -> None:
        """Call the policy's ``on_timer(job, tag)`` at ``at`` unless the job's state changes first."""
        self._push(at, _TIMER, job, tag)

    # --- the loop ---------------------------------------------------------------------------------
    def run(self) -> list[JobResult]:
        """Simulate until every job finished; the results in submission order."""
        self.by_idx = {j.idx: j for j in self.jobs}
        self.policy.bind(self)
        if self.faults is not None:
            for t, node in self.faults.events:
                if node < self.cluster.nodes:
                    self._push_node(t, _FAULT, node)
        arrivals = self.jobs
        n, i = len(arrivals), 0
        events = self._events
        while (i < n or events) and self.finished < n:
            t_arr = arrivals[i].submit_s if i < n else math.inf
            t_ev = events[0][0] if events else math.inf
            self.now = now = min(t_arr, t_ev)
            while events and events[0][0] <= now:
                _, kind, _, idx, version, tag = heapq.heappop(events)
                if version == _NODE:
                    self._node_event(kind, idx)
                    continue
                job = self.by_idx[idx]
                if version != job.version:
                    continue
                if kind == _FINISH:
                    self._finish(job)
                elif kind == _REQUEUE:
                    job.last_s = now
                    self.policy.on_arrival(job)
                elif kind == _JOB_FAIL:
                    alloc = job.alloc
                    on_main = alloc is not None and alloc.owner is self.cluster
                    bad = [node for node, _ in alloc.parts if node in self.faulty] if alloc and on_main else []
                    if "hang" in job.info:  # its collectives timed out, whether or not the node was repaired since
                        self._fail(job, job.info["hang"][2])
                    elif bad:
                        self._fail(job, bad[0])
                else:
                    self.policy.on_timer(job, tag)
            while i < n and arrivals[i].submit_s <= now:
                job = arrivals[i]
                job.last_s = now
                self.policy.on_arrival(job)
                i += 1
            self.policy.schedule()
        if self.finished != n:
            raise AssertionError(f"{n - self.finished} jobs never finished")
        self.results.sort(key=lambda r: (r.submit_s, r.job_id))
        return self.results

    def _finish(self, job: SimJob) -> None:
        alloc = job.alloc
        if alloc is None or job.end_s is not None:
            raise AssertionError(f"job {job.trace.job_id} finished twice or while not running")
        job.remaining_s = 0.0
        job.end_s = self.now
        job.attained_gpu_s += (self.now - job.run_since_s) * job.gpus
        job.version += 1
        self._leave(job, alloc)
        self.finished += 1
        assert job.start_s is not None
        self.results.append(JobResult(job.trace.job_id, job.submit_s, job.start_s, self.now, job.work_s, job.gpus,
                                      job.preemptions, job.failures))  # fmt: skip
        self.policy.on_finish(job)
        if self.progress is not None:
            self.progress(1)
