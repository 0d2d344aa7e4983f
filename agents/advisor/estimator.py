"""Duration and GPU-usage estimates from similar past jobs, a QSSF-like fallback, and a global prior.

1. ``similar``: the matched jobs (cosine ≥ threshold) weighted by similarity; when a match
   planned different work per GPU (another length in max_steps or epochs, another global batch per
   step, another GPU count), its duration is scaled by the ratio (bounded). Confidence grows
   with the best score and the number of agreeing matches.
2. ``fallback``: what a scheduler knows without the code — the same user (or virtual cluster)
   and GPU count, then the same job name — as in QSSF (Hu et al., SC'21): past durations of
   that group, summarised by their median and 90th percentile.
3. ``prior``: the whole history for the same GPU count, then the whole history.

History includes failed and cancelled runs, so estimates are of expected occupancy, and the
share of early exits among the evidence is reported as ``early_exit_prob``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from schedmate.agents.advisor.history import GroupSummary, HistoryMatch, Outcome

__all__ = ["Estimate", "Matched", "estimate"]

_MIN_GROUP: Final = 3  # past jobs a fallback group needs
_DEFAULT_PRIOR_S: Final = 3600.0  # nothing known at all: one hour, confidence 0.05


@dataclass(frozen=True)
class Matched:
    """A past job an estimate drew on, and its cosine similarity."""

    job_id: str
    score: float


@dataclass(frozen=True)
class Estimate:
    """An estimate (fields in the order of the jobs.estimates event, which streams/ builds from it)."""

    duration_p50_s: float | None
    duration_p90_s: float | None
    gpu_util_pct: float | None
    gpu_mem_mb: float | None
    early_exit_prob: float | None
    method: str
    matched: list[Matched]
    confidence: float
    explanation: str


def _quantile(values: Sequence[float], q: float, weights: Sequence[float] | None = None) -> float:
    pairs = sorted(zip(values, weights or [1.0] * len(values), strict=True))
    total = sum(w for _, w in pairs)
    acc = 0.0
    for v, w in pairs:
        acc += w
        if acc >= q * total - 1e-9:
            return v
    return pairs[-1][0]


def _length(meta: dict[str, Any]) -> tuple[str, float] | None:
    for key in ("max_steps", "epochs"):
        v = meta.get(key)
        if isinstance(v, (int, float)) and v > 0:
            return key, float(v)
    return None


def _batch(meta: dict[str, Any]) -> float | None:
    v = meta.get("global_batch_size")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else None


def _scale(new: dict[str, Any], old: dict[str, Any], gpus_new: int = 0, gpus_old: int = 0) -> float:
    """How much longer the new job should run than the matched one (1.0 when not comparable): the ratio of the work
    each GPU does. Work is the planned length — epochs of the same data, or steps times the global batch when both
    jobs say it (a step of a larger batch is more work) — and data parallelism splits it over the GPUs, ideally:
    the same epochs on twice the GPUs take half as long, while the same steps at the same batch per GPU on twice
    the GPUs (twice the global batch) take as long. GPU counts are the scheduler's (0: unknown, not scaled); when
    the lengths are not comparable nothing is scaled, as nothing says in what unit the work differs."""
    ratio = 1.0
    a, b = _length(new), _length(old)
    if a is not None and b is not None and a[0] == b[0]:
        ratio = a[1] / b[1]
        if a[0] == "max_steps" and (na := _batch(new)) is not None and (nb := _batch(old)) is not None:
            ratio *= na / nb
        if gpus_new > 0 and gpus_old > 0:
            ratio *= gpus_old / gpus_new
    return min(64.0, max(1 / 64, ratio))


def _early(outcomes: Sequence[Outcome]) -> float:
    return round(sum(o.status in ("failed", "cancelled") for o in outcomes) / len(outcomes), 3)


def _usage(outcomes: Sequence[Outcome]) -> tuple[float | None, float | None]:
    util = [o.gpu_util_pct for o in outcomes if o.gpu_util_pct is not None]
    mem = [o.gpu_mem_mb for o in outcomes if o.gpu_mem_mb is not None]
    return (round(statistics.fmean(util), 1) if util else None, round(max(mem), 1) if mem else None)


def _from_group(g: GroupSummary, method: str, confidence: float, why: str) -> Estimate:
    return Estimate(
        duration_p50_s=g.p50_s,
        duration_p90_s=g.p90_s,
        gpu_util_pct=g.gpu_util_pct,
        gpu_mem_mb=g.gpu_mem_mb,
        early_exit_prob=g.early_exit_prob,
        method=method,
        matched=[],
        confidence=confidence,
        explanation=f"{why}: median of {g.n} past jobs",
    )


def estimate(
    metadata: dict[str, Any],
    matches: Sequence[HistoryMatch],
    summary: Callable[[str, tuple[Any, ...]], GroupSummary | None],
    *,
    user: str = "",
    cluster: str = "",
    name: str = "",
    num_gpus: int = 0,
) -> Estimate:
    """The best estimate the evidence allows, with its method, matched jobs and confidence."""
    if matches:
        scales = [_scale(metadata, m.metadata, num_gpus, m.outcome.num_gpus) for m in matches]
        durations = [m.outcome.duration_s * s for m, s in zip(matches, scales, strict=True)]
        weights = [max(1e-3, m.score - 0.5) for m in matches]
        util, mem = _usage([m.outcome for m in matches])
        p50 = _quantile(durations, 0.5, weights)
        p90 = max(_quantile(durations, 0.9, weights), p50)
        spread = (max(durations) - min(durations)) / max(p50, 1.0) if len(durations) > 1 else 0.5
        conf = min(0.98, max(m.score for m in matches) * (1 - 0.5 ** len(matches)) * (1 / (1 + 0.5 * spread)) + 0.2)
        scaled = [m.outcome.job_id for m, s in zip(matches, scales, strict=True) if s != 1.0]
        why = f"{len(matches)} similar past job(s), best {matches[0].outcome.job_id} (cosine {matches[0].score:.3f})"
        if scaled:
            why += f"; durations scaled by the planned work per GPU for {', '.join(scaled)}"
        return Estimate(
            duration_p50_s=round(p50, 1),
            duration_p90_s=round(p90, 1),
            gpu_util_pct=util,
            gpu_mem_mb=mem,
            early_exit_prob=_early([m.outcome for m in matches]),
            method="similar",
            matched=[Matched(job_id=m.outcome.job_id, score=m.score) for m in matches],
            confidence=round(min(conf, 0.98), 3),
            explanation=why,
        )
    groups: list[tuple[str, float, str, str, tuple[Any, ...]]] = []
    if user:
        groups.append(
            ("fallback:user+gpus", 0.45, f"user {user} with {num_gpus} GPU(s)", "user+gpus", (user, num_gpus))
        )
        if name:
            groups.append(("fallback:user+name", 0.4, f"user {user}, job name {name}", "user+name", (user, name)))
    if cluster:
        groups.append(("fallback:cluster+gpus", 0.3, f"cluster {cluster} with {num_gpus} GPU(s)", "cluster+gpus",
                       (cluster, num_gpus)))  # fmt: skip
    groups.append(("prior:gpus", 0.15, f"all jobs with {num_gpus} GPU(s)", "gpus", (num_gpus,)))
    groups.append(("prior:global", 0.1, "all past jobs", "all", ()))
    for method, conf, why, kind, key in groups:
        g = summary(kind, key)
        if g is not None and g.n >= _MIN_GROUP:
            return _from_group(g, method, round(conf * min(1.0, g.n / 20) + 0.05, 3), why)
    return Estimate(
        duration_p50_s=_DEFAULT_PRIOR_S,
        duration_p90_s=4 * _DEFAULT_PRIOR_S,
        gpu_util_pct=None,
        gpu_mem_mb=None,
        early_exit_prob=None,
        method="prior:default",
        matched=[],
        confidence=0.05,
        explanation="no history yet: a one-hour default (import a trace with `schedmate history import`)",
    )
