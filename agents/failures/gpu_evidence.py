"""Corroborating a diagnosis with evidence from outside the job: its node's GPU samples, other jobs' failures.

The job's own log is untrusted evidence: a job can print a fake Xid line. GPU samples come from
the node's sampler, and other jobs' failures from other jobs' logs. Faults the node reported while
the job ran raise the confidence of an infrastructure verdict, and turn an undecided one (low
confidence, or ``other``) into a GPU or NVLink fault of that node. Only a verdict corroborated
this way — by the node's samples, or by hardware verdicts of enough distinct jobs on that node —
may drain the node; otherwise the job is only requeued.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final

from schedmate.agents.failures.actions import recovery_action
from schedmate.agents.failures.diagnosis import Diagnosis

__all__ = ["HARDWARE_XIDS", "NODE_COMPONENTS", "NVLINK_XIDS", "corroborate", "hardware_faults"]

HARDWARE_XIDS: Final = frozenset({48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 136, 140, *range(144, 160)})
NVLINK_XIDS: Final = frozenset({74, *range(144, 160)})
NODE_COMPONENTS: Final = frozenset({"gpu", "nvlink", "node"})  # verdicts that would drain the node

# (description, Xid code or None for an ECC counter increase)
GpuFault = tuple[str, int | None]


def hardware_faults(faults: Sequence[GpuFault]) -> list[GpuFault]:
    """The faults that point at the hardware (ECC increases and hardware Xids)."""
    return [(desc, x) for desc, x in faults if x is None or x in HARDWARE_XIDS]


def corroborate(
    d: Diagnosis,
    node: str | None,
    faults: Sequence[GpuFault],
    peer_jobs: Collection[str] = (),
    min_jobs: int = 2,
) -> None:
    """Fold outside evidence about ``node`` (a node of the job's allocation) into ``d`` and re-choose its action.

    ``faults``: ``node``'s GPU faults seen while the job ran; ``peer_jobs``: other jobs with a
    hardware verdict on ``node`` recently. The node may be drained if its samples show hardware
    faults or ``min_jobs`` distinct jobs (this one included) failed on it with a hardware verdict.
    """
    hard = hardware_faults(faults)
    if hard:
        d.evidence.append("gpu.samples: " + "; ".join(desc for desc, _ in hard[:3]))
        d.path.append("gpu.samples")
        nvlink = any(x in NVLINK_XIDS for _, x in hard if x is not None)
        if d.category == "infrastructure":
            d.confidence = min(0.95, d.confidence + 0.1)
        elif d.confidence < 0.6 or d.category == "other":
            d.category, d.infra_component = "infrastructure", "nvlink" if nvlink else "gpu"
            d.confidence = 0.7
            d.explanation = f"the job's node reported GPU faults while it ran ({hard[0][0]}); {d.explanation}"
    if d.category == "infrastructure":
        d.faulty_node = d.faulty_node or node
    peers = len(set(peer_jobs)) + 1 >= min_jobs
    if peers and d.category == "infrastructure" and d.infra_component in NODE_COMPONENTS:
        d.path.append("peer-jobs")
        d.evidence.append(f"{len(set(peer_jobs))} other job(s) failed with a hardware verdict on {d.faulty_node}")
    corroborated = bool(hard) or peers
    d.action = recovery_action(d.category, d.infra_component, d.faulty_node, d.confidence, corroborated)
    if d.category == "infrastructure" and d.infra_component in NODE_COMPONENTS and not corroborated:
        d.path.append("drain:uncorroborated")
        where = d.faulty_node or "the job's node"
        d.explanation += f" (not draining {where}: nothing beyond the job's own output shows the fault yet)"
