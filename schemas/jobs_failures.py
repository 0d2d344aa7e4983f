"""jobs.failures: a located and classified root cause of a failed job."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schedmate.schemas._base import Event, TopicSpec, new_id, now

__all__ = ["TOPIC", "FailureCategory", "InfraComponent", "JobFailure"]

FailureCategory = Literal["infrastructure", "framework", "user_script", "other"]
InfraComponent = Literal["gpu", "nvlink", "network", "node", "storage", "other"]


class JobFailure(Event):
    """Why a job failed, where the log shows it, and what to do."""

    diagnosis_id: str = Field(default_factory=new_id)
    job_id: str = Field(min_length=1, max_length=256)
    first_error_line: int | None = Field(default=None, ge=1)
    category: FailureCategory = "other"
    infra_component: InfraComponent | None = None
    faulty_node: str | None = None
    confidence: float = Field(default=0.0, ge=0, le=1)
    explanation: str = ""
    evidence: list[str] = Field(default_factory=list)
    path: list[str] = Field(default_factory=list)
    ts: float = Field(default_factory=now)


TOPIC = TopicSpec("jobs.failures", JobFailure, "job_id", description=JobFailure.__doc__ or "")
