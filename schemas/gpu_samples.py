"""gpu.samples: NVML readings of one GPU at one instant."""

from __future__ import annotations

from pydantic import Field

from schedmate.schemas._base import Event, TopicSpec, now

__all__ = ["TOPIC", "GpuSample"]


class GpuSample(Event):
    """Utilisation, memory, power, temperature and error counters of one GPU."""

    node: str = Field(min_length=1)
    gpu_index: int = Field(ge=0)
    uuid: str = ""
    name: str = ""
    job_id: str | None = None
    ts: float = Field(default_factory=now)
    util_pct: float | None = None
    mem_util_pct: float | None = None
    mem_used_mb: float | None = None
    mem_total_mb: float | None = None
    power_w: float | None = None
    temp_c: float | None = None
    ecc_corrected: int | None = None
    ecc_uncorrected: int | None = None
    xid_events: list[int] = Field(default_factory=list)


TOPIC = TopicSpec("gpu.samples", GpuSample, "node", description=GpuSample.__doc__ or "", producer="connector")
