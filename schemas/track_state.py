"""track.state (internal): the durable per-job state of the track and diagnose agents.

Not for subscribers. Keyed by job id, written to the partition number of the job's input
events before their offsets are committed, compacted where the broker supports it (latest
record per job). Each feature owns its part: the Metric Tracker ``track``, the Failure Handler
``failures``. Records written before schema_version 2 were one flat object; :meth:`JobState.of_record`
reads both.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from schedmate.schemas._base import Event, TopicSpec

__all__ = ["TOPIC", "FailurePart", "JobState", "TrackPart"]


class TrackPart(BaseModel):
    """The Metric Tracker's part: lines applied per log source, window bookkeeping, progress, line counts."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    done: dict[str, int] = Field(default_factory=dict, description="log source → last line number applied")
    lines_total: int = 0
    last_emit: float = 0.0
    dirty: bool = False
    eof: bool = False
    nodes: list[str] = Field(default_factory=list, description="nodes the log connectors read the job's log on")
    progress: dict[str, Any] = Field(default_factory=dict)
    error: int = 0
    warning: int = 0
    last_error: str | None = None


class FailurePart(BaseModel):
    """The Failure Handler's part: the failure tail, failures already diagnosed, whether the job finished."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    tail: list[tuple[int, str]] = Field(default_factory=list, description="(line number, raw line) since progress")
    diagnosed: list[str] = Field(default_factory=list)
    finished: bool = False
    nodes: list[str] = Field(default_factory=list, description="the job's allocation, from its lifecycle events")


class JobState(Event):
    """One job's durable state on one worker."""

    SCHEMA_VERSION: ClassVar[int] = 2
    schema_version: int = Field(default=2, ge=1)
    job_id: str = Field(min_length=1, max_length=256)
    track: TrackPart = Field(default_factory=TrackPart)
    failures: FailurePart = Field(default_factory=FailurePart)

    @classmethod
    def of_record(cls, job_id: str, data: Any) -> JobState:
        """A stored record: the current layout, or the flat one of schema version 1 (migrated)."""
        if not isinstance(data, dict):
            raise TypeError(f"track.state record of {job_id} is not an object")
        if int(data.get("schema_version", 1)) > cls.SCHEMA_VERSION:
            raise ValueError(f"track.state record of {job_id} is newer than this worker: upgrade schedmate")
        if "track" in data or "failures" in data:
            return cls.model_validate(data)
        return cls(
            job_id=job_id,
            track=TrackPart.model_validate(data),
            failures=FailurePart.model_validate(data),
        )


TOPIC = TopicSpec("track.state", JobState, "job_id", description=JobState.__doc__ or "", internal=True)
