"""jobs.metadata: what a job trains, on what and how, each field with its provenance."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from schedmate.schemas._base import Event, TopicSpec, now

__all__ = ["TOPIC", "FieldSource", "JobMetadata", "WorkloadMetadata"]


class FieldSource(BaseModel):
    """Where a metadata value came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    file: str
    line: int | None = None
    path: Literal["static", "use", "llm", "react", "history", "command"] = Field(
        default="static",
        description="static: a setting by name; use: what a consumer API receives (DataLoader, optimizer, ...); "
        "llm / react: the language model (react: the tool-using agent); history: a past run; command: the command line",
    )


class WorkloadMetadata(BaseModel):
    """The workload of a job as read from its code and command (null when undetermined)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    model_name: str | None = None
    model_type: str | None = None
    task: str | None = None
    params_millions: float | None = None
    dataset: str | None = None
    batch_size_per_device: int | None = None
    global_batch_size: int | None = None
    epochs: float | None = None
    max_steps: int | None = None
    learning_rate: float | None = None
    precision: str | None = None
    framework: list[str] = Field(default_factory=list)
    distributed: str | None = None
    num_gpus: int | None = None
    extra: dict[str, str] = Field(default_factory=dict)
    provenance: dict[str, FieldSource] = Field(default_factory=dict)


class JobMetadata(Event):
    """Metadata extracted for a submitted job."""

    job_id: str = Field(min_length=1, max_length=256)
    metadata: WorkloadMetadata
    resubmission_of: str | None = None
    path: str = "static"
    elapsed_s: float = 0.0
    ts: float = Field(default_factory=now)


TOPIC = TopicSpec("jobs.metadata", JobMetadata, "job_id", description=JobMetadata.__doc__ or "")
