"""Duration estimators the SJF-family policies use: the oracle, a QSSF-style history, and the real Advisor.

None of them reads a job's own trace duration except the oracle, which exists to bound what ordering
by duration can gain. History grows as simulated jobs finish; a job is learnt only when it ends.
"""

from __future__ import annotations

import copy
from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np

from schedmate.agents.advisor.estimator import estimate
from schedmate.agents.advisor.history import GroupSummary, HistoryMatch, Outcome

if TYPE_CHECKING:
    from collections.abc import Callable

    from schedmate.agents.ml.embeddings import Embedder
    from schedmate.connectors.sim.engine import SimJob
    from schedmate.connectors.sim.workloads import Workload

__all__ = ["AdvisorEstimator", "HistoryEstimator", "OracleEstimator"]

_WINDOW = 256  # past jobs a group keeps (the most recent)


class OracleEstimator:
    """The job's true duration (an upper bound for any estimator; not a real policy)."""

    name = "oracle"

    def estimate(self, job: SimJob) -> float:
        """The trace duration."""
        return job.work_s

    def learn(self, job: SimJob) -> None:
        """Nothing to learn."""


class HistoryEstimator:
    """QSSF-style (Hu et al., SC'21): the mean duration of recent past jobs of the most specific group that has
    any — (user, name, GPUs), (user, name), (user, GPUs), (user), then (vc, GPUs), (GPUs), all — using only the
    keys the trace has. A trace without users or names (Philly, ElasticFlow) falls back to the virtual cluster
    and GPU count."""

    name = "qssf"

    def __init__(self, default_s: float = 3600.0) -> None:
        self.default_s = default_s
        self._groups: dict[tuple[Any, ...], deque[float]] = {}
        self._means: dict[tuple[Any, ...], float] = {}

    @staticmethod
    def _keys(job: SimJob) -> list[tuple[Any, ...]]:
        t = job.trace
        keys: list[tuple[Any, ...]] = []
        if t.user and t.name:
            keys += [("u+n+g", t.user, t.name, job.gpus), ("u+n", t.user, t.name)]
        if t.user:
            keys += [("u+g", t.user, job.gpus), ("u", t.user)]
        if t.vc:
            keys.append(("vc+g", t.vc, job.gpus))
        keys += [("g", job.gpus), ("all",)]
        return keys

    def estimate(self, job: SimJob) -> float:
        """The mean of the first group with history (``info["weak"]``: only the GPU-count or global group had any)."""
        for key in self._keys(job):
            mean = self._means.get(key)
            if mean is None and key in self._groups:
                values = self._groups[key]
                mean = self._means[key] = sum(values) / len(values)
            if mean is not None:
                job.info["weak"] = key[0] in ("g", "all")
                return mean
        job.info["weak"] = True
        return self.default_s

    def learn(self, job: SimJob) -> None:
        """Add the finished job's duration to its groups."""
        for key in self._keys(job):
            self._groups.setdefault(key, deque(maxlen=_WINDOW)).append(job.work_s)
            self._means.pop(key, None)


class AdvisorEstimator:
    """The Scheduling Advisor's own estimate (:func:`schedmate.agents.advisor.estimator.estimate`) over metadata the
    Advisor's static extraction read from each job's workload, embedded with the Advisor's facets.

    Retrieval is the Advisor's — cosine ≥ ``threshold`` between metadata vectors, ``k`` best — over the
    simulated history; among equally similar past jobs the most recent win. Its fallback groups are the
    Advisor's (user+GPUs, user+name, cluster+GPUs, GPUs, all) fed with the trace's user, name and vc."""

    name = "schedmate"

    def __init__(
        self,
        workloads: dict[str, Workload],
        embedder: Embedder | None,
        *,
        k: int = 3,
        threshold: float = 0.90,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        from schedmate.agents.advisor.extract.metadata import extract_metadata  # noqa: PLC0415
        from schedmate.agents.advisor.facets import embed_metadata  # noqa: PLC0415

        self.k, self.threshold = k, threshold
        self.keys = sorted(workloads)
        self._pos = {key: i for i, key in enumerate(self.keys)}
        metas = []
        for key in self.keys:
            w = workloads[key]
            metas.append(extract_metadata(w.workdir, w.command))
            if progress:
                progress(1)
        self.metadata = metas
        self._dumps = [m.model_dump() for m in metas]
        self.known = np.asarray([bool(m.model_name or m.model_type or m.dataset) for m in metas], dtype=bool)
        if embedder is not None and self.known.any():
            vectors = embed_metadata(embedder, metas)
        else:
            vectors = np.zeros((len(metas), 1), dtype=np.float32)
            self.known[:] = False
        self._vectors = vectors
        self._recent: dict[int, deque[Outcome]] = {}
        self._seen: list[int] = []  # variants with a finished job
        self._seen_matrix = np.zeros((0, vectors.shape[1]), dtype=np.float32)
        self._groups: dict[tuple[Any, ...], deque[Outcome]] = {}
        self._summaries: dict[tuple[Any, ...], GroupSummary | None] = {}
        self.methods: dict[str, int] = {}

    def fresh(self) -> AdvisorEstimator:
        """The same workloads' metadata and vectors with an empty history (one per simulated policy)."""
        twin = copy.copy(self)
        twin._recent, twin._seen, twin._groups, twin._summaries, twin.methods = {}, [], {}, {}, {}
        twin._seen_matrix = np.zeros((0, self._vectors.shape[1]), dtype=np.float32)
        return twin

    def _summary(self, kind: str, key: tuple[Any, ...] = ()) -> GroupSummary | None:
        gk = (kind, *key)
        if gk not in self._summaries:
            members = self._groups.get(gk)
            self._summaries[gk] = GroupSummary.of(list(members)) if members else None
        return self._summaries[gk]

    def _matches(self, v: int) -> list[HistoryMatch]:
        if not self.known[v] or not self._seen:
            return []
        scores = self._seen_matrix @ self._vectors[v]
        order = np.argsort(-scores, kind="stable")
        out: list[HistoryMatch] = []
        for i in order:
            score = float(scores[i])
            if score < self.threshold:
                break
            other = self._seen[int(i)]
            for outcome in reversed(self._recent[other]):
                out.append(HistoryMatch(outcome, round(score, 4), self._dumps[other]))
                if len(out) >= self.k:
                    return out
        return out

    def estimate(self, job: SimJob) -> float:
        """The Advisor's p50 for the job's workload."""
        v = self._pos[job.info["workload"]]
        t = job.trace
        est = estimate(self._dumps[v], self._matches(v), self._summary, user=t.user, cluster=t.vc, name=t.name,
                       num_gpus=job.gpus)  # fmt: skip
        self.methods[est.method] = self.methods.get(est.method, 0) + 1
        job.info["estimate"] = est
        job.info["weak"] = est.method != "similar" and not est.method.startswith("fallback:")
        return float(est.duration_p50_s or 0.0)

    def learn(self, job: SimJob) -> None:
        """The finished job joins the history (its variant's recent jobs and the fallback groups)."""
        v = self._pos[job.info["workload"]]
        t = job.trace
        o = Outcome(job_id=t.job_id, user=t.user, cluster=t.vc, name=t.name, num_gpus=job.gpus,
                    duration_s=job.work_s, status=job.info.get("status", "completed"),
                    gpu_util_pct=job.info.get("util_true"), gpu_mem_mb=job.info.get("mem_mb"))  # fmt: skip
        if v not in self._recent:
            self._recent[v] = deque(maxlen=self.k * 4)
            if self.known[v]:
                self._seen.append(v)
                self._seen_matrix = np.vstack([self._seen_matrix, self._vectors[v][None, :]])
        self._recent[v].append(o)
        for gk in (("user+gpus", o.user, o.num_gpus), ("user+name", o.user, o.name),
                   ("cluster+gpus", o.cluster, o.num_gpus), ("gpus", o.num_gpus), ("all",)):  # fmt: skip
            self._groups.setdefault(gk, deque(maxlen=_WINDOW)).append(o)
            self._summaries.pop(gk, None)
