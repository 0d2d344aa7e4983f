"""Scheduling policies: FIFO, SJF (oracle, QSSF-style, SchedMate), Tiresias and Lucid-style packing.

Queue discipline: pending jobs start in priority order, and a job that does not fit is passed by the
ones behind it that do (backfilling without reservations, as Lucid's simulator allocates with packing
on and as Tiresias's quota loop does), so no policy idles GPUs a waiting job could use. Shortest-job
policies order by expected *service* (duration x GPUs), as QSSF does.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from schedmate.connectors.sim.cluster import Cluster
    from schedmate.connectors.sim.engine import SimJob, Simulation
    from schedmate.connectors.sim.interference import Interference

__all__ = ["DurationEstimator", "Lucid", "Policy", "PriorityPolicy", "Recovery", "Srtf", "Tiresias"]


class DurationEstimator(Protocol):
    """What an SJF-family policy asks: a job's expected duration before it runs, and its outcome after."""

    name: str

    def estimate(self, job: SimJob) -> float:
        """Expected duration (s) of ``job``; never reads the job's own trace duration."""

    def learn(self, job: SimJob) -> None:
        """``job`` finished: its outcome joins the history."""


@dataclass(frozen=True)
class Recovery:
    """What happens after an infrastructure failure: the user notices and resubmits after an exponential delay
    (mean ``user_delay_s``), or — ``auto``, SchedMate's Failure Handler — the failure is diagnosed (with
    probability ``recall``, the measured infrastructure recall) and the job requeued after ``diagnosis_s``."""

    auto: bool = False
    user_delay_s: float = 3600.0
    recall: float = 0.85
    diagnosis_s: float = 30.0
    seed: int = 0

    def after_failure(self, job: SimJob) -> tuple[float, bool]:
        """Seconds from an infrastructure failure to the resubmission, and whether the node gets drained (seeded per
        job and attempt: every policy sees the same users and the same diagnoses)."""
        rng = random.Random(f"{self.seed}:recovery:{job.trace.job_id}:{job.failures}")
        user = rng.expovariate(1.0 / self.user_delay_s) if self.user_delay_s > 0 else 0.0
        diagnosed = self.auto and rng.random() < self.recall
        return (self.diagnosis_s, True) if diagnosed else (user, False)


class Policy:
    """Base: hooks the :class:`Simulation` calls."""

    name = "policy"
    recovery = Recovery()

    def on_failed(self, job: SimJob) -> None:
        """A running job failed (a bad node) and left its GPUs; it will be submitted again."""

    def bind(self, sim: Simulation) -> None:
        """Attach to a simulation before it runs."""
        self.sim = sim

    def on_arrival(self, job: SimJob) -> None:
        """A job was submitted."""

    def on_finish(self, job: SimJob) -> None:
        """A job finished."""

    def on_timer(self, job: SimJob, tag: str) -> None:
        """A timer set with :meth:`Simulation.timer` fired."""

    def on_unpacked(self, job: SimJob, now: float) -> None:
        """The job that shared ``job``'s GPUs left them."""
        self.sim.set_rate(job, 1.0)

    def schedule(self) -> None:
        """Start, preempt or pack jobs after the events of one instant."""


class _Queue:
    """Pending jobs by ascending (priority, submission), one heap per GPU count; a job's priority may change
    (stale heap entries are skipped). :meth:`best` is the first job in that order that ``ok`` accepts, among
    the heads of the GPU counts ``ok`` accepts — backfilling in priority order without scanning the queue."""

    def __init__(self) -> None:
        self._heaps: dict[int, list[tuple[float, float, int, int]]] = {}
        self._stamp: dict[int, int] = {}

    def push(self, job: SimJob) -> None:
        stamp = self._stamp.get(job.idx, 0) + 1
        self._stamp[job.idx] = stamp
        heapq.heappush(self._heaps.setdefault(job.gpus, []), (job.priority, job.submit_s, job.idx, stamp))

    def _head(self, heap: list[tuple[float, float, int, int]]) -> tuple[float, float, int, int] | None:
        while heap and self._stamp.get(heap[0][2]) != heap[0][3]:
            heapq.heappop(heap)
        return heap[0] if heap else None

    def best(self, ok: Callable[[int], bool]) -> int | None:
        """The highest-priority head among GPU counts for which ``ok(gpus)`` holds."""
        found: tuple[float, float, int, int] | None = None
        for gpus, heap in self._heaps.items():
            head = self._head(heap)
            if head is not None and (found is None or head < found) and ok(gpus):
                found = head
        return None if found is None else found[2]

    def first(self) -> int | None:
        """The highest-priority pending job."""
        return self.best(lambda _: True)

    def remove(self, idx: int) -> None:
        del self._stamp[idx]

    def __contains__(self, idx: int) -> bool:
        return idx in self._stamp

    def __len__(self) -> int:
        return len(self._stamp)


class _Estimated(Policy):
    """Orders by estimated service; estimates made with weak evidence (no similar job, only the global history)
    are made again for jobs still pending each time the finished history has grown by a quarter, so a cold start
    does not fix a job's place for ever. Every estimator gets the same refreshes."""

    estimator: DurationEstimator

    def __init__(self) -> None:
        self._queue = _Queue()
        self._weak: set[int] = set()
        self._learnt = 0
        self._next_refresh = 1

    def _estimate(self, job: SimJob) -> None:
        est = self.estimator.estimate(job)
        job.info["estimate_s"] = est  # the last estimate before the job started
        job.priority = est * max(job.gpus, 1)
        if job.info.get("weak"):
            self._weak.add(job.idx)
        else:
            self._weak.discard(job.idx)

    def _learn(self, job: SimJob) -> None:
        self.estimator.learn(job)
        self._weak.discard(job.idx)
        self._learnt += 1
        if self._learnt >= self._next_refresh:
            self._next_refresh = max(self._learnt + 1, int(self._learnt * 1.25))
            for idx in list(self._weak):
                if idx in self._queue:
                    pending = self.sim.by_idx[idx]
                    self._estimate(pending)
                    self._queue.push(pending)
                else:
                    self._weak.discard(idx)


class PriorityPolicy(_Estimated):
    """Non-preemptive: pending jobs start by ascending ``key`` (ties by submission), backfilling; with an estimator,
    the key is
    the estimated service and weak estimates are refreshed (see :class:`_Estimated`)."""

    def __init__(self, name: str, key: Callable[[SimJob], float], estimator: DurationEstimator | None = None) -> None:
        super().__init__()
        self.name = name
        self.key = key
        self._estimator = estimator
        if estimator is not None:
            self.estimator = estimator

    def on_arrival(self, job: SimJob) -> None:
        """Queue the job under its key."""
        if self._estimator is not None:
            self._estimate(job)
        else:
            job.priority = self.key(job)
        self._queue.push(job)

    def on_finish(self, job: SimJob) -> None:
        """Teach the estimator the outcome."""
        if self._estimator is not None:
            self._learn(job)

    def schedule(self) -> None:
        """Start jobs in order while the head fits."""
        sim, queue, fits = self.sim, self._queue, self.sim.cluster.fits
        while (idx := queue.best(fits)) is not None:
            queue.remove(idx)
            sim.start(sim.by_idx[idx])


def fifo() -> PriorityPolicy:
    """First come, first served."""
    return PriorityPolicy("fifo", lambda j: j.submit_s)


def sjf(name: str, estimator: DurationEstimator) -> PriorityPolicy:
    """Shortest expected service (estimated duration x GPUs) first."""
    return PriorityPolicy(name, lambda j: 0.0, estimator)


class Tiresias(Policy):
    """Two-queue discretised least-attained-service (Gu et al., NSDI'19), preemptive.

    A job is in the high queue until it attained ``threshold_gpu_s`` GPU-seconds (18,000 as in
    Lucid's simulator of it), then in the low queue; each queue is FIFO (backfilling). The oldest
    high-queue job that does not fit preempts running low-queue jobs (most recently submitted first)
    when that makes room; a preempted job waits in the low queue."""

    name = "tiresias"

    def __init__(self, threshold_gpu_s: float = 18000.0) -> None:
        self.threshold = threshold_gpu_s
        self._high = _Queue()
        self._low = _Queue()
        self._running_low: dict[int, SimJob] = {}

    def on_arrival(self, job: SimJob) -> None:
        """New jobs have attained nothing: high queue; a job back after a failure keeps the queue its service says."""
        job.priority = job.submit_s
        if job.info.get("low") or job.attained_gpu_s >= self.threshold:
            job.info["low"] = True
            self._low.push(job)
        else:
            self._high.push(job)

    def on_finish(self, job: SimJob) -> None:
        """Forget the job."""
        self._running_low.pop(job.idx, None)

    def on_failed(self, job: SimJob) -> None:
        """A failed job is no longer running."""
        self._running_low.pop(job.idx, None)

    def on_timer(self, job: SimJob, tag: str) -> None:
        """A running job crossed the threshold: it is now a low-queue job."""
        if job.running:
            job.info["low"] = True
            self._running_low[job.idx] = job

    def _start(self, job: SimJob) -> None:
        self.sim.start(job)
        if job.info.get("low"):  # (on_arrival sends a job past the threshold to the low queue)
            self._running_low[job.idx] = job
        else:
            left = self.threshold - job.attained(self.sim.now)
            self.sim.timer(job, self.sim.now + left / max(job.gpus, 1), "demote")

    def schedule(self) -> None:
        """High queue first (preempting low-queue jobs for its oldest job), then the low queue."""
        sim = self.sim
        fits = sim.cluster.fits
        while True:
            idx = self._high.best(fits)
            if idx is None:
                oldest = self._high.first()
                if oldest is None or not self._make_room(sim.by_idx[oldest]):
                    break
                idx = oldest
            self._high.remove(idx)
            self._start(sim.by_idx[idx])
        while (idx := self._low.best(fits)) is not None:
            self._low.remove(idx)
            self._start(sim.by_idx[idx])

    def _make_room(self, job: SimJob) -> bool:
        sim = self.sim
        reclaimable = sim.cluster.free_gpus() + sum(j.gpus for j in self._running_low.values())
        if reclaimable < job.gpus:
            return False
        for victim in sorted(self._running_low.values(), key=lambda j: (-j.submit_s, -j.idx)):
            sim.preempt(victim)
            del self._running_low[victim.idx]
            self._low.push(victim)
            if sim.cluster.fits(job.gpus):
                return True
        return sim.cluster.fits(job.gpus)


def _gpus_on(job: SimJob, node: int) -> int:
    """GPUs ``job`` holds on ``node``."""
    alloc = job.alloc
    return 0 if alloc is None else sum(n for nd, n in alloc.parts if nd == node)


class Srtf(_Estimated):
    """Preemptive shortest-remaining-service first: jobs run by ascending expected remaining service (remaining time
    x GPUs), and the best waiting job that fits nowhere preempts running jobs that have much more left.

    A job's remaining time before it runs is the estimator's duration. While it runs, with a ``tracker`` (SchedMate's
    Metric Tracker, which reads step / total steps and the speed from the job's log) it is what the tracker says
    once it has read some progress; otherwise — no tracker, or a log that prints no total — the estimate less the
    time run, and once a job has run past two thirds of its estimate, half its age (it has outlived its estimate;
    long-running jobs tend to keep running, as least-attained-service assumes). Rules that keep preemption worth its
    restore overhead: a running job is preempted only when its remaining service is more than ``ratio`` times the
    waiting job's and it has run ``min_run_s`` since it (re)started; victims are taken largest remaining service
    first, on the node (or, for a multi-node job, the whole nodes) whose victims all have the most left; after an
    attempt found no room, jobs as wide and no shorter try again only ``retry_s`` of simulated time later. A
    preempted job waits with its remaining service as its priority."""

    def __init__(
        self,
        name: str,
        estimator: DurationEstimator,
        tracker: Callable[[SimJob, float], float | None] | None = None,
        *,
        ratio: float = 2.0,
        min_run_s: float = 600.0,
        retry_s: float = 300.0,
    ) -> None:
        super().__init__()
        self.name = name
        self.estimator = estimator
        self.tracker = tracker
        self.ratio = ratio
        self.min_run_s = min_run_s
        self.retry_s = retry_s
        self._on_node: dict[int, set[int]] = {}  # node → running jobs with GPUs on it
        self._tried: dict[int, tuple[float, float]] = {}  # GPUs → (priority, when) of the last attempt without room

    def remaining_s(self, job: SimJob, now: float) -> float:
        """Expected seconds ``job`` still runs (at full speed)."""
        done = job.attained(now) / max(job.gpus, 1)
        if self.tracker is not None and done > 0:
            told = self.tracker(job, done)
            if told is not None:
                return told
        left = float(job.info["estimate_s"]) - done
        return max(left, done / 2.0, 1.0)

    def _estimate(self, job: SimJob) -> None:
        super()._estimate(job)
        if job.attained_gpu_s > 0:  # preempted or failed: what is left of it
            job.priority = self.remaining_s(job, self.sim.now) * max(job.gpus, 1)

    def on_arrival(self, job: SimJob) -> None:
        """Queue the job by its expected remaining service."""
        self._estimate(job)
        self._queue.push(job)

    def on_finish(self, job: SimJob) -> None:
        """Teach the estimator; the job no longer runs."""
        self._learn(job)
        self._forget(job)

    def on_failed(self, job: SimJob) -> None:
        """A failed job no longer runs."""
        self._forget(job)

    def _forget(self, job: SimJob) -> None:
        for node in job.info.pop("nodes", ()):
            self._on_node[node].discard(job.idx)

    def _start(self, job: SimJob) -> None:
        self.sim.start(job)
        assert job.alloc is not None
        nodes = [node for node, _ in job.alloc.parts]
        job.info["nodes"] = nodes
        for node in nodes:
            self._on_node.setdefault(node, set()).add(job.idx)

    def schedule(self) -> None:
        """Start jobs in order (backfilling); when the best waiting job fits nowhere, make room for it by
        preemption if the rules allow."""
        sim, queue, fits = self.sim, self._queue, self.sim.cluster.fits
        while True:
            idx = queue.best(fits)
            if idx is None:
                head = queue.first()
                if head is None or not self._make_room(sim.by_idx[head]):
                    return
                idx = head
            queue.remove(idx)
            self._start(sim.by_idx[idx])

    def _make_room(self, job: SimJob) -> bool:
        sim, cluster, now = self.sim, self.sim.cluster, self.sim.now
        tried = self._tried.get(job.gpus)
        if tried is not None and job.priority >= tried[0] and now - tried[1] < self.retry_s:
            return False  # as wide as one that found no room lately and no shorter: running jobs only got shorter
        bar = self.ratio * job.priority
        service: dict[int, float] = {}

        def movable(idx: int) -> bool:
            if idx not in service:
                other = sim.by_idx[idx]
                ok = now - other.run_since_s >= self.min_run_s
                service[idx] = self.remaining_s(other, now) * other.gpus if ok else -1.0
            return service[idx] > bar

        per = cluster.per_node
        best: tuple[float, list[int]] | None = None
        if job.gpus <= per:
            for node, idxs in self._on_node.items():
                free = cluster.free_on(node)
                if node in cluster.drained or not idxs or free >= job.gpus:
                    continue
                here = {i: _gpus_on(sim.by_idx[i], node) for i in idxs if movable(i)}
                if free + sum(here.values()) < job.gpus:
                    continue
                chosen, got = [], free
                for i in sorted(here, key=lambda i: (-service[i], i)):
                    if got >= job.gpus:
                        break
                    chosen.append(i)
                    got += here[i]
                shortest = min(service[i] for i in chosen)  # the victim closest to its end
                if best is None or shortest > best[0]:
                    best = (shortest, chosen)
        else:
            whole = -(-job.gpus // per) - cluster.idle_nodes()
            clearable = []
            for node, idxs in self._on_node.items():
                if node in cluster.drained or not idxs or not all(movable(i) for i in idxs):
                    continue
                clearable.append((-min(service[i] for i in idxs), node))
            if 0 < whole <= len(clearable):
                clearable.sort()
                chosen_set: set[int] = set()
                for _, node in clearable[:whole]:
                    chosen_set |= self._on_node[node]
                best = (0.0, sorted(chosen_set))
        if best is None or not best[1]:
            self._tried[job.gpus] = (job.priority, now)
            return False
        for i in best[1]:
            victim = sim.by_idx[i]
            self._forget(victim)
            sim.preempt(victim)
            victim.priority = self.remaining_s(victim, now) * max(victim.gpus, 1)
            self._queue.push(victim)
        if not cluster.fits(job.gpus):
            self._tried[job.gpus] = (job.priority, now)
            return False
        self._tried.pop(job.gpus, None)
        return True


_UNKNOWN_UTIL: Final = 100.0  # a job whose utilisation nobody knows yet is taken as fully busy


class Lucid(_Estimated):
    """Lucid-style (Hu et al., ASPLOS'23): profile each new job briefly, order by estimated service, pack a job
    onto the GPUs of a running job of the same GPU count when the interference model says the pair is worth it.

    With a ``profiler`` (a small pool of nodes outside the main cluster), a job of at most one node first runs
    there (FIFO) for up to ``profile_s`` seconds — a job that ends meanwhile is done — then joins the main queue,
    its progress kept. ``estimator`` gives durations; ``profile`` gives the job's GPU utilisation as the
    profiler measured it. With ``evict`` (SchedMate's Metric Tracker), a packed pair whose measured speeds sum
    below ``evict_below`` is split: the guest is preempted back to the queue after ``measure_s`` seconds.

    With ``known_util`` instead of a profiler (SchedMate): a job's utilisation is what the Advisor expects from
    similar past jobs; a job it has none for counts as fully busy (100 %: it packs only with nearly idle jobs) until
    it has run ``measure_s`` seconds, when its GPUs' NVML samples tell (``profile``). With ``trial_s``, a new job
    of at most one node that waits while the cluster is full first runs a trial of ``trial_s`` seconds of work on
    the GPUs of a running job of its GPU count (see :meth:`_trials`)."""

    def __init__(
        self,
        name: str,
        estimator: DurationEstimator,
        profile: Callable[[SimJob], float],
        interference: Interference,
        *,
        evict: bool = False,
        evict_below: float = 1.05,
        measure_s: float = 300.0,
        pack_util_max: float = 130.0,
        profiler: Cluster | None = None,
        profile_s: float = 180.0,
        known_util: Callable[[SimJob], float | None] | None = None,
        trial_s: float = 0.0,
    ) -> None:
        super().__init__()
        self.known_util = known_util
        self.trial_s = trial_s
        self._untried: dict[int, deque[SimJob]] = {}  # GPU count → new jobs waiting for a trial, in arrival order
        self.ended_in_trial = 0  # jobs that ended during their trial (short runs, early crashes)
        self.profiler = profiler
        self.profile_s = profile_s
        self._profq: deque[SimJob] = deque()
        self.name = name
        self.estimator = estimator
        self.profile = profile
        self.interference = interference
        self.evict = evict
        self.evict_below = evict_below
        self.measure_s = measure_s
        self.pack_util_max = pack_util_max
        self._hosts: dict[int, dict[int, SimJob]] = {}  # GPU count → running jobs alone on their GPUs

    def on_arrival(self, job: SimJob) -> None:
        """Estimate the job; profile it first (when it fits the profiler) or queue it by expected service."""
        self._estimate(job)
        if self.known_util is not None:
            if "util" not in job.info:  # (a requeued job keeps what was measured)
                known = self.known_util(job)
                job.info["util"] = _UNKNOWN_UTIL if known is None else known
                job.info["util_unknown"] = known is None
        else:
            job.info["util"] = self.profile(job)
        if self.profiler is not None and not job.info.get("profiled") and job.gpus <= self.profiler.per_node:
            self._profq.append(job)
        else:
            self._queue.push(job)
            if self.trial_s > 0 and not job.info.get("tried") and job.gpus <= self.sim.cluster.per_node:
                self._untried.setdefault(job.gpus, deque()).append(job)

    def on_finish(self, job: SimJob) -> None:
        """Teach the estimator; the job no longer hosts (nor profiles)."""
        if job.info.get("trial"):
            self.ended_in_trial += 1
        self._learn(job)
        self._hosts.get(job.gpus, {}).pop(job.idx, None)

    def on_failed(self, job: SimJob) -> None:
        """A failed job hosts nothing."""
        self._hosts.get(job.gpus, {}).pop(job.idx, None)

    def on_unpacked(self, job: SimJob, now: float) -> None:
        """Alone again: full speed, and it may host another job (a job on trial whose host ended keeps running)."""
        job.info.pop("trial", None)
        self.sim.set_rate(job, 1.0)
        self._hosts.setdefault(job.gpus, {})[job.idx] = job

    def on_timer(self, job: SimJob, tag: str) -> None:
        """Profiling over: the job joins the main queue. Measured a packed pair: split it when together they run
        slower than ``evict_below``."""
        alloc = job.alloc
        if tag == "profiled":
            if alloc is not None and alloc.owner is self.profiler:
                self.sim.preempt(job, overhead=False)
                job.info["profiled"] = True
                self._queue.push(job)
            return
        if tag == "trial":
            if alloc is not None and job.info.pop("trial", None):
                self.sim.preempt(job, overhead=False)  # like profiling: a trial restarts, it pays no restore
                self._measure(job)
                self._queue.push(job)
            return
        if tag != "measure" or alloc is None or len(alloc.jobs) != 2:
            return
        a, b = (self.sim.by_idx[i] for i in alloc.jobs)
        if a.rate + b.rate < self.evict_below:
            guest = job  # the timer was set for the guest
            self.sim.preempt(guest)
            guest.info["no_pack"] = True  # measured: it runs alone from now on
            self._queue.push(guest)

    def schedule(self) -> None:
        """Start in order (backfilling); when the best waiting job fits nowhere, it may share a suitable running
        job's GPUs (packing only when the cluster is full, so no job is slowed while GPUs idle)."""
        sim = self.sim
        profq, profiler = self._profq, self.profiler
        while profq and profiler is not None and profiler.fits(profq[0].gpus):
            job = profq.popleft()
            sim.start(job, cluster=profiler)
            sim.timer(job, sim.now + self.profile_s, "profiled")
        queue, fits = self._queue, sim.cluster.fits
        while True:
            idx = queue.best(fits)
            if idx is not None:
                job = sim.by_idx[idx]
                queue.remove(idx)
                sim.start(job)
                if not job.info.get("no_pack"):
                    self._hosts.setdefault(job.gpus, {})[job.idx] = job
                continue
            self._trials()  # new jobs try first: a short or crashing one is done before it would pack
            idx = queue.best(lambda g: bool(self._hosts.get(g)))
            if idx is None:
                return
            job = sim.by_idx[idx]
            host = None if job.info.get("no_pack") else self._pick_host(job)
            if host is None:
                return
            queue.remove(idx)
            del self._hosts[job.gpus][host.idx]
            assert host.alloc is not None
            sim.start(job, host.alloc)
            speed_job, speed_host = self.interference.speeds(job, host)
            sim.set_rate(job, speed_job)
            sim.set_rate(host, speed_host)
            if self.evict:
                sim.timer(job, sim.now + self.measure_s, "measure")

    def _trials(self) -> None:
        """The cluster is full: new jobs the queue holds back run a short trial (``trial_s``) on the GPUs of a running
        job of the same GPU count, the least busy one, and join the queue after it — a job that ends meanwhile (an
        early crash, a short run) is done. Lucid's profiler does this on reserved nodes; a trial shares GPUs
        instead, so no GPU is set aside while the cluster is busy."""
        sim = self.sim
        for gpus, untried in self._untried.items():
            hosts = self._hosts.get(gpus)
            while untried and hosts:
                job = untried.popleft()
                if job.start_s is not None or job.idx not in self._queue:  # it ran already, or left the queue
                    continue
                host = min(islice(hosts.values(), 64), key=lambda h: (h.info["util"], h.idx))
                job.info["tried"] = job.info["trial"] = True
                self._queue.remove(job.idx)
                del hosts[host.idx]
                assert host.alloc is not None
                sim.start(job, host.alloc)
                speed_job, speed_host = self.interference.speeds(job, host)
                sim.set_rate(job, speed_job)
                sim.set_rate(host, speed_host)
                sim.timer(job, sim.now + self.trial_s / job.rate, "trial")  # trial_s of work at the shared speed

    def _measure(self, job: SimJob) -> None:
        if job.info.get("util_unknown"):
            job.info["util"] = self.profile(job)
            job.info["util_unknown"] = False

    def _pick_host(self, job: SimJob) -> SimJob | None:
        hosts = self._hosts.get(job.gpus)
        if not hosts:
            return None
        util = job.info["util"]
        for n, host in enumerate(hosts.values()):  # oldest first (insertion order)
            if n >= 64:  # bounded search per blocked head
                break
            if host.info.get("no_pack"):
                continue
            if host.info.get("util_unknown") and self.sim.now - host.run_since_s >= self.measure_s:
                self._measure(host)  # it has run long enough for its GPUs' samples to tell
            if util + host.info["util"] <= self.pack_util_max and job.priority <= 2 * host.priority:
                return host
        return None
