"""Run policies over a trace and summarise job completion times.

``simulate(trace, ["fifo", "sjf-schedmate"], gpus=256)`` → :class:`Report`. Jobs asking for no GPU or
for more GPUs than the cluster has are left out and counted. Each policy gets a fresh cluster and a
fresh estimator; SchedMate's estimators share one extraction of every workload's metadata.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from schedmate.connectors.exceptions import TraceError
from schedmate.connectors.sim.cluster import Cluster
from schedmate.connectors.sim.engine import Faults, JobResult, Simulation
from schedmate.connectors.sim.estimators import AdvisorEstimator, HistoryEstimator, OracleEstimator
from schedmate.connectors.sim.interference import Interference
from schedmate.connectors.sim.policies import Lucid, Policy, Recovery, Srtf, Tiresias, fifo, sjf
from schedmate.connectors.sim.trace import Trace, TraceJob
from schedmate.connectors.sim.workloads import Assignment, Catalogue, attach

if TYPE_CHECKING:
    from schedmate.agents.ml.embeddings import Embedder

__all__ = ["NEEDS_ADVISOR", "POLICIES", "PolicyResult", "Report", "simulate"]

POLICIES: Final = ("fifo", "sjf-oracle", "qssf", "tiresias", "lucid", "sjf-schedmate", "lucid-schedmate",
                    "sjf-schedmate-manual", "srtf-oracle", "srtf-qssf", "srtf-schedmate",
                    "lucid-schedmate-profiler", "lucid-oracle")  # fmt: skip
# the policies that ask the Advisor (its extraction and embeddings)
NEEDS_ADVISOR: Final = frozenset({"sjf-schedmate", "lucid-schedmate", "sjf-schedmate-manual", "srtf-schedmate",
                                  "lucid-schedmate-profiler"})  # fmt: skip
_AUTO_RECOVERY: Final = NEEDS_ADVISOR - {"sjf-schedmate-manual"}  # the Failure Handler requeues for the others
_PROFILED: Final = frozenset({"lucid", "lucid-schedmate-profiler"})  # Lucid's profiling nodes sit outside the cluster
_TRIAL_S: Final = 180.0  # lucid-schedmate's trial of a new job on shared GPUs: as long as Lucid's profiling
TRACKER_COVERAGE: Final = 0.5  # share of jobs whose log gives the Metric Tracker a total (see README, issue 11)
TRACKER_WARMUP_S: Final = 300.0  # progress the tracker reads before it trusts a speed


@dataclass
class PolicyResult:
    """One policy's outcome."""

    name: str
    results: list[JobResult]
    wall_s: float
    extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, float | int]:
        """The figures ``--json`` prints."""
        jct = np.asarray([r.jct_s for r in self.results], dtype=np.float64)
        queue = np.asarray([r.queue_s for r in self.results], dtype=np.float64)
        first = min(r.submit_s for r in self.results)
        last = max(r.end_s for r in self.results)
        return {
            "jobs": len(self.results),
            "avg_jct_s": round(float(jct.mean()), 1),
            "p50_jct_s": round(float(np.quantile(jct, 0.5)), 1),
            "p99_jct_s": round(float(np.quantile(jct, 0.99)), 1),
            "avg_queue_s": round(float(queue.mean()), 1),
            "makespan_s": round(last - first, 1),
        }


@dataclass
class Report:
    """Every policy's outcome on one trace and cluster."""

    trace: str
    jobs: int
    gpus: int
    nodes: int
    seed: int
    groups_on: str
    left_out: dict[str, int]
    policies: dict[str, PolicyResult]
    setup_s: float = 0.0
    estimator_methods: dict[str, dict[str, int]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The ``--json`` object."""
        return {
            "policies": {name: r.summary() for name, r in self.policies.items()},
            "trace": self.trace,
            "jobs": self.jobs,
            "gpus": self.gpus,
            "seed": self.seed,
        }


def _usable(trace: Trace, cluster: Cluster) -> tuple[list[TraceJob], dict[str, int]]:
    jobs, no_gpu, too_big = [], 0, 0
    for j in trace.jobs:
        if j.gpus <= 0:
            no_gpu += 1
        elif not cluster.placeable(j.gpus):
            too_big += 1
        else:
            jobs.append(j)
    return jobs, {"no_gpu": no_gpu, "larger_than_cluster": too_big, "unreadable_rows": trace.skipped}


def simulate(
    trace: Trace,
    policies: list[str],
    *,
    gpus: int,
    gpus_per_node: int = 8,
    seed: int = 0,
    early_exit: float = 0.3,
    failures: bool = False,
    recovery: Recovery | None = None,
    node_mtbf_days: float = 30.0,
    fault_kw: dict[str, float] | None = None,
    recur: float = 0.5,
    tracker_coverage: float = TRACKER_COVERAGE,
    embedder: Embedder | None = None,
    progress: Callable[[str, int, int], Callable[[int], None]] | None = None,
) -> Report:
    """Simulate each of ``policies`` (names from :data:`POLICIES`) on ``gpus`` GPUs.

    With ``failures``, nodes go bad (a Poisson process, mean ``node_mtbf_days`` per node; ``fault_kw`` sets
    :class:`Faults`' repair, fail-after and checkpoint times) and fail the jobs on them; a failed job is submitted
    again by its user after a delay, or — the SchedMate policies except ``sjf-schedmate-manual`` — by the Failure
    Handler's requeue action, which also drains the node, once it diagnosed the failure (``recovery``).
    ``tracker_coverage``: the share of jobs (per workload, seeded) whose log gives ``srtf-schedmate``'s Metric Tracker
    a total to read the remaining time from."""
    unknown = [p for p in policies if p not in POLICIES]
    if unknown:
        raise TraceError(f"unknown policy {unknown[0]!r}; choose from {', '.join(POLICIES)}")
    if gpus < gpus_per_node or gpus % gpus_per_node:
        raise TraceError(f"--gpus must be a positive multiple of the node size ({gpus_per_node})")
    nodes = gpus // gpus_per_node
    profiler_nodes = (1 if nodes < 32 else 2) if _PROFILED & set(policies) else 0
    if nodes - profiler_nodes < 1:
        raise TraceError(f"Lucid's profiler needs {profiler_nodes} node(s) of the cluster: give more --gpus")
    jobs, left_out = _usable(trace, Cluster(nodes - profiler_nodes, gpus_per_node))
    if not jobs:
        raise TraceError(f"no job of {trace.name} fits a cluster of {gpus} GPUs")
    t0 = time.perf_counter()
    assignments = attach(jobs, seed, early_exit, recur=recur, catalogue=Catalogue())
    faults = None
    if failures:
        horizon = jobs[-1].submit_s + max(j.duration_s for j in jobs) if jobs else 0.0
        faults = Faults.poisson(nodes, horizon, node_mtbf_days, seed, **(fault_kw or {}))
    recovery = recovery or Recovery(seed=seed)
    advisor: AdvisorEstimator | None = None
    if NEEDS_ADVISOR & set(policies):
        workloads = {a.workload.key: a.workload for a in assignments}
        tick = progress("advisor: extracting workloads", len(workloads), 0) if progress else None
        advisor = AdvisorEstimator(workloads, embedder, progress=tick)
    setup_s = time.perf_counter() - t0
    report = Report(trace.name, len(jobs), gpus, nodes, seed, trace.groups_on, left_out, {}, round(setup_s, 2))
    for name in policies:
        profiled = name in _PROFILED
        main = Cluster(nodes - profiler_nodes if profiled else nodes, gpus_per_node)
        policy = _policy(name, advisor, seed, Cluster(profiler_nodes, gpus_per_node) if profiled else None)
        policy.recovery = replace(recovery, auto=name in _AUTO_RECOVERY, seed=seed)
        sim = Simulation(jobs, main, policy, faults=faults,
                         progress=progress(name, len(jobs), 0) if progress else None)  # fmt: skip
        _annotate(sim, assignments, seed, tracker_coverage)
        t1 = time.perf_counter()
        results = sim.run()
        extra = _estimate_quality(sim) | _long_jobs(results)
        if isinstance(policy, (Srtf, Tiresias)):
            extra["preemptions"] = sum(r.preemptions for r in results)
        if isinstance(policy, Lucid) and policy.trial_s > 0:
            extra.update(trials=sum(1 for j in sim.jobs if j.info.get("tried")), ended_in_trial=policy.ended_in_trial)
        if faults is not None:
            extra.update(node_faults=sim.fault_count, drains=sim.drains,
                         job_failures=sum(r.failures for r in results))  # fmt: skip
        report.policies[name] = PolicyResult(name, results, time.perf_counter() - t1, extra)
        est = getattr(policy, "estimator", None)
        if isinstance(est, AdvisorEstimator):
            report.estimator_methods[name] = dict(est.methods)
    return report


def _long_jobs(results: list[JobResult]) -> dict[str, Any]:
    """What a policy costs the longest jobs (the price of favouring short ones): the mean slowdown (JCT ÷ duration)
    of the longest 1 % of jobs, and the largest JCT."""
    dur = np.asarray([max(r.duration_s, 1.0) for r in results], dtype=np.float64)
    jct = np.asarray([r.jct_s for r in results], dtype=np.float64)
    longest = dur >= np.quantile(dur, 0.99)
    return {"longest_1pct_slowdown": round(float(np.mean(jct[longest] / dur[longest])), 3),
            "max_jct_s": round(float(jct.max()), 1)}  # fmt: skip


def _estimate_quality(sim: Simulation) -> dict[str, Any]:
    """How close the policy's duration estimates were: the share within relative error < 100 % (the papers'
    measure), and the median absolute log-ratio."""
    pairs = [(j.info["estimate_s"], j.work_s) for j in sim.jobs if "estimate_s" in j.info and j.work_s > 0]
    if not pairs:
        return {}
    est = np.asarray([max(e, 1e-9) for e, _ in pairs], dtype=np.float64)
    true = np.asarray([t for _, t in pairs], dtype=np.float64)
    return {
        "estimated_jobs": len(pairs),
        "within_100pct": round(float(np.mean(np.abs(est - true) / true < 1.0)), 4),
        "median_abs_log2_ratio": round(float(np.median(np.abs(np.log2(est / true)))), 3),
    }


def _annotate(sim: Simulation, assignments: list[Assignment], seed: int, coverage: float) -> None:
    for job in sim.jobs:
        a = assignments[job.idx]
        tracked = random.Random(f"{seed}:tracked:{a.workload.project}:{a.workload.key}").random() < coverage
        job.info.update(workload=a.workload.key, status=a.status, util_true=a.util_true, mem_mb=a.workload.mem_mb,
                        planned_s=a.planned_s, tracked=tracked)  # fmt: skip


def tracked_remaining(job: Any, done_s: float) -> float | None:
    """What SchedMate's Metric Tracker says is left of a running job: its log's step / total steps at the speed it
    reads — the time to the end the job planned (an early exit is not foreseen) — once it has read
    :data:`TRACKER_WARMUP_S` of progress, for the jobs whose log prints a total; otherwise nothing."""
    if done_s < TRACKER_WARMUP_S or not job.info.get("tracked"):
        return None
    return max(float(job.info["planned_s"]) - done_s, 1.0)


def _policy(name: str, advisor: AdvisorEstimator | None, seed: int, profiler: Cluster | None) -> Policy:
    if name == "fifo":
        return fifo()
    if name == "sjf-oracle":
        return sjf(name, OracleEstimator())
    if name == "qssf":
        return sjf(name, HistoryEstimator())
    if name == "tiresias":
        return Tiresias()
    if name == "srtf-oracle":
        return Srtf(name, OracleEstimator(), _true_remaining)
    if name == "srtf-qssf":
        return Srtf(name, HistoryEstimator())
    if name == "lucid":
        return Lucid(name, HistoryEstimator(), _profiled_util, Interference(seed), profiler=profiler)
    if name == "lucid-oracle":  # a bound: lucid-schedmate's mechanics with every duration and utilisation known
        return Lucid(name, OracleEstimator(), _profiled_util, Interference(seed), evict=True,
                     known_util=_profiled_util, trial_s=_TRIAL_S)  # fmt: skip
    assert advisor is not None
    fresh = advisor.fresh()
    if name in ("sjf-schedmate", "sjf-schedmate-manual"):
        return sjf(name, fresh)
    if name == "srtf-schedmate":
        return Srtf(name, fresh, tracked_remaining)
    if name == "lucid-schedmate-profiler":  # the Advisor's durations and the tracker's eviction, Lucid's profiler kept
        return Lucid(name, fresh, _profiled_util, Interference(seed), evict=True, profiler=profiler)
    return Lucid(name, fresh, _profiled_util, Interference(seed), evict=True, known_util=_advised_util,
                 trial_s=_TRIAL_S)  # fmt: skip


def _advised_util(job: Any) -> float | None:
    """The GPU utilisation the Advisor expects from the similar past jobs it matched (what their NVML samples
    measured); None when its estimate rests on no similar job."""
    est = job.info.get("estimate")
    if est is None or est.method != "similar" or est.gpu_util_pct is None:
        return None
    return float(est.gpu_util_pct)


def _true_remaining(job: Any, done_s: float) -> float:
    """The oracle's remaining time: the trace's duration less the time run (a bound, not a policy)."""
    return max(float(job.work_s) - done_s, 1.0)


def _profiled_util(job: Any) -> float:
    """Lucid profiles each job before it joins the queue: its utilisation as measured."""
    return float(job.info.get("util_true", 50.0))
