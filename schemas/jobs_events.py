"""jobs.events: lifecycle of a job (started, finished with its status and exit code)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from schedmate.schemas._base import Event, TopicSpec, new_id, now

__all__ = ["TOPIC", "JobEvent", "JobStatus"]

JobStatus = Literal["completed", "failed", "cancelled"]


class JobEvent(Event):
    """A job started or finished; a finished event carries status and exit code."""

    event_id: str = Field(default_factory=new_id)
    job_id: str = Field(min_length=1, max_length=256)
    kind: Literal["started", "finished"]
    status: JobStatus | None = None
    exit_code: int | None = None
    node: str | None = None
    nodes: list[str] = Field(
        default_factory=list,
        max_length=4096,
        description="the job's whole allocation, as the scheduler gave it (``node`` is one of them, or the only one)",
    )
    ts: float = Field(default_factory=now)

    @model_validator(mode="after")
    def _finished_has_status(self) -> JobEvent:
        if self.kind == "finished" and self.status is None:
            raise ValueError("a finished event needs a status (completed, failed or cancelled)")
        if self.kind == "started" and self.status is not None:
            raise ValueError("a started event has no status")
        return self


TOPIC = TopicSpec("jobs.events", JobEvent, "job_id", description=JobEvent.__doc__ or "", producer="connector")
