"""Corroborating a diagnosis with what the GPUs themselves reported (NVML Xid events, ECC counters).

The job's own log is untrusted evidence; GPU samples come from the node's sampler. Faults the
node reported while the job ran raise the confidence of an infrastructure verdict, and turn an
undecided one (low confidence, or ``other``) into a GPU or NVLink fault of that node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from schedmate.agents.failures.actions import recovery_action
from schedmate.agents.failures.diagnosis import Diagnosis

__all__ = ["HARDWARE_XIDS", "NVLINK_XIDS", "corroborate", "hardware_faults"]

HARDWARE_XIDS: Final = frozenset({48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 136, 140, *range(144, 160)})
NVLINK_XIDS: Final = frozenset({74, *range(144, 160)})

# (description, Xid code or None for an ECC counter increase)
GpuFault = tuple[str, int | None]


def hardware_faults(faults: Sequence[GpuFault]) -> list[GpuFault]:
    """The faults that point at the hardware (ECC increases and hardware Xids)."""
    return [(desc, x) for desc, x in faults if x is None or x in HARDWARE_XIDS]


def corroborate(d: Diagnosis, node: str | None, faults: Sequence[GpuFault]) -> None:
    """Fold ``node``'s GPU faults seen while the job ran into ``d`` (in place) and re-choose its action."""
    hard = hardware_faults(faults)
    if not hard:
        return
    d.evidence.append("gpu.samples: " + "; ".join(desc for desc, _ in hard[:3]))
    d.path.append("gpu.samples")
    nvlink = any(x in NVLINK_XIDS for _, x in hard if x is not None)
    if d.category == "infrastructure":
        d.confidence = min(0.95, d.confidence + 0.1)
    elif d.confidence < 0.6 or d.category == "other":
        d.category, d.infra_component = "infrastructure", "nvlink" if nvlink else "gpu"
        d.confidence = 0.7
        d.faulty_node = d.faulty_node or node
        d.explanation = f"the job's node reported GPU faults while it ran ({hard[0][0]}); {d.explanation}"
    d.action = recovery_action(d.category, d.infra_component, d.faulty_node, d.confidence)
