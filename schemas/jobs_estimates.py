"""jobs.estimates: duration and GPU-usage estimates for a submitted job, before it runs."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from schedmate.schemas._base import Event, TopicSpec, now

__all__ = ["TOPIC", "JobEstimate", "MatchedJob"]


class MatchedJob(BaseModel):
    """A past job the estimate drew on."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    job_id: str
    score: float


class JobEstimate(Event):
    """How long a job will occupy its GPUs, how hard it will use them, and how sure we are."""

    job_id: str = Field(min_length=1, max_length=256)
    duration_p50_s: float | None = Field(default=None, ge=0)
    duration_p90_s: float | None = Field(default=None, ge=0)
    gpu_util_pct: float | None = None
    gpu_mem_mb: float | None = None
    early_exit_prob: float | None = Field(default=None, ge=0, le=1)
    method: str = "prior"
    matched: list[MatchedJob] = Field(default_factory=list)
    confidence: float = Field(default=0.0, ge=0, le=1)
    explanation: str = ""
    ts: float = Field(default_factory=now)


TOPIC = TopicSpec("jobs.estimates", JobEstimate, "job_id", description=JobEstimate.__doc__ or "")
