"""jobs.submitted: a job handed to the cluster (from the submit CLI, the runner or Slurm)."""

from __future__ import annotations

from pydantic import Field

from schedmate.schemas._base import Event, TopicSpec, new_id, now

__all__ = ["TOPIC", "JobSubmitted"]


class JobSubmitted(Event):
    """What a scheduler knows about a job at submission, plus where its code lives."""

    event_id: str = Field(default_factory=new_id)
    job_id: str = Field(min_length=1, max_length=256)
    user: str = ""
    name: str = ""
    command: list[str] = Field(default_factory=list, max_length=4096)
    workdir: str = Field(default="", max_length=4096, pattern=r"^[^\x00]*$")
    # the root of the job's repository around ``workdir`` (a job run from ``examples/x/`` imports the package at its
    # repository's root): the Advisor may read up to it. Set by whoever submits the job, like ``workdir``; empty:
    # reads stay inside ``workdir``
    repo_root: str = Field(default="", max_length=4096, pattern=r"^[^\x00]*$")
    num_gpus: int = Field(default=0, ge=0, le=1_000_000)
    cluster: str = ""
    git_commit: str | None = None
    git_branch: str | None = None
    submitted_at: float = Field(default_factory=now)


TOPIC = TopicSpec(
    "jobs.submitted", JobSubmitted, "job_id", description=JobSubmitted.__doc__ or "", producer="connector"
)
